/* options.h -- command line and --config file. */
#ifndef MCPD_OPTIONS_H
#define MCPD_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

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

typedef enum options_mode {
  MODE_SERVE = 0,
  MODE_HELP,
  MODE_VERSION,
  MODE_LIST,
  MODE_CALL,
  MODE_WORKER /* --worker: one plugin, served to the mcpd that started us */
} options_mode;

typedef struct options {
  options_mode mode;
  char **plugin_dirs; /* owned strings */
  size_t n_plugin_dirs;
  int plugin_dirs_given; /* --plugins or "pluginDirs" was used */
  const char *config_path;
  json_object *config;         /* the whole file, owned; NULL without one */
  json_object *plugin_configs; /* borrowed from config; may be NULL */
  const char *instructions;    /* borrowed from config; may be NULL */
  const char *transport;
  const char *listen; /* --listen, for http; NULL otherwise */
  /* HTTP: names accepted in Host/Origin beside the loopback ones. */
  char **allow_hosts; /* owned strings */
  size_t n_allow_hosts;
  int allow_remote;           /* a non-loopback --listen is intended */
  const char *session_prefix; /* starts every Mcp-Session-Id */
  uint64_t session_timeout_s; /* idle HTTP sessions end after this */
  uint64_t sse_poll_ms;       /* 0, or when POST streams close to poll */
  int log_level;              /* log_level */
  int watch;
  size_t max_message;
  size_t page_size;
  size_t max_in_flight; /* per session */
  /* How long a request to the client may wait for its answer. */
  uint64_t request_timeout_ms;
  uint64_t deadline_ms; /* --deadline: the default for every call */
  /* 2026-07-28 input_required: the file whose bytes key requestState's
   * HMAC (borrowed from config; NULL for a random key per process), and
   * how long a requestState stays valid. */
  const char *state_key_file;
  uint64_t request_state_ttl_ms;
  /* plugins.NAME.mcpd of the config, by plugin name (owned), or NULL: the
   * host's settings for that plugin, which its init() does not see. */
  json_object *hosting;
  int isolate_all;            /* --isolate */
  json_object *isolate_names; /* --isolate NAME..., a set; owned */
  size_t threads;             /* the libuv pool, which runs POOL tools */
  int allow_insecure;
  /* HTTP authorization (see auth.h); NULL when not set.  Borrowed from
   * argv or from `config`. */
  const char *auth_token_file;
  const char *auth_jwt_issuer;
  const char *auth_jwt_audience;
  const char *auth_jwks;
  const char *resource_url; /* the MCP endpoint as clients see it */
  const char *call_tool;
  const char *call_args;
  /* Worker mode (internal; see src/worker.c): the plugin to serve, and
   * its config as read from --worker-config-fd (owned; NULL for none). */
  const char *worker_path;
  json_object *worker_config;
  /* Worker mode: limits set before the plugin is loaded; 0 for none. */
  uint64_t rlimit_as_mib;
  uint64_t rlimit_cpu_s;
  uint64_t rlimit_nofile;
} options;

/* Parses argv and the --config file.  Returns 0, or -1 after printing one
 * clear line to stderr (the caller exits with status 2). */
int options_parse(options *o, int argc, char **argv);
void options_free(options *o);
void options_print_help(const char *argv0, int fd);

/* The deadline of a call into `plugin` (`tool`: the tool's name, or NULL
 * for other calls): the tool's, else the plugin's, else --deadline. */
uint64_t options_deadline(const options *o, const char *plugin,
                          const char *tool);

/* Whether `plugin` runs in a worker process (--isolate, or
 * plugins.NAME.mcpd.isolate). */
int options_isolated(const options *o, const char *plugin);
/* plugins.NAME.mcpd.limits.KEY ("addressSpaceMiB", "cpuSeconds",
 * "openFiles"), or 0 for none. */
uint64_t options_limit(const options *o, const char *plugin, const char *key);

/* Plugin config for plugin `name`, borrowed, or NULL.  In worker mode it
 * is the one config the host passed, whatever the name. */
json_object *options_plugin_config(const options *o, const char *name);

#endif
