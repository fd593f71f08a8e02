/* SPDX-License-Identifier: MIT */
/* log.h -- leveled log lines on stderr.
 *
 * stdout belongs to the protocol; every diagnostic mcpd prints goes through
 * here.  Each line is written with one write(2) so lines from worker threads
 * never interleave. */
#ifndef MCPD_LOG_H
#define MCPD_LOG_H

#include <stdarg.h>

typedef enum log_level {
  LOG_LEVEL_ERROR = 0,
  LOG_LEVEL_WARN,
  LOG_LEVEL_INFO,
  LOG_LEVEL_DEBUG
} log_level;

void log_set_level(log_level level);
/* Accepts error, warn, warning, info, debug.  Returns -1 for anything else. */
int log_level_parse(const char *name);
/* Redirects log output to `fd` (stderr by default). */
void log_set_fd(int fd);
/* What starts every line instead of "mcpd" (a worker names its plugin). */
void log_set_prefix(const char *prefix);
/* Nonzero: each line is one JSON object (--log-format json) with "time",
 * "level", "source" (the prefix), the fields below that are known, and
 * "message"; text that is not UTF-8 is repaired, so every line parses. */
void log_set_json(int json);

/* The printf the format attributes name: mingw's C99 one on Windows,
 * where plain "printf" means msvcrt's. */
#ifdef __MINGW32__
#define LOG_PRINTF gnu_printf
#else
#define LOG_PRINTF printf
#endif

/* What a line is about, for JSON lines (text lines say it in words).
 * Any may be NULL.  `session` is a short hash, never a session id;
 * `request` is the request id as JSON text.  Nothing here ever carries a
 * token or a call's arguments. */
typedef struct log_fields {
  const char *plugin;
  const char *tool;
  const char *session;
  const char *request;
} log_fields;

void log_fields_msg(log_level level, const log_fields *f, const char *fmt, ...)
    __attribute__((format(LOG_PRINTF, 3, 4)));
/* Whether lines are JSON: what callers check before gathering fields. */
int log_json_enabled(void);
/* A short tag for `session` in JSON lines (8 hex digits, into `out` of 9
 * bytes): the same for one session, unrelated to its id, and different
 * in every process. */
void log_session_tag(const void *session, char *out);

void log_msg(log_level level, const char *fmt, ...)
    __attribute__((format(LOG_PRINTF, 2, 3)));
void log_vmsg(log_level level, const char *fmt, va_list ap)
    __attribute__((format(LOG_PRINTF, 2, 0)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif
