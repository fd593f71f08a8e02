/* SPDX-License-Identifier: MIT */
/* server_http.h -- the server's HTTP endpoint, in mcpd-http only. */
#ifndef MCPD_SERVER_HTTP_H
#define MCPD_SERVER_HTTP_H

#include "server.h"

/* Serves MCP over HTTP on opts->http.listen until shutdown: one session per
 * client, opened and closed through the server.  Returns -1 after logging
 * why it cannot listen. */
int server_serve_http(server *srv);
/* For a stdio server: only the operator's listener of --metrics-listen
 * (/metrics, /healthz, /readyz).  -1 after logging why. */
int server_serve_ops(server *srv);

#endif
