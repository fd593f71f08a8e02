/* SPDX-License-Identifier: MIT */
/* worker_process.c -- spawns, watches, restarts and ends the process of an
 * isolated plugin.  See worker_process.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/wait.h>
#endif
#include <unistd.h>

#include "log.h"
#include "metrics.h"
#include "platform.h"
#include "plugin_file.h"
#include "worker_process.h"

/* Restart backoff: the first retry after RESTART_MIN_MS, doubling up to
 * RESTART_MAX_MS; a worker that dies PARK_CRASHES times within PARK_WINDOW
 * _MS is parked until its file changes. */
#define RESTART_MIN_MS 100
#define RESTART_MAX_MS 10000
#define PARK_CRASHES 5
#define PARK_WINDOW_MS 60000
/* How long an unloaded worker may take to exit before SIGKILL, and one
 * ended at mcpd's exit after SIGTERM. */
#define STOP_GRACE_MS 2000
#define EXIT_GRACE_MS 1000
/* How long a worker that closed its stdout may take to exit. */
#define EOF_GRACE_MS 500
/* How long a new worker may take to list what its plugin offers. */
#define START_TIMEOUT_MS 10000

static char *program;

void worker_set_program(const char *path) {
  free(program);
  program = path ? strdup(path) : NULL;
}

static void free_handle_cb(uv_handle_t *h) {
  free(h);
}

static int spawn(worker_process *wp);
static void maybe_gone(worker_process *wp);
static void kill_cb(uv_timer_t *t);

/* --- the pipes ----------------------------------------------------------- */

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  worker_process *wp = h->data;
  char *base;
  size_t avail;
  (void)suggested;
  if (framer_reserve(&wp->in, 64 * 1024, &base, &avail) != 0) {
    buf->base = NULL;
    buf->len = 0;
    return;
  }
  buf->base = base;
  buf->len = avail;
}

static void pipe_closed_cb(uv_handle_t *h) {
  worker_process *wp = h->data;
  if (h == (uv_handle_t *)wp->pipe)
    wp->pipe = NULL;
  else
    wp->wpipe = NULL;
  free(h);
  maybe_gone(wp);
}

/* Closes both pipes; pipes_gone() says when they are. */
/* Closes its stdin: EOF for it, and nothing more is written. */
static void close_wpipe(worker_process *wp) {
  if (wp->wpipe != NULL && !uv_is_closing((uv_handle_t *)wp->wpipe)) {
    wp->ev.closing(wp->ev.arg);
    uv_close((uv_handle_t *)wp->wpipe, pipe_closed_cb);
  }
}

static void close_pipes(worker_process *wp) {
  close_wpipe(wp);
  if (wp->pipe != NULL && !uv_is_closing((uv_handle_t *)wp->pipe))
    uv_close((uv_handle_t *)wp->pipe, pipe_closed_cb);
}

static int pipes_gone(const worker_process *wp) {
  return wp->pipe == NULL && wp->wpipe == NULL;
}

static void read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  worker_process *wp = s->data;
  (void)buf;
  if (n > 0) {
    framer_commit(&wp->in, (size_t)n, wp->ev.line, wp->ev.arg);
    return;
  }
  if (n < 0) {
    /* EOF or an error: the process is ending, and exit_cb will tell how
     * (its status, not our SIGKILL) unless it lingers without a way to
     * talk. */
    uv_read_stop(s);
    close_pipes(wp);
    if (wp->alive && wp->proc != NULL)
      uv_timer_start(wp->restart, kill_cb, EOF_GRACE_MS, 0);
  }
}

/* --- exits and restarts -------------------------------------------------- */

static void restart_cb(uv_timer_t *t) {
  worker_process *wp = t->data;
  if (wp->stopping || wp->alive)
    return;
  if (!pipes_gone(wp)) {
    /* The old connection is still closing. */
    uv_timer_start(t, restart_cb, 10, 0);
    return;
  }
  if (spawn(wp) != 0)
    log_error("plugin \"%s\": its worker could not be restarted", wp->p->name);
}

/* After a crash: restarts the process with backoff, or parks it when it
 * crashed too often within the window. */
static void after_crash(worker_process *wp, const char *message) {
  uint64_t now = uv_now(wp->loop), delay;

  if (now - wp->window_start > PARK_WINDOW_MS) {
    wp->window_start = now;
    wp->crashes = 0;
  }
  wp->crashes++;
  if (wp->crashes >= PARK_CRASHES) {
    wp->parked = 1;
    metrics_count(METRICS_WORKER_PARKS);
    log_error("%s; %u times within a minute, so it is parked until its "
              "file changes",
              message, wp->crashes);
    wp->ev.report(wp->ev.arg, message);
    return;
  }
  delay = (uint64_t)RESTART_MIN_MS << (wp->crashes - 1);
  if (delay > RESTART_MAX_MS)
    delay = RESTART_MAX_MS;
  log_error("%s; restarting it in %llu ms", message, (unsigned long long)delay);
  metrics_count(METRICS_WORKER_RESTARTS);
  wp->ev.report(wp->ev.arg, message);
  uv_timer_start(wp->restart, restart_cb, delay, 0);
}

static void exit_cb(uv_process_t *proc, int64_t status, int signum) {
  worker_process *wp = proc->data;
  char why[96], message[300];
  json_object *data;

  wp->alive = 0;
  plugin_files_sweep((long)proc->pid);
  uv_close((uv_handle_t *)proc, free_handle_cb);
  wp->proc = NULL;
  close_pipes(wp);
  if (signum != 0)
    snprintf(why, sizeof(why), "was killed by signal %d (%s)", signum,
             strsignal(signum));
#ifdef _WIN32
  else if ((uint64_t)status >= 0xC0000000u && (uint64_t)status <= 0xFFFFFFFFu)
    /* An NTSTATUS: 0xC0000005 is an access violation, 0xC00000FD a stack
     * overflow. */
    snprintf(why, sizeof(why), "crashed (exception 0x%08llX)",
             (unsigned long long)status);
#endif
  else
    snprintf(why, sizeof(why), "exited with status %d", (int)status);
  snprintf(message, sizeof(message), "plugin \"%s\": its worker process %s",
           wp->p->name, why);

  data = json_object_new_object();
  json_object_object_add(data, "plugin", json_object_new_string(wp->p->name));
  if (signum != 0)
    json_object_object_add(data, "signal", json_object_new_int(signum));
  else
    json_object_object_add(data, "exitStatus",
                           json_object_new_int((int)status));

  /* The owner may stop us from inside exited(): `wp` must outlive the
   * call, so it cannot be gone before it returns. */
  wp->exiting = 1;
  wp->ev.exited(wp->ev.arg, message, data, wp->stopping);
  wp->exiting = 0;
  json_object_put(data);
  if (wp->stopping)
    maybe_gone(wp);
  else
    after_crash(wp, message);
}

/* --- spawning ------------------------------------------------------------ */

/* A worker that does not get ready in time is treated as crashed. */
static void start_timeout_cb(uv_timer_t *t) {
  worker_process *wp = t->data;
  if (wp->alive && wp->proc != NULL) {
    log_error("plugin \"%s\": its worker did not start within %d s; "
              "killing it",
              wp->p->name, START_TIMEOUT_MS / 1000);
    uv_process_kill(wp->proc, SIGKILL);
  }
}

/* Allocates wp->proc, wp->pipe and wp->wpipe: 0, or -1 with none. */
static int alloc_handles(worker_process *wp) {
  wp->proc = calloc(1, sizeof(*wp->proc));
  wp->pipe = calloc(1, sizeof(*wp->pipe));
  wp->wpipe = calloc(1, sizeof(*wp->wpipe));
  if (wp->proc == NULL || wp->pipe == NULL || wp->wpipe == NULL) {
    free(wp->proc);
    free(wp->pipe);
    free(wp->wpipe);
    wp->proc = NULL;
    wp->pipe = wp->wpipe = NULL;
    return -1;
  }
  return 0;
}

/* The worker's command line, with room for what it holds. */
typedef struct child_args {
  char *argv[12];
  char threads[24], level[16];
} child_args;

/* `mcpd --worker PATH`, with the host's log level and pool size.  The
 * plugin's config and limits follow on its stdin once it said its name
 * (worker_hello.h). */
static void build_args(const worker_process *wp, child_args *a) {
  static const char *const levels[] = {"error", "warn", "info", "debug"};
  const worker_settings *o = wp->opts;
  int n = 0;

  snprintf(a->threads, sizeof(a->threads), "%zu", o->threads);
  snprintf(a->level, sizeof(a->level), "%s",
           o->log_level >= 0 && o->log_level < 4 ? levels[o->log_level]
                                                 : "info");
  a->argv[n++] = program;
  a->argv[n++] = (char *)"--worker";
  a->argv[n++] = wp->p->path;
  a->argv[n++] = (char *)"--log-level";
  a->argv[n++] = a->level;
  a->argv[n++] = (char *)"--threads";
  a->argv[n++] = a->threads;
  if (o->allow_insecure)
    a->argv[n++] = (char *)"--allow-insecure-plugins";
  if (o->log_json) {
    a->argv[n++] = (char *)"--log-format";
    a->argv[n++] = (char *)"json";
  }
  a->argv[n] = NULL;
}

/* The options of uv_spawn() but the child's stdin and stdout; its stderr
 * is mcpd's. */
static void spawn_options(uv_process_options_t *po,
                          uv_stdio_container_t stdio[3], child_args *a) {
  memset(po, 0, sizeof(*po));
  memset(stdio, 0, 3 * sizeof(*stdio));
  stdio[2].flags = UV_INHERIT_FD;
  stdio[2].data.fd = 2;
  po->file = program;
  po->args = a->argv;
  po->exit_cb = exit_cb;
  po->stdio = stdio;
  po->stdio_count = 3;
}

#ifdef _WIN32
/* Runs the child with pipes libuv makes, as Windows wants them: wp->wpipe
 * writes to its stdin, wp->pipe reads its stdout.  Returns 0 with
 * wp->proc, wp->pipe and wp->wpipe allocated, or -1. */
static int run_child(worker_process *wp, child_args *a) {
  uv_process_options_t po;
  uv_stdio_container_t stdio[3];
  int rc;

  if (alloc_handles(wp) != 0)
    return -1;
  spawn_options(&po, stdio, a);
  uv_pipe_init(wp->loop, wp->pipe, 0);
  wp->pipe->data = wp;
  uv_pipe_init(wp->loop, wp->wpipe, 0);
  wp->wpipe->data = wp;
  stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
  stdio[0].data.stream = (uv_stream_t *)wp->wpipe;
  stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[1].data.stream = (uv_stream_t *)wp->pipe;
  po.flags = UV_PROCESS_WINDOWS_HIDE;
  wp->proc->data = wp;
  rc = uv_spawn(wp->loop, wp->proc, &po);
  if (rc != 0) {
    log_error("plugin \"%s\": cannot start its worker: %s", wp->p->name,
              uv_strerror(rc));
    uv_close((uv_handle_t *)wp->proc, free_handle_cb);
    uv_close((uv_handle_t *)wp->pipe, free_handle_cb);
    uv_close((uv_handle_t *)wp->wpipe, free_handle_cb);
    wp->proc = NULL;
    wp->pipe = wp->wpipe = NULL;
    return -1;
  }
  return 0;
}
#else
/* The child's fds: to[0] is its stdin, from[1] its stdout.  The other
 * ends stay here. */
typedef struct child_fds {
  int to[2], from[2];
} child_fds;

static void close_fds(child_fds *f) {
  close(f->to[0]);
  close(f->to[1]);
  close(f->from[0]);
  close(f->from[1]);
}

static int open_fds(worker_process *wp, child_fds *f) {
  if (platform_pipe(f->to) != 0) {
    log_error("plugin \"%s\": pipe: %s", wp->p->name, strerror(errno));
    return -1;
  }
  if (platform_pipe(f->from) != 0) {
    log_error("plugin \"%s\": pipe: %s", wp->p->name, strerror(errno));
    close(f->to[0]);
    close(f->to[1]);
    return -1;
  }
  return 0;
}

/* Runs the child on pipes of our own: its stdin and stdout are inherited
 * descriptors, whose other ends become wp->wpipe and wp->pipe.  Returns 0
 * with wp->proc, wp->pipe and wp->wpipe allocated, or -1. */
static int run_child(worker_process *wp, child_args *a) {
  uv_process_options_t po;
  uv_stdio_container_t stdio[3];
  child_fds f;
  int rc;

  if (open_fds(wp, &f) != 0)
    return -1;
  spawn_options(&po, stdio, a);
  stdio[0].flags = UV_INHERIT_FD;
  stdio[0].data.fd = f.to[0];
  stdio[1].flags = UV_INHERIT_FD;
  stdio[1].data.fd = f.from[1];

  if (alloc_handles(wp) != 0) {
    close_fds(&f);
    return -1;
  }
  wp->proc->data = wp;
  rc = uv_spawn(wp->loop, wp->proc, &po);
  /* The child's ends are the child's now. */
  close(f.to[0]);
  close(f.from[1]);
  if (rc != 0) {
    log_error("plugin \"%s\": cannot start its worker: %s", wp->p->name,
              uv_strerror(rc));
    uv_close((uv_handle_t *)wp->proc, free_handle_cb);
    wp->proc = NULL;
    free(wp->pipe);
    free(wp->wpipe);
    wp->pipe = wp->wpipe = NULL;
    close(f.to[1]);
    close(f.from[0]);
    return -1;
  }
  uv_pipe_init(wp->loop, wp->pipe, 0);
  wp->pipe->data = wp;
  uv_pipe_open(wp->pipe, f.from[0]);
  uv_pipe_init(wp->loop, wp->wpipe, 0);
  wp->wpipe->data = wp;
  uv_pipe_open(wp->wpipe, f.to[1]);
  return 0;
}

#endif

static int spawn(worker_process *wp) {
  child_args a;

  if (program == NULL) {
    log_error("plugin \"%s\": no program to run its worker", wp->p->name);
    return -1;
  }
  build_args(wp, &a);
  if (run_child(wp, &a) != 0)
    return -1;
  wp->alive = 1;
  framer_free(&wp->in);
  framer_init(&wp->in, wp->opts->max_message);
  uv_read_start((uv_stream_t *)wp->pipe, alloc_cb, read_cb);
  wp->ev.spawned(wp->ev.arg, (uv_stream_t *)wp->wpipe);
  uv_timer_start(wp->restart, start_timeout_cb, START_TIMEOUT_MS, 0);
  return 0;
}

/* --- the owner's side ---------------------------------------------------- */

int worker_process_start(worker_process *wp, uv_loop_t *loop,
                         const worker_settings *opts, plugin *p,
                         const worker_process_events *ev) {
  memset(wp, 0, sizeof(*wp));
  wp->ev = *ev;
  wp->loop = loop;
  wp->opts = opts;
  wp->p = p;
  framer_init(&wp->in, opts->max_message);
  if ((wp->restart = malloc(sizeof(*wp->restart))) == NULL) {
    log_error("plugin \"%s\": out of memory", p->name);
    return -1;
  }
  uv_timer_init(loop, wp->restart);
  wp->restart->data = wp;
  wp->window_start = uv_now(loop);
  return spawn(wp);
}

void worker_process_ready(worker_process *wp) {
  uv_timer_stop(wp->restart); /* the start timeout */
}

int worker_process_running(const worker_process *wp) {
  return wp->alive && wp->wpipe != NULL;
}

void worker_process_kill(worker_process *wp, const char *why) {
  if (wp->alive && wp->proc != NULL) {
    log_error("%s", why);
    uv_process_kill(wp->proc, SIGKILL);
  }
}

static void kill_cb(uv_timer_t *t) {
  worker_process *wp = t->data;
  if (wp->alive && wp->proc != NULL) {
    /* At mcpd's exit this is the plan (SIGTERM, then SIGKILL), not news. */
    log_msg(wp->ending ? LOG_LEVEL_INFO : LOG_LEVEL_WARN,
            "plugin \"%s\": its worker did not exit; killing it", wp->p->name);
    uv_process_kill(wp->proc, SIGKILL);
  }
}

void worker_process_stop(worker_process *wp) {
  wp->stopping = 1;
  if (wp->gone)
    return;
  if (wp->restart != NULL)
    uv_timer_stop(wp->restart);
  if (wp->alive) {
    /* EOF asks it to exit once its calls are answered, and what it says
     * until then is read; SIGKILL if it does not exit in time. */
    close_wpipe(wp);
    uv_timer_start(wp->restart, kill_cb, STOP_GRACE_MS, 0);
    return;
  }
  maybe_gone(wp);
}

void worker_process_kill_now(worker_process *wp) {
  if (wp->alive && wp->proc != NULL) {
#ifdef _WIN32
    /* TerminateProcess starts the end; the handle says when it is over. */
    uv_process_kill(wp->proc, SIGKILL);
    WaitForSingleObject(wp->proc->process_handle, INFINITE);
#else
    int pid = wp->proc->pid;
    kill(pid, SIGKILL);
    /* libuv may reap it first: then waitpid fails, and it is gone too. */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
      ;
#endif
  }
}

void worker_process_end(worker_process *wp) {
  wp->stopping = 1;
  wp->ending = 1;
  if (wp->gone)
    return;
  if (!wp->alive) {
    if (wp->restart != NULL)
      uv_timer_stop(wp->restart);
    maybe_gone(wp);
    return;
  }
  /* EOF and SIGTERM: a worker that is not stuck runs fini() and exits;
   * one that is gets SIGKILL after the grace.  On Windows, SIGTERM would
   * be TerminateProcess, and no fini(): EOF alone asks there. */
  close_pipes(wp);
#ifndef _WIN32
  if (wp->proc != NULL)
    uv_process_kill(wp->proc, SIGTERM);
#endif
  uv_timer_start(wp->restart, kill_cb, EXIT_GRACE_MS, 0);
}

/* Lets the owner free a stopped worker once its process and pipes are
 * gone.  The timer closes in the same loop turn as the owner's handles
 * (the write queue's), so that a uv_walk at exit finds all of them
 * closing or none; its close callback needs nothing of `wp`. */
static void maybe_gone(worker_process *wp) {
  if (!wp->stopping || wp->alive || !pipes_gone(wp) || wp->proc != NULL ||
      wp->gone || wp->exiting)
    return;
  wp->gone = 1;
  if (wp->restart != NULL)
    uv_close((uv_handle_t *)wp->restart, free_handle_cb);
  wp->restart = NULL;
  framer_free(&wp->in);
  wp->ev.gone(wp->ev.arg);
}
