/* SPDX-License-Identifier: MIT */
/* streamable_modern.c -- the 2026-07-28 era over HTTP: one POST, one
 * request.
 *
 * A POST whose request claims 2026-07-28 in params._meta belongs to no
 * session of the client's: it runs in a session of its own, opened for it
 * and closed with its exchange, so nothing of one request is seen by the
 * next, and any mcpd process behind a load balancer can serve it.  The
 * answer is one JSON body, with the HTTP status of its error code, unless
 * the request says something first (progress, a log line at its
 * logLevel): then the POST becomes an SSE stream of those notifications
 * and the response, without event ids, and ends.  A client that hangs up
 * cancels its request.  The rules themselves (statuses, which headers must
 * match what) are era.c's; this file applies them to exchanges. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "era.h"
#include "jsonrpc.h"
#include "strbuf.h"
#include "streamable_modern.h"

/* Modern requests in flight at once; more get 503. */
#define MAX_MODERN_POSTS 10000

/* A POST of the modern era: one request, no session of the client's.  It
 * runs in a session of its own that lives as long as the exchange, and
 * everything that session writes answers this POST. */
typedef struct mpost {
  exchange_owner owner; /* OWNER_MODERN */
  streamable_modern *m;
  session *session;
  http_exchange *x; /* NULL once the exchange is over */
  json_object *id;  /* the request's */
  int sse;          /* answered as a stream */
  int done;         /* the response went out */
  uint64_t last_byte;
  struct mpost *prev, *next;
} mpost;

static const char json_media[] = "application/json";

void streamable_respond_error(http_exchange *x, unsigned status,
                              json_object *id, int code, const char *message) {
  json_object *e = jsonrpc_error(id, code, message, NULL);
  size_t len;
  const char *text = jsonrpc_to_string(e, &len);
  http_exchange_respond(x, status, json_media, text, len);
  json_object_put(e);
}

/* request.header and era_header_fn: what the handler compares
 * (Mcp-Param-*), and the headers admit checks. */
static int modern_header(void *ctx, const char *name, strbuf *out) {
  mpost *p = ctx;
  out->len = 0;
  return p->x != NULL ? era_header_decode(http_exchange_header(p->x, name), out)
                      : 0;
}

/* session.admit: the headers a modern request must carry, checked after
 * its envelope and version and before its method, as the reference
 * orders them. */
static int modern_admit(void *ctx, request *r) {
  mpost *p = ctx;
  era_error err;

  if (p->x == NULL)
    return 0;
  r->header = modern_header;
  r->header_ctx = p;
  if (era_check_headers(modern_header, p, r->method, r->params, &err) != 0) {
    request_fail(r, err.code, err.message, err.data);
    return -1;
  }
  return 0;
}

static void mpost_sse(mpost *p, const char *const *parts, const size_t *lens,
                      int n) {
  static const char head[] = "event: message\ndata: ", tail[] = "\n\n";
  const char *t = head;
  size_t l = sizeof(head) - 1;

  http_exchange_stream_write(p->x, &t, &l, 1);
  http_exchange_stream_write(p->x, parts, lens, n);
  t = tail;
  l = sizeof(tail) - 1;
  http_exchange_stream_write(p->x, &t, &l, 1);
  p->last_byte = uv_now(p->m->loop);
}

/* session_write_fn of a modern POST's session: everything it writes
 * belongs to the one request. */
static void mpost_write(void *ctx, json_object *related, int answer, int code,
                        const char *const *parts, const size_t *lens, int n) {
  mpost *p = ctx;
  (void)related;

  if (p->x == NULL || p->done)
    return;
  if (answer) {
    p->done = 1;
    if (p->sse) {
      mpost_sse(p, parts, lens, n);
      http_exchange_stream_end(p->x);
    } else {
      strbuf b = {0};
      for (int i = 0; i < n; i++)
        strbuf_append(&b, parts[i], lens[i]);
      if (b.failed)
        streamable_respond_error(p->x, 500, NULL, JSONRPC_INTERNAL_ERROR,
                                 "out of memory");
      else
        http_exchange_respond(p->x, era_http_status(code), json_media, b.data,
                              b.len);
      strbuf_free(&b);
    }
    return;
  }
  /* Something before the response: from here on a stream, whose status
   * (200) no later error can change. */
  if (!p->sse) {
    http_exchange_stream_open(p->x);
    p->sse = 1;
  }
  mpost_sse(p, parts, lens, n);
}

/* Ends a modern POST: an unanswered request is cancelled as if the
 * client had sent notifications/cancelled, and its session closes (a
 * call still running finishes into nothing). */
static void mpost_free(mpost *p) {
  streamable_modern *m = p->m;

  if (p->prev)
    p->prev->next = p->next;
  else
    m->posts = p->next;
  if (p->next)
    p->next->prev = p->prev;
  m->n_posts--;
  if (p->x != NULL)
    http_exchange_set_data(p->x, NULL);
  p->x = NULL;
  if (!p->done && p->id != NULL) {
    json_object *params = json_object_new_object();
    json_object *note;
    json_object_object_add(params, "requestId", json_object_get(p->id));
    json_object_object_add(
        params, "reason",
        json_object_new_string("the client closed the connection"));
    note = jsonrpc_notification("notifications/cancelled", params);
    session_handle_json(p->session, note);
    json_object_put(note);
  }
  m->close(m->arg, p->session);
  json_object_put(p->id);
  free(p);
}

void streamable_modern_post(streamable_modern *m, http_exchange *x,
                            json_object *body) {
  era_error err;
  jsonrpc_msg msg;
  mpost *p;

  jsonrpc_classify(body, &msg);
  if (msg.kind == JSONRPC_KIND_INVALID) {
    char text[200];
    snprintf(text, sizeof(text), "Invalid Request: %s", msg.error);
    streamable_respond_error(x, 400, msg.id, JSONRPC_INVALID_REQUEST, text);
    return;
  }
  if (msg.kind != JSONRPC_KIND_REQUEST) {
    /* Nothing a notification could say has a place without a session:
     * cancellation is hanging up. */
    http_exchange_respond(x, 202, NULL, "", 0);
    return;
  }
  if (era_check_version_header(http_exchange_header(x, "MCP-Protocol-Version"),
                               msg.params, &err) != 0) {
    streamable_respond_error(x, era_http_status(err.code), msg.id, err.code,
                             err.message);
    json_object_put(err.data);
    return;
  }
  if (m->n_posts >= MAX_MODERN_POSTS || (p = calloc(1, sizeof(*p))) == NULL) {
    streamable_respond_error(x, 503, msg.id, JSONRPC_INTERNAL_ERROR,
                             "cannot take more requests now");
    return;
  }
  p->owner = OWNER_MODERN;
  p->m = m;
  p->x = x;
  p->id = json_object_get(msg.id);
  if ((p->session = m->open(m->arg, mpost_write, p)) == NULL) {
    json_object_put(p->id);
    free(p);
    streamable_respond_error(x, 503, msg.id, JSONRPC_INTERNAL_ERROR,
                             "cannot take more requests now");
    return;
  }
  p->session->modern_allowed = 1;
  p->session->admit = modern_admit;
  p->next = m->posts;
  if (m->posts)
    m->posts->prev = p;
  m->posts = p;
  m->n_posts++;
  http_exchange_set_data(x, p);
  session_handle_json(p->session, body);
}

void streamable_modern_closed(http_exchange *x) {
  mpost *p = http_exchange_data(x);
  p->x = NULL;
  mpost_free(p);
}

void streamable_modern_tick(streamable_modern *m, uint64_t now) {
  static const char keepalive[] = ":\n\n";

  for (mpost *p = m->posts; p; p = p->next)
    if (p->x != NULL && p->sse && !p->done &&
        now - p->last_byte >= STREAMABLE_KEEPALIVE_MS) {
      const char *t = keepalive;
      size_t n = sizeof(keepalive) - 1;
      http_exchange_stream_write(p->x, &t, &n, 1);
      p->last_byte = now;
    }
}

void streamable_modern_close(streamable_modern *m) {
  while (m->posts != NULL) {
    mpost *p = m->posts;
    if (p->x != NULL && !p->done) {
      if (p->sse)
        http_exchange_stream_end(p->x);
      else
        streamable_respond_error(p->x, 503, p->id, JSONRPC_CONNECTION_CLOSED,
                                 "shutting down");
    }
    mpost_free(p);
  }
}
