/* SPDX-License-Identifier: MIT */
/* ctor_pid.c -- a plugin with an ELF constructor, to tell which process
 * runs plugin code: mcpd itself, or the worker of an isolated plugin.
 *
 * The constructor runs when the file is dlopen()ed, before mcpd sees the
 * descriptor.  It appends its getpid() and a newline to the file named by
 * $MCPD_TEST_CTOR_FILE, when set, and then sleeps $MCPD_TEST_CTOR_DELAY_MS
 * milliseconds, when set, so that a test can make this plugin the last
 * one ready.  The one tool, `pid` (INLINE), answers the getpid() of the
 * process it runs in, as text. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mcpd.h>

__attribute__((constructor)) static void ctor_pid_record(void) {
  const char *file = getenv("MCPD_TEST_CTOR_FILE");
  const char *delay = getenv("MCPD_TEST_CTOR_DELAY_MS");

  if (file != NULL && *file != '\0') {
    /* One write(2) with O_APPEND: lines from several processes never
     * interleave. */
    char line[32];
    int len = snprintf(line, sizeof(line), "%ld\n", (long)getpid());
    int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

    if (fd >= 0) {
      ssize_t n = write(fd, line, (size_t)len);
      (void)n;
      close(fd);
    }
  }
  if (delay != NULL && *delay != '\0') {
    long ms = strtol(delay, NULL, 10);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
      continue;
  }
}

static int ctor_pid_pid(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_textf(call, "%ld", (long)getpid());
}

static const mcpd_tool tools[] = {
    {.name = "pid",
     .description = "The process id of the process this plugin runs in.",
     .call = ctor_pid_pid,
     .exec = MCPD_EXEC_INLINE},
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "ctor_pid", .version = "1.0",
                   .description = "Records where its constructor ran.",
                   .tools = tools);
