/* transport_http.h -- an HTTP endpoint on the libuv loop, for Streamable
 * HTTP.
 *
 * libmicrohttpd parses HTTP; this module runs it on mcpd's loop and keeps
 * to the HTTP rules that need no MCP: the one endpoint path, the methods
 * it takes (405 otherwise), Host and Origin limited to loopback names
 * (403 otherwise, against DNS rebinding) and the body size limit (413).
 * Everything else -- sessions, protocol versions, which message goes on
 * which stream -- belongs to the owner, who gets each exchange (one HTTP
 * request) with its whole body through a callback and answers it with a
 * single body or with an SSE stream, now or later. */
#ifndef MCPD_TRANSPORT_HTTP_H
#define MCPD_TRANSPORT_HTTP_H

#include <stddef.h>

#include <uv.h>

typedef struct http_transport http_transport;
typedef struct http_exchange http_exchange;

typedef enum http_method {
  HTTP_METHOD_POST,
  HTTP_METHOD_GET,
  HTTP_METHOD_DELETE
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
 * "localhost"; port 0 picks a free one) or "unix:PATH".  Returns NULL
 * after logging why.  The address bound is logged at info level as
 * "listening on http://HOST:PORT/mcp" (or "unix:PATH"). */
http_transport *http_transport_new(uv_loop_t *loop, const char *listen,
                                   size_t max_body,
                                   const http_transport_cb *cb);
/* The URL (or unix:PATH) actually bound; valid until close. */
const char *http_transport_address(const http_transport *t);
/* Ends every exchange (open streams end, unanswered requests get 503),
 * stops listening and frees the transport once its handles are closed;
 * `closed` is reported for each exchange still open. */
void http_transport_close(http_transport *t);

/* A request header, case-insensitively, or NULL. */
const char *http_exchange_header(http_exchange *x, const char *name);
void http_exchange_set_data(http_exchange *x, void *data);
void *http_exchange_data(http_exchange *x);

/* Adds a response header to the answer still to come (at most 4). */
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
/* Sends one SSE event "event: message\ndata: <pieces>\n\n" on the stream.
 * The pieces MUST hold no newline (JSON text as mcpd writes it has none). */
void http_exchange_stream_send(http_exchange *x, const char *const *parts,
                               const size_t *lens, int n);
/* Ends the stream once what was sent is written. */
void http_exchange_stream_end(http_exchange *x);

#endif
