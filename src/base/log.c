/* SPDX-License-Identifier: MIT */
/* log.c -- leveled log lines on stderr. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static log_level current_level = LOG_LEVEL_INFO;
static int log_fd = 2;

static const char *const level_names[] = {"error", "warn", "info", "debug"};
static char prefix[96] = "mcpd";

void log_set_prefix(const char *p) {
  snprintf(prefix, sizeof(prefix), "%s", p);
}

void log_set_level(log_level level) {
  current_level = level;
}

void log_set_fd(int fd) {
  log_fd = fd;
}

int log_level_parse(const char *name) {
  if (name == NULL)
    return -1;
  if (strcmp(name, "warning") == 0)
    return LOG_LEVEL_WARN;
  for (int i = 0; i < 4; i++)
    if (strcmp(name, level_names[i]) == 0)
      return i;
  return -1;
}

void log_vmsg(log_level level, const char *fmt, va_list ap) {
  char line[2048];
  size_t len;
  int n;

  if (level > current_level)
    return;
  n = snprintf(line, sizeof(line), "%s: %s: ", prefix, level_names[level]);
  len = (size_t)n;
  n = vsnprintf(line + len, sizeof(line) - len - 1, fmt, ap);
  if (n < 0)
    n = 0;
  len += (size_t)n;
  if (len > sizeof(line) - 2) {
    /* Truncated: say so rather than cutting silently. */
    len = sizeof(line) - 5;
    memcpy(line + len, "...", 3);
    len += 3;
  }
  line[len++] = '\n';
  /* One write per line; a short write to a terminal or pipe is retried. */
  for (size_t off = 0; off < len;) {
    ssize_t w = write(log_fd, line + off, len - off);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return;
    }
    off += (size_t)w;
  }
}

void log_msg(log_level level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  log_vmsg(level, fmt, ap);
  va_end(ap);
}
