/* SPDX-License-Identifier: MIT */
/* transport_http.h -- an HTTP endpoint on the libuv loop, for Streamable
 * HTTP.
 *
 * libmicrohttpd parses HTTP; this module runs it on mcpd's loop and keeps
 * to the HTTP rules that need no MCP: Host and Origin limited to loopback
 * names and the ones the operator allowed (403 otherwise, against DNS
 * rebinding) and the body size limit (413).  Everything else -- paths,
 * sessions, protocol versions, which message goes on which stream --
 * belongs to the owner, who gets each exchange (one HTTP request) with its
 * whole body through a callback and answers it with a single body or with
 * an SSE stream, now or later. */
#ifndef MCPD_TRANSPORT_HTTP_H
#define MCPD_TRANSPORT_HTTP_H

#include <stddef.h>

#include <uv.h>

typedef struct http_transport http_transport;
typedef struct http_exchange http_exchange;

typedef enum http_method {
  HTTP_METHOD_POST,
  HTTP_METHOD_GET,
  HTTP_METHOD_DELETE,
  HTTP_METHOD_OTHER /* the owner answers 405 */
} http_method;

/* Events, on the loop thread. */
typedef struct http_transport_cb {
  /* A request to the endpoint passed the HTTP checks; for a POST `body`
   * (NUL-terminated) is the whole body.  The owner MUST answer it exactly
   * once, now or later, with http_exchange_respond() or
   * http_exchange_stream_open(). */
  void (*request)(void *arg, http_exchange *x, http_method method,
                  const char *body, size_t len);
  /* The exchange is over -- its answer was sent, or the client went away
   * (seen, at the latest, when a stream next writes).  `x` is freed right
   * after; it is reported only for exchanges handed up by `request`. */
  void (*closed)(void *arg, http_exchange *x);
  void *arg;
} http_transport_cb;

/* Listens on `listen`: "HOST:PORT" (an IPv4 address, "[IPv6]" or
 * "localhost"; port 0 picks a free one) or "unix:PATH".  `hosts` are the
 * names (without port) accepted in Host and Origin beside localhost,
 * 127.0.0.1 and [::1].  Returns NULL after logging why. */
http_transport *http_transport_new(uv_loop_t *loop, const char *listen,
                                   size_t max_body, const char *const *hosts,
                                   size_t n_hosts, const http_transport_cb *cb);
/* "http://HOST:PORT" (or "unix:PATH") actually bound; valid until close. */
const char *http_transport_address(const http_transport *t);
/* Stops accepting; unanswered requests get 503 and open streams end.
 * Answers already made are written (for at most 2 s; not at all with
 * `now`), then the transport stops, reports `closed` for each exchange
 * still open, frees itself and calls `closed_cb(arg)` (may be NULL) once
 * its handles are closed.  Called again with `now`, it stops waiting. */
void http_transport_close(http_transport *t, void (*closed_cb)(void *arg),
                          void *arg, int now);

/* A request header, case-insensitively, or NULL. */
const char *http_exchange_header(http_exchange *x, const char *name);
/* A decoded query-string argument, or NULL. */
const char *http_exchange_query(http_exchange *x, const char *name);
/* The request's path, without the query. */
const char *http_exchange_path(const http_exchange *x);
void http_exchange_set_data(http_exchange *x, void *data);
void *http_exchange_data(http_exchange *x);

/* Adds a response header to the answer still to come (at most 6). */
void http_exchange_add_header(http_exchange *x, const char *name,
                              const char *value);
/* Answers with one body (`content_type` may be NULL for none). */
void http_exchange_respond(http_exchange *x, unsigned status,
                           const char *content_type, const char *body,
                           size_t len);
/* Answers 200 with an open text/event-stream. */
void http_exchange_stream_open(http_exchange *x);
/* Whether the exchange was answered with an open stream. */
int http_exchange_is_stream(const http_exchange *x);
/* Queues bytes on the stream: the owner writes whole SSE events. */
void http_exchange_stream_write(http_exchange *x, const char *const *parts,
                                const size_t *lens, int n);
/* Ends the stream once what was sent is written. */
void http_exchange_stream_end(http_exchange *x);

#endif
