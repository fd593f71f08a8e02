/* SPDX-License-Identifier: MIT */
/* worker_link.c -- the host as a client of an isolated plugin's worker:
 * the listing into the registry, forwarded calls and what comes back
 * about them, over an rpc_peer.  The process itself is worker_process.c's.
 * See worker_link.h. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "era.h"
#include "jsonrpc.h"
#include "log.h"
#include "rpc_peer.h"
#include "worker_hello.h"
#include "worker_link.h"

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

static struct worker *all_workers;
/* While a forwarded call waits for its answer and the loop has nothing
 * else to do, it polls for up to SPIN_NS instead of sleeping: at one
 * call in flight, waking up when the worker answers cost about as much
 * as the worker's whole call.  Each call sent or answered extends it;
 * with no call in flight it stops at once. */
#define SPIN_NS 100000
static struct {
  uv_idle_t idle;
  uv_loop_t *loop; /* the loop `idle` was set up on, or NULL */
  uint64_t until;  /* uv_hrtime() */
  unsigned calls;  /* forwarded calls in flight, every worker's */
} spin;

/* worker_shutdown()'s: runs once every worker is gone. */
static void (*all_gone_cb)(void *arg);
static void *all_gone_arg;

typedef enum pending_kind {
  P_CALL,    /* a forwarded call: done() reports */
  P_INIT,    /* initialize */
  P_LIST,    /* a page of one kind's list */
  P_IGNORED, /* an answer nobody waits for (subscribe, setLevel) */
  P_BARRIER  /* a ping: what was sent before it has been handled */
} pending_kind;

/* A request to the worker, awaiting its answer. */
typedef struct pending {
  rpc_entry entry; /* first: the peer hands it back */
  struct worker *w;
  pending_kind kind;
  int list_kind;
  int relist;                 /* P_LIST: a list the worker said changed */
  void (*barrier)(void *arg); /* P_BARRIER, with `call` */
  void *call;
  worker_done_fn done;
} pending;

/* A call's answer held while a list is brought up to date. */
typedef struct held {
  void *call;
  worker_done_fn done;
  json_object *result;
  char *text;
  size_t len;
  struct held *next;
} held;

struct worker {
  const worker_env *env;
  plugin *p; /* a reference */
  worker_process proc;
  rpc_peer peer; /* requests to the worker, and the bytes for it */
  json_tokener *tok;
  int ready;      /* listed and registered */
  int ever_ready; /* its first process got ready */
  int said_hello; /* this process said its plugin's name */
  int stopping;   /* the plugin was unloaded */
  unsigned calls; /* forwarded calls not answered yet */
  /* Kinds being listed again after the worker said they changed, and the
   * call answers that came meanwhile, held until the registry is up to
   * date (in-process, a call that adds a tool returns after it is in). */
  unsigned relisting;
  struct held *held_head, *held_tail;
  int ended;                      /* its process is being stopped */
  int started;                    /* started_cb was called */
  char *refused;                  /* why this process cannot serve it */
  json_object *staged[REG_KINDS]; /* list items while listing */
  struct worker *next_all;        /* every worker, for shutdown */
};

static void reply_cb(rpc_entry *e, const rpc_reply *r);
static void start_mcp(worker *w);

static void spin_cb(uv_idle_t *idle) {
  if (spin.calls == 0 || uv_hrtime() > spin.until)
    uv_idle_stop(idle);
}

/* Polls a while longer: a call was sent, or an answer came. */
static void spin_on(uv_loop_t *loop) {
  if (spin.loop != loop) {
    if (uv_idle_init(loop, &spin.idle) != 0)
      return;
    spin.loop = loop;
  }
  spin.until = uv_hrtime() + SPIN_NS;
  if (!uv_is_active((uv_handle_t *)&spin.idle))
    uv_idle_start(&spin.idle, spin_cb);
}
static void end_drained(worker *w);

/* --- sending ------------------------------------------------------------ */

/* Sends a request; returns its pending record or NULL. */
static pending *request(worker *w, pending_kind kind, const char *method,
                        json_object *params) {
  pending *q = calloc(1, sizeof(*q));
  if (q == NULL) {
    json_object_put(params);
    return NULL;
  }
  q->w = w;
  q->kind = kind;
  if (rpc_peer_request(&w->peer, &q->entry, reply_cb, method, params) != 0) {
    free(q);
    return NULL;
  }
  return q;
}

static void notify(worker *w, const char *method, json_object *params) {
  rpc_peer_send(&w->peer, jsonrpc_notification(method, params));
}

/* The forwarded call `id`, or NULL when it is over. */
static pending *find_call(worker *w, uint64_t id) {
  pending *q = (pending *)rpc_peer_find(&w->peer, id);
  return q != NULL && q->kind == P_CALL ? q : NULL;
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

/* Adds the listed items of `kind` to `into` (the registry, or the
 * plugin's staging one before it is ready), skipping with a log line
 * what is malformed or whose name `into` holds already. */
static void add_listed(worker *w, registry *into, int kind) {
  json_object *items = w->staged[kind];
  size_t n = items ? json_object_array_length(items) : 0;

  for (size_t i = 0; i < n; i++) {
    char err[300];
    reg_entry *e = reg_entry_remote(kind, json_object_array_get_idx(items, i),
                                    w->p, err, sizeof(err));
    if (e == NULL) {
      log_error("plugin \"%s\" (isolated): %s; skipped", w->p->name, err);
      continue;
    }
    if (registry_add(into, e) != 0) {
      log_error("plugin \"%s\" (isolated): %s \"%s\" is %s; skipped",
                w->p->name, reg_kind_name(kind), e->name,
                into == w->env->registry ? "taken by another plugin"
                                         : "listed twice");
      reg_entry_release(e);
    }
  }
  json_object_put(w->staged[kind]);
  w->staged[kind] = NULL;
}

/* Replaces the plugin's entries of `kind` by the listed ones. */
static void register_kind(worker *w, int kind) {
  remove_kind(w, kind);
  add_listed(w, w->env->registry, kind);
}

/* The listed items of every kind into the plugin's staging registry, for
 * loader_ready(). */
static void stage_all(worker *w) {
  for (int k = 0; k < REG_KINDS; k++)
    add_listed(w, &w->p->staged, k);
}

static void drop_staged(worker *w) {
  for (int k = 0; k < REG_KINDS; k++) {
    json_object_put(w->staged[k]);
    w->staged[k] = NULL;
  }
}

/* Asks for a page of `kind`; `relist` when the worker said it changed
 * (the first page of such a list counts in w->relisting until the last
 * one is in). */
static void list(worker *w, int kind, const char *cursor, int relist) {
  json_object *params = json_object_new_object();
  pending *q;
  if (cursor != NULL)
    json_object_object_add(params, "cursor", json_object_new_string(cursor));
  if ((q = request(w, P_LIST, list_methods[kind], params)) != NULL) {
    q->list_kind = kind;
    q->relist = relist;
    if (relist && cursor == NULL)
      w->relisting++;
  }
}

/* Hands on the answers held while lists were brought up to date. */
static void deliver_held(worker *w) {
  while (w->held_head != NULL) {
    held *h = w->held_head;
    w->held_head = h->next;
    if (w->held_head == NULL)
      w->held_tail = NULL;
    h->done(h->call, h->result, h->text, h->len, NULL);
    json_object_put(h->result);
    free(h->text);
    free(h);
  }
}

/* One relisted kind is complete (or failed): once none is left, the held
 * answers go on. */
static void relisted(worker *w) {
  if (w->relisting > 0 && --w->relisting == 0)
    deliver_held(w);
}

/* Holds a call's answer until the lists are up to date; 0, or -1 when out
 * of memory (then it is handed on at once). */
static int hold(worker *w, pending *q, const rpc_reply *r) {
  held *h = calloc(1, sizeof(*h));
  if (h == NULL ||
      (r->text != NULL && (h->text = malloc(r->len + 1)) == NULL)) {
    free(h);
    return -1;
  }
  if (r->text != NULL)
    memcpy(h->text, r->text, r->len);
  h->len = r->len;
  h->call = q->call;
  h->done = q->done;
  h->result = json_object_get(r->result);
  if (w->held_tail != NULL)
    w->held_tail->next = h;
  else
    w->held_head = h;
  w->held_tail = h;
  return 0;
}

/* The first start is over, one way or the other. */
static void settle(worker *w) {
  if (!w->started) {
    w->started = 1;
    if (w->env->started_cb != NULL)
      w->env->started_cb(w->env->report_arg);
  }
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
    list(w, kind, json_object_get_string(next), w->ready);
    return;
  }
  if (!w->ready && kind + 1 < REG_KINDS) {
    list(w, kind + 1, NULL, 0);
    return;
  }
  if (!w->ready) {
    if (!w->ever_ready) {
      /* The first time, the loader checks the entries against the other
       * plugins' and commits them as it does an in-process plugin's. */
      stage_all(w);
      if (loader_ready(w->p) != 0)
        return; /* refused: this worker is stopped */
      w->ever_ready = 1;
    } else {
      for (int k = 0; k < REG_KINDS; k++)
        register_kind(w, k);
    }
    w->ready = 1;
    worker_process_ready(&w->proc);
    settle(w);
    log_debug("plugin \"%s\": its worker (pid %d) is ready", w->p->name,
              w->proc.proc ? w->proc.proc->pid : 0);
  } else {
    register_kind(w, kind);
    w->env->changed_cb(w->env->report_arg);
    relisted(w);
    return;
  }
  w->env->changed_cb(w->env->report_arg);
}

/* --- receiving ---------------------------------------------------------- */

/* Initialized: the worker's log lines all come up (the host filters
 * them), and its offer is listed. */
static void initialized(worker *w, const rpc_reply *r) {
  json_object *params;
  if (r->error != NULL || r->result == NULL) {
    log_error("plugin \"%s\": its worker refused initialize", w->p->name);
    return;
  }
  notify(w, "notifications/initialized", NULL);
  params = json_object_new_object();
  json_object_object_add(params, "level", json_object_new_string("debug"));
  request(w, P_IGNORED, "logging/setLevel", params);
  list(w, 0, NULL, 0);
}

/* A request's answer, or its failure when the worker went away. */
static void reply_cb(rpc_entry *e, const rpc_reply *r) {
  pending *q = (pending *)e;

  switch (q->kind) {
  case P_CALL:
    q->w->calls--;
    spin.calls--;
    if (spin.calls > 0)
      spin_on(q->w->env->loop);
    if (!r->local && r->error == NULL &&
        (r->result != NULL || r->text != NULL)) {
      if (q->w->relisting == 0 || hold(q->w, q, r) != 0)
        q->done(q->call, r->result, r->text, r->len, NULL);
    } else
      q->done(q->call, NULL, NULL, 0, r->error);
    /* An unloaded plugin's worker ends once its last call is answered. */
    if (q->w->stopping && q->w->calls == 0)
      end_drained(q->w);
    break;
  case P_INIT:
    if (!r->local)
      initialized(q->w, r);
    break;
  case P_LIST:
    if (!r->local)
      listed(q->w, q->list_kind, r->result);
    else if (q->relist)
      relisted(q->w);
    break;
  case P_IGNORED:
    break;
  case P_BARRIER:
    q->barrier(q->call);
    break;
  }
  free(q);
}

/* Removes and returns `_meta["io.mcpd/related"]` of params as an id, or 0.
 * Params left empty by that are dropped, as `*params` NULL: the plugin
 * sent none. */
static uint64_t take_related(json_object **params) {
  json_object *rel = jsonrpc_meta_take(*params, "io.mcpd/related");
  if (rel != NULL && json_object_object_length(*params) == 0)
    *params = NULL;
  uint64_t id = json_object_is_type(rel, json_type_int)
                    ? (uint64_t)json_object_get_int64(rel)
                    : 0;
  json_object_put(rel);
  return id;
}

/* A list_changed of the worker's own: that kind is listed again. */
static int list_changed(worker *w, const char *method) {
  for (int k = 0; k < REG_KINDS; k++) {
    char name[64];
    snprintf(name, sizeof(name), "notifications/%s/list_changed",
             k == REG_TOOL     ? "tools"
             : k == REG_PROMPT ? "prompts"
                               : "resources");
    if (strcmp(method, name) == 0) {
      if (w->ready) {
        list(w, k, NULL, 1);
        if (k == REG_RESOURCE)
          list(w, REG_TEMPLATE, NULL, 1);
      }
      return 1;
    }
  }
  return 0;
}

/* params.KEY as a string, or NULL. */
static const char *param_string(json_object *params, const char *key) {
  json_object *v;
  return json_object_object_get_ex(params, key, &v) &&
                 json_object_is_type(v, json_type_string)
             ? json_object_get_string(v)
             : NULL;
}

/* The plugin's config and limits, for the worker that said its name. */
static void send_config(worker *w) {
  static const char *const keys[] = {"addressSpaceMiB", "cpuSeconds",
                                     "openFiles"};
  const plugin_settings *ps = w->env->opts->plugins;
  json_object *params = json_object_new_object(), *limits, *config;

  limits = json_object_new_object();
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
    uint64_t v = plugin_settings_limit(ps, w->p->name, keys[i]);
    if (v != 0)
      json_object_object_add(limits, keys[i],
                             json_object_new_int64((int64_t)v));
  }
  config = plugin_settings_config(ps, w->p->name);
  json_object_object_add(params, "config", json_object_get(config));
  json_object_object_add(params, "limits", limits);
  notify(w, WORKER_CONFIG, params);
}

/* The worker said which plugin it holds: the loader decides whether it
 * goes on; then its config, and MCP. */
static void hello(worker *w, json_object *params) {
  const char *name = param_string(params, "name");
  const char *version = param_string(params, "version");
  char why[400];

  if (name == NULL || version == NULL || w->said_hello) {
    snprintf(why, sizeof(why),
             "plugin \"%s\": its worker sent a malformed " WORKER_HELLO
             "; killing it",
             w->p->name);
    worker_process_kill(&w->proc, why);
    return;
  }
  w->said_hello = 1;
  if (!w->p->named) {
    if (loader_named(w->p, name, version,
                     param_string(params, "description")) != 0)
      return; /* the loader let go of this worker */
  } else if (strcmp(name, w->p->name) != 0) {
    snprintf(why, sizeof(why),
             "plugin \"%s\": its file now holds plugin \"%s\"; killing its "
             "worker until the file is reloaded",
             w->p->name, name);
    worker_process_kill(&w->proc, why);
    return;
  }
  send_config(w);
  start_mcp(w);
}

static void on_notification(worker *w, const char *method,
                            json_object *params) {
  uint64_t related = params ? take_related(&params) : 0;
  pending *q = NULL;

  if (strcmp(method, WORKER_REFUSED) == 0) {
    /* Why it cannot serve the plugin; its exit follows. */
    const char *reason = param_string(params, "reason");
    free(w->refused);
    w->refused = strdup(reason ? reason : "its worker refused it");
    return;
  }
  if (!w->said_hello) {
    /* Before MCP, only the first words (worker_hello.h). */
    if (!w->stopping && strcmp(method, WORKER_HELLO) == 0)
      hello(w, params);
    return;
  }
  if (w->stopping && related == 0)
    return;
  if (list_changed(w, method))
    return;
  if (related != 0 && (q = find_call(w, related)) == NULL)
    return; /* about a call that is over */
  w->env->notify_cb(w->env->arg, q ? q->call : NULL, w->p, method, params);
}

static void on_request(worker *w, json_object *id, const char *method,
                       json_object *params) {
  uint64_t related = params ? take_related(&params) : 0;
  pending *q = related ? find_call(w, related) : NULL;

  if (q != NULL) {
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

static void line_cb(void *ctx, char *line, size_t len, int oversize) {
  worker *w = ctx;
  json_object *msg, *method, *id;
  const char *why;

  /* Once it is being ended, only answers to calls and what it says about
   * them still count. */
  if (oversize) {
    log_error("plugin \"%s\": its worker sent a message over the size limit",
              w->p->name);
    return;
  }
  /* A call's answer as the worker writes it is checked and handed on as
   * text, with no tree built. */
  if (rpc_peer_line(&w->peer, line, len))
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
    rpc_peer_response(&w->peer, msg, line, len);
  }
  json_object_put(msg);
}

/* --- what the process tells ---------------------------------------------- */

/* A new process: the link starts over, and waits for the worker to say
 * which plugin it holds. */
static void spawned_cb(void *arg, uv_stream_t *to) {
  worker *w = arg;

  rpc_peer_set_stream(&w->peer, to);
  rpc_peer_restart_ids(&w->peer);
  w->said_hello = 0;
  free(w->refused);
  w->refused = NULL;
}

/* The worker has its config: MCP starts with initialize. */
static void start_mcp(worker *w) {
  json_object *params = json_object_new_object(), *caps, *info;

  caps = json_object_new_object();
  /* Everything a client may declare: each call brings its client's real
   * capabilities. */
  json_object_object_add(caps, "sampling", json_object_new_object());
  json_object_object_add(caps, "elicitation", json_object_new_object());
  json_object_object_add(caps, "roots", json_object_new_object());
  info = json_object_new_object();
  json_object_object_add(info, "name", json_object_new_string("mcpd-host"));
  json_object_object_add(info, "version",
                         json_object_new_string(PACKAGE_VERSION));
  /* The newest legacy revision: the worker is mcpd too. */
  json_object_object_add(params, "protocolVersion",
                         json_object_new_string(era_negotiate(NULL)));
  json_object_object_add(params, "capabilities", caps);
  json_object_object_add(params, "clientInfo", info);
  request(w, P_INIT, "initialize", params);
}

static void closing_cb(void *arg) {
  worker *w = arg;
  rpc_peer_set_stream(&w->peer, NULL);
}

/* The process is gone: every call in flight fails with `message` (or, if
 * the plugin was unloaded, with that), and its entries leave. */
static void exited_cb(void *arg, const char *message, json_object *data,
                      int stopping) {
  worker *w = arg;
  json_object *v;

  /* Answers it gave stand, whatever became of the lists. */
  w->relisting = 0;
  deliver_held(w);
  drop_staged(w);
  if (!stopping && !w->ever_ready) {
    /* It died loading the plugin: the file is refused until it changes
     * (the loader stops this worker), with the worker's reason if it
     * gave one. */
    char reason[400];
    if (w->refused != NULL)
      snprintf(reason, sizeof(reason), "%s", w->refused);
    else if (json_object_object_get_ex(data, "signal", &v))
      snprintf(reason, sizeof(reason),
               "its worker process was killed by signal %d (%s) while "
               "loading it",
               json_object_get_int(v), strsignal(json_object_get_int(v)));
    else
      snprintf(reason, sizeof(reason),
               "its worker process exited with status %d while loading it",
               json_object_object_get_ex(data, "exitStatus", &v)
                   ? json_object_get_int(v)
                   : -1);
    (void)message;
    loader_start_failed(w->p, reason);
    return;
  }
  settle(w);
  if (!stopping && w->stopping) {
    /* It died while its calls drained: they fail, and it stays down. */
    rpc_peer_fail_all(&w->peer, JSONRPC_INTERNAL_ERROR, message, data);
    end_drained(w);
    return;
  }
  if (stopping) {
    rpc_peer_fail_all(&w->peer, JSONRPC_INTERNAL_ERROR,
                      "the plugin was unloaded", data);
    return;
  }
  rpc_peer_fail_all(&w->peer, JSONRPC_INTERNAL_ERROR, message, data);
  if (w->ready) {
    registry_remove_owner(w->env->registry, w->p);
    w->env->changed_cb(w->env->report_arg);
  }
  w->ready = 0;
}

static void report_cb(void *arg, const char *message) {
  worker *w = arg;
  w->env->report_cb(w->env->report_arg, MCPD_LOG_ERROR, w->p->name, message);
}

/* Every handle of the process is closed: the worker is freed. */
static void gone_cb(void *arg) {
  worker *w = arg;
  for (worker **pp = &all_workers; *pp; pp = &(*pp)->next_all)
    if (*pp == w) {
      *pp = w->next_all;
      break;
    }
  w->relisting = 0;
  deliver_held(w);
  rpc_peer_fail_all(&w->peer, JSONRPC_INTERNAL_ERROR, "mcpd is exiting", NULL);
  rpc_peer_close(&w->peer);
  drop_staged(w);
  json_tokener_free(w->tok);
  free(w->refused);
  plugin_release(w->p);
  free(w);
  if (all_workers == NULL && all_gone_cb != NULL) {
    void (*cb)(void *) = all_gone_cb;
    all_gone_cb = NULL;
    cb(all_gone_arg);
  }
}

static const worker_process_events process_events = {
    .spawned = spawned_cb,
    .line = line_cb,
    .closing = closing_cb,
    .exited = exited_cb,
    .report = report_cb,
    .gone = gone_cb,
};

/* --- the public side ---------------------------------------------------- */

int worker_start(const worker_env *env, plugin *p) {
  worker *w = calloc(1, sizeof(*w));
  worker_process_events ev = process_events;
  char oom[160];

  snprintf(oom, sizeof(oom),
           "plugin \"%s\": out of memory writing to its worker", p->name);
  if (w == NULL || (w->tok = json_tokener_new_ex(JSONRPC_MAX_DEPTH)) == NULL ||
      rpc_peer_init(&w->peer, env->loop, NULL) != 0 ||
      rpc_peer_set_writer(&w->peer, WRITE_EARLY, oom) != 0) {
    if (w != NULL) {
      json_tokener_free(w->tok);
      rpc_peer_close(&w->peer);
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
  p->worker = w;
  ev.arg = w;
  if (worker_process_start(&w->proc, env->loop, env->opts, p, &ev) != 0) {
    p->worker = NULL;
    w->stopping = 1;
    worker_process_stop(&w->proc);
    return -1;
  }
  return 0;
}

void worker_stop(plugin *p) {
  worker *w = p->worker;
  if (w == NULL || w->stopping)
    return;
  settle(w);
  w->stopping = 1;
  /* Its calls in flight run to their end, as an in-process plugin's do
   * (their deadlines and cancellations still reach the worker); then it
   * gets EOF. */
  if (w->calls == 0)
    end_drained(w);
}

/* The unloaded plugin's worker has no call left: EOF, and SIGKILL if it
 * does not exit. */
static void end_drained(worker *w) {
  if (w->ended)
    return;
  w->ended = 1;
  if (w->p->worker == w)
    w->p->worker = NULL;
  worker_process_stop(&w->proc);
}

void worker_shutdown(void (*done)(void *arg), void *arg) {
  if (spin.loop != NULL && !uv_is_closing((uv_handle_t *)&spin.idle))
    uv_close((uv_handle_t *)&spin.idle, NULL);
  spin.loop = NULL;
  all_gone_cb = done;
  all_gone_arg = arg;
  if (all_workers == NULL) {
    all_gone_cb = NULL;
    done(arg);
    return;
  }
  for (worker *w = all_workers, *next; w; w = next) {
    next = w->next_all;
    if (w->p->worker == w)
      w->p->worker = NULL;
    w->stopping = 1;
    settle(w);
    w->relisting = 0;
    deliver_held(w);
    rpc_peer_fail_all(&w->peer, JSONRPC_INTERNAL_ERROR, "mcpd is exiting",
                      NULL);
    /* Its write queue's handle closes now, before the server's uv_walk. */
    rpc_peer_close(&w->peer);
    worker_process_end(&w->proc);
  }
}

void worker_kill_all(void) {
  for (worker *w = all_workers; w; w = w->next_all)
    worker_process_kill_now(&w->proc);
}

int worker_call(plugin *p, const char *method, const char *params, size_t len,
                void *call, worker_done_fn done, uint64_t *id) {
  worker *w = p->worker;
  pending *q;

  if (w == NULL || !w->ready || w->stopping ||
      !worker_process_running(&w->proc) || (q = calloc(1, sizeof(*q))) == NULL)
    return -1;
  q->w = w;
  q->kind = P_CALL;
  q->call = call;
  q->done = done;
  q->entry.text_ok = 1;
  /* Written as text: the hot path builds no tree. */
  if (rpc_peer_request_text(&w->peer, &q->entry, reply_cb, method, params,
                            len) != 0) {
    free(q);
    return -1;
  }
  w->calls++;
  spin.calls++;
  spin_on(w->env->loop);
  *id = q->entry.n;
  return 0;
}

static void grace_cb(rpc_entry *e) {
  worker *w = ((pending *)e)->w;
  char why[300];
  snprintf(why, sizeof(why),
           "plugin \"%s\": a call ignored its cancellation; killing the "
           "worker",
           w->p->name);
  worker_process_kill(&w->proc, why);
}

void worker_cancel(plugin *p, uint64_t id, uint64_t grace_ms) {
  worker *w = p->worker;
  pending *q;
  json_object *params;
  if (w == NULL || (q = (pending *)rpc_peer_find(&w->peer, id)) == NULL)
    return;
  params = json_object_new_object();
  json_object_object_add(params, "requestId",
                         json_object_new_int64((int64_t)id));
  json_object_object_add(params, "reason", json_object_new_string("cancelled"));
  notify(w, "notifications/cancelled", params);
  if (grace_ms > 0)
    rpc_peer_set_timeout(&w->peer, &q->entry, grace_ms, grace_cb);
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
  rpc_peer_send(&w->peer, msg);
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

int worker_barrier(plugin *p, void (*cb)(void *arg), void *arg) {
  worker *w = p->worker;
  pending *q;
  if (w == NULL || !w->ready || w->stopping ||
      (q = request(w, P_BARRIER, "ping", NULL)) == NULL)
    return -1;
  q->barrier = cb;
  q->call = arg;
  return 0;
}

void worker_roots_changed(plugin *p) {
  worker *w = p->worker;
  if (w != NULL && w->ready)
    notify(w, "notifications/roots/list_changed", NULL);
}
