/* server.h -- the process-wide state that the loop thread owns.
 *
 * One server per process: options, the registry, the loader, the sessions,
 * and the host queue through which worker threads hand results, progress,
 * logs and registry changes back to the loop. */
#ifndef MCPD_SERVER_H
#define MCPD_SERVER_H

#include <uv.h>

#include "loader.h"
#include "options.h"
#include "registry.h"

struct session;
struct mcpd_call;

typedef enum hostq_type {
  HOSTQ_COMPLETE,   /* an asynchronous call completed */
  HOSTQ_NOTIFY,     /* notifications/progress for `call` */
  HOSTQ_LOG,        /* notifications/message for every session */
  HOSTQ_ADD_TOOL,   /* register `tool` for `plugin` */
  HOSTQ_REMOVE_TOOL /* unregister `name` of `plugin` */
} hostq_type;

typedef struct hostq_event {
  struct hostq_event *next;
  hostq_type type;
  struct mcpd_call *call;
  struct plugin *plugin;
  json_object *msg;
  reg_tool *tool;
  char *name;
  int level;
} hostq_event;

typedef struct server {
  uv_loop_t *loop;
  uv_thread_t loop_thread;
  options *opts;
  registry registry;
  loader loader;
  struct session *session; /* the stdio session */

  uv_mutex_t queue_lock;
  hostq_event *queue_head;
  hostq_event *queue_tail;
  uv_async_t queue_async;

  uv_timer_t announce_timer; /* batches list_changed notifications */
  uv_signal_t sig_term;
  uv_signal_t sig_int;
  uv_signal_t sig_hup;
  uv_timer_t parent_timer; /* exits when the launching process dies */
  uv_timer_t shutdown_timer;
  int parent_pid;

  struct stdio_transport *stdio;
  struct watch *watch;

  unsigned calls_in_flight;
  int shutting_down;
  int shutdown_stage;
  int exit_hard; /* calls still run on threads: skip unloading at exit */
} server;

int server_init(server *srv, uv_loop_t *loop, options *opts);
/* Starts signals and the parent watchdog, loads plugins and starts
 * watching their directories (unless `serve` is 0: --list and --call). */
int server_start(server *srv, int serve);
/* Orderly shutdown: stop input, let calls in flight finish (bounded), flush,
 * unload, close every handle.  Safe to call more than once. */
void server_shutdown(server *srv, const char *why);
/* Called by call.c when the last call in flight ended. */
void server_calls_drained(server *srv);
void server_free(server *srv);

/* Whether the current thread is the loop thread. */
int server_on_loop(server *srv);

/* Queues an event from any thread and wakes the loop. */
void server_post(server *srv, hostq_event *ev);
/* Runs every queued event now (loop thread only). */
void server_drain(server *srv);

/* Notes a registry change; list_changed goes out once per batch. */
void server_registry_changed(server *srv);
/* Sends notifications/message to sessions that asked for `level`. */
void server_log_to_clients(server *srv, int level, const char *logger,
                           const char *text);

#endif
