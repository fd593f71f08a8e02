/* SPDX-License-Identifier: MIT */
/* worker_process.h -- the process of an isolated plugin: mcpd itself,
 * re-executed with --worker, serving that one plugin on a pair of pipes.
 *
 * This module spawns it with the plugin's limits and config, reads the
 * lines it writes, notices its exit, restarts it with backoff or parks it
 * when it keeps crashing, and ends it.  It knows nothing of JSON-RPC: its
 * owner (worker_link) hears of each new process, each line and each exit
 * through the callbacks below, and writes to the stream it is given. */
#ifndef MCPD_WORKER_PROCESS_H
#define MCPD_WORKER_PROCESS_H

#include <stdint.h>

#include <json-c/json.h>
#include <uv.h>

#include "framer.h"
#include "loader.h"
#include "worker_settings.h"

/* What the owner hears, all on the loop thread, with `arg`. */
typedef struct worker_process_events {
  /* A new process runs; what it is told goes to `to` (its stdin). */
  void (*spawned)(void *arg, uv_stream_t *to);
  /* One line it wrote, without the newline (framer_cb's contract). */
  framer_cb line;
  /* Its pipes close: from now on nothing written reaches it. */
  void (*closing)(void *arg);
  /* It exited.  `message` names the plugin and the signal or status;
   * `data` ({"plugin", "signal" or "exitStatus"}) is borrowed.  `stopping`
   * is nonzero when it was being ended; otherwise a restart or parking
   * follows this call. */
  void (*exited)(void *arg, const char *message, json_object *data,
                 int stopping);
  /* Something about the process worth telling every client. */
  void (*report)(void *arg, const char *message);
  /* After worker_process_stop() or _end(), the process and its pipes
   * are gone: the owner may free the struct (this runs inside whatever
   * call of this module found so, which touches `wp` no more). */
  void (*gone)(void *arg);
  void *arg;
} worker_process_events;

/* One plugin's process, embedded in its owner.  The fields are private. */
typedef struct worker_process {
  worker_process_events ev;
  uv_loop_t *loop;
  const worker_settings *opts;
  plugin *p; /* borrowed: the owner holds a reference */
  uv_process_t *proc;
  uv_pipe_t *pipe;  /* its stdout: what it says */
  uv_pipe_t *wpipe; /* its stdin: what we say (pipes are quicker than a
                       socketpair for this ping-pong) */
  framer in;
  int alive;    /* the process runs */
  int stopping; /* it is being ended for good */
  int parked;
  int gone;              /* ev.gone ran */
  int exiting;           /* inside ev.exited: not gone before it returns */
  int ending;            /* worker_process_end(): mcpd exits */
  unsigned crashes;      /* in the current window */
  uint64_t window_start; /* of that window */
  uv_timer_t *restart;   /* backoff, the start timeout, or the kill at stop */
} worker_process;

/* Where every worker's program is: this very mcpd, once per process. */
void worker_set_program(const char *path);

/* Sets `wp` up and spawns the first process.  Returns 0, or -1 after
 * logging why; then call worker_process_stop() to let go of it. */
int worker_process_start(worker_process *wp, uv_loop_t *loop,
                         const worker_settings *opts, plugin *p,
                         const worker_process_events *ev);
/* The process is ready: its start timeout is off. */
void worker_process_ready(worker_process *wp);
/* Nonzero while a process runs and its stdin is open. */
int worker_process_running(const worker_process *wp);
/* Kills the process now (it is restarted, as after a crash), after
 * logging `why` (a complete message) at error level. */
void worker_process_kill(worker_process *wp, const char *why);
/* Ends it for good: EOF on its stdin, so that it answers the calls it
 * has and exits (what it writes until then still reaches ev.line), and
 * SIGKILL after a grace period; ev.gone runs once everything is closed. */
void worker_process_stop(worker_process *wp);
/* At exit: EOF and SIGTERM now, SIGKILL after a short grace; ev.gone
 * runs once it exited and its handles are closed. */
void worker_process_end(worker_process *wp);
/* When mcpd cannot wait (a call is stuck in its own process): SIGKILL,
 * and the process reaped before this returns.  Its handles stay. */
void worker_process_kill_now(worker_process *wp);

#endif
