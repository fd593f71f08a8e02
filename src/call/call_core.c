/* SPDX-License-Identifier: MIT */
/* call_core.c -- a call's life: its start, the events it queues for the
 * loop, its cancellation and its finish.  What each part of the room
 * does at those moments (deadlines, the pool, the worker, the client's
 * requests, the answer) runs through the hooks in exec->hooks.
 *
 * Result builders run on whatever thread owns the call (the loop, a pool
 * worker, or the plugin's own thread for asynchronous tools); they touch
 * only that call's private objects.  Everything that reaches a session or
 * the registry is an event on the executor's queue, run by the loop. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_core.h"
#include "handles.h"
#include "jsonrpc.h"
#include "loader.h"
#include "log.h"
#include "metrics.h"
#include "watchdog.h"

/* The reason behind the last host function that failed on each thread,
 * for mcpd_host.last_error(). */
static _Thread_local char last_error[512];

void call_set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof(last_error), fmt, ap);
  va_end(ap);
}

const char *call_last_error(void) {
  return last_error;
}

char *call_vmprintf(const char *fmt, va_list ap) {
  va_list copy;
  int n;
  char *buf;

  va_copy(copy, ap);
  n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  if (n < 0 || (buf = malloc((size_t)n + 1)) == NULL)
    return NULL;
  vsnprintf(buf, (size_t)n + 1, fmt, ap);
  return buf;
}

char *call_mprintf(const char *fmt, ...) {
  va_list ap;
  char *s;
  va_start(ap, fmt);
  s = call_vmprintf(fmt, ap);
  va_end(ap);
  return s;
}

call_event *call_event_new(call_exec *e, hostq_run_cb run) {
  call_event *ev = calloc(1, sizeof(*ev));
  if (ev != NULL) {
    ev->base.run = run;
    ev->exec = e;
  }
  return ev;
}

void call_event_free(call_event *ev) {
  json_object_put(ev->msg);
  free(ev->name);
  free(ev->text);
  free(ev);
}

static void call_finish(mcpd_call *c, int status);

static void complete_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  call_finish(ev->call, ev->value);
  call_event_free(ev);
}

/* Finishes a call whose callback is done (loop thread).  Events it queued
 * (progress, say) are still waiting when the queue is not empty; then the
 * finish waits its turn behind them. */
void call_done(mcpd_call *c, int status) {
  if (hostq_empty(&c->exec->queue) || call_finish_queued(c, status) != 0)
    call_finish(c, status);
}

/* Finishes `c` on a later loop turn, never from inside the caller (which
 * may be walking the list of requests the finish frees). */
int call_finish_queued(mcpd_call *c, int status) {
  call_event *ev = call_event_new(c->exec, complete_run);
  if (ev == NULL)
    return -1;
  ev->call = c;
  ev->value = status;
  hostq_post(&c->exec->queue, &ev->base);
  return 0;
}

/* What a plugin holds for call `c`: a handle, never the pointer. */
static mcpd_call *handle_of(mcpd_call *c) {
  return (mcpd_call *)c->handle;
}

/* The call whose on_cancel callback runs on this thread, if any. */
static _Thread_local mcpd_call *cancelling;

/* Waits for an on_cancel callback of `c` another thread runs; one on this
 * thread (the callback completing its own call) is not waited for. */
void call_wait_cancel_cb(mcpd_call *c) {
  while (atomic_load(&c->cancel_running) && cancelling != c)
    uv_sleep(0);
}

/* Marks the call completed with its handle's slot locked, so that a host
 * function already inside the slot (a progress() that passed its checks)
 * has queued what it queues before the loop decides the call is done, and
 * every later one is refused.  Returns whether it was already completed.
 * Then waits for an on_cancel callback the loop may be running right now:
 * after completion the plugin may free what that callback touches. */
int call_mark_completed(mcpd_call *c) {
  handle_slot *slot;
  char owner[HANDLES_OWNER_MAX + 1];
  int was = 1;

  if (handles_enter(c->handle, &slot, owner) != NULL) {
    was = atomic_exchange(&c->completed, 1);
    handles_leave(slot);
  }
  call_wait_cancel_cb(c);
  return was;
}

int call_claim_completion(mcpd_call *c) {
  return c->entry->exec == MCPD_EXEC_ASYNC &&
         !atomic_exchange(&c->completed, 1);
}

int call_set_cancel_cb(mcpd_call *c, void (*cb)(void *arg), void *arg) {
  if (atomic_load(&c->completed))
    return 0; /* finished: it will never be cancelled */
  if (atomic_load(&c->cancelled))
    return 1; /* call_cancel() already ran and found nothing to run */
  c->cancel_cb = cb;
  c->cancel_arg = arg;
  return 0;
}

/* Whether results may still be built on the call: not once it completed
 * (its answer may already be on its way). */
int call_usable(mcpd_call *call) {
  if (call != NULL && !atomic_load(&call->completed))
    return 1;
  if (call != NULL)
    log_error("plugin \"%s\": a result built after the call completed; "
              "ignored (a plugin bug)",
              call->plugin->name);
  call_set_error("the call has already completed");
  return 0;
}

/* The call whose callback runs on this thread, if any: a line it logs
 * belongs to that call's request, and goes to that client only. */
static _Thread_local mcpd_call *running;

mcpd_call *call_running(void) {
  return running;
}

const char *call_what(const mcpd_call *c) {
  switch (c->kind) {
  case CALL_READ:
    return "read of";
  case CALL_PROMPT:
    return "prompt";
  case CALL_COMPLETE:
    return "completion for";
  default:
    return "tool";
  }
}

/* Runs the plugin's callback for the call. */
int call_invoke(mcpd_call *c) {
  mcpd_call *h = handle_of(c), *outer = running;
  int on_loop = c->entry->exec != MCPD_EXEC_POOL;
  int rc = MCPD_ERROR;

  running = c;
  if (on_loop)
    watchdog_enter(c->plugin->name, call_what(c), c->name);
  switch (c->kind) {
  case CALL_TOOL:
    rc = c->entry->cb(h, &c->request);
    break;
  case CALL_READ:
    rc = c->entry->read(h, &c->request);
    break;
  case CALL_PROMPT:
    rc = c->entry->get(h, &c->request);
    break;
  case CALL_COMPLETE:
    rc = c->entry->complete(h, &c->request, c->argument, c->value, c->args);
    break;
  }
  if (on_loop)
    watchdog_leave();
  running = outer;
  return rc;
}

/* The call's progress token, a string or an integer, or NULL.  It lives
 * in the call's `meta`, a private copy off the loop; it is only read, and
 * progress notifications get tokens of their own. */
json_object *call_progress_token(const mcpd_call *c) {
  json_object *token;
  if (!json_object_object_get_ex(c->meta, "progressToken", &token) ||
      !(json_object_is_type(token, json_type_string) ||
        json_object_is_type(token, json_type_int)))
    return NULL;
  return token;
}

/* Copies a json-c value for a callback: shared when it runs on the loop,
 * a private copy otherwise (json-c reference counts are not atomic).
 * NULL stays NULL; *ok turns 0 when a copy fails. */
static json_object *for_callback(json_object *v, int inline_cb, int *ok) {
  json_object *copy = NULL;
  if (v == NULL)
    return NULL;
  if (inline_cb)
    return json_object_get(v);
  if (json_object_deep_copy(v, &copy, NULL) != 0) {
    *ok = 0;
    return NULL;
  }
  return copy;
}

unsigned call_client_caps(json_object *caps) {
  json_object *v;
  unsigned bits = 0;

  if (json_object_object_get_ex(caps, "sampling", &v) &&
      json_object_is_type(v, json_type_object)) {
    bits |= CLIENT_SAMPLING;
    if (json_object_object_get_ex(v, "tools", NULL))
      bits |= CLIENT_SAMPLING_TOOLS;
  }
  if (json_object_object_get_ex(caps, "elicitation", &v) &&
      json_object_is_type(v, json_type_object)) {
    int form = json_object_object_get_ex(v, "form", NULL);
    int url = json_object_object_get_ex(v, "url", NULL);
    /* An empty object is the 2025-06-18 form: form mode only. */
    if (form || !url)
      bits |= CLIENT_ELICIT_FORM;
    if (url)
      bits |= CLIENT_ELICIT_URL;
  }
  if (json_object_object_get_ex(caps, "roots", &v) &&
      json_object_is_type(v, json_type_object))
    bits |= CLIENT_ROOTS;
  return bits;
}

static void call_free(mcpd_call *c) {
  const call_hooks *hooks = c->exec->hooks;
  for (int i = 0; i < CALL_HOOKS_MAX && hooks->free[i] != NULL; i++)
    hooks->free[i](c);
  json_object_put(c->args);
  json_object_put(c->variables);
  json_object_put(c->meta);
  free(c->name);
  free(c->argument);
  free(c->value);
  json_object_put(c->answers);
  free(c->roots);
  free(c->log_request);
  reg_entry_release(c->entry);
  plugin_release(c->plugin);
  free(c);
}

reg_entry *call_entry(const mcpd_call *c) {
  return c->entry;
}

json_object *call_retry_answers(const mcpd_call *c) {
  return c->answers;
}

void call_answer_early(mcpd_call *c, int code, const char *msg,
                       json_object *data) {
  request *r = c->req;
  c->req = NULL;
  r->call = NULL;
  log_warn("%s; answered with an error", msg);
  request_fail(r, code, msg, data);
}

void call_abandon(mcpd_call *c) {
  char msg[300];
  json_object *data;
  if (c->req == NULL || atomic_load(&c->completed))
    return;
  snprintf(msg, sizeof(msg),
           "plugin \"%s\": %s \"%s\" was still running when mcpd exited",
           c->plugin->name, call_what(c), c->name);
  data = json_object_new_object();
  json_object_object_add(data, "plugin",
                         json_object_new_string(c->plugin->name));
  call_answer_early(c, JSONRPC_CONNECTION_CLOSED, msg, data);
}

/* The host's keys in a worker's _meta: what it tells the worker, never
 * the plugin. */
static int host_meta_key(const char *key) {
  return strcmp(key, "io.mcpd/client") == 0 ||
         strcmp(key, "io.mcpd/related") == 0;
}

/* Worker mode: `meta` without the host's keys, as a new object, or a new
 * reference to `meta` when it has none.  NULL when out of memory. */
static json_object *meta_for_plugin(json_object *meta) {
  json_object *copy;
  int found = 0;

  json_object_object_foreach(meta, key, val) {
    (void)val;
    found |= host_meta_key(key);
  }
  if (!found)
    return json_object_get(meta);
  if ((copy = json_object_new_object()) == NULL)
    return NULL;
  json_object_object_foreach(meta, k, v) {
    if (host_meta_key(k))
      continue;
    if (json_object_object_add(copy, k, json_object_get(v)) != 0) {
      json_object_put(v);
      json_object_put(copy);
      return NULL;
    }
  }
  return copy;
}

/* What the call may ask of its client, and the roots call_roots() gives:
 * the session's, or in worker mode what the host wrote in the request's
 * _meta["io.mcpd/client"] (`client`), which is the whole truth when
 * present: a member left out means the client declared nothing there. */
static int client_facts(mcpd_call *c, const request *r, json_object *client) {
  json_object *caps = NULL, *roots = NULL;
  const char *text = NULL;
  size_t len;

  if (client != NULL) {
    json_object_object_get_ex(client, "capabilities", &caps);
    if (json_object_object_get_ex(client, "roots", &roots) &&
        json_object_is_type(roots, json_type_array))
      text = jsonrpc_to_string(roots, &len);
  } else if (r->modern) {
    /* This request's envelope alone; roots are asked for, not kept. */
    caps = r->client_capabilities;
  } else if (r->session != NULL) {
    c->client_caps = r->session->client_caps;
    if (r->session->roots != NULL &&
        (c->roots = strdup(r->session->roots)) == NULL)
      return -1;
    return 0;
  }
  c->client_caps = call_client_caps(caps);
  if (text != NULL && (c->roots = strdup(text)) == NULL)
    return -1;
  return 0;
}

/* The request's _meta as the plugin sees it, a new reference or NULL; in
 * worker mode without the host's keys, and `*client` the host's facts
 * about the real client.  *ok turns 0 when out of memory. */
static json_object *request_meta(mcpd_call *c, const request *r,
                                 json_object **client, int *ok) {
  json_object *meta = NULL, *v;

  *client = NULL;
  json_object_object_get_ex(r->params, "_meta", &meta);
  /* An empty _meta is none, in-process and isolated alike (the host's
   * forwarded request always has one, for its own key). */
  if (!json_object_is_type(meta, json_type_object) ||
      json_object_object_length(meta) == 0)
    return NULL;
  if (!c->exec->worker)
    return json_object_get(meta);
  if (json_object_object_get_ex(meta, "io.mcpd/client", client) &&
      !json_object_is_type(*client, json_type_object))
    *client = NULL;
  /* The host serves a modern client: this call follows its rules. */
  if (*client != NULL && json_object_object_get_ex(*client, "modern", &v) &&
      json_object_get_boolean(v))
    c->modern = 1;
  if (*client != NULL && json_object_object_get_ex(*client, "task", &v) &&
      json_object_is_type(v, json_type_string))
    atomic_store(&c->task, strcmp(json_object_get_string(v), "is") == 0
                               ? CALL_TASK_IS
                               : CALL_TASK_MAY);
  if ((meta = meta_for_plugin(meta)) == NULL) {
    *ok = 0;
  } else if (json_object_object_length(meta) == 0) {
    json_object_put(meta);
    meta = NULL;
  }
  return meta;
}

/* A new call for request `r`, not yet linked to it, or NULL when out of
 * memory. */
static mcpd_call *call_new(call_exec *e, request *r, const call_args *a) {
  mcpd_call *c = calloc(1, sizeof(*c));
  /* Values are shared, not copied, when no other thread reads them: the
   * callback runs on the loop, or in a worker process. */
  int inline_cb =
      a->entry->exec == MCPD_EXEC_INLINE || a->entry->owner->isolated;
  json_object *meta, *client;
  int ok = 1;

  if (c == NULL)
    return NULL;
  c->exec = e;
  c->kind = a->kind;
  c->entry = reg_entry_ref(a->entry);
  c->plugin = a->entry->owner;
  plugin_ref(c->plugin);
  c->modern = r->modern;
  atomic_init(&c->task, r->task == NULL          ? CALL_TASK_NONE
                        : r->task->sink != NULL  ? CALL_TASK_IS
                        : r->task->begin != NULL ? CALL_TASK_MAY
                                                 : CALL_TASK_NONE);
  meta = request_meta(c, r, &client, &ok);
  c->name = strdup(a->name);
  c->args = for_callback(a->arguments, inline_cb, &ok);
  c->variables = for_callback(a->variables, inline_cb, &ok);
  c->meta = for_callback(meta, inline_cb, &ok);
  json_object_put(meta);
  if (client_facts(c, r, client) != 0)
    ok = 0;
  if (a->argument)
    c->argument = strdup(a->argument);
  if (a->value)
    c->value = strdup(a->value);
  /* What the plugin's JSON log lines say of the call; a worker's request
   * is its host's, so it says nothing. */
  if (log_json_enabled() && !e->worker) {
    size_t len;
    c->log_request = strdup(jsonrpc_to_string(r->id, &len));
    if (r->session != NULL)
      log_session_tag(r->session, c->log_session);
  }
  /* A private copy: plugin threads look answers up while it runs. */
  if (a->answers != NULL &&
      json_object_deep_copy(a->answers, &c->answers, NULL) != 0)
    ok = 0;
  c->handle = handles_add(c, c->plugin->name);
  if (!ok || c->name == NULL || c->handle == 0 ||
      (a->argument && c->argument == NULL) || (a->value && c->value == NULL)) {
    handles_remove(c->handle);
    call_free(c);
    return NULL;
  }
  return c;
}

void call_start(call_exec *e, request *r, const call_args *a) {
  const call_hooks *hooks = e->hooks;
  mcpd_call *c = call_new(e, r, a);
  int rc;

  if (c == NULL) {
    request_fail(r, JSONRPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  for (int i = 0; i < CALL_HOOKS_MAX && hooks->setup[i] != NULL; i++)
    hooks->setup[i](c);
  c->req = r;
  r->call = c;
  c->request.size = sizeof(c->request);
  c->request.host = e->host;
  c->request.self = &c->plugin->self;
  c->request.state = c->plugin->state;
  c->request.data = a->entry->data;
  c->request.name = c->name;
  c->request.arguments = c->kind == CALL_COMPLETE ? NULL : c->args;
  c->request.variables = c->variables;
  c->request.meta = c->meta;
  if (metrics_on && c->kind == CALL_TOOL)
    c->started = uv_hrtime();
  e->in_flight++;

  for (int i = 0; i < CALL_HOOKS_MAX && hooks->start[i] != NULL; i++)
    if (hooks->start[i](c))
      return;
  rc = call_invoke(c);
  if (a->entry->exec == MCPD_EXEC_INLINE) {
    call_mark_completed(c);
    call_done(c, rc);
  } else if (rc != MCPD_OK && !call_mark_completed(c)) {
    /* An ASYNC call that failed to start finishes now -- unless the
     * plugin already called complete(), whose queued event will finish
     * it. */
    call_done(c, rc);
  }
}

void call_cancel(mcpd_call *c) {
  const call_hooks *hooks = c->exec->hooks;
  handle_slot *slot;
  char owner[HANDLES_OWNER_MAX + 1];
  void (*cb)(void *) = NULL;
  void *arg = NULL;

  /* Decided with the slot locked, so that on_cancel() on another thread
   * either sees the call cancelled and runs its callback itself, or has
   * stored it and this runs it: exactly once.  It runs without the lock
   * (it may call host functions); cancel_running makes completion wait
   * for it. */
  if (handles_enter(c->handle, &slot, owner) == NULL) {
    atomic_store(&c->cancelled, 1);
    return;
  }
  if (!atomic_exchange(&c->cancelled, 1) && !atomic_load(&c->completed)) {
    cb = c->cancel_cb;
    arg = c->cancel_arg;
    c->cancel_cb = NULL;
    if (cb != NULL)
      atomic_store(&c->cancel_running, 1);
  }
  handles_leave(slot);
  if (cb != NULL) {
    mcpd_call *outer = cancelling;
    cancelling = c;
    cb(arg);
    cancelling = outer;
    atomic_store(&c->cancel_running, 0);
  }
  for (int i = 0; i < CALL_HOOKS_MAX && hooks->cancel[i] != NULL; i++)
    hooks->cancel[i](c);
}

static void call_finish(mcpd_call *c, int status) {
  call_exec *e = c->exec;
  const call_hooks *hooks = e->hooks;
  request *r = c->req;

  /* From here on the plugin's handle is stale: a late complete() or
   * result_*() is refused instead of touching freed memory. */
  handles_remove(c->handle);
  for (int i = 0; i < CALL_HOOKS_MAX && hooks->end[i] != NULL; i++)
    hooks->end[i](c);
  if (r != NULL) {
    r->call = NULL;
    hooks->answer(c, r, status);
  }
  if (c->started != 0) {
    if (c->entry->metrics == NULL)
      c->entry->metrics = metrics_tool_series(c->plugin->name, c->name);
    metrics_observe(c->entry->metrics, uv_hrtime() - c->started);
  }
  call_free(c);
  if (--e->in_flight == 0 && e->drained_cb != NULL)
    e->drained_cb(e->arg);
}
