/* SPDX-License-Identifier: MIT */
/* watchdog.c -- see watchdog.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "log.h"
#include "platform.h"
#include "watchdog.h"

/* How often the thread looks, and how long plugin code gets to return
 * once mcpd was asked to exit. */
#define CHECK_MS 100
#define GRACE_MS 1500

/* The bits of wd.state under the count of enter() calls. */
#define BUSY 1ul   /* the loop is in plugin code */
#define FIRING 2ul /* the thread is ending the process */
#define STATE_SHIFT 2

static struct {
  uv_thread_t thread;
  uv_mutex_t lock; /* guards stop and the wait */
  uv_cond_t wake;
  int running;
  int stop;
  int input_fd;
  int parent;
  _Atomic int orphan_exit; /* watchdog_exit_with_parent() */
  _Atomic int input_ended; /* watchdog_input_ended() */
  /* The plugin code the loop is in: enter() and leave() run around every
   * call, so they take no lock.  enter() writes the fields below, then
   * publishes them with a new count and BUSY; the thread reads them only
   * after it set FIRING on that very state, and a leave() that finds
   * FIRING set waits for the process to end, so they are never freed
   * under it. */
  _Atomic unsigned long state;
  uint64_t since; /* now_ns() at enter() */
  const char *plugin;
  const char *what;
  const char *name;
} wd = {.input_fd = -1};

/* A coarse clock is enough for a grace period of seconds, and costs less
 * than a precise one on every call. */
static uint64_t now_ns(void) {
  struct timespec ts;
#ifdef CLOCK_MONOTONIC_COARSE
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
#else
  clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The last SIGTERM or SIGINT, set from the signal handler. */
static atomic_int asked;

#ifndef _WIN32
/* The handlers installed before ours, for the few signals caught (SIGTERM
 * and SIGINT): a short table rather than one entry per signal number, so
 * it shares a page with the rest of the static data. */
#define WATCHED_MAX 4
static struct {
  int signum; /* 0 while free */
  struct sigaction previous;
} watched[WATCHED_MAX];

static void on_signal(int signum, siginfo_t *info, void *context) {
  atomic_store(&asked, signum);
  for (size_t i = 0; i < WATCHED_MAX; i++) {
    struct sigaction *p = &watched[i].previous;
    if (watched[i].signum != signum)
      continue;
    if (p->sa_flags & SA_SIGINFO) {
      if (p->sa_sigaction != NULL)
        p->sa_sigaction(signum, info, context);
    } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
      p->sa_handler(signum);
    }
    return;
  }
}

void watchdog_catch(int signum) {
  struct sigaction sa;
  size_t i;

  if (signum <= 0 || signum >= NSIG)
    return;
  for (i = 0; i < WATCHED_MAX; i++)
    if (watched[i].signum == signum || watched[i].signum == 0)
      break;
  /* A second call for a signal would keep our own handler as the one to
   * chain to, which would call itself. */
  if (i == WATCHED_MAX || watched[i].signum == signum ||
      sigaction(signum, NULL, &watched[i].previous) != 0)
    return;
  watched[i].signum = signum;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | (watched[i].previous.sa_flags & SA_RESTART);
  sa.sa_mask = watched[i].previous.sa_mask;
  sigaction(signum, &sa, NULL);
}
#else
/* Windows delivers no SIGTERM, and libuv takes Ctrl+C through a console
 * handler of its own: a loop held by plugin code is ended by end of
 * input. */
void watchdog_catch(int signum) {
  (void)signum;
}
#endif

void watchdog_exit_with_parent(void) {
  atomic_store(&wd.orphan_exit, 1);
}

void watchdog_input_ended(void) {
  atomic_store(&wd.input_ended, 1);
}

/* Why mcpd should be exiting now, or NULL. */
static const char *exit_reason(int input_fd, int parent) {
  int signum = atomic_load(&asked);
  if (signum == SIGTERM)
    return "SIGTERM";
  if (signum == SIGINT)
    return "SIGINT";
  if (parent > 1 && getppid() != parent)
    return "the process that started mcpd exited";
  if (atomic_load(&wd.input_ended) ||
      (input_fd >= 0 && platform_input_closed(input_fd)))
    return "end of input";
  return NULL;
}

static void watch(void *arg) {
  unsigned long caught = 0; /* the generation a reason was noticed in */
  uint64_t noticed = 0;
  (void)arg;

  uv_mutex_lock(&wd.lock);
  while (!wd.stop) {
    const char *why;
    uint64_t now;
    unsigned long state;

    uv_cond_timedwait(&wd.wake, &wd.lock, (uint64_t)CHECK_MS * 1000000);
    /* An orphaned worker ends now, whatever its loop is doing: nothing it
     * could still do reaches anyone. */
    if (atomic_load(&wd.orphan_exit) && wd.parent > 1 && getppid() != wd.parent)
      _exit(0);
    state = atomic_load_explicit(&wd.state, memory_order_acquire);
    if (wd.stop || !(state & BUSY)) {
      caught = 0;
      continue;
    }
    if ((why = exit_reason(wd.input_fd, wd.parent)) == NULL)
      continue;
    now = now_ns();
    if (caught != state >> STATE_SHIFT) {
      caught = state >> STATE_SHIFT;
      noticed = now;
      continue;
    }
    if (now - noticed < (uint64_t)GRACE_MS * 1000000)
      continue;
    /* The same plugin code still holds the loop: nothing else can end
     * the process in order.  Unless it returned just now, FIRING keeps
     * it from leaving, so what it named stays valid. */
    if (!atomic_compare_exchange_strong_explicit(
            &wd.state, &state, state | FIRING, memory_order_acquire,
            memory_order_acquire))
      continue;
    log_error("exiting (%s): plugin \"%s\" %s%s%s%s has held the event loop "
              "for %llu ms and did not return",
              why, wd.plugin, wd.what, wd.name ? " \"" : "",
              wd.name ? wd.name : "", wd.name ? "\"" : "",
              (unsigned long long)((now - wd.since) / 1000000));
    _exit(0);
  }
  uv_mutex_unlock(&wd.lock);
}

int watchdog_start(int input_fd) {
  if (wd.running)
    return 0;
  if (uv_mutex_init(&wd.lock) != 0)
    return -1;
  if (uv_cond_init(&wd.wake) != 0) {
    uv_mutex_destroy(&wd.lock);
    return -1;
  }
  wd.input_fd = input_fd >= 0 ? platform_dup_private(input_fd) : -1;
  wd.parent = (int)getppid();
  wd.stop = 0;
  if (uv_thread_create(&wd.thread, watch, NULL) != 0) {
    log_warn("watchdog: cannot start its thread: %s", strerror(errno));
    if (wd.input_fd >= 0)
      close(wd.input_fd);
    wd.input_fd = -1;
    uv_cond_destroy(&wd.wake);
    uv_mutex_destroy(&wd.lock);
    return -1;
  }
  wd.running = 1;
  return 0;
}

void watchdog_stop(void) {
  if (!wd.running)
    return;
  uv_mutex_lock(&wd.lock);
  wd.stop = 1;
  uv_cond_signal(&wd.wake);
  uv_mutex_unlock(&wd.lock);
  uv_thread_join(&wd.thread);
  if (wd.input_fd >= 0)
    close(wd.input_fd);
  wd.input_fd = -1;
  uv_cond_destroy(&wd.wake);
  uv_mutex_destroy(&wd.lock);
  wd.running = 0;
}

void watchdog_enter(const char *plugin, const char *what, const char *name) {
  unsigned long state;

  if (!wd.running)
    return;
  /* Only this thread changes the count; FIRING is never set here, since
   * the last leave() returned. */
  state = atomic_load_explicit(&wd.state, memory_order_relaxed);
  wd.since = now_ns();
  wd.plugin = plugin ? plugin : "?";
  wd.what = what ? what : "?";
  wd.name = name;
  atomic_store_explicit(&wd.state,
                        (((state >> STATE_SHIFT) + 1) << STATE_SHIFT) | BUSY,
                        memory_order_release);
}

void watchdog_leave(void) {
  if (!wd.running)
    return;
  if (atomic_fetch_and_explicit(&wd.state, ~BUSY, memory_order_acq_rel) &
      FIRING)
    for (;;)
      pause(); /* the thread is writing its line and ending the process */
}
