/* SPDX-License-Identifier: MIT */
/* config.c -- servers.NAME of the proxy's config: how to reach a server
 * (a command, its environment and directory; or a URL and its headers)
 * and the prefix of its names.  Read once, in init(), before the proxy
 * thread starts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

extern char **environ;

/* A prefix keeps every mapped name one a client accepts. */
static int valid_prefix(const char *s) {
  if (strlen(s) > 32)
    return 0;
  for (; *s; s++)
    if (!ent_name_char(*s))
      return 0;
  return 1;
}

static void free_list(char **v) {
  if (v == NULL)
    return;
  for (char **p = v; *p; p++)
    free(*p);
  free(v);
}

/* mcpd's environment with `env`'s variables added or replaced. */
static char **environment(json_object *env) {
  size_t n = 0, k = 0;
  char **v;
  for (char **e = environ; e && *e; e++)
    n++;
  if ((v = calloc(n + (size_t)json_object_object_length(env) + 1,
                  sizeof(*v))) == NULL)
    return NULL;
  for (char **e = environ; e && *e; e++) {
    const char *eq = strchr(*e, '=');
    char name[256];
    json_object *ignored;
    if (eq == NULL || (size_t)(eq - *e) >= sizeof(name))
      continue;
    memcpy(name, *e, (size_t)(eq - *e));
    name[eq - *e] = '\0';
    if (json_object_object_get_ex(env, name, &ignored))
      continue;
    if ((v[k++] = strdup(*e)) == NULL)
      goto oom;
  }
  json_object_object_foreach(env, key, val) {
    size_t len = strlen(key) + strlen(json_object_get_string(val)) + 2;
    if ((v[k] = malloc(len)) == NULL)
      goto oom;
    snprintf(v[k++], len, "%s=%s", key, json_object_get_string(val));
  }
  return v;
oom:
  free_list(v);
  return NULL;
}

static int bad(const mcpd_host *host, char **errmsg, const char *name,
               const char *why) {
  *errmsg = host->mprintf("config: servers.%s: %s", name, why);
  return MCPD_ERROR;
}

static int strings_object(json_object *o) {
  if (!json_object_is_type(o, json_type_object))
    return 0;
  json_object_object_foreach(o, key, val) {
    if (!json_object_is_type(val, json_type_string) || *key == '\0' ||
        strchr(key, '='))
      return 0;
  }
  return 1;
}

int up_read_config(px_upstream *u, json_object *def, char **errmsg) {
  const mcpd_host *host = u->px->host;
  json_object *cmd = NULL, *url = NULL, *v;
  json_object *env = NULL;

  if (!json_object_is_type(def, json_type_object))
    return bad(host, errmsg, u->name, "must be an object");
  json_object_object_get_ex(def, "command", &cmd);
  json_object_object_get_ex(def, "url", &url);
  if ((cmd != NULL) == (url != NULL))
    return bad(host, errmsg, u->name, "needs \"command\" or \"url\", not both");
  if (cmd != NULL) {
    size_t n = json_object_is_type(cmd, json_type_array)
                   ? json_object_array_length(cmd)
                   : 0;
    if (n == 0)
      return bad(host, errmsg, u->name,
                 "\"command\" must be a non-empty array of strings");
    if ((u->argv = calloc(n + 1, sizeof(*u->argv))) == NULL)
      return bad(host, errmsg, u->name, "out of memory");
    for (size_t i = 0; i < n; i++) {
      json_object *a = json_object_array_get_idx(cmd, i);
      if (!json_object_is_type(a, json_type_string) ||
          (i == 0 && json_object_get_string_len(a) == 0))
        return bad(host, errmsg, u->name,
                   "\"command\" must be a non-empty array of strings");
      if ((u->argv[i] = strdup(json_object_get_string(a))) == NULL)
        return bad(host, errmsg, u->name, "out of memory");
    }
    if (json_object_object_get_ex(def, "env", &env) && !strings_object(env))
      return bad(host, errmsg, u->name, "\"env\" must be an object of strings");
    if (env != NULL && (u->envp = environment(env)) == NULL)
      return bad(host, errmsg, u->name, "out of memory");
    if (json_object_object_get_ex(def, "cwd", &v)) {
      if (!json_object_is_type(v, json_type_string) ||
          (u->cwd = strdup(json_object_get_string(v))) == NULL)
        return bad(host, errmsg, u->name, "\"cwd\" must be a string");
    }
  } else {
    const char *s = json_object_get_string(url);
    if (!json_object_is_type(url, json_type_string) ||
        (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0))
      return bad(host, errmsg, u->name,
                 "\"url\" must be an http:// or https:// URL");
    if ((u->url = strdup(s)) == NULL)
      return bad(host, errmsg, u->name, "out of memory");
    if (json_object_object_get_ex(def, "headers", &v)) {
      if (!strings_object(v))
        return bad(host, errmsg, u->name,
                   "\"headers\" must be an object of strings");
      u->headers = json_object_get(v);
    }
  }
  if (json_object_object_get_ex(def, "prefix", &v)) {
    if (!json_object_is_type(v, json_type_string) ||
        !valid_prefix(json_object_get_string(v)))
      return bad(host, errmsg, u->name,
                 "\"prefix\" must be at most 32 of A-Z a-z 0-9 _ -");
    u->prefix = strdup(json_object_get_string(v));
  } else {
    size_t len = strlen(u->name) + 2;
    if ((u->prefix = malloc(len)) != NULL)
      snprintf(u->prefix, len, "%s_", u->name);
    if (u->prefix != NULL && !valid_prefix(u->prefix))
      return bad(host, errmsg, u->name,
                 "the name makes no valid prefix; set \"prefix\"");
  }
  if (u->prefix == NULL)
    return bad(host, errmsg, u->name, "out of memory");
  return MCPD_OK;
}

void up_config_free(px_upstream *u) {
  json_object_put(u->headers);
  free_list(u->argv);
  free_list(u->envp);
  free(u->cwd);
  free(u->url);
  free(u->prefix);
}
