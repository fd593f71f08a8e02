/* SPDX-License-Identifier: MIT */
/* macos.c -- what macOS does its own way, beside posix.c: plugins are
 * Mach-O, the executable's path comes from dyld, and a process learns of
 * its parent's death from a kqueue.
 *
 * Built from the portable paths; not yet run in CI (the README says so). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <mach-o/dyld.h>
#include <mach-o/fat.h>
#include <mach-o/loader.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/event.h>
#include <unistd.h>

#include "platform.h"

int platform_self_exe(char *out, size_t size) {
  char raw[PATH_MAX], real[PATH_MAX];
  uint32_t n = sizeof(raw);
  if (_NSGetExecutablePath(raw, &n) != 0 || realpath(raw, real) == NULL ||
      strlen(real) >= size)
    return -1;
  memcpy(out, real, strlen(real) + 1);
  return 0;
}

/* A Mach-O of this program's own kind: 64-bit, this CPU, a dylib or a
 * bundle (what dlopen loads), with every load command inside the file. */
int platform_check_object(int fd, off_t size, char *err, size_t errlen) {
  struct mach_header_64 mh;
  uint64_t off;

  if (pread(fd, &mh, sizeof(mh), 0) != (ssize_t)sizeof(mh) ||
      (mh.magic != MH_MAGIC_64 && mh.magic != FAT_CIGAM &&
       mh.magic != FAT_MAGIC)) {
    snprintf(err, errlen, "not a Mach-O file (is it a shared object?)");
    return -1;
  }
  if (mh.magic != MH_MAGIC_64)
    return 0; /* a universal file: dlopen picks and checks the slice */
#if defined(__aarch64__) || defined(__arm64__)
  if (mh.cputype != CPU_TYPE_ARM64) {
#else
  if (mh.cputype != CPU_TYPE_X86_64) {
#endif
    snprintf(err, errlen,
             "Mach-O CPU type does not match this host (built for "
             "another architecture?)");
    return -1;
  }
  if (mh.filetype != MH_DYLIB && mh.filetype != MH_BUNDLE) {
    snprintf(err, errlen,
             "Mach-O file is not a dylib or bundle (build it with "
             "-dynamiclib or -bundle)");
    return -1;
  }
  off = sizeof(mh) + (uint64_t)mh.sizeofcmds;
  if (off > (uint64_t)size) {
    snprintf(err, errlen, "truncated Mach-O file (still being written?)");
    return -1;
  }
  return 0;
}

/* The thread that waits for the parent's exit, then signals the
 * process. */
static void *watch_parent(void *arg) {
  int sig = (int)(intptr_t)arg, kq = kqueue();
  struct kevent ev;

  if (kq < 0)
    return NULL;
  EV_SET(&ev, getppid(), EVFILT_PROC, EV_ADD | EV_ONESHOT, NOTE_EXIT, 0, NULL);
  /* ESRCH: the parent is gone already. */
  if (kevent(kq, &ev, 1, NULL, 0, NULL) == 0)
    while (kevent(kq, NULL, 0, &ev, 1, NULL) < 0 && errno == EINTR)
      ;
  kill(getpid(), sig);
  close(kq);
  return NULL;
}

int platform_die_with_parent(int sig) {
  pthread_t t;
  if (getppid() == 1 ||
      pthread_create(&t, NULL, watch_parent, (void *)(intptr_t)sig) != 0)
    return 0;
  pthread_detach(t);
  return 1;
}
