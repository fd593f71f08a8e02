/* SPDX-License-Identifier: MIT */
/* log.c -- leveled log lines on stderr. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "utf8.h"

static log_level current_level = LOG_LEVEL_INFO;
static int log_fd = 2;

static const char *const level_names[] = {"error", "warn", "info", "debug"};
static char prefix[96] = "mcpd";
static int json_lines;

void log_set_json(int json) {
  json_lines = json;
}

int log_json_enabled(void) {
  return json_lines;
}

void log_session_tag(const void *session, char *out) {
  static uint64_t salt;
  uint64_t h = 1469598103934665603ull;
  uintptr_t v = (uintptr_t)session;

  /* Set once, on the loop thread, before any session exists. */
  if (salt == 0) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    salt = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)getpid() ^ 1;
  }
  for (int i = 0; i < 8; i++, v >>= 8)
    h = (h ^ ((v & 0xff) ^ (salt >> (i * 8) & 0xff))) * 1099511628211ull;
  snprintf(out, 9, "%08x", (unsigned)(h ^ (h >> 32)));
}

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

/* Appends `s` as a JSON string (quoted, escaped, repaired to UTF-8) to
 * `out` of `size`, from *len: cut short with "..." (after a whole
 * character) when it does not fit. */
static void put_json_string(char *out, size_t size, size_t *len,
                            const char *s) {
  size_t n = strlen(s), rlen = n, o = *len, i;
  char *fixed = utf8_valid(s, n) ? NULL : utf8_repair(s, n, &rlen);
  const unsigned char *p = (const unsigned char *)(fixed ? fixed : s);

  out[o++] = '"';
  for (i = 0; i < rlen; i++) {
    unsigned char c = p[i];
    /* Room for the longest escape, a whole character, "..." and '"'. */
    if (o + 12 >= size)
      break;
    if (c == '"' || c == '\\') {
      out[o++] = '\\';
      out[o++] = (char)c;
    } else if (c == '\n') {
      out[o++] = '\\';
      out[o++] = 'n';
    } else if (c < 0x20 || c == 0x7f) {
      o += (size_t)snprintf(out + o, size - o, "\\u%04x", c);
    } else {
      out[o++] = (char)c;
    }
  }
  if (i < rlen) {
    /* Not inside a character: drop its bytes already written. */
    while (o > *len + 1 && ((unsigned char)out[o - 1] & 0xc0) == 0x80)
      o--;
    if (o > *len + 1 && (unsigned char)out[o - 1] >= 0xc0)
      o--;
    memcpy(out + o, "...", 3);
    o += 3;
  }
  out[o++] = '"';
  free(fixed);
  *len = o;
}

/* `, "key": "value"` when value is set. */
static void put_member(char *out, size_t size, size_t *len, const char *key,
                       const char *value, int raw) {
  int n;
  if (value == NULL || *len + strlen(key) + 8 >= size)
    return;
  n = snprintf(out + *len, size - *len, ",\"%s\":", key);
  *len += (size_t)n;
  if (raw && strlen(value) < 80 && *len + strlen(value) + 4 < size) {
    memcpy(out + *len, value, strlen(value));
    *len += strlen(value);
  } else {
    put_json_string(out, size, len, value);
  }
}

/* One JSON line: {"time", "level", "source", fields..., "message"}. */
static size_t json_line(char *line, size_t size, log_level level,
                        const log_fields *f, const char *text) {
  struct timespec ts;
  struct tm tm;
  size_t len;

  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  len = strftime(line, size, "{\"time\":\"%Y-%m-%dT%H:%M:%S", &tm);
  len += (size_t)snprintf(line + len, size - len, ".%03ldZ\",\"level\":\"%s\"",
                          ts.tv_nsec / 1000000L, level_names[level]);
  put_member(line, size, &len, "source", prefix, 0);
  if (f != NULL) {
    put_member(line, size, &len, "plugin", f->plugin, 0);
    put_member(line, size, &len, "tool", f->tool, 0);
    put_member(line, size, &len, "session", f->session, 0);
    /* The id as the client sent it: a number, or a string's JSON text. */
    put_member(line, size, &len, "request", f->request, 1);
  }
  memcpy(line + len, ",\"message\":", 11);
  len += 11;
  put_json_string(line, size - 2, &len, text);
  line[len++] = '}';
  return len;
}

static void write_line(const char *line, size_t len) {
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

static void log_fields_vmsg(log_level level, const log_fields *f,
                            const char *fmt, va_list ap) {
  char text[2048], line[4096];
  size_t len;

  int n;

  if (level > current_level)
    return;
  n = vsnprintf(text, sizeof(text), fmt, ap);
  if (n >= (int)sizeof(text)) {
    /* Truncated: say so, after a whole character. */
    size_t k = utf8_cut(text, strlen(text), sizeof(text) - 4);
    memcpy(text + k, "...", 4);
  }
  len = json_line(line, sizeof(line) - 1, level, f, text);
  line[len++] = '\n';
  write_line(line, len);
}

void log_fields_msg(log_level level, const log_fields *f, const char *fmt,
                    ...) {
  va_list ap;
  va_start(ap, fmt);
  if (json_lines) {
    log_fields_vmsg(level, f, fmt, ap);
  } else {
    /* Text lines name the plugin in words, as they always did. */
    char text[2048];
    vsnprintf(text, sizeof(text), fmt, ap);
    if (f != NULL && f->plugin != NULL)
      log_msg(level, "plugin \"%s\": %s", f->plugin, text);
    else
      log_msg(level, "%s", text);
  }
  va_end(ap);
}

void log_vmsg(log_level level, const char *fmt, va_list ap) {
  char line[2048];
  size_t len;
  int n;

  if (level > current_level)
    return;
  if (json_lines) {
    log_fields_vmsg(level, NULL, fmt, ap);
    return;
  }
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
  write_line(line, len);
}

void log_msg(log_level level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  log_vmsg(level, fmt, ap);
  va_end(ap);
}
