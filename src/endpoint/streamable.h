/* SPDX-License-Identifier: MIT */
/* streamable.h -- MCP over HTTP: the Streamable HTTP transport of the
 * 2025 revisions at /mcp, and the older HTTP+SSE transport (2024-11-05) at
 * /sse and /messages.
 *
 * This module owns the MCP rules of HTTP on top of transport_http: session
 * ids, the protocol-version header, which message goes on which stream,
 * SSE event ids and resumption, keep-alives, idle expiry.  Each client
 * gets a session from its owner through a callback, and hands that session
 * every body it POSTs; what the session writes comes back here and goes on
 * the right stream.  A modern (2026-07-28) POST gets a session of its
 * own, opened the same way and closed when its exchange ends. */
#ifndef MCPD_STREAMABLE_H
#define MCPD_STREAMABLE_H

#include <uv.h>

#include "http_settings.h"
#include "ops.h"
#include "session.h"

typedef struct streamable streamable;

typedef struct streamable_cb {
  /* A new client: a session whose messages go to `write(ctx, ...)`. */
  session *(*open)(void *arg, session_write_fn write, void *ctx);
  /* That client's session is over (DELETE, expiry, its SSE stream closed,
   * a modern POST answered or abandoned, shutdown); the owner frees it. */
  void (*close)(void *arg, session *s);
  void *arg;
  /* /healthz and /readyz (no token needed), and /metrics with --metrics
   * (the same auth as /mcp). */
  ops_cb ops;
} streamable_cb;

/* Listens on o->listen.  Returns NULL after logging why (a bad address, a
 * non-loopback address without --allow-remote or a token source). */
streamable *streamable_new(uv_loop_t *loop, const http_settings *o,
                           const streamable_cb *cb);
/* Whether a new session would be accepted (below --max-sessions). */
int streamable_has_room(const streamable *h);
/* SSE streams with a client on them now. */
size_t streamable_sse_open(const streamable *h);
/* From now on new requests get 503 (shutdown began); sessions go on. */
void streamable_refuse(streamable *h);
/* Ends every session, lets answers already made reach their clients
 * (for at most 2 s; not at all with `now`), stops listening and frees
 * `h`; then calls done(arg).  Called again with `now`, it stops waiting. */
void streamable_close(streamable *h, void (*done)(void *arg), void *arg,
                      int now);

#endif
