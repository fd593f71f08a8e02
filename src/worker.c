/* worker.c -- see worker.h. */
#define _GNU_SOURCE /* memfd_create */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "framer.h"
#include "jsonrpc.h"
#include "log.h"
#include "strbuf.h"
#include "utf8.h"
#include "worker.h"

/* Restart backoff: the first retry after RESTART_MIN_MS, doubling up to
 * RESTART_MAX_MS; a worker that dies PARK_CRASHES times within PARK_WINDOW
 * _MS is parked until its file changes. */
#define RESTART_MIN_MS 100
#define RESTART_MAX_MS 10000
#define PARK_CRASHES 5
#define PARK_WINDOW_MS 60000
/* How long an ended worker may take to exit before SIGKILL. */
#define STOP_GRACE_MS 2000
/* How long a new worker may take to list what its plugin offers. */
#define START_TIMEOUT_MS 10000
/* Messages for the worker leave in writes of about this many bytes when a
 * loop turn queues more.  Host and worker then work side by side on a
 * burst of calls instead of in turns: with 64 calls in flight that nearly
 * doubled the rate of isolated echo calls; much smaller pieces cost more
 * in writes and wakeups than they save. */
#define WRITE_EARLY 1024

static const char *const list_methods[REG_KINDS] = {
    "tools/list", "resources/list", "resources/templates/list", "prompts/list"};
static const char *const list_keys[REG_KINDS] = {
    "tools", "resources", "resourceTemplates", "prompts"};

static char *program;
static struct worker *all_workers;

typedef enum pending_kind {
  P_CALL,   /* a forwarded call: done() reports */
  P_INIT,   /* initialize */
  P_LIST,   /* a page of one kind's list */
  P_IGNORED /* an answer nobody waits for (subscribe, setLevel) */
} pending_kind;

typedef struct pending {
  uint64_t id;
  pending_kind kind;
  int list_kind;
  void *call;
  worker_done_fn done;
  uv_timer_t *grace; /* kills the worker if the answer does not come */
  struct pending *next;
} pending;

struct worker {
  const worker_env *env;
  plugin *p; /* a reference */
  uv_process_t *proc;
  uv_pipe_t *pipe;  /* its stdout: what it says */
  uv_pipe_t *wpipe; /* its stdin: what we say (pipes are quicker than a
                       socketpair for this ping-pong) */
  framer in;
  json_tokener *tok;
  uint64_t next_id;
  pending *pending;
  int ready;    /* listed and registered */
  int stopping; /* the plugin was unloaded */
  int parked;
  int started; /* started_cb was called */
  int alive;   /* the process runs */
  int exit_status, term_signal;
  unsigned crashes;               /* in the current window */
  uint64_t window_start;          /* of that window */
  uv_timer_t *restart;            /* backoff, or the kill at stop */
  json_object *staged[REG_KINDS]; /* list items while listing */
  struct worker *next_all;        /* every worker, for shutdown */
  strbuf out;                     /* messages queued for the worker */
  uv_idle_t *flush;               /* writes them once per loop turn */
  int writing;                    /* a uv_write of them is in flight */
};

void worker_set_program(const char *path) {
  free(program);
  program = path ? strdup(path) : NULL;
}

static void free_handle_cb(uv_handle_t *h) {
  free(h);
}

static void worker_free_if_done(worker *w);
static void settle(worker *w);

/* --- sending ------------------------------------------------------------ */

static void flush_out(worker *w);

static void write_done_cb(uv_write_t *req, int status) {
  worker *w = req->handle->data;
  (void)status;
  free(req->data);
  free(req);
  w->writing = 0;
  flush_out(w);
}

/* Writes what is queued for the worker: most of it at once with
 * uv_try_write, the rest with one uv_write of a copy. */
static void flush_out(worker *w) {
  uv_buf_t buf;
  uv_write_t *req;
  char *copy;
  int n;

  if (w->wpipe == NULL || uv_is_closing((uv_handle_t *)w->wpipe) || !w->alive ||
      w->writing || w->out.len == 0)
    return;
  buf = uv_buf_init(w->out.data, (unsigned)w->out.len);
  n = uv_try_write((uv_stream_t *)w->wpipe, &buf, 1);
  if (n == (int)buf.len) {
    w->out.len = 0;
    return;
  }
  if (n < 0 && n != UV_EAGAIN) {
    w->out.len = 0; /* the worker is going; exit_cb tells */
    return;
  }
  if (n < 0)
    n = 0;
  req = malloc(sizeof(*req));
  copy = malloc(buf.len - (size_t)n);
  if (req == NULL || copy == NULL) {
    free(req);
    free(copy);
    log_error("plugin \"%s\": out of memory writing to its worker", w->p->name);
    w->out.len = 0;
    return;
  }
  memcpy(copy, buf.base + n, buf.len - (size_t)n);
  buf = uv_buf_init(copy, buf.len - (unsigned)n);
  w->out.len = 0;
  req->data = copy;
  w->writing = 1;
  if (uv_write(req, (uv_stream_t *)w->wpipe, &buf, 1, write_done_cb) != 0) {
    w->writing = 0;
    free(copy);
    free(req);
  }
}

static void flush_idle_cb(uv_idle_t *idle) {
  worker *w = idle->data;
  uv_idle_stop(idle);
  flush_out(w);
}

/* Something was appended to w->out: it leaves at the end of this loop
 * turn, with whatever else the turn queues, in one write -- or now, once
 * WRITE_EARLY bytes wait, so that the worker starts on the first calls of
 * a burst while this process still reads the rest. */
/* A message was appended from `mark` on: sends it soon.  Returns 0, or
 * -1 when memory ran out, after taking back what was appended of it --
 * the messages queued before it stay whole. */
static int queued(worker *w, size_t mark) {
  if (w->out.failed) {
    w->out.failed = 0;
    w->out.len = mark;
    log_error("plugin \"%s\": out of memory writing to its worker", w->p->name);
    return -1;
  }
  if (w->out.len >= WRITE_EARLY) {
    flush_out(w);
    if (w->out.len == 0)
      return 0;
  }
  uv_idle_start(w->flush, flush_idle_cb);
  return 0;
}

/* Queues one message (taken over) for the worker. */
static void send_msg(worker *w, json_object *msg) {
  size_t len, mark;
  const char *text;

  if (w->wpipe == NULL || !w->alive) {
    json_object_put(msg);
    return;
  }
  mark = w->out.len;
  text = jsonrpc_to_string(msg, &len);
  strbuf_append(&w->out, text, len);
  strbuf_append(&w->out, "\n", 1);
  json_object_put(msg);
  queued(w, mark);
}

static pending *pending_add(worker *w, pending_kind kind) {
  pending *q = calloc(1, sizeof(*q));
  if (q == NULL)
    return NULL;
  q->id = ++w->next_id;
  q->kind = kind;
  q->next = w->pending;
  w->pending = q;
  return q;
}

static pending *pending_take(worker *w, uint64_t id) {
  for (pending **pp = &w->pending; *pp; pp = &(*pp)->next)
    if ((*pp)->id == id) {
      pending *q = *pp;
      *pp = q->next;
      return q;
    }
  return NULL;
}

static pending *pending_find(worker *w, uint64_t id) {
  for (pending *q = w->pending; q; q = q->next)
    if (q->id == id)
      return q;
  return NULL;
}

static void pending_free(pending *q) {
  if (q->grace != NULL)
    uv_close((uv_handle_t *)q->grace, free_handle_cb);
  free(q);
}

/* Sends a request; returns its pending record or NULL. */
static pending *request(worker *w, pending_kind kind, const char *method,
                        json_object *params) {
  pending *q = pending_add(w, kind);
  json_object *msg;
  if (q == NULL) {
    json_object_put(params);
    return NULL;
  }
  msg = json_object_new_object();
  json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
  json_object_object_add(msg, "id", json_object_new_int64((int64_t)q->id));
  json_object_object_add(msg, "method", json_object_new_string(method));
  if (params != NULL)
    json_object_object_add(msg, "params", params);
  send_msg(w, msg);
  return q;
}

static void notify(worker *w, const char *method, json_object *params) {
  send_msg(w, jsonrpc_notification(method, params));
}

/* --- the registry ------------------------------------------------------- */

static void remove_kind(worker *w, int kind) {
  registry *r = w->env->registry;
  for (size_t i = registry_count(r, kind); i-- > 0;) {
    reg_entry *e = registry_at(r, kind, i);
    if (e->owner == w->p)
      registry_remove(r, e);
  }
}

/* Replaces the plugin's entries of `kind` by the listed ones. */
static void register_kind(worker *w, int kind) {
  json_object *items = w->staged[kind];
  size_t n = items ? json_object_array_length(items) : 0;

  remove_kind(w, kind);
  for (size_t i = 0; i < n; i++) {
    char err[300];
    reg_entry *e = reg_entry_remote(kind, json_object_array_get_idx(items, i),
                                    w->p, err, sizeof(err));
    if (e == NULL) {
      log_error("plugin \"%s\" (isolated): %s; skipped", w->p->name, err);
      continue;
    }
    if (registry_add(w->env->registry, e) != 0)
      log_error("plugin \"%s\" (isolated): %s \"%s\" is taken by another "
                "plugin; skipped",
                w->p->name, reg_kind_name(kind), e->name);
  }
  json_object_put(w->staged[kind]);
  w->staged[kind] = NULL;
}

static void list(worker *w, int kind, const char *cursor) {
  json_object *params = json_object_new_object();
  pending *q;
  if (cursor != NULL)
    json_object_object_add(params, "cursor", json_object_new_string(cursor));
  if ((q = request(w, P_LIST, list_methods[kind], params)) != NULL)
    q->list_kind = kind;
}

/* A page of `kind` came; the next page, the next kind, or registration. */
static void listed(worker *w, int kind, json_object *result) {
  json_object *items, *next;
  if (w->staged[kind] == NULL)
    w->staged[kind] = json_object_new_array();
  if (json_object_object_get_ex(result, list_keys[kind], &items) &&
      json_object_is_type(items, json_type_array))
    for (size_t i = 0; i < json_object_array_length(items); i++)
      json_object_array_add(
          w->staged[kind],
          json_object_get(json_object_array_get_idx(items, i)));
  if (json_object_object_get_ex(result, "nextCursor", &next) &&
      json_object_is_type(next, json_type_string)) {
    list(w, kind, json_object_get_string(next));
    return;
  }
  if (!w->ready && kind + 1 < REG_KINDS) {
    list(w, kind + 1, NULL);
    return;
  }
  if (!w->ready) {
    for (int k = 0; k < REG_KINDS; k++)
      register_kind(w, k);
    w->ready = 1;
    uv_timer_stop(w->restart); /* the start timeout */
    settle(w);
    log_debug("plugin \"%s\": its worker (pid %d) is ready", w->p->name,
              w->proc ? w->proc->pid : 0);
  } else {
    register_kind(w, kind);
  }
  w->env->changed_cb(w->env->report_arg);
}

/* The first start is over, one way or the other. */
static void settle(worker *w) {
  if (!w->started) {
    w->started = 1;
    if (w->env->started_cb != NULL)
      w->env->started_cb(w->env->report_arg);
  }
}

/* --- receiving ---------------------------------------------------------- */

/* Removes and returns `_meta["io.mcpd/related"]` of params as an id, or 0. */
static uint64_t take_related(json_object *params) {
  json_object *rel = jsonrpc_meta_take(params, "io.mcpd/related");
  uint64_t id = json_object_is_type(rel, json_type_int)
                    ? (uint64_t)json_object_get_int64(rel)
                    : 0;
  json_object_put(rel);
  return id;
}

/* The digits of a numeric id as JSON writes one (no leading zero), at
 * most 19 of them, into *id if not NULL; returns what follows, or NULL. */
static const char *skip_id_value(const char *p, const char *end, uint64_t *id) {
  const char *start = p;
  uint64_t v = 0;

  for (; p < end && *p >= '0' && *p <= '9'; p++) {
    if (p - start >= 19)
      return NULL;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  if (p == start || (*start == '0' && p - start > 1))
    return NULL;
  if (id != NULL)
    *id = v;
  return p;
}

/* Where the result is in a response line written as mcpd writes them,
 * {"jsonrpc":"2.0","id":N,"result":{...}}, or NULL for any other shape
 * (the caller then serializes the parsed result).  The result must be
 * the last member, or a duplicate key after it would be passed on beside
 * it, and text jsonrpc_skip_value() accepts: keys without escapes, which
 * the splice of modern results compares byte for byte. */
static const char *result_text(const char *line, size_t len, size_t *n) {
  static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  static const char key[] = ",\"result\":";
  const char *end = line + len, *p = line + sizeof(head) - 1, *start;

  if (len < sizeof(head) - 1 || memcmp(line, head, sizeof(head) - 1) != 0 ||
      (p = skip_id_value(p, end, NULL)) == NULL)
    return NULL;
  if ((size_t)(end - p) < sizeof(key) || memcmp(p, key, sizeof(key) - 1) != 0)
    return NULL;
  start = p + sizeof(key) - 1;
  if (*start != '{' || (p = jsonrpc_skip_value(start, end, 1)) == NULL ||
      p + 1 != end || *p != '}')
    return NULL;
  *n = (size_t)(p - start);
  return start;
}

static void on_response(worker *w, json_object *msg, const char *line,
                        size_t len) {
  json_object *idv, *result = NULL, *error = NULL;
  pending *q;

  if (!json_object_object_get_ex(msg, "id", &idv) ||
      !json_object_is_type(idv, json_type_int) ||
      (q = pending_take(w, (uint64_t)json_object_get_int64(idv))) == NULL)
    return;
  json_object_object_get_ex(msg, "result", &result);
  json_object_object_get_ex(msg, "error", &error);
  switch (q->kind) {
  case P_CALL:
    if (error == NULL && result != NULL) {
      size_t n = 0;
      const char *text = result_text(line, len, &n);
      q->done(q->call, result, text, n, NULL);
    } else {
      q->done(q->call, NULL, NULL, 0, error);
    }
    break;
  case P_INIT:
    if (error != NULL || result == NULL) {
      log_error("plugin \"%s\": its worker refused initialize", w->p->name);
      break;
    }
    notify(w, "notifications/initialized", NULL);
    {
      json_object *params = json_object_new_object();
      json_object_object_add(params, "level", json_object_new_string("debug"));
      request(w, P_IGNORED, "logging/setLevel", params);
    }
    list(w, 0, NULL);
    break;
  case P_LIST:
    listed(w, q->list_kind, result ? result : NULL);
    break;
  case P_IGNORED:
    break;
  }
  pending_free(q);
}

static void on_notification(worker *w, const char *method,
                            json_object *params) {
  uint64_t related = params ? take_related(params) : 0;
  pending *q = NULL;
  void *call = NULL;

  for (int k = 0; k < REG_KINDS; k++) {
    char name[64];
    snprintf(name, sizeof(name), "notifications/%s/list_changed",
             k == REG_TOOL     ? "tools"
             : k == REG_PROMPT ? "prompts"
                               : "resources");
    if (strcmp(method, name) == 0) {
      if (w->ready) {
        list(w, k, NULL);
        if (k == REG_RESOURCE)
          list(w, REG_TEMPLATE, NULL);
      }
      return;
    }
  }
  if (related != 0 && (q = pending_find(w, related)) != NULL &&
      q->kind == P_CALL)
    call = q->call;
  if (related != 0 && call == NULL)
    return; /* about a call that is over */
  w->env->notify_cb(w->env->arg, call, w->p, method, params);
}

static void on_request(worker *w, json_object *id, const char *method,
                       json_object *params) {
  uint64_t related = params ? take_related(params) : 0;
  pending *q = related ? pending_find(w, related) : NULL;

  if (q != NULL && q->kind == P_CALL) {
    w->env->request_cb(w->env->arg, q->call, w->p, id, method, params);
    return;
  }
  if (strcmp(method, "roots/list") == 0) {
    /* The worker's own session asks once; calls get their client's roots
     * with each request instead. */
    json_object *result = json_object_new_object();
    json_object_object_add(result, "roots", json_object_new_array());
    worker_answer(w->p, id, result, NULL);
    return;
  }
  if (strcmp(method, "ping") == 0) {
    worker_answer(w->p, id, json_object_new_object(), NULL);
    return;
  }
  worker_answer(w->p, id, NULL,
                jsonrpc_error(NULL, JSONRPC_METHOD_NOT_FOUND,
                              related ? "the call is over"
                                      : "the host takes no such request",
                              NULL));
}

/* A call's answer as the worker writes it, {"jsonrpc":"2.0","id":N,
 * "result":{...}}, checked and handed to the call as text, with no tree
 * built.  Returns 0 when the line is something else, or JSON that only a
 * parse can judge: line_cb then parses it. */
static int call_answer(worker *w, const char *line, size_t len) {
  static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  static const char key[] = ",\"result\":";
  const char *end = line + len, *p = line + sizeof(head) - 1, *result;
  uint64_t id = 0;
  pending *q;

  if (len < sizeof(head) - 1 || memcmp(line, head, sizeof(head) - 1) != 0 ||
      (p = skip_id_value(p, end, &id)) == NULL)
    return 0;
  if ((size_t)(end - p) < sizeof(key) || memcmp(p, key, sizeof(key) - 1) != 0)
    return 0;
  result = p + sizeof(key) - 1;
  if (*result != '{' || (q = pending_find(w, id)) == NULL || q->kind != P_CALL)
    return 0;
  p = jsonrpc_skip_value(result, end, 1);
  if (p == NULL || p + 1 != end || *p != '}' || !utf8_valid(line, len))
    return 0;
  pending_take(w, id);
  q->done(q->call, NULL, result, (size_t)(p - result), NULL);
  pending_free(q);
  return 1;
}

static void line_cb(void *ctx, char *line, size_t len, int oversize) {
  worker *w = ctx;
  json_object *msg, *method, *id;
  const char *why;

  if (oversize) {
    log_error("plugin \"%s\": its worker sent a message over the size limit",
              w->p->name);
    return;
  }
  if (call_answer(w, line, len))
    return;
  /* Checked as strictly as a client's message: a result may be passed on
   * to the client as the worker wrote it. */
  if (jsonrpc_parse(w->tok, line, len, &msg, &why) != 0 ||
      !json_object_is_type(msg, json_type_object)) {
    json_object_put(msg);
    log_error("plugin \"%s\": its worker sent something that is not JSON-RPC",
              w->p->name);
    return;
  }
  if (json_object_object_get_ex(msg, "method", &method) &&
      json_object_is_type(method, json_type_string)) {
    json_object *params = NULL;
    json_object_object_get_ex(msg, "params", &params);
    if (json_object_object_get_ex(msg, "id", &id))
      on_request(w, id, json_object_get_string(method), params);
    else
      on_notification(w, json_object_get_string(method), params);
  } else {
    on_response(w, msg, line, len);
  }
  json_object_put(msg);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  worker *w = h->data;
  char *base;
  size_t avail;
  (void)suggested;
  if (framer_reserve(&w->in, 64 * 1024, &base, &avail) != 0) {
    buf->base = NULL;
    buf->len = 0;
    return;
  }
  buf->base = base;
  buf->len = avail;
}

static void pipe_closed_cb(uv_handle_t *h) {
  worker *w = h->data;
  if (h == (uv_handle_t *)w->pipe)
    w->pipe = NULL;
  else
    w->wpipe = NULL;
  free(h);
  worker_free_if_done(w);
}

/* Closes both pipes; `pipes_gone` says when they are. */
static void close_pipe(worker *w) {
  if (w->pipe != NULL && !uv_is_closing((uv_handle_t *)w->pipe))
    uv_close((uv_handle_t *)w->pipe, pipe_closed_cb);
  if (w->wpipe != NULL && !uv_is_closing((uv_handle_t *)w->wpipe))
    uv_close((uv_handle_t *)w->wpipe, pipe_closed_cb);
}

static int pipes_gone(const worker *w) {
  return w->pipe == NULL && w->wpipe == NULL;
}

static void read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  worker *w = s->data;
  (void)buf;
  if (n > 0) {
    framer_commit(&w->in, (size_t)n, line_cb, w);
    return;
  }
  if (n < 0) {
    /* EOF or an error: the process is ending (exit_cb tells how). */
    uv_read_stop(s);
    close_pipe(w);
    if (w->alive && w->proc != NULL)
      uv_process_kill(w->proc, SIGKILL);
  }
}

/* --- the process -------------------------------------------------------- */

static int spawn(worker *w);

static void restart_cb(uv_timer_t *t) {
  worker *w = t->data;
  if (w->stopping || w->alive)
    return;
  if (!pipes_gone(w)) {
    /* The old connection is still closing. */
    uv_timer_start(t, restart_cb, 10, 0);
    return;
  }
  if (spawn(w) != 0)
    log_error("plugin \"%s\": its worker could not be restarted", w->p->name);
}

/* Fails every call in flight with `message` and forgets the rest. */
static void fail_pending(worker *w, const char *message, json_object *data) {
  while (w->pending != NULL) {
    pending *q = w->pending;
    w->pending = q->next;
    if (q->kind == P_CALL) {
      json_object *error = jsonrpc_error(NULL, JSONRPC_INTERNAL_ERROR, message,
                                         json_object_get(data));
      json_object *e = NULL;
      json_object_object_get_ex(error, "error", &e);
      q->done(q->call, NULL, NULL, 0, e);
      json_object_put(error);
    }
    pending_free(q);
  }
  json_object_put(data);
}

static void exit_cb(uv_process_t *proc, int64_t status, int signum) {
  worker *w = proc->data;
  char why[96], message[300];
  json_object *data;
  uint64_t now = uv_now(w->env->loop), delay;

  w->alive = 0;
  w->out.len = 0; /* for the process that is gone */
  settle(w);
  w->exit_status = (int)status;
  w->term_signal = signum;
  uv_close((uv_handle_t *)proc, free_handle_cb);
  w->proc = NULL;
  close_pipe(w);
  for (int k = 0; k < REG_KINDS; k++) {
    json_object_put(w->staged[k]);
    w->staged[k] = NULL;
  }
  if (signum != 0)
    snprintf(why, sizeof(why), "was killed by signal %d (%s)", signum,
             strsignal(signum));
  else
    snprintf(why, sizeof(why), "exited with status %d", (int)status);

  data = json_object_new_object();
  json_object_object_add(data, "plugin", json_object_new_string(w->p->name));
  if (signum != 0)
    json_object_object_add(data, "signal", json_object_new_int(signum));
  else
    json_object_object_add(data, "exitStatus",
                           json_object_new_int((int)status));

  if (w->stopping) {
    fail_pending(w, "the plugin was unloaded", data);
    worker_free_if_done(w);
    return;
  }
  snprintf(message, sizeof(message), "plugin \"%s\": its worker process %s",
           w->p->name, why);
  fail_pending(w, message, data);
  if (w->ready) {
    registry_remove_owner(w->env->registry, w->p);
    w->env->changed_cb(w->env->report_arg);
  }
  w->ready = 0;

  if (now - w->window_start > PARK_WINDOW_MS) {
    w->window_start = now;
    w->crashes = 0;
  }
  w->crashes++;
  if (w->crashes >= PARK_CRASHES) {
    w->parked = 1;
    log_error("%s; %u times within a minute, so it is parked until its "
              "file changes",
              message, w->crashes);
    w->env->report_cb(w->env->report_arg, MCPD_LOG_ERROR, w->p->name, message);
    return;
  }
  delay = (uint64_t)RESTART_MIN_MS << (w->crashes - 1);
  if (delay > RESTART_MAX_MS)
    delay = RESTART_MAX_MS;
  log_error("%s; restarting it in %llu ms", message, (unsigned long long)delay);
  w->env->report_cb(w->env->report_arg, MCPD_LOG_ERROR, w->p->name, message);
  uv_timer_start(w->restart, restart_cb, delay, 0);
}

/* The plugin's config as a file the worker reads on fd 3. */
static int config_fd(worker *w) {
  json_object *cfg = plugin_settings_config(w->env->opts->plugins, w->p->name);
  const char *text =
      cfg ? json_object_to_json_string_ext(cfg, JSON_C_TO_STRING_PLAIN)
          : "null";
  size_t len = strlen(text), off = 0;
  int fd = memfd_create("mcpd-plugin-config", MFD_CLOEXEC);
  if (fd < 0)
    return -1;
  while (off < len) {
    ssize_t n = write(fd, text + off, len - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      close(fd);
      return -1;
    }
    off += (size_t)n;
  }
  lseek(fd, 0, SEEK_SET);
  return fd;
}

/* A worker that does not get ready in time is treated as crashed. */
static void start_timeout_cb(uv_timer_t *t) {
  worker *w = t->data;
  if (!w->ready && w->alive && w->proc != NULL) {
    log_error("plugin \"%s\": its worker did not start within %d s; "
              "killing it",
              w->p->name, START_TIMEOUT_MS / 1000);
    uv_process_kill(w->proc, SIGKILL);
  }
}

static void close_all(const int to[2], const int from[2], int cfg) {
  close(to[0]);
  close(to[1]);
  close(from[0]);
  close(from[1]);
  if (cfg >= 0)
    close(cfg);
}

static int spawn(worker *w) {
  const worker_settings *o = w->env->opts;
  uv_process_options_t po;
  uv_stdio_container_t stdio[4];
  char threads[24], level[16], limits[3][24];
  char *args[20];
  int to[2], from[2], cfg, rc, n = 0;
  static const char *const levels[] = {"error", "warn", "info", "debug"};

  if (program == NULL) {
    log_error("plugin \"%s\": no program to run its worker", w->p->name);
    return -1;
  }
  /* to[0] is its stdin, from[1] its stdout. */
  if (pipe2(to, O_CLOEXEC) != 0) {
    log_error("plugin \"%s\": pipe: %s", w->p->name, strerror(errno));
    return -1;
  }
  if (pipe2(from, O_CLOEXEC) != 0) {
    log_error("plugin \"%s\": pipe: %s", w->p->name, strerror(errno));
    close(to[0]);
    close(to[1]);
    return -1;
  }
  if ((cfg = config_fd(w)) < 0) {
    log_error("plugin \"%s\": cannot pass its config: %s", w->p->name,
              strerror(errno));
    close_all(to, from, -1);
    return -1;
  }
  snprintf(threads, sizeof(threads), "%zu", o->threads);
  snprintf(level, sizeof(level), "%s",
           o->log_level >= 0 && o->log_level < 4 ? levels[o->log_level]
                                                 : "info");
  args[n++] = program;
  args[n++] = (char *)"--worker";
  args[n++] = w->p->path;
  args[n++] = (char *)"--worker-config-fd";
  args[n++] = (char *)"3";
  args[n++] = (char *)"--log-level";
  args[n++] = level;
  args[n++] = (char *)"--threads";
  args[n++] = threads;
  {
    static const char *const keys[] = {"addressSpaceMiB", "cpuSeconds",
                                       "openFiles"};
    static const char *const flags[] = {"--rlimit-as", "--rlimit-cpu",
                                        "--rlimit-nofile"};
    for (int i = 0; i < 3; i++) {
      uint64_t v = plugin_settings_limit(o->plugins, w->p->name, keys[i]);
      if (v == 0)
        continue;
      snprintf(limits[i], sizeof(limits[i]), "%llu", (unsigned long long)v);
      args[n++] = (char *)flags[i];
      args[n++] = limits[i];
    }
  }
  args[n] = NULL;

  memset(&po, 0, sizeof(po));
  memset(stdio, 0, sizeof(stdio));
  stdio[0].flags = UV_INHERIT_FD;
  stdio[0].data.fd = to[0];
  stdio[1].flags = UV_INHERIT_FD;
  stdio[1].data.fd = from[1];
  stdio[2].flags = UV_INHERIT_FD;
  stdio[2].data.fd = 2;
  stdio[3].flags = UV_INHERIT_FD;
  stdio[3].data.fd = cfg;
  po.file = program;
  po.args = args;
  po.exit_cb = exit_cb;
  po.stdio = stdio;
  po.stdio_count = 4;

  w->proc = calloc(1, sizeof(*w->proc));
  w->pipe = calloc(1, sizeof(*w->pipe));
  w->wpipe = calloc(1, sizeof(*w->wpipe));
  if (w->proc == NULL || w->pipe == NULL || w->wpipe == NULL) {
    free(w->proc);
    free(w->pipe);
    free(w->wpipe);
    w->proc = NULL;
    w->pipe = w->wpipe = NULL;
    close_all(to, from, cfg);
    return -1;
  }
  w->proc->data = w;
  rc = uv_spawn(w->env->loop, w->proc, &po);
  /* The child's ends are the child's now. */
  close(to[0]);
  close(from[1]);
  close(cfg);
  if (rc != 0) {
    log_error("plugin \"%s\": cannot start its worker: %s", w->p->name,
              uv_strerror(rc));
    uv_close((uv_handle_t *)w->proc, free_handle_cb);
    w->proc = NULL;
    free(w->pipe);
    free(w->wpipe);
    w->pipe = w->wpipe = NULL;
    close(to[1]);
    close(from[0]);
    return -1;
  }
  w->alive = 1;
  uv_pipe_init(w->env->loop, w->pipe, 0);
  w->pipe->data = w;
  uv_pipe_open(w->pipe, from[0]);
  uv_pipe_init(w->env->loop, w->wpipe, 0);
  w->wpipe->data = w;
  uv_pipe_open(w->wpipe, to[1]);
  framer_free(&w->in);
  framer_init(&w->in, o->max_message);
  uv_read_start((uv_stream_t *)w->pipe, alloc_cb, read_cb);
  w->next_id = 0;
  {
    json_object *params = json_object_new_object(), *caps, *info;
    caps = json_object_new_object();
    /* Everything a client may declare: each call brings its client's
     * real capabilities. */
    json_object_object_add(caps, "sampling", json_object_new_object());
    json_object_object_add(caps, "elicitation", json_object_new_object());
    json_object_object_add(caps, "roots", json_object_new_object());
    info = json_object_new_object();
    json_object_object_add(info, "name", json_object_new_string("mcpd-host"));
    json_object_object_add(info, "version",
                           json_object_new_string(PACKAGE_VERSION));
    json_object_object_add(params, "protocolVersion",
                           json_object_new_string("2025-11-25"));
    json_object_object_add(params, "capabilities", caps);
    json_object_object_add(params, "clientInfo", info);
    request(w, P_INIT, "initialize", params);
  }
  uv_timer_start(w->restart, start_timeout_cb, START_TIMEOUT_MS, 0);
  return 0;
}

/* --- the public side ---------------------------------------------------- */

int worker_start(const worker_env *env, plugin *p) {
  worker *w = calloc(1, sizeof(*w));
  if (w == NULL || (w->tok = json_tokener_new_ex(JSONRPC_MAX_DEPTH)) == NULL ||
      (w->restart = malloc(sizeof(*w->restart))) == NULL ||
      (w->flush = malloc(sizeof(*w->flush))) == NULL) {
    if (w != NULL) {
      json_tokener_free(w->tok);
      free(w->restart);
    }
    free(w);
    log_error("plugin \"%s\": out of memory", p->name);
    return -1;
  }
  json_tokener_set_flags(w->tok, JSON_TOKENER_STRICT);
  w->env = env;
  w->p = p;
  plugin_ref(p);
  w->next_all = all_workers;
  all_workers = w;
  framer_init(&w->in, env->opts->max_message);
  uv_timer_init(env->loop, w->restart);
  w->restart->data = w;
  uv_idle_init(env->loop, w->flush);
  w->flush->data = w;
  w->window_start = uv_now(env->loop);
  p->worker = w;
  if (spawn(w) != 0) {
    p->worker = NULL;
    w->stopping = 1;
    worker_free_if_done(w);
    return -1;
  }
  return 0;
}

static void kill_cb(uv_timer_t *t) {
  worker *w = t->data;
  if (w->alive && w->proc != NULL) {
    log_warn("plugin \"%s\": its worker did not exit; killing it", w->p->name);
    uv_process_kill(w->proc, SIGKILL);
  }
}

void worker_stop(plugin *p) {
  worker *w = p->worker;
  if (w == NULL)
    return;
  settle(w);
  p->worker = NULL;
  w->stopping = 1;
  uv_timer_stop(w->restart);
  fail_pending(w, "the plugin was unloaded", NULL);
  if (w->alive) {
    /* EOF asks it to exit; SIGKILL if it does not. */
    close_pipe(w);
    uv_timer_start(w->restart, kill_cb, STOP_GRACE_MS, 0);
    return;
  }
  worker_free_if_done(w);
}

static void proc_closed_cb(uv_handle_t *h) {
  worker *w = h->data;
  free(h);
  w->proc = NULL;
  worker_free_if_done(w);
}

void worker_shutdown(void) {
  for (worker *w = all_workers; w; w = w->next_all) {
    if (w->p->worker == w)
      w->p->worker = NULL;
    w->stopping = 1;
    settle(w);
    fail_pending(w, "mcpd is exiting", NULL);
    uv_timer_stop(w->restart);
    close_pipe(w);
    if (w->proc != NULL && !uv_is_closing((uv_handle_t *)w->proc)) {
      /* Not waiting for it: it has its EOF, and the parent's death would
       * end it anyway. */
      w->alive = 0;
      uv_close((uv_handle_t *)w->proc, proc_closed_cb);
    }
    worker_free_if_done(w);
  }
}

static void restart_closed_cb(uv_handle_t *h) {
  worker *w = h->data;
  free(h);
  for (worker **pp = &all_workers; *pp; pp = &(*pp)->next_all)
    if (*pp == w) {
      *pp = w->next_all;
      break;
    }
  framer_free(&w->in);
  strbuf_free(&w->out);
  json_tokener_free(w->tok);
  plugin_release(w->p);
  free(w);
}

/* Frees a stopped worker once its process and pipe are gone. */
static void worker_free_if_done(worker *w) {
  if (!w->stopping || w->alive || !pipes_gone(w) || w->proc != NULL ||
      w->restart == NULL || uv_is_closing((uv_handle_t *)w->restart))
    return;
  uv_close((uv_handle_t *)w->flush, free_handle_cb);
  uv_close((uv_handle_t *)w->restart, restart_closed_cb);
}

int worker_call(plugin *p, const char *method, const char *params, size_t len,
                void *call, worker_done_fn done, uint64_t *id) {
  worker *w = p->worker;
  pending *q;
  char tmp[24];
  const char *num;
  size_t num_len, mark;

  if (w == NULL || !w->ready || !w->alive || w->wpipe == NULL ||
      (q = pending_add(w, P_CALL)) == NULL)
    return -1;
  q->call = call;
  q->done = done;
  *id = q->id;
  /* Written as text: the hot path builds no tree. */
  mark = w->out.len;
  num = strbuf_format_int64(tmp, (int64_t)q->id, &num_len);
  strbuf_puts(&w->out, "{\"jsonrpc\":\"2.0\",\"id\":");
  strbuf_append(&w->out, num, num_len);
  strbuf_puts(&w->out, ",\"method\":");
  strbuf_json_string(&w->out, method, strlen(method));
  strbuf_puts(&w->out, ",\"params\":");
  strbuf_append(&w->out, params, len);
  strbuf_append(&w->out, "}\n", 2);
  if (queued(w, mark) != 0) {
    pending_free(pending_take(w, q->id));
    return -1;
  }
  return 0;
}

static void grace_cb(uv_timer_t *t) {
  worker *w = t->data;
  if (w->alive && w->proc != NULL) {
    log_error("plugin \"%s\": a call ignored its cancellation; killing the "
              "worker",
              w->p->name);
    uv_process_kill(w->proc, SIGKILL);
  }
}

void worker_cancel(plugin *p, uint64_t id, uint64_t grace_ms) {
  worker *w = p->worker;
  pending *q;
  json_object *params;
  if (w == NULL || (q = pending_find(w, id)) == NULL)
    return;
  params = json_object_new_object();
  json_object_object_add(params, "requestId",
                         json_object_new_int64((int64_t)id));
  json_object_object_add(params, "reason", json_object_new_string("cancelled"));
  notify(w, "notifications/cancelled", params);
  if (grace_ms > 0 && q->grace == NULL &&
      (q->grace = malloc(sizeof(*q->grace))) != NULL) {
    uv_timer_init(w->env->loop, q->grace);
    q->grace->data = w;
    uv_timer_start(q->grace, grace_cb, grace_ms, 0);
  }
}

void worker_answer(plugin *p, json_object *id, json_object *result,
                   json_object *error) {
  worker *w = p->worker;
  json_object *msg;
  if (w == NULL) {
    json_object_put(result);
    json_object_put(error);
    return;
  }
  if (error != NULL) {
    json_object *e = NULL;
    /* Accept either a whole error response or its "error" member. */
    if (json_object_object_get_ex(error, "error", &e)) {
      json_object_get(e);
      json_object_put(error);
      error = e;
    }
    msg = json_object_new_object();
    json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(msg, "id", json_object_get(id));
    json_object_object_add(msg, "error", error);
    json_object_put(result);
  } else {
    msg = jsonrpc_result(id, result ? result : json_object_new_object());
  }
  send_msg(w, msg);
}

void worker_subscribe(plugin *p, const char *uri, int subscribed) {
  worker *w = p->worker;
  json_object *params;
  if (w == NULL || !w->ready)
    return;
  params = json_object_new_object();
  json_object_object_add(params, "uri", json_object_new_string(uri));
  request(w, P_IGNORED,
          subscribed ? "resources/subscribe" : "resources/unsubscribe", params);
}

void worker_roots_changed(plugin *p) {
  worker *w = p->worker;
  if (w != NULL && w->ready)
    notify(w, "notifications/roots/list_changed", NULL);
}
