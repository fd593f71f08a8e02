/* options.c -- command line and --config file. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "options.h"
#include "strbuf.h"

#ifndef MCPD_PLUGINS_DIR
#define MCPD_PLUGINS_DIR "/usr/local/lib/mcpd/plugins"
#endif

/* The text of --help, and of the OPTIONS section of mcpd(1), which
 * tools/help2roff.awk makes from it at build time: an option line starts
 * with two spaces and "--", its description follows after two or more
 * spaces or on lines indented further; an option line with no description
 * shares the next one's. */
static const char usage[] =
    "Usage: %s [OPTION]...\n"
    "Serve MCP tools from plugin shared objects over stdio.\n"
    "\n"
    "  --plugins DIR           load *.so plugins from DIR (repeatable); the\n"
    "                          default is $MCPD_PLUGIN_PATH, else\n"
    "                          $XDG_DATA_HOME/mcpd/plugins "
    "and " MCPD_PLUGINS_DIR "\n"
    "  --config FILE           JSON config (instructions, plugins, ...)\n"
    "  --transport stdio|http  the transport (stdio)\n"
    "  --listen ADDR           for http: HOST:PORT (default 127.0.0.1:8080;\n"
    "                          port 0 picks one) or unix:PATH\n"
    "  --allow-host NAME       for http: also accept NAME in Host and Origin\n"
    "                          (repeatable; loopback names always are)\n"
    "  --allow-remote          for http: listen on a non-loopback address\n"
    "                          without a token source (a proxy in front\n"
    "                          authenticates)\n"
    "  --session-prefix STR    for http: start every session id with STR\n"
    "                          (routes sessions to processes behind a proxy)\n"
    "  --session-timeout S     for http: end sessions idle for S seconds\n"
    "                          (default 1800)\n"
    "  --sse-poll MS           for http: close a request's SSE stream after\n"
    "                          MS ms; 2025-11-25 clients resume it with\n"
    "                          Last-Event-ID (default 0: never)\n"
    "  --log-level LEVEL       error, warn, info (default) or debug\n"
    "  --no-watch              do not watch plugin directories\n"
    "  --max-message-size N    largest message accepted, in bytes\n"
    "                          (default 64 MiB)\n"
    "  --page-size N           items per tools/list page (default 1000)\n"
    "  --max-in-flight N       requests one client may have in flight\n"
    "                          (default 1024; more get an error)\n"
    "  --threads N             worker threads for MCPD_EXEC_POOL tools\n"
    "                          (default 8)\n"
    "  --isolate [NAME]        run plugin NAME (repeatable), or every plugin,\n"
    "                          in a worker process of its own\n"
    "  --deadline MS           how long a call may run before it is answered\n"
    "                          with an error and cancelled (default 300000;\n"
    "                          per plugin and tool in the config)\n"
    "  --request-timeout MS    how long a plugin's request to the client\n"
    "                          (sampling, elicitation, roots) may wait for\n"
    "                          its answer (default 60000)\n"
    "  --allow-insecure-plugins  load plugins that other users can write\n"
    "  --auth-token-file FILE  for http: require a bearer token, one of those\n"
    "                          in FILE (one per line, # comments)\n"
    "  --auth-jwt-issuer ISS\n"
    "  --auth-jwt-audience AUD\n"
    "  --auth-jwks FILE        for http: accept JWT access tokens issued by\n"
    "                          ISS for AUD and signed by a key of the JWK set\n"
    "                          in FILE (all three together)\n"
    "  --resource-url URL      for http: the MCP endpoint as clients see it,\n"
    "                          for the OAuth metadata (default\n"
    "                          http://LISTEN/mcp)\n"
    "  --list                  list plugins, what they offer and load\n"
    "                          errors, then exit\n"
    "  --call TOOL             call TOOL once, print the result, exit\n"
    "  --args JSON             arguments for --call (default {})\n"
    "  --help                  print this help and exit\n"
    "  --version               print the version and exit\n";

void options_print_help(const char *argv0, int fd) {
  dprintf(fd, usage, argv0);
}

enum {
  OPT_PLUGINS = 256,
  OPT_CONFIG,
  OPT_TRANSPORT,
  OPT_LISTEN,
  OPT_ALLOW_HOST,
  OPT_ALLOW_REMOTE,
  OPT_SESSION_PREFIX,
  OPT_SESSION_TIMEOUT,
  OPT_SSE_POLL,
  OPT_LOG_LEVEL,
  OPT_NO_WATCH,
  OPT_MAX_MESSAGE,
  OPT_PAGE_SIZE,
  OPT_MAX_IN_FLIGHT,
  OPT_REQUEST_TIMEOUT,
  OPT_DEADLINE,
  OPT_ISOLATE,
  OPT_THREADS,
  OPT_INSECURE,
  OPT_AUTH_TOKEN_FILE,
  OPT_AUTH_JWT_ISSUER,
  OPT_AUTH_JWT_AUDIENCE,
  OPT_AUTH_JWKS,
  OPT_RESOURCE_URL,
  OPT_LIST,
  OPT_CALL,
  OPT_ARGS,
  OPT_HELP,
  OPT_VERSION,
  /* Internal, not in --help: how mcpd starts its own worker processes. */
  OPT_WORKER,
  OPT_WORKER_CONFIG_FD,
  OPT_RLIMIT_AS,
  OPT_RLIMIT_CPU,
  OPT_RLIMIT_NOFILE
};

static const struct option long_options[] = {
    {"plugins", required_argument, NULL, OPT_PLUGINS},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"transport", required_argument, NULL, OPT_TRANSPORT},
    {"listen", required_argument, NULL, OPT_LISTEN},
    {"allow-host", required_argument, NULL, OPT_ALLOW_HOST},
    {"allow-remote", no_argument, NULL, OPT_ALLOW_REMOTE},
    {"session-prefix", required_argument, NULL, OPT_SESSION_PREFIX},
    {"session-timeout", required_argument, NULL, OPT_SESSION_TIMEOUT},
    {"sse-poll", required_argument, NULL, OPT_SSE_POLL},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"no-watch", no_argument, NULL, OPT_NO_WATCH},
    {"max-message-size", required_argument, NULL, OPT_MAX_MESSAGE},
    {"page-size", required_argument, NULL, OPT_PAGE_SIZE},
    {"max-in-flight", required_argument, NULL, OPT_MAX_IN_FLIGHT},
    {"request-timeout", required_argument, NULL, OPT_REQUEST_TIMEOUT},
    {"deadline", required_argument, NULL, OPT_DEADLINE},
    {"isolate", optional_argument, NULL, OPT_ISOLATE},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"allow-insecure-plugins", no_argument, NULL, OPT_INSECURE},
    {"auth-token-file", required_argument, NULL, OPT_AUTH_TOKEN_FILE},
    {"auth-jwt-issuer", required_argument, NULL, OPT_AUTH_JWT_ISSUER},
    {"auth-jwt-audience", required_argument, NULL, OPT_AUTH_JWT_AUDIENCE},
    {"auth-jwks", required_argument, NULL, OPT_AUTH_JWKS},
    {"resource-url", required_argument, NULL, OPT_RESOURCE_URL},
    {"list", no_argument, NULL, OPT_LIST},
    {"call", required_argument, NULL, OPT_CALL},
    {"args", required_argument, NULL, OPT_ARGS},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {"worker", required_argument, NULL, OPT_WORKER},
    {"worker-config-fd", required_argument, NULL, OPT_WORKER_CONFIG_FD},
    {"rlimit-as", required_argument, NULL, OPT_RLIMIT_AS},
    {"rlimit-cpu", required_argument, NULL, OPT_RLIMIT_CPU},
    {"rlimit-nofile", required_argument, NULL, OPT_RLIMIT_NOFILE},
    {NULL, 0, NULL, 0}};

static int add_host(options *o, const char *name) {
  char **all;
  if (*name == '\0' || strpbrk(name, ":/ \t") != NULL) {
    log_error("--allow-host \"%s\": expected a host name without port", name);
    return -1;
  }
  all = realloc(o->allow_hosts, (o->n_allow_hosts + 1) * sizeof(*all));
  if (all == NULL || (all[o->n_allow_hosts] = strdup(name)) == NULL) {
    if (all != NULL)
      o->allow_hosts = all;
    log_error("out of memory");
    return -1;
  }
  o->allow_hosts = all;
  o->n_allow_hosts++;
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

/* A session id prefix is visible ASCII and short. */
static int prefix_ok(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 32)
    return 0;
  for (; *s; s++)
    if (*s < 0x21 || *s > 0x7e)
      return 0;
  return 1;
}

static int add_dir(options *o, const char *dir) {
  char **dirs = realloc(o->plugin_dirs, (o->n_plugin_dirs + 1) * sizeof(*dirs));
  if (dirs == NULL)
    return -1;
  o->plugin_dirs = dirs;
  if ((dirs[o->n_plugin_dirs] = strdup(dir)) == NULL)
    return -1;
  o->n_plugin_dirs++;
  return 0;
}

static int parse_size(const char *s, size_t min, size_t max, size_t *out) {
  char *end;
  unsigned long long v;
  errno = 0;
  if (s[0] == '-' || s[0] == '\0')
    return -1;
  v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max)
    return -1;
  *out = (size_t)v;
  return 0;
}

static int config_error(const options *o, const char *key, const char *what) {
  log_error("config \"%s\": %s%s%s%s", o->config_path, key ? "key \"" : "",
            key ? key : "", key ? "\": " : "", what);
  return -1;
}

/* The string options of HTTP authorization: the flag, the config key and
 * the field each sets. */
static const struct auth_option {
  int opt;
  const char *flag;
  const char *key;
  size_t field;
} auth_options[] = {
    {OPT_AUTH_TOKEN_FILE, "--auth-token-file", "authTokenFile",
     offsetof(options, auth_token_file)},
    {OPT_AUTH_JWT_ISSUER, "--auth-jwt-issuer", "authJwtIssuer",
     offsetof(options, auth_jwt_issuer)},
    {OPT_AUTH_JWT_AUDIENCE, "--auth-jwt-audience", "authJwtAudience",
     offsetof(options, auth_jwt_audience)},
    {OPT_AUTH_JWKS, "--auth-jwks", "authJwks", offsetof(options, auth_jwks)},
    {OPT_RESOURCE_URL, "--resource-url", "resourceUrl",
     offsetof(options, resource_url)},
    {0, NULL, NULL, 0}};

/* The authorization option with flag value `opt`, or else config key
 * `key`; NULL when there is none. */
static const struct auth_option *auth_option_find(int opt, const char *key) {
  for (const struct auth_option *a = auth_options; a->flag != NULL; a++)
    if (opt == a->opt || (key != NULL && strcmp(key, a->key) == 0))
      return a;
  return NULL;
}

static const char **auth_field(options *o, const struct auth_option *a) {
  return (const char **)(void *)((char *)o + a->field);
}

/* Reads and validates the --config file.  Values the command line already
 * set win over the file. */
/* Which settings the command line gave; they win over the file. */
typedef struct cli_given {
  int log_level, watch, max, page, insecure, in_flight, threads, timeout;
  int deadline;
} cli_given;

/* A deadline in a config: an integer of milliseconds, 1 to a day. */
static int deadline_value(json_object *v, uint64_t *out) {
  int64_t ms = json_object_get_int64(v);
  if (!json_object_is_type(v, json_type_int) || ms < 1 || ms > 86400000)
    return -1;
  *out = (uint64_t)ms;
  return 0;
}

/* Checks plugins.NAME.mcpd, the host's settings for one plugin:
 * {"deadlineMs": N, "tools": {"TOOL": {"deadlineMs": N}}}. */
static int check_hosting(const options *o, const char *name, json_object *h) {
  char path[400];
  uint64_t ms;

  snprintf(path, sizeof(path), "plugins.%s.mcpd", name);
  if (!json_object_is_type(h, json_type_object))
    return config_error(o, path, "must be an object");
  json_object_object_foreach(h, key, val) {
    if (strcmp(key, "deadlineMs") == 0) {
      snprintf(path, sizeof(path), "plugins.%s.mcpd.deadlineMs", name);
      if (deadline_value(val, &ms) != 0)
        return config_error(o, path,
                            "must be an integer from 1 to 86400000 (a day)");
    } else if (strcmp(key, "tools") == 0) {
      snprintf(path, sizeof(path), "plugins.%s.mcpd.tools", name);
      if (!json_object_is_type(val, json_type_object))
        return config_error(o, path, "must be an object of tool names");
      json_object_object_foreach(val, tool, t) {
        json_object *d;
        snprintf(path, sizeof(path), "plugins.%s.mcpd.tools.%s", name, tool);
        if (!json_object_is_type(t, json_type_object))
          return config_error(o, path, "must be an object");
        json_object_object_foreach(t, tkey, tval) {
          (void)tval;
          if (strcmp(tkey, "deadlineMs") != 0)
            return config_error(o, path, "unknown key (known: deadlineMs)");
        }
        if (json_object_object_get_ex(t, "deadlineMs", &d) &&
            deadline_value(d, &ms) != 0)
          return config_error(o, path,
                              "deadlineMs must be an integer from 1 to "
                              "86400000 (a day)");
      }
    } else if (strcmp(key, "isolate") == 0) {
      snprintf(path, sizeof(path), "plugins.%s.mcpd.isolate", name);
      if (!json_object_is_type(val, json_type_boolean))
        return config_error(o, path, "must be true or false");
    } else if (strcmp(key, "limits") == 0) {
      snprintf(path, sizeof(path), "plugins.%s.mcpd.limits", name);
      if (!json_object_is_type(val, json_type_object))
        return config_error(o, path, "must be an object");
      json_object_object_foreach(val, lkey, lval) {
        int64_t v = json_object_get_int64(lval);
        if (strcmp(lkey, "addressSpaceMiB") != 0 &&
            strcmp(lkey, "cpuSeconds") != 0 && strcmp(lkey, "openFiles") != 0)
          return config_error(o, path,
                              "unknown key (known: addressSpaceMiB, "
                              "cpuSeconds, openFiles)");
        if (!json_object_is_type(lval, json_type_int) || v < 1 || v > 1048576)
          return config_error(o, path,
                              "limits must be integers from 1 to 1048576");
      }
    } else {
      return config_error(o, path,
                          "unknown key (known: isolate, deadlineMs, tools, "
                          "limits)");
    }
  }
  return 0;
}

static int load_config(options *o, const cli_given *cli) {
  const struct auth_option *auth;
  json_object *root = json_object_from_file(o->config_path);
  if (root == NULL)
    return config_error(o, NULL,
                        json_util_get_last_err() ? json_util_get_last_err()
                                                 : "cannot be read as JSON");
  o->config = root;
  if (!json_object_is_type(root, json_type_object))
    return config_error(o, NULL, "the top level must be a JSON object");

  json_object_object_foreach(root, key, val) {
    if (strcmp(key, "instructions") == 0) {
      if (!json_object_is_type(val, json_type_string))
        return config_error(o, key, "must be a string");
      o->instructions = json_object_get_string(val);
    } else if (strcmp(key, "plugins") == 0) {
      if (!json_object_is_type(val, json_type_object))
        return config_error(o, key, "must be an object of plugin configs");
      o->plugin_configs = val;
    } else if (strcmp(key, "pluginDirs") == 0) {
      size_t n;
      if (!json_object_is_type(val, json_type_array))
        return config_error(o, key, "must be an array of directories");
      n = json_object_array_length(val);
      for (size_t i = 0; i < n; i++) {
        json_object *d = json_object_array_get_idx(val, i);
        if (!json_object_is_type(d, json_type_string))
          return config_error(o, key, "must list strings");
        if (!o->plugin_dirs_given && add_dir(o, json_object_get_string(d)))
          return config_error(o, key, "out of memory");
      }
      if (n > 0 && !o->plugin_dirs_given)
        o->plugin_dirs_given = 2; /* from the file */
    } else if (strcmp(key, "logLevel") == 0) {
      int level = json_object_is_type(val, json_type_string)
                      ? log_level_parse(json_object_get_string(val))
                      : -1;
      if (level < 0)
        return config_error(o, key, "must be error, warn, info or debug");
      if (!cli->log_level)
        o->log_level = level;
    } else if (strcmp(key, "maxMessageSize") == 0) {
      int64_t v = json_object_get_int64(val);
      if (!json_object_is_type(val, json_type_int) || v < 1024)
        return config_error(o, key, "must be an integer >= 1024");
      if (!cli->max)
        o->max_message = (size_t)v;
    } else if (strcmp(key, "pageSize") == 0) {
      int64_t v = json_object_get_int64(val);
      if (!json_object_is_type(val, json_type_int) || v < 1 || v > 100000)
        return config_error(o, key, "must be an integer from 1 to 100000");
      if (!cli->page)
        o->page_size = (size_t)v;
    } else if (strcmp(key, "maxInFlight") == 0) {
      int64_t v = json_object_get_int64(val);
      if (!json_object_is_type(val, json_type_int) || v < 1 || v > 1000000)
        return config_error(o, key, "must be an integer from 1 to 1000000");
      if (!cli->in_flight)
        o->max_in_flight = (size_t)v;
    } else if (strcmp(key, "requestTimeoutMs") == 0) {
      int64_t v = json_object_get_int64(val);
      if (!json_object_is_type(val, json_type_int) || v < 1 || v > 86400000)
        return config_error(o, key,
                            "must be an integer from 1 to 86400000 (a day)");
      if (!cli->timeout)
        o->request_timeout_ms = (uint64_t)v;
    } else if (strcmp(key, "deadlineMs") == 0) {
      uint64_t ms;
      if (deadline_value(val, &ms) != 0)
        return config_error(o, key,
                            "must be an integer from 1 to 86400000 (a day)");
      if (!cli->deadline)
        o->deadline_ms = ms;
    } else if (strcmp(key, "stateKeyFile") == 0) {
      if (!json_object_is_type(val, json_type_string) ||
          json_object_get_string_len(val) == 0)
        return config_error(o, key, "must be a non-empty string (a path)");
      o->state_key_file = json_object_get_string(val);
    } else if (strcmp(key, "requestStateTtlMs") == 0) {
      int64_t v = json_object_get_int64(val);
      if (!json_object_is_type(val, json_type_int) || v < 1 || v > 86400000)
        return config_error(o, key,
                            "must be an integer from 1 to 86400000 (a day)");
      o->request_state_ttl_ms = (uint64_t)v;
    } else if (strcmp(key, "threads") == 0) {
      int64_t v = json_object_get_int64(val);
      if (!json_object_is_type(val, json_type_int) || v < 1 || v > 1024)
        return config_error(o, key, "must be an integer from 1 to 1024");
      if (!cli->threads)
        o->threads = (size_t)v;
    } else if (strcmp(key, "allowInsecurePlugins") == 0) {
      if (!json_object_is_type(val, json_type_boolean))
        return config_error(o, key, "must be true or false");
      if (!cli->insecure)
        o->allow_insecure = json_object_get_boolean(val);
    } else if ((auth = auth_option_find(-1, key)) != NULL) {
      const char **field = auth_field(o, auth);
      if (!json_object_is_type(val, json_type_string) ||
          json_object_get_string_len(val) == 0)
        return config_error(o, key, "must be a non-empty string");
      if (*field == NULL) /* the command line wins */
        *field = json_object_get_string(val);
    } else if (strcmp(key, "watch") == 0) {
      if (!json_object_is_type(val, json_type_boolean))
        return config_error(o, key, "must be true or false");
      if (!cli->watch)
        o->watch = json_object_get_boolean(val);
    } else {
      return config_error(
          o, key,
          "unknown key (known: instructions, "
          "plugins, pluginDirs, logLevel, "
          "maxMessageSize, pageSize, maxInFlight, "
          "requestTimeoutMs, deadlineMs, stateKeyFile, requestStateTtlMs, "
          "threads, allowInsecurePlugins, "
          "watch, authTokenFile, authJwtIssuer, "
          "authJwtAudience, authJwks, resourceUrl)");
    }
  }
  if (o->plugin_configs) {
    json_object_object_foreach(o->plugin_configs, name, cfg) {
      json_object *h;
      if (!json_object_is_type(cfg, json_type_object)) {
        char path[300];
        snprintf(path, sizeof(path), "plugins.%s", name);
        return config_error(o, path, "must be an object");
      }
      /* The host's own key: checked, kept here, and taken out of what the
       * plugin's init() sees. */
      if (!json_object_object_get_ex(cfg, "mcpd", &h))
        continue;
      if (check_hosting(o, name, h) != 0)
        return -1;
      if (o->hosting == NULL && (o->hosting = json_object_new_object()) == NULL)
        return config_error(o, NULL, "out of memory");
      json_object_object_add(o->hosting, name, json_object_get(h));
      json_object_object_del(cfg, "mcpd");
    }
  }
  return 0;
}

/* The default plugin path: $MCPD_PLUGIN_PATH, else the user's folder and
 * the installed bundled plugins. */
static int default_dirs(options *o) {
  const char *path = getenv("MCPD_PLUGIN_PATH");
  if (path != NULL) {
    char *copy = strdup(path), *save = NULL;
    if (copy == NULL)
      return -1;
    for (char *d = strtok_r(copy, ":", &save); d;
         d = strtok_r(NULL, ":", &save))
      if (add_dir(o, d) != 0) {
        free(copy);
        return -1;
      }
    free(copy);
    return 0;
  }
  {
    const char *data = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    char buf[PATH_MAX];
    if (data && data[0] == '/') {
      snprintf(buf, sizeof(buf), "%s/mcpd/plugins", data);
      if (add_dir(o, buf) != 0)
        return -1;
    } else if (home && home[0] == '/') {
      snprintf(buf, sizeof(buf), "%s/.local/share/mcpd/plugins", home);
      if (add_dir(o, buf) != 0)
        return -1;
    }
  }
  return add_dir(o, MCPD_PLUGINS_DIR);
}

/* Reads the worker's plugin config from `fd` to its end and closes it:
 * the JSON text of an object, or `null` for none.  The host may hand over
 * a memfd it wrote, whose offset is then at the end, so a file is read
 * from its start; a pipe is read as it comes. */
static int read_worker_config(options *o, int fd) {
  strbuf text = {0};
  json_tokener *tok = NULL;
  json_object *config = NULL;
  const char *why = NULL;
  int rc = -1;

  if (lseek(fd, 0, SEEK_SET) < 0 && errno != ESPIPE) {
    why = strerror(errno);
    goto done;
  }
  for (;;) {
    ssize_t n;
    if (text.len > o->max_message) {
      why = "larger than --max-message-size";
      goto done;
    }
    if (strbuf_reserve(&text, 65536) != 0) {
      why = "out of memory";
      goto done;
    }
    n = read(fd, text.data + text.len, 65536);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      why = strerror(errno);
      goto done;
    }
    if (n == 0)
      break;
    text.len += (size_t)n;
  }
  if ((tok = json_tokener_new()) == NULL) {
    why = "out of memory";
    goto done;
  }
  /* A trailing newline is welcome; nothing else may follow the value. */
  while (text.len > 0 &&
         (text.data[text.len - 1] == ' ' || text.data[text.len - 1] == '\t' ||
          text.data[text.len - 1] == '\r' || text.data[text.len - 1] == '\n'))
    text.len--;
  if (text.len >= INT_MAX) {
    why = "too large";
    goto done;
  }
  /* The NUL ends the last token: "null" or a number needs an end. */
  text.data[text.len] = '\0';
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  config = json_tokener_parse_ex(tok, text.data, (int)text.len + 1);
  if (json_tokener_get_error(tok) != json_tokener_success ||
      json_tokener_get_parse_end(tok) != text.len) {
    why = "not one JSON value";
    json_object_put(config);
    goto done;
  }
  if (config != NULL && !json_object_is_type(config, json_type_object)) {
    why = "must be a JSON object or null";
    json_object_put(config);
    goto done;
  }
  o->worker_config = config;
  rc = 0;
done:
  if (rc != 0)
    log_error("--worker-config-fd %d: %s", fd, why);
  json_tokener_free(tok);
  strbuf_free(&text);
  close(fd);
  return rc;
}

/* Worker mode serves one plugin to the mcpd that started it, over stdio,
 * with everything else given on the command line: refuse what belongs to
 * a server of its own. */
static int check_worker(options *o, const char *listen_addr, int config_fd) {
  const char *clash = NULL;

  if (o->worker_path == NULL) {
    if (config_fd >= 0 || o->rlimit_as_mib || o->rlimit_cpu_s ||
        o->rlimit_nofile) {
      log_error("--worker-config-fd and --rlimit-* go with --worker");
      return -1;
    }
    return 0;
  }
  if (strcmp(o->transport, "stdio") != 0)
    clash = "--transport";
  else if (listen_addr != NULL)
    clash = "--listen";
  else if (o->plugin_dirs_given)
    clash = "--plugins";
  else if (o->config_path != NULL)
    clash = "--config";
  else if (o->mode == MODE_LIST)
    clash = "--list";
  else if (o->mode == MODE_CALL)
    clash = "--call";
  if (clash != NULL) {
    log_error("--worker cannot go with %s", clash);
    return -1;
  }
  o->mode = MODE_WORKER;
  o->watch = 0;
  return config_fd >= 0 ? read_worker_config(o, config_fd) : 0;
}

int options_parse(options *o, int argc, char **argv) {
  int c;
  cli_given cli = {0};
  const char *listen_addr = NULL;
  const char *auth_flag = NULL; /* the first authorization option given */
  int config_fd = -1;           /* --worker-config-fd */
  size_t size;

  memset(o, 0, sizeof(*o));
  o->log_level = LOG_LEVEL_INFO;
  o->watch = 1;
  o->max_message = MCPD_DEFAULT_MAX_MESSAGE;
  o->page_size = MCPD_DEFAULT_PAGE_SIZE;
  o->max_in_flight = MCPD_DEFAULT_MAX_IN_FLIGHT;
  o->request_timeout_ms = MCPD_DEFAULT_REQUEST_TIMEOUT_MS;
  o->request_state_ttl_ms = MCPD_DEFAULT_REQUEST_STATE_TTL_MS;
  o->deadline_ms = MCPD_DEFAULT_DEADLINE_MS;
  o->threads = MCPD_DEFAULT_THREADS;
  o->session_timeout_s = MCPD_DEFAULT_SESSION_TIMEOUT_S;
  o->transport = "stdio";

  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
    switch (c) {
    case OPT_PLUGINS:
      if (add_dir(o, optarg) != 0)
        return -1;
      o->plugin_dirs_given = 1;
      break;
    case OPT_CONFIG:
      o->config_path = optarg;
      break;
    case OPT_TRANSPORT:
      o->transport = optarg;
      break;
    case OPT_LISTEN:
      listen_addr = optarg;
      break;
    case OPT_ALLOW_HOST:
      if (add_host(o, optarg) != 0)
        return -1;
      break;
    case OPT_ALLOW_REMOTE:
      o->allow_remote = 1;
      break;
    case OPT_SESSION_PREFIX:
      if (!prefix_ok(optarg)) {
        log_error("--session-prefix \"%s\": expected 1 to 32 visible ASCII "
                  "characters",
                  optarg);
        return -1;
      }
      o->session_prefix = optarg;
      break;
    case OPT_SESSION_TIMEOUT: {
      size_t v;
      if (parse_size(optarg, 1, 7 * 86400, &v) != 0) {
        log_error("--session-timeout: \"%s\" is not a number of seconds "
                  "from 1 to 604800",
                  optarg);
        return -1;
      }
      o->session_timeout_s = v;
      break;
    }
    case OPT_SSE_POLL: {
      size_t v;
      if (parse_size(optarg, 0, 86400000, &v) != 0) {
        log_error("--sse-poll: \"%s\" is not a number of milliseconds "
                  "from 0 to 86400000",
                  optarg);
        return -1;
      }
      o->sse_poll_ms = v;
      break;
    }
    case OPT_LOG_LEVEL:
      o->log_level = log_level_parse(optarg);
      if (o->log_level < 0) {
        log_error("--log-level: \"%s\" is not error, warn, info or debug",
                  optarg);
        return -1;
      }
      cli.log_level = 1;
      break;
    case OPT_NO_WATCH:
      o->watch = 0;
      cli.watch = 1;
      break;
    case OPT_MAX_MESSAGE:
      if (parse_size(optarg, 1024, SIZE_MAX / 2, &o->max_message) != 0) {
        log_error("--max-message-size: \"%s\" is not a byte count >= 1024",
                  optarg);
        return -1;
      }
      cli.max = 1;
      break;
    case OPT_PAGE_SIZE:
      if (parse_size(optarg, 1, 100000, &o->page_size) != 0) {
        log_error("--page-size: \"%s\" is not a number from 1 to 100000",
                  optarg);
        return -1;
      }
      cli.page = 1;
      break;
    case OPT_MAX_IN_FLIGHT:
      if (parse_size(optarg, 1, 1000000, &o->max_in_flight) != 0) {
        log_error("--max-in-flight: \"%s\" is not a number from 1 to "
                  "1000000",
                  optarg);
        return -1;
      }
      cli.in_flight = 1;
      break;
    case OPT_REQUEST_TIMEOUT: {
      size_t ms;
      if (parse_size(optarg, 1, 86400000, &ms) != 0) {
        log_error("--request-timeout: \"%s\" is not a number of "
                  "milliseconds from 1 to 86400000",
                  optarg);
        return -1;
      }
      o->request_timeout_ms = ms;
      cli.timeout = 1;
      break;
    }
    case OPT_ISOLATE: {
      /* "--isolate" alone is every plugin; "--isolate NAME" (or =NAME)
       * one, and may repeat. */
      const char *name = optarg;
      if (name == NULL && optind < argc && argv[optind][0] != '-')
        name = argv[optind++];
      if (name == NULL) {
        o->isolate_all = 1;
      } else if (!registry_name_ok(name)) {
        log_error("--isolate \"%s\": not a plugin name", name);
        return -1;
      } else {
        if (o->isolate_names == NULL &&
            (o->isolate_names = json_object_new_object()) == NULL) {
          log_error("out of memory");
          return -1;
        }
        json_object_object_add(o->isolate_names, name,
                               json_object_new_boolean(1));
      }
      break;
    }
    case OPT_DEADLINE: {
      size_t ms;
      if (parse_size(optarg, 1, 86400000, &ms) != 0) {
        log_error("--deadline: \"%s\" is not a number of milliseconds from "
                  "1 to 86400000",
                  optarg);
        return -1;
      }
      o->deadline_ms = ms;
      cli.deadline = 1;
      break;
    }
    case OPT_THREADS:
      if (parse_size(optarg, 1, 1024, &o->threads) != 0) {
        log_error("--threads: \"%s\" is not a number from 1 to 1024", optarg);
        return -1;
      }
      cli.threads = 1;
      break;
    case OPT_INSECURE:
      o->allow_insecure = 1;
      cli.insecure = 1;
      break;
    case OPT_AUTH_TOKEN_FILE:
    case OPT_AUTH_JWT_ISSUER:
    case OPT_AUTH_JWT_AUDIENCE:
    case OPT_AUTH_JWKS:
    case OPT_RESOURCE_URL: {
      const struct auth_option *auth = auth_option_find(c, NULL);
      if (optarg[0] == '\0') {
        log_error("%s needs a non-empty value", auth->flag);
        return -1;
      }
      *auth_field(o, auth) = optarg;
      if (auth_flag == NULL)
        auth_flag = auth->flag;
      break;
    }
    case OPT_LIST:
      o->mode = MODE_LIST;
      break;
    case OPT_CALL:
      o->mode = MODE_CALL;
      o->call_tool = optarg;
      break;
    case OPT_ARGS:
      o->call_args = optarg;
      break;
    case OPT_HELP:
      o->mode = MODE_HELP;
      return 0;
    case OPT_VERSION:
      o->mode = MODE_VERSION;
      return 0;
    case OPT_WORKER:
      if (optarg[0] == '\0') {
        log_error("--worker needs a plugin path");
        return -1;
      }
      o->worker_path = optarg;
      break;
    case OPT_WORKER_CONFIG_FD: {
      size_t fd;
      /* 0 and 1 are the host's socket, 2 its stderr. */
      if (parse_size(optarg, 3, INT_MAX, &fd) != 0 ||
          fcntl((int)fd, F_GETFD) < 0) {
        log_error("--worker-config-fd: \"%s\" is not an open descriptor "
                  "above 2",
                  optarg);
        return -1;
      }
      config_fd = (int)fd;
      break;
    }
    case OPT_RLIMIT_AS:
      if (parse_size(optarg, 1, 1048576, &size) != 0) {
        log_error("--rlimit-as: \"%s\" is not a number of MiB from 1 to "
                  "1048576",
                  optarg);
        return -1;
      }
      o->rlimit_as_mib = size;
      break;
    case OPT_RLIMIT_CPU:
      if (parse_size(optarg, 1, 31536000, &size) != 0) {
        log_error("--rlimit-cpu: \"%s\" is not a number of seconds from 1 "
                  "to 31536000",
                  optarg);
        return -1;
      }
      o->rlimit_cpu_s = size;
      break;
    case OPT_RLIMIT_NOFILE:
      if (parse_size(optarg, 1, 1048576, &size) != 0) {
        log_error("--rlimit-nofile: \"%s\" is not a number from 1 to "
                  "1048576",
                  optarg);
        return -1;
      }
      o->rlimit_nofile = size;
      break;
    case ':':
      log_error("option %s needs a value; see --help", argv[optind - 1]);
      return -1;
    default:
      log_error("unknown option \"%s\"; see --help", argv[optind - 1]);
      return -1;
    }
  }
  if (optind < argc) {
    log_error("unexpected argument \"%s\"; see --help", argv[optind]);
    return -1;
  }
  if (strcmp(o->transport, "http") == 0) {
    /* Loopback unless told otherwise: an MCP endpoint runs plugin code. */
    o->listen = listen_addr != NULL ? listen_addr : "127.0.0.1:8080";
  } else if (strcmp(o->transport, "stdio") != 0) {
    log_error("--transport %s: expected stdio or http", o->transport);
    return -1;
  } else if (listen_addr != NULL) {
    log_error("--listen %s: stdio listens on nothing; --listen goes with a "
              "network transport",
              listen_addr);
    return -1;
  } else if (auth_flag != NULL) {
    /* The MCP spec: stdio takes credentials from the environment, not
     * from HTTP authorization. */
    log_error("%s goes with --transport http; stdio has no bearer tokens",
              auth_flag);
    return -1;
  }
  if (o->call_args && o->mode != MODE_CALL) {
    log_error("--args goes with --call TOOL");
    return -1;
  }
  if (check_worker(o, listen_addr, config_fd) != 0)
    return -1;
  if (o->config_path && load_config(o, &cli) != 0)
    return -1;
  /* A worker scans no directory: it loads the one file it was given. */
  if (o->mode != MODE_WORKER && o->n_plugin_dirs == 0 && default_dirs(o) != 0) {
    log_error("out of memory");
    return -1;
  }
  return 0;
}

void options_free(options *o) {
  for (size_t i = 0; i < o->n_plugin_dirs; i++)
    free(o->plugin_dirs[i]);
  free(o->plugin_dirs);
  for (size_t i = 0; i < o->n_allow_hosts; i++)
    free(o->allow_hosts[i]);
  free(o->allow_hosts);
  json_object_put(o->config);
  json_object_put(o->hosting);
  json_object_put(o->isolate_names);
  json_object_put(o->worker_config);
  memset(o, 0, sizeof(*o));
}

int options_isolated(const options *o, const char *plugin) {
  json_object *h, *v;
  if (o->isolate_all ||
      (o->isolate_names != NULL &&
       json_object_object_get_ex(o->isolate_names, plugin, NULL)))
    return 1;
  return o->hosting != NULL &&
         json_object_object_get_ex(o->hosting, plugin, &h) &&
         json_object_object_get_ex(h, "isolate", &v) &&
         json_object_get_boolean(v);
}

uint64_t options_limit(const options *o, const char *plugin, const char *key) {
  json_object *h, *v;
  if (o->hosting != NULL && json_object_object_get_ex(o->hosting, plugin, &h) &&
      json_object_object_get_ex(h, "limits", &v) &&
      json_object_object_get_ex(v, key, &v))
    return (uint64_t)json_object_get_int64(v);
  return 0;
}

uint64_t options_deadline(const options *o, const char *plugin,
                          const char *tool) {
  json_object *h, *v;
  uint64_t ms = o->deadline_ms;
  if (o->hosting == NULL || !json_object_object_get_ex(o->hosting, plugin, &h))
    return ms;
  if (json_object_object_get_ex(h, "deadlineMs", &v))
    ms = (uint64_t)json_object_get_int64(v);
  if (tool != NULL && json_object_object_get_ex(h, "tools", &v) &&
      json_object_object_get_ex(v, tool, &v) &&
      json_object_object_get_ex(v, "deadlineMs", &v))
    ms = (uint64_t)json_object_get_int64(v);
  return ms;
}

json_object *options_plugin_config(const options *o, const char *name) {
  json_object *cfg;
  if (o->mode == MODE_WORKER)
    return o->worker_config;
  if (o->plugin_configs &&
      json_object_object_get_ex(o->plugin_configs, name, &cfg))
    return cfg;
  return NULL;
}
