/* SPDX-License-Identifier: MIT */
/* content.c -- the fixture for resources, resource templates, prompts and
 * completion, with one entry per thing test_content.c checks.
 *
 * Resources: text (INLINE, entry data as text), blob (POOL), async (ASYNC,
 * completed from a thread fini() joins), multi (several contents), plain
 * (no MIME type, no subscribe callback).
 * Templates: files/{+path} (POOL read and completion), users/{id}/profile
 * {.fmt} (fail() for unknown ids), async/{key} (ASYNC read and
 * completion), misuse/{how} (each way to misuse a builder on a read or a
 * completion).
 * Prompts: greet (INLINE, required and optional arguments, completion
 * that reads its context), review (POOL, roles and every content kind),
 * many (150 candidates, completion_total), bad (misuse on a prompt).
 * Tools: change and change_pool (add or remove a resource, a template or
 * a prompt, on the loop or from a pool worker), touch and touch_pool
 * (resource_updated), subscriptions (what the subscribe callback heard),
 * misuse_tool, version.
 *
 * Built twice: content.so (version "1") and content_v2.so (version "2",
 * -DCONTENT_VERSION) for reloads.  Everything goes through req->host and
 * req->state; the image keeps no global host.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mcpd.h>

#ifndef CONTENT_VERSION
#define CONTENT_VERSION "1"
#endif

/* An ASYNC read or completion finished on its own thread. */
struct job {
  const mcpd_host *host;
  mcpd_call *call;
  char what[128]; /* "text:...", "fail:...", "complete:..." */
  pthread_t thread;
  struct job *next;
};

struct content {
  pthread_mutex_t lock;
  /* What the subscribe callback heard, "+uri " and "-uri ", in order
   * (with the variables of a template after the URI). */
  char *heard;
  size_t heard_len;
  struct job *jobs; /* every thread started, joined by fini() */
};

static const char *arg_string(json_object *object, const char *key) {
  json_object *v;
  return object != NULL && json_object_object_get_ex(object, key, &v) &&
                 json_object_is_type(v, json_type_string)
             ? json_object_get_string(v)
             : "";
}

static const char *plain_json(json_object *v) {
  return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
                                               JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* --- subscriptions ------------------------------------------------------ */

static void heard_append(struct content *c, const char *text) {
  size_t len = strlen(text);
  char *grown;

  pthread_mutex_lock(&c->lock);
  grown = realloc(c->heard, c->heard_len + len + 1);
  if (grown != NULL) {
    memcpy(grown + c->heard_len, text, len + 1);
    c->heard = grown;
    c->heard_len += len;
  }
  pthread_mutex_unlock(&c->lock);
}

static void on_subscribe(const mcpd_request *req, int subscribed) {
  char text[512];

  snprintf(text, sizeof(text), "%c%s%s%s ", subscribed ? '+' : '-', req->name,
           req->variables ? " " : "",
           req->variables ? plain_json(req->variables) : "");
  heard_append(req->state, text);
}

/* --- asynchronous work -------------------------------------------------- */

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0)
    continue;
}

static void *job_thread(void *arg) {
  struct job *job = arg;
  const mcpd_host *host = job->host;

  sleep_ms(5);
  if (strncmp(job->what, "fail:", 5) == 0) {
    host->fail(job->call, MCPD_ERR_NOT_FOUND, "no key %s", job->what + 5);
    host->complete(job->call, MCPD_ERROR);
  } else if (strncmp(job->what, "complete:", 9) == 0) {
    char value[160];
    snprintf(value, sizeof(value), "%s-1", job->what + 9);
    host->completion_value(job->call, value);
    snprintf(value, sizeof(value), "%s-2", job->what + 9);
    host->completion_value(job->call, value);
    host->complete(job->call, MCPD_OK);
  } else {
    host->result_resource_text(job->call, NULL, "text/markdown", job->what + 5);
    host->complete(job->call, MCPD_OK);
  }
  return NULL;
}

static int start_job(mcpd_call *call, const mcpd_request *req, const char *kind,
                     const char *text) {
  struct content *c = req->state;
  struct job *job = calloc(1, sizeof(*job));

  if (job == NULL)
    return MCPD_ERROR;
  job->host = req->host;
  job->call = call;
  snprintf(job->what, sizeof(job->what), "%s%s", kind, text);
  if (pthread_create(&job->thread, NULL, job_thread, job) != 0) {
    free(job);
    return MCPD_ERROR;
  }
  pthread_mutex_lock(&c->lock);
  job->next = c->jobs;
  c->jobs = job;
  pthread_mutex_unlock(&c->lock);
  return MCPD_OK;
}

/* --- resources ---------------------------------------------------------- */

/* The entry's data is the text: one callback serves several entries. */
static int read_data_text(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_text(call, req->data);
}

static int read_blob(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_resource_blob(call, NULL, NULL, req->data);
}

static int read_async(mcpd_call *call, const mcpd_request *req) {
  return start_job(call, req, "text:", req->data);
}

static int read_multi(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  if (host->result_resource_text(call, NULL, NULL, "one") != MCPD_OK ||
      host->result_resource_text(call, "content://multi#2", "text/csv",
                                 "a,b") != MCPD_OK ||
      host->result_resource_blob(call, "content://multi#3", "image/png",
                                 "aW1n") != MCPD_OK)
    return MCPD_ERROR;
  return MCPD_OK;
}

/* Resources and templates added at run time. */
static int read_dynamic(mcpd_call *call, const mcpd_request *req) {
  if (req->variables != NULL)
    return req->host->result_textf(call, "dynamic %s %s", req->name,
                                   plain_json(req->variables));
  return req->host->result_textf(call, "dynamic %s", req->name);
}

static const mcpd_resource resources[] = {
    {.uri = "content://text",
     .name = "text",
     .title = "Text",
     .description = "Inline text from the entry's data",
     .mime_type = "text/plain",
     .read = read_data_text,
     .subscribe = on_subscribe,
     .exec = MCPD_EXEC_INLINE,
     .data = (void *)"hello text"},
    {.uri = "content://blob",
     .name = "blob",
     .mime_type = "application/octet-stream",
     .read = read_blob,
     .subscribe = on_subscribe,
     .exec = MCPD_EXEC_POOL,
     .data = (void *)"AAEC"},
    {.uri = "content://async",
     .name = "async",
     .read = read_async,
     .subscribe = on_subscribe,
     .exec = MCPD_EXEC_ASYNC,
     .data = (void *)"# async"},
    {.uri = "content://multi",
     .name = "multi",
     .mime_type = "text/plain",
     .read = read_multi,
     .exec = MCPD_EXEC_INLINE},
    {.uri = "content://plain",
     .name = "plain",
     .read = read_data_text,
     .exec = MCPD_EXEC_INLINE,
     .data = (void *)"no type"},
    MCPD_RESOURCE_END,
};

/* --- templates ---------------------------------------------------------- */

static int read_file(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_textf(call, "%s: %s", (const char *)req->data,
                                 arg_string(req->variables, "path"));
}

static int complete_path(mcpd_call *call, const mcpd_request *req,
                         const char *argument, const char *value,
                         json_object *context) {
  static const char *const paths[] = {"docs/a.md", "docs/b.md", "src/main.c",
                                      "src/util.c", NULL};
  (void)argument, (void)context;
  for (size_t i = 0; paths[i] != NULL; i++)
    if (strncmp(paths[i], value, strlen(value)) == 0 &&
        req->host->completion_value(call, paths[i]) != MCPD_OK)
      return MCPD_ERROR;
  return MCPD_OK;
}

static int read_profile(mcpd_call *call, const mcpd_request *req) {
  const char *id = arg_string(req->variables, "id");
  const char *fmt = arg_string(req->variables, "fmt");

  if (strcmp(id, "missing") == 0)
    return req->host->fail(call, MCPD_ERR_NOT_FOUND, "no user %s", id);
  if (strcmp(fmt, "json") != 0)
    return req->host->fail(call, MCPD_ERR_INVALID_PARAMS,
                           "format %s is not offered", fmt);
  return req->host->result_textf(call, "{\"id\":\"%s\"}", id);
}

static int read_async_key(mcpd_call *call, const mcpd_request *req) {
  const char *key = arg_string(req->variables, "key");
  return strcmp(key, "missing") == 0 ? start_job(call, req, "fail:", key)
                                     : start_job(call, req, "text:", key);
}

static int complete_async(mcpd_call *call, const mcpd_request *req,
                          const char *argument, const char *value,
                          json_object *context) {
  (void)argument, (void)context;
  return start_job(call, req, "complete:", value);
}

/* Logs what a misused builder returned: tests check it was MCPD_ERROR. */
static void note(const mcpd_request *req, const char *builder, int rc) {
  req->host->log(req->self, MCPD_LOG_INFO, "%s returned %d", builder, rc);
}

/* Every builder a read cannot use, and every way a read can fail. */
static int read_misuse(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  const char *how = arg_string(req->variables, "how");

  if (strcmp(how, "image") == 0)
    note(req, how, host->result_image(call, "aW1n", "image/png"));
  else if (strcmp(how, "audio") == 0)
    note(req, how, host->result_audio(call, "YXVk", "audio/wav"));
  else if (strcmp(how, "link") == 0)
    note(
        req, how,
        host->result_resource_link(call, "content://text", "text", NULL, NULL));
  else if (strcmp(how, "structured") == 0)
    note(req, how, host->result_structured(call, json_object_new_object()));
  else if (strcmp(how, "role") == 0)
    note(req, how, host->prompt_role(call, "user"));
  else if (strcmp(how, "completion") == 0)
    note(req, how, host->completion_value(call, "x"));
  else if (strcmp(how, "total") == 0)
    note(req, how, host->completion_total(call, 5, 1));
  else if (strcmp(how, "partial") == 0) {
    /* Content built before the misuse does not go out either. */
    host->result_text(call, "fine so far");
    note(req, how, host->result_image(call, "aW1n", "image/png"));
  } else if (strcmp(how, "error") == 0)
    return host->result_error(call, "read went wrong");
  else if (strcmp(how, "nothing") == 0)
    return MCPD_OK;
  else if (strcmp(how, "failed") == 0)
    return MCPD_ERROR;
  else if (strcmp(how, "failedbuilt") == 0) {
    /* MCPD_ERROR whatever was built. */
    host->result_text(call, "built");
    return MCPD_ERROR;
  } else if (strcmp(how, "bogus") == 0)
    return 7;
  else if (strcmp(how, "invalid") == 0)
    return host->fail(call, MCPD_ERR_INVALID_PARAMS, "bad how %s", how);
  else if (strcmp(how, "notfound") == 0) {
    /* What was built before fail() is dropped. */
    host->result_text(call, "dropped");
    return host->fail(call, MCPD_ERR_NOT_FOUND, "nothing at %s", req->name);
  } else if (strcmp(how, "failtwice") == 0) {
    /* The last fail() or result_error() decides the answer. */
    host->fail(call, MCPD_ERR_NOT_FOUND, "first");
    return host->result_error(call, "second");
  } else if (strcmp(how, "errorthenfail") == 0) {
    host->result_error(call, "first");
    return host->fail(call, MCPD_ERR_INVALID_PARAMS, "second");
  } else if (strcmp(how, "badcode") == 0) {
    if (host->fail(call, -32000, "not a code fail() takes") != MCPD_ERROR)
      return host->result_text(call, "fail(-32000) accepted");
    return host->result_textf(call, "refused: %s", host->last_error());
  } else if (strcmp(how, "json") == 0) {
    json_object *result = json_object_new_object();
    json_object *contents = json_object_new_array();
    json_object *item = json_object_new_object();
    json_object_object_add(item, "uri", json_object_new_string("content://j"));
    json_object_object_add(item, "text", json_object_new_string("whole"));
    json_object_array_add(contents, item);
    json_object_object_add(result, "contents", contents);
    return host->result_json(call, result);
  } else if (strcmp(how, "badjson") == 0) {
    json_object *result = json_object_new_object();
    json_object *contents = json_object_new_array();
    json_object_array_add(contents, json_object_new_object());
    json_object_object_add(result, "contents", contents);
    return host->result_json(call, result);
  } else
    return host->result_textf(call, "how=%s", how);
  return MCPD_OK;
}

/* A whole completion result of `n` values, for result_json(). */
static json_object *completion_json(int n) {
  json_object *result = json_object_new_object();
  json_object *completion = json_object_new_object();
  json_object *values = json_object_new_array();
  for (int i = 0; i < n; i++)
    json_object_array_add(values, json_object_new_string("j"));
  json_object_object_add(completion, "values", values);
  json_object_object_add(completion, "total", json_object_new_int(n));
  json_object_object_add(completion, "hasMore", json_object_new_boolean(0));
  json_object_object_add(result, "completion", completion);
  return result;
}

/* Every builder a completion cannot use. */
static int complete_misuse(mcpd_call *call, const mcpd_request *req,
                           const char *argument, const char *value,
                           json_object *context) {
  const mcpd_host *host = req->host;
  (void)argument, (void)context;

  if (strcmp(value, "text") == 0)
    note(req, value, host->result_text(call, "x"));
  else if (strcmp(value, "image") == 0)
    note(req, value, host->result_image(call, "aW1n", "image/png"));
  else if (strcmp(value, "role") == 0)
    note(req, value, host->prompt_role(call, "user"));
  else if (strcmp(value, "resource") == 0)
    note(req, value,
         host->result_resource_text(call, "content://x", NULL, "x"));
  else if (strcmp(value, "structured") == 0)
    note(req, value, host->result_structured(call, json_object_new_object()));
  else if (strcmp(value, "error") == 0)
    return host->result_error(call, "completion went wrong");
  else if (strcmp(value, "invalid") == 0)
    return host->fail(call, MCPD_ERR_INVALID_PARAMS, "cannot complete %s",
                      value);
  else if (strcmp(value, "failed") == 0)
    return MCPD_ERROR;
  else if (strcmp(value, "json") == 0)
    return host->result_json(call, completion_json(1));
  else if (strcmp(value, "json101") == 0)
    return host->result_json(call, completion_json(101));
  else
    host->completion_value(call, value);
  return MCPD_OK;
}

static const mcpd_resource_template templates[] = {
    {.uri_template = "content://files/{+path}",
     .name = "files",
     .title = "Files",
     .description = "Any file by path",
     .mime_type = "text/plain",
     .read = read_file,
     .complete = complete_path,
     .subscribe = on_subscribe,
     .exec = MCPD_EXEC_POOL,
     .data = (void *)"file"},
    {.uri_template = "content://users/{id}/profile{.fmt}",
     .name = "profiles",
     .mime_type = "application/json",
     .read = read_profile,
     .subscribe = on_subscribe,
     .exec = MCPD_EXEC_INLINE},
    {.uri_template = "content://async/{key}",
     .name = "async-keys",
     .read = read_async_key,
     .complete = complete_async,
     .exec = MCPD_EXEC_ASYNC},
    {.uri_template = "content://misuse/{how}",
     .name = "misuse",
     .read = read_misuse,
     .complete = complete_misuse,
     .exec = MCPD_EXEC_INLINE},
    MCPD_RESOURCE_TEMPLATE_END,
};

/* --- prompts ------------------------------------------------------------ */

static int get_greet(mcpd_call *call, const mcpd_request *req) {
  const char *style = arg_string(req->arguments, "style");

  if (req->host->result_textf(call, "Hello, %s!",
                              arg_string(req->arguments, "name")) != MCPD_OK)
    return MCPD_ERROR;
  if (style[0] != '\0')
    return req->host->result_textf(call, "Style: %s", style);
  return MCPD_OK;
}

/* Candidates for `style`, and one more built from the context. */
static int complete_greet(mcpd_call *call, const mcpd_request *req,
                          const char *argument, const char *value,
                          json_object *context) {
  static const char *const styles[] = {"formal", "friendly", "funny", NULL};
  const char *name = arg_string(context, "name");

  if (strcmp(argument, "style") != 0)
    return MCPD_OK; /* nothing to offer for a name */
  for (size_t i = 0; styles[i] != NULL; i++)
    if (strncmp(styles[i], value, strlen(value)) == 0)
      req->host->completion_value(call, styles[i]);
  if (name[0] != '\0') {
    char text[256];
    snprintf(text, sizeof(text), "%s-style", name);
    req->host->completion_value(call, text);
  }
  return MCPD_OK;
}

/* Roles and every kind of content a prompt message can carry. */
static int get_review(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  const char *language = arg_string(req->arguments, "language");

  if (host->result_textf(call, "Review this %s:",
                         language[0] ? language : "code") != MCPD_OK ||
      host->result_resource_text(call, "content://code", "text/x-c",
                                 arg_string(req->arguments, "code")) !=
          MCPD_OK ||
      host->prompt_role(call, "assistant") != MCPD_OK ||
      host->result_text(call, "Looks fine.") != MCPD_OK ||
      host->result_image(call, "aW1n", "image/png") != MCPD_OK ||
      host->result_audio(call, "YXVk", "audio/wav") != MCPD_OK ||
      host->prompt_role(call, "user") != MCPD_OK ||
      host->result_resource_link(call, "content://text", "text", "the text",
                                 "text/plain") != MCPD_OK ||
      host->result_resource_blob(call, "content://blob",
                                 "application/octet-stream", "AAEC") != MCPD_OK)
    return MCPD_ERROR;
  /* A role that is neither "user" nor "assistant" is refused. */
  if (host->prompt_role(call, "system") != MCPD_ERROR)
    return host->result_text(call, "role system accepted");
  return MCPD_OK;
}

static int get_many(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_text(call, "many");
}

/* n: 150 candidates (the host sends 100); m: 3 of 1000; k: 3 with a
 * total smaller than what was added. */
static int complete_many(mcpd_call *call, const mcpd_request *req,
                         const char *argument, const char *value,
                         json_object *context) {
  char text[32];
  (void)value, (void)context;

  if (strcmp(argument, "n") == 0) {
    for (int i = 0; i < 150; i++) {
      snprintf(text, sizeof(text), "v%03d", i);
      if (req->host->completion_value(call, text) != MCPD_OK)
        return MCPD_ERROR;
    }
    return MCPD_OK;
  }
  req->host->completion_value(call, "a");
  req->host->completion_value(call, "b");
  req->host->completion_value(call, "c");
  if (strcmp(argument, "m") == 0)
    return req->host->completion_total(call, 1000, 1);
  return req->host->completion_total(call, 2, 0);
}

/* Every builder a prompt cannot use, and every way it can fail. */
static int get_bad(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  const char *how = arg_string(req->arguments, "how");

  if (strcmp(how, "structured") == 0)
    note(req, how, host->result_structured(call, json_object_new_object()));
  else if (strcmp(how, "completion") == 0)
    note(req, how, host->completion_value(call, "x"));
  else if (strcmp(how, "total") == 0)
    note(req, how, host->completion_total(call, 1, 0));
  else if (strcmp(how, "error") == 0)
    return host->result_error(call, "prompt went wrong");
  else if (strcmp(how, "json") == 0 || strcmp(how, "badjson") == 0) {
    /* A whole result; a message without content is malformed. */
    json_object *result = json_object_new_object();
    json_object *messages = json_object_new_array();
    json_object *message = json_object_new_object();
    json_object_object_add(message, "role", json_object_new_string("user"));
    if (strcmp(how, "json") == 0) {
      json_object *content = json_object_new_object();
      json_object_object_add(content, "type", json_object_new_string("text"));
      json_object_object_add(content, "text", json_object_new_string("j"));
      json_object_object_add(message, "content", content);
    }
    json_object_array_add(messages, message);
    json_object_object_add(result, "messages", messages);
    return host->result_json(call, result);
  } else if (strcmp(how, "invalid") == 0)
    return host->fail(call, MCPD_ERR_INVALID_PARAMS, "how %s is bad", how);
  else if (strcmp(how, "notfound") == 0)
    return host->fail(call, MCPD_ERR_NOT_FOUND, "no such thing");
  else if (strcmp(how, "failed") == 0)
    return MCPD_ERROR;
  else if (strcmp(how, "bogus") == 0)
    return 7;
  else
    return host->result_textf(call, "how=%s", how);
  return MCPD_OK;
}

/* Prompts added at run time. */
static int get_dynamic(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_textf(call, "prompt %s about %s", req->name,
                                 arg_string(req->arguments, "topic"));
}

static const mcpd_prompt_argument greet_arguments[] = {
    {.name = "name",
     .title = "Name",
     .description = "Who to greet",
     .required = 1},
    {.name = "style", .description = "How to greet"},
    MCPD_PROMPT_ARGUMENT_END,
};

static const mcpd_prompt_argument review_arguments[] = {
    {.name = "code", .required = 1},
    {.name = "language"},
    MCPD_PROMPT_ARGUMENT_END,
};

static const mcpd_prompt_argument many_arguments[] = {
    {.name = "n"},
    {.name = "m"},
    {.name = "k"},
    MCPD_PROMPT_ARGUMENT_END,
};

static const mcpd_prompt_argument bad_arguments[] = {
    {.name = "how", .required = 1},
    MCPD_PROMPT_ARGUMENT_END,
};

static const mcpd_prompt prompts[] = {
    {.name = "greet",
     .title = "Greeting",
     .description = "Greets someone",
     .arguments = greet_arguments,
     .get = get_greet,
     .complete = complete_greet,
     .exec = MCPD_EXEC_INLINE},
    {.name = "review",
     .description = "Reviews code",
     .arguments = review_arguments,
     .get = get_review,
     .exec = MCPD_EXEC_POOL},
    {.name = "many",
     .arguments = many_arguments,
     .get = get_many,
     .complete = complete_many,
     .exec = MCPD_EXEC_INLINE},
    {.name = "bad",
     .arguments = bad_arguments,
     .get = get_bad,
     .exec = MCPD_EXEC_INLINE},
    MCPD_PROMPT_END,
};

/* --- tools -------------------------------------------------------------- */

/* {"op": "add"|"remove", "kind": "resource"|"template"|"prompt", "key"}:
 * INLINE as "change", POOL as "change_pool".  Entries come from the stack:
 * the host copies them, a prompt's argument table included. */
static int tool_change(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  const char *op = arg_string(req->arguments, "op");
  const char *kind = arg_string(req->arguments, "kind");
  const char *key = arg_string(req->arguments, "key");
  int add = strcmp(op, "add") == 0, rc = MCPD_ERROR;

  if (strcmp(kind, "resource") == 0 && add) {
    mcpd_resource r = {.uri = key,
                       .name = "dynamic",
                       .mime_type = "text/plain",
                       .read = read_dynamic,
                       .subscribe = on_subscribe,
                       .exec = MCPD_EXEC_INLINE};
    rc = host->add_resource(req->self, &r);
  } else if (strcmp(kind, "resource") == 0) {
    rc = host->remove_resource(req->self, key);
  } else if (strcmp(kind, "template") == 0 && add) {
    mcpd_resource_template t = {.uri_template = key,
                                .name = "dynamic-template",
                                .read = read_dynamic,
                                .subscribe = on_subscribe,
                                .exec = MCPD_EXEC_INLINE};
    rc = host->add_resource_template(req->self, &t);
  } else if (strcmp(kind, "template") == 0) {
    rc = host->remove_resource_template(req->self, key);
  } else if (strcmp(kind, "prompt") == 0 && add) {
    mcpd_prompt_argument arguments[] = {
        {.name = "topic", .required = 1},
        MCPD_PROMPT_ARGUMENT_END,
    };
    mcpd_prompt p = {.name = key,
                     .description = "A prompt added at run time",
                     .arguments = arguments,
                     .get = get_dynamic,
                     .exec = MCPD_EXEC_INLINE};
    rc = host->add_prompt(req->self, &p);
    /* The host copied the table: scribbling on it changes nothing. */
    arguments[0].name = "scribbled";
  } else if (strcmp(kind, "prompt") == 0) {
    rc = host->remove_prompt(req->self, key);
  }
  if (rc != MCPD_OK)
    return host->result_error(call, "%s %s %s: %s", op, kind, key,
                              host->last_error());
  return host->result_textf(call, "%s %s %s", op, kind, key);
}

/* {"uri", "times"?}: resource_updated() for it, `times` times (default
 * 1), on the loop ("touch") or a pool worker ("touch_pool"). */
static int tool_touch(mcpd_call *call, const mcpd_request *req) {
  const char *uri = arg_string(req->arguments, "uri");
  json_object *v;
  int times = 1;

  if (json_object_object_get_ex(req->arguments, "times", &v))
    times = json_object_get_int(v);
  for (int i = 0; i < times; i++)
    if (req->host->resource_updated(req->self, uri) != MCPD_OK)
      return req->host->result_error(call, "resource_updated(%s): %s", uri,
                                     req->host->last_error());
  return req->host->result_textf(call, "touched %s", uri);
}

static int tool_subscriptions(mcpd_call *call, const mcpd_request *req) {
  struct content *c = req->state;
  int rc;

  pthread_mutex_lock(&c->lock);
  rc = req->host->result_text(call, c->heard ? c->heard : "");
  pthread_mutex_unlock(&c->lock);
  return rc;
}

/* {"how"}: a builder only prompts or completions may use, on a tool. */
static int tool_misuse(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  const char *how = arg_string(req->arguments, "how");

  if (strcmp(how, "completion_value") == 0)
    note(req, how, host->completion_value(call, "x"));
  else if (strcmp(how, "completion_total") == 0)
    note(req, how, host->completion_total(call, 1, 0));
  else if (strcmp(how, "prompt_role") == 0)
    note(req, how, host->prompt_role(call, "assistant"));
  else
    return host->result_textf(call, "how=%s", how);
  /* The text is built, but the misuse already spoiled the result. */
  return host->result_text(call, "after the misuse");
}

static int tool_version(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_text(call, CONTENT_VERSION);
}

static const mcpd_tool tools[] = {
    {.name = "change", .call = tool_change, .exec = MCPD_EXEC_INLINE},
    {.name = "change_pool", .call = tool_change, .exec = MCPD_EXEC_POOL},
    {.name = "touch", .call = tool_touch, .exec = MCPD_EXEC_INLINE},
    {.name = "touch_pool", .call = tool_touch, .exec = MCPD_EXEC_POOL},
    {.name = "subscriptions",
     .call = tool_subscriptions,
     .exec = MCPD_EXEC_INLINE},
    {.name = "misuse_tool", .call = tool_misuse, .exec = MCPD_EXEC_INLINE},
    {.name = "version", .call = tool_version, .exec = MCPD_EXEC_INLINE},
    MCPD_TOOL_END,
};

/* --- life --------------------------------------------------------------- */

static int content_init(const mcpd_host *host, mcpd_self *self,
                        json_object *config, void **state, char **errmsg) {
  struct content *c = calloc(1, sizeof(*c));
  (void)self, (void)config;

  if (c == NULL) {
    *errmsg = host->mprintf("out of memory");
    return MCPD_ERROR;
  }
  pthread_mutex_init(&c->lock, NULL);
  *state = c;
  return MCPD_OK;
}

/* Joins every thread the ASYNC entries started: the image is unmapped
 * once this returns. */
static void content_fini(void *state) {
  struct content *c = state;
  struct job *job;

  if (c == NULL)
    return;
  while ((job = c->jobs) != NULL) {
    c->jobs = job->next;
    pthread_join(job->thread, NULL);
    free(job);
  }
  pthread_mutex_destroy(&c->lock);
  free(c->heard);
  free(c);
}

MCPD_PLUGIN_DEFINE(.name = "content", .version = CONTENT_VERSION,
                   .description = "resources, templates, prompts, completion",
                   .init = content_init, .fini = content_fini, .tools = tools,
                   .resources = resources, .resource_templates = templates,
                   .prompts = prompts);
