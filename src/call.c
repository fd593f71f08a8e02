/* call.c -- tool calls in flight and the host table plugins call.
 *
 * Result builders run on whatever thread owns the call (the loop, a pool
 * worker, or the plugin's own thread for asynchronous tools); they touch
 * only that call's private objects.  Everything that reaches a session or
 * the registry is an event on the executor's queue, run by the loop. */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/linkhash.h>

#include "call.h"
#include "handles.h"
#include "jsonrpc.h"
#include "loader.h"
#include "log.h"
#include "request_state.h"
#include "schema.h"
#include "utf8.h"
#include "watchdog.h"

/* The reason behind the last host function that failed on each thread,
 * for mcpd_host.last_error(). */
static _Thread_local char last_error[512];

static void set_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof(last_error), fmt, ap);
  va_end(ap);
}

/* One event type for everything the host table hands to the loop. */
typedef struct call_event {
  hostq_event base;
  call_exec *exec;
  mcpd_call *call;        /* completion, progress */
  struct plugin *plugin;  /* run-time tools; holds a reference */
  json_object *msg;       /* progress params */
  reg_entry *entry;       /* add_*: the entry to register */
  struct client_ask *ask; /* client_request */
  int kind;               /* remove_*: the reg_kind */
  char *name;             /* remove_*: the key; log: the logger; updated: uri */
  char *text;             /* log */
  int value;              /* completion status, log level; answer: code */
  /* answer: the plugin's client_request callback, run with `msg` (the
   * answer) or with `value` and `text` (an error). */
  void (*reply_cb)(void *arg, json_object *result, int code,
                   const char *message);
  void *reply_arg;
} call_event;

static call_event *new_event(call_exec *e, hostq_run_cb run) {
  call_event *ev = calloc(1, sizeof(*ev));
  if (ev != NULL) {
    ev->base.run = run;
    ev->exec = e;
  }
  return ev;
}

static void free_event(call_event *ev) {
  json_object_put(ev->msg);
  free(ev->name);
  free(ev->text);
  free(ev);
}

static void call_finish(mcpd_call *c, int status);

static void complete_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  call_finish(ev->call, ev->value);
  free_event(ev);
}

/* Finishes a call whose callback is done (loop thread).  Events it queued
 * (progress, say) are still waiting when the queue is not empty; then the
 * finish waits its turn behind them. */
static void call_done(mcpd_call *c, int status) {
  call_event *ev;
  if (hostq_empty(&c->exec->queue) ||
      (ev = new_event(c->exec, complete_run)) == NULL) {
    call_finish(c, status);
    return;
  }
  ev->call = c;
  ev->value = status;
  hostq_post(&c->exec->queue, &ev->base);
}

int call_exec_init(call_exec *e, uv_loop_t *loop) {
  int rc;
  memset(e, 0, sizeof(*e));
  e->loop = loop;
  atomic_init(&e->log_floor, 8);
  if ((rc = hostq_init(&e->queue, loop)) != 0)
    return rc;
  uv_timer_init(loop, &e->deadline_timer);
  e->deadline_timer.data = e;
  return 0;
}

void call_exec_close(call_exec *e) {
  hostq_close(&e->queue);
  uv_close((uv_handle_t *)&e->deadline_timer, NULL);
}

void call_exec_want_logs(call_exec *e, int level) {
  int floor = atomic_load(&e->log_floor);
  while (level < floor &&
         !atomic_compare_exchange_weak(&e->log_floor, &floor, level))
    ;
}

/* What a plugin holds for call `c`: a handle, never the pointer. */
static mcpd_call *handle_of(mcpd_call *c) {
  return (mcpd_call *)c->handle;
}

/* Marks the call completed with its handle's slot locked, so that a host
 * function already inside the slot (a progress() that passed its checks)
 * has queued what it queues before the loop decides the call is done, and
 * every later one is refused.  Returns whether it was already completed.
 * Then waits for an on_cancel callback the loop may be running right now:
 * after completion the plugin may free what that callback touches. */
/* The call whose on_cancel callback runs on this thread, if any. */
static _Thread_local mcpd_call *cancelling;

/* Waits for an on_cancel callback of `c` another thread runs; one on this
 * thread (the callback completing its own call) is not waited for. */
static void wait_cancel_cb(mcpd_call *c) {
  while (atomic_load(&c->cancel_running) && cancelling != c)
    uv_sleep(0);
}

static int mark_completed(mcpd_call *c) {
  handle_slot *slot;
  char owner[HANDLES_OWNER_MAX + 1];
  int was = 1;

  if (handles_enter(c->handle, &slot, owner) != NULL) {
    was = atomic_exchange(&c->completed, 1);
    handles_leave(slot);
  }
  wait_cancel_cb(c);
  return was;
}

/* The call whose callback runs on this thread, if any: a line it logs
 * belongs to that call's request, and goes to that client only. */
static _Thread_local mcpd_call *running;

static const char *what(const mcpd_call *c);

/* Runs the plugin's callback for the call. */
static int invoke(mcpd_call *c) {
  mcpd_call *h = handle_of(c), *outer = running;
  int on_loop = c->entry->exec != MCPD_EXEC_POOL;
  int rc = MCPD_ERROR;

  running = c;
  if (on_loop)
    watchdog_enter(c->plugin->name, what(c), c->name);
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

/* --- worker threads, shared fairly ------------------------------------- */

static void after_work_cb(uv_work_t *work, int status);

static void work_cb(uv_work_t *work) {
  mcpd_call *c = work->data;
  c->status = invoke(c);
  /* Completed here, on the worker, not in after_work_cb: a cancellation
   * the loop handles in between must not run the plugin's on_cancel
   * callback after the tool returned. */
  mark_completed(c);
}

static void pool_start(mcpd_call *c) {
  plugin *p = c->plugin;
  p->pool_running++;
  if (uv_queue_work(c->exec->loop, &c->work, work_cb, after_work_cb) != 0) {
    p->pool_running--;
    mark_completed(c);
    call_done(c, MCPD_ERROR);
  }
}

/* Starts the plugin's waiting calls while it is under its share. */
static void pool_next(plugin *p, unsigned cap) {
  while (p->pool_head != NULL && p->pool_running < cap) {
    mcpd_call *c = p->pool_head;
    if ((p->pool_head = c->pool_next) == NULL)
      p->pool_tail = NULL;
    c->pool_next = NULL;
    c->pool_waiting = 0;
    pool_start(c);
  }
}

/* Runs a POOL call on a worker thread, or queues it behind its plugin's
 * other calls when the plugin holds its share of the threads already:
 * calls that never return starve only their own plugin. */
static void pool_submit(mcpd_call *c) {
  plugin *p = c->plugin;
  if (p->pool_running < c->exec->pool_cap && p->pool_head == NULL) {
    pool_start(c);
    return;
  }
  c->pool_waiting = 1;
  if (p->pool_tail)
    p->pool_tail->pool_next = c;
  else
    p->pool_head = c;
  p->pool_tail = c;
}

/* Takes a call that never got a thread out of its plugin's queue. */
static void pool_withdraw(mcpd_call *c) {
  plugin *p = c->plugin;
  mcpd_call **pp = &p->pool_head, *prev = NULL;
  while (*pp != NULL && *pp != c) {
    prev = *pp;
    pp = &(*pp)->pool_next;
  }
  if (*pp == NULL)
    return;
  *pp = c->pool_next;
  if (p->pool_tail == c)
    p->pool_tail = prev;
  c->pool_next = NULL;
  c->pool_waiting = 0;
}

static void after_work_cb(uv_work_t *work, int status) {
  mcpd_call *c = work->data;
  plugin *p = c->plugin;
  /* work_cb marked it, unless the pool cancelled the work before it ran. */
  if (status != 0)
    mark_completed(c);
  /* The thread is free: the plugin's next call gets it (before this
   * call's finish, which may drop the last reference to the plugin). */
  p->pool_running--;
  pool_next(p, c->exec->pool_cap ? c->exec->pool_cap : UINT_MAX);
  call_done(c, status == 0 ? c->status : MCPD_ERROR);
}

/* The call's progress token, a string or an integer, or NULL.  It lives
 * in the call's `meta`, a private copy off the loop; it is only read, and
 * progress notifications get tokens of their own. */
static json_object *progress_token(const mcpd_call *c) {
  json_object *token;
  if (!json_object_object_get_ex(c->meta, "progressToken", &token) ||
      !(json_object_is_type(token, json_type_string) ||
        json_object_is_type(token, json_type_int)))
    return NULL;
  return token;
}

static int build_text(mcpd_call *c, int status, strbuf *out, char *err,
                      size_t errlen);

/* What the call serves, for messages: "tool", "read of", ... */
static const char *what(const mcpd_call *c) {
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

/* Whether `text` is one line of strict JSON.  A plugin can attach its own
 * json-c serializer to a value it hands back, and json-c then prints
 * whatever that serializer writes -- a newline would start a forged
 * message on the client's stream. */
static int one_json_line(const char *text, size_t len) {
  json_tokener *tok;
  json_object *obj = NULL;
  const char *why;
  int ok;

  if (memchr(text, '\n', len) != NULL || memchr(text, '\r', len) != NULL)
    return 0;
  if ((tok = json_tokener_new_ex(JSONRPC_MAX_DEPTH)) == NULL)
    return 0;
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  ok = jsonrpc_parse(tok, text, len, &obj, &why) == 0;
  json_object_put(obj);
  json_tokener_free(tok);
  return ok;
}

/* The whole result: built, then made valid UTF-8 (plugin text is not
 * trusted to be), then checked when plugin-built json-c values went in. */
static int build_result(mcpd_call *c, int status, strbuf *out, char *err,
                        size_t errlen) {
  if (status != MCPD_OK && status != MCPD_ERROR) {
    snprintf(err, errlen,
             "%s %s returned %d, which is neither MCPD_OK nor MCPD_ERROR",
             what(c), c->name, status);
    return -1;
  }
  if (build_text(c, status, out, err, errlen) != 0)
    return -1;
  if (!utf8_valid(out->data, out->len)) {
    size_t len;
    char *fixed = utf8_repair(out->data, out->len, &len);
    if (fixed == NULL) {
      snprintf(err, errlen, "out of memory");
      return -1;
    }
    log_warn("plugin \"%s\": %s %s returned text that is not valid UTF-8; "
             "bad bytes were replaced with U+FFFD",
             c->plugin->name, what(c), c->name);
    free(out->data);
    out->data = fixed;
    out->len = len;
    out->cap = len + 1;
  }
  /* A worker's result passed the same checks on its way in. */
  if ((c->structured != NULL ||
       (c->replacement != NULL && !c->remote_checked)) &&
      !one_json_line(out->data, out->len)) {
    snprintf(err, errlen,
             "%s %s returned a value that does not serialize as JSON "
             "(a custom json-c serializer?)",
             what(c), c->name);
    return -1;
  }
  return 0;
}

/* What a client declared it can do, as CLIENT_* bits, so that any thread
 * can check a request to it without touching the session. */
#define CLIENT_SAMPLING 0x1u
#define CLIENT_SAMPLING_TOOLS 0x2u
#define CLIENT_ELICIT_FORM 0x4u
#define CLIENT_ELICIT_URL 0x8u
#define CLIENT_ROOTS 0x10u

static unsigned client_caps(json_object *caps) {
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
  json_object_put(c->args);
  json_object_put(c->variables);
  json_object_put(c->meta);
  strbuf_free(&c->content);
  strbuf_free(&c->remote_text);
  json_object_put(c->structured);
  json_object_put(c->replacement);
  free(c->name);
  free(c->argument);
  free(c->value);
  free(c->fail_message);
  json_object_put(c->fail_data);
  json_object_put(c->answers);
  json_object_put(c->inputs);
  json_object_put(c->used);
  json_object_put(c->asked);
  free(c->roots);
  reg_entry_release(c->entry);
  plugin_release(c->plugin);
  free(c);
}

/* --- deadlines ----------------------------------------------------------
 *
 * One timer per exec, armed for the soonest deadline of a list kept in
 * due order: a call starts and ends without a timer handle of its own.
 * Most calls share one deadline length, so a new one goes at the tail and
 * the walk back from there is short. */

/* Answers the call's request now with error `code` and `msg` (and
 * `data`, taken over), and detaches it: the call goes on without it. */
static void answer_early(mcpd_call *c, int code, const char *msg,
                         json_object *data) {
  request *r = c->req;
  c->req = NULL;
  r->call = NULL;
  log_warn("%s; answered with an error", msg);
  request_fail(r, code, msg, data);
}

/* The call ran past its deadline: its client gets an error now, the
 * plugin is told to cancel, and whatever it produces later is dropped. */
static void deadline_passed(mcpd_call *c) {
  json_object *data;
  char msg[300];

  if (c->req == NULL || atomic_load(&c->completed))
    return; /* answered, or its finish is on its way */
  snprintf(msg, sizeof(msg),
           "plugin \"%s\": %s \"%s\" did not finish within its deadline of "
           "%llu ms",
           c->plugin->name, what(c), c->name,
           (unsigned long long)c->deadline_ms);
  c->deadline_passed = 1;
  data = json_object_new_object();
  json_object_object_add(data, "plugin",
                         json_object_new_string(c->plugin->name));
  json_object_object_add(data, "deadlineMs",
                         json_object_new_int64((int64_t)c->deadline_ms));
  answer_early(c, JSONRPC_REQUEST_TIMEOUT, msg, data);
  call_cancel(c);
}

void call_abandon(mcpd_call *c) {
  char msg[300];
  json_object *data;
  if (c->req == NULL || atomic_load(&c->completed))
    return;
  snprintf(msg, sizeof(msg),
           "plugin \"%s\": %s \"%s\" was still running when mcpd exited",
           c->plugin->name, what(c), c->name);
  data = json_object_new_object();
  json_object_object_add(data, "plugin",
                         json_object_new_string(c->plugin->name));
  answer_early(c, JSONRPC_CONNECTION_CLOSED, msg, data);
}

static void deadline_timer_cb(uv_timer_t *t);

/* Arms the exec's timer for its soonest deadline. */
static void deadline_arm(call_exec *e) {
  uint64_t now = uv_now(e->loop), due = e->deadlines->deadline_due;
  uv_timer_start(&e->deadline_timer, deadline_timer_cb,
                 due > now ? due - now : 0, 0);
}

static void deadline_start(mcpd_call *c, uint64_t ms) {
  call_exec *e = c->exec;
  mcpd_call *after = e->deadlines_tail;

  if (ms == 0)
    return;
  c->deadline_ms = ms;
  c->deadline_due = uv_now(e->loop) + ms;
  while (after != NULL && after->deadline_due > c->deadline_due)
    after = after->deadline_prev;
  c->deadline_prev = after;
  c->deadline_next = after != NULL ? after->deadline_next : e->deadlines;
  if (c->deadline_next != NULL)
    c->deadline_next->deadline_prev = c;
  else
    e->deadlines_tail = c;
  if (after != NULL) {
    after->deadline_next = c;
  } else {
    e->deadlines = c;
    deadline_arm(e);
  }
}

/* Takes the call's deadline out of the list.  A timer armed for it may
 * still fire; it then finds nothing due and re-arms. */
static void deadline_stop(mcpd_call *c) {
  call_exec *e = c->exec;
  if (c->deadline_due == 0)
    return;
  if (c->deadline_prev != NULL)
    c->deadline_prev->deadline_next = c->deadline_next;
  else
    e->deadlines = c->deadline_next;
  if (c->deadline_next != NULL)
    c->deadline_next->deadline_prev = c->deadline_prev;
  else
    e->deadlines_tail = c->deadline_prev;
  c->deadline_prev = c->deadline_next = NULL;
  c->deadline_due = 0;
  if (e->deadlines == NULL)
    uv_timer_stop(&e->deadline_timer);
}

static void deadline_timer_cb(uv_timer_t *t) {
  call_exec *e = t->data;
  uint64_t now = uv_now(e->loop);
  mcpd_call *c;

  while ((c = e->deadlines) != NULL && c->deadline_due <= now) {
    deadline_stop(c);
    deadline_passed(c);
  }
  if (e->deadlines != NULL)
    deadline_arm(e);
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
    caps = r->session->client_capabilities;
    text = r->session->roots;
  }
  c->client_caps = client_caps(caps);
  if (text != NULL && (c->roots = strdup(text)) == NULL)
    return -1;
  return 0;
}

/* Finishes `c` on a later loop turn, never from inside the caller (which
 * may be walking the list of requests the finish frees). */
static void finish_later(mcpd_call *c, int status) {
  call_event *ev = new_event(c->exec, complete_run);
  if (ev == NULL)
    return; /* it stays queued and is finished when its turn comes */
  ev->call = c;
  ev->value = status;
  hostq_post(&c->exec->queue, &ev->base);
}

/* --- calls into isolated plugins --------------------------------------- */

static char *host_mprintf(const char *fmt, ...) MCPD_PRINTF(1, 2);
static int do_client_request(
    mcpd_call *c, const char *key, const char *method, json_object *params,
    void (*cb)(void *, json_object *, int, const char *), void *arg);

/* The worker answered (or died): the call ends like any other. */
static void remote_done(void *call, json_object *result, const char *text,
                        size_t len, json_object *error) {
  mcpd_call *c = call;
  c->remote_id = 0;
  if (error != NULL) {
    json_object *code = NULL, *message = NULL, *data = NULL;
    json_object_object_get_ex(error, "code", &code);
    json_object_object_get_ex(error, "message", &message);
    json_object_object_get_ex(error, "data", &data);
    c->fail_code = json_object_is_type(code, json_type_int)
                       ? json_object_get_int(code)
                       : JSONRPC_INTERNAL_ERROR;
    if (c->fail_code == 0)
      c->fail_code = JSONRPC_INTERNAL_ERROR;
    c->fail_message = strdup(json_object_is_type(message, json_type_string)
                                 ? json_object_get_string(message)
                                 : "the plugin's worker failed");
    c->fail_data = json_object_get(data);
  } else {
    c->replacement = json_object_get(result); /* NULL for text alone */
    c->remote_checked = 1;
    /* Checked JSON already: the answer is this text, not the tree
     * serialized again (the tree serves the checks of its shape). */
    if (text != NULL) {
      strbuf_append(&c->remote_text, text, len);
      if (c->remote_text.failed) {
        strbuf_free(&c->remote_text);
        c->fail_code = JSONRPC_INTERNAL_ERROR;
        c->fail_message = strdup("out of memory");
      }
    }
  }
  mark_completed(c);
  call_done(c, MCPD_OK);
}

/* Whether `key` of the client's _meta stays behind: the host's own key
 * (the client cannot speak for the host) and, for a modern client, the
 * envelope, which the host answers for. */
static int meta_stays(const char *key, int modern) {
  return strcmp(key, "io.mcpd/client") == 0 ||
         (modern && strncmp(key, "io.modelcontextprotocol/", 24) == 0);
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
static void remote_start(mcpd_call *c, request *r) {
  static const char *const methods[] = {"tools/call", "resources/read",
                                        "prompts/get", "completion/complete"};
  json_object *caps = r->modern            ? r->client_capabilities
                      : r->session != NULL ? r->session->client_capabilities
                                           : NULL;
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
      if (!meta_stays(key, r->modern))
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
      json_object_object_length(caps) > 0)
    append_member(&params, &first, "capabilities", caps);
  /* The worker speaks the legacy revision to the host: the envelope
   * stays here (the host answers the client), its facts travel in
   * io.mcpd/client, and "modern" has the worker's call refuse requests
   * to the client and answer -32021 itself, as a call here would. */
  if (r->modern) {
    strbuf_puts(&params, first ? "\"modern\":true" : ",\"modern\":true");
    first = 0;
  }
  if (c->roots != NULL) {
    strbuf_puts(&params, first ? "\"roots\":" : ",\"roots\":");
    strbuf_puts(&params, c->roots);
  }
  strbuf_puts(&params, "}}}");
  rc = params.failed ? -1
                     : worker_call(c->plugin, methods[c->kind], params.data,
                                   params.len, c, remote_done, &c->remote_id);
  strbuf_free(&params);
  if (rc != 0) {
    c->fail_code = JSONRPC_INTERNAL_ERROR;
    c->fail_message = host_mprintf("plugin \"%s\" is not running now (its "
                                   "worker is starting or restarting)",
                                   c->plugin->name);
    mark_completed(c);
    call_done(c, MCPD_ERROR);
  }
}

/* The name a worker gave its request (client_request_keyed()), which
 * travels in the params' _meta and must not reach the client: taken out
 * of `params` and returned (free() it), or NULL. */
#define INPUT_KEY_META "io.mcpd/inputKey"
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
  rc = do_client_request(c, key, method, copy, remote_ask_cb, ra);
  free(key);
  if (rc != MCPD_OK) {
    /* Refused here (a capability the client lacks): the worker hears why. */
    worker_answer(
        p, id, NULL,
        jsonrpc_error(NULL, JSONRPC_INVALID_PARAMS, last_error, NULL));
    json_object_put(ra->id);
    plugin_release(p);
    free(ra);
  }
}

static int log_level_of(const char *name) {
  static const char *const names[] = {"debug",   "info",     "notice",
                                      "warning", "error",    "critical",
                                      "alert",   "emergency"};
  for (int i = 0; i < 8; i++)
    if (name != NULL && strcmp(name, names[i]) == 0)
      return i;
  return MCPD_LOG_INFO;
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
    if (c != NULL && (r == NULL || r->cancelled || r->session == NULL))
      return;
    if (e->log_cb != NULL)
      e->log_cb(e->arg, log_level_of(json_object_get_string(level)), p->name,
                text ? text : "", r);
    return;
  }
  if (r == NULL || r->cancelled || r->session == NULL ||
      json_object_deep_copy(params, &copy, NULL) != 0)
    return;
  if (strcmp(method, "notifications/progress") == 0) {
    json_object *token = progress_token(c);
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

void call_start(call_exec *e, request *r, const call_args *a) {
  mcpd_call *c = calloc(1, sizeof(*c));
  /* Values are shared, not copied, when no other thread reads them: the
   * callback runs on the loop, or in a worker process. */
  int inline_cb =
      a->entry->exec == MCPD_EXEC_INLINE || a->entry->owner->isolated;
  json_object *meta = NULL, *client = NULL;
  int ok = 1, rc;

  if (c == NULL) {
    request_fail(r, JSONRPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  c->exec = e;
  c->kind = a->kind;
  c->entry = reg_entry_ref(a->entry);
  c->plugin = a->entry->owner;
  plugin_ref(c->plugin);
  c->role = "user";
  c->modern = r->modern;
  json_object_object_get_ex(r->params, "_meta", &meta);
  if (!json_object_is_type(meta, json_type_object))
    meta = NULL;
  if (e->worker && meta != NULL) {
    json_object *v;
    if (json_object_object_get_ex(meta, "io.mcpd/client", &client) &&
        !json_object_is_type(client, json_type_object))
      client = NULL;
    /* The host serves a modern client: this call follows its rules. */
    if (client != NULL && json_object_object_get_ex(client, "modern", &v) &&
        json_object_get_boolean(v))
      c->modern = 1;
    if ((meta = meta_for_plugin(meta)) == NULL)
      ok = 0;
  } else {
    meta = json_object_get(meta);
  }
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
  /* A private copy: plugin threads look answers up while it runs. */
  if (a->answers != NULL &&
      json_object_deep_copy(a->answers, &c->answers, NULL) != 0)
    ok = 0;
  c->handle = handles_add(c, c->plugin->name);
  if (!ok || c->name == NULL || c->handle == 0 ||
      (a->argument && c->argument == NULL) || (a->value && c->value == NULL)) {
    handles_remove(c->handle);
    call_free(c);
    request_fail(r, JSONRPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  c->req = r;
  r->call = c;
  c->request.size = sizeof(c->request);
  c->request.host = &call_host_api;
  c->request.self = &c->plugin->self;
  c->request.state = c->plugin->state;
  c->request.data = a->entry->data;
  c->request.name = c->name;
  c->request.arguments = c->kind == CALL_COMPLETE ? NULL : c->args;
  c->request.variables = c->variables;
  c->request.meta = c->meta;
  c->last_progress = -1e300;
  c->work.data = c;
  e->in_flight++;
  /* An INLINE callback holds the loop until it returns: no timer can
   * fire before then (the watchdog covers it at exit). */
  if (a->entry->exec != MCPD_EXEC_INLINE && e->opts != NULL)
    deadline_start(
        c, plugin_settings_deadline(e->opts, c->plugin->name,
                                    c->kind == CALL_TOOL ? c->name : NULL));

  if (c->plugin->isolated) {
    remote_start(c, r);
    return;
  }
  switch (a->entry->exec) {
  case MCPD_EXEC_INLINE:
    rc = invoke(c);
    mark_completed(c);
    call_done(c, rc);
    break;
  case MCPD_EXEC_ASYNC:
    rc = invoke(c);
    /* On failure to start, finish now -- unless the plugin already called
     * complete(), whose queued event will finish it. */
    if (rc != MCPD_OK && !mark_completed(c))
      call_done(c, rc);
    break;
  default:
    if (e->pool_cap == 0)
      pool_start(c);
    else
      pool_submit(c);
    break;
  }
}

void call_subscribe(reg_entry *e, const char *uri, int subscribed) {
  plugin *p = e->owner;
  mcpd_request req;

  if (e->remote) {
    worker_subscribe(p, uri, subscribed);
    return;
  }
  if (e->subscribe == NULL)
    return;
  memset(&req, 0, sizeof(req));
  req.size = sizeof(req);
  req.host = &call_host_api;
  req.self = &p->self;
  req.state = p->state;
  req.data = e->data;
  req.name = uri;
  if (e->tpl != NULL)
    req.variables = uritpl_match(e->tpl, uri);
  e->subscribe(&req, subscribed);
  json_object_put(req.variables);
}

/* --- requests to the client -------------------------------------------
 *
 * A plugin's request to its call's client lives on the loop: sent through
 * the session, timed by a timer, linked into the call so that the call's
 * cancellation or end gives up on it.  Its callback runs exactly once,
 * from ask_reply(), whatever ends it. */

typedef struct client_ask {
  call_exec *exec;
  mcpd_call *call;  /* while linked into call->asks */
  session *session; /* where it went, once sent */
  char id[32];
  char *method;
  json_object *params; /* until sent */
  void (*cb)(void *arg, json_object *result, int code, const char *message);
  void *arg;
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
  if (a->call == NULL)
    return;
  for (client_ask **pp = &a->call->asks; *pp; pp = &(*pp)->next)
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
  snprintf(a->id, sizeof(a->id), "%s", id);
  a->session = r->session;
  uv_timer_init(a->exec->loop, &a->timer);
  a->timer.data = a;
  uv_timer_start(&a->timer, ask_timeout, a->exec->request_timeout_ms, 0);
  a->call = c;
  a->next = c->asks;
  c->asks = a;
}

/* Gives up on every request the call still waits for. */
static void asks_abandon(mcpd_call *c, const char *why) {
  while (c->asks != NULL) {
    client_ask *a = c->asks;
    /* Tells the client; ask_reply unlinks it. */
    session_cancel_request(a->session, a->id, JSONRPC_CONNECTION_CLOSED, why);
    if (c->asks == a) /* the session no longer knew it */
      ask_fail(a, JSONRPC_CONNECTION_CLOSED, why);
  }
}

void call_roots_changed(plugin *p) {
  if (p->isolated) {
    worker_roots_changed(p);
    return;
  }
  if (p->roots_cb != NULL && !p->finalizing)
    p->roots_cb(p->roots_arg);
}

void call_cancel(mcpd_call *c) {
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
  /* A plugin thread waiting for the client must not wait in vain. */
  asks_abandon(c, "the call was cancelled");
  /* An isolated plugin's worker is told; past a deadline, it must stop
   * within a grace period or be killed. */
  if (c->remote_id != 0)
    worker_cancel(c->plugin, c->remote_id, c->deadline_passed ? 2000 : 0);
  /* A call still waiting for a worker thread never runs. */
  if (c->pool_waiting) {
    pool_withdraw(c);
    mark_completed(c);
    finish_later(c, MCPD_ERROR);
  }
}

/* Whether `result` has member `key` of type `type`. */
static int has(json_object *result, const char *key, json_type type,
               json_object **out) {
  json_object *v;
  if (!json_object_object_get_ex(result, key, &v) ||
      !json_object_is_type(v, type))
    return 0;
  if (out)
    *out = v;
  return 1;
}

/* Checks the shape of a result a plugin handed over whole: what the
 * client's schema needs at the top, and every item an object. */
static int valid_result(const mcpd_call *c, json_object *result) {
  static const char *const keys[] = {"content", "contents", "messages", NULL};
  json_object *list, *completion;
  size_t n;

  if (!json_object_is_type(result, json_type_object))
    return 0;
  if (c->kind == CALL_COMPLETE)
    return has(result, "completion", json_type_object, &completion) &&
           has(completion, "values", json_type_array, &list) &&
           json_object_array_length(list) <= 100;
  if (!has(result, keys[c->kind], json_type_array, &list))
    return 0;
  n = json_object_array_length(list);
  for (size_t i = 0; i < n; i++) {
    json_object *item = json_object_array_get_idx(list, i);
    if (!json_object_is_type(item, json_type_object))
      return 0;
    if (c->kind == CALL_TOOL && !has(item, "type", json_type_string, NULL))
      return 0;
    if (c->kind == CALL_READ && !has(item, "uri", json_type_string, NULL))
      return 0;
    if (c->kind == CALL_PROMPT &&
        (!has(item, "role", json_type_string, NULL) ||
         !has(item, "content", json_type_object, NULL)))
      return 0;
  }
  return 1;
}

/* valid_result() on a worker's result text (which jsonrpc_skip_value
 * accepted, so it has no whitespace).  0 says "not valid, or not plain
 * enough to tell": then the tree decides. */
static int valid_result_text(const mcpd_call *c, const char *s, size_t len) {
  static const char *const keys[] = {"content", "contents", "messages"};
  const char *end = s + len, *list, *item, *v;
  size_t n = 0;

  if (c->kind == CALL_COMPLETE)
    list = (v = jsonrpc_member(s, end, "completion")) != NULL && *v == '{'
               ? jsonrpc_member(v, end, "values")
               : NULL;
  else
    list = jsonrpc_member(s, end, keys[c->kind]);
  if (list == NULL || *list != '[')
    return 0;
  for (item = list + 1; *item != ']'; item++) {
    if (c->kind != CALL_COMPLETE) {
      if (*item != '{')
        return 0;
      if (c->kind == CALL_TOOL &&
          ((v = jsonrpc_member(item, end, "type")) == NULL || *v != '"'))
        return 0;
      if (c->kind == CALL_READ &&
          ((v = jsonrpc_member(item, end, "uri")) == NULL || *v != '"'))
        return 0;
      if (c->kind == CALL_PROMPT &&
          ((v = jsonrpc_member(item, end, "role")) == NULL || *v != '"' ||
           (v = jsonrpc_member(item, end, "content")) == NULL || *v != '{'))
        return 0;
    }
    n++;
    if ((item = jsonrpc_skip_value(item, end, 2)) == NULL || *item != ',')
      break;
  }
  return item != NULL && *item == ']' && (c->kind != CALL_COMPLETE || n <= 100);
}

/* A worker's result text as a tree, for the checks text cannot do. */
static json_object *parse_remote(const mcpd_call *c) {
  json_tokener *tok = json_tokener_new_ex(JSONRPC_MAX_DEPTH);
  json_object *obj = NULL;
  const char *why;

  if (tok == NULL)
    return NULL;
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  if (jsonrpc_parse(tok, c->remote_text.data, c->remote_text.len, &obj, &why) !=
      0)
    obj = NULL;
  json_tokener_free(tok);
  return obj;
}

/* Checks a tool's structured content against its output schema. */
static int check_output(mcpd_call *c, char *err, size_t errlen) {
  char why[400];
  if (c->entry->output_schema == NULL || c->is_error)
    return 0;
  if (c->structured == NULL) {
    snprintf(err, errlen,
             "tool %s declares an output schema but returned no "
             "structuredContent",
             c->name);
    return -1;
  }
  if (schema_validate(c->entry->output_schema, c->structured, why,
                      sizeof(why)) != 0) {
    snprintf(err, errlen,
             "tool %s returned structuredContent that does not match its "
             "output schema: %s",
             c->name, why);
    return -1;
  }
  return 0;
}

/* The CallToolResult around the content blocks. */
static void tool_result(mcpd_call *c, strbuf *out) {
  const char *text;
  size_t len;

  strbuf_puts(out, "{\"content\":[");
  strbuf_append(out, c->content.data, c->content.len);
  if (c->structured) {
    text = jsonrpc_to_string(c->structured, &len);
    if (c->n_blocks == 0) {
      /* Clients without structured output read the same data as text. */
      strbuf_puts(out, "{\"type\":\"text\",\"text\":");
      strbuf_json_string(out, text, len);
      strbuf_puts(out, "}");
    }
    strbuf_puts(out, "],\"structuredContent\":");
    strbuf_append(out, text, len);
  } else {
    strbuf_puts(out, "]");
  }
  if (c->is_error)
    strbuf_puts(out, ",\"isError\":true");
  strbuf_puts(out, "}");
}

/* The most values one completion result carries (MCP's limit). */
#define COMPLETION_MAX 100

static void completion_result(mcpd_call *c, strbuf *out) {
  size_t sent = c->n_blocks < COMPLETION_MAX ? c->n_blocks : COMPLETION_MAX;
  size_t total = c->total > c->n_blocks ? c->total : c->n_blocks;
  char tail[64];

  /* content holds the first 100 values; n_blocks counts them all. */
  strbuf_puts(out, "{\"completion\":{\"values\":[");
  strbuf_append(out, c->content.data, c->content.len);
  snprintf(tail, sizeof(tail), "],\"total\":%zu,\"hasMore\":%s}}", total,
           c->has_more || total > sent ? "true" : "false");
  strbuf_puts(out, tail);
}

/* Builds the result as JSON text into `out`; returns 0, or -1 with `err`
 * set. */
static int build_text(mcpd_call *c, int status, strbuf *out, char *err,
                      size_t errlen) {
  const char *name = c->name, *text;
  size_t len;

  if (c->bad_result || c->content.failed) {
    snprintf(err, errlen, "%s %s built an invalid result", what(c), name);
    return -1;
  }
  if (!jsonrpc_all_finite(c->structured) ||
      (!c->remote_checked && !jsonrpc_all_finite(c->replacement))) {
    snprintf(err, errlen,
             "%s %s returned a number that is not finite (NaN or "
             "infinity has no JSON form)",
             what(c), name);
    return -1;
  }
  /* A worker's result as text alone: checked as text, or failing that
   * (a shape the check cannot judge) as a tree. */
  if (c->replacement == NULL && c->remote_text.len > 0 &&
      !valid_result_text(c, c->remote_text.data, c->remote_text.len) &&
      (c->replacement = parse_remote(c)) == NULL) {
    snprintf(err, errlen, "%s %s returned a malformed result", what(c), name);
    return -1;
  }
  if (c->replacement || c->remote_text.len > 0) {
    if (c->replacement != NULL && !valid_result(c, c->replacement)) {
      snprintf(err, errlen, "%s %s returned a malformed result", what(c), name);
      return -1;
    }
    if (c->remote_text.len > 0) {
      *out = c->remote_text;
      memset(&c->remote_text, 0, sizeof(c->remote_text));
      return 0;
    }
    text = jsonrpc_to_string(c->replacement, &len);
    strbuf_append(out, text, len);
    return 0;
  }
  if (status != MCPD_OK && c->kind != CALL_TOOL) {
    snprintf(err, errlen, "%s %s failed", what(c), name);
    return -1;
  }
  switch (c->kind) {
  case CALL_TOOL:
    if (c->n_blocks == 0 && c->structured == NULL && !c->is_error) {
      snprintf(err, errlen,
               status == MCPD_OK ? "tool %s returned no result"
                                 : "tool %s failed without a result",
               name);
      return -1;
    }
    if (check_output(c, err, errlen) != 0)
      return -1;
    tool_result(c, out);
    break;
  case CALL_READ:
    if (c->n_blocks == 0) {
      snprintf(err, errlen, "read of %s returned no contents", name);
      return -1;
    }
    strbuf_puts(out, "{\"contents\":[");
    strbuf_append(out, c->content.data, c->content.len);
    strbuf_puts(out, "]}");
    break;
  case CALL_PROMPT:
    strbuf_puts(out, "{");
    if (c->entry->description) {
      strbuf_puts(out, "\"description\":");
      strbuf_json_string(out, c->entry->description,
                         strlen(c->entry->description));
      strbuf_puts(out, ",");
    }
    strbuf_puts(out, "\"messages\":[");
    strbuf_append(out, c->content.data, c->content.len);
    strbuf_puts(out, "]}");
    break;
  case CALL_COMPLETE:
    completion_result(c, out);
    break;
  }
  return out->failed ? -1 : 0;
}

/* Answers the JSON-RPC error a callback chose with fail(). */
static void answer_failure(mcpd_call *c, request *r) {
  json_object *data = NULL;
  const char *msg = c->fail_message ? c->fail_message : "failed";
  char *fixed = NULL;
  size_t len;

  if (c->fail_data != NULL) {
    data = json_object_get(c->fail_data);
  } else if (c->fail_code == MCPD_ERR_NOT_FOUND && c->kind == CALL_READ) {
    data = json_object_new_object();
    json_object_object_add(data, "uri", json_object_new_string(c->name));
  }
  /* 2026-07-28 answers a missing resource with invalid params (its data
   * still names the URI); -32002 is never sent there. */
  if (c->modern && c->fail_code == MCPD_ERR_NOT_FOUND)
    c->fail_code = JSONRPC_INVALID_PARAMS;
  /* The message is plugin text: make it valid UTF-8 like any result. */
  if (!utf8_valid(msg, strlen(msg)) &&
      (fixed = utf8_repair(msg, strlen(msg), &len)) != NULL)
    msg = fixed;
  request_fail(r, c->fail_code, msg, data);
  free(fixed);
}

/* Whether the call ended in failure: an error answer, a failed status or
 * a tool result with isError. */
static int call_failed(mcpd_call *c, int status) {
  json_object *v;
  if (c->fail_code != 0 || status != MCPD_OK || c->is_error)
    return 1;
  if (c->replacement == NULL && c->remote_text.len > 0)
    c->replacement = parse_remote(c);
  return c->replacement != NULL &&
         json_object_object_get_ex(c->replacement, "isError", &v) &&
         json_object_get_boolean(v);
}

/* Answers -32021 for a modern call that failed after it asked for what
 * its request did not declare: the client can retry declaring it.  A call
 * that got by without (a fallback) keeps its own answer. */
static void answer_missing(mcpd_call *c, request *r) {
  json_object *data = json_object_new_object();
  json_object *caps = json_object_new_object();
  char text[600];

  if (c->missing_caps & (CLIENT_SAMPLING | CLIENT_SAMPLING_TOOLS)) {
    json_object *v = json_object_new_object();
    if (c->missing_caps & CLIENT_SAMPLING_TOOLS)
      json_object_object_add(v, "tools", json_object_new_object());
    json_object_object_add(caps, "sampling", v);
  }
  if (c->missing_caps & (CLIENT_ELICIT_FORM | CLIENT_ELICIT_URL)) {
    json_object *v = json_object_new_object();
    if (c->missing_caps & CLIENT_ELICIT_FORM)
      json_object_object_add(v, "form", json_object_new_object());
    if (c->missing_caps & CLIENT_ELICIT_URL)
      json_object_object_add(v, "url", json_object_new_object());
    json_object_object_add(caps, "elicitation", v);
  }
  if (c->missing_caps & CLIENT_ROOTS)
    json_object_object_add(caps, "roots", json_object_new_object());
  json_object_object_add(data, "requiredCapabilities", caps);
  snprintf(text, sizeof(text),
           "Missing client capability: %s %.200s needs %s, which this "
           "request's clientCapabilities do not declare",
           what(c), c->name,
           json_object_to_json_string_ext(caps, JSON_C_TO_STRING_PLAIN));
  request_fail(r, SESSION_ERR_MISSING_CAPABILITY, text, data);
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

  if (c->used != NULL) {
    json_object_object_foreach(c->used, key, unused) {
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
  json_object_object_add(result, "inputRequests", json_object_get(c->inputs));
  json_object_object_add(result, "requestState", json_object_new_string(state));
  free(state);
  /* An interim result: no cache hints. */
  r->result_type = "input_required";
  r->cache_scope = NULL;
  request_reply(r, result);
}

static void call_finish(mcpd_call *c, int status) {
  call_exec *e = c->exec;
  request *r = c->req;

  /* From here on the plugin's handle is stale: a late complete() or
   * result_*() is refused instead of touching freed memory. */
  handles_remove(c->handle);
  asks_abandon(c, "the call finished");
  deadline_stop(c);

  if (r != NULL) {
    char err[600];
    strbuf out = {0};
    r->call = NULL;
    /* What the client can answer is asked first: a capability it lacks
     * is named (-32021) when nothing else is left to ask. */
    if (c->inputs != NULL) {
      answer_input_required(c, r);
    } else if (c->modern && c->missing_caps != 0 && call_failed(c, status)) {
      answer_missing(c, r);
    } else if (c->fail_code != 0) {
      answer_failure(c, r);
    } else if (build_result(c, status, &out, err, sizeof(err)) == 0) {
      request_reply_raw(r, out.data, out.len);
      strbuf_free(&out);
    } else {
      strbuf_free(&out);
      if (!r->cancelled)
        log_warn("plugin \"%s\": %s", c->plugin->name, err);
      request_fail(r, JSONRPC_INTERNAL_ERROR, err, NULL);
    }
  }
  call_free(c);
  if (--e->in_flight == 0 && e->drained_cb != NULL)
    e->drained_cb(e->arg);
}

/* --- the host table ----------------------------------------------------- */

static char *host_vmprintf(const char *fmt, va_list ap) {
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

static char *host_mprintf(const char *fmt, ...) {
  va_list ap;
  char *s;
  va_start(ap, fmt);
  s = host_vmprintf(fmt, ap);
  va_end(ap);
  return s;
}

static void host_free(void *p) {
  free(p);
}

static void log_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  call_exec *e = ev->exec;
  request *r = ev->call ? ev->call->req : NULL;
  /* A call's line goes to its client while the request is live. */
  if (e->log_cb != NULL &&
      (ev->call == NULL || (r != NULL && !r->cancelled && r->session != NULL)))
    e->log_cb(e->arg, ev->value, ev->name, ev->text, r);
  free_event(ev);
}

static long long now_ms(void) {
  return (long long)(uv_hrtime() / 1000000);
}

/* Log lines one plugin may send to clients per second; more are dropped
 * and counted, so a chatty plugin cannot flood the client (or the queue
 * ahead of everyone's responses).  stderr gets every line. */
#define LOG_LINES_PER_SECOND 200

/* Whether `p` may send one more line now.  On the first line of a new
 * second, *dropped says how many the last window dropped.  Lock-free and
 * approximate at the window's edge, which is all a rate limit needs. */
static int log_allowed(plugin *p, long *dropped) {
  long long now = now_ms(), start = atomic_load(&p->log_window_ms);

  *dropped = 0;
  if (now - start >= 1000 &&
      atomic_compare_exchange_strong(&p->log_window_ms, &start, now)) {
    atomic_store(&p->log_sent, 0);
    *dropped = atomic_exchange(&p->log_dropped, 0);
  }
  if (atomic_fetch_add(&p->log_sent, 1) < LOG_LINES_PER_SECOND)
    return 1;
  atomic_fetch_add(&p->log_dropped, 1);
  return 0;
}

static void post_log(call_exec *e, mcpd_call *c, int level, const char *logger,
                     char *text);

/* Queues a plugin's log line for the sessions that asked for its level
 * (for the client of call `c` alone, if not NULL); consumes `text`.  The
 * level check here is a hint; sessions check their own level on the
 * loop. */
static void to_clients(plugin *p, mcpd_call *c, int level, char *text) {
  call_exec *e = p->host_data;
  long dropped;

  if (level < atomic_load(&e->log_floor)) {
    free(text);
    return;
  }
  if (!log_allowed(p, &dropped)) {
    free(text);
    return;
  }
  if (dropped > 0) {
    char *note = host_mprintf("%ld log messages dropped: more than %d "
                              "a second",
                              dropped, LOG_LINES_PER_SECOND);
    log_warn("plugin \"%s\": %ld log messages not sent to clients (more "
             "than %d a second)",
             p->name, dropped, LOG_LINES_PER_SECOND);
    if (note != NULL)
      post_log(e, NULL, MCPD_LOG_WARNING, p->name, note);
  }
  post_log(e, c, level, p->name, text);
}

/* Hands one line to the loop for the sessions; consumes `text`.  A line
 * of call `c` is queued while `c` runs, so it is handled before the
 * call's finish, which waits behind it. */
static void post_log(call_exec *e, mcpd_call *c, int level, const char *logger,
                     char *text) {
  call_event *ev = new_event(e, log_run);
  if (ev == NULL) {
    free(text);
    return;
  }
  ev->call = c;
  ev->value = level;
  ev->text = text;
  ev->name = strdup(logger);
  if (ev->name == NULL) {
    free_event(ev);
    return;
  }
  hostq_post(&e->queue, &ev->base);
}

static void host_log(mcpd_self *self, mcpd_log_level level, const char *fmt,
                     ...) {
  plugin *p = self ? self->plugin : NULL;
  const char *name = p ? p->name : "?";
  log_level local;
  va_list ap;
  char *text;

  va_start(ap, fmt);
  text = host_vmprintf(fmt, ap);
  va_end(ap);
  if (text == NULL)
    return;
  if (level <= MCPD_LOG_DEBUG)
    local = LOG_LEVEL_DEBUG;
  else if (level <= MCPD_LOG_NOTICE)
    local = LOG_LEVEL_INFO;
  else if (level == MCPD_LOG_WARNING)
    local = LOG_LEVEL_WARN;
  else
    local = LOG_LEVEL_ERROR;
  log_msg(local, "plugin \"%s\": %s", name, text);
  if (p != NULL) {
    /* Only a call of this plugin still running counts: a line logged
     * after complete() may be handled after the call is gone. */
    mcpd_call *c = running;
    if (c != NULL && (c->plugin != p || atomic_load(&c->completed)))
      c = NULL;
    to_clients(p, c, (int)level, text);
  } else {
    free(text);
  }
}

/* Whether results may still be built on the call: not once it completed
 * (its answer may already be on its way). */
static int usable(mcpd_call *call) {
  if (call != NULL && !atomic_load(&call->completed))
    return 1;
  if (call != NULL)
    log_error("plugin \"%s\": a result built after the call completed; "
              "ignored (a plugin bug)",
              call->plugin->name);
  set_error("the call has already completed");
  return 0;
}

/* Refuses a builder that has no meaning for the call's kind: the result
 * is then an internal error, and last_error() says why. */
static int refuse(mcpd_call *call, const char *builder) {
  static const char *const kinds[] = {"tool call", "resource read",
                                      "prompt get", "completion"};
  log_error("plugin \"%s\": %s() on a %s (%s %s); the call fails",
            call->plugin->name, builder, kinds[call->kind], what(call),
            call->name);
  set_error("%s() cannot be used on a %s", builder, kinds[call->kind]);
  call->bad_result = 1;
  return MCPD_ERROR;
}

/* Starts the next block in the comma-joined content text: a prompt's
 * block is the content of a message with the current role. */
static void begin_block(mcpd_call *call) {
  if (call->n_blocks++ > 0)
    strbuf_append(&call->content, ",", 1);
  if (call->kind == CALL_PROMPT) {
    strbuf_puts(&call->content, "{\"role\":\"");
    strbuf_puts(&call->content, call->role);
    strbuf_puts(&call->content, "\",\"content\":");
  }
}

static void end_block(mcpd_call *call) {
  if (call->kind == CALL_PROMPT)
    strbuf_append(&call->content, "}", 1);
}

/* Rarer block kinds are built with json-c and appended as text. */
static int add_block(mcpd_call *call, json_object *block) {
  size_t len;
  const char *text = jsonrpc_to_string(block, &len);
  begin_block(call);
  strbuf_append(&call->content, text, len);
  end_block(call);
  json_object_put(block);
  return call->content.failed ? MCPD_ERROR : MCPD_OK;
}

static json_object *new_block(const char *type) {
  json_object *block = json_object_new_object();
  json_object_object_add(block, "type", json_object_new_string(type));
  return block;
}

/* One item of a read's contents: the URI asked for unless the plugin
 * names another, the entry's MIME type unless it names one. */
static int read_item(mcpd_call *call, const char *uri, const char *mime_type,
                     const char *key, const char *value, size_t len) {
  if (uri == NULL)
    uri = call->name;
  if (mime_type == NULL)
    mime_type = call->entry->mime_type;
  begin_block(call);
  strbuf_puts(&call->content, "{\"uri\":");
  strbuf_json_string(&call->content, uri, strlen(uri));
  if (mime_type != NULL) {
    strbuf_puts(&call->content, ",\"mimeType\":");
    strbuf_json_string(&call->content, mime_type, strlen(mime_type));
  }
  strbuf_puts(&call->content, ",\"");
  strbuf_puts(&call->content, key);
  strbuf_puts(&call->content, "\":");
  strbuf_json_string(&call->content, value, len);
  strbuf_append(&call->content, "}", 1);
  return call->content.failed ? MCPD_ERROR : MCPD_OK;
}

static int do_result_text_len(mcpd_call *call, const char *text, size_t len) {
  if (!usable(call) || text == NULL || len > INT32_MAX)
    return MCPD_ERROR;
  if (call->kind == CALL_COMPLETE)
    return refuse(call, "result_text");
  if (call->kind == CALL_READ)
    return read_item(call, NULL, NULL, "text", text, len);
  begin_block(call);
  strbuf_puts(&call->content, "{\"type\":\"text\",\"text\":");
  strbuf_json_string(&call->content, text, len);
  strbuf_append(&call->content, "}", 1);
  end_block(call);
  return call->content.failed ? MCPD_ERROR : MCPD_OK;
}

static int do_result_text(mcpd_call *call, const char *text) {
  if (text == NULL)
    return MCPD_ERROR;
  return do_result_text_len(call, text, strlen(text));
}

/* Content blocks only tools and prompts have. */
static int content_only(mcpd_call *call, const char *builder) {
  if (call->kind == CALL_READ || call->kind == CALL_COMPLETE)
    return refuse(call, builder);
  return MCPD_OK;
}

static int media(mcpd_call *call, const char *type, const char *data,
                 const char *mime_type) {
  json_object *block;
  if (!usable(call) || data == NULL || mime_type == NULL)
    return MCPD_ERROR;
  if (content_only(call, strcmp(type, "image") == 0 ? "result_image"
                                                    : "result_audio") != 0)
    return MCPD_ERROR;
  block = new_block(type);
  json_object_object_add(block, "data", json_object_new_string(data));
  json_object_object_add(block, "mimeType", json_object_new_string(mime_type));
  return add_block(call, block);
}

static int do_result_image(mcpd_call *call, const char *data,
                           const char *mime_type) {
  return media(call, "image", data, mime_type);
}

static int do_result_audio(mcpd_call *call, const char *data,
                           const char *mime_type) {
  return media(call, "audio", data, mime_type);
}

static int do_result_resource_link(mcpd_call *call, const char *uri,
                                   const char *name, const char *description,
                                   const char *mime_type) {
  json_object *block;
  if (!usable(call) || uri == NULL || name == NULL)
    return MCPD_ERROR;
  if (content_only(call, "result_resource_link") != 0)
    return MCPD_ERROR;
  block = new_block("resource_link");
  json_object_object_add(block, "uri", json_object_new_string(uri));
  json_object_object_add(block, "name", json_object_new_string(name));
  if (description)
    json_object_object_add(block, "description",
                           json_object_new_string(description));
  if (mime_type)
    json_object_object_add(block, "mimeType",
                           json_object_new_string(mime_type));
  return add_block(call, block);
}

static int embedded(mcpd_call *call, const char *uri, const char *mime_type,
                    const char *key, const char *value) {
  json_object *block, *resource;
  if (!usable(call) || value == NULL)
    return MCPD_ERROR;
  if (call->kind == CALL_READ)
    return read_item(call, uri, mime_type, key, value, strlen(value));
  if (call->kind == CALL_COMPLETE)
    return refuse(call, strcmp(key, "text") == 0 ? "result_resource_text"
                                                 : "result_resource_blob");
  if (uri == NULL)
    return MCPD_ERROR;
  resource = json_object_new_object();
  json_object_object_add(resource, "uri", json_object_new_string(uri));
  if (mime_type)
    json_object_object_add(resource, "mimeType",
                           json_object_new_string(mime_type));
  json_object_object_add(resource, key, json_object_new_string(value));
  block = new_block("resource");
  json_object_object_add(block, "resource", resource);
  return add_block(call, block);
}

static int do_result_resource_text(mcpd_call *call, const char *uri,
                                   const char *mime_type, const char *text) {
  return embedded(call, uri, mime_type, "text", text);
}

static int do_result_resource_blob(mcpd_call *call, const char *uri,
                                   const char *mime_type, const char *blob) {
  return embedded(call, uri, mime_type, "blob", blob);
}

static int do_result_structured(mcpd_call *call, json_object *value) {
  if (!usable(call)) {
    json_object_put(value);
    return MCPD_ERROR;
  }
  if (call->kind != CALL_TOOL) {
    json_object_put(value);
    return refuse(call, "result_structured");
  }
  if (!json_object_is_type(value, json_type_object)) {
    json_object_put(value);
    call->bad_result = 1;
    return MCPD_ERROR;
  }
  json_object_put(call->structured);
  call->structured = value;
  return MCPD_OK;
}

/* A formatted text block; marks the result an error when asked. */
static int vtext(mcpd_call *call, int is_error, const char *fmt, va_list ap) {
  char *text;
  int rc;

  if (!usable(call) || fmt == NULL)
    return MCPD_ERROR;
  text = host_vmprintf(fmt, ap);
  if (text == NULL)
    return MCPD_ERROR;
  if (is_error && call->kind != CALL_TOOL) {
    /* Only tool results can carry an error the model reads; elsewhere it
     * is fail(), and like fail() the last one decides. */
    free(call->fail_message);
    call->fail_code = MCPD_ERR_INTERNAL;
    call->fail_message = text;
    return MCPD_OK;
  }
  if (is_error)
    call->is_error = 1;
  rc = do_result_text(call, text);
  free(text);
  return rc;
}

static const char *do_call_tool_name(mcpd_call *call) {
  return call ? call->name : NULL;
}

static int do_result_json(mcpd_call *call, json_object *result) {
  if (!usable(call)) {
    json_object_put(result);
    return MCPD_ERROR;
  }
  json_object_put(call->replacement);
  call->replacement = result;
  return MCPD_OK;
}

static int do_cancelled(mcpd_call *call) {
  return call != NULL && atomic_load(&call->cancelled);
}

static void progress_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  request *r = ev->call->req;
  if (r != NULL && !r->cancelled && r->session != NULL) {
    session_notify_related(r->session, r, "notifications/progress", ev->msg);
    ev->msg = NULL;
  }
  free_event(ev);
}

static int do_progress(mcpd_call *call, double progress, double total,
                       const char *message) {
  json_object *params, *token;
  call_event *ev;

  if (!usable(call))
    return MCPD_ERROR;
  /* Checked with or without a token, so the bug shows either way. */
  if (!isfinite(progress) || !(progress > call->last_progress)) {
    set_error("progress: %g does not increase on %g", progress,
              call->last_progress);
    return MCPD_ERROR; /* progress MUST increase */
  }
  call->last_progress = progress;
  if ((token = progress_token(call)) == NULL)
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
  ev = new_event(call->exec, progress_run);
  if (ev == NULL) {
    json_object_put(params);
    return MCPD_ERROR;
  }
  ev->call = call;
  ev->msg = params;
  hostq_post(&call->exec->queue, &ev->base);
  return MCPD_OK;
}

static mcpd_self *do_call_self(mcpd_call *call) {
  return call ? &call->plugin->self : NULL;
}

static void add_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  char err[400];
  loader_add(ev->plugin, ev->entry, err, sizeof(err));
  plugin_release(ev->plugin);
  free_event(ev);
}

static void remove_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  loader_remove(ev->plugin, (reg_kind)ev->kind, ev->name);
  plugin_release(ev->plugin);
  free_event(ev);
}

/* Registers a run-time entry built (and so validated) by the caller, or
 * NULL when it was refused with `err`: at once on the loop, else on the
 * loop's next turn. */
static int add_entry(plugin *p, reg_entry *e, const char *what,
                     const char *err) {
  call_exec *x = p->host_data;
  char why[400];
  call_event *ev;

  if (e == NULL) {
    log_error("plugin \"%s\": %s refused: %s", p->name, what, err);
    set_error("%s", err);
    return MCPD_ERROR;
  }
  if (hostq_on_loop(&x->queue)) {
    if (loader_add(p, e, why, sizeof(why)) == 0)
      return MCPD_OK;
    set_error("%s", why);
    return MCPD_ERROR;
  }
  ev = new_event(x, add_run);
  if (ev == NULL) {
    reg_entry_release(e);
    set_error("out of memory");
    return MCPD_ERROR;
  }
  plugin_ref(p);
  ev->plugin = p;
  ev->entry = e;
  hostq_post(&x->queue, &ev->base);
  return MCPD_OK;
}

static int remove_entry(mcpd_self *self, reg_kind kind, const char *key) {
  plugin *p = self ? self->plugin : NULL;
  call_exec *x;
  call_event *ev;

  if (p == NULL || key == NULL) {
    set_error("remove: self and the key must not be NULL");
    return MCPD_ERROR;
  }
  x = p->host_data;
  if (hostq_on_loop(&x->queue)) {
    if (loader_remove(p, kind, key) == 0)
      return MCPD_OK;
    set_error("plugin \"%s\" offers no %s \"%s\"", p->name, reg_kind_name(kind),
              key);
    return MCPD_ERROR;
  }
  ev = new_event(x, remove_run);
  if (ev == NULL || (ev->name = strdup(key)) == NULL) {
    if (ev != NULL)
      free_event(ev);
    set_error("out of memory");
    return MCPD_ERROR;
  }
  plugin_ref(p);
  ev->plugin = p;
  ev->kind = (int)kind;
  hostq_post(&x->queue, &ev->base);
  return MCPD_OK;
}

static plugin *self_plugin(mcpd_self *self, const void *def, const char *fn) {
  if (self == NULL || self->plugin == NULL || def == NULL) {
    set_error("%s: self and the entry must not be NULL", fn);
    return NULL;
  }
  return self->plugin;
}

static int host_add_tool(mcpd_self *self, const mcpd_tool *def) {
  plugin *p = self_plugin(self, def, "add_tool");
  mcpd_tool entry;
  char err[400];
  if (p == NULL)
    return MCPD_ERROR;
  reg_element(&entry, sizeof(entry), def, p->desc->tool_size, 0);
  return add_entry(p, reg_tool_new(&entry, p, err, sizeof(err)), "add_tool",
                   err);
}

static int host_remove_tool(mcpd_self *self, const char *name) {
  return remove_entry(self, REG_TOOL, name);
}

static int host_add_resource(mcpd_self *self, const mcpd_resource *def) {
  plugin *p = self_plugin(self, def, "add_resource");
  mcpd_resource entry;
  char err[400];
  if (p == NULL)
    return MCPD_ERROR;
  reg_element(&entry, sizeof(entry), def, p->desc->resource_size, 0);
  return add_entry(p, reg_resource_new(&entry, p, err, sizeof(err)),
                   "add_resource", err);
}

static int host_remove_resource(mcpd_self *self, const char *uri) {
  return remove_entry(self, REG_RESOURCE, uri);
}

static int host_add_resource_template(mcpd_self *self,
                                      const mcpd_resource_template *def) {
  plugin *p = self_plugin(self, def, "add_resource_template");
  mcpd_resource_template entry;
  char err[400];
  if (p == NULL)
    return MCPD_ERROR;
  reg_element(&entry, sizeof(entry), def, p->desc->resource_template_size, 0);
  return add_entry(p, reg_template_new(&entry, p, err, sizeof(err)),
                   "add_resource_template", err);
}

static int host_remove_resource_template(mcpd_self *self,
                                         const char *uri_template) {
  return remove_entry(self, REG_TEMPLATE, uri_template);
}

static int host_add_prompt(mcpd_self *self, const mcpd_prompt *def) {
  plugin *p = self_plugin(self, def, "add_prompt");
  mcpd_prompt entry;
  char err[400];
  if (p == NULL)
    return MCPD_ERROR;
  reg_element(&entry, sizeof(entry), def, p->desc->prompt_size, 0);
  return add_entry(p,
                   reg_prompt_new(&entry, p->desc->prompt_argument_size, p, err,
                                  sizeof(err)),
                   "add_prompt", err);
}

static int host_remove_prompt(mcpd_self *self, const char *name) {
  return remove_entry(self, REG_PROMPT, name);
}

static void updated_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  plugin *p = ev->plugin;
  /* From here on a new report of the URI queues a new notification. */
  uv_mutex_lock(&p->updates_lock);
  lh_table_delete(p->updates_pending, ev->name);
  uv_mutex_unlock(&p->updates_lock);
  if (ev->exec->updated_cb != NULL)
    ev->exec->updated_cb(ev->exec->arg, ev->name);
  plugin_release(p);
  free_event(ev);
}

static int host_resource_updated(mcpd_self *self, const char *uri) {
  plugin *p = self ? self->plugin : NULL;
  call_event *ev;

  if (p == NULL || uri == NULL || !registry_valid_uri(uri)) {
    set_error("resource_updated: self must not be NULL and uri must be an "
              "absolute URI");
    return MCPD_ERROR;
  }
  if (p->updates_pending == NULL) {
    set_error("out of memory");
    return MCPD_ERROR;
  }
  /* A change already queued for the URI covers this one too: a plugin
   * reporting in a loop queues one notification per URI, not one per
   * report. */
  uv_mutex_lock(&p->updates_lock);
  if (lh_table_lookup_entry(p->updates_pending, uri) != NULL) {
    uv_mutex_unlock(&p->updates_lock);
    return MCPD_OK;
  }
  ev = new_event(p->host_data, updated_run);
  if (ev == NULL || (ev->name = strdup(uri)) == NULL) {
    uv_mutex_unlock(&p->updates_lock);
    if (ev != NULL)
      free_event(ev);
    set_error("out of memory");
    return MCPD_ERROR;
  }
  {
    char *key = strdup(uri);
    if (key == NULL || lh_table_insert(p->updates_pending, key, NULL) != 0)
      free(key); /* not coalesced, still sent */
  }
  plugin_ref(p);
  ev->plugin = p;
  hostq_post(&ev->exec->queue, &ev->base);
  uv_mutex_unlock(&p->updates_lock);
  return MCPD_OK;
}

static int do_prompt_role(mcpd_call *call, const char *role) {
  if (!usable(call))
    return MCPD_ERROR;
  if (call->kind != CALL_PROMPT)
    return refuse(call, "prompt_role");
  if (role != NULL && strcmp(role, "user") == 0)
    call->role = "user";
  else if (role != NULL && strcmp(role, "assistant") == 0)
    call->role = "assistant";
  else {
    set_error("prompt_role: the role must be \"user\" or \"assistant\"");
    return MCPD_ERROR;
  }
  return MCPD_OK;
}

static int do_completion_value(mcpd_call *call, const char *value) {
  if (!usable(call) || value == NULL)
    return MCPD_ERROR;
  if (call->kind != CALL_COMPLETE)
    return refuse(call, "completion_value");
  /* Only the first COMPLETION_MAX are kept; the rest are counted. */
  if (call->n_blocks++ < COMPLETION_MAX) {
    if (call->n_blocks > 1)
      strbuf_append(&call->content, ",", 1);
    strbuf_json_string(&call->content, value, strlen(value));
  }
  return call->content.failed ? MCPD_ERROR : MCPD_OK;
}

static int do_completion_total(mcpd_call *call, size_t total, int has_more) {
  if (!usable(call))
    return MCPD_ERROR;
  if (call->kind != CALL_COMPLETE)
    return refuse(call, "completion_total");
  call->total = total;
  call->has_more = has_more != 0;
  return MCPD_OK;
}

static int do_fail(mcpd_call *call, int code, const char *fmt, va_list ap) {
  char *text;
  if (!usable(call) || fmt == NULL)
    return MCPD_ERROR;
  if (code != MCPD_ERR_NOT_FOUND && code != MCPD_ERR_INVALID_PARAMS &&
      code != MCPD_ERR_INTERNAL) {
    set_error("fail: %d is not one of the MCPD_ERR_* codes", code);
    return MCPD_ERROR;
  }
  if ((text = host_vmprintf(fmt, ap)) == NULL)
    return MCPD_ERROR;
  free(call->fail_message);
  call->fail_code = code;
  call->fail_message = text;
  return MCPD_OK;
}

/* --- what plugins call: handles in, checked, then the work above ------- */

/* Resolves a plugin's call handle with its slot locked, so the call cannot
 * finish meanwhile; a stale or bogus handle is refused with one line. */
static mcpd_call *enter(mcpd_call *h, handle_slot **slot, const char *what) {
  char owner[HANDLES_OWNER_MAX + 1];
  mcpd_call *c = handles_enter((uintptr_t)h, slot, owner);
  if (c == NULL) {
    log_error("plugin \"%s\": %s() on a call that has already finished; "
              "ignored (a plugin bug)",
              owner[0] != '\0' ? owner : "?", what);
    set_error("%s: the call has already finished", what);
  }
  return c;
}

#define CALL_OR(h, what, fail)                                                 \
  handle_slot *slot;                                                           \
  mcpd_call *c = enter(h, &slot, what);                                        \
  int rc;                                                                      \
  if (c == NULL) {                                                             \
    fail;                                                                      \
    return MCPD_ERROR;                                                         \
  }

static int host_result_text(mcpd_call *h, const char *text) {
  CALL_OR(h, "result_text", (void)0);
  rc = do_result_text(c, text);
  handles_leave(slot);
  return rc;
}

static int host_result_text_len(mcpd_call *h, const char *text, size_t len) {
  CALL_OR(h, "result_text_len", (void)0);
  rc = do_result_text_len(c, text, len);
  handles_leave(slot);
  return rc;
}

static int host_result_image(mcpd_call *h, const char *data,
                             const char *mime_type) {
  CALL_OR(h, "result_image", (void)0);
  rc = do_result_image(c, data, mime_type);
  handles_leave(slot);
  return rc;
}

static int host_result_audio(mcpd_call *h, const char *data,
                             const char *mime_type) {
  CALL_OR(h, "result_audio", (void)0);
  rc = do_result_audio(c, data, mime_type);
  handles_leave(slot);
  return rc;
}

static int host_result_resource_link(mcpd_call *h, const char *uri,
                                     const char *name, const char *description,
                                     const char *mime_type) {
  CALL_OR(h, "result_resource_link", (void)0);
  rc = do_result_resource_link(c, uri, name, description, mime_type);
  handles_leave(slot);
  return rc;
}

static int host_result_resource_text(mcpd_call *h, const char *uri,
                                     const char *mime_type, const char *text) {
  CALL_OR(h, "result_resource_text", (void)0);
  rc = do_result_resource_text(c, uri, mime_type, text);
  handles_leave(slot);
  return rc;
}

static int host_result_resource_blob(mcpd_call *h, const char *uri,
                                     const char *mime_type, const char *blob) {
  CALL_OR(h, "result_resource_blob", (void)0);
  rc = do_result_resource_blob(c, uri, mime_type, blob);
  handles_leave(slot);
  return rc;
}

static int host_result_structured(mcpd_call *h, json_object *value) {
  CALL_OR(h, "result_structured", json_object_put(value));
  rc = do_result_structured(c, value);
  handles_leave(slot);
  return rc;
}

static int host_result_json(mcpd_call *h, json_object *result) {
  CALL_OR(h, "result_json", json_object_put(result));
  rc = do_result_json(c, result);
  handles_leave(slot);
  return rc;
}

static int host_result_error(mcpd_call *h, const char *fmt, ...) {
  va_list ap;
  CALL_OR(h, "result_error", (void)0);
  va_start(ap, fmt);
  rc = vtext(c, 1, fmt, ap);
  va_end(ap);
  handles_leave(slot);
  return rc;
}

static int host_result_textf(mcpd_call *h, const char *fmt, ...) {
  va_list ap;
  CALL_OR(h, "result_textf", (void)0);
  va_start(ap, fmt);
  rc = vtext(c, 0, fmt, ap);
  va_end(ap);
  handles_leave(slot);
  return rc;
}

static int host_progress(mcpd_call *h, double progress, double total,
                         const char *message) {
  CALL_OR(h, "progress", (void)0);
  rc = do_progress(c, progress, total, message);
  handles_leave(slot);
  return rc;
}

static int host_complete(mcpd_call *h, int status) {
  call_event *ev;
  CALL_OR(h, "complete", (void)0);
  if (c->entry->exec != MCPD_EXEC_ASYNC || atomic_exchange(&c->completed, 1)) {
    log_error("plugin \"%s\": complete() refused: the call is not "
              "asynchronous or was already completed",
              c->plugin->name);
    set_error("complete: the call is not asynchronous or was already "
              "completed");
    handles_leave(slot);
    return MCPD_ERROR;
  }
  handles_leave(slot);
  /* Completed: no cancel callback starts from now on.  Wait out one the
   * loop may be running (it may call host functions, so not with the slot
   * locked).  The call cannot go away meanwhile: only the event below
   * finishes it. */
  wait_cancel_cb(c);
  ev = new_event(c->exec, complete_run);
  if (ev == NULL)
    abort(); /* A lost completion would hang the client forever. */
  ev->call = c;
  ev->value = status;
  hostq_post(&c->exec->queue, &ev->base);
  (void)rc;
  return MCPD_OK;
}

/* A finished call reads as cancelled: its work is no longer wanted. */
static int host_cancelled(mcpd_call *h) {
  handle_slot *slot;
  char owner[HANDLES_OWNER_MAX + 1];
  mcpd_call *c = handles_enter((uintptr_t)h, &slot, owner);
  int rc = 1;
  if (c != NULL) {
    rc = do_cancelled(c);
    handles_leave(slot);
  }
  return rc;
}

static mcpd_self *host_call_self(mcpd_call *h) {
  handle_slot *slot;
  mcpd_call *c = enter(h, &slot, "call_self");
  mcpd_self *self;
  if (c == NULL)
    return NULL;
  self = do_call_self(c);
  handles_leave(slot);
  return self;
}

static const char *host_call_tool_name(mcpd_call *h) {
  handle_slot *slot;
  mcpd_call *c = enter(h, &slot, "call_tool_name");
  const char *name;
  if (c == NULL)
    return NULL;
  name = do_call_tool_name(c);
  handles_leave(slot);
  return name;
}

static int host_on_cancel(mcpd_call *h, void (*cb)(void *arg), void *arg) {
  int now = 0;
  CALL_OR(h, "on_cancel", (void)0);
  (void)rc;
  if (atomic_load(&c->completed)) {
    /* Finished: it will never be cancelled. */
  } else if (atomic_load(&c->cancelled)) {
    now = 1; /* call_cancel() already ran and found nothing to run */
  } else {
    c->cancel_cb = cb;
    c->cancel_arg = arg;
  }
  handles_leave(slot);
  if (now && cb != NULL)
    cb(arg);
  return MCPD_OK;
}

/* --- asking the client: the host functions ----------------------------- */

static void ask_run(hostq_event *base) {
  call_event *ev = (call_event *)base;
  ask_send(ev->ask);
  free_event(ev);
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
  free_event(ev);
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
  call_event *ev = new_event(c->exec, answer_run);
  unsigned nth;

  if (ev == NULL ||
      (c->asked == NULL && (c->asked = json_object_new_object()) == NULL)) {
    free(ev);
    json_object_put(params);
    set_error("out of memory");
    return MCPD_ERROR;
  }
  /* The nth identical request of this run has a key of its own; a key
   * the plugin chose names one question. */
  if (name != NULL) {
    snprintf(key, sizeof(key), "%s", name);
  } else {
    request_state_input_key(method, params, 1, base);
    json_object_object_get_ex(c->asked, base, &count);
    nth = (unsigned)json_object_get_int(count) + 1;
    json_object_object_add(c->asked, base, json_object_new_int((int)nth));
    request_state_input_key(method, params, nth, key);
  }
  ev->reply_cb = cb;
  ev->reply_arg = arg;
  if (json_object_object_get_ex(c->answers, key, &answer) &&
      json_object_deep_copy(answer, &copy, NULL) == 0) {
    if (c->used == NULL)
      c->used = json_object_new_object();
    json_object_object_add(c->used, key, NULL);
    ev->msg = copy;
    json_object_put(params);
  } else {
    if (c->inputs == NULL)
      c->inputs = json_object_new_object();
    ask = json_object_new_object();
    json_object_object_add(ask, "method", json_object_new_string(method));
    if (params != NULL)
      json_object_object_add(ask, "params", params);
    json_object_object_add(c->inputs, key, ask);
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

static int do_client_request(
    mcpd_call *c, const char *key, const char *method, json_object *params,
    void (*cb)(void *, json_object *, int, const char *), void *arg) {
  unsigned cap;
  client_ask *a;
  call_event *ev;

  if (!usable(c) || method == NULL || cb == NULL) {
    json_object_put(params);
    return MCPD_ERROR;
  }
  if (key != NULL && !valid_input_key(key)) {
    json_object_put(params);
    set_error("client_request: the key \"%.60s\" is not 1 to %d characters "
              "of A-Z a-z 0-9 _ . : -",
              key, REQUEST_STATE_INPUT_KEY_MAX - 1);
    return MCPD_ERROR;
  }
  if (params != NULL && !json_object_is_type(params, json_type_object)) {
    json_object_put(params);
    set_error("client_request: params must be an object");
    return MCPD_ERROR;
  }
  if ((cap = needed_cap(method, params)) == 0) {
    json_object_put(params);
    set_error("client_request: \"%.100s\" is not sampling/createMessage, "
              "elicitation/create or roots/list",
              method);
    return MCPD_ERROR;
  }
  if (c->modern && !(c->client_caps & cap)) {
    json_object_put(params);
    c->missing_caps |= cap;
    set_error("client_request: this 2026-07-28 request did not declare the "
              "%s capability",
              cap_name(cap));
    return MCPD_ERROR;
  }
  if (c->modern && c->kind == CALL_COMPLETE) {
    json_object_put(params);
    set_error("client_request: completion/complete cannot ask a 2026-07-28 "
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
    set_error("client_request: the client did not declare the %s "
              "capability",
              cap_name(cap));
    return MCPD_ERROR;
  }
  /* A worker's host is its client: the key goes along, for the host to
   * take out (input_key_take()). */
  if (key != NULL && c->exec->worker) {
    json_object *meta = NULL, *value = NULL;
    if (params == NULL)
      params = json_object_new_object();
    if (params != NULL && !json_object_object_get_ex(params, "_meta", &meta) &&
        (meta = json_object_new_object()) != NULL)
      json_object_object_add(params, "_meta", meta);
    if (meta != NULL && !json_object_is_type(meta, json_type_object)) {
      json_object_put(params);
      set_error("client_request: params._meta must be an object");
      return MCPD_ERROR;
    }
    if (meta == NULL || (value = json_object_new_string(key)) == NULL ||
        json_object_object_add(meta, INPUT_KEY_META, value) != 0) {
      json_object_put(value);
      json_object_put(params);
      set_error("out of memory");
      return MCPD_ERROR;
    }
  }
  a = calloc(1, sizeof(*a));
  if (a == NULL || (a->method = strdup(method)) == NULL) {
    free(a);
    json_object_put(params);
    set_error("out of memory");
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
  ev = new_event(c->exec, ask_run);
  if (ev == NULL) {
    a->call = NULL;
    free(a->method);
    json_object_put(a->params);
    free(a);
    set_error("out of memory");
    return MCPD_ERROR;
  }
  ev->ask = a;
  hostq_post(&c->exec->queue, &ev->base);
  return MCPD_OK;
}

static int host_client_request_keyed(
    mcpd_call *h, const char *key, const char *method, json_object *params,
    void (*cb)(void *, json_object *, int, const char *), void *arg) {
  CALL_OR(h, "client_request", json_object_put(params));
  rc = do_client_request(c, key, method, params, cb, arg);
  handles_leave(slot);
  return rc;
}

static int
host_client_request(mcpd_call *h, const char *method, json_object *params,
                    void (*cb)(void *, json_object *, int, const char *),
                    void *arg) {
  return host_client_request_keyed(h, NULL, method, params, cb, arg);
}

/* What a thread blocked in client_request_wait() waits for. */
typedef struct waiter {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done;
  json_object *result; /* a private copy */
  char *error;
} waiter;

static void wait_reply(void *arg, json_object *result, int code,
                       const char *message) {
  waiter *w = arg;
  json_object *copy = NULL;
  char *error = NULL;

  /* The waiting thread gets a copy: json-c reference counts are not
   * atomic, and the loop frees the original. */
  if (result != NULL && json_object_deep_copy(result, &copy, NULL) != 0)
    error = host_mprintf("out of memory copying the client's answer");
  else if (result == NULL)
    error = host_mprintf("%s (%d)", message ? message : "failed", code);
  pthread_mutex_lock(&w->mu);
  w->result = copy;
  w->error = error;
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

static int host_client_request_wait_keyed(mcpd_call *h, const char *key,
                                          const char *method,
                                          json_object *params,
                                          json_object **result, char **error) {
  waiter w;
  int rc;

  if (result != NULL)
    *result = NULL;
  if (error != NULL)
    *error = NULL;
  if (result == NULL) {
    json_object_put(params);
    set_error("client_request_wait: result must not be NULL");
    return MCPD_ERROR;
  }
  {
    handle_slot *slot;
    mcpd_call *c = enter(h, &slot, "client_request_wait");
    int on_loop;
    if (c == NULL) {
      json_object_put(params);
      return MCPD_ERROR;
    }
    on_loop = hostq_on_loop(&c->exec->queue);
    handles_leave(slot);
    if (on_loop) {
      json_object_put(params);
      set_error("client_request_wait: it would block the loop thread; use "
                "client_request() there");
      return MCPD_ERROR;
    }
  }
  memset(&w, 0, sizeof(w));
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  rc = host_client_request_keyed(h, key, method, params, wait_reply, &w);
  if (rc == MCPD_OK) {
    pthread_mutex_lock(&w.mu);
    while (!w.done)
      pthread_cond_wait(&w.cv, &w.mu);
    pthread_mutex_unlock(&w.mu);
    if (w.result != NULL) {
      *result = w.result;
    } else {
      set_error("%s", w.error ? w.error : "failed");
      rc = MCPD_ERROR;
    }
    if (error != NULL && rc != MCPD_OK)
      *error = w.error;
    else
      free(w.error);
  } else if (error != NULL) {
    *error = host_mprintf("%s", last_error);
  }
  pthread_cond_destroy(&w.cv);
  pthread_mutex_destroy(&w.mu);
  return rc;
}

static int host_client_request_wait(mcpd_call *h, const char *method,
                                    json_object *params, json_object **result,
                                    char **error) {
  return host_client_request_wait_keyed(h, NULL, method, params, result, error);
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
  free_event(ev);
}

static int host_elicitation_complete(mcpd_call *h, const char *id) {
  call_event *ev;
  CALL_OR(h, "elicitation_complete", (void)0);
  (void)rc;
  if (!usable(c) || id == NULL) {
    handles_leave(slot);
    return MCPD_ERROR;
  }
  if (!(c->client_caps & CLIENT_ELICIT_URL) || c->modern) {
    handles_leave(slot);
    set_error(c->modern ? "elicitation_complete: a 2026-07-28 client "
                          "hears of no elicitation (no input_required yet)"
                        : "elicitation_complete: the client did not declare "
                          "elicitation.url");
    return MCPD_ERROR;
  }
  ev = new_event(c->exec, elicit_done_run);
  if (ev == NULL || (ev->name = strdup(id)) == NULL) {
    if (ev != NULL)
      free_event(ev);
    handles_leave(slot);
    set_error("out of memory");
    return MCPD_ERROR;
  }
  ev->call = c;
  /* Behind whatever the call queued before, ahead of its end. */
  hostq_post(&c->exec->queue, &ev->base);
  handles_leave(slot);
  return MCPD_OK;
}

static json_object *host_call_roots(mcpd_call *h) {
  handle_slot *slot;
  mcpd_call *c = enter(h, &slot, "call_roots");
  json_object *roots = NULL;
  if (c == NULL)
    return NULL;
  if (c->roots != NULL)
    roots = json_tokener_parse(c->roots);
  else
    set_error("call_roots: the client offers no roots");
  handles_leave(slot);
  return roots;
}

static int host_on_roots_changed(mcpd_self *self, void (*cb)(void *arg),
                                 void *arg) {
  plugin *p = self ? self->plugin : NULL;
  if (p == NULL) {
    set_error("on_roots_changed: self must not be NULL");
    return MCPD_ERROR;
  }
  if (!hostq_on_loop(&((call_exec *)p->host_data)->queue)) {
    set_error("on_roots_changed: call it on the loop thread (init(), "
              "INLINE callbacks)");
    return MCPD_ERROR;
  }
  p->roots_cb = cb;
  p->roots_arg = arg;
  return MCPD_OK;
}

static const char *host_last_error(void) {
  return last_error;
}

static int host_prompt_role(mcpd_call *h, const char *role) {
  CALL_OR(h, "prompt_role", (void)0);
  rc = do_prompt_role(c, role);
  handles_leave(slot);
  return rc;
}

static int host_completion_value(mcpd_call *h, const char *value) {
  CALL_OR(h, "completion_value", (void)0);
  rc = do_completion_value(c, value);
  handles_leave(slot);
  return rc;
}

static int host_completion_total(mcpd_call *h, size_t total, int has_more) {
  CALL_OR(h, "completion_total", (void)0);
  rc = do_completion_total(c, total, has_more);
  handles_leave(slot);
  return rc;
}

static int host_fail(mcpd_call *h, int code, const char *fmt, ...) {
  va_list ap;
  CALL_OR(h, "fail", (void)0);
  va_start(ap, fmt);
  rc = do_fail(c, code, fmt, ap);
  va_end(ap);
  handles_leave(slot);
  return rc;
}

const mcpd_host call_host_api = {
    .size = sizeof(mcpd_host),
    .abi_major = MCPD_ABI_MAJOR,
    .abi_minor = MCPD_ABI_MINOR,
    .mprintf = host_mprintf,
    .free = host_free,
    .log = host_log,
    .result_text = host_result_text,
    .result_text_len = host_result_text_len,
    .result_image = host_result_image,
    .result_audio = host_result_audio,
    .result_resource_link = host_result_resource_link,
    .result_resource_text = host_result_resource_text,
    .result_resource_blob = host_result_resource_blob,
    .result_structured = host_result_structured,
    .result_error = host_result_error,
    .result_json = host_result_json,
    .cancelled = host_cancelled,
    .progress = host_progress,
    .complete = host_complete,
    .call_self = host_call_self,
    .add_tool = host_add_tool,
    .remove_tool = host_remove_tool,
    .result_textf = host_result_textf,
    .call_tool_name = host_call_tool_name,
    .last_error = host_last_error,
    .on_cancel = host_on_cancel,
    .add_resource = host_add_resource,
    .remove_resource = host_remove_resource,
    .add_resource_template = host_add_resource_template,
    .remove_resource_template = host_remove_resource_template,
    .add_prompt = host_add_prompt,
    .remove_prompt = host_remove_prompt,
    .resource_updated = host_resource_updated,
    .prompt_role = host_prompt_role,
    .completion_value = host_completion_value,
    .completion_total = host_completion_total,
    .fail = host_fail,
    .client_request = host_client_request,
    .client_request_wait = host_client_request_wait,
    .client_request_keyed = host_client_request_keyed,
    .client_request_wait_keyed = host_client_request_wait_keyed,
    .elicitation_complete = host_elicitation_complete,
    .call_roots = host_call_roots,
    .on_roots_changed = host_on_roots_changed,
};
