/* call.h -- plugin calls in flight (tool calls, resource reads, prompt
 * gets, completions) and the host table plugins call (struct mcpd_host):
 * where a callback runs, the result it builds, progress, cancellation,
 * completion, logs and run-time entries.
 *
 * A call holds a reference on its entry and its plugin, so neither goes
 * away while the callback runs.  Whatever thread the callback runs on, the
 * response is written from the loop thread: work other threads hand back
 * goes through the executor's host queue, in order, so progress a tool
 * reported always precedes its response. */
#ifndef MCPD_CALL_H
#define MCPD_CALL_H

#include <stdatomic.h>

#include <json-c/json.h>
#include <uv.h>

#include "hostq.h"
#include "mcpd.h"
#include "plugin_settings.h"
#include "registry.h"
#include "request_state.h"
#include "session.h"
#include "strbuf.h"
#include "worker_link.h"

struct plugin;

/* What calls run on; one per server, owned by it. */
typedef struct call_exec {
  uv_loop_t *loop;
  hostq queue;
  unsigned in_flight; /* calls started and not finished (loop thread) */
  /* The lowest MCP log level any session asked for, or 8 for none: a hint
   * that spares queueing log lines nobody wants.  Only ever lowered. */
  atomic_int log_floor;
  /* Runs on the loop thread when in_flight drops to zero. */
  void (*drained_cb)(void *arg);
  /* Runs on the loop thread for each plugin log line worth sending.  `r`
   * is the request whose call wrote it from its callback, or NULL for a
   * line of the plugin's own (a thread, init). */
  void (*log_cb)(void *arg, int level, const char *logger, const char *text,
                 request *r);
  /* How long a plugin's request to the client waits for its answer. */
  uint64_t request_timeout_ms;
  /* Where each call's deadline comes from (plugin_settings_deadline);
   * NULL for none. */
  const plugin_settings *opts;
  /* POOL calls of one plugin running at once; more wait their turn, so
   * one plugin cannot take every worker thread. */
  unsigned pool_cap;
  /* Runs on the loop thread when a plugin reports that the resource at
   * `uri` changed. */
  void (*updated_cb)(void *arg, const char *uri);
  /* Worker mode: a request's params._meta["io.mcpd/client"], written by
   * the host, tells what the real client declared ("capabilities") and
   * its roots ("roots"), in place of this session's.  Never set for a
   * server of clients, who must not speak for one another. */
  int worker;
  /* What seals the requestState of input_required results (the owner
   * fills it: stateKeyFile, or random) and how long one stays valid. */
  unsigned char state_key[REQUEST_STATE_KEY_SIZE];
  uint64_t state_ttl_ms;
  /* Every call's deadline, soonest first, and one timer for the soonest:
   * a call costs no timer of its own (loop thread). */
  struct mcpd_call *deadlines, *deadlines_tail;
  uv_timer_t deadline_timer;
  void *arg;
} call_exec;

/* What a call serves, and so which callback runs and what result shape
 * the client gets. */
typedef enum call_kind {
  CALL_TOOL,    /* tools/call: CallToolResult */
  CALL_READ,    /* resources/read: {contents} */
  CALL_PROMPT,  /* prompts/get: {description, messages} */
  CALL_COMPLETE /* completion/complete: {completion} */
} call_kind;

/* What call_start() needs; the json-c objects are borrowed (a call takes
 * its own reference or, off the loop, its own copy). */
typedef struct call_args {
  call_kind kind;
  reg_entry *entry;
  /* The tool or prompt name, the URI read, or the template or prompt a
   * completion is for. */
  const char *name;
  json_object *arguments; /* tools and prompts; completion: the context */
  json_object *variables; /* reads through a template; may be NULL */
  const char *argument;   /* completion: the argument's name ... */
  const char *value;      /* ... and what the user typed */
  /* A modern retry: the client's answers to earlier inputRequests, by
   * input key (its inputResponses merged over those its requestState
   * carried), or NULL.  What the plugin asks its client is answered from
   * here; anything else makes the result input_required. */
  json_object *answers;
} call_args;

/* The plugin never sees this struct: its `mcpd_call *` is a handle (see
 * handles.h) that the host table resolves, so a call used after it
 * finished is refused, not dereferenced. */
struct mcpd_call {
  call_exec *exec;
  uintptr_t handle;
  request *req; /* answered when the call ends */
  call_kind kind;
  reg_entry *entry;
  struct plugin *plugin;
  char *name;             /* call_args.name, owned */
  json_object *args;      /* arguments (completion: context), owned */
  json_object *variables; /* owned, may be NULL */
  json_object *meta;      /* params._meta, owned, may be NULL */
  char *argument;         /* completion */
  char *value;            /* completion */
  strbuf content;         /* content blocks (or contents, or messages, or
                             completion values) as JSON text, comma-joined */
  size_t n_blocks;
  json_object *structured;  /* structuredContent */
  json_object *replacement; /* result_json(), or the worker's result */
  /* The worker's result as it wrote it, until build_text() takes it, and
   * whether `replacement` came from a worker: parsed by jsonrpc_parse(),
   * so JSON that needs no second check. */
  strbuf remote_text;
  int remote_checked;
  int is_error;
  int bad_result;       /* a builder was misused */
  const char *role;     /* prompts: of the next message */
  size_t total;         /* completion_total() */
  int has_more;         /* completion_total() */
  int fail_code;        /* fail(): answer this JSON-RPC error */
  char *fail_message;   /* fail() */
  mcpd_request request; /* what the callback receives */
  /* What the client declared (CLIENT_* bits) and its roots as JSON text,
   * copied at the start so any thread may read them. */
  unsigned client_caps;
  char *roots;
  /* A 2026-07-28 request: the capabilities above are its envelope's, it
   * has no roots, and the call may not ask its client anything. */
  int modern;
  /* CLIENT_* bits the call asked the client for and the modern request
   * did not declare: a call that then fails answers -32021 naming them.
   * Written with the handle's slot locked or on the loop. */
  unsigned missing_caps;
  struct client_ask *asks; /* requests to the client in flight (loop) */
  /* Input required (modern tools/call, resources/read, prompts/get): the
   * answers this run may use (a private copy, read-only while the call
   * runs); the requests it made that had no answer yet (key -> {method,
   * params}) and the keys of the answers it used, for the input_required
   * result and its requestState; how often each request was made (key ->
   * count).  The last three are written with the handle's slot locked and
   * read on the loop once the call completed. */
  json_object *answers;
  json_object *inputs;
  json_object *used;
  json_object *asked;
  /* mcpd_host.on_cancel(); written and read with the handle's slot
   * locked, run on the loop thread. */
  void (*cancel_cb)(void *arg);
  void *cancel_arg;
  atomic_int cancel_running; /* the loop is inside cancel_cb */
  double last_progress;
  /* The deadline, in the exec's list of them (loop thread): loop time
   * in ms when it passes, 0 for none. */
  uint64_t deadline_due;
  uint64_t deadline_ms;
  struct mcpd_call *deadline_prev, *deadline_next;
  int pool_waiting;   /* in its plugin's queue for a thread */
  uint64_t remote_id; /* forwarded to its plugin's worker, until answered */
  int deadline_passed;
  json_object *fail_data; /* fail(): the error's data, owned, may be NULL */
  struct mcpd_call *pool_next; /* that queue */
  int status;
  atomic_int cancelled;
  atomic_int completed;
  uv_work_t work;
};

int call_exec_init(call_exec *e, uv_loop_t *loop);
/* Runs what is still queued and closes the queue's handle. */
void call_exec_close(call_exec *e);
/* A session asked for log messages at `level` and above. */
void call_exec_want_logs(call_exec *e, int level);

/* At exit: a call that ignored cancellation gets its client's error
 * answer now (naming the plugin and what ran), since it will not end. */
void call_abandon(mcpd_call *c);

/* Starts a call for request `r`; the request is answered when it ends. */
void call_start(call_exec *e, request *r, const call_args *a);
/* The worker_env for isolated plugins: forwards what workers say about
 * calls to the calls' clients. */
void call_worker_env(call_exec *e, worker_env *env);

/* Tells entry `e` (a resource or template) that `uri` gained its first
 * subscriber or lost its last: runs the plugin's subscribe callback, if
 * any, on this (the loop) thread.  `e` must still be registered. */
void call_subscribe(reg_entry *e, const char *uri, int subscribed);
/* Cancels a call (the client asked, or shutdown): cancelled() turns true
 * and the plugin's on_cancel callback runs.  When the client cancelled,
 * the caller also marks the request so that no response goes out. */
void call_cancel(struct mcpd_call *call);

/* A client's roots changed: runs each plugin's on_roots_changed
 * callback (loop thread). */
void call_roots_changed(struct plugin *p);

/* The table handed to every plugin's init(). */
extern const mcpd_host call_host_api;

#endif
