/* SPDX-License-Identifier: MIT */
/* call.h -- plugin calls in flight (tool calls, resource reads, prompt
 * gets, completions) as the rest of mcpd sees them: the executor a server
 * owns, what starting a call needs, and the entry points of the call
 * room.  The room, lowest first (src/layers.txt): call_core.c (a call's
 * life: start, finish, cancel, its events), plugin_api.c (what a plugin
 * does for itself: logs, run-time entries), schedule.c (pool share,
 * deadlines), result.c (builders, checks, the answer's text), ask.c
 * (requests to the client, progress, input_required), remote.c (calls
 * forwarded to isolated workers) and host_api.c (the table plugins call,
 * and which module hears which event of a call).
 *
 * A call holds a reference on its entry and its plugin, so neither goes
 * away while the callback runs.  Whatever thread the callback runs on, the
 * response is written from the loop thread: work other threads hand back
 * goes through the executor's host queue, in order, so progress a tool
 * reported always precedes its response. */
#ifndef MCPD_CALL_H
#define MCPD_CALL_H

#include <stdatomic.h>
#include <stdint.h>

#include <json-c/json.h>
#include <uv.h>

#include "hostq.h"
#include "request_state.h"

struct call_hooks;
struct mcpd_call;
struct mcpd_host;
struct plugin;
struct plugin_settings;
struct reg_entry;
struct request;
struct worker_env;

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
                 struct request *r);
  /* How long a plugin's request to the client waits for its answer. */
  uint64_t request_timeout_ms;
  /* Where each call's deadline comes from (plugin_settings_deadline);
   * NULL for none. */
  const struct plugin_settings *opts;
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
  /* Set by call_exec_init(): which module of the room hears which event
   * of a call, and the table plugins get in each call's request. */
  const struct call_hooks *hooks;
  const struct mcpd_host *host;
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
  struct reg_entry *entry;
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

int call_exec_init(call_exec *e, uv_loop_t *loop);
/* Runs what is still queued and closes the queue's handle. */
void call_exec_close(call_exec *e);
/* A session asked for log messages at `level` and above. */
void call_exec_want_logs(call_exec *e, int level);

/* At exit: a call that ignored cancellation gets its client's error
 * answer now (naming the plugin and what ran), since it will not end. */
void call_abandon(struct mcpd_call *c);

/* Starts a call for request `r`; the request is answered when it ends. */
void call_start(call_exec *e, struct request *r, const call_args *a);
/* The worker_env for isolated plugins: forwards what workers say about
 * calls to the calls' clients. */
void call_worker_env(call_exec *e, struct worker_env *env);

/* Tells entry `e` (a resource or template) that `uri` gained its first
 * subscriber or lost its last: runs the plugin's subscribe callback, if
 * any, on this (the loop) thread.  `e` must still be registered. */
void call_subscribe(struct reg_entry *e, const char *uri, int subscribed);
/* Once what call_subscribe() told `e`'s plugin has taken effect: cb(arg)
 * runs when its worker has handled it (0), or never, when it took effect
 * already (-1: in-process, or no worker running). */
int call_subscribe_settled(struct reg_entry *e, void (*cb)(void *arg),
                           void *arg);
/* Cancels a call (the client asked, or shutdown): cancelled() turns true
 * and the plugin's on_cancel callback runs.  When the client cancelled,
 * the caller also marks the request so that no response goes out. */
void call_cancel(struct mcpd_call *call);

/* A client's roots changed: runs each plugin's on_roots_changed
 * callback (loop thread). */
void call_roots_changed(struct plugin *p);

/* The entry a call serves (a reference held by the call), and a modern
 * retry's answers it runs with (NULL for none): what a task made from it
 * needs (loop thread). */
struct reg_entry *call_entry(const struct mcpd_call *c);
json_object *call_retry_answers(const struct mcpd_call *c);

/* The table handed to every plugin's init(). */
extern const struct mcpd_host call_host_api;

#endif
