/* SPDX-License-Identifier: MIT */
/* linux.c -- the platform layer on Linux: memfd for plugin copies, /proc
 * for the executable and the process's figures, prctl for ending with the
 * parent, and the close-on-exec flags of pipe2 and socket. */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>
#ifdef HAVE_PRCTL
#include <sys/prctl.h>
#endif

#include "platform.h"

void platform_init(const char *argv0) {
  (void)argv0; /* /proc names the executable */
}

int platform_self_exe(char *out, size_t size) {
  ssize_t n = readlink("/proc/self/exe", out, size - 1);
  const char *run;
  char real[PATH_MAX];

  if (n > 0) {
    out[n] = '\0';
    return 0;
  }
  /* Without /proc (a chroot): the path it was started by, from the
   * auxiliary vector. */
  run = (const char *)getauxval(AT_EXECFN);
  if (run == NULL || realpath(run, real) == NULL || strlen(real) >= size)
    return -1;
  memcpy(out, real, strlen(real) + 1);
  return 0;
}

int platform_anon_file(const char *name, char *path, size_t pathlen) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0)
    return -1;
  snprintf(path, pathlen, "/proc/self/fd/%d", fd);
  /* Without /proc, dlopen() could not reach the memfd. */
  if (access(path, R_OK) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

ssize_t platform_copy_range(int in, int out, off_t *off, size_t want) {
  loff_t from = *off;
  ssize_t n = copy_file_range(in, &from, out, NULL, want, 0);

  if (n >= 0) {
    *off = (off_t)from;
    return n;
  }
  /* Not between these two files (a memfd is on a file system of its own,
   * and newer kernels refuse to copy across), or not on this kernel. */
  if (errno != EXDEV && errno != EINVAL && errno != ENOSYS &&
      errno != EOPNOTSUPP && errno != EBADF)
    return -1;
  n = sendfile(out, in, off, want);
  if (n < 0 && (errno == EINVAL || errno == ENOSYS))
    return -2;
  return n;
}

int platform_die_with_parent(int sig) {
#ifdef HAVE_PRCTL
  return prctl(PR_SET_PDEATHSIG, sig) == 0;
#else
  (void)sig;
  return 0;
#endif
}

static void exit_now(int status, void *arg) {
  (void)arg;
  _exit(status);
}

int platform_exit_fast(void) {
  return on_exit(exit_now, NULL) == 0;
}

int platform_pipe(int fd[2]) {
  return pipe2(fd, O_CLOEXEC);
}

int platform_socket(int domain, int type, int nonblocking) {
  return socket(domain, type | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0),
                0);
}

void platform_process_stats(long long *rss, long long *fds) {
  FILE *f = fopen("/proc/self/statm", "re");
  long pages = 0, resident = 0;
  DIR *d;
  struct dirent *e;

  *rss = *fds = -1;
  if (f != NULL) {
    if (fscanf(f, "%ld %ld", &pages, &resident) == 2)
      *rss = (long long)resident * sysconf(_SC_PAGESIZE);
    fclose(f);
  }
  if ((d = opendir("/proc/self/fd")) != NULL) {
    *fds = 0;
    while ((e = readdir(d)) != NULL)
      if (e->d_name[0] != '.')
        (*fds)++;
    closedir(d);
    (*fds)--; /* the one opendir() holds */
  }
}
