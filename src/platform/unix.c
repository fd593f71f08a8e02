/* SPDX-License-Identifier: MIT */
/* unix.c -- the parts of the platform layer every POSIX system shares
 * (Linux and the portable build alike): the dynamic loader and
 * descriptors. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <uv.h>

#include "platform.h"

void *platform_lib_open(const char *path, char *err, size_t errlen) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char *why = dlerror();
    size_t n = strlen(path);
    /* dlerror() starts with the path, which the caller names anyway. */
    if (why != NULL && strncmp(why, path, n) == 0 && why[n] == ':')
      why += n + (why[n + 1] == ' ' ? 2 : 1);
    snprintf(err, errlen, "dlopen failed: %s",
             why != NULL ? why : "unknown error");
  }
  return lib;
}

void *platform_lib_symbol(void *lib, const char *name) {
  return dlsym(lib, name);
}

void platform_lib_close(void *lib) {
  dlclose(lib);
}

int platform_uv_error(int errnum) {
  return uv_translate_sys_error(errnum);
}

int platform_dup_private(int fd) {
  return fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

int platform_input_closed(int fd) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR)) != 0;
}
