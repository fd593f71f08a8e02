/* SPDX-License-Identifier: MIT */
/* http_settings.h -- what the HTTP endpoint (streamable.c) reads: where it
 * listens, whom it lets in, how its sessions are named and end, and its
 * authorization.  Filled by settings.c. */
#ifndef MCPD_HTTP_SETTINGS_H
#define MCPD_HTTP_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "auth_settings.h"

typedef struct http_settings {
  const char *listen; /* --listen, for http; NULL otherwise */
  /* Names accepted in Host/Origin beside the loopback ones. */
  char **allow_hosts; /* owned strings */
  size_t n_allow_hosts;
  int allow_remote;           /* a non-loopback --listen is intended */
  const char *session_prefix; /* starts every Mcp-Session-Id */
  uint64_t session_timeout_s; /* idle HTTP sessions end after this */
  size_t max_sessions;        /* open at once, every identity's */
  int metrics;                /* serve /metrics beside /mcp */
  const char *metrics_listen; /* or on a loopback listener of its own */
  size_t max_sessions_each;   /* one identity's; 0: a quarter of those */
  uint64_t sse_poll_ms;       /* 0, or when POST streams close to poll */
  size_t max_message;         /* the largest body accepted */
  auth_settings auth;
} http_settings;

#endif
