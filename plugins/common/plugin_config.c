/* SPDX-License-Identifier: MIT */
/* plugin_config.c -- reading a bundled plugin's config object (see
 * plugin_config.h). */
#include <stdarg.h>
#include <stdio.h>

#include "plugin_config.h"

int config_error(const mcpd_host *host, char **errmsg, const char *fmt, ...) {
  char text[1024];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  *errmsg = host->mprintf("config: %s", text);
  return MCPD_ERROR;
}

int config_int(const mcpd_host *host, char **errmsg, const char *key,
               json_object *v, int64_t lo, int64_t hi, int64_t *out) {
  int64_t n;

  if (!json_object_is_type(v, json_type_int) ||
      (n = json_object_get_int64(v)) < lo || n > hi)
    return config_error(host, errmsg,
                        "\"%s\" must be an integer from %lld to %lld", key,
                        (long long)lo, (long long)hi);
  *out = n;
  return MCPD_OK;
}

int config_bool(const mcpd_host *host, char **errmsg, const char *key,
                json_object *v, int *out) {
  if (!json_object_is_type(v, json_type_boolean))
    return config_error(host, errmsg, "\"%s\" must be true or false", key);
  *out = json_object_get_boolean(v);
  return MCPD_OK;
}
