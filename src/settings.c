/* SPDX-License-Identifier: MIT */
/* settings.c -- every setting of mcpd in one table, and the walks over it:
 * the command line, the --config file, defaults, bounds, precedence (the
 * command line wins) and --help. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "platform.h"
#include "settings.h"
#include "strbuf.h"

#ifndef MCPD_PLUGINS_DIR
#define MCPD_PLUGINS_DIR "/usr/local/lib/mcpd/plugins"
#endif

#define DAY_MS 86400000

/* The state of one settings_parse(). */
typedef struct settings_parser {
  settings *s;
  const char *auth_flag; /* the first HTTP authorization flag given */
  unsigned char *given;  /* by row: the command line set it */
} parser;

/* --- custom setters ----------------------------------------------------- */

static int add_string(char ***all, size_t *n, const char *s) {
  char **grown = realloc(*all, (*n + 1) * sizeof(*grown));
  if (grown == NULL)
    return -1;
  *all = grown;
  if ((grown[*n] = strdup(s)) == NULL)
    return -1;
  (*n)++;
  return 0;
}

static int add_dir(settings *s, const char *dir) {
  return add_string(&s->loader.plugin_dirs, &s->loader.n_plugin_dirs, dir);
}

static int config_error(const parser *p, const char *key, const char *what) {
  log_error("config \"%s\": %s%s%s%s", p->s->config_path, key ? "key \"" : "",
            key ? key : "", key ? "\": " : "", what);
  return -1;
}

/* --plugins DIR (repeatable), or "pluginDirs": [...], which the command
 * line overrides. */
static int set_dirs(parser *p, const setting *row, const char *text,
                    json_object *val) {
  settings *s = p->s;
  size_t n;

  if (text != NULL) {
    s->loader.plugin_dirs_given = 1;
    return add_dir(s, text) == 0 ? 0 : (log_error("out of memory"), -1);
  }
  if (!json_object_is_type(val, json_type_array))
    return config_error(p, row->key, "must be an array of directories");
  n = json_object_array_length(val);
  for (size_t i = 0; i < n; i++) {
    json_object *d = json_object_array_get_idx(val, i);
    if (!json_object_is_type(d, json_type_string))
      return config_error(p, row->key, "must list strings");
    if (!s->loader.plugin_dirs_given && add_dir(s, json_object_get_string(d)))
      return config_error(p, row->key, "out of memory");
  }
  if (n > 0 && !s->loader.plugin_dirs_given)
    s->loader.plugin_dirs_given = 2; /* from the file */
  return 0;
}

static int set_allow_host(parser *p, const setting *row, const char *text,
                          json_object *val) {
  http_settings *h = &p->s->http;
  (void)row;
  (void)val;
  if (*text == '\0' || strpbrk(text, ":/ \t") != NULL) {
    log_error("--allow-host \"%s\": expected a host name without port", text);
    return -1;
  }
  if (add_string(&h->allow_hosts, &h->n_allow_hosts, text) != 0) {
    log_error("out of memory");
    return -1;
  }
  return 0;
}

/* A session id prefix is visible ASCII and short. */
static int set_session_prefix(parser *p, const setting *row, const char *text,
                              json_object *val) {
  size_t n = strlen(text);
  int ok = n > 0 && n <= 32;
  (void)row;
  (void)val;
  for (const char *c = text; ok && *c; c++)
    ok = *c >= 0x21 && *c <= 0x7e;
  if (!ok) {
    log_error("--session-prefix \"%s\": expected 1 to 32 visible ASCII "
              "characters",
              text);
    return -1;
  }
  p->s->http.session_prefix = text;
  p->s->methods.task_prefix = text; /* task ids route the same way */
  return 0;
}

/* --log-format text|json. */
static int set_log_format(parser *p, const setting *row, const char *text,
                          json_object *val) {
  (void)row;
  if (text == NULL)
    text = json_object_is_type(val, json_type_string)
               ? json_object_get_string(val)
               : "";
  if (strcmp(text, "json") != 0 && strcmp(text, "text") != 0) {
    log_error("--log-format (logFormat) \"%s\": expected text or json", text);
    return -1;
  }
  p->s->log_json = strcmp(text, "json") == 0;
  p->s->worker.log_json = p->s->log_json;
  return 0;
}

/* A plugin name as descriptors allow: [A-Za-z0-9_.-]{1,64}. */
static int registry_name_ok(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 64)
    return 0;
  for (; *s; s++)
    if (!(*s == '_' || *s == '.' || *s == '-' || (*s >= 'a' && *s <= 'z') ||
          (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
      return 0;
  return 1;
}

/* Adds `name`, given to `flag`, to the set `*set`. */
static int add_name(json_object **set, const char *flag, const char *name) {
  if (!registry_name_ok(name)) {
    log_error("%s \"%s\": not a plugin name", flag, name);
    return -1;
  }
  if (*set == NULL && (*set = json_object_new_object()) == NULL) {
    log_error("out of memory");
    return -1;
  }
  json_object_object_add(*set, name, json_object_new_boolean(1));
  return 0;
}

/* "--isolate" alone is the default, every plugin in a worker process of
 * its own (after an "--in-process", the later word wins); "--isolate
 * NAME" (repeatable) keeps NAME there whatever --in-process or the config
 * says. */
static int set_isolate(parser *p, const setting *row, const char *text,
                       json_object *val) {
  (void)row;
  (void)val;
  if (text == NULL) {
    p->s->plugins.in_process_all = 0;
    return 0;
  }
  return add_name(&p->s->plugins.isolate_names, "--isolate", text);
}

/* "--in-process" alone runs every plugin inside mcpd; "--in-process
 * NAME" (repeatable) that one. */
static int set_in_process(parser *p, const setting *row, const char *text,
                          json_object *val) {
  (void)row;
  (void)val;
  if (text == NULL) {
    p->s->plugins.in_process_all = 1;
    return 0;
  }
  return add_name(&p->s->plugins.in_process_names, "--in-process", text);
}

/* The config's "plugins": each plugin's config, by name. */
static int set_plugin_configs(parser *p, const setting *row, const char *text,
                              json_object *val) {
  (void)text;
  if (!json_object_is_type(val, json_type_object))
    return config_error(p, row->key, "must be an object of plugin configs");
  p->s->plugins.configs = val;
  return 0;
}

/* --list, --call TOOL, --help, --version: what mcpd does instead of
 * serving. */
static int set_mode(parser *p, const setting *row, const char *text,
                    json_object *val) {
  static const struct {
    const char *flag;
    settings_mode mode;
  } modes[] = {{"list", MODE_LIST},
               {"call", MODE_CALL},
               {"help", MODE_HELP},
               {"version", MODE_VERSION}};
  (void)val;
  for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
    if (strcmp(row->flag, modes[i].flag) == 0)
      p->s->mode = modes[i].mode;
  if (strcmp(row->flag, "call") == 0)
    p->s->call_tool = text;
  /* --help and --version end parsing: what follows is not looked at. */
  return p->s->mode == MODE_HELP || p->s->mode == MODE_VERSION;
}

static int set_worker(parser *p, const setting *row, const char *text,
                      json_object *val) {
  (void)row;
  (void)val;
  if (text[0] == '\0') {
    log_error("--worker needs a plugin path");
    return -1;
  }
  p->s->worker_path = text;
  return 0;
}

static int parse_uint(const char *s, uint64_t min, uint64_t max,
                      uint64_t *out) {
  char *end;
  unsigned long long v;
  errno = 0;
  if (s[0] == '-' || s[0] == '\0')
    return -1;
  v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max)
    return -1;
  *out = v;
  return 0;
}

/* --- the table ---------------------------------------------------------- */

/* Where a row's value lives: the part of `settings` that owns it and the
 * field in that part; TOP for what main() and the server read. */
#define IN(part, field) #part, offsetof(settings, part.field)
#define TOP(owner, field) owner, offsetof(settings, field)
#define CUSTOM(owner, fn) owner, 0, 0, 0, 0, NULL, fn

/* Every setting, once.  The order is that of --help.  A row with a key
 * only is read from the --config file only. */
static const setting table[] = {
    {"plugins", "pluginDirs", SETTING_CUSTOM, 0, CUSTOM("loader", set_dirs),
     "DIR",
     "load *.so plugins from DIR (repeatable); the\n"
     "default is $MCPD_PLUGIN_PATH, else\n"
     "$XDG_DATA_HOME/mcpd/plugins and " MCPD_PLUGINS_DIR},
    {"config", NULL, SETTING_STRING, 0, TOP("main", config_path), 0, 0, 0, NULL,
     NULL, "FILE", "JSON config (instructions, plugins, ...)"},
    {"transport", NULL, SETTING_STRING, 0, TOP("main", transport), 0, 0, 0,
     NULL, NULL, "stdio|http", "the transport (stdio)"},
    {"listen", NULL, SETTING_STRING, 0, TOP("main", listen), 0, 0, 0, NULL,
     NULL, "ADDR",
     "for http: HOST:PORT (default 127.0.0.1:8080;\n"
     "port 0 picks one) or unix:PATH"},
    {"allow-host", NULL, SETTING_CUSTOM, 0, CUSTOM("http", set_allow_host),
     "NAME",
     "for http: also accept NAME in Host and Origin\n"
     "(repeatable; loopback names always are)"},
    {"allow-remote", NULL, SETTING_BOOL, 0, IN(http, allow_remote), 0, 1, 0,
     NULL, NULL, NULL,
     "for http: listen on a non-loopback address\n"
     "without a token source (a proxy in front\n"
     "authenticates)"},
    {"session-prefix", NULL, SETTING_CUSTOM, 0,
     CUSTOM("http", set_session_prefix), "STR",
     "for http: start every session id with STR\n"
     "(routes sessions to processes behind a proxy)"},
    {"session-timeout", NULL, SETTING_U64, 0, IN(http, session_timeout_s), 1,
     7 * 86400, MCPD_DEFAULT_SESSION_TIMEOUT_S, "number of seconds", NULL, "S",
     "for http: end sessions idle for S seconds\n"
     "(default 1800)"},
    {"max-sessions", "maxSessions", SETTING_SIZE, 0, IN(http, max_sessions), 1,
     10000000, 10000, "number", NULL, "N",
     "for http: sessions open at once (default 10000);\n"
     "more get 503 with Retry-After"},
    {"max-sessions-per-identity", "maxSessionsPerIdentity", SETTING_SIZE, 0,
     IN(http, max_sessions_each), 1, 10000000, 0, "number", NULL, "N",
     "for http: sessions one authenticated identity\n"
     "may hold (default a quarter of --max-sessions);\n"
     "more get 429 with Retry-After"},
    {"metrics", "metrics", SETTING_BOOL, 0, IN(http, metrics), 0, 1, 0, NULL,
     NULL, NULL,
     "for http: serve /metrics (Prometheus text\n"
     "format) beside /mcp, with the same auth"},
    {"metrics-listen", "metricsListen", SETTING_STRING, SETTING_F_NONEMPTY,
     IN(http, metrics_listen), 0, 0, 0, NULL, NULL, "ADDR",
     "serve /metrics, /healthz and /readyz on a\n"
     "loopback ADDR (HOST:PORT or unix:PATH) of\n"
     "their own, without auth; also with stdio"},
    {"sse-poll", NULL, SETTING_U64, 0, IN(http, sse_poll_ms), 0, DAY_MS, 0,
     "number of milliseconds", NULL, "MS",
     "for http: close a request's SSE stream after\n"
     "MS ms; 2025-11-25 clients resume it with\n"
     "Last-Event-ID (default 0: never)"},
    {"log-level", "logLevel", SETTING_LEVEL, 0, TOP("main", log_level), 0, 0,
     LOG_LEVEL_INFO, NULL, NULL, "LEVEL",
     "error, warn, info (default) or debug"},
    {"log-format", "logFormat", SETTING_CUSTOM, 0,
     CUSTOM("main", set_log_format), "text|json",
     "stderr lines as text (default), or one JSON\n"
     "object per line"},
    {"no-watch", "watch", SETTING_BOOL, SETTING_F_NEGATE, TOP("server", watch),
     0, 1, 1, NULL, NULL, NULL, "do not watch plugin directories"},
    {"max-message-size", "maxMessageSize", SETTING_SIZE, SETTING_F_NO_UPPER,
     TOP("server", max_message), 1024, SIZE_MAX / 2, MCPD_DEFAULT_MAX_MESSAGE,
     "byte count", NULL, "N",
     "largest message accepted, in bytes\n"
     "(default 64 MiB)"},
    {"page-size", "pageSize", SETTING_SIZE, 0, IN(methods, page_size), 1,
     100000, MCPD_DEFAULT_PAGE_SIZE, "number", NULL, "N",
     "items per tools/list page (default 1000)"},
    {"max-tasks", "maxTasks", SETTING_SIZE, 0, IN(methods, max_tasks), 1,
     10000000, 1000, "number", NULL, "N",
     "tasks kept at once, running or ended within\n"
     "their TTL (default 1000); more are refused"},
    {"max-tasks-per-client", "maxTasksPerClient", SETTING_SIZE, 0,
     IN(methods, max_tasks_each), 1, 10000000, 100, "number", NULL, "N",
     "tasks one identity may keep (default 100)"},
    {"task-ttl", "taskTtlMs", SETTING_U64, 0, IN(methods, task_ttl_ms), 1000,
     7 * DAY_MS, 3600000, "number of milliseconds", NULL, "MS",
     "the longest a task is kept after it ends, and\n"
     "what a client that asks for none gets\n"
     "(default 3600000)"},
    {"max-in-flight", "maxInFlight", SETTING_SIZE, 0,
     TOP("server", max_in_flight), 1, 1000000, MCPD_DEFAULT_MAX_IN_FLIGHT,
     "number", NULL, "N",
     "requests one client may have in flight\n"
     "(default 1024; more get an error)"},
    {"threads", "threads", SETTING_SIZE, 0, IN(call, threads), 1, 1024,
     MCPD_DEFAULT_THREADS, "number", NULL, "N",
     "worker threads for MCPD_EXEC_POOL tools\n"
     "(default 8)"},
    {"in-process", NULL, SETTING_CUSTOM, SETTING_F_OPT_ARG,
     CUSTOM("plugins", set_in_process), "[NAME]",
     "run plugin NAME (repeatable), or every plugin,\n"
     "inside mcpd instead of a worker process of its own"},
    {"isolate", NULL, SETTING_CUSTOM, SETTING_F_OPT_ARG,
     CUSTOM("plugins", set_isolate), "[NAME]",
     "run plugin NAME (repeatable) in a worker process\n"
     "of its own even with --in-process (the default)"},
    {"deadline", "deadlineMs", SETTING_U64, 0, IN(plugins, deadline_ms), 1,
     DAY_MS, MCPD_DEFAULT_DEADLINE_MS, "number of milliseconds", NULL, "MS",
     "how long a call may run before it is answered\n"
     "with an error and cancelled (default 300000;\n"
     "per plugin and tool in the config)"},
    {"request-timeout", "requestTimeoutMs", SETTING_U64, 0,
     IN(call, request_timeout_ms), 1, DAY_MS, MCPD_DEFAULT_REQUEST_TIMEOUT_MS,
     "number of milliseconds", NULL, "MS",
     "how long a plugin's request to the client\n"
     "(sampling, elicitation, roots) may wait for\n"
     "its answer (default 60000)"},
    {"allow-insecure-plugins", "allowInsecurePlugins", SETTING_BOOL, 0,
     IN(loader, allow_insecure), 0, 1, 0, NULL, NULL, NULL,
     "load plugins that other users can write"},
    {"auth-token-file", "authTokenFile", SETTING_STRING,
     SETTING_F_NONEMPTY | SETTING_F_HTTP, IN(http, auth.auth_token_file), 0, 0,
     0, NULL, NULL, "FILE",
     "for http: require a bearer token, one of those\n"
     "in FILE (one per line, # comments)"},
    {"auth-jwt-issuer", "authJwtIssuer", SETTING_STRING,
     SETTING_F_NONEMPTY | SETTING_F_HTTP, IN(http, auth.auth_jwt_issuer), 0, 0,
     0, NULL, NULL, "ISS", ""},
    {"auth-jwt-audience", "authJwtAudience", SETTING_STRING,
     SETTING_F_NONEMPTY | SETTING_F_HTTP, IN(http, auth.auth_jwt_audience), 0,
     0, 0, NULL, NULL, "AUD", ""},
    {"auth-jwks", "authJwks", SETTING_STRING,
     SETTING_F_NONEMPTY | SETTING_F_HTTP, IN(http, auth.auth_jwks), 0, 0, 0,
     NULL, NULL, "FILE",
     "for http: accept JWT access tokens issued by\n"
     "ISS for AUD and signed by a key of the JWK set\n"
     "in FILE (all three together)"},
    {"resource-url", "resourceUrl", SETTING_STRING,
     SETTING_F_NONEMPTY | SETTING_F_HTTP, IN(http, auth.resource_url), 0, 0, 0,
     NULL, NULL, "URL",
     "for http: the MCP endpoint as clients see it,\n"
     "for the OAuth metadata (default\n"
     "http://LISTEN/mcp)"},
    {"list", NULL, SETTING_CUSTOM, SETTING_F_NO_ARG, CUSTOM("main", set_mode),
     NULL,
     "list plugins, what they offer and load\n"
     "errors, then exit"},
    {"call", NULL, SETTING_CUSTOM, 0, CUSTOM("main", set_mode), "TOOL",
     "call TOOL once, print the result, exit"},
    {"args", NULL, SETTING_STRING, 0, TOP("main", call_args), 0, 0, 0, NULL,
     NULL, "JSON", "arguments for --call (default {})"},
    {"help", NULL, SETTING_CUSTOM, SETTING_F_NO_ARG, CUSTOM("main", set_mode),
     NULL, "print this help and exit"},
    {"version", NULL, SETTING_CUSTOM, SETTING_F_NO_ARG,
     CUSTOM("main", set_mode), NULL, "print the version and exit"},
    /* Internal, not in --help: how mcpd starts its own worker processes. */
    {"worker", NULL, SETTING_CUSTOM, SETTING_F_INTERNAL,
     CUSTOM("server", set_worker), "PATH", NULL},
    /* In the --config file only. */
    {NULL, "instructions", SETTING_STRING, 0, IN(methods, instructions), 0, 0,
     0, NULL, NULL, NULL, NULL},
    {NULL, "plugins", SETTING_CUSTOM, 0, CUSTOM("plugins", set_plugin_configs),
     NULL, NULL},
    {NULL, "stateKeyFile", SETTING_STRING, SETTING_F_NONEMPTY,
     IN(call, state_key_file), 0, 0, 0, "a path", NULL, NULL, NULL},
    {NULL, "requestStateTtlMs", SETTING_U64, 0, IN(call, request_state_ttl_ms),
     1, DAY_MS, MCPD_DEFAULT_REQUEST_STATE_TTL_MS, "number of milliseconds",
     NULL, NULL, NULL},
};

#define N_ROWS (sizeof(table) / sizeof(table[0]))

const setting *settings_table(size_t *n) {
  *n = N_ROWS;
  return table;
}

static void *field(settings *s, const setting *row) {
  return (char *)s + row->offset;
}

/* --- values ------------------------------------------------------------- */

static void store_number(settings *s, const setting *row, uint64_t v) {
  if (row->type == SETTING_SIZE)
    *(size_t *)field(s, row) = (size_t)v;
  else if (row->type == SETTING_U64)
    *(uint64_t *)field(s, row) = v;
  else
    *(int *)field(s, row) = (int)v;
}

/* The defaults of the numbers, booleans and levels; strings are NULL but
 * for --transport's. */
static void apply_defaults(settings *s) {
  for (size_t i = 0; i < N_ROWS; i++)
    if (table[i].type != SETTING_STRING && table[i].type != SETTING_CUSTOM)
      store_number(s, &table[i], table[i].def);
  s->transport = "stdio";
}

/* The file's words for what a row's value must be. */
static void key_rule(const setting *row, char *out, size_t size) {
  switch (row->type) {
  case SETTING_BOOL:
    snprintf(out, size, "must be true or false");
    break;
  case SETTING_LEVEL:
    snprintf(out, size, "must be error, warn, info or debug");
    break;
  case SETTING_STRING:
    snprintf(out, size, "must be a %sstring%s%s%s",
             row->flags & SETTING_F_NONEMPTY ? "non-empty " : "",
             row->noun ? " (" : "", row->noun ? row->noun : "",
             row->noun ? ")" : "");
    break;
  default:
    if (row->flags & SETTING_F_NO_UPPER)
      snprintf(out, size, "must be an integer >= %llu",
               (unsigned long long)row->min);
    else
      snprintf(out, size, "must be an integer from %llu to %llu%s",
               (unsigned long long)row->min, (unsigned long long)row->max,
               row->max == DAY_MS ? " (a day)" : "");
  }
}

/* A flag's value: checked against the row, then stored. */
static int flag_value(parser *p, const setting *row, const char *text) {
  uint64_t v;
  int level;

  switch (row->type) {
  case SETTING_BOOL:
    store_number(p->s, row, !(row->flags & SETTING_F_NEGATE));
    return 0;
  case SETTING_LEVEL:
    if ((level = log_level_parse(text)) < 0) {
      log_error("--%s: \"%s\" is not error, warn, info or debug", row->flag,
                text);
      return -1;
    }
    store_number(p->s, row, (uint64_t)level);
    return 0;
  case SETTING_STRING:
    if ((row->flags & SETTING_F_NONEMPTY) && text[0] == '\0') {
      log_error("--%s needs a non-empty value", row->flag);
      return -1;
    }
    *(const char **)field(p->s, row) = text;
    return 0;
  case SETTING_CUSTOM:
    return row->set(p, row, text, NULL);
  default:
    if (parse_uint(text, row->min, row->max, &v) == 0) {
      store_number(p->s, row, v);
      return 0;
    }
    if (row->flags & SETTING_F_NO_UPPER)
      log_error("--%s: \"%s\" is not a %s >= %llu", row->flag, text, row->noun,
                (unsigned long long)row->min);
    else
      log_error("--%s: \"%s\" is not a %s from %llu to %llu", row->flag, text,
                row->noun, (unsigned long long)row->min,
                (unsigned long long)row->max);
    return -1;
  }
}

/* A config value: checked against the row, then stored unless the command
 * line gave the same setting. */
static int key_value(parser *p, const setting *row, json_object *val) {
  int ok, given = p->given[row - table];
  int64_t v = json_object_get_int64(val);
  char rule[96];

  switch (row->type) {
  case SETTING_CUSTOM:
    return row->set(p, row, NULL, val);
  case SETTING_BOOL:
    ok = json_object_is_type(val, json_type_boolean);
    v = json_object_get_boolean(val);
    break;
  case SETTING_LEVEL:
    ok = json_object_is_type(val, json_type_string) &&
         (v = log_level_parse(json_object_get_string(val))) >= 0;
    break;
  case SETTING_STRING:
    ok = json_object_is_type(val, json_type_string) &&
         (!(row->flags & SETTING_F_NONEMPTY) ||
          json_object_get_string_len(val) > 0);
    break;
  default:
    ok = json_object_is_type(val, json_type_int) && v >= 0 &&
         (uint64_t)v >= row->min && (uint64_t)v <= row->max;
  }
  if (!ok) {
    key_rule(row, rule, sizeof(rule));
    return config_error(p, row->key, rule);
  }
  if (given)
    return 0;
  if (row->type == SETTING_STRING)
    *(const char **)field(p->s, row) = json_object_get_string(val);
  else
    store_number(p->s, row, (uint64_t)v);
  return 0;
}

/* --- the --config file -------------------------------------------------- */

static int unknown_key(const parser *p, const char *key) {
  strbuf known = {0};
  int rc;

  strbuf_puts(&known, "unknown key (known: ");
  for (size_t i = 0, n = 0; i < N_ROWS; i++)
    if (table[i].key != NULL) {
      strbuf_puts(&known, n++ ? ", " : "");
      strbuf_puts(&known, table[i].key);
    }
  strbuf_puts(&known, ")");
  rc = config_error(p, key, known.failed ? "unknown key" : known.data);
  strbuf_free(&known);
  return rc;
}

/* A deadline in a config: an integer of milliseconds, 1 to a day. */
static int deadline_ok(json_object *v) {
  int64_t ms = json_object_get_int64(v);
  return json_object_is_type(v, json_type_int) && ms >= 1 && ms <= DAY_MS;
}

/* plugins.NAME.mcpd.tools: {"TOOL": {"deadlineMs": N}}. */
static int check_tools(const parser *p, const char *name, json_object *tools) {
  char path[400];
  snprintf(path, sizeof(path), "plugins.%s.mcpd.tools", name);
  if (!json_object_is_type(tools, json_type_object))
    return config_error(p, path, "must be an object of tool names");
  json_object_object_foreach(tools, tool, t) {
    json_object *d;
    snprintf(path, sizeof(path), "plugins.%s.mcpd.tools.%s", name, tool);
    if (!json_object_is_type(t, json_type_object))
      return config_error(p, path, "must be an object");
    json_object_object_foreach(t, tkey, tval) {
      (void)tval;
      if (strcmp(tkey, "deadlineMs") != 0)
        return config_error(p, path, "unknown key (known: deadlineMs)");
    }
    if (json_object_object_get_ex(t, "deadlineMs", &d) && !deadline_ok(d))
      return config_error(p, path,
                          "deadlineMs must be an integer from 1 to "
                          "86400000 (a day)");
  }
  return 0;
}

/* plugins.NAME.mcpd.limits: resource limits of the plugin's worker. */
static int check_limits(const parser *p, const char *name, json_object *lim) {
  char path[400];
  snprintf(path, sizeof(path), "plugins.%s.mcpd.limits", name);
  if (!json_object_is_type(lim, json_type_object))
    return config_error(p, path, "must be an object");
  json_object_object_foreach(lim, lkey, lval) {
    int64_t v = json_object_get_int64(lval);
    if (strcmp(lkey, "addressSpaceMiB") != 0 &&
        strcmp(lkey, "cpuSeconds") != 0 && strcmp(lkey, "openFiles") != 0)
      return config_error(p, path,
                          "unknown key (known: addressSpaceMiB, "
                          "cpuSeconds, openFiles)");
    if (!json_object_is_type(lval, json_type_int) || v < 1 || v > 1048576)
      return config_error(p, path, "limits must be integers from 1 to 1048576");
  }
  return 0;
}

/* Checks plugins.NAME.mcpd, the host's settings for one plugin, which
 * plugin_settings.c reads: isolate, deadlineMs, tools, limits. */
static int check_hosting(const parser *p, const char *name, json_object *h) {
  char path[400];

  snprintf(path, sizeof(path), "plugins.%s.mcpd", name);
  if (!json_object_is_type(h, json_type_object))
    return config_error(p, path, "must be an object");
  json_object_object_foreach(h, key, val) {
    int rc = 0;
    if (strcmp(key, "deadlineMs") == 0) {
      snprintf(path, sizeof(path), "plugins.%s.mcpd.deadlineMs", name);
      if (!deadline_ok(val))
        rc = config_error(p, path,
                          "must be an integer from 1 to 86400000 (a day)");
    } else if (strcmp(key, "tools") == 0) {
      rc = check_tools(p, name, val);
    } else if (strcmp(key, "isolate") == 0) {
      snprintf(path, sizeof(path), "plugins.%s.mcpd.isolate", name);
      if (!json_object_is_type(val, json_type_boolean))
        rc = config_error(p, path, "must be true or false");
    } else if (strcmp(key, "limits") == 0) {
      rc = check_limits(p, name, val);
    } else {
      rc = config_error(p, path,
                        "unknown key (known: isolate, deadlineMs, tools, "
                        "limits)");
    }
    if (rc != 0)
      return rc;
  }
  return 0;
}

/* Each plugin's config must be an object; its "mcpd" key is the host's:
 * checked, kept in plugins.hosting, and taken out of what the plugin's
 * init() sees. */
static int take_hosting(parser *p) {
  plugin_settings *ps = &p->s->plugins;
  if (ps->configs == NULL)
    return 0;
  json_object_object_foreach(ps->configs, name, cfg) {
    json_object *h;
    if (!json_object_is_type(cfg, json_type_object)) {
      char path[300];
      snprintf(path, sizeof(path), "plugins.%s", name);
      return config_error(p, path, "must be an object");
    }
    if (!json_object_object_get_ex(cfg, "mcpd", &h))
      continue;
    if (check_hosting(p, name, h) != 0)
      return -1;
    if (ps->hosting == NULL && (ps->hosting = json_object_new_object()) == NULL)
      return config_error(p, NULL, "out of memory");
    json_object_object_add(ps->hosting, name, json_object_get(h));
    json_object_object_del(cfg, "mcpd");
  }
  return 0;
}

/* Reads and checks the --config file, one table row per key.  Values the
 * command line already set win over the file. */
static int load_config(parser *p) {
  settings *s = p->s;
  json_object *root = json_object_from_file(s->config_path);

  if (root == NULL)
    return config_error(p, NULL,
                        json_util_get_last_err() ? json_util_get_last_err()
                                                 : "cannot be read as JSON");
  s->config = root;
  if (!json_object_is_type(root, json_type_object))
    return config_error(p, NULL, "the top level must be a JSON object");
  json_object_object_foreach(root, key, val) {
    const setting *row = NULL;
    for (size_t i = 0; i < N_ROWS && row == NULL; i++)
      if (table[i].key != NULL && strcmp(table[i].key, key) == 0)
        row = &table[i];
    if (row == NULL)
      return unknown_key(p, key);
    if (key_value(p, row, val) != 0)
      return -1;
  }
  return take_hosting(p);
}

/* --- worker mode -------------------------------------------------------- */

/* Worker mode serves one plugin to the mcpd that started it, over stdio,
 * with everything else given on the command line: refuse what belongs to
 * a server of its own. */
static int check_worker(parser *p) {
  settings *s = p->s;
  const char *clash = NULL;

  if (s->worker_path == NULL)
    return 0;
  if (strcmp(s->transport, "stdio") != 0)
    clash = "--transport";
  else if (s->listen != NULL)
    clash = "--listen";
  else if (s->loader.plugin_dirs_given)
    clash = "--plugins";
  else if (s->config_path != NULL)
    clash = "--config";
  else if (s->mode == MODE_LIST)
    clash = "--list";
  else if (s->mode == MODE_CALL)
    clash = "--call";
  if (clash != NULL) {
    log_error("--worker cannot go with %s", clash);
    return -1;
  }
  s->mode = MODE_WORKER;
  s->watch = 0;
  s->plugins.worker = 1;
  return 0;
}

/* --- the command line --------------------------------------------------- */

/* The directories of a $PATH-like list, `sep` between them. */
static int add_dir_list(settings *s, const char *list, const char *sep) {
  char *copy = strdup(list), *save = NULL;
  int rc = copy == NULL ? -1 : 0;
  for (char *d = copy ? strtok_r(copy, sep, &save) : NULL; d && rc == 0;
       d = strtok_r(NULL, sep, &save))
    rc = add_dir(s, d);
  free(copy);
  return rc;
}

/* The default plugin path: $MCPD_PLUGIN_PATH, else the user's folder and
 * the installed bundled plugins. */
#ifdef _WIN32
/* Windows: $MCPD_PLUGIN_PATH (';' between directories, as in %PATH%),
 * else %LOCALAPPDATA%/mcpd/plugins and the plugins folder beside
 * mcpd.exe, where the zip puts the bundled ones. */
static int default_dirs(settings *s) {
  const char *path = getenv("MCPD_PLUGIN_PATH");
  const char *local = getenv("LOCALAPPDATA");
  char buf[PATH_MAX];
  char *slash;

  if (path != NULL)
    return add_dir_list(s, path, ";");
  if (local != NULL && local[0] != '\0') {
    snprintf(buf, sizeof(buf), "%s/mcpd/plugins", local);
    if (add_dir(s, buf) != 0)
      return -1;
  }
  if (platform_self_exe(buf, sizeof(buf)) != 0 ||
      (slash = strrchr(buf, '/')) == NULL)
    return 0;
  snprintf(slash, sizeof(buf) - (size_t)(slash - buf), "/plugins");
  return add_dir(s, buf);
}
#else
static int default_dirs(settings *s) {
  const char *path = getenv("MCPD_PLUGIN_PATH");
  const char *data = getenv("XDG_DATA_HOME");
  const char *home = getenv("HOME");
  char buf[PATH_MAX];

  if (path != NULL)
    return add_dir_list(s, path, ":");
  if (data && data[0] == '/') {
    snprintf(buf, sizeof(buf), "%s/mcpd/plugins", data);
    if (add_dir(s, buf) != 0)
      return -1;
  } else if (home && home[0] == '/') {
    snprintf(buf, sizeof(buf), "%s/.local/share/mcpd/plugins", home);
    if (add_dir(s, buf) != 0)
      return -1;
  }
  return add_dir(s, MCPD_PLUGINS_DIR);
}
#endif

/* The getopt_long() table, made from the rows that have a flag; each
 * returns 256 + its row. */
static void long_options(struct option *out) {
  size_t n = 0;
  for (size_t i = 0; i < N_ROWS; i++) {
    const setting *row = &table[i];
    if (row->flag == NULL)
      continue;
    out[n].name = row->flag;
    out[n].has_arg =
        row->type == SETTING_BOOL || (row->flags & SETTING_F_NO_ARG)
            ? no_argument
        : row->flags & SETTING_F_OPT_ARG ? optional_argument
                                         : required_argument;
    out[n].flag = NULL;
    out[n].val = 256 + (int)i;
    n++;
  }
  memset(&out[n], 0, sizeof(out[n]));
}

/* Walks argv.  Returns 0, 1 when a flag ended parsing, or -1. */
static int parse_argv(parser *p, int argc, char **argv) {
  struct option opts[N_ROWS + 1];
  int c;

  long_options(opts);
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    const setting *row;
    const char *text = optarg;
    int rc;
    if (c == ':') {
      log_error("option %s needs a value; see --help", argv[optind - 1]);
      return -1;
    }
    if (c < 256 || c >= 256 + (int)N_ROWS) {
      log_error("unknown option \"%s\"; see --help", argv[optind - 1]);
      return -1;
    }
    row = &table[c - 256];
    /* A value that may be left out may also come as the next word. */
    if ((row->flags & SETTING_F_OPT_ARG) && text == NULL && optind < argc &&
        argv[optind][0] != '-')
      text = argv[optind++];
    if ((rc = flag_value(p, row, text)) != 0)
      return rc;
    p->given[c - 256] = 1;
    if ((row->flags & SETTING_F_HTTP) && p->auth_flag == NULL)
      p->auth_flag = row->flag;
  }
  if (optind < argc) {
    log_error("unexpected argument \"%s\"; see --help", argv[optind]);
    return -1;
  }
  return 0;
}

/* What goes with which transport. */
static int check_transport(parser *p) {
  settings *s = p->s;
  if (strcmp(s->transport, "http") == 0) {
    /* Loopback unless told otherwise: an MCP endpoint runs plugin code. */
    s->http.listen = s->listen != NULL ? s->listen : "127.0.0.1:8080";
  } else if (strcmp(s->transport, "stdio") != 0) {
    log_error("--transport %s: expected stdio or http", s->transport);
    return -1;
  } else if (s->listen != NULL) {
    log_error("--listen %s: stdio listens on nothing; --listen goes with a "
              "network transport",
              s->listen);
    return -1;
  } else if (p->auth_flag != NULL) {
    /* The MCP spec: stdio takes credentials from the environment, not
     * from HTTP authorization. */
    log_error("--%s goes with --transport http; stdio has no bearer tokens",
              p->auth_flag);
    return -1;
  }
  if (s->call_args && s->mode != MODE_CALL) {
    log_error("--args goes with --call TOOL");
    return -1;
  }
  return 0;
}

/* Hands each owner the values it shares with others. */
static void share(settings *s) {
  s->loader.plugins = &s->plugins;
  s->worker.plugins = &s->plugins;
  s->worker.max_message = s->max_message;
  s->worker.threads = s->call.threads;
  s->worker.log_level = s->log_level;
  s->worker.allow_insecure = s->loader.allow_insecure;
  s->http.max_message = s->max_message;
}

int settings_parse(settings *s, int argc, char **argv) {
  unsigned char given[N_ROWS] = {0};

  /* JSON lines from the first one on: even what is said about the
   * options before --log-format, or about the config file. */
  for (int i = 1; i < argc; i++)
    if ((strcmp(argv[i], "--log-format") == 0 && i + 1 < argc &&
         strcmp(argv[i + 1], "json") == 0) ||
        strcmp(argv[i], "--log-format=json") == 0)
      log_set_json(1);
  parser p = {s, NULL, given};
  int rc;

  memset(s, 0, sizeof(*s));
  apply_defaults(s);
  share(s);
  if ((rc = parse_argv(&p, argc, argv)) != 0)
    return rc > 0 ? 0 : -1;
  if (check_transport(&p) != 0 || check_worker(&p) != 0)
    return -1;
  if (s->config_path && load_config(&p) != 0)
    return -1;
  /* A worker scans no directory: it loads the one file it was given. */
  if (s->mode != MODE_WORKER && s->loader.n_plugin_dirs == 0 &&
      default_dirs(s) != 0) {
    log_error("out of memory");
    return -1;
  }
  share(s);
  return 0;
}

void settings_free(settings *s) {
  for (size_t i = 0; i < s->loader.n_plugin_dirs; i++)
    free(s->loader.plugin_dirs[i]);
  free(s->loader.plugin_dirs);
  for (size_t i = 0; i < s->http.n_allow_hosts; i++)
    free(s->http.allow_hosts[i]);
  free(s->http.allow_hosts);
  json_object_put(s->config);
  plugin_settings_free(&s->plugins);
  memset(s, 0, sizeof(*s));
}

/* --- --help ------------------------------------------------------------- */

/* The text of --help is also the OPTIONS section of mcpd(1), which
 * tools/help2roff.awk makes from it at build time: an option line starts
 * with two spaces and "--", its description follows after two or more
 * spaces or on lines indented further; an option line with no description
 * shares the next one's. */
static void print_row(int fd, const setting *row) {
  char left[64];
  const char *line = row->help;

  snprintf(left, sizeof(left), "--%s%s%s", row->flag, row->arg ? " " : "",
           row->arg ? row->arg : "");
  if (*line == '\0') {
    dprintf(fd, "  %s\n", left);
    return;
  }
  for (int first = 1; *line != '\0'; first = 0) {
    size_t n = strcspn(line, "\n");
    if (first)
      dprintf(fd, "  %-22s  %.*s\n", left, (int)n, line);
    else
      dprintf(fd, "%26s%.*s\n", "", (int)n, line);
    line += n + (line[n] == '\n');
  }
}

void settings_print_help(const char *argv0, int fd) {
  dprintf(fd,
          "Usage: %s [OPTION]...\n"
          "       %s new NAME [--dir DIR]\n"
          "       %s install|uninstall CLIENT [--name NAME] [--config FILE]\n"
          "Serve MCP tools from plugin shared objects over stdio; or make a\n"
          "plugin project (new), or add mcpd to an MCP client's config\n"
          "(install: claude-desktop, cursor, vscode, claude-code, gemini).\n"
          "\n",
          argv0, argv0, argv0);
  for (size_t i = 0; i < N_ROWS; i++)
    if (table[i].flag != NULL && table[i].help != NULL &&
        !(table[i].flags & SETTING_F_INTERNAL))
      print_row(fd, &table[i]);
}
