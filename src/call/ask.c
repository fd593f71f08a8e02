/* SPDX-License-Identifier: MIT */
/* ask.c -- what a call says to and asks of its client: progress, the
 * plugin's requests to the client (sampling, elicitation, roots) with
 * their timeouts, the end of a URL elicitation, and for a 2026-07-28
 * client, which may not be asked anything mid-call, the input_required
 * answer that carries the questions and a sealed requestState. */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ask.h"
#include "era.h"
#include "jsonrpc.h"
#include "request_state.h"
#include "result.h"

/* --- requests to the client -------------------------------------------
 *
 * A plugin's request to its call's client lives on the loop: sent through
 * the session, timed by a timer, linked into the call so that the call's
 * cancellation or end gives up on it.  Its callback runs exactly once,
 * from ask_reply(), whatever ends it. */

typedef struct client_ask {
  call_exec *exec;
  mcpd_call *call;  /* while linked into call->ask.asks */
  session *session; /* where it went, once sent */
  char id[32];
  char *method;
  json_object *params; /* until sent */
  void (*cb)(void *arg, json_object *result, int code, const char *message);
  void *arg;
  int tasked; /* counted in its task's requests to the client */
  uv_timer_t timer;
  struct client_ask *next;
} client_ask;

static void ask_closed(uv_handle_t *h) {
  free(h->data);
}

static void ask_free(client_ask *a) {
  free(a->method);
  json_object_put(a->params);
  a->params = NULL;
  a->method = NULL;
  if (a->session != NULL) {
    a->timer.data = a;
    uv_close((uv_handle_t *)&a->timer, ask_closed);
  } else {
    free(a);
  }
}

static void ask_unlink(client_ask *a) {
  request *r;
  if (a->call == NULL)
    return;
  r = a->call->req;
  if (a->tasked && r != NULL && REQUEST_SINK(r) != NULL &&
      REQUEST_SINK(r)->asking != NULL)
    REQUEST_SINK(r)->asking(r->task->sink_arg, -1);
  for (client_ask **pp = &a->call->ask.asks; *pp; pp = &(*pp)->next)
    if (*pp == a) {
      *pp = a->next;
      break;
    }
  a->call = NULL;
}

/* Ends a request without an answer from the client. */
static void ask_fail(client_ask *a, int code, const char *message) {
  ask_unlink(a);
  a->cb(a->arg, NULL, code, message);
  ask_free(a);
}

/* session_reply_fn: the client answered, or the session gave up. */
static void ask_reply(void *arg, json_object *result, json_object *error) {
  client_ask *a = arg;
  int code = JSONRPC_INTERNAL_ERROR;
  const char *message = "the client answered with an error";
  json_object *v;

  ask_unlink(a);
  uv_timer_stop(&a->timer);
  if (error != NULL) {
    if (json_object_object_get_ex(error, "code", &v) &&
        json_object_is_type(v, json_type_int))
      code = json_object_get_int(v);
    if (json_object_object_get_ex(error, "message", &v) &&
        json_object_is_type(v, json_type_string))
      message = json_object_get_string(v);
    a->cb(a->arg, NULL, code, message);
  } else {
    a->cb(a->arg, result, 0, NULL);
  }
  ask_free(a);
}

static void ask_timeout(uv_timer_t *t) {
  client_ask *a = t->data;
  char why[80];
  snprintf(why, sizeof(why), "no answer from the client within %llu ms",
           (unsigned long long)a->exec->request_timeout_ms);
  /* Tells the client, then runs ask_reply with the error. */
  session_cancel_request(a->session, a->id, JSONRPC_REQUEST_TIMEOUT, why);
}

/* Sends a request on the loop thread. */
static void ask_send(client_ask *a) {
  mcpd_call *c = a->call;
  request *r = c->req;
  const char *id;

  a->call = NULL;
  if (r == NULL || r->session == NULL) {
    ask_fail(a, JSONRPC_CONNECTION_CLOSED, "the session ended");
    return;
  }
  if (atomic_load(&c->cancelled)) {
    ask_fail(a, JSONRPC_CONNECTION_CLOSED, "the call was cancelled");
    return;
  }
  id = session_request_related(r->session, r, a->method, a->params, ask_reply,
                               a);
  a->params = NULL;
  if (id == NULL) {
    ask_fail(a, JSONRPC_CONNECTION_CLOSED, "the request could not be sent");
    return;
  }
  /* A task waits for its client's input meanwhile (input_required). */
  if (REQUEST_SINK(r) != NULL && REQUEST_SINK(r)->asking != NULL) {
    a->tasked = 1;
    REQUEST_SINK(r)->asking(r->task->sink_arg, 1);
  }
  snprintf(a->id, sizeof(a->id), "%s", id);
  a->session = r->session;
  uv_timer_init(a->exec->loop, &a->timer);
  a->timer.data = a;
  uv_timer_start(&a->timer, ask_timeout, a->exec->request_timeout_ms, 0);
  a->call = c;
  a->next = c->ask.asks;
  c->ask.asks = a;
}

/* Gives up on every request the call still waits for. */
static void asks_abandon(mcpd_call *c, const char *why) {
  while (c->ask.asks != NULL) {
    client_ask *a = c->ask.asks;
    /* Tells the client; ask_reply unlinks it. */
    session_cancel_request(a->session, a->id, JSONRPC_CONNECTION_CLOSED, why);
    if (c->ask.asks == a) /* the session no longer knew it */
      ask_fail(a, JSONRPC_CONNECTION_CLOSED, why);
  }
}

/* --- progress ---------------------------------------------------------- */

static void progress_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  request *r = ev->call->req;
  if (r != NULL && !r->cancelled && r->session != NULL) {
    session_notify_related(r->session, r, "notifications/progress", ev->msg);
    ev->msg = NULL;
  }
  call_event_free(ev);
}

int ask_progress(mcpd_call *call, double progress, double total,
                 const char *message) {
  json_object *params, *token;
  call_event *ev;

  if (!call_usable(call))
    return MCPD_ERROR;
  /* Checked with or without a token, so the bug shows either way. */
  if (!isfinite(progress) || !(progress > call->ask.last_progress)) {
    call_set_error("progress: %g does not increase on %g", progress,
                   call->ask.last_progress);
    return MCPD_ERROR; /* progress MUST increase */
  }
  call->ask.last_progress = progress;
  if ((token = call_progress_token(call)) == NULL)
    return MCPD_OK;
  if (!isfinite(total))
    total = 0;
  params = json_object_new_object();
  if (json_object_is_type(token, json_type_string))
    json_object_object_add(
        params, "progressToken",
        json_object_new_string_len(json_object_get_string(token),
                                   json_object_get_string_len(token)));
  else
    json_object_object_add(params, "progressToken",
                           json_object_new_int64(json_object_get_int64(token)));
  json_object_object_add(params, "progress", json_object_new_double(progress));
  if (total > 0)
    json_object_object_add(params, "total", json_object_new_double(total));
  /* Text that is not valid UTF-8 is repaired on its way out (session.c),
   * like everything else. */
  if (message != NULL)
    json_object_object_add(params, "message", json_object_new_string(message));
  ev = call_event_new(call->exec, progress_run);
  if (ev == NULL) {
    json_object_put(params);
    return MCPD_ERROR;
  }
  ev->call = call;
  ev->msg = params;
  hostq_post(&call->exec->queue, &ev->base);
  return MCPD_OK;
}

/* --- asking the client ------------------------------------------------- */

static void ask_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  ask_send(ev->ask);
  call_event_free(ev);
}

/* Which capability `method` with `params` needs; 0 for a method a plugin
 * may not send. */
static unsigned needed_cap(const char *method, json_object *params) {
  json_object *v;
  if (strcmp(method, "sampling/createMessage") == 0)
    return json_object_object_get_ex(params, "tools", NULL)
               ? CLIENT_SAMPLING_TOOLS
               : CLIENT_SAMPLING;
  if (strcmp(method, "elicitation/create") == 0)
    return json_object_object_get_ex(params, "mode", &v) &&
                   json_object_is_type(v, json_type_string) &&
                   strcmp(json_object_get_string(v), "url") == 0
               ? CLIENT_ELICIT_URL
               : CLIENT_ELICIT_FORM;
  if (strcmp(method, "roots/list") == 0)
    return CLIENT_ROOTS;
  return 0;
}

static const char *cap_name(unsigned cap) {
  switch (cap) {
  case CLIENT_SAMPLING:
    return "sampling";
  case CLIENT_SAMPLING_TOOLS:
    return "sampling.tools";
  case CLIENT_ELICIT_FORM:
    return "elicitation (form mode)";
  case CLIENT_ELICIT_URL:
    return "elicitation.url";
  default:
    return "roots";
  }
}

/* Runs a client_request callback on the loop with its answer or error. */
static void answer_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  ev->reply_cb(ev->reply_arg, ev->msg, ev->msg != NULL ? 0 : ev->value,
               ev->text);
  call_event_free(ev);
}

/* A modern call's request to its client (slot locked, any thread): the
 * answer is in the retry's answers, or the request joins the call's
 * inputs and the plugin hears that it has no answer yet.  Either way its
 * callback runs later on the loop, as an answer from the client would. */
static int input_request(mcpd_call *c, const char *name, const char *method,
                         json_object *params,
                         void (*cb)(void *, json_object *, int, const char *),
                         void *arg) {
  char base[REQUEST_STATE_INPUT_KEY_MAX], key[REQUEST_STATE_INPUT_KEY_MAX];
  json_object *count = NULL, *answer = NULL, *copy = NULL, *ask;
  call_event *ev = call_event_new(c->exec, answer_run);
  unsigned nth;

  if (ev == NULL || (c->ask.asked == NULL &&
                     (c->ask.asked = json_object_new_object()) == NULL)) {
    free(ev);
    json_object_put(params);
    call_set_error("out of memory");
    return MCPD_ERROR;
  }
  /* The nth identical request of this run has a key of its own; a key
   * the plugin chose names one question. */
  if (name != NULL) {
    snprintf(key, sizeof(key), "%s", name);
  } else {
    request_state_input_key(method, params, 1, base);
    json_object_object_get_ex(c->ask.asked, base, &count);
    nth = (unsigned)json_object_get_int(count) + 1;
    json_object_object_add(c->ask.asked, base, json_object_new_int((int)nth));
    request_state_input_key(method, params, nth, key);
  }
  ev->reply_cb = cb;
  ev->reply_arg = arg;
  if (json_object_object_get_ex(c->answers, key, &answer) &&
      json_object_deep_copy(answer, &copy, NULL) == 0) {
    if (c->ask.used == NULL)
      c->ask.used = json_object_new_object();
    json_object_object_add(c->ask.used, key, NULL);
    ev->msg = copy;
    json_object_put(params);
  } else {
    if (c->ask.inputs == NULL)
      c->ask.inputs = json_object_new_object();
    ask = json_object_new_object();
    json_object_object_add(ask, "method", json_object_new_string(method));
    if (params != NULL)
      json_object_object_add(ask, "params", params);
    json_object_object_add(c->ask.inputs, key, ask);
    ev->value = JSONRPC_INTERNAL_ERROR;
    ev->text = strdup("input required: mcpd asks the client in its "
                      "input_required result and runs this call again "
                      "with the answer");
  }
  hostq_post(&c->exec->queue, &ev->base);
  return MCPD_OK;
}

/* A key a plugin may give a request: what input_request() can hold, of
 * characters that need no escaping anywhere. */
static int valid_input_key(const char *key) {
  size_t n = 0;

  for (; key[n] != '\0'; n++)
    if (!isalnum((unsigned char)key[n]) && strchr("_.:-", key[n]) == NULL)
      return 0;
  return n > 0 && n < REQUEST_STATE_INPUT_KEY_MAX;
}

/* `params` (taken over, may be NULL) with `key` in its _meta, or NULL
 * with last_error set. */
static json_object *with_key(json_object *params, const char *key) {
  json_object *meta = NULL, *value = NULL;
  if (params == NULL)
    params = json_object_new_object();
  if (params != NULL && !json_object_object_get_ex(params, "_meta", &meta) &&
      (meta = json_object_new_object()) != NULL)
    json_object_object_add(params, "_meta", meta);
  if (meta != NULL && !json_object_is_type(meta, json_type_object)) {
    json_object_put(params);
    call_set_error("client_request: params._meta must be an object");
    return NULL;
  }
  if (meta == NULL || (value = json_object_new_string(key)) == NULL ||
      json_object_object_add(meta, INPUT_KEY_META, value) != 0) {
    json_object_put(value);
    json_object_put(params);
    call_set_error("out of memory");
    return NULL;
  }
  return params;
}

/* Sends a checked request now on the loop thread, or queues it for the
 * loop.  Takes `params`. */
static int ask_submit(mcpd_call *c, const char *method, json_object *params,
                      void (*cb)(void *, json_object *, int, const char *),
                      void *arg) {
  client_ask *a = calloc(1, sizeof(*a));
  call_event *ev;

  if (a == NULL || (a->method = strdup(method)) == NULL) {
    free(a);
    json_object_put(params);
    call_set_error("out of memory");
    return MCPD_ERROR;
  }
  a->exec = c->exec;
  a->call = c;
  a->params = params;
  a->cb = cb;
  a->arg = arg;
  if (hostq_on_loop(&c->exec->queue)) {
    ask_send(a);
    return MCPD_OK;
  }
  /* Queued with the call's slot locked: a complete() that follows can
   * only queue the call's end behind it. */
  ev = call_event_new(c->exec, ask_run);
  if (ev == NULL) {
    a->call = NULL;
    free(a->method);
    json_object_put(a->params);
    free(a);
    call_set_error("out of memory");
    return MCPD_ERROR;
  }
  ev->ask = a;
  hostq_post(&c->exec->queue, &ev->base);
  return MCPD_OK;
}

int ask_client(mcpd_call *c, const char *key, const char *method,
               json_object *params,
               void (*cb)(void *, json_object *, int, const char *),
               void *arg) {
  unsigned cap;

  if (!call_usable(c) || method == NULL || cb == NULL) {
    json_object_put(params);
    return MCPD_ERROR;
  }
  if (key != NULL && !valid_input_key(key)) {
    json_object_put(params);
    call_set_error(
        "client_request: the key \"%.60s\" is not 1 to %d characters "
        "of A-Z a-z 0-9 _ . : -",
        key, REQUEST_STATE_INPUT_KEY_MAX - 1);
    return MCPD_ERROR;
  }
  if (params != NULL && !json_object_is_type(params, json_type_object)) {
    json_object_put(params);
    call_set_error("client_request: params must be an object");
    return MCPD_ERROR;
  }
  if ((cap = needed_cap(method, params)) == 0) {
    json_object_put(params);
    call_set_error("client_request: \"%.100s\" is not sampling/createMessage, "
                   "elicitation/create or roots/list",
                   method);
    return MCPD_ERROR;
  }
  if (c->modern && !(c->client_caps & cap)) {
    json_object_put(params);
    c->ask.missing_caps |= cap;
    call_set_error(
        "client_request: this 2026-07-28 request did not declare the "
        "%s capability",
        cap_name(cap));
    return MCPD_ERROR;
  }
  if (c->modern && c->kind == CALL_COMPLETE) {
    json_object_put(params);
    call_set_error(
        "client_request: completion/complete cannot ask a 2026-07-28 "
        "client anything (input_required is for tools/call, "
        "resources/read and prompts/get)");
    return MCPD_ERROR;
  }
  /* A worker's modern call asks its host, which answers from the retry
   * or makes the result input_required: the worker keeps nothing. */
  if (c->modern && !c->exec->worker)
    return input_request(c, key, method, params, cb, arg);
  if (!(c->client_caps & cap)) {
    json_object_put(params);
    call_set_error("client_request: the client did not declare the %s "
                   "capability",
                   cap_name(cap));
    return MCPD_ERROR;
  }
  /* A worker's host is its client: the key goes along, for the host to
   * take out (input_key_take()). */
  if (key != NULL && c->exec->worker &&
      (params = with_key(params, key)) == NULL)
    return MCPD_ERROR;
  return ask_submit(c, method, params, cb, arg);
}

/* --- waiting for the answer -------------------------------------------- */

void ask_waiter_init(ask_waiter *w) {
  memset(w, 0, sizeof(*w));
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
}

void ask_waiter_done(ask_waiter *w) {
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
}

void ask_waiter_reply(void *arg, json_object *result, int code,
                      const char *message) {
  ask_waiter *w = arg;
  json_object *copy = NULL;
  char *error = NULL;

  /* The waiting thread gets a copy: json-c reference counts are not
   * atomic, and the loop frees the original. */
  if (result != NULL && json_object_deep_copy(result, &copy, NULL) != 0)
    error = call_mprintf("out of memory copying the client's answer");
  else if (result == NULL)
    error = call_mprintf("%s (%d)", message ? message : "failed", code);
  pthread_mutex_lock(&w->mu);
  w->result = copy;
  w->error = error;
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

int ask_waiter_wait(ask_waiter *w, json_object **result, char **error) {
  int rc = MCPD_OK;

  pthread_mutex_lock(&w->mu);
  while (!w->done)
    pthread_cond_wait(&w->cv, &w->mu);
  pthread_mutex_unlock(&w->mu);
  if (w->result != NULL) {
    *result = w->result;
  } else {
    call_set_error("%s", w->error ? w->error : "failed");
    rc = MCPD_ERROR;
  }
  if (error != NULL && rc != MCPD_OK)
    *error = w->error;
  else
    free(w->error);
  ask_waiter_done(w);
  return rc;
}

/* --- elicitation and roots --------------------------------------------- */

/* Queues `run` for call `c` with a copy of `text` in its event's `name`:
 * behind whatever the call queued before, ahead of its end.  MCPD_OK, or
 * MCPD_ERROR with last_error set. */
static int post_text(mcpd_call *c, hostq_run_cb run, const char *text) {
  call_event *ev = call_event_new(c->exec, run);
  if (ev == NULL || (ev->name = strdup(text)) == NULL) {
    if (ev != NULL)
      call_event_free(ev);
    call_set_error("out of memory");
    return MCPD_ERROR;
  }
  ev->call = c;
  hostq_post(&c->exec->queue, &ev->base);
  return MCPD_OK;
}

static void elicit_done_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  request *r = ev->call->req;
  json_object *params;
  if (r != NULL && r->session != NULL) {
    params = json_object_new_object();
    json_object_object_add(params, "elicitationId",
                           json_object_new_string(ev->name));
    session_notify_about(r->session, r, "notifications/elicitation/complete",
                         params);
  }
  call_event_free(ev);
}

int ask_elicitation_complete(mcpd_call *c, const char *id) {
  if (!call_usable(c) || id == NULL)
    return MCPD_ERROR;
  if (!(c->client_caps & CLIENT_ELICIT_URL) || c->modern) {
    call_set_error(c->modern ? "elicitation_complete: a 2026-07-28 client "
                               "hears of no elicitation (no input_required "
                               "yet)"
                             : "elicitation_complete: the client did not "
                               "declare elicitation.url");
    return MCPD_ERROR;
  }
  return post_text(c, elicit_done_run, id);
}

json_object *ask_roots(mcpd_call *c) {
  json_object *roots = NULL;
  if (c->roots != NULL)
    roots = json_tokener_parse(c->roots);
  else
    call_set_error("call_roots: the client offers no roots");
  return roots;
}

/* --- tasks ---------------------------------------------------------------
 *
 * A task's run reports its status message to its task (the request's
 * sink); a call that may turn into a task asks its request to become one
 * (request_task.begin), and from then on answers into the task's run.  In
 * a worker, both go to the host as notifications about the call's
 * request, and the host's call does the same there. */

void ask_task_status_now(mcpd_call *c, const char *message) {
  request *r = c->req;
  json_object *params;

  if (r == NULL)
    return;
  if (REQUEST_SINK(r) != NULL) {
    if (REQUEST_SINK(r)->status != NULL)
      REQUEST_SINK(r)->status(r->task->sink_arg, message);
    return;
  }
  if (c->exec->worker && r->session != NULL &&
      (params = json_object_new_object()) != NULL) {
    json_object_object_add(params, "message", json_object_new_string(message));
    session_notify_related(r->session, r, ASK_TASK_STATUS_METHOD, params);
  }
}

void ask_task_begin_now(mcpd_call *c) {
  request *r = c->req, *run;

  if (r == NULL || REQUEST_SINK(r) != NULL)
    return;
  if (c->exec->worker) {
    if (r->session != NULL)
      session_notify_related(r->session, r, ASK_TASK_BEGIN_METHOD,
                             json_object_new_object());
    return;
  }
  if (r->task == NULL || r->task->begin == NULL)
    return;
  /* The task answers the client's request; its run takes the call over.
   * Without one (the bounds, memory) the call goes on as a plain call. */
  if ((run = r->task->begin(r->task->begin_arg, r)) == NULL)
    return;
  c->req = run;
  run->call = c;
}

static void task_status_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  ask_task_status_now(ev->call, ev->name);
  call_event_free(ev);
}

static void task_begin_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  ask_task_begin_now(ev->call);
  call_event_free(ev);
}

int ask_task_status(mcpd_call *c, const char *message) {
  if (!call_usable(c))
    return MCPD_ERROR;
  if (atomic_load(&c->task) != CALL_TASK_IS)
    return MCPD_OK; /* not a task: nobody polls a status */
  return post_text(c, task_status_run, message);
}

int ask_task_begin(mcpd_call *c) {
  int may = CALL_TASK_MAY;
  call_event *ev;

  if (!call_usable(c))
    return MCPD_ERROR;
  if (atomic_load(&c->task) == CALL_TASK_IS)
    return MCPD_OK;
  if (!atomic_compare_exchange_strong(&c->task, &may, CALL_TASK_IS)) {
    call_set_error("task_begin: this call cannot be a task (the tool "
                   "forbids tasks, is not MCPD_TASK_ON_REQUEST, or the "
                   "client's request did not negotiate them)");
    return MCPD_ERROR;
  }
  if (hostq_on_loop(&c->exec->queue)) {
    ask_task_begin_now(c);
    return MCPD_OK;
  }
  if ((ev = call_event_new(c->exec, task_begin_run)) == NULL) {
    call_set_error("out of memory");
    return MCPD_ERROR;
  }
  ev->call = c;
  hostq_post(&c->exec->queue, &ev->base);
  return MCPD_OK;
}

/* --- the answer: input_required and missing capabilities --------------- */

/* Answers -32021 for a modern call that failed after it asked for what
 * its request did not declare: the client can retry declaring it.  A call
 * that got by without (a fallback) keeps its own answer. */
static void answer_missing(mcpd_call *c, request *r) {
  json_object *data = json_object_new_object();
  json_object *caps = json_object_new_object();
  char text[600];

  if (c->ask.missing_caps & (CLIENT_SAMPLING | CLIENT_SAMPLING_TOOLS)) {
    json_object *v = json_object_new_object();
    if (c->ask.missing_caps & CLIENT_SAMPLING_TOOLS)
      json_object_object_add(v, "tools", json_object_new_object());
    json_object_object_add(caps, "sampling", v);
  }
  if (c->ask.missing_caps & (CLIENT_ELICIT_FORM | CLIENT_ELICIT_URL)) {
    json_object *v = json_object_new_object();
    if (c->ask.missing_caps & CLIENT_ELICIT_FORM)
      json_object_object_add(v, "form", json_object_new_object());
    if (c->ask.missing_caps & CLIENT_ELICIT_URL)
      json_object_object_add(v, "url", json_object_new_object());
    json_object_object_add(caps, "elicitation", v);
  }
  if (c->ask.missing_caps & CLIENT_ROOTS)
    json_object_object_add(caps, "roots", json_object_new_object());
  json_object_object_add(data, "requiredCapabilities", caps);
  snprintf(text, sizeof(text),
           "Missing client capability: %s %.200s needs %s, which this "
           "request's clientCapabilities do not declare",
           call_what(c), c->name,
           json_object_to_json_string_ext(caps, JSON_C_TO_STRING_PLAIN));
  request_fail(r, ERA_ERR_MISSING_CAPABILITY, text, data);
}

/* The method a modern call answers, for its requestState's binding. */
static const char *call_method(const mcpd_call *c) {
  static const char *const methods[] = {"tools/call", "resources/read",
                                        "prompts/get", "completion/complete"};
  return methods[c->kind];
}

/* Answers input_required: what the run asked and had no answer for, and
 * a requestState with the answers it did use, so that the retry -- on
 * this process or another with the same key -- runs it again with all of
 * them.  Whatever the run built without the answers is dropped. */
static void answer_input_required(mcpd_call *c, request *r) {
  json_object *result = json_object_new_object();
  json_object *answers = json_object_new_object();
  char *state;

  if (c->ask.used != NULL) {
    json_object_object_foreach(c->ask.used, key, unused) {
      json_object *answer = NULL;
      (void)unused;
      if (json_object_object_get_ex(c->answers, key, &answer))
        json_object_object_add(answers, key, json_object_get(answer));
    }
  }
  state = request_state_seal(c->exec->state_key, call_method(c), c->name,
                             c->kind == CALL_READ ? NULL : c->args, answers,
                             request_state_now_ms() + c->exec->state_ttl_ms);
  json_object_put(answers);
  if (state == NULL) {
    json_object_put(result);
    request_fail(r, JSONRPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  json_object_object_add(result, "inputRequests",
                         json_object_get(c->ask.inputs));
  json_object_object_add(result, "requestState", json_object_new_string(state));
  free(state);
  /* An interim result: no cache hints. */
  r->result_type = "input_required";
  r->cache_scope = NULL;
  request_reply(r, result);
}

void ask_setup(mcpd_call *c) {
  c->ask.last_progress = -1e300;
}

void ask_cancel(mcpd_call *c) {
  /* A plugin thread waiting for the client must not wait in vain. */
  asks_abandon(c, "the call was cancelled");
}

void ask_end(mcpd_call *c) {
  asks_abandon(c, "the call finished");
}

void ask_free_call(mcpd_call *c) {
  json_object_put(c->ask.inputs);
  json_object_put(c->ask.used);
  json_object_put(c->ask.asked);
}

void ask_answer(mcpd_call *c, request *r, int status) {
  /* What the client can answer is asked first: a capability it lacks is
   * named (-32021) when nothing else is left to ask. */
  if (c->ask.inputs != NULL)
    answer_input_required(c, r);
  else if (c->modern && c->ask.missing_caps != 0 && result_failed(c, status))
    answer_missing(c, r);
  else
    result_answer(c, r, status);
}
