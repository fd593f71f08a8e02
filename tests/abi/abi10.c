/* SPDX-License-Identifier: MIT */
/* abi10.c -- the ABI 1.0 fixture: a plugin built against the frozen
 * tests/abi/1.0/mcpd.h, never against sdk/mcpd.h, so every later host
 * proves that it still loads and serves what a 1.0 plugin built.
 *
 * It uses every table (tools in each exec mode, resources, templates,
 * prompts with arguments and completion), run-time entries of each kind,
 * subscriptions, progress, cancellation and every host function of 1.0.
 * Every answer is fixed text, so tests/e2e/abi.test.mjs compares exactly.
 * Frozen with the header: never edit it (tests/abi/README.md). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mcpd.h>

#if MCPD_ABI_MAJOR != 1 || MCPD_ABI_MINOR != 0
#error "abi10.c must be built against the frozen tests/abi/1.0/mcpd.h"
#endif

/* Work that finishes on a thread of its own: ASYNC tools and reads. */
typedef struct job {
  struct abi10 *a;
  mcpd_call *call;
  int kind; /* JOB_* */
  int steps;
  int wait;      /* wait for cancellation before answering */
  int cancelled; /* guarded by a->lock */
  int done;      /* guarded by a->lock */
  pthread_t thread;
  struct job *next;
} job;

enum { JOB_TOOL, JOB_READ };

typedef struct abi10 {
  const mcpd_host *host;
  mcpd_self *self;
  char *label; /* from the config file, or "abi10" */
  pthread_mutex_t lock;
  pthread_cond_t wake;
  job *jobs;
  atomic_int subscribed; /* open subscriptions, by subscribe callbacks */
  atomic_int cancels;    /* on_cancel callbacks run */
  atomic_int seen;       /* cancellations cancelled() confirmed */
} abi10;

static const char *string_arg(json_object *object, const char *key,
                              const char *fallback) {
  json_object *v;

  if (object != NULL && json_object_object_get_ex(object, key, &v) &&
      json_object_is_type(v, json_type_string))
    return json_object_get_string(v);
  return fallback;
}

static int int_arg(json_object *object, const char *key, int fallback) {
  json_object *v;

  if (object != NULL && json_object_object_get_ex(object, key, &v))
    return json_object_get_int(v);
  return fallback;
}

/* --- threads --------------------------------------------------------- */

static void cancel_job(void *arg) {
  job *j = arg;

  atomic_fetch_add(&j->a->cancels, 1);
  pthread_mutex_lock(&j->a->lock);
  j->cancelled = 1;
  pthread_cond_broadcast(&j->a->wake);
  pthread_mutex_unlock(&j->a->lock);
}

static void *job_thread(void *arg) {
  job *j = arg;
  abi10 *a = j->a;
  const mcpd_host *host = a->host;
  struct timespec until;
  int cancelled;

  for (int i = 1; i <= j->steps; i++)
    host->progress(j->call, i, j->steps, "step");
  pthread_mutex_lock(&a->lock);
  if (j->wait) {
    /* Bounded, so a lost cancellation fails a test instead of hanging. */
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    while (!j->cancelled &&
           pthread_cond_timedwait(&a->wake, &a->lock, &until) != ETIMEDOUT)
      continue;
  }
  cancelled = j->cancelled;
  pthread_mutex_unlock(&a->lock);
  if (cancelled && a->host->cancelled(j->call))
    atomic_fetch_add(&a->seen, 1);

  if (j->kind == JOB_READ)
    host->result_text(j->call, "slow v1");
  else if (cancelled)
    host->result_text(j->call, "async cancelled");
  else
    host->result_textf(j->call, "async done after %d steps", j->steps);
  host->complete(j->call, MCPD_OK);

  pthread_mutex_lock(&a->lock);
  j->done = 1;
  pthread_mutex_unlock(&a->lock);
  return NULL;
}

/* Joins the threads that finished, or all of them. */
static void reap(abi10 *a, int all) {
  job **link = &a->jobs, *j, *finished = NULL;

  pthread_mutex_lock(&a->lock);
  while ((j = *link) != NULL) {
    if (all || j->done) {
      *link = j->next;
      j->next = finished;
      finished = j;
    } else {
      link = &j->next;
    }
  }
  pthread_mutex_unlock(&a->lock);
  while ((j = finished) != NULL) {
    finished = j->next;
    pthread_join(j->thread, NULL);
    free(j);
  }
}

static int start_job(abi10 *a, mcpd_call *call, int kind, int steps, int wait) {
  job *j;

  reap(a, 0);
  j = calloc(1, sizeof(*j));
  if (j == NULL)
    return MCPD_ERROR;
  j->a = a;
  j->call = call;
  j->kind = kind;
  j->steps = steps;
  j->wait = wait;
  if (a->host->on_cancel(call, cancel_job, j) != MCPD_OK ||
      pthread_create(&j->thread, NULL, job_thread, j) != 0) {
    free(j);
    return MCPD_ERROR;
  }
  pthread_mutex_lock(&a->lock);
  j->next = a->jobs;
  a->jobs = j;
  pthread_mutex_unlock(&a->lock);
  return MCPD_OK;
}

/* --- tools ------------------------------------------------------------ */

/* What the request carried, as structured content. */
static int tool_request(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  json_object *out = json_object_new_object(), *copy = NULL;

  json_object_object_add(out, "name", json_object_new_string(req->name));
  json_object_object_add(out, "data", json_object_new_string(req->data));
  json_object_object_add(out, "toolName",
                         json_object_new_string(host->call_tool_name(call)));
  json_object_object_add(
      out, "sizeOk",
      json_object_new_boolean(req->size >= sizeof(mcpd_request)));
  json_object_object_add(
      out, "selfOk",
      json_object_new_boolean(req->self == host->call_self(call) &&
                              req->self == ((abi10 *)req->state)->self));
  json_object_object_add(out, "variablesNull",
                         json_object_new_boolean(req->variables == NULL));
  json_object_deep_copy(req->arguments, &copy, NULL);
  json_object_object_add(out, "arguments", copy);
  copy = NULL;
  if (req->meta != NULL)
    json_object_deep_copy(req->meta, &copy, NULL);
  json_object_object_add(out, "meta", copy);
  return host->result_structured(call, out);
}

static int tool_host(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;

  return host->result_textf(call, "abi %u, table %s, label %s", host->abi_major,
                            host->size >= sizeof(struct mcpd_host) ? "ok"
                                                                   : "short",
                            ((abi10 *)req->state)->label);
}

/* Two table entries share this callback; `data` tells them apart. */
static int tool_data(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_textf(call, "data %s", (const char *)req->data);
}

static int tool_blocks(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  char *text = host->mprintf("mprintf %d", 10);
  int rc = MCPD_OK;

  if (text == NULL)
    return MCPD_ERROR;
  if (host->result_text(call, "text") != MCPD_OK ||
      host->result_text_len(call, "a\0b", 3) != MCPD_OK ||
      host->result_text(call, text) != MCPD_OK ||
      host->result_image(call, "iVBORw0KGgo=", "image/png") != MCPD_OK ||
      host->result_audio(call, "UklGRg==", "audio/wav") != MCPD_OK ||
      host->result_resource_link(call, "abi10://static", "static",
                                 "The static resource.",
                                 "text/plain") != MCPD_OK ||
      host->result_resource_link(call, "abi10://multi", "multi", NULL, NULL) !=
          MCPD_OK ||
      host->result_resource_text(call, "abi10://embedded", "text/plain",
                                 "embedded") != MCPD_OK ||
      host->result_resource_blob(call, "abi10://blob",
                                 "application/octet-stream", "AAEC") != MCPD_OK)
    rc = MCPD_ERROR;
  host->free(text);
  return rc;
}

static int tool_async(mcpd_call *call, const mcpd_request *req) {
  json_object *wait = NULL;

  json_object_object_get_ex(req->arguments, "wait", &wait);
  return start_job(req->state, call, JOB_TOOL,
                   int_arg(req->arguments, "steps", 0),
                   json_object_get_boolean(wait));
}

static int tool_error(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_error(call, "abi10 failed %s", "on purpose");
}

static int tool_fail(mcpd_call *call, const mcpd_request *req) {
  return req->host->fail(call, MCPD_ERR_INVALID_PARAMS, "abi10 rejects %s",
                         "this call");
}

static int tool_json(mcpd_call *call, const mcpd_request *req) {
  json_object *result = json_object_new_object();
  json_object *content = json_object_new_array();
  json_object *block = json_object_new_object();

  json_object_object_add(block, "type", json_object_new_string("text"));
  json_object_object_add(block, "text", json_object_new_string("whole"));
  json_object_array_add(content, block);
  json_object_object_add(result, "content", content);
  return req->host->result_json(call, result);
}

static int tool_log(mcpd_call *call, const mcpd_request *req) {
  req->host->log(req->self, MCPD_LOG_INFO, "abi10 log %d", 42);
  return req->host->result_text(call, "logged");
}

static int tool_touch(mcpd_call *call, const mcpd_request *req) {
  if (req->host->resource_updated(req->self, "abi10://static") != MCPD_OK)
    return MCPD_ERROR;
  return req->host->result_text(call, "touched");
}

static int tool_stats(mcpd_call *call, const mcpd_request *req) {
  abi10 *a = req->state;

  return req->host->result_textf(
      call, "subscribed %d, cancels %d, seen %d", atomic_load(&a->subscribed),
      atomic_load(&a->cancels), atomic_load(&a->seen));
}

static int tool_added(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_textf(call, "run-time tool %s",
                                 (const char *)req->data);
}

/* --- resources and templates ------------------------------------------- */

static int read_static(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_text(call, "static v1");
}

static int read_multi(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;

  if (host->result_resource_text(call, NULL, NULL, "part one") != MCPD_OK ||
      host->result_resource_blob(call, NULL, "application/octet-stream",
                                 "AAEC") != MCPD_OK ||
      host->result_resource_text(call, "abi10://multi#2", "text/markdown",
                                 "# part two") != MCPD_OK)
    return MCPD_ERROR;
  return MCPD_OK;
}

static int read_slow(mcpd_call *call, const mcpd_request *req) {
  return start_job(req->state, call, JOB_READ, 0, 0);
}

static int read_missing(mcpd_call *call, const mcpd_request *req) {
  return req->host->fail(call, MCPD_ERR_NOT_FOUND, "abi10 has no %s",
                         req->name);
}

static int read_broken(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_error(call, "abi10 read failed");
}

static int read_item(mcpd_call *call, const mcpd_request *req) {
  const char *id = string_arg(req->variables, "id", "?");

  if (strcmp(id, "none") == 0)
    return req->host->fail(call, MCPD_ERR_NOT_FOUND, "no item %s", id);
  return req->host->result_textf(call, "item %s of %s", id, req->name);
}

static int read_file(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_textf(call, "path %s",
                                 string_arg(req->variables, "path", "?"));
}

static int read_added(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_textf(call, "run-time %s", (const char *)req->data);
}

static void subscribe_cb(const mcpd_request *req, int subscribed) {
  abi10 *a = req->state;

  atomic_fetch_add(&a->subscribed, subscribed ? 1 : -1);
}

static const char *const item_ids[] = {
    "alpha", "bravo", "charlie", "delta",  "echo", "foxtrot",
    "golf",  "hotel", "india",   "juliet", "kilo", "lima",
};
#define N_ITEMS (sizeof(item_ids) / sizeof(item_ids[0]))

/* At most five candidates, and the total when more matched. */
static int complete_item(mcpd_call *call, const mcpd_request *req,
                         const char *argument, const char *value,
                         json_object *context) {
  size_t len = strlen(value), matched = 0;

  (void)context;
  if (strcmp(argument, "id") != 0)
    return MCPD_OK;
  for (size_t i = 0; i < N_ITEMS; i++)
    if (strncmp(item_ids[i], value, len) == 0 && matched++ < 5)
      req->host->completion_value(call, item_ids[i]);
  if (matched > 5)
    req->host->completion_total(call, matched, 1);
  return MCPD_OK;
}

/* --- prompts ---------------------------------------------------------- */

static int get_write(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  const char *tone = string_arg(req->arguments, "tone", NULL);

  host->result_textf(call, "Write about %s%s%s.",
                     string_arg(req->arguments, "topic", "?"),
                     tone ? " in a tone that is " : "", tone ? tone : "");
  host->prompt_role(call, "assistant");
  host->result_text(call, "Gladly.");
  host->prompt_role(call, "user");
  return host->result_resource_text(call, "abi10://static", "text/plain",
                                    "static v1");
}

static const char *const tones[] = {"formal", "friendly", "funny"};

/* tone: from a list, with "purring" first when the topic is cats; topic:
 * 150 candidates, more than the host sends. */
static int complete_write(mcpd_call *call, const mcpd_request *req,
                          const char *argument, const char *value,
                          json_object *context) {
  size_t len = strlen(value);

  if (strcmp(argument, "tone") == 0) {
    if (strcmp(string_arg(context, "topic", ""), "cats") == 0 &&
        strncmp("purring", value, len) == 0)
      req->host->completion_value(call, "purring");
    for (size_t i = 0; i < sizeof(tones) / sizeof(tones[0]); i++)
      if (strncmp(tones[i], value, len) == 0)
        req->host->completion_value(call, tones[i]);
  } else if (strcmp(argument, "topic") == 0) {
    for (int i = 0; i < 150; i++) {
      char topic[16];
      snprintf(topic, sizeof(topic), "t%03d", i);
      if (strncmp(topic, value, len) == 0)
        req->host->completion_value(call, topic);
    }
  }
  return MCPD_OK;
}

static int get_plain(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_text(call, "no arguments");
}

static int get_refuse(mcpd_call *call, const mcpd_request *req) {
  return req->host->fail(call, MCPD_ERR_INVALID_PARAMS, "abi10 refuses %s",
                         req->name);
}

static int get_added(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_textf(call, "run-time prompt %s",
                                 (const char *)req->data);
}

/* --- run-time entries ------------------------------------------------- */

/* On the loop thread (INLINE), so each add or remove acts at once. */
static int tool_dynamic(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  mcpd_self *self = req->self;
  const char *op = string_arg(req->arguments, "op", "");

  if (strcmp(op, "add") == 0) {
    mcpd_tool tool = {.name = "abi10_dyn_tool",
                      .description = "Added at run time.",
                      .call = tool_added,
                      .exec = MCPD_EXEC_POOL,
                      .data = "dyn"};
    mcpd_tool bad = {.name = "bad name", .call = tool_added};
    mcpd_resource resource = {.uri = "abi10://dyn",
                              .name = "dyn",
                              .mime_type = "text/plain",
                              .read = read_added,
                              .data = "resource"};
    mcpd_resource_template tmpl = {.uri_template = "abi10://dyn/{x}",
                                   .name = "dyn_template",
                                   .read = read_added,
                                   .exec = MCPD_EXEC_INLINE,
                                   .data = "template"};
    mcpd_prompt_argument args[] = {{.name = "x", .required = 1},
                                   MCPD_PROMPT_ARGUMENT_END};
    mcpd_prompt prompt = {.name = "abi10_dyn_prompt",
                          .arguments = args,
                          .get = get_added,
                          .data = "prompt"};
    const char *why;

    if (host->add_tool(self, &tool) != MCPD_OK ||
        host->add_resource(self, &resource) != MCPD_OK ||
        host->add_resource_template(self, &tmpl) != MCPD_OK ||
        host->add_prompt(self, &prompt) != MCPD_OK)
      return host->result_error(call, "add failed: %s", host->last_error());
    if (host->add_tool(self, &bad) != MCPD_ERROR)
      return host->result_error(call, "a bad tool name was accepted");
    why = host->last_error();
    return host->result_textf(call, "added; bad name refused %s",
                              why != NULL && why[0] != '\0' ? "with a reason"
                                                            : "silently");
  }
  if (strcmp(op, "remove") == 0) {
    if (host->remove_tool(self, "abi10_dyn_tool") != MCPD_OK ||
        host->remove_resource(self, "abi10://dyn") != MCPD_OK ||
        host->remove_resource_template(self, "abi10://dyn/{x}") != MCPD_OK ||
        host->remove_prompt(self, "abi10_dyn_prompt") != MCPD_OK)
      return host->result_error(call, "remove failed: %s", host->last_error());
    return host->result_text(call, "removed");
  }
  return host->result_error(call, "op must be add or remove");
}

/* --- tables ----------------------------------------------------------- */

#define OBJECT "{\"type\":\"object\"}"

static const mcpd_tool tools[] = {
    {.name = "abi10_request",
     .title = "Request echo",
     .description = "Reports what the request carried.",
     .input_schema = "{\"type\":\"object\",\"properties\":"
                     "{\"n\":{\"type\":\"integer\",\"minimum\":0}}}",
     .output_schema = OBJECT,
     .call = tool_request,
     .exec = MCPD_EXEC_INLINE,
     .read_only_hint = MCPD_HINT_TRUE,
     .destructive_hint = MCPD_HINT_FALSE,
     .idempotent_hint = MCPD_HINT_TRUE,
     .open_world_hint = MCPD_HINT_FALSE,
     .data = "request-data"},
    {.name = "abi10_host",
     .description = "Reports the host table.",
     .call = tool_host,
     .exec = MCPD_EXEC_INLINE},
    {.name = "abi10_data_a",
     .description = "Shares a callback with abi10_data_b.",
     .call = tool_data,
     .exec = MCPD_EXEC_POOL,
     .data = "A"},
    {.name = "abi10_data_b",
     .description = "Shares a callback with abi10_data_a.",
     .call = tool_data,
     .data = "B"},
    {.name = "abi10_blocks",
     .description = "One content block of every kind.",
     .call = tool_blocks,
     .exec = MCPD_EXEC_POOL},
    {.name = "abi10_async",
     .description = "Finishes on its own thread, with progress.",
     .input_schema =
         "{\"type\":\"object\",\"properties\":{\"steps\":{\"type\":"
         "\"integer\",\"minimum\":0,\"maximum\":10},\"wait\":{\"type\":"
         "\"boolean\"}},\"additionalProperties\":false}",
     .call = tool_async,
     .exec = MCPD_EXEC_ASYNC},
    {.name = "abi10_error",
     .description = "A failure the model reads.",
     .call = tool_error,
     .exec = MCPD_EXEC_INLINE},
    {.name = "abi10_fail",
     .description = "A JSON-RPC error.",
     .call = tool_fail,
     .exec = MCPD_EXEC_INLINE},
    {.name = "abi10_json",
     .description = "A whole result handed over.",
     .call = tool_json,
     .exec = MCPD_EXEC_INLINE},
    {.name = "abi10_log", .description = "Logs one line.", .call = tool_log},
    {.name = "abi10_touch",
     .description = "Reports abi10://static as updated.",
     .call = tool_touch,
     .exec = MCPD_EXEC_INLINE},
    {.name = "abi10_stats",
     .description = "Subscriptions and cancellations seen.",
     .call = tool_stats,
     .exec = MCPD_EXEC_INLINE},
    {.name = "abi10_dynamic",
     .description = "Adds or removes run-time entries.",
     .input_schema = "{\"type\":\"object\",\"required\":[\"op\"],"
                     "\"properties\":{\"op\":{\"enum\":[\"add\","
                     "\"remove\"]}}}",
     .call = tool_dynamic,
     .exec = MCPD_EXEC_INLINE},
    MCPD_TOOL_END,
};

static const mcpd_resource resources[] = {
    {.uri = "abi10://static",
     .name = "static",
     .title = "Static",
     .description = "Always the same text.",
     .mime_type = "text/plain",
     .read = read_static,
     .subscribe = subscribe_cb,
     .exec = MCPD_EXEC_INLINE},
    {.uri = "abi10://multi",
     .name = "multi",
     .mime_type = "text/plain",
     .read = read_multi},
    {.uri = "abi10://slow",
     .name = "slow",
     .mime_type = "text/plain",
     .read = read_slow,
     .exec = MCPD_EXEC_ASYNC},
    {.uri = "abi10://missing",
     .name = "missing",
     .read = read_missing,
     .exec = MCPD_EXEC_INLINE},
    {.uri = "abi10://broken",
     .name = "broken",
     .read = read_broken,
     .exec = MCPD_EXEC_INLINE},
    MCPD_RESOURCE_END,
};

static const mcpd_resource_template templates[] = {
    {.uri_template = "abi10://items/{id}",
     .name = "item",
     .title = "Item",
     .description = "An item by id.",
     .mime_type = "text/plain",
     .read = read_item,
     .complete = complete_item,
     .subscribe = subscribe_cb},
    {.uri_template = "abi10://files/{+path}",
     .name = "file",
     .mime_type = "text/plain",
     .read = read_file,
     .exec = MCPD_EXEC_INLINE},
    MCPD_RESOURCE_TEMPLATE_END,
};

static const mcpd_prompt_argument write_args[] = {
    {.name = "topic",
     .title = "Topic",
     .description = "What to write about.",
     .required = 1},
    {.name = "tone", .description = "How it should sound."},
    MCPD_PROMPT_ARGUMENT_END,
};

static const mcpd_prompt prompts[] = {
    {.name = "abi10_write",
     .title = "Write",
     .description = "Asks for a text.",
     .arguments = write_args,
     .get = get_write,
     .complete = complete_write},
    {.name = "abi10_plain",
     .description = "No arguments.",
     .get = get_plain,
     .exec = MCPD_EXEC_INLINE},
    {.name = "abi10_refuse",
     .description = "Always refuses.",
     .get = get_refuse,
     .exec = MCPD_EXEC_INLINE},
    MCPD_PROMPT_END,
};

/* --- init and fini ---------------------------------------------------- */

static int abi10_init(const mcpd_host *host, mcpd_self *self,
                      json_object *config, void **state, char **errmsg) {
  mcpd_tool tool = {.name = "abi10_init_tool",
                    .description = "Added by init().",
                    .call = tool_added,
                    .exec = MCPD_EXEC_INLINE,
                    .data = "init"};
  json_object *v;
  abi10 *a;

  if (config != NULL && json_object_object_get_ex(config, "label", &v) &&
      !json_object_is_type(v, json_type_string)) {
    *errmsg = host->mprintf("config: label must be a string");
    return MCPD_ERROR;
  }
  a = calloc(1, sizeof(*a));
  if (a == NULL) {
    *errmsg = host->mprintf("out of memory");
    return MCPD_ERROR;
  }
  *state = a;
  a->host = host;
  a->self = self;
  a->label = strdup(string_arg(config, "label", "abi10"));
  pthread_mutex_init(&a->lock, NULL);
  pthread_cond_init(&a->wake, NULL);
  if (a->label == NULL) {
    *errmsg = host->mprintf("out of memory");
    return MCPD_ERROR;
  }
  if (host->add_tool(self, &tool) != MCPD_OK) {
    *errmsg = host->mprintf("add_tool: %s", host->last_error());
    return MCPD_ERROR;
  }
  return MCPD_OK;
}

static void abi10_fini(void *state) {
  abi10 *a = state;

  if (a == NULL)
    return;
  reap(a, 1);
  pthread_cond_destroy(&a->wake);
  pthread_mutex_destroy(&a->lock);
  free(a->label);
  free(a);
}

MCPD_PLUGIN_DEFINE(.name = "abi10", .version = "1.0.0",
                   .description = "ABI 1.0 fixture", .init = abi10_init,
                   .fini = abi10_fini, .tools = tools, .resources = resources,
                   .resource_templates = templates, .prompts = prompts);
