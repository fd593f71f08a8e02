/* SPDX-License-Identifier: MIT */
/* config.c -- the "sqlite" plugin's config: the databases it serves and
 * its limits, and finding a database by the name a client gives. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/plugin_config.h"
#include "sqlite.h"

const struct sq_database *sq_find_database(const struct sq_state *st,
                                           const char *name) {
  for (size_t i = 0; name != NULL && i < st->n_dbs; i++)
    if (strcmp(st->dbs[i].name, name) == 0)
      return &st->dbs[i];
  return NULL;
}

/* "main, logs" into a printbuf, for messages that say what exists. */
static void append_names(struct printbuf *pb, const struct sq_state *st) {
  for (size_t i = 0; i < st->n_dbs; i++)
    sprintbuf(pb, "%s%s", i ? ", " : "", st->dbs[i].name);
  if (st->n_dbs == 0)
    sprintbuf(pb, "none (configure plugins.sqlite.databases)");
}

/* Answers -32602 for a database name the config does not know. */
int sq_fail_unknown(mcpd_call *call, const struct sq_state *st,
                    const char *name) {
  struct printbuf *pb = printbuf_new();
  int rc;

  if (pb != NULL)
    append_names(pb, st);
  rc = st->host->fail(call, MCPD_ERR_INVALID_PARAMS,
                      "unknown database \"%s\"; this server has: %s",
                      name ? name : "", pb ? pb->buf : "?");
  printbuf_free(pb);
  return rc;
}

static int valid_name(const char *s) {
  size_t n = strlen(s);

  if (n == 0 || n > 64)
    return 0;
  for (; *s != '\0'; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.'))
      return 0;
  return 1;
}

/* The absolute path of a configured one: "~" is $HOME, relative paths are
 * relative to mcpd's working directory.  malloc'ed. */
static char *absolute_path(const char *given) {
  const char *home = getenv("HOME");
  char cwd[PATH_MAX];
  size_t n;
  char *p;

  if (given[0] == '~' && (given[1] == '\0' || given[1] == '/')) {
    if (home == NULL || home[0] != '/')
      return NULL;
    n = strlen(home) + strlen(given);
    if ((p = malloc(n)) != NULL)
      snprintf(p, n, "%s%s", home, given + 1);
    return p;
  }
  if (given[0] == '/')
    return strdup(given);
  if (getcwd(cwd, sizeof(cwd)) == NULL)
    return NULL;
  n = strlen(cwd) + strlen(given) + 2;
  if ((p = malloc(n)) != NULL)
    snprintf(p, n, "%s/%s", cwd, given);
  return p;
}

static int parse_database(struct sq_state *st, char **errmsg, const char *name,
                          json_object *v) {
  const mcpd_host *host = st->host;
  struct sq_database *d = &st->dbs[st->n_dbs];
  const char *path = NULL;

  if (!valid_name(name))
    return config_error(host, errmsg,
                        "databases: \"%s\" is not a usable name: 1 to 64 of "
                        "A-Z a-z 0-9 _ . -",
                        name);
  if (!json_object_is_type(v, json_type_object))
    return config_error(host, errmsg,
                        "databases.%s must be an object such as {\"path\": "
                        "\"/srv/app.db\", \"write\": false}",
                        name);
  json_object_object_foreach(v, key, value) {
    if (strcmp(key, "path") == 0) {
      if (!json_object_is_type(value, json_type_string) ||
          json_object_get_string_len(value) == 0)
        return config_error(
            host, errmsg, "databases.%s.path must be a non-empty string", name);
      path = json_object_get_string(value);
    } else if (strcmp(key, "write") == 0) {
      if (!json_object_is_type(value, json_type_boolean))
        return config_error(host, errmsg,
                            "databases.%s.write must be true or false", name);
      d->write = json_object_get_boolean(value);
    } else {
      return config_error(host, errmsg,
                          "databases.%s: unknown key \"%s\" (known: path, "
                          "write)",
                          name, key);
    }
  }
  if (path == NULL)
    return config_error(host, errmsg, "databases.%s needs a \"path\"", name);
  d->name = strdup(name);
  d->path = absolute_path(path);
  if (d->name == NULL || d->path == NULL) {
    free(d->name);
    free(d->path);
    return config_error(host, errmsg,
                        "databases.%s: cannot make \"%s\" "
                        "absolute ($HOME unset, or no memory)",
                        name, path);
  }
  st->n_dbs++;
  return MCPD_OK;
}

int sq_parse_config(struct sq_state *st, json_object *config, char **errmsg) {
  const mcpd_host *host = st->host;
  json_object *databases = NULL;
  int64_t n = 0;
  int rc;

  if (config == NULL)
    return MCPD_OK; /* sq_init() says how to configure it */
  if (!json_object_is_type(config, json_type_object))
    return config_error(host, errmsg,
                        "the config must be an object, e.g. {\"plugins\": "
                        "{\"sqlite\": {\"databases\": {\"app\": {\"path\": "
                        "\"/srv/app.db\"}}}}}");
  json_object_object_foreach(config, key, v) {
    if (strcmp(key, "databases") == 0) {
      databases = v;
      rc = MCPD_OK;
    } else if (strcmp(key, "maxRows") == 0) {
      if ((rc = config_int(host, errmsg, key, v, 1, 1000000, &n)) == MCPD_OK)
        st->max_rows = (size_t)n;
    } else if (strcmp(key, "timeoutMs") == 0) {
      if ((rc = config_int(host, errmsg, key, v, 1, 3600000, &n)) == MCPD_OK)
        st->timeout_ms = n;
    } else if (strcmp(key, "maxCellBytes") == 0) {
      if ((rc = config_int(host, errmsg, key, v, 16, 16 << 20, &n)) == MCPD_OK)
        st->max_cell_bytes = (size_t)n;
    } else {
      rc = config_error(host, errmsg,
                        "unknown key \"%s\" (known: databases, maxRows, "
                        "timeoutMs, maxCellBytes)",
                        key);
    }
    if (rc != MCPD_OK)
      return rc;
  }
  if (databases == NULL)
    return MCPD_OK;
  if (!json_object_is_type(databases, json_type_object) ||
      json_object_object_length(databases) == 0)
    return config_error(host, errmsg,
                        "\"databases\" must be a non-empty object of name: "
                        "{\"path\": ..., \"write\": false}");
  st->dbs =
      calloc((size_t)json_object_object_length(databases), sizeof(*st->dbs));
  if (st->dbs == NULL)
    return config_error(host, errmsg, "out of memory");
  json_object_object_foreach(databases, name, entry) {
    if (parse_database(st, errmsg, name, entry) != MCPD_OK)
      return MCPD_ERROR;
  }
  return MCPD_OK;
}
