/* SPDX-License-Identifier: MIT */
/* server.h -- the top of the host: one server per process, owning the
 * registry, the loader, the executor of calls, the set of sessions, the
 * plugin-directory watch, signals and orderly shutdown.
 *
 * Everything below reports to the server through callbacks it registered:
 * the loader when the registry changed, the executor when the last call
 * ended or a plugin logged, the transports when input ended, the watch
 * when a plugin directory changed.  A transport asks the server for a
 * session per client; every change a client should hear about goes to
 * each session by that session's own rules. */
#ifndef MCPD_SERVER_H
#define MCPD_SERVER_H

#include <uv.h>

#include "call.h"
#include "loader.h"
#include "methods.h"
#include "registry.h"
#include "session.h"
#include "transport_stdio.h"
#include "watch.h"
#include "worker_link.h"

/* All the settings (settings.h): the server hands each owner its part and
 * reads the rest itself.  Only main() and this file need the whole. */
struct settings;

struct strbuf;

typedef struct server {
  uv_loop_t *loop;
  struct settings *opts;
  registry registry;
  loader loader;
  call_exec exec;
  methods_ctx methods;
  worker_env workers; /* for isolated plugins */

  session **sessions; /* every open session, any transport */
  size_t n_sessions;
  size_t cap_sessions;

  uv_timer_t announce_timer; /* batches list_changed notifications */
  uv_signal_t sig_term;
  uv_signal_t sig_int;
  uv_signal_t sig_hup;
  uv_timer_t parent_timer; /* exits when the launching process dies */
  uv_timer_t shutdown_timer;
  int parent_pid;
  /* The system ends this process when its parent dies
   * (platform_die_with_parent); else a worker hears it on its pipe. */
  int parent_signals;

  stdio_transport *stdio;
  session *stdio_session;
  /* The HTTP endpoint (server_http.c, only in mcpd-http), reached through
   * two hooks so that mcpd without HTTP links none of it. */
  void *http;
  void (*http_refuse)(void *http);
  void (*http_close)(void *http, void (*done)(void *arg), void *arg, int now);
  int closing_outputs;       /* transports still flushing at shutdown */
  int input_held;            /* stdin waits for the plugins to load */
  unsigned workers_starting; /* isolated plugins not ready yet */
  int settled;               /* the first scan's plugins all started */
  unsigned told_host; /* worker mode: REGISTRY_CHANGED bits said already */
  int input_failed;   /* reading stdin failed: exit nonzero */
  uv_timer_t hold_timer;
  uv_idle_t spin;      /* worker mode: polls a while after a message */
  uint64_t spin_until; /* uv_hrtime() */
  watch *watch;

  int catching; /* signals and the parent are watched */
  int shutting_down;
  int shutdown_stage;
  int exit_hard; /* calls still run on threads: skip unloading at exit */
} server;

int server_init(server *srv, uv_loop_t *loop, struct settings *opts);

/* Readiness (/readyz): the plugins of the first scan are loaded and no
 * worker is starting.  Returns 1, or 0 with a short reason in `why` that
 * names nothing of a client's. */
int server_ready(server *srv, char *why, size_t size);
/* The metrics page (/metrics): metrics.h's families, then the gauges the
 * server reads now: calls in flight, plugins, workers starting, sessions
 * by era and identity class, tasks by status, memory and open files. */
void server_metrics(server *srv, struct strbuf *out);
/* Loads the plugins.  With `serve`, also starts signals, the parent
 * watchdog and the watch on plugin directories (--list and --call pass
 * 0).  In worker mode it sets the resource limits and loads the one
 * plugin instead; -1 when either fails (the reason was logged). */
int server_start(server *srv, int serve);
/* Starts the handling of SIGTERM, SIGINT, SIGHUP and the parent's death;
 * server_start(srv, 1) does it too.  Called before serving, so that no
 * signal finds mcpd listening without a handler. */
void server_catch_signals(server *srv);
/* Runs the loop until every isolated plugin's worker is ready (at most
 * 5 s): for --list and --call, which do not serve. */
void server_wait_plugins(server *srv);
/* Serves one client on stdin/stdout until input ends. */
int server_serve_stdio(server *srv);

/* Opens a session whose messages go to `write(ctx, ...)`.  The caller
 * feeds it with session_handle_line() and closes it with
 * server_close_session() (or leaves that to shutdown). */
session *server_open_session(server *srv, session_write_fn write, void *ctx);
void server_close_session(server *srv, session *s);

/* Orderly shutdown: stop input, let calls in flight finish (bounded), flush,
 * unload, close every handle; uv_run() then returns.  Safe to call more
 * than once. */
void server_shutdown(server *srv, const char *why);
void server_free(server *srv);

#endif
