/* SPDX-License-Identifier: MIT */
/* posix.c -- the platform layer with nothing beyond POSIX: what macOS and
 * the BSDs build, and what `./configure --enable-portable` builds on Linux
 * so these paths are tested.
 *
 * No anonymous files: plugin copies go to a private directory (the
 * loader's).  No parent-death signal: a worker notices its host's pipe
 * closing, a server its parent changing (server.c).  The executable is
 * found from argv[0], remembered at start.  The process's figures come
 * from getrusage (the peak resident size) and a walk of the descriptor
 * table. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "platform.h"

/* The executable, resolved when the program started. */
static char self[PATH_MAX];

/* argv[0] as a path: absolute already, relative to the directory, or a
 * name found in $PATH. */
static int resolve(const char *argv0, char *out) {
  const char *path, *p;
  char candidate[PATH_MAX];

  if (argv0 == NULL || *argv0 == '\0')
    return -1;
  if (strchr(argv0, '/') != NULL)
    return realpath(argv0, out) != NULL ? 0 : -1;
  if ((path = getenv("PATH")) == NULL)
    return -1;
  for (p = path;; p++) {
    const char *end = strchr(p, ':');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    /* An empty entry is the current directory. */
    int len = n == 0 ? snprintf(candidate, sizeof(candidate), "./%s", argv0)
                     : snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)n,
                                p, argv0);
    if (len > 0 && (size_t)len < sizeof(candidate) &&
        access(candidate, X_OK) == 0 && realpath(candidate, out) != NULL)
      return 0;
    if (end == NULL)
      return -1;
    p = end;
  }
}

void platform_init(const char *argv0) {
  if (resolve(argv0, self) != 0)
    self[0] = '\0';
}

#ifndef __APPLE__ /* macos.c asks the system */
int platform_self_exe(char *out, size_t size) {
  size_t n = strlen(self);
  if (n == 0 || n >= size)
    return -1;
  memcpy(out, self, n + 1);
  return 0;
}

int platform_die_with_parent(int sig) {
  (void)sig;
  return 0;
}
#endif

/* POSIX has no exit hook that knows the status. */
int platform_exit_fast(void) {
  return 0;
}

int platform_anon_file(const char *name, char *path, size_t pathlen) {
  (void)name;
  (void)path;
  (void)pathlen;
  errno = ENOSYS;
  return -1;
}

ssize_t platform_copy_range(int in, int out, off_t *off, size_t want) {
  (void)in;
  (void)out;
  (void)off;
  (void)want;
  return -2;
}

static int cloexec(int fd) {
  int flags = fcntl(fd, F_GETFD);
  return flags < 0 ? -1 : fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

int platform_pipe(int fd[2]) {
  if (pipe(fd) != 0)
    return -1;
  if (cloexec(fd[0]) != 0 || cloexec(fd[1]) != 0) {
    int e = errno;
    close(fd[0]);
    close(fd[1]);
    errno = e;
    return -1;
  }
  return 0;
}

int platform_socket(int domain, int type, int nonblocking) {
  int fd = socket(domain, type, 0), flags;
  if (fd < 0)
    return -1;
  if (cloexec(fd) != 0 ||
      (nonblocking && ((flags = fcntl(fd, F_GETFL)) < 0 ||
                       fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0))) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

void platform_process_stats(long long *rss, long long *fds) {
  struct rusage ru;
  struct rlimit rl;
  long long limit = 65536;

  *rss = *fds = -1;
  if (getrusage(RUSAGE_SELF, &ru) == 0)
#ifdef __APPLE__
    *rss = (long long)ru.ru_maxrss; /* bytes */
#else
    *rss = (long long)ru.ru_maxrss * 1024; /* KiB */
#endif
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      (long long)rl.rlim_cur < limit)
    limit = (long long)rl.rlim_cur;
  *fds = 0;
  for (long long fd = 0; fd < limit; fd++)
    if (fcntl((int)fd, F_GETFD) >= 0)
      (*fds)++;
}
