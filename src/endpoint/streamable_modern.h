/* SPDX-License-Identifier: MIT */
/* streamable_modern.h -- the 2026-07-28 era over HTTP: one POST, one
 * request, no session of the client's.
 *
 * The endpoint (streamable.c) decides which POSTs are modern
 * (era_route_post) and hands each one here with its parsed body.  It runs
 * in a session opened for it alone, through the same callbacks as a
 * legacy client's, and closed with its exchange.  This module sits below
 * the endpoint: it knows nothing of legacy sessions, and the endpoint
 * shares its error answer and keep-alive period. */
#ifndef MCPD_STREAMABLE_MODERN_H
#define MCPD_STREAMABLE_MODERN_H

#include <stdint.h>

#include <uv.h>

#include "session.h"
#include "transport_http.h"

/* What an exchange's data points at: every owner starts with this tag,
 * so that the endpoint's closed callback tells them apart. */
typedef enum exchange_owner {
  OWNER_CHANNEL, /* a channel of a legacy session (zero: calloc'd ones are) */
  OWNER_MODERN   /* a modern POST */
} exchange_owner;

/* A comment goes on an SSE connection quiet this long, so proxies and
 * clients keep it and dead peers are noticed. */
#define STREAMABLE_KEEPALIVE_MS 15000

struct mpost;

/* The modern POSTs of one endpoint, which owns this by value. */
typedef struct streamable_modern {
  uv_loop_t *loop;
  /* A session for one POST, whose messages go to `write(ctx, ...)`; it is
   * closed when the POST's exchange ends. */
  session *(*open)(void *arg, session_write_fn write, void *ctx);
  void (*close)(void *arg, session *s);
  void *arg;
  struct mpost *posts; /* in flight, newest first */
  size_t n_posts;
} streamable_modern;

/* Serves POST `x` whose body `body` (borrowed) era_route_post() found
 * modern; answers it now or when its request is answered. */
void streamable_modern_post(streamable_modern *m, http_exchange *x,
                            json_object *body);
/* http_transport_cb.closed for an exchange whose data is OWNER_MODERN: an
 * unanswered request is cancelled, and its session closes. */
void streamable_modern_closed(http_exchange *x);
/* Keeps quiet modern streams alive; `now` is the loop's time. */
void streamable_modern_tick(streamable_modern *m, uint64_t now);
/* Shutdown: every POST still open ends (a stream ends, a JSON answer is
 * 503) and its session closes. */
void streamable_modern_close(streamable_modern *m);

/* Answers `x` with a JSON-RPC error as its JSON body, with `status`;
 * `id` is borrowed (NULL is null). */
void streamable_respond_error(http_exchange *x, unsigned status,
                              json_object *id, int code, const char *message);

#endif
