/* SPDX-License-Identifier: MIT */
/* settings.h -- every setting of mcpd, read from the command line and the
 * --config file by walking one table (settings.c).
 *
 * Each subsystem reads a small struct of its own (methods_settings,
 * http_settings, loader_settings, ...), never this one: `settings` is
 * held by main() and the server, which hand each owner its part.  (The
 * module is not called "config" because autoconf's config.h has that
 * name.) */
#ifndef MCPD_SETTINGS_H
#define MCPD_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "http_settings.h"
#include "loader_settings.h"
#include "methods_settings.h"
#include "plugin_settings.h"
#include "worker_settings.h"

#define MCPD_DEFAULT_MAX_MESSAGE ((size_t)64 * 1024 * 1024)
#define MCPD_DEFAULT_PAGE_SIZE 1000
#define MCPD_DEFAULT_MAX_IN_FLIGHT 1024
#define MCPD_DEFAULT_REQUEST_TIMEOUT_MS 60000
/* How long a 2026-07-28 requestState stays valid: ten minutes, time for a
 * person to answer an elicitation. */
#define MCPD_DEFAULT_REQUEST_STATE_TTL_MS 600000
#define MCPD_DEFAULT_THREADS 8
#define MCPD_DEFAULT_DEADLINE_MS 300000
#define MCPD_DEFAULT_SESSION_TIMEOUT_S 1800

typedef enum settings_mode {
  MODE_SERVE = 0,
  MODE_HELP,
  MODE_VERSION,
  MODE_LIST,
  MODE_CALL,
  MODE_WORKER /* --worker: one plugin, served to the mcpd that started us */
} settings_mode;

/* What the server hands the call executor (call_exec's fields). */
typedef struct call_settings {
  /* How long a request to the client may wait for its answer. */
  uint64_t request_timeout_ms;
  /* 2026-07-28 input_required: the file whose bytes key requestState's
   * HMAC (borrowed from the config; NULL for a random key per process),
   * and how long a requestState stays valid. */
  const char *state_key_file;
  uint64_t request_state_ttl_ms;
  size_t threads; /* the libuv pool, which runs POOL tools */
} call_settings;

/* Everything, as main() and the server hold it.  It points into itself
 * (loader.plugins, worker.plugins), so it stays where settings_parse()
 * filled it. */
typedef struct settings {
  settings_mode mode;
  const char *config_path;
  json_object *config; /* the whole file, owned; NULL without one */
  const char *transport;
  const char *listen; /* --listen as given; http.listen is the one used */
  int log_level;      /* log_level */
  int log_json;       /* --log-format json */
  int watch;
  size_t max_message;   /* stdio; copied to http and worker */
  size_t max_in_flight; /* per session */
  const char *call_tool;
  const char *call_args;
  /* Worker mode (internal; see src/isolation/worker_hello.h): the plugin
   * to serve.  Its config and limits come from the host on stdin. */
  const char *worker_path;

  call_settings call;
  plugin_settings plugins;
  loader_settings loader;
  worker_settings worker;
  methods_settings methods;
  http_settings http;
} settings;

/* Parses argv and the --config file.  Returns 0, or -1 after printing one
 * clear line to stderr (the caller exits with status 2).  The command line
 * wins over the file; settings_free() must follow either way. */
int settings_parse(settings *s, int argc, char **argv);
void settings_free(settings *s);
/* Writes --help, made from the table, to `fd`. */
void settings_print_help(const char *argv0, int fd);

/* The rows of the table, for the tests and the docs. */
typedef enum setting_type {
  SETTING_BOOL,   /* a flag without a value; true or false in the file */
  SETTING_U64,    /* uint64_t within [min, max] */
  SETTING_SIZE,   /* size_t within [min, max] */
  SETTING_STRING, /* borrowed from argv or the file */
  SETTING_LEVEL,  /* a log level by name */
  SETTING_CUSTOM  /* the row's setter does the work */
} setting_type;

typedef struct setting setting;
struct settings_parser; /* the state of one settings_parse() */
/* A custom row's setter, given either a flag's `text` (NULL when it has
 * none) or a config value `val`.  Returns 0 once applied; -1 after
 * logging why; 1 for a flag that ends parsing (--help, --version). */
typedef int (*setting_set_fn)(struct settings_parser *p, const setting *row,
                              const char *text, json_object *val);

struct setting {
  const char *flag; /* the long flag without "--", or NULL */
  const char *key;  /* its key in the --config file, or NULL */
  setting_type type;
  unsigned flags;     /* SETTING_F_* */
  const char *owner;  /* which part of `settings` holds it */
  size_t offset;      /* where, from the start of `settings` */
  uint64_t min, max;  /* numbers: the bounds, on both flag and key */
  uint64_t def;       /* numbers, booleans, levels: the default */
  const char *noun;   /* numbers: what a flag's error calls the value;
                         non-empty strings: what the file's error says */
  setting_set_fn set; /* SETTING_CUSTOM */
  const char *arg;    /* --help: the value's name, or NULL */
  const char *help;   /* --help: the text (lines split by \n); NULL: none */
};

#define SETTING_F_NEGATE 1u    /* the flag sets false (--no-watch) */
#define SETTING_F_NONEMPTY 2u  /* a string must not be empty */
#define SETTING_F_INTERNAL 4u  /* not in --help: mcpd's own workers use it */
#define SETTING_F_NO_ARG 8u    /* a custom flag without a value */
#define SETTING_F_OPT_ARG 16u  /* a custom flag whose value may be left out */
#define SETTING_F_HTTP 32u     /* HTTP authorization: refused with stdio */
#define SETTING_F_NO_UPPER 64u /* max is no bound a person would name */

const setting *settings_table(size_t *n);

#endif
