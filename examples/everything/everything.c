/* SPDX-License-Identifier: MIT */
/* everything.c -- the MCP conformance fixture: the tools, resources,
 * resource template, prompts and completions the conformance suite's
 * server scenarios call, with the exact names, texts and contents its
 * reference "everything server" answers (see the suite's fixture list).
 *
 * It is written against <mcpd.h> alone and doubles as a tour of the SDK:
 * fixed answers come from one callback that replays the content blocks
 * its entry's `data` points to; test_tool_with_logging and
 * test_tool_with_progress run on the pool and sleep between steps; the
 * sampling and elicitation tools ask the client and wait for its answer
 * on the pool (ABI 1.1); the watched resource starts a thread while a
 * client is subscribed to it.
 *
 * Config ("plugins": {"everything": {...}}), every key optional:
 *   watch_interval_ms  how often the watched resource reports a change
 *                      while subscribed (default 3000)
 */
/* nanosleep, clock_gettime and pthread_condattr_setclock. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mcpd.h>

#include "tasks.h"

#define TEST_IMAGE_BASE64                                                      \
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8" \
  "jx0gAAAABJRU5ErkJggg=="
#define TEST_AUDIO_BASE64                                                      \
  "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

#define NO_ARGUMENTS "{\"type\":\"object\",\"properties\":{}}"
#define WATCHED_URI "test://watched-resource"
#define WATCH_INTERVAL_MS 3000
#define STEP_MS 50
#define RECONNECT_MS 200

/* The watched resource's thread runs only while a client is subscribed;
 * an unsubscribe makes it leave its loop, and the next subscribe (or
 * fini()) joins it. */
struct watcher {
  pthread_mutex_t lock;
  pthread_cond_t cond; /* on CLOCK_MONOTONIC */
  long interval_ms;
  int subscribed; /* what the host last told the subscribe callback */
  int stopping;   /* fini() runs */
  int started;    /* `thread` exists and was not joined yet */
  int exited;     /* that thread left its loop and only has to return */
  pthread_t thread;
};

struct everything {
  /* The watcher thread has no request to find these in. */
  const mcpd_host *host;
  mcpd_self *self;
  struct watcher watch;
};

/* --- fixed answers ---------------------------------------------------- */

enum block_kind {
  BLOCK_END = 0,
  BLOCK_TEXT,
  BLOCK_IMAGE,
  BLOCK_AUDIO,
  BLOCK_RESOURCE_TEXT,
  BLOCK_RESOURCE_BLOB
};

/* One content block of a fixed answer.  For resources a NULL uri means
 * the URI that was read and a NULL mime type the entry's. */
struct block {
  enum block_kind kind;
  const char *uri;
  const char *mime_type;
  const char *body; /* text, or base64 for images, audio and blobs */
};

/* Adds the blocks of a table closed by BLOCK_END: the same callback
 * answers tools, prompts (one message per block) and resource reads. */
static int serve_blocks(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  const struct block *b;
  int rc = MCPD_OK;

  for (b = req->data; rc == MCPD_OK && b->kind != BLOCK_END; b++) {
    switch (b->kind) {
    case BLOCK_TEXT:
      rc = host->result_text(call, b->body);
      break;
    case BLOCK_IMAGE:
      rc = host->result_image(call, b->body, b->mime_type);
      break;
    case BLOCK_AUDIO:
      rc = host->result_audio(call, b->body, b->mime_type);
      break;
    case BLOCK_RESOURCE_TEXT:
      rc = host->result_resource_text(call, b->uri, b->mime_type, b->body);
      break;
    case BLOCK_RESOURCE_BLOB:
      rc = host->result_resource_blob(call, b->uri, b->mime_type, b->body);
      break;
    case BLOCK_END:
      break;
    }
  }
  if (rc != MCPD_OK)
    host->log(req->self, MCPD_LOG_ERROR, "%s: %s", req->name,
              host->last_error());
  return rc;
}

static const struct block simple_text[] = {
    {BLOCK_TEXT, NULL, NULL, "This is a simple text response for testing."},
    {BLOCK_END, NULL, NULL, NULL},
};

static const struct block image_content[] = {
    {BLOCK_IMAGE, NULL, "image/png", TEST_IMAGE_BASE64},
    {BLOCK_END, NULL, NULL, NULL},
};

static const struct block audio_content[] = {
    {BLOCK_AUDIO, NULL, "audio/wav", TEST_AUDIO_BASE64},
    {BLOCK_END, NULL, NULL, NULL},
};

static const struct block embedded_resource[] = {
    {BLOCK_RESOURCE_TEXT, "test://embedded-resource", "text/plain",
     "This is an embedded resource content."},
    {BLOCK_END, NULL, NULL, NULL},
};

static const struct block multiple_content_types[] = {
    {BLOCK_TEXT, NULL, NULL, "Multiple content types test:"},
    {BLOCK_IMAGE, NULL, "image/png", TEST_IMAGE_BASE64},
    {BLOCK_RESOURCE_TEXT, "test://mixed-content-resource", "application/json",
     "{\"test\":\"data\",\"value\":123}"},
    {BLOCK_END, NULL, NULL, NULL},
};

static const struct block static_text[] = {
    {BLOCK_RESOURCE_TEXT, NULL, NULL,
     "This is the content of the static text resource."},
    {BLOCK_END, NULL, NULL, NULL},
};

static const struct block static_binary[] = {
    {BLOCK_RESOURCE_BLOB, NULL, NULL, TEST_IMAGE_BASE64},
    {BLOCK_END, NULL, NULL, NULL},
};

static const struct block watched_content[] = {
    {BLOCK_RESOURCE_TEXT, NULL, NULL, "Watched resource content"},
    {BLOCK_END, NULL, NULL, NULL},
};

static const struct block simple_prompt[] = {
    {BLOCK_TEXT, NULL, NULL, "This is a simple prompt for testing."},
    {BLOCK_END, NULL, NULL, NULL},
};

static const struct block image_prompt[] = {
    {BLOCK_IMAGE, NULL, "image/png", TEST_IMAGE_BASE64},
    {BLOCK_TEXT, NULL, NULL, "Please analyze the image above."},
    {BLOCK_END, NULL, NULL, NULL},
};

/* Table entries take `data` as void *; serve_blocks() only reads it. */
#define BLOCKS(table) ((void *)(table))

/* --- tools -------------------------------------------------------------- */

/* Sleeps `ms` in short slices; returns nonzero as soon as the call is
 * cancelled. */
static int nap(const mcpd_host *host, mcpd_call *call, long ms) {
  for (long left = ms; left > 0; left -= 5) {
    struct timespec slice = {0, (left < 5 ? left : 5) * 1000000L};

    if (host->cancelled(call))
      return 1;
    while (nanosleep(&slice, &slice) != 0 && errno == EINTR)
      continue;
  }
  return host->cancelled(call);
}

static int tool_error_handling(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_error(
      call, "This tool intentionally returns an error for testing");
}

/* Runs on the pool: it sleeps between its three log lines. */
static int tool_with_logging(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;

  host->log(req->self, MCPD_LOG_INFO, "Tool execution started");
  if (nap(host, call, STEP_MS))
    return host->result_text(call, "cancelled");
  host->log(req->self, MCPD_LOG_INFO, "Tool processing data");
  if (nap(host, call, STEP_MS))
    return host->result_text(call, "cancelled");
  host->log(req->self, MCPD_LOG_INFO, "Tool execution completed");
  return host->result_text(call, "Tool with logging executed successfully");
}

/* Runs on the pool.  progress() is a no-op when the client sent no
 * token; the result is the token as text ("1" for the integer 1), which
 * lets a client check it was echoed. */
static int tool_with_progress(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  json_object *token;

  for (int step = 0; step <= 100; step += 50) {
    char message[48];

    if (step > 0 && nap(host, call, STEP_MS))
      return host->result_text(call, "cancelled");
    snprintf(message, sizeof(message), "Completed step %d of 100", step);
    if (host->progress(call, step, 100, message) != MCPD_OK) {
      host->log(req->self, MCPD_LOG_ERROR, "progress: %s", host->last_error());
      return MCPD_ERROR;
    }
  }
  /* POOL callbacks get a _meta of their own, so reading it here (which
   * may cache the text of a number inside the object) is safe. */
  if (!json_object_object_get_ex(req->meta, "progressToken", &token))
    return host->result_text(call, "No progress token was given.");
  return host->result_text(call, json_object_get_string(token));
}

/* Runs on the pool: answers after RECONNECT_MS.  The conformance suite
 * calls it to see a POST stream closed before its result and resumed with
 * Last-Event-ID; run mcpd with --sse-poll below RECONNECT_MS for that. */
static int tool_reconnection(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  if (nap(host, call, RECONNECT_MS))
    return host->result_text(call, "cancelled");
  return host->result_text(
      call, "Reconnection test completed successfully. If you received this, "
            "the client properly reconnected after stream closure.");
}

/* --- asking the client -------------------------------------------------- */

/* The answer's text as the tools report it: compact, keys in the client's
 * order, slashes as sent. */
static const char *compact(json_object *value) {
  return json_object_to_json_string_ext(
      value, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* Asks `method` with `params` (consumed) under `key` (NULL: mcpd makes
 * one from what is asked) and returns the client's answer, or NULL with
 * the reason in *why (host->free() it): in the 2026-07-28 era, NULL is also
 * "not answered yet" -- the call's result then becomes input_required whatever
 * the tool answers. */
static json_object *ask_keyed(mcpd_call *call, const mcpd_request *req,
                              const char *key, const char *method,
                              json_object *params, char **why) {
  json_object *result = NULL;

  *why = NULL;
  if (params == NULL) {
    *why = req->host->mprintf("out of memory");
    return NULL;
  }
  if (req->host->client_request_wait_keyed(call, key, method, params, &result,
                                           why) != MCPD_OK) {
    if (*why == NULL)
      *why = req->host->mprintf("%s", req->host->last_error());
    return NULL;
  }
  return result;
}

/* Sends `params` (consumed) and waits for the client's result, on the
 * pool.  On failure -- the client lacks the capability, answered with an
 * error, never answered -- the call gets an isError result saying why,
 * and NULL is returned. */
static json_object *ask_client(mcpd_call *call, const mcpd_request *req,
                               const char *method, json_object *params) {
  json_object *result;
  char *why;

  if (params == NULL) {
    req->host->result_error(call, "%s: out of memory", req->name);
    return NULL;
  }
  if ((result = ask_keyed(call, req, NULL, method, params, &why)) == NULL) {
    req->host->result_error(call, "%s failed: %s", method,
                            why != NULL ? why : "out of memory");
    req->host->free(why);
  }
  return result;
}

/* A string argument the input schema made required. */
static const char *string_argument(const mcpd_request *req, const char *name) {
  json_object *v;

  if (!json_object_object_get_ex(req->arguments, name, &v))
    return "";
  return json_object_get_string(v);
}

/* The text of a sampling result's content: one block, or an array of
 * blocks (2025-11-25) whose text blocks are joined. */
static int add_sampled_text(mcpd_call *call, const mcpd_request *req,
                            json_object *result) {
  const mcpd_host *host = req->host;
  json_object *content, *type, *text;
  size_t n = 1;
  int rc = MCPD_ERROR;
  char *joined = NULL;

  if (!json_object_object_get_ex(result, "content", &content))
    return host->result_error(call, "the client's answer has no content: %s",
                              compact(result));
  if (json_object_is_type(content, json_type_array))
    n = json_object_array_length(content);
  for (size_t i = 0; i < n; i++) {
    json_object *block = json_object_is_type(content, json_type_array)
                             ? json_object_array_get_idx(content, i)
                             : content;
    char *next;

    if (!json_object_object_get_ex(block, "type", &type) ||
        !json_object_is_type(type, json_type_string) ||
        strcmp(json_object_get_string(type), "text") != 0 ||
        !json_object_object_get_ex(block, "text", &text) ||
        !json_object_is_type(text, json_type_string))
      continue;
    next = host->mprintf("%s%s", joined != NULL ? joined : "",
                         json_object_get_string(text));
    host->free(joined);
    if ((joined = next) == NULL)
      return MCPD_ERROR;
  }
  if (joined == NULL)
    return host->result_error(call, "the client's answer holds no text: %s",
                              compact(result));
  rc = host->result_textf(call, "LLM response: %s", joined);
  host->free(joined);
  return rc;
}

static int tool_sampling(mcpd_call *call, const mcpd_request *req) {
  json_object *params, *message, *content, *messages, *result;
  int rc;

  content = json_object_new_object();
  json_object_object_add(content, "type", json_object_new_string("text"));
  json_object_object_add(
      content, "text", json_object_new_string(string_argument(req, "prompt")));
  message = json_object_new_object();
  json_object_object_add(message, "role", json_object_new_string("user"));
  json_object_object_add(message, "content", content);
  messages = json_object_new_array();
  json_object_array_add(messages, message);
  params = json_object_new_object();
  json_object_object_add(params, "messages", messages);
  json_object_object_add(params, "maxTokens", json_object_new_int(100));
  result = ask_client(call, req, "sampling/createMessage", params);
  if (result == NULL)
    return MCPD_OK;
  rc = add_sampled_text(call, req, result);
  json_object_put(result);
  return rc;
}

/* Reports an elicitation's answer as "<prefix> action=<action>" and, when
 * the client sent content, ", content=<content JSON>": a declined or
 * cancelled form is a result too, not a failure. */
static int report_elicitation(mcpd_call *call, const mcpd_request *req,
                              const char *prefix, json_object *result) {
  json_object *action, *content;

  if (!json_object_object_get_ex(result, "action", &action) ||
      !json_object_is_type(action, json_type_string))
    return req->host->result_error(
        call, "the client's answer has no action: %s", compact(result));
  if (!json_object_object_get_ex(result, "content", &content))
    return req->host->result_textf(call, "%s action=%s", prefix,
                                   json_object_get_string(action));
  return req->host->result_textf(call, "%s action=%s, content=%s", prefix,
                                 json_object_get_string(action),
                                 compact(content));
}

/* Asks for a form: `message` and `schema` (JSON text) become the
 * elicitation/create params. */
static int elicit_form(mcpd_call *call, const mcpd_request *req,
                       const char *message, const char *schema,
                       const char *prefix) {
  json_object *params, *requested, *result;
  int rc;

  requested = json_tokener_parse(schema);
  if (requested == NULL) {
    req->host->log(req->self, MCPD_LOG_ERROR, "%s: bad requestedSchema",
                   req->name);
    return MCPD_ERROR;
  }
  params = json_object_new_object();
  json_object_object_add(params, "message", json_object_new_string(message));
  json_object_object_add(params, "requestedSchema", requested);
  result = ask_client(call, req, "elicitation/create", params);
  if (result == NULL)
    return MCPD_OK;
  rc = report_elicitation(call, req, prefix, result);
  json_object_put(result);
  return rc;
}

static const char user_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"username\":{\"type\":\"string\",\"description\":\"User's response\"},"
    "\"email\":{\"type\":\"string\",\"description\":\"User's email address\"}"
    "},\"required\":[\"username\",\"email\"]}";

static int tool_elicitation(mcpd_call *call, const mcpd_request *req) {
  return elicit_form(call, req, string_argument(req, "message"), user_schema,
                     "User response:");
}

/* SEP-1034: a default for each primitive type; 30 stays an integer and
 * 95.5 a number on the wire, since json-c keeps the text it parsed. */
static const char defaults_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":\"string\",\"description\":\"User name\","
    "\"default\":\"John Doe\"},"
    "\"age\":{\"type\":\"integer\",\"description\":\"User age\","
    "\"default\":30},"
    "\"score\":{\"type\":\"number\",\"description\":\"User score\","
    "\"default\":95.5},"
    "\"status\":{\"type\":\"string\",\"description\":\"User status\","
    "\"enum\":[\"active\",\"inactive\",\"pending\"],\"default\":\"active\"},"
    "\"verified\":{\"type\":\"boolean\",\"description\":\"Verification "
    "status\",\"default\":true}"
    "},\"required\":[]}";

static int tool_elicitation_defaults(mcpd_call *call, const mcpd_request *req) {
  return elicit_form(call, req,
                     "Please review and update the form fields with defaults",
                     defaults_schema, "Elicitation completed:");
}

/* SEP-1330: every enum shape, single and multiple choice. */
static const char enums_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"untitledSingle\":{\"type\":\"string\","
    "\"description\":\"Select one option\","
    "\"enum\":[\"option1\",\"option2\",\"option3\"]},"
    "\"titledSingle\":{\"type\":\"string\","
    "\"description\":\"Select one option with titles\","
    "\"oneOf\":[{\"const\":\"value1\",\"title\":\"First Option\"},"
    "{\"const\":\"value2\",\"title\":\"Second Option\"},"
    "{\"const\":\"value3\",\"title\":\"Third Option\"}]},"
    "\"legacyEnum\":{\"type\":\"string\","
    "\"description\":\"Select one option (legacy)\","
    "\"enum\":[\"opt1\",\"opt2\",\"opt3\"],"
    "\"enumNames\":[\"Option One\",\"Option Two\",\"Option Three\"]},"
    "\"untitledMulti\":{\"type\":\"array\","
    "\"description\":\"Select multiple options\",\"minItems\":1,"
    "\"maxItems\":3,\"items\":{\"type\":\"string\","
    "\"enum\":[\"option1\",\"option2\",\"option3\"]}},"
    "\"titledMulti\":{\"type\":\"array\","
    "\"description\":\"Select multiple options with titles\","
    "\"minItems\":1,\"maxItems\":3,\"items\":{\"anyOf\":["
    "{\"const\":\"value1\",\"title\":\"First Choice\"},"
    "{\"const\":\"value2\",\"title\":\"Second Choice\"},"
    "{\"const\":\"value3\",\"title\":\"Third Choice\"}]}}"
    "},\"required\":[]}";

static int tool_elicitation_enums(mcpd_call *call, const mcpd_request *req) {
  return elicit_form(call, req, "Please select options from the enum fields",
                     enums_schema, "Elicitation completed:");
}

/* --- input required (2026-07-28) ---------------------------------------
 *
 * The conformance suite's input-required-result-* scenarios expect their
 * questions under fixed keys ("user_name", "capital_question", ...), so
 * these tools name them with client_request_wait_keyed().  For a legacy
 * client the key is not sent: each question is an ordinary request. */

static json_object *form_params(const char *message, const char *schema) {
  json_object *params = json_object_new_object();
  json_object_object_add(params, "message", json_object_new_string(message));
  json_object_object_add(params, "requestedSchema", json_tokener_parse(schema));
  return params;
}

static json_object *sampling_params(const char *text, int max_tokens) {
  json_object *params = json_object_new_object();
  json_object *messages = json_object_new_array();
  json_object *message = json_object_new_object();
  json_object *content = json_object_new_object();

  json_object_object_add(content, "type", json_object_new_string("text"));
  json_object_object_add(content, "text", json_object_new_string(text));
  json_object_object_add(message, "role", json_object_new_string("user"));
  json_object_object_add(message, "content", content);
  json_object_array_add(messages, message);
  json_object_object_add(params, "messages", messages);
  json_object_object_add(params, "maxTokens", json_object_new_int(max_tokens));
  return params;
}

/* A string field of an accepted form, or NULL. */
static const char *form_field(json_object *answer, const char *field) {
  json_object *action, *content, *value;

  /* The client wrote this: any member may be missing or of any type. */
  if (!json_object_object_get_ex(answer, "action", &action) ||
      !json_object_is_type(action, json_type_string) ||
      strcmp(json_object_get_string(action), "accept") != 0 ||
      !json_object_object_get_ex(answer, "content", &content) ||
      !json_object_object_get_ex(content, field, &value) ||
      !json_object_is_type(value, json_type_string))
    return NULL;
  return json_object_get_string(value);
}

/* The first text of a sampling answer, or "". */
static const char *sampled_text(json_object *answer) {
  json_object *content, *text;

  if (!json_object_object_get_ex(answer, "content", &content))
    return "";
  if (json_object_is_type(content, json_type_array))
    content = json_object_array_get_idx(content, 0);
  if (!json_object_object_get_ex(content, "text", &text) ||
      !json_object_is_type(text, json_type_string))
    return "";
  return json_object_get_string(text);
}

/* The roots of a roots/list answer, as compact JSON. */
static const char *roots_text(json_object *answer) {
  json_object *roots;

  if (!json_object_object_get_ex(answer, "roots", &roots))
    return "[]";
  return compact(roots);
}

static const char name_schema[] =
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},"
    "\"required\":[\"name\"]}";
static const char ok_schema[] =
    "{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}},"
    "\"required\":[\"ok\"]}";
static const char color_schema[] =
    "{\"type\":\"object\",\"properties\":{\"color\":{\"type\":\"string\"}},"
    "\"required\":[\"color\"]}";
static const char context_schema[] =
    "{\"type\":\"object\",\"properties\":{\"context\":{\"type\":\"string\"}},"
    "\"required\":[\"context\"]}";

/* The failure of a question without an answer: for a 2026-07-28 client
 * it is replaced by the input_required result. */
static int not_answered(mcpd_call *call, const mcpd_request *req,
                        const char *key, char *why) {
  int rc = req->host->result_error(call, "%s: %s", key,
                                   why != NULL ? why : "no answer");
  req->host->free(why);
  return rc;
}

/* A tool that asks one question and reports the answer: req->data. */
struct question {
  const char *key;
  const char *method;
  json_object *(*params)(void);
  int (*report)(mcpd_call *call, const mcpd_request *req, json_object *answer);
};

static int tool_ir_single(mcpd_call *call, const mcpd_request *req) {
  const struct question *q = req->data;
  char *why;
  json_object *answer =
      ask_keyed(call, req, q->key, q->method, q->params(), &why);
  int rc;

  if (answer == NULL)
    return not_answered(call, req, q->key, why);
  rc = q->report(call, req, answer);
  json_object_put(answer);
  return rc;
}

static json_object *ask_name(void) {
  return form_params("What is your name?", name_schema);
}

static int greet(mcpd_call *call, const mcpd_request *req,
                 json_object *answer) {
  const char *name = form_field(answer, "name");
  return name != NULL ? req->host->result_textf(call, "Hello, %s!", name)
                      : req->host->result_textf(call, "No name was given: %s",
                                                compact(answer));
}

static json_object *ask_capital(void) {
  return sampling_params("What is the capital of France?", 100);
}

static int report_sampled(mcpd_call *call, const mcpd_request *req,
                          json_object *answer) {
  return req->host->result_textf(call, "The model says: %s",
                                 sampled_text(answer));
}

static json_object *ask_roots(void) {
  return json_object_new_object();
}

static int report_roots(mcpd_call *call, const mcpd_request *req,
                        json_object *answer) {
  return req->host->result_textf(call, "The client's roots: %s",
                                 roots_text(answer));
}

static json_object *ask_confirm(void) {
  return form_params("Please confirm", ok_schema);
}

/* "state-ok": the answer reached this run, so whatever requestState came
 * with it passed mcpd's integrity, binding and expiry checks (a bad one
 * is answered -32602 before any plugin code runs). */
static int report_confirm(mcpd_call *call, const mcpd_request *req,
                          json_object *answer) {
  return req->host->result_textf(call, "state-ok: the answer was %s",
                                 compact(answer));
}

static const struct question user_name = {"user_name", "elicitation/create",
                                          ask_name, greet};
static const struct question capital_question = {
    "capital_question", "sampling/createMessage", ask_capital, report_sampled};
static const struct question client_roots = {"client_roots", "roots/list",
                                             ask_roots, report_roots};
static const struct question confirm = {"confirm", "elicitation/create",
                                        ask_confirm, report_confirm};

/* Three independent questions asked together: one round trip. */
static int tool_ir_multiple(mcpd_call *call, const mcpd_request *req) {
  char *why[3];
  json_object *name =
      ask_keyed(call, req, "user_name", "elicitation/create",
                form_params("What is your name?", name_schema), &why[0]);
  json_object *greeting =
      ask_keyed(call, req, "greeting", "sampling/createMessage",
                sampling_params("Generate a greeting", 50), &why[1]);
  json_object *roots =
      ask_keyed(call, req, "client_roots", "roots/list", ask_roots(), &why[2]);
  int rc;

  if (name != NULL && greeting != NULL && roots != NULL)
    rc = req->host->result_textf(
        call, "%s, %s! Your roots: %s", sampled_text(greeting),
        form_field(name, "name") != NULL ? form_field(name, "name")
                                         : "stranger",
        roots_text(roots));
  else
    rc = req->host->result_error(call, "unanswered: %s%s%s",
                                 name == NULL ? "user_name " : "",
                                 greeting == NULL ? "greeting " : "",
                                 roots == NULL ? "client_roots" : "");
  for (int i = 0; i < 3; i++)
    req->host->free(why[i]);
  json_object_put(name);
  json_object_put(greeting);
  json_object_put(roots);
  return rc;
}

/* Two questions, the second asked only after the first is answered: two
 * input_required rounds, the first answer carried in requestState. */
static int tool_ir_multi_round(mcpd_call *call, const mcpd_request *req) {
  char *why;
  json_object *step1, *step2;
  int rc;

  step1 =
      ask_keyed(call, req, "step1", "elicitation/create",
                form_params("Step 1: What is your name?", name_schema), &why);
  if (step1 == NULL)
    return not_answered(call, req, "step1", why);
  step2 = ask_keyed(
      call, req, "step2", "elicitation/create",
      form_params("Step 2: What is your favorite color?", color_schema), &why);
  if (step2 == NULL) {
    json_object_put(step1);
    return not_answered(call, req, "step2", why);
  }
  rc = req->host->result_textf(
      call, "%s likes %s",
      form_field(step1, "name") != NULL ? form_field(step1, "name") : "someone",
      form_field(step2, "color") != NULL ? form_field(step2, "color")
                                         : "no color");
  json_object_put(step1);
  json_object_put(step2);
  return rc;
}

/* Asks only what the request's client can answer: its name if it offers
 * elicitation, the capital of France if it offers sampling. */
static int tool_ir_capabilities(mcpd_call *call, const mcpd_request *req) {
  char *why[2];
  json_object *name =
      ask_keyed(call, req, "user_name", "elicitation/create",
                form_params("What is your name?", name_schema), &why[0]);
  json_object *capital =
      ask_keyed(call, req, "capital_question", "sampling/createMessage",
                ask_capital(), &why[1]);
  int rc;

  if (name == NULL && capital == NULL)
    rc = req->host->result_error(call, "no answer: %s; %s",
                                 why[0] != NULL ? why[0] : "",
                                 why[1] != NULL ? why[1] : "");
  else
    rc = req->host->result_textf(
        call, "name: %s, capital: %s",
        name != NULL && form_field(name, "name") != NULL
            ? form_field(name, "name")
            : "(not asked)",
        capital != NULL ? sampled_text(capital) : "(not asked)");
  req->host->free(why[0]);
  req->host->free(why[1]);
  json_object_put(name);
  json_object_put(capital);
  return rc;
}

/* A prompt that needs the user's context first (input_required works on
 * prompts/get too). */
static int prompt_ir_context(mcpd_call *call, const mcpd_request *req) {
  char *why;
  json_object *answer = ask_keyed(
      call, req, "user_context", "elicitation/create",
      form_params("What context should the prompt use?", context_schema), &why);
  const char *context;
  int rc;

  if (answer == NULL) {
    rc = req->host->fail(call, MCPD_ERR_INTERNAL, "user_context: %s",
                         why != NULL ? why : "no answer");
    req->host->free(why);
    return rc;
  }
  context = form_field(answer, "context");
  rc = req->host->result_textf(call, "Answer with this context in mind: %s",
                               context != NULL ? context : "(none given)");
  json_object_put(answer);
  return rc;
}

/* SEP-2243: arguments mirrored in Mcp-Param-* headers, which mcpd checks
 * against the body over HTTP in the 2026-07-28 era. */
static int tool_param_headers(mcpd_call *call, const mcpd_request *req) {
  json_object *priority;

  return req->host->result_textf(
      call, "region=%s priority=%s", string_argument(req, "region"),
      json_object_object_get_ex(req->arguments, "priority", &priority)
          ? json_object_get_string(priority)
          : "(none)");
}

static const char param_headers_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"region\":{\"type\":\"string\",\"description\":\"Where to run\","
    "\"x-mcp-header\":\"Region\"},"
    "\"priority\":{\"type\":\"integer\",\"description\":\"How urgent\","
    "\"x-mcp-header\":\"Priority\"},"
    "\"query\":{\"type\":\"string\",\"description\":\"Not mirrored\"}},"
    "\"required\":[\"region\"]}";

/* --- list changes on demand ---------------------------------------------
 *
 * server-stateless (2026-07-28) opens a subscriptions/listen stream and
 * calls these to change the tool and prompt lists: each call adds its
 * dynamic entry when it is absent and removes it when present, so every
 * call is a change clients hear about with list_changed. */

static int tool_dynamic(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_text(call, "I come and go.");
}

static int prompt_dynamic(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_text(call, "I come and go too.");
}

static int tool_trigger_tool_change(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  mcpd_tool dynamic = {
      .name = "test_dynamic_tool",
      .description = "Added and removed by test_trigger_tool_change.",
      .input_schema = "{\"type\":\"object\"}",
      .call = tool_dynamic,
      .exec = MCPD_EXEC_INLINE,
  };

  if (host->remove_tool(req->self, dynamic.name) == MCPD_OK)
    return host->result_text(call, "removed test_dynamic_tool");
  if (host->add_tool(req->self, &dynamic) != MCPD_OK)
    return host->result_error(call, "add_tool: %s", host->last_error());
  return host->result_text(call, "added test_dynamic_tool");
}

static int tool_trigger_prompt_change(mcpd_call *call,
                                      const mcpd_request *req) {
  const mcpd_host *host = req->host;
  mcpd_prompt dynamic = {
      .name = "test_dynamic_prompt",
      .description = "Added and removed by test_trigger_prompt_change.",
      .get = prompt_dynamic,
      .exec = MCPD_EXEC_INLINE,
  };

  if (host->remove_prompt(req->self, dynamic.name) == MCPD_OK)
    return host->result_text(call, "removed test_dynamic_prompt");
  if (host->add_prompt(req->self, &dynamic) != MCPD_OK)
    return host->result_error(call, "add_prompt: %s", host->last_error());
  return host->result_text(call, "added test_dynamic_prompt");
}

static int tool_json_schema(mcpd_call *call, const mcpd_request *req) {
  const char *args = json_object_to_json_string_ext(
      req->arguments, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

  if (args == NULL)
    return MCPD_ERROR;
  return req->host->result_textf(
      call, "JSON Schema 2020-12 tool called with: %s", args);
}

/* The schema of conformance HEAD, a superset of 0.1.16's: $defs with an
 * $anchor, composition and conditional keywords.  mcpd lists it as
 * written and checks the keywords it knows. */
static const char json_schema_2020_12[] =
    "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
    "\"type\":\"object\","
    "\"$defs\":{\"address\":{\"$anchor\":\"addressDef\",\"type\":\"object\","
    "\"properties\":{\"street\":{\"type\":\"string\"},"
    "\"city\":{\"type\":\"string\"}}}},"
    "\"properties\":{\"name\":{\"type\":\"string\"},"
    "\"address\":{\"$ref\":\"#/$defs/address\"},"
    "\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\",\"email\"]},"
    "\"phone\":{\"type\":\"string\"},\"email\":{\"type\":\"string\"}},"
    "\"allOf\":[{\"anyOf\":[{\"required\":[\"phone\"]},"
    "{\"required\":[\"email\"]}]}],"
    "\"if\":{\"properties\":{\"contactMethod\":{\"const\":\"phone\"}},"
    "\"required\":[\"contactMethod\"]},"
    "\"then\":{\"required\":[\"phone\"]},"
    "\"else\":{\"required\":[\"email\"]},"
    "\"additionalProperties\":false}";

static const mcpd_tool tools[] = {
    {
        .name = "test_simple_text",
        .description = "Returns one fixed text block.",
        .input_schema = NO_ARGUMENTS,
        .call = serve_blocks,
        .exec = MCPD_EXEC_INLINE,
        .data = BLOCKS(simple_text),
    },
    {
        .name = "test_image_content",
        .description = "Returns a 1x1 PNG image.",
        .input_schema = NO_ARGUMENTS,
        .call = serve_blocks,
        .exec = MCPD_EXEC_INLINE,
        .data = BLOCKS(image_content),
    },
    {
        .name = "test_audio_content",
        .description = "Returns a tiny WAV audio clip.",
        .input_schema = NO_ARGUMENTS,
        .call = serve_blocks,
        .exec = MCPD_EXEC_INLINE,
        .data = BLOCKS(audio_content),
    },
    {
        .name = "test_embedded_resource",
        .description = "Returns an embedded text resource.",
        .input_schema = NO_ARGUMENTS,
        .call = serve_blocks,
        .exec = MCPD_EXEC_INLINE,
        .data = BLOCKS(embedded_resource),
    },
    {
        .name = "test_multiple_content_types",
        .description = "Returns text, an image and an embedded resource in "
                       "one result.",
        .input_schema = NO_ARGUMENTS,
        .call = serve_blocks,
        .exec = MCPD_EXEC_INLINE,
        .data = BLOCKS(multiple_content_types),
    },
    {
        .name = "test_tool_with_logging",
        .description = "Sends three info log messages about 50 ms apart, "
                       "then returns.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_with_logging,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "test_error_handling",
        .description = "Always fails, with an isError result.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_error_handling,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "test_tool_with_progress",
        .description = "Reports progress 0, 50 and 100 of 100 about 50 ms "
                       "apart, then returns the progress token.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_with_progress,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "test_reconnection",
        .description = "Answers after about 200 ms: long enough for a "
                       "server polling with SSE to close the stream first.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_reconnection,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "test_sampling",
        .description = "Asks the client's model to complete the prompt "
                       "(sampling) and returns its answer.",
        .input_schema =
            "{\"type\":\"object\",\"properties\":{\"prompt\":{"
            "\"type\":\"string\",\"description\":\"The prompt to send "
            "to the LLM\"}},\"required\":[\"prompt\"]}",
        .call = tool_sampling,
        .exec = MCPD_EXEC_POOL,
    },
    /* The 2026-07-28 scenario server-stateless probes these two by name:
     * a call that needs a capability the request did not declare (-32021),
     * and log lines that must stay away without a logLevel. */
    {
        .name = "test_missing_capability",
        .description = "Asks the client's model (sampling) with an empty "
                       "prompt: needs the sampling capability.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_sampling,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "test_logging_tool",
        .description = "The same as test_tool_with_logging.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_with_logging,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "test_elicitation",
        .description = "Asks the user for a username and an email address "
                       "(elicitation) and returns the answer.",
        .input_schema =
            "{\"type\":\"object\",\"properties\":{\"message\":{"
            "\"type\":\"string\",\"description\":\"The message to show "
            "the user\"}},\"required\":[\"message\"]}",
        .call = tool_elicitation,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "test_elicitation_sep1034_defaults",
        .description = "Asks for a form whose fields all have defaults "
                       "(SEP-1034) and returns the answer.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_elicitation_defaults,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "test_elicitation_sep1330_enums",
        .description = "Asks for a form with every kind of enum field "
                       "(SEP-1330) and returns the answer.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_elicitation_enums,
        .exec = MCPD_EXEC_POOL,
    },
    /* The 2026-07-28 scenarios (input-required-result-*, SEP-2322). */
    {
        .name = "test_input_required_result_elicitation",
        .description = "Asks the user's name (elicitation, key user_name) "
                       "and greets them.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_ir_single,
        .exec = MCPD_EXEC_POOL,
        .data = (void *)&user_name,
    },
    {
        .name = "test_input_required_result_sampling",
        .description = "Asks the client's model the capital of France "
                       "(sampling, key capital_question).",
        .input_schema = NO_ARGUMENTS,
        .call = tool_ir_single,
        .exec = MCPD_EXEC_POOL,
        .data = (void *)&capital_question,
    },
    {
        .name = "test_input_required_result_list_roots",
        .description = "Asks the client's roots (roots/list, key "
                       "client_roots) and lists them.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_ir_single,
        .exec = MCPD_EXEC_POOL,
        .data = (void *)&client_roots,
    },
    {
        .name = "test_input_required_result_request_state",
        .description = "Asks for a confirmation (key confirm); answers "
                       "state-ok once it has it.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_ir_single,
        .exec = MCPD_EXEC_POOL,
        .data = (void *)&confirm,
    },
    {
        .name = "test_input_required_result_tampered_state",
        .description = "The same as test_input_required_result_request_"
                       "state: a tampered requestState is refused.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_ir_single,
        .exec = MCPD_EXEC_POOL,
        .data = (void *)&confirm,
    },
    {
        .name = "test_input_required_result_multiple_inputs",
        .description = "Asks a name, a greeting and the roots at once.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_ir_multiple,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "test_input_required_result_multi_round",
        .description = "Asks a name, then a favourite colour: two rounds.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_ir_multi_round,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "test_input_required_result_capabilities",
        .description = "Asks only what the client declared it can answer.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_ir_capabilities,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "test_streaming_elicitation",
        .description = "Asks the user's name; in the 2026-07-28 era the "
                       "question is an input_required result, never a "
                       "request on the response stream.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_ir_single,
        .exec = MCPD_EXEC_POOL,
        .data = (void *)&user_name,
    },
    {
        .name = "test_trigger_tool_change",
        .description = "Adds test_dynamic_tool, or removes it when present: "
                       "clients hear notifications/tools/list_changed.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_trigger_tool_change,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "test_trigger_prompt_change",
        .description = "Adds test_dynamic_prompt, or removes it when "
                       "present: clients hear "
                       "notifications/prompts/list_changed.",
        .input_schema = NO_ARGUMENTS,
        .call = tool_trigger_prompt_change,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "test_param_headers",
        .description = "Echoes region and priority, which HTTP clients "
                       "mirror in Mcp-Param-Region and Mcp-Param-Priority.",
        .input_schema = param_headers_schema,
        .call = tool_param_headers,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "json_schema_2020_12_tool",
        .description = "Tool with JSON Schema 2020-12 features for "
                       "conformance testing (SEP-1613)",
        .input_schema = json_schema_2020_12,
        .call = tool_json_schema,
        .exec = MCPD_EXEC_INLINE,
    },
    /* Tasks (tasks.c): what the tasks-* scenarios call. */
    {.name = "greet",
     .description = "Greets by name; never a task.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"name\":"
                     "{\"type\":\"string\"}}}",
     .call = tasks_greet,
     .exec = MCPD_EXEC_INLINE},
    {.name = "slow_compute",
     .description = "Sleeps `seconds`, then answers; a task when it can be.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"seconds\":"
                     "{\"type\":\"number\",\"minimum\":0},\"label\":"
                     "{\"type\":\"string\"}}}",
     .call = tasks_slow_compute,
     .task_support = MCPD_TASK_OPTIONAL},
    {.name = "failing_job",
     .description = "Reports a tool error after a second; only as a task.",
     .input_schema = NO_ARGUMENTS,
     .call = tasks_failing_job,
     .task_support = MCPD_TASK_REQUIRED},
    {.name = "protocol_error_job",
     .description = "Fails with a JSON-RPC error; a task when it can be.",
     .input_schema = NO_ARGUMENTS,
     .call = tasks_protocol_error_job,
     .task_support = MCPD_TASK_OPTIONAL},
    {.name = "confirm_delete",
     .description = "Asks to confirm deleting `filename`; a task when it "
                    "can be.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"filename\":"
                     "{\"type\":\"string\"}}}",
     .call = tasks_confirm_delete,
     .task_support = MCPD_TASK_OPTIONAL},
    {.name = "multi_input",
     .description = "Asks two questions at once; a task when it can be.",
     .input_schema = NO_ARGUMENTS,
     .call = tasks_multi_input,
     .task_support = MCPD_TASK_OPTIONAL},
    {.name = "test_tool_with_task",
     .description = "Asks for a name as a plain call, then finishes as a "
                    "task; only as a task.",
     .input_schema = NO_ARGUMENTS,
     .call = tasks_tool_with_task,
     .task_support = MCPD_TASK_REQUIRED,
     .task_start = MCPD_TASK_ON_REQUEST},
    MCPD_TOOL_END,
};

/* --- completion ------------------------------------------------------- */

/* The candidates for one argument name; a table closed by a NULL name. */
struct completion_list {
  const char *argument;
  const char *const *values; /* closed by NULL */
};

/* Offers the values of the argument's list that start with what the user
 * typed, in list order; an argument without a list gets none. */
static int complete_from_list(mcpd_call *call, const mcpd_request *req,
                              const char *argument, const char *value,
                              json_object *context) {
  const struct completion_list *list;
  size_t typed = strlen(value);

  (void)context;
  for (list = req->data; list->argument != NULL; list++)
    if (strcmp(list->argument, argument) == 0)
      break;
  if (list->argument == NULL)
    return MCPD_OK;
  for (const char *const *v = list->values; *v != NULL; v++) {
    if (strncmp(*v, value, typed) != 0)
      continue;
    if (req->host->completion_value(call, *v) != MCPD_OK) {
      req->host->log(req->self, MCPD_LOG_ERROR, "completion of %s: %s",
                     argument, req->host->last_error());
      return MCPD_ERROR;
    }
  }
  return MCPD_OK;
}

static const char *const arg1_values[] = {"testValue1", "testOther1", "value1",
                                          NULL};
static const char *const arg2_values[] = {"testValue2", "testOther2", "value2",
                                          NULL};
static const struct completion_list prompt_completions[] = {
    {"arg1", arg1_values},
    {"arg2", arg2_values},
    {NULL, NULL},
};

static const char *const template_ids[] = {"1", "2", "3", "42", "123", NULL};
static const struct completion_list template_completions[] = {
    {"id", template_ids},
    {NULL, NULL},
};

/* Like BLOCKS(): complete_from_list() only reads through `data`. */
#define COMPLETIONS(table) ((void *)(table))

/* --- resources ---------------------------------------------------------- */

static void timespec_add_ms(struct timespec *ts, long ms) {
  ts->tv_sec += ms / 1000;
  ts->tv_nsec += (ms % 1000) * 1000000L;
  if (ts->tv_nsec >= 1000000000L) {
    ts->tv_sec++;
    ts->tv_nsec -= 1000000000L;
  }
}

/* Reports a change of the watched resource every interval while a client
 * is subscribed, then marks itself exited and returns. */
static void *watch_thread(void *arg) {
  struct everything *e = arg;
  struct watcher *w = &e->watch;
  struct timespec next;
  int rc = 0;

  clock_gettime(CLOCK_MONOTONIC, &next);
  pthread_mutex_lock(&w->lock);
  for (;;) {
    timespec_add_ms(&next, w->interval_ms);
    /* A re-subscribe also signals; it keeps the schedule. */
    rc = 0;
    while (w->subscribed && !w->stopping && rc == 0)
      rc = pthread_cond_timedwait(&w->cond, &w->lock, &next);
    if (!w->subscribed || w->stopping || rc != ETIMEDOUT)
      break;
    pthread_mutex_unlock(&w->lock);
    if (e->host->resource_updated(e->self, WATCHED_URI) != MCPD_OK)
      e->host->log(e->self, MCPD_LOG_WARNING, "resource_updated: %s",
                   e->host->last_error());
    pthread_mutex_lock(&w->lock);
  }
  w->exited = 1;
  if (w->subscribed && !w->stopping) {
    pthread_mutex_unlock(&w->lock);
    e->host->log(e->self, MCPD_LOG_ERROR,
                 "the watcher of %s stops: pthread_cond_timedwait failed "
                 "(error %d)",
                 WATCHED_URI, rc);
    return NULL;
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

/* On the loop thread, so it never waits on anything that takes time: a
 * thread that has exited is joined at once, a running one is only woken.
 */
static void watched_subscribe(const mcpd_request *req, int subscribed) {
  struct everything *e = req->state;
  struct watcher *w = &e->watch;
  int rc;

  pthread_mutex_lock(&w->lock);
  w->subscribed = subscribed;
  if (subscribed && w->started && w->exited) {
    /* It only has to return: it no longer needs the lock. */
    pthread_join(w->thread, NULL);
    w->started = 0;
  }
  if (subscribed && !w->started) {
    w->exited = 0;
    rc = pthread_create(&w->thread, NULL, watch_thread, e);
    if (rc == 0)
      w->started = 1;
    else
      req->host->log(req->self, MCPD_LOG_ERROR,
                     "cannot start the watcher of %s (error %d); it will "
                     "report no changes",
                     req->name, rc);
  }
  pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->lock);
}

/* Template reads: the JSON text for the id the URI matched. */
static int read_template(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  static const char *const keys[] = {"id", "templateTest", "data"};
  json_object *id, *doc, *values[3];
  const char *text = NULL;
  char *data;
  int failed;

  if (!json_object_object_get_ex(req->variables, "id", &id) ||
      json_object_get_string_len(id) == 0)
    return host->fail(call, MCPD_ERR_NOT_FOUND, "no such resource: %s",
                      req->name);
  /* A document of its own: the variables are borrowed. */
  data = host->mprintf("Data for ID: %s", json_object_get_string(id));
  values[0] = json_object_new_string(json_object_get_string(id));
  values[1] = json_object_new_boolean(1);
  values[2] = data != NULL ? json_object_new_string(data) : NULL;
  host->free(data);
  doc = json_object_new_object();
  failed = doc == NULL;
  for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
    /* A value json_object_object_add() refused is still ours. */
    if (failed || values[i] == NULL ||
        json_object_object_add(doc, keys[i], values[i]) != 0) {
      json_object_put(values[i]);
      failed = 1;
    }
  }
  if (!failed)
    text = json_object_to_json_string_ext(
        doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  failed = text == NULL ||
           host->result_resource_text(call, NULL, NULL, text) != MCPD_OK;
  json_object_put(doc);
  if (failed) {
    host->log(req->self, MCPD_LOG_ERROR, "reading %s failed: %s", req->name,
              text == NULL ? "out of memory" : host->last_error());
    return MCPD_ERROR;
  }
  return MCPD_OK;
}

static const mcpd_resource resources[] = {
    {
        .uri = "test://static-text",
        .name = "static-text",
        .title = "Static Text Resource",
        .description = "A static text resource for testing",
        .mime_type = "text/plain",
        .read = serve_blocks,
        .exec = MCPD_EXEC_INLINE,
        .data = BLOCKS(static_text),
    },
    {
        .uri = "test://static-binary",
        .name = "static-binary",
        .title = "Static Binary Resource",
        .description = "A static binary resource (image) for testing",
        .mime_type = "image/png",
        .read = serve_blocks,
        .exec = MCPD_EXEC_INLINE,
        .data = BLOCKS(static_binary),
    },
    {
        .uri = WATCHED_URI,
        .name = "watched-resource",
        .title = "Watched Resource",
        .description = "A resource that auto-updates every 3 seconds",
        .mime_type = "text/plain",
        .read = serve_blocks,
        .subscribe = watched_subscribe,
        .exec = MCPD_EXEC_INLINE,
        .data = BLOCKS(watched_content),
    },
    MCPD_RESOURCE_END,
};

static const mcpd_resource_template resource_templates[] = {
    {
        .uri_template = "test://template/{id}/data",
        .name = "template",
        .title = "Resource Template",
        .description = "A resource template with parameter substitution",
        .mime_type = "application/json",
        .read = read_template,
        .complete = complete_from_list,
        .exec = MCPD_EXEC_INLINE,
        .data = COMPLETIONS(template_completions),
    },
    MCPD_RESOURCE_TEMPLATE_END,
};

/* --- prompts ------------------------------------------------------------ */

/* The host checked that required arguments are there; this is a guard. */
static const char *prompt_argument(const mcpd_request *req, const char *name) {
  json_object *v;

  if (!json_object_object_get_ex(req->arguments, name, &v) ||
      !json_object_is_type(v, json_type_string))
    return NULL;
  return json_object_get_string(v);
}

static int prompt_with_arguments(mcpd_call *call, const mcpd_request *req) {
  const char *arg1 = prompt_argument(req, "arg1");
  const char *arg2 = prompt_argument(req, "arg2");

  if (arg1 == NULL || arg2 == NULL)
    return req->host->fail(call, MCPD_ERR_INVALID_PARAMS,
                           "arg1 and arg2 are required");
  return req->host->result_textf(
      call, "Prompt with arguments: arg1='%s', arg2='%s'", arg1, arg2);
}

static int prompt_with_embedded_resource(mcpd_call *call,
                                         const mcpd_request *req) {
  const mcpd_host *host = req->host;
  const char *uri = prompt_argument(req, "resourceUri");

  if (uri == NULL)
    return host->fail(call, MCPD_ERR_INVALID_PARAMS, "resourceUri is required");
  if (host->result_resource_text(call, uri, "text/plain",
                                 "Embedded resource content for testing.") !=
      MCPD_OK)
    return MCPD_ERROR;
  return host->result_text(call, "Please process the embedded resource above.");
}

static const mcpd_prompt_argument arguments_of_prompt_with_arguments[] = {
    {.name = "arg1", .description = "First test argument", .required = 1},
    {.name = "arg2", .description = "Second test argument", .required = 1},
    MCPD_PROMPT_ARGUMENT_END,
};

static const mcpd_prompt_argument arguments_of_embedded_resource[] = {
    {.name = "resourceUri",
     .description = "URI of the resource to embed",
     .required = 1},
    MCPD_PROMPT_ARGUMENT_END,
};

static const mcpd_prompt prompts[] = {
    {
        .name = "test_simple_prompt",
        .title = "Simple Test Prompt",
        .description = "A simple prompt without arguments",
        .get = serve_blocks,
        .exec = MCPD_EXEC_INLINE,
        .data = BLOCKS(simple_prompt),
    },
    {
        .name = "test_prompt_with_arguments",
        .description = "A prompt with required arguments",
        .arguments = arguments_of_prompt_with_arguments,
        .get = prompt_with_arguments,
        .complete = complete_from_list,
        .exec = MCPD_EXEC_INLINE,
        .data = COMPLETIONS(prompt_completions),
    },
    {
        .name = "test_prompt_with_embedded_resource",
        .description = "A prompt that includes an embedded resource",
        .arguments = arguments_of_embedded_resource,
        .get = prompt_with_embedded_resource,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "test_prompt_with_image",
        .description = "A prompt that includes image content",
        .get = serve_blocks,
        .exec = MCPD_EXEC_INLINE,
        .data = BLOCKS(image_prompt),
    },
    {
        .name = "test_input_required_result_prompt",
        .description = "A prompt that first asks the user for its context "
                       "(elicitation, key user_context).",
        .get = prompt_ir_context,
        .exec = MCPD_EXEC_POOL,
    },
    MCPD_PROMPT_END,
};

/* --- life cycle --------------------------------------------------------- */

/* Reads the config into *interval_ms; returns an error text from
 * host->mprintf(), or NULL. */
static char *read_config(const mcpd_host *host, json_object *config,
                         long *interval_ms) {
  *interval_ms = WATCH_INTERVAL_MS;
  if (config == NULL)
    return NULL;
  if (!json_object_is_type(config, json_type_object))
    return host->mprintf("the config must be an object");
  json_object_object_foreach(config, key, value) {
    if (strcmp(key, "watch_interval_ms") != 0)
      return host->mprintf("unknown config key \"%s\"", key);
    if (!json_object_is_type(value, json_type_int) ||
        json_object_get_int64(value) < 1 ||
        json_object_get_int64(value) > 86400000)
      return host->mprintf("watch_interval_ms must be an integer from 1 to "
                           "86400000 (one day)");
    *interval_ms = (long)json_object_get_int64(value);
  }
  return NULL;
}

static int everything_init(const mcpd_host *host, mcpd_self *self,
                           json_object *config, void **state, char **errmsg) {
  struct everything *e;
  pthread_condattr_t attr;
  long interval_ms;
  int rc;

  *errmsg = read_config(host, config, &interval_ms);
  if (*errmsg != NULL)
    return MCPD_ERROR;
  e = calloc(1, sizeof(*e));
  if (e == NULL)
    goto nomem;
  e->host = host;
  e->self = self;
  e->watch.interval_ms = interval_ms;
  if (pthread_condattr_init(&attr) != 0)
    goto nomem;
  rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  if (rc == 0)
    rc = pthread_cond_init(&e->watch.cond, &attr);
  pthread_condattr_destroy(&attr);
  if (rc != 0)
    goto nomem;
  if (pthread_mutex_init(&e->watch.lock, NULL) != 0) {
    pthread_cond_destroy(&e->watch.cond);
    goto nomem;
  }
  *state = e;
  return MCPD_OK;
nomem:
  free(e);
  *errmsg = host->mprintf("out of memory");
  return MCPD_ERROR;
}

/* Joins the watcher thread: the host unmaps this code once fini()
 * returns. */
static void everything_fini(void *state) {
  struct everything *e = state;
  int started;

  if (e == NULL)
    return;
  pthread_mutex_lock(&e->watch.lock);
  e->watch.stopping = 1;
  started = e->watch.started;
  pthread_cond_signal(&e->watch.cond);
  pthread_mutex_unlock(&e->watch.lock);
  if (started)
    pthread_join(e->watch.thread, NULL);
  pthread_mutex_destroy(&e->watch.lock);
  pthread_cond_destroy(&e->watch.cond);
  free(e);
}

MCPD_PLUGIN_DEFINE(.name = "everything", .version = "1.0.0",
                   .description = "The MCP conformance suite's fixture: "
                                  "tools, resources, a template, prompts "
                                  "and completions.",
                   .init = everything_init, .fini = everything_fini,
                   .tools = tools, .resources = resources,
                   .resource_templates = resource_templates,
                   .prompts = prompts);
