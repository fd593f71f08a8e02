/* server.c -- process-wide state, the host queue, and orderly shutdown. */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_PRCTL
#include <sys/prctl.h>
#endif

#include "call.h"
#include "jsonrpc.h"
#include "log.h"
#include "methods.h"
#include "server.h"
#include "session.h"
#include "transport_stdio.h"
#include "watch.h"

/* How long calls in flight may run after input ended, then how long they
 * get to notice cancellation, then how long stdout gets to drain.  Together
 * they keep exit within about a second. */
#define SHUTDOWN_GRACE_MS 600
#define SHUTDOWN_CANCEL_MS 150
#define SHUTDOWN_FLUSH_MS 150

static void queue_async_cb(uv_async_t *handle) {
  server_drain(handle->data);
}

static void announce_cb(uv_timer_t *timer) {
  server *srv = timer->data;
  unsigned changed = srv->registry.changed;
  srv->registry.changed = 0;
  if (srv->session == NULL || srv->shutting_down)
    return;
  if (changed & REGISTRY_TOOLS)
    session_notify(srv->session, "notifications/tools/list_changed", NULL);
}

int server_init(server *srv, uv_loop_t *loop, options *opts) {
  memset(srv, 0, sizeof(*srv));
  srv->loop = loop;
  srv->loop_thread = uv_thread_self();
  srv->opts = opts;
  if (registry_init(&srv->registry) != 0)
    return -1;
  if (uv_mutex_init(&srv->queue_lock) != 0)
    return -1;
  uv_async_init(loop, &srv->queue_async, queue_async_cb);
  srv->queue_async.data = srv;
  uv_timer_init(loop, &srv->announce_timer);
  srv->announce_timer.data = srv;
  uv_timer_init(loop, &srv->shutdown_timer);
  srv->shutdown_timer.data = srv;
  uv_timer_init(loop, &srv->parent_timer);
  srv->parent_timer.data = srv;
  uv_signal_init(loop, &srv->sig_term);
  uv_signal_init(loop, &srv->sig_int);
  uv_signal_init(loop, &srv->sig_hup);
  srv->sig_term.data = srv->sig_int.data = srv->sig_hup.data = srv;
  if (loader_init(&srv->loader, srv) != 0)
    return -1;
  return 0;
}

int server_on_loop(server *srv) {
  uv_thread_t self = uv_thread_self();
  return uv_thread_equal(&self, &srv->loop_thread);
}

void server_post(server *srv, hostq_event *ev) {
  ev->next = NULL;
  uv_mutex_lock(&srv->queue_lock);
  if (srv->queue_tail)
    srv->queue_tail->next = ev;
  else
    srv->queue_head = ev;
  srv->queue_tail = ev;
  uv_mutex_unlock(&srv->queue_lock);
  uv_async_send(&srv->queue_async);
}

static void handle_event(server *srv, hostq_event *ev) {
  switch (ev->type) {
  case HOSTQ_COMPLETE:
    call_finish(ev->call, ev->level);
    break;
  case HOSTQ_NOTIFY: {
    request *r = ev->call->req;
    if (r != NULL && !r->cancelled && r->session != NULL) {
      session_notify(r->session, "notifications/progress", ev->msg);
      ev->msg = NULL;
    }
    break;
  }
  case HOSTQ_LOG: {
    session *s = srv->session;
    if (s != NULL && s->log_level >= 0 && ev->level >= s->log_level) {
      session_notify(s, "notifications/message", ev->msg);
      ev->msg = NULL;
    }
    break;
  }
  case HOSTQ_ADD_TOOL:
    loader_add_tool(ev->plugin, ev->tool);
    break;
  case HOSTQ_REMOVE_TOOL:
    loader_remove_tool(ev->plugin, ev->name);
    break;
  }
  json_object_put(ev->msg);
  free(ev->name);
  free(ev);
}

void server_drain(server *srv) {
  for (;;) {
    hostq_event *ev;
    uv_mutex_lock(&srv->queue_lock);
    ev = srv->queue_head;
    if (ev) {
      srv->queue_head = ev->next;
      if (srv->queue_head == NULL)
        srv->queue_tail = NULL;
    }
    uv_mutex_unlock(&srv->queue_lock);
    if (ev == NULL)
      return;
    handle_event(srv, ev);
  }
}

void server_registry_changed(server *srv) {
  if (srv->shutting_down || uv_is_active((uv_handle_t *)&srv->announce_timer))
    return;
  /* A zero timeout fires on the next loop turn: every change made in this
   * turn (a whole directory scan, say) is announced once. */
  uv_timer_start(&srv->announce_timer, announce_cb, 0, 0);
}

void server_log_to_clients(server *srv, int level, const char *logger,
                           const char *text) {
  session *s = srv->session;
  json_object *params;
  hostq_event *ev;

  /* A racy read is fine: the level only filters what is worth queueing,
   * and the loop checks it again. */
  if (s == NULL || s->log_level < 0 || level < s->log_level)
    return;
  params = json_object_new_object();
  json_object_object_add(params, "level",
                         json_object_new_string(methods_log_level_name(level)));
  json_object_object_add(params, "logger", json_object_new_string(logger));
  json_object_object_add(params, "data", json_object_new_string(text));
  ev = calloc(1, sizeof(*ev));
  if (ev == NULL) {
    json_object_put(params);
    return;
  }
  ev->type = HOSTQ_LOG;
  ev->level = level;
  ev->msg = params;
  server_post(srv, ev);
}

static void signal_cb(uv_signal_t *handle, int signum) {
  server *srv = handle->data;
  if (signum == SIGHUP) {
    log_info("SIGHUP: rescanning plugin directories");
    loader_scan(&srv->loader);
    return;
  }
  server_shutdown(srv, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

static void parent_cb(uv_timer_t *timer) {
  server *srv = timer->data;
  if (getppid() != srv->parent_pid)
    server_shutdown(srv, "the process that started mcpd exited");
}

int server_start(server *srv, int serve) {
  if (serve) {
    uv_signal_start(&srv->sig_term, signal_cb, SIGTERM);
    uv_signal_start(&srv->sig_int, signal_cb, SIGINT);
    uv_signal_start(&srv->sig_hup, signal_cb, SIGHUP);
    /* Orphaned servers pile up when a client dies without closing our
     * stdin; notice the parent going away. */
    srv->parent_pid = (int)getppid();
    if (srv->parent_pid > 1) {
#ifdef HAVE_PRCTL
      prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
      uv_timer_start(&srv->parent_timer, parent_cb, 500, 500);
      uv_unref((uv_handle_t *)&srv->parent_timer);
    }
  }
  loader_scan(&srv->loader);
  if (serve && srv->opts->watch) {
    srv->watch = watch_start(srv);
  }
  return 0;
}

static void close_walk_cb(uv_handle_t *handle, void *arg) {
  (void)arg;
  if (!uv_is_closing(handle))
    uv_close(handle, NULL);
}

/* Stage 3: unload plugins and close every handle; uv_run then returns. */
static void finish_shutdown(server *srv) {
  srv->shutdown_stage = 3;
  uv_timer_stop(&srv->shutdown_timer);
  if (srv->calls_in_flight > 0) {
    /* Their code is still running on threads: it must stay mapped. */
    log_warn("exiting with %u calls still running", srv->calls_in_flight);
    srv->exit_hard = 1;
    uv_stop(srv->loop);
    return;
  }
  if (srv->watch) {
    watch_stop(srv->watch);
    srv->watch = NULL;
  }
  if (srv->stdio)
    stdio_transport_close(srv->stdio, NULL, 1);
  loader_free(&srv->loader);
  server_drain(srv);
  uv_walk(srv->loop, close_walk_cb, NULL);
}

static void flushed_cb(server *srv) {
  if (srv->shutdown_stage == 2)
    finish_shutdown(srv);
}

/* Stage 2: flush stdout (bounded), then stage 3. */
static void flush_output(server *srv) {
  srv->shutdown_stage = 2;
  uv_timer_stop(&srv->shutdown_timer);
  if (srv->stdio)
    stdio_transport_close(srv->stdio, flushed_cb, 0);
  else
    finish_shutdown(srv);
}

static void flush_timeout_cb(uv_timer_t *timer);

static void cancel_timeout_cb(uv_timer_t *timer) {
  server *srv = timer->data;
  log_warn("%u calls did not finish in time", srv->calls_in_flight);
  flush_output(srv);
  uv_timer_start(&srv->shutdown_timer, flush_timeout_cb, SHUTDOWN_FLUSH_MS, 0);
}

static void flush_timeout_cb(uv_timer_t *timer) {
  server *srv = timer->data;
  if (srv->shutdown_stage == 2) {
    log_warn("stdout did not drain in time; exiting");
    finish_shutdown(srv);
  }
}

static void grace_timeout_cb(uv_timer_t *timer) {
  server *srv = timer->data;
  session *s = srv->session;
  if (s != NULL)
    for (request *r = s->in_flight; r; r = r->next)
      if (r->call)
        call_cancel(r->call);
  uv_timer_start(&srv->shutdown_timer, cancel_timeout_cb, SHUTDOWN_CANCEL_MS,
                 0);
}

void server_shutdown(server *srv, const char *why) {
  if (srv->shutting_down)
    return;
  srv->shutting_down = 1;
  srv->shutdown_stage = 1;
  log_debug("shutting down: %s", why);
  if (srv->stdio)
    stdio_transport_stop_reading(srv->stdio);
  uv_timer_stop(&srv->parent_timer);
  if (srv->calls_in_flight == 0)
    server_calls_drained(srv);
  else
    uv_timer_start(&srv->shutdown_timer, grace_timeout_cb, SHUTDOWN_GRACE_MS,
                   0);
}

void server_calls_drained(server *srv) {
  if (srv->shutdown_stage != 1)
    return;
  flush_output(srv);
  if (srv->shutdown_stage == 2)
    uv_timer_start(&srv->shutdown_timer, flush_timeout_cb, SHUTDOWN_FLUSH_MS,
                   0);
}

void server_free(server *srv) {
  registry_free(&srv->registry);
  uv_mutex_destroy(&srv->queue_lock);
}
