/* SPDX-License-Identifier: MIT */
/* server.c -- the top of the host: wiring, sessions, signals and orderly
 * shutdown. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/resource.h>
#endif
#include <time.h>
#include <unistd.h>

#include "era.h"
#include "jsonrpc.h"
#include "log.h"
#include "metrics.h"
#include "platform.h"
#include "server.h"
#include "settings.h"
#include "strbuf.h"
#include "watchdog.h"
#include "worker_hello.h"

/* How long calls in flight may run after input ended, then how long they
 * get to notice cancellation.  The flush of replies already owed is not
 * bounded: a client that reads gets every one.  A second SIGTERM or SIGINT
 * (or the parent's death) ends the wait for a client that stopped
 * reading. */
#define SHUTDOWN_GRACE_MS 600
#define SHUTDOWN_CANCEL_MS 150
/* How long input waits at start for isolated plugins to be ready. */
#define HOLD_MS 5000

/* --- what comes up from below ------------------------------------------- */

static const char *const announce_methods[REG_KINDS] = {
    "notifications/tools/list_changed", "notifications/resources/list_changed",
    "notifications/resources/list_changed",
    "notifications/prompts/list_changed"};

/* REGISTRY_CHANGED bits, templates folded into resources: the two share
 * one notification, sent once. */
static unsigned one_per_notification(unsigned changed) {
  if (changed & REGISTRY_CHANGED(REG_TEMPLATE))
    changed = (changed & ~REGISTRY_CHANGED(REG_TEMPLATE)) |
              REGISTRY_CHANGED(REG_RESOURCE);
  return changed;
}

static void announce_cb(uv_timer_t *timer) {
  server *srv = timer->data;
  unsigned changed = srv->registry.changed, told = srv->told_host;

  /* Workers still starting list their plugins soon: a scan is announced
   * once, with them (worker_started_cb), as it is in-process. */
  if (srv->workers_starting > 0)
    return;
  srv->registry.changed = 0;
  srv->told_host = 0;
  if (srv->shutting_down || changed == 0)
    return;
  /* Subscriptions follow their URIs to the entries that serve them now. */
  if (changed &
      (REGISTRY_CHANGED(REG_RESOURCE) | REGISTRY_CHANGED(REG_TEMPLATE)))
    methods_registry_changed(&srv->methods);
  changed = one_per_notification(changed);
  for (int k = 0; k < REG_KINDS; k++) {
    if (!(changed & REGISTRY_CHANGED(k)) || (told & REGISTRY_CHANGED(k)))
      continue;
    for (size_t i = 0; i < srv->n_sessions; i++)
      session_notify(srv->sessions[i], announce_methods[k], NULL);
    /* Modern clients hear it on their listen streams. */
    methods_list_changed(&srv->methods, (reg_kind)k);
  }
}

/* Worker mode: list_changed goes to the host at once, before the answer
 * of the call that made the change, so that the host lists again before
 * it passes that answer on (worker_link.c); the rest of the announcement
 * (subscriptions) waits for the timer as usual. */
static void tell_host_now(server *srv) {
  unsigned fresh = srv->registry.changed & ~srv->told_host;
  unsigned kinds = one_per_notification(fresh);
  if (srv->stdio_session == NULL)
    return;
  for (int k = 0; k < REG_KINDS; k++)
    if (kinds & REGISTRY_CHANGED(k))
      session_notify(srv->stdio_session, announce_methods[k], NULL);
  srv->told_host |= fresh | kinds;
}

/* loader_env.changed_cb */
static void registry_changed_cb(void *arg) {
  server *srv = arg;
  if (srv->opts->mode == MODE_WORKER && !srv->shutting_down)
    tell_host_now(srv);
  if (srv->shutting_down || uv_is_active((uv_handle_t *)&srv->announce_timer))
    return;
  /* A zero timeout fires on the next loop turn: every change made in this
   * turn (a whole directory scan, say) is announced once. */
  uv_timer_start(&srv->announce_timer, announce_cb, 0, 0);
}

/* The params of notifications/message. */
static json_object *log_params(int level, const char *logger,
                               const char *text) {
  json_object *params = json_object_new_object();
  json_object_object_add(params, "level",
                         json_object_new_string(era_log_level_name(level)));
  json_object_object_add(params, "logger", json_object_new_string(logger));
  json_object_object_add(params, "data", json_object_new_string(text));
  return params;
}

/* call_exec.log_cb: a call's line goes to its own client, on that
 * request's stream; once the request was cancelled, to the same session
 * alone as an unrelated message (HTTP: its standalone stream), since the
 * request's stream may be gone.  A plugin's other lines go to every
 * session.  Each hears the levels it asked for: a legacy session with
 * logging/setLevel, a modern request with its own logLevel (and only its
 * call's lines, while it is not cancelled). */
static void plugin_log_cb(void *arg, int level, const char *logger,
                          const char *text, request *r) {
  server *srv = arg;
  json_object *params = NULL;

  if (r != NULL && r->modern) {
    if (r->session != NULL && !r->cancelled && r->log_level >= 0 &&
        level >= r->log_level)
      session_notify_related(r->session, r, "notifications/message",
                             log_params(level, logger, text));
    return;
  }
  for (size_t i = 0; i < srv->n_sessions; i++) {
    session *s = srv->sessions[i];
    if (s->log_level < 0 || level < s->log_level ||
        (r != NULL && r->session != s))
      continue;
    /* Built once, for the first session that wants it, and shared. */
    if (params == NULL)
      params = log_params(level, logger, text);
    /* A worker's link keeps the relation, so that the host can find the
     * session behind a cancelled request too. */
    if (r != NULL && (!r->cancelled || s->tag_related))
      session_notify_related(s, r, "notifications/message",
                             json_object_get(params));
    else
      session_notify(s, "notifications/message", json_object_get(params));
  }
  json_object_put(params);
}

/* call_exec.updated_cb: only sessions subscribed to that URI hear. */
static void resource_updated_cb(void *arg, const char *uri) {
  server *srv = arg;
  for (size_t i = 0; i < srv->n_sessions; i++) {
    session *s = srv->sessions[i];
    json_object *params;
    if (!methods_subscribed(s, uri))
      continue;
    params = json_object_new_object();
    json_object_object_add(params, "uri", json_object_new_string(uri));
    session_notify(s, "notifications/resources/updated", params);
  }
  methods_resource_updated(&srv->methods, uri);
}

/* methods_ctx.roots_changed_cb: every plugin that asked hears of it. */
static void roots_changed_cb(void *arg) {
  server *srv = arg;
  for (plugin *p = srv->loader.plugins; p; p = p->next)
    call_roots_changed(p);
}

static void calls_drained_cb(void *arg);
static void worker_started_cb(void *arg);
static int worker_configure_cb(void *arg, plugin *p, char *err, size_t errlen);

/* loader_env.isolate_cb and unisolate_cb */
static int isolate_cb(void *arg, plugin *p) {
  server *srv = arg;
  if (worker_start(&srv->workers, p) != 0)
    return -1;
  srv->workers_starting++;
  return 0;
}

static void unisolate_cb(void *arg, plugin *p) {
  (void)arg;
  worker_stop(p);
}

/* worker_env.report_cb: what happened to a worker, for every client. */
static void worker_report_cb(void *arg, int level, const char *logger,
                             const char *text) {
  plugin_log_cb(arg, level, logger, text, NULL);
}

/* watch_cb */
static void dirs_changed_cb(void *arg) {
  server *srv = arg;
  if (!srv->shutting_down)
    loader_scan(&srv->loader);
}

int server_init(server *srv, uv_loop_t *loop, settings *opts) {
  loader_env env;

  memset(srv, 0, sizeof(*srv));
  srv->loop = loop;
  srv->opts = opts;
  if (registry_init(&srv->registry) != 0)
    return -1;
  if (call_exec_init(&srv->exec, loop) != 0)
    return -1;
  srv->exec.drained_cb = calls_drained_cb;
  srv->exec.log_cb = plugin_log_cb;
  srv->exec.updated_cb = resource_updated_cb;
  srv->exec.arg = srv;
  srv->exec.request_timeout_ms = opts->call.request_timeout_ms;
  srv->exec.opts = &opts->plugins;
  srv->exec.worker = opts->mode == MODE_WORKER;
  srv->exec.state_ttl_ms = opts->call.request_state_ttl_ms;
  {
    /* A worker seals nothing: its host answers input_required. */
    char why[300];
    if (opts->mode != MODE_WORKER &&
        request_state_key(srv->exec.state_key, opts->call.state_key_file, why,
                          sizeof(why)) != 0) {
      log_error("%s", why);
      return -1;
    }
  }
  /* Half the worker threads at most for any one plugin: the rest stay for
   * the others, whatever one plugin's calls do.  A worker's threads are
   * all its one plugin's. */
  srv->exec.pool_cap =
      opts->mode == MODE_WORKER ? 0 : (unsigned)((opts->call.threads + 1) / 2);
  if (methods_init(&srv->methods, &srv->registry, &opts->methods, &srv->exec) !=
      0)
    return -1;
  srv->methods.roots_changed_cb = roots_changed_cb;
  srv->methods.arg = srv;

  uv_timer_init(loop, &srv->hold_timer);
  srv->hold_timer.data = srv;
  uv_idle_init(loop, &srv->spin);
  srv->spin.data = srv;
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

  memset(&srv->workers, 0, sizeof(srv->workers));
  srv->workers.loop = loop;
  srv->workers.registry = &srv->registry;
  srv->workers.opts = &opts->worker;
  srv->workers.changed_cb = registry_changed_cb;
  srv->workers.report_cb = worker_report_cb;
  srv->workers.started_cb = worker_started_cb;
  call_worker_env(&srv->exec, &srv->workers);
  srv->workers.report_arg = srv;
  {
    /* Workers run this very program (mcpd or mcpd-http) with --worker;
     * the platform layer says where it is. */
    char self[PATH_MAX];
    if (platform_self_exe(self, sizeof(self)) == 0)
      worker_set_program(self);
    else
      log_warn("cannot tell where this program is: plugins cannot run "
               "in worker processes (use --in-process)");
  }

  memset(&env, 0, sizeof(env));
  env.registry = &srv->registry;
  env.opts = &opts->loader;
  env.host = &call_host_api;
  env.host_data = &srv->exec;
  env.changed_cb = registry_changed_cb;
  if (opts->mode == MODE_WORKER) {
    /* It is the one process of its plugin. */
    env.configure_cb = worker_configure_cb;
    env.quiet = 1;
  } else {
    env.isolate_cb = isolate_cb;
    env.unisolate_cb = unisolate_cb;
  }
  env.arg = srv;
  return loader_init(&srv->loader, &env);
}

/* --- sessions ----------------------------------------------------------- */

session *server_open_session(server *srv, session_write_fn write, void *ctx) {
  session_io io = {write, ctx};
  session_handler handler = {methods_request, methods_notification,
                             &srv->methods};
  session *s;

  if (srv->n_sessions == srv->cap_sessions) {
    size_t cap = srv->cap_sessions ? srv->cap_sessions * 2 : 4;
    session **all = realloc(srv->sessions, cap * sizeof(*all));
    if (all == NULL)
      return NULL;
    srv->sessions = all;
    srv->cap_sessions = cap;
  }
  if ((s = session_new(&io, &handler)) == NULL)
    return NULL;
  s->data = srv;
  s->max_in_flight = srv->opts->max_in_flight;
  srv->sessions[srv->n_sessions++] = s;
  return s;
}

void server_close_session(server *srv, session *s) {
  for (size_t i = 0; i < srv->n_sessions; i++)
    if (srv->sessions[i] == s) {
      srv->sessions[i] = srv->sessions[--srv->n_sessions];
      break;
    }
  if (srv->stdio_session == s)
    srv->stdio_session = NULL;
  methods_session_closed(&srv->methods, s);
  session_free(s);
}

/* --- stdio -------------------------------------------------------------- */

/* Worker mode: after each message from the host the loop polls for up
 * to WORKER_SPIN_NS before it sleeps, as the host does while it waits
 * for an answer (worker_link.c).  Calls come in streams; on this kind of
 * machine waking a sleeping process costs more than the call itself, and
 * by measurement the spinning costs less CPU per call than the wakeups
 * it saves.  Sparse traffic pays at most this much per message. */
#define WORKER_SPIN_NS 50000

static void spin_cb(uv_idle_t *idle) {
  server *srv = idle->data;
  if (uv_hrtime() > srv->spin_until || srv->shutting_down)
    uv_idle_stop(idle);
}

static void stdio_message_cb(void *arg, const char *line, size_t len) {
  server *srv = arg;
  if (srv->stdio_session != NULL)
    session_handle_line(srv->stdio_session, line, len);
  if (srv->opts->mode == MODE_WORKER && !srv->shutting_down) {
    srv->spin_until = uv_hrtime() + WORKER_SPIN_NS;
    if (!uv_is_active((uv_handle_t *)&srv->spin))
      uv_idle_start(&srv->spin, spin_cb);
  }
}

static void stdio_oversize_cb(void *arg, size_t max) {
  server *srv = arg;
  if (srv->stdio_session != NULL)
    session_oversize(srv->stdio_session, max);
}

/* Whether a worker's host died (rather than closed its pipe and waits):
 * it is then reparented, which can take the kernel a moment after the
 * pipe closed. */
static int host_died(const server *srv) {
  for (int i = 0; i < 50; i++) {
    struct timespec ts = {0, 5 * 1000 * 1000};
    if (getppid() != srv->parent_pid)
      return 1;
    nanosleep(&ts, NULL);
  }
  return 0;
}

static void stdio_end_cb(void *arg, const char *why) {
  server *srv = arg;
  /* A worker ends with its host, running nothing more (no fini, no log):
   * where the system does not signal it, the host's pipe closing is how
   * it hears. */
  if (srv->opts->mode == MODE_WORKER && !srv->parent_signals &&
      srv->parent_pid > 1 && host_died(srv))
    _exit(0);
  /* Not an end the client chose: mcpd's exit status says so. */
  if (strcmp(why, STDIO_READ_FAILED) == 0)
    srv->input_failed = 1;
  server_shutdown(srv, why);
}

int server_serve_stdio(server *srv) {
  stdio_transport_cb cb = {stdio_message_cb, stdio_oversize_cb, stdio_end_cb,
                           srv};
  srv->stdio = stdio_transport_new(srv->loop, srv->opts->max_message, &cb);
  if (srv->stdio == NULL)
    return -1;
  srv->stdio_session =
      server_open_session(srv, stdio_transport_write, srv->stdio);
  if (srv->stdio_session == NULL) {
    log_error("out of memory");
    return -1;
  }
  /* A worker's one peer is the host, which routes what relates to a
   * request by the tag. */
  srv->stdio_session->tag_related = srv->opts->mode == MODE_WORKER;
  /* It learns that a cancelled call stopped from its answer. */
  srv->stdio_session->answer_cancelled = srv->opts->mode == MODE_WORKER;
  /* stdio picks its era per connection (session.c); a worker's host
   * speaks the legacy revision only.  (HTTP picks it per POST, in
   * streamable.c.) */
  srv->stdio_session->modern_allowed = srv->opts->mode != MODE_WORKER;
  watchdog_start(stdio_transport_input_fd(srv->stdio));
  if (srv->opts->mode == MODE_WORKER && !srv->parent_signals)
    watchdog_exit_with_parent();
  /* Reading starts once the plugins are loaded (server_start), isolated
   * ones included: a client's first tools/list then sees them all. */
  srv->input_held = 1;
  return 0;
}

/* Starts reading the client's input, if it was held. */
static void release_input(server *srv) {
  if (!srv->input_held)
    return;
  srv->input_held = 0;
  uv_timer_stop(&srv->hold_timer);
  if (srv->stdio != NULL && !srv->shutting_down &&
      stdio_transport_start(srv->stdio) != 0) {
    log_error("cannot read stdin");
    server_shutdown(srv, "no stdin");
  }
}

static void hold_timeout_cb(uv_timer_t *t) {
  server *srv = t->data;
  log_warn("isolated plugins are slow to start; serving without waiting "
           "for them");
  release_input(srv);
}

/* The first scan's plugins are loaded, their workers ready or failed:
 * once, a config entry that names no plugin is most likely a typo. */
static void plugins_settled(server *srv) {
  if (srv->settled)
    return;
  srv->settled = 1;
  if (srv->opts->mode != MODE_WORKER)
    loader_warn_unused_configs(&srv->loader);
}

/* worker_env.started_cb: one more isolated plugin is ready (or failed). */
static void worker_started_cb(void *arg) {
  server *srv = arg;
  if (srv->workers_starting > 0 && --srv->workers_starting == 0) {
    release_input(srv);
    plugins_settled(srv);
    if (srv->registry.changed != 0)
      registry_changed_cb(srv);
  }
}

/* --- signals and the parent --------------------------------------------- */

static void finish_shutdown(server *srv);
static void http_closed_cb(void *arg);

static void signal_cb(uv_signal_t *handle, int signum) {
  server *srv = handle->data;
  if (signum == SIGHUP) {
    /* A worker has no directory to rescan; its host reloads it. */
    if (srv->shutting_down || srv->opts->mode == MODE_WORKER)
      return;
    log_info("SIGHUP: rescanning plugin directories");
    loader_scan(&srv->loader);
    return;
  }
  if (srv->shutting_down && srv->shutdown_stage < 3) {
    /* A worker's host sends SIGTERM after EOF as it exits: no news. */
    log_msg(srv->opts->mode == MODE_WORKER ? LOG_LEVEL_DEBUG : LOG_LEVEL_WARN,
            "%s during shutdown: exiting without waiting any longer",
            signum == SIGTERM ? "SIGTERM" : "SIGINT");
    finish_shutdown(srv);
    return;
  }
  server_shutdown(srv, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

static void parent_cb(uv_timer_t *timer) {
  server *srv = timer->data;
  if (getppid() == srv->parent_pid)
    return;
  if (srv->shutting_down && srv->shutdown_stage < 3) {
    /* Nobody is left to read what waits to be flushed. */
    uv_timer_stop(timer);
    finish_shutdown(srv);
    return;
  }
  server_shutdown(srv, "the process that started mcpd exited");
}

void server_catch_signals(server *srv) {
  if (srv->catching)
    return;
  srv->catching = 1;
  uv_signal_start(&srv->sig_term, signal_cb, SIGTERM);
  uv_signal_start(&srv->sig_int, signal_cb, SIGINT);
  uv_signal_start(&srv->sig_hup, signal_cb, SIGHUP);
  /* The watchdog hears of these too, in case plugin code holds the loop. */
  watchdog_catch(SIGTERM);
  watchdog_catch(SIGINT);
  /* Orphaned servers pile up when a client dies without closing our
   * stdin; notice the parent going away. */
  srv->parent_pid = (int)getppid();
  if (srv->parent_pid > 1) {
    /* A worker has SIGKILL set already (main.c).  Where the system
     * cannot signal us, the timer below notices. */
    if (srv->opts->mode != MODE_WORKER)
      srv->parent_signals = platform_die_with_parent(SIGTERM);
    uv_timer_start(&srv->parent_timer, parent_cb, 500, 500);
    uv_unref((uv_handle_t *)&srv->parent_timer);
  }
}

/* Worker mode: the limits the host asked for, soft and hard, so that the
 * plugin cannot raise them again. */
#ifdef _WIN32
/* Windows has no setrlimit: a limit that cannot be kept refuses the
 * plugin rather than run it without. */
static int set_limits(const worker_limits *lim) {
  if (lim->address_space_mib == 0 && lim->cpu_seconds == 0 &&
      lim->open_files == 0)
    return 0;
  log_error("limits are not supported on Windows yet");
  return -1;
}
#else
static int set_limits(const worker_limits *lim) {
  const struct {
    int resource;
    const char *key;
    uint64_t value; /* 0 for none */
    rlim_t unit;
  } limits[] = {
      {RLIMIT_AS, "addressSpaceMiB", lim->address_space_mib, (rlim_t)1 << 20},
      {RLIMIT_CPU, "cpuSeconds", lim->cpu_seconds, 1},
      {RLIMIT_NOFILE, "openFiles", lim->open_files, 1},
  };

  for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
    struct rlimit rl;
    if (limits[i].value == 0)
      continue;
    rl.rlim_cur = rl.rlim_max = (rlim_t)limits[i].value * limits[i].unit;
    if (setrlimit(limits[i].resource, &rl) != 0) {
      log_error("limits.%s %llu: setrlimit failed: %s", limits[i].key,
                (unsigned long long)limits[i].value, strerror(errno));
      return -1;
    }
  }
  return 0;
}
#endif

/* Worker mode: tells the host which plugin this is, in the initialize
 * result's _meta, so that it needs no second look at the file. */
static int describe_plugin(server *srv, const plugin *p) {
  json_object *meta = json_object_new_object();
  json_object *info = json_object_new_object();

  if (meta == NULL || info == NULL) {
    json_object_put(meta);
    json_object_put(info);
    return -1;
  }
  json_object_object_add(info, "name", json_object_new_string(p->name));
  json_object_object_add(info, "version", json_object_new_string(p->version));
  if (p->description != NULL)
    json_object_object_add(info, "description",
                           json_object_new_string(p->description));
  json_object_object_add(meta, "io.mcpd/plugin", info);
  json_object_put(srv->methods.initialize_meta);
  srv->methods.initialize_meta = meta;
  return 0;
}

static void pool_nothing_cb(uv_work_t *work) {
  (void)work;
}

static void pool_started_cb(uv_work_t *work, int status) {
  (void)status;
  free(work);
}

/* libuv starts its pool threads on the first work queued, and aborts
 * when it cannot.  Under an address-space limit that would be mcpd's
 * failure, not the plugin's: start them while the limit is not set. */
static int start_pool(uv_loop_t *loop) {
  uv_work_t *work = malloc(sizeof(*work));
  int rc;

  if (work == NULL) {
    log_error("out of memory");
    return -1;
  }
  rc = uv_queue_work(loop, work, pool_nothing_cb, pool_started_cb);
  if (rc != 0) {
    log_error("starting the thread pool: %s", uv_strerror(rc));
    free(work);
    return -1;
  }
  return 0;
}

/* loader_env.configure_cb, worker mode: the plugin's descriptor passed;
 * the host hears its name and answers with its config and limits
 * (worker_hello.h), which are set before init() runs. */
static int worker_configure_cb(void *arg, plugin *p, char *err, size_t errlen) {
  server *srv = arg;
  worker_limits lim;
  json_object *config;
  int rc;

  if (worker_hello_send(stdio_transport_output_fd(srv->stdio), p->name,
                        p->version, p->description) != 0) {
    snprintf(err, errlen, "cannot write to the host: %s", strerror(errno));
    return -1;
  }
  rc = worker_config_read(stdio_transport_input_fd(srv->stdio),
                          srv->opts->max_message, &config, &lim, err, errlen);
  if (rc == 1)
    _exit(0); /* the host will not use this worker: nothing ran yet */
  if (rc != 0)
    return -1;
  json_object_put(srv->opts->plugins.worker_config);
  srv->opts->plugins.worker_config = config;
  if ((lim.address_space_mib != 0 && start_pool(srv->loop) != 0) ||
      set_limits(&lim) != 0) {
    snprintf(err, errlen, "its limits could not be set");
    return -1;
  }
  return 0;
}

/* Worker mode: the one plugin, or nothing at all.  Why it cannot be
 * served goes to the host too, for its --list. */
static int start_worker(server *srv) {
  const settings *o = srv->opts;
  plugin *p;

  /* The loader says why in one line when it fails. */
  if ((p = loader_load_file(&srv->loader, o->worker_path)) == NULL) {
    if (srv->stdio != NULL && srv->loader.failures != NULL)
      worker_refused_send(stdio_transport_output_fd(srv->stdio),
                          srv->loader.failures->reason);
    return -1;
  }
  if (describe_plugin(srv, p) != 0) {
    log_error("out of memory");
    return -1;
  }
  return 0;
}

int server_start(server *srv, int serve) {
  const settings *o = srv->opts;
  int rc;
  if (serve)
    server_catch_signals(srv);
  if (o->mode == MODE_WORKER) {
    rc = start_worker(srv);
    release_input(srv);
    return rc;
  }
  loader_scan(&srv->loader);
  if (srv->workers_starting == 0) {
    release_input(srv);
    plugins_settled(srv);
  } else if (srv->input_held) {
    uv_timer_start(&srv->hold_timer, hold_timeout_cb, HOLD_MS, 0);
  }
  if (serve && o->watch)
    srv->watch =
        watch_start(srv->loop, o->loader.plugin_dirs, o->loader.n_plugin_dirs,
                    o->loader.plugin_dirs_given, dirs_changed_cb, srv);
  return 0;
}

void server_wait_plugins(server *srv) {
  uint64_t start = uv_now(srv->loop);
  while (srv->workers_starting > 0 && uv_now(srv->loop) - start < HOLD_MS) {
    uv_run(srv->loop, UV_RUN_ONCE);
    uv_update_time(srv->loop);
  }
  /* Entries a plugin's own thread added while its init() ran were queued
   * for the loop's next turn: take that turn, so they count too. */
  uv_run(srv->loop, UV_RUN_NOWAIT);
}

/* --- shutdown ----------------------------------------------------------- */

static void close_walk_cb(uv_handle_t *handle, void *arg) {
  (void)arg;
  if (!uv_is_closing(handle))
    uv_close(handle, NULL);
}

static void workers_gone_cb(void *arg);

/* Stage 3: unload plugins, end the workers, and close every handle;
 * uv_run then returns. */
static void finish_shutdown(server *srv) {
  srv->shutdown_stage = 3;
  uv_timer_stop(&srv->shutdown_timer);
  if (srv->exec.in_flight > 0) {
    /* Their code is still running on threads: it must stay mapped. */
    log_warn("exiting with %u calls still running", srv->exec.in_flight);
    srv->exit_hard = 1;
    worker_kill_all();
    uv_stop(srv->loop);
    return;
  }
  if (srv->watch) {
    watch_stop(srv->watch);
    srv->watch = NULL;
  }
  if (srv->stdio) {
    stdio_transport_close(srv->stdio, NULL, NULL, 1);
    srv->stdio = NULL;
  }
  if (srv->http)
    srv->http_close(srv->http, http_closed_cb, srv, 1);
  while (srv->n_sessions > 0)
    server_close_session(srv, srv->sessions[0]);
  /* fini() joins the plugins' threads; what they queued runs after. */
  loader_free(&srv->loader);
  /* Nothing of mcpd outlives it: the loop closes once every worker is
   * gone. */
  worker_shutdown(workers_gone_cb, srv);
}

static void workers_gone_cb(void *arg) {
  server *srv = arg;
  call_exec_close(&srv->exec);
  uv_walk(srv->loop, close_walk_cb, NULL);
}

/* A transport finished flushing: the last one moves on to stage 3. */
static void output_closed(server *srv) {
  if (--srv->closing_outputs == 0 && srv->shutdown_stage == 2)
    finish_shutdown(srv);
}

static void flushed_cb(void *arg) {
  server *srv = arg;
  srv->stdio = NULL;
  output_closed(srv);
}

static void http_closed_cb(void *arg) {
  server *srv = arg;
  srv->http = NULL;
  output_closed(srv);
}

/* Stage 2: flush what is owed to clients (stdout without a time limit,
 * HTTP for a bounded time), then stage 3.  The stdio session goes first:
 * nothing may write into a transport that is closing. */
static void flush_output(server *srv) {
  srv->shutdown_stage = 2;
  uv_timer_stop(&srv->shutdown_timer);
  if (srv->stdio_session != NULL)
    server_close_session(srv, srv->stdio_session);
  srv->closing_outputs = 1;
  if (srv->stdio) {
    srv->closing_outputs++;
    stdio_transport_close(srv->stdio, flushed_cb, srv, 0);
  }
  if (srv->http) {
    srv->closing_outputs++;
    srv->http_close(srv->http, http_closed_cb, srv, 0);
  }
  output_closed(srv);
}

static void cancel_timeout_cb(uv_timer_t *timer) {
  server *srv = timer->data;
  log_warn("%u calls did not finish in time", srv->exec.in_flight);
  methods_shutdown(&srv->methods, 1);
  /* Each request still owed gets an answer before the flush. */
  for (size_t i = 0; i < srv->n_sessions; i++)
    for (request *r = srv->sessions[i]->in_flight, *next; r; r = next) {
      next = r->next;
      if (r->call)
        call_abandon(r->call);
    }
  flush_output(srv);
}

static void grace_timeout_cb(uv_timer_t *timer) {
  server *srv = timer->data;
  for (size_t i = 0; i < srv->n_sessions; i++)
    for (request *r = srv->sessions[i]->in_flight; r; r = r->next)
      if (r->call)
        call_cancel(r->call);
  uv_timer_start(&srv->shutdown_timer, cancel_timeout_cb, SHUTDOWN_CANCEL_MS,
                 0);
}

static void drained_stage_cb(uv_timer_t *timer) {
  server *srv = timer->data;
  if (srv->shutdown_stage == 1 && srv->exec.in_flight == 0)
    flush_output(srv);
}

/* call_exec.drained_cb: the last call in flight ended.  The next stage
 * runs on the next loop turn, never from inside the completion (or the
 * session handler) that got us here: it frees sessions. */
static void calls_drained_cb(void *arg) {
  server *srv = arg;
  if (srv->shutdown_stage == 1)
    uv_timer_start(&srv->shutdown_timer, drained_stage_cb, 0, 0);
}

void server_shutdown(server *srv, const char *why) {
  if (srv->shutting_down)
    return;
  srv->shutting_down = 1;
  srv->shutdown_stage = 1;
  log_debug("shutting down: %s", why);
  if (srv->stdio)
    stdio_transport_stop_reading(srv->stdio);
  if (srv->http)
    srv->http_refuse(srv->http);
  /* No client can fetch a task's result once mcpd is gone. */
  methods_shutdown(&srv->methods, 0);
  if (srv->exec.in_flight == 0)
    calls_drained_cb(srv);
  else
    uv_timer_start(&srv->shutdown_timer, grace_timeout_cb, SHUTDOWN_GRACE_MS,
                   0);
}

void server_free(server *srv) {
  methods_free(&srv->methods);
  registry_free(&srv->registry);
  free(srv->sessions);
  srv->sessions = NULL;
}

/* --- what an operator sees ---------------------------------------------- */

int server_ready(server *srv, char *why, size_t size) {
  if (!srv->settled) {
    snprintf(why, size, "plugins are still loading");
    return 0;
  }
  if (srv->workers_starting > 0) {
    snprintf(why, size, "%u plugin workers are starting",
             srv->workers_starting);
    return 0;
  }
  if (srv->shutting_down) {
    snprintf(why, size, "shutting down");
    return 0;
  }
  return 1;
}

static void gauge(strbuf *out, const char *name, const char *help,
                  unsigned long long value) {
  char text[32];
  metrics_family(out, name, "gauge", help);
  snprintf(text, sizeof(text), " %llu\n", value);
  strbuf_puts(out, name);
  strbuf_puts(out, text);
}

/* What a session's owner says of its identity, as a bounded label. */
static const char *identity_class(const session *s) {
  if (s->owner == NULL || s->owner[0] == '\0')
    return "anonymous";
  if (strncmp(s->owner, "sub:", 4) == 0)
    return "jwt";
  return "token";
}

static const char *era_label(const session *s) {
  if (s->era == ERA_CONN_MODERN)
    return "2026-07-28";
  return s->initialized && s->version != NULL ? s->version : "uninitialized";
}

void server_metrics(server *srv, strbuf *out) {
  size_t by_status[5], plugins = 0;
  long long rss, fds;
  char text[64];

  metrics_render(out);
  gauge(out, "mcpd_calls_in_flight",
        "Plugin calls started and not yet answered.", srv->exec.in_flight);
  for (const plugin *p = srv->loader.plugins; p; p = p->next)
    plugins++;
  gauge(out, "mcpd_plugins_loaded", "Plugins serving now.", plugins);
  gauge(out, "mcpd_workers_starting",
        "Isolated plugins whose worker is not ready yet.",
        srv->workers_starting);
  metrics_family(out, "mcpd_sessions", "gauge",
                 "Open sessions, by protocol era and identity class (a "
                 "2026-07-28 request is a session of its own while it "
                 "runs).");
  {
    /* Few distinct (era, identity) pairs -- a handful of versions times
     * three classes -- so one pass counts them into a small table, in
     * the order first seen. */
    struct {
      const char *era, *identity;
      size_t n;
    } pairs[32];
    size_t n_pairs = 0;

    for (size_t i = 0; i < srv->n_sessions; i++) {
      const char *era = era_label(srv->sessions[i]);
      const char *identity = identity_class(srv->sessions[i]);
      size_t k = 0;
      while (k < n_pairs && (strcmp(pairs[k].era, era) != 0 ||
                             strcmp(pairs[k].identity, identity) != 0))
        k++;
      if (k == n_pairs) {
        if (n_pairs == sizeof(pairs) / sizeof(pairs[0]))
          continue;
        pairs[n_pairs].era = era;
        pairs[n_pairs].identity = identity;
        pairs[n_pairs++].n = 0;
      }
      pairs[k].n++;
    }
    for (size_t k = 0; k < n_pairs; k++) {
      strbuf_puts(out, "mcpd_sessions{era=");
      metrics_label(out, pairs[k].era);
      strbuf_puts(out, ",identity=");
      metrics_label(out, pairs[k].identity);
      snprintf(text, sizeof(text), "} %zu\n", pairs[k].n);
      strbuf_puts(out, text);
    }
  }
  tasks_by_status(&srv->methods.tasks, by_status);
  metrics_family(out, "mcpd_tasks", "gauge",
                 "Tasks kept (running, or ended within their TTL), by "
                 "status.");
  for (int i = 0; i < 5; i++) {
    strbuf_puts(out, "mcpd_tasks{status=");
    metrics_label(out, tasks_status_names[i]);
    snprintf(text, sizeof(text), "} %zu\n", by_status[i]);
    strbuf_puts(out, text);
  }
  platform_process_stats(&rss, &fds);
  if (rss >= 0)
    gauge(out, "process_resident_memory_bytes",
          "Resident memory of the mcpd process (workers not included).",
          (unsigned long long)rss);
  if (fds >= 0)
    gauge(out, "process_open_fds", "Open file descriptors of mcpd.",
          (unsigned long long)fds);
}
