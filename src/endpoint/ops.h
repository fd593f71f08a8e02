/* SPDX-License-Identifier: MIT */
/* ops.h -- what an operator's tools ask over HTTP: GET /healthz (the loop
 * answers), GET /readyz (the server would serve a new client well) and
 * GET /metrics (Prometheus text format).  Served by the MCP endpoint
 * (health without a token, metrics with the same auth as /mcp), or alone
 * on a loopback listener of their own (--metrics-listen), for stdio
 * deployments too.  Neither says anything of a client. */
#ifndef MCPD_OPS_H
#define MCPD_OPS_H

#include <stddef.h>

#include <uv.h>

#include "strbuf.h"
#include "transport_http.h"

typedef struct ops_cb {
  /* 1 when ready; else 0 with a short reason in `why`. */
  int (*ready)(void *arg, char *why, size_t size);
  /* The whole metrics page, appended to `out`. */
  void (*metrics)(void *arg, strbuf *out);
  void *arg;
} ops_cb;

#define OPS_HEALTH 0x1u  /* /healthz and /readyz */
#define OPS_METRICS 0x2u /* /metrics */

/* Answers `x` when `path` is one of the endpoints in `which`: returns 1
 * then, else 0 (not one of them; `x` is the caller's). */
int ops_serve(const ops_cb *cb, http_exchange *x, http_method method,
              const char *path, unsigned which);

typedef struct ops_listener ops_listener;
/* Serves all three on `listen`, which must be a loopback address or a
 * unix socket; NULL after logging why. */
ops_listener *ops_listen(uv_loop_t *loop, const char *listen, const ops_cb *cb);
/* Stops it; done(arg) runs once its handles are closed. */
void ops_close(ops_listener *o, void (*done)(void *arg), void *arg, int now);

#endif
