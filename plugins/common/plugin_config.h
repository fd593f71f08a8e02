/* SPDX-License-Identifier: MIT */
/* plugin_config.h -- reading a bundled plugin's config object, shared by the
 * plugins in this tree (compiled into each; not part of the SDK).
 *
 * Each function checks one value and, when it is wrong, sets *errmsg to
 * "config: <why>" (from host->mprintf(), as init() must) and returns
 * MCPD_ERROR; otherwise it stores the value and returns MCPD_OK. */
#ifndef MCPD_PLUGIN_CONFIG_H
#define MCPD_PLUGIN_CONFIG_H

#include <stdint.h>

#include <mcpd.h>

/* Formats the error itself; always returns MCPD_ERROR. */
int config_error(const mcpd_host *host, char **errmsg, const char *fmt, ...)
    MCPD_PRINTF(3, 4);
/* `v`, the value of `key`, as an integer in [lo, hi]. */
int config_int(const mcpd_host *host, char **errmsg, const char *key,
               json_object *v, int64_t lo, int64_t hi, int64_t *out);
/* `v` as a boolean (0 or 1). */
int config_bool(const mcpd_host *host, char **errmsg, const char *key,
                json_object *v, int *out);

#endif
