/* watchdog.c -- see watchdog.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "log.h"
#include "watchdog.h"

/* How often the thread looks, and how long plugin code gets to return
 * once mcpd was asked to exit. */
#define CHECK_MS 100
#define GRACE_MS 1500

static struct {
  uv_thread_t thread;
  uv_mutex_t lock; /* guards the fields below it */
  uv_cond_t wake;
  int running;
  int stop;
  int input_fd;
  int parent;
  /* The plugin code the loop is in, if any. */
  int busy;
  unsigned long generation; /* counts enter() calls */
  uint64_t since;           /* uv_hrtime() at enter() */
  const char *plugin;
  const char *what;
  const char *name;
} wd = {.input_fd = -1};

/* The last SIGTERM or SIGINT, set from the signal handler. */
static atomic_int asked;
static struct sigaction previous[NSIG];

static void on_signal(int signum, siginfo_t *info, void *context) {
  struct sigaction *p = &previous[signum];
  atomic_store(&asked, signum);
  if (p->sa_flags & SA_SIGINFO) {
    if (p->sa_sigaction != NULL)
      p->sa_sigaction(signum, info, context);
  } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
    p->sa_handler(signum);
  }
}

void watchdog_catch(int signum) {
  struct sigaction sa;
  if (signum <= 0 || signum >= NSIG ||
      sigaction(signum, NULL, &previous[signum]) != 0)
    return;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | (previous[signum].sa_flags & SA_RESTART);
  sa.sa_mask = previous[signum].sa_mask;
  sigaction(signum, &sa, NULL);
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
  if (input_fd >= 0) {
    struct pollfd p = {.fd = input_fd, .events = POLLIN};
    if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR)))
      return "end of input";
  }
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

    uv_cond_timedwait(&wd.wake, &wd.lock, (uint64_t)CHECK_MS * 1000000);
    if (wd.stop || !wd.busy) {
      caught = 0;
      continue;
    }
    if ((why = exit_reason(wd.input_fd, wd.parent)) == NULL)
      continue;
    now = uv_hrtime();
    if (caught != wd.generation) {
      caught = wd.generation;
      noticed = now;
      continue;
    }
    if (now - noticed < (uint64_t)GRACE_MS * 1000000)
      continue;
    /* The same plugin code still holds the loop: nothing else can end
     * the process in order. */
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
  wd.input_fd = input_fd >= 0 ? fcntl(input_fd, F_DUPFD_CLOEXEC, 3) : -1;
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
  if (!wd.running)
    return;
  uv_mutex_lock(&wd.lock);
  wd.busy = 1;
  wd.generation++;
  wd.since = uv_hrtime();
  wd.plugin = plugin ? plugin : "?";
  wd.what = what ? what : "?";
  wd.name = name;
  uv_mutex_unlock(&wd.lock);
}

void watchdog_leave(void) {
  if (!wd.running)
    return;
  uv_mutex_lock(&wd.lock);
  wd.busy = 0;
  uv_mutex_unlock(&wd.lock);
}
