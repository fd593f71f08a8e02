/* SPDX-License-Identifier: MIT */
/* auth_settings.h -- what auth_new() reads: the token sources of HTTP
 * authorization and the resource URL.  Filled by settings.c from the
 * --auth-* and --resource-url flags or their config keys. */
#ifndef MCPD_AUTH_SETTINGS_H
#define MCPD_AUTH_SETTINGS_H

/* Each NULL when not set, else non-empty; borrowed from argv or from the
 * config file, which outlive the server. */
typedef struct auth_settings {
  const char *auth_token_file;
  const char *auth_jwt_issuer;
  const char *auth_jwt_audience;
  const char *auth_jwks;
  const char *resource_url; /* the MCP endpoint as clients see it */
} auth_settings;

#endif
