/* SPDX-License-Identifier: MIT */
/* worker_link.h -- isolated plugins: each runs in a worker process, mcpd
 * itself re-executed with --worker, which serves that one plugin over MCP
 * on a pair of pipes (worker_process.c runs that process).
 *
 * The host side here speaks to the worker as a client, over an rpc_peer
 * (its outgoing ids, correlation and write queue): it lists what the
 * plugin offers into the registry (entries marked `remote`, owned by the
 * plugin), forwards calls, and hands up what comes back about them
 * (progress, log lines, requests to the client).  When the worker dies,
 * every call in flight gets an error naming the plugin and the signal or
 * status, its entries leave the registry, and it is restarted with
 * backoff -- or parked, if it keeps crashing.
 *
 * On the wire, beyond plain MCP: a forwarded request carries
 * `_meta["io.mcpd/client"]` (the real client's capabilities and roots);
 * what the worker sends about a request (progress included) carries
 * `_meta["io.mcpd/related"]`, the forwarded request's id; and a request
 * the host cancelled is still answered, once the plugin stopped, so that
 * the call ends here (the host drops the answer if its client
 * cancelled). */
#ifndef MCPD_WORKER_LINK_H
#define MCPD_WORKER_LINK_H

#include <stdint.h>

#include <json-c/json.h>
#include <uv.h>

#include "loader.h"
#include "registry.h"
#include "worker_process.h"
#include "worker_settings.h"

typedef struct worker worker;

/* What the owner (remote.c, the server) hears.  `call` is the opaque value
 * given to worker_call(), or NULL for messages about no call. */
typedef struct worker_env {
  uv_loop_t *loop;
  registry *registry;
  const worker_settings *opts;
  /* The registry changed: announce list_changed. */
  void (*changed_cb)(void *arg);
  /* A notification from the worker (progress, a log line, ...), its
   * params without the io.mcpd keys; borrowed. */
  void (*notify_cb)(void *arg, void *call, plugin *p, const char *method,
                    json_object *params);
  /* A request from the worker for the client (sampling, elicitation,
   * roots); answer it with worker_answer(p, id, ...). */
  void (*request_cb)(void *arg, void *call, plugin *p, json_object *id,
                     const char *method, json_object *params);
  /* Something about the worker itself worth telling every client. */
  void (*report_cb)(void *arg, int level, const char *logger, const char *text);
  /* Once per worker_start(): the worker is ready, or its first start
   * failed. */
  void (*started_cb)(void *arg);
  void *arg;        /* for notify_cb and request_cb */
  void *report_arg; /* for changed_cb and report_cb */
} worker_env;

/* worker_set_program() (worker_process.h) names the program to run. */

/* Starts `p`'s worker; its entries appear in the registry once it has
 * listed them.  Returns 0, or -1 after logging why. */
int worker_start(const worker_env *env, plugin *p);
/* Ends `p`'s worker (the plugin is unloaded): calls in flight get an
 * error, the process gets EOF and, after a grace period, SIGKILL. */
void worker_stop(plugin *p);

/* At exit: ends every worker (EOF and SIGTERM, SIGKILL after a short
 * grace); `done` runs once all are gone and their handles closed, at
 * once when there are none. */
void worker_shutdown(void (*done)(void *arg), void *arg);
/* When mcpd exits without waiting: every worker killed and reaped now. */
void worker_kill_all(void);

/* What a forwarded call's done() gets (all borrowed): an `error`, or a
 * result as a tree (`result`), as text (`text`, `len` bytes, not
 * NUL-terminated), or both.  The text is the result as the worker wrote
 * it, one line that passed jsonrpc_parse() or jsonrpc_skip_value() and
 * utf8_valid(): JSON the host may pass on as it is.  With no tree, the
 * caller checks the result's shape on the text, or parses it. */
typedef void (*worker_done_fn)(void *call, json_object *result,
                               const char *text, size_t len,
                               json_object *error);

/* Forwards `method` with `params`, a JSON object as text (`len` bytes,
 * copied), for `call`; done() runs exactly once on the loop, unless this
 * returns -1 (the worker is not ready).  *id gets the forwarded request
 * id. */
int worker_call(plugin *p, const char *method, const char *params, size_t len,
                void *call, worker_done_fn done, uint64_t *id);
/* The call was cancelled: the worker is told, and answers once its call
 * stopped; done() runs then.  With `grace_ms`, a worker that has not
 * answered by then is killed (and restarted), and done() gets the error. */
void worker_cancel(plugin *p, uint64_t id, uint64_t grace_ms);
/* Answers request `id` of the worker (result or error taken over). */
void worker_answer(plugin *p, json_object *id, json_object *result,
                   json_object *error);
/* The first subscriber to `uri` came, or the last one left. */
void worker_subscribe(plugin *p, const char *uri, int subscribed);
/* cb(arg) runs once the worker handled everything sent to it so far (or
 * died); -1 when it is not running (cb never runs). */
int worker_barrier(plugin *p, void (*cb)(void *arg), void *arg);
/* A client's roots changed. */
void worker_roots_changed(plugin *p);

#endif
