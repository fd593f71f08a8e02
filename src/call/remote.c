/* SPDX-License-Identifier: MIT */
/* remote.c -- calls into isolated plugins: a call is forwarded to its
 * plugin's worker process (worker_link.h) with the client's capabilities and
 * roots beside it, and what the worker says about the call on its way
 * (requests to the client, progress, logs) reaches the call's client. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ask.h"
#include "era.h"
#include "jsonrpc.h"
#include "loader.h"
#include "remote.h"
#include "result.h"
#include "schedule.h"
#include "strbuf.h"
#include "worker_link.h"

/* The worker answered (or died): the call ends like any other.  A call
 * cancelled here is answered too, once it stopped; that answer reaches
 * nobody when the client cancelled (request_send drops it). */
static void remote_done(void *call, json_object *result, const char *text,
                        size_t len, json_object *error) {
  mcpd_call *c = call;
  c->remote.id = 0;
  result_from_worker(c, result, text, len, error);
  call_mark_completed(c);
  call_done(c, MCPD_OK);
}

/* Whether `key` of the client's _meta stays behind: only the host's own
 * key (the client cannot speak for the host).  The rest, a modern
 * client's envelope included, reaches the plugin as it would in-process;
 * the worker's legacy session gives the envelope no meaning. */
static int meta_stays(const char *key) {
  return strcmp(key, "io.mcpd/client") == 0;
}

/* Appends `v` as JSON text: a string directly, anything else through
 * json-c. */
static void append_json(strbuf *b, json_object *v) {
  size_t len;
  const char *text;
  if (json_object_is_type(v, json_type_string)) {
    strbuf_json_string(b, json_object_get_string(v),
                       (size_t)json_object_get_string_len(v));
    return;
  }
  text = jsonrpc_to_string(v, &len);
  strbuf_append(b, text, len);
}

static void append_member(strbuf *b, int *first, const char *key,
                          json_object *v) {
  if (!*first)
    strbuf_append(b, ",", 1);
  *first = 0;
  strbuf_json_string(b, key, strlen(key));
  strbuf_append(b, ":", 1);
  append_json(b, v);
}

/* Forwards the call to its plugin's worker: the client's request, with
 * the client's capabilities and roots beside it.  The params are written
 * as text from the request's values: no tree is built to be serialized
 * once and freed. */
static void forward(mcpd_call *c, request *r) {
  static const char *const methods[] = {"tools/call", "resources/read",
                                        "prompts/get", "completion/complete"};
  json_object *caps = r->modern ? r->client_capabilities : NULL;
  const char *caps_json =
      !r->modern && r->session != NULL ? r->session->client_caps_json : NULL;
  json_object *meta = NULL;
  strbuf params = {0};
  int first = 1, rc;

  strbuf_append(&params, "{", 1);
  if (json_object_is_type(r->params, json_type_object)) {
    json_object_object_foreach(r->params, key, val) {
      if (strcmp(key, "_meta") != 0)
        append_member(&params, &first, key, val);
    }
  }
  if (!first)
    strbuf_append(&params, ",", 1);
  strbuf_puts(&params, "\"_meta\":{");
  first = 1;
  if (json_object_object_get_ex(r->params, "_meta", &meta) &&
      json_object_is_type(meta, json_type_object)) {
    json_object_object_foreach(meta, key, val) {
      if (!meta_stays(key))
        append_member(&params, &first, key, val);
    }
  }
  if (!first)
    strbuf_append(&params, ",", 1);
  strbuf_puts(&params, "\"io.mcpd/client\":{");
  first = 1;
  /* No member and an empty one say the same: the client declared nothing
   * (and the worker parses one object less per call). */
  if (json_object_is_type(caps, json_type_object) &&
      json_object_object_length(caps) > 0) {
    append_member(&params, &first, "capabilities", caps);
  } else if (caps_json != NULL && strcmp(caps_json, "{}") != 0) {
    strbuf_puts(&params, "\"capabilities\":");
    strbuf_puts(&params, caps_json);
    first = 0;
  }
  /* The worker speaks the legacy revision to the host: the envelope
   * stays here (the host answers the client), its facts travel in
   * io.mcpd/client, and "modern" has the worker's call refuse requests
   * to the client and answer -32021 itself, as a call here would. */
  if (r->modern) {
    strbuf_puts(&params, first ? "\"modern\":true" : ",\"modern\":true");
    first = 0;
  }
  /* Whether the call is a task's run or may turn into one: the worker's
   * task_status() and task_begin() tell the host, which keeps the task. */
  if (atomic_load(&c->task) != CALL_TASK_NONE) {
    strbuf_puts(&params, first ? "" : ",");
    strbuf_puts(&params, atomic_load(&c->task) == CALL_TASK_IS
                             ? "\"task\":\"is\""
                             : "\"task\":\"may\"");
    first = 0;
  }
  if (c->roots != NULL) {
    strbuf_puts(&params, first ? "\"roots\":" : ",\"roots\":");
    strbuf_puts(&params, c->roots);
  }
  strbuf_puts(&params, "}}}");
  rc = params.failed ? -1
                     : worker_call(c->plugin, methods[c->kind], params.data,
                                   params.len, c, remote_done, &c->remote.id);
  strbuf_free(&params);
  if (rc != 0) {
    result_set_failure(c, JSONRPC_INTERNAL_ERROR,
                       call_mprintf("plugin \"%s\" is not running now (its "
                                    "worker is starting or restarting)",
                                    c->plugin->name));
    call_mark_completed(c);
    call_done(c, MCPD_ERROR);
  }
}

/* The name a worker gave its request (client_request_keyed()), which
 * travels in the params' _meta and must not reach the client: taken out
 * of `params` and returned (free() it), or NULL. */
static char *input_key_take(json_object *params) {
  json_object *key = jsonrpc_meta_take(params, INPUT_KEY_META);
  char *copy = json_object_is_type(key, json_type_string)
                   ? strdup(json_object_get_string(key))
                   : NULL;
  json_object_put(key);
  return copy;
}

/* A request the worker made for a call: asked of the call's client. */
typedef struct remote_ask {
  plugin *p;
  json_object *id;
} remote_ask;

static void remote_ask_cb(void *arg, json_object *result, int code,
                          const char *message) {
  remote_ask *ra = arg;
  if (code == 0)
    worker_answer(ra->p, ra->id, json_object_get(result), NULL);
  else
    worker_answer(
        ra->p, ra->id, NULL,
        jsonrpc_error(NULL, code, message ? message : "failed", NULL));
  json_object_put(ra->id);
  plugin_release(ra->p);
  free(ra);
}

static void worker_request_cb(void *arg, void *call, plugin *p, json_object *id,
                              const char *method, json_object *params) {
  mcpd_call *c = call;
  remote_ask *ra = calloc(1, sizeof(*ra));
  json_object *copy = NULL;
  char *key;
  int rc;
  (void)arg;
  if (ra == NULL || c->req == NULL ||
      (params != NULL && json_object_deep_copy(params, &copy, NULL) != 0)) {
    free(ra);
    worker_answer(
        p, id, NULL,
        jsonrpc_error(NULL, JSONRPC_INTERNAL_ERROR,
                      c->req == NULL ? "the call is over" : "out of memory",
                      NULL));
    return;
  }
  ra->p = p;
  plugin_ref(p);
  ra->id = json_object_get(id);
  key = input_key_take(copy);
  rc = ask_client(c, key, method, copy, remote_ask_cb, ra);
  free(key);
  if (rc != MCPD_OK) {
    /* Refused here (a capability the client lacks): the worker hears why. */
    worker_answer(
        p, id, NULL,
        jsonrpc_error(NULL, JSONRPC_INVALID_PARAMS, call_last_error(), NULL));
    json_object_put(ra->id);
    plugin_release(p);
    free(ra);
  }
}

/* A worker's log level by name (era.c keeps the names), info when it sent
 * none mcpd knows. */
static int log_level_of(const char *name) {
  int level = era_log_level(name);
  return level >= 0 ? level : MCPD_LOG_INFO;
}

static void worker_notify_cb(void *arg, void *call, plugin *p,
                             const char *method, json_object *params) {
  call_exec *e = arg;
  mcpd_call *c = call;
  request *r = c != NULL ? c->req : NULL;
  json_object *copy = NULL;

  if (strcmp(method, "notifications/resources/updated") == 0) {
    json_object *uri = NULL;
    if (c == NULL && e->updated_cb != NULL &&
        json_object_object_get_ex(params, "uri", &uri) &&
        json_object_is_type(uri, json_type_string))
      e->updated_cb(e->arg, json_object_get_string(uri));
    return;
  }
  if (strcmp(method, "notifications/message") == 0) {
    json_object *level = NULL, *data = NULL;
    const char *text;
    json_object_object_get_ex(params, "level", &level);
    json_object_object_get_ex(params, "data", &data);
    text = json_object_is_type(data, json_type_string)
               ? json_object_get_string(data)
               : json_object_to_json_string_ext(data, JSON_C_TO_STRING_PLAIN);
    /* As in log_run(): a cancelled call's line still goes to its own
     * session, never to another. */
    if (c != NULL && (r == NULL || r->session == NULL))
      return;
    if (e->log_cb != NULL)
      e->log_cb(e->arg, log_level_of(json_object_get_string(level)), p->name,
                text ? text : "", r);
    return;
  }
  if (c != NULL && strcmp(method, ASK_TASK_STATUS_METHOD) == 0) {
    json_object *text = NULL;
    if (json_object_object_get_ex(params, "message", &text) &&
        json_object_is_type(text, json_type_string))
      ask_task_status_now(c, json_object_get_string(text));
    return;
  }
  if (c != NULL && strcmp(method, ASK_TASK_BEGIN_METHOD) == 0) {
    ask_task_begin_now(c);
    return;
  }
  if (r == NULL || r->cancelled || r->session == NULL ||
      json_object_deep_copy(params, &copy, NULL) != 0)
    return;
  if (strcmp(method, "notifications/progress") == 0) {
    json_object *token = call_progress_token(c);
    if (token == NULL) {
      json_object_put(copy);
      return;
    }
    json_object_object_add(copy, "progressToken", json_object_get(token));
  }
  session_notify_related(r->session, r, method, copy);
}

void call_worker_env(call_exec *e, worker_env *env) {
  env->notify_cb = worker_notify_cb;
  env->request_cb = worker_request_cb;
  env->arg = e;
}

int remote_start(mcpd_call *c) {
  if (!c->plugin->isolated)
    return 0;
  forward(c, c->req);
  return 1;
}

void remote_cancel(mcpd_call *c) {
  /* An isolated plugin's worker is told, and its answer ends the call;
   * past a deadline, it must stop within a grace period or be killed. */
  if (c->remote.id != 0)
    worker_cancel(c->plugin, c->remote.id, sched_deadline_passed(c) ? 2000 : 0);
}
