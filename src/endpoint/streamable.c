/* SPDX-License-Identifier: MIT */
/* streamable.c -- MCP over HTTP: the endpoint (which path, method and era
 * each request takes) and the sessions of the legacy revisions.
 *
 * Streamable HTTP (/mcp).  A client's session starts with a POSTed
 * `initialize` and is named by the Mcp-Session-Id we hand back.  Every
 * POST carrying a request opens a channel: the response to that request
 * ends it.  The answer goes back as one JSON body when it is ready while
 * the POST is still being handled, and otherwise as an SSE stream:
 *  - sessions of 2025-11-25 and later get the stream STREAM_AFTER_MS
 *    after the POST (or at once when the call sends something first),
 *    with a priming event (an id, `retry`, empty data), so that every
 *    stream is resumable from its start; an answer that comes sooner,
 *    a plugin's in its worker process say, is one JSON body;
 *  - older sessions keep the JSON answer unless the call sends something
 *    first (progress, a request to the client), which turns the POST into
 *    a stream.
 * Messages that belong to no request (list_changed, resource updates, a
 * plugin's own logs) go on the session's standalone stream, channel 0,
 * which a GET attaches to.
 *
 * Every channel keeps a bounded log of its events, with ids "<channel>-
 * <seq>".  A GET with Last-Event-ID re-attaches to the channel the id
 * names and replays what came after it; a channel whose connection went
 * away keeps logging until its response is in, so a client that lost the
 * connection (or that --sse-poll closed on purpose) loses nothing.
 *
 * The modern revision (2026-07-28) has no sessions: a POST whose request
 * claims it in params._meta (era_route_post decides) is served on its own
 * by streamable_modern.c, beside the sessions of legacy clients.
 *
 * HTTP+SSE (/sse, /messages; 2024-11-05).  GET /sse opens a session and
 * its one stream, whose first event names the URL to POST to; everything
 * the session writes goes on that stream, and when it closes the session
 * ends. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "era.h"
#include "jsonrpc.h"
#include "log.h"
#include "strbuf.h"
#include "streamable.h"
#include "streamable_modern.h"
#include "transport_http.h"

#define MCP_PATH "/mcp"
#define SSE_PATH "/sse"
#define MESSAGES_PATH "/messages"

/* Bytes of events kept per channel for replay; the oldest go first, but
 * the newest always stays. */
#define LOG_MAX ((size_t)1 << 20)
/* Channels whose connection went away, kept per session for a reconnect. */
#define DETACHED_MAX 32
/* A finished channel nobody came back for is dropped after this long. */
#define DETACHED_TTL_MS (5 * 60 * 1000)
#define TICK_MS 1000
/* The `retry` advice in priming events when --sse-poll does not set it. */
#define RETRY_MS 1000

typedef struct sse_event {
  struct sse_event *next;
  uint64_t seq;
  size_t len;
  char text[]; /* the whole event, blank line included */
} sse_event;

struct hsession;

typedef struct channel {
  exchange_owner owner;
  struct hsession *hs; /* NULL once the session ended */
  unsigned num;        /* 0: the session's standalone stream */
  json_object *id;     /* the request whose response ends it */
  http_exchange *x;    /* the connection on it now, or NULL */
  int sse;             /* answered as a stream (else a JSON answer is due) */
  int done;            /* its response is in: it ends once that is sent */
  int resumed;         /* a GET with Last-Event-ID carries it now */
  sse_event *head, *tail;
  size_t log_bytes;
  uint64_t seq;       /* of the newest event */
  uint64_t sent;      /* events up to this one went to a connection */
  uint64_t attached;  /* loop time the connection came */
  uint64_t last_byte; /* loop time of the last bytes on the connection */
  uint64_t detached;  /* loop time the connection went away */
  uint64_t waiting;   /* loop time its POST began to wait, or 0 */
  struct channel *prev, *next;
} channel;

typedef struct hsession {
  streamable *h;
  session *session;
  char id[80];
  int legacy;         /* HTTP+SSE: everything on the one stream */
  char *who;          /* the identity that opened it, with a token source */
  channel standalone; /* channel 0 */
  channel *channels;  /* request channels, newest first */
  unsigned next_num;
  uint64_t last_used;
  struct hsession *next;
} hsession;

struct streamable {
  uv_loop_t *loop;
  const http_settings *opts;
  streamable_cb cb;
  http_transport *http;
  auth *auth; /* NULL: no token source, no authorization */
  hsession *sessions;
  size_t n_sessions;
  streamable_modern modern; /* the modern POSTs in flight */
  /* Who the token of the request being handled speaks for. */
  char who[AUTH_WHO_SIZE];
  /* The exchange whose body is being handled now: where an answer that
   * relates to no request (a parse error) goes. */
  http_exchange *current;
  int current_answered;
  uv_timer_t tick;
  uv_timer_t stream_after; /* turns POSTs that wait into streams */
  json_tokener *tok;       /* for POST bodies */
  int refusing;
  int closing; /* the closes still to finish */
  void (*done)(void *arg);
  void *done_arg;
};

static const char json_media[] = "application/json";

/* How long an unanswered POST of a session that primes its streams waits
 * for its answer before it becomes a stream. */
#define STREAM_AFTER_MS 10

static void stream_after_cb(uv_timer_t *timer);

/* --- answers ------------------------------------------------------------ */

static void respond_error(http_exchange *x, unsigned status, int code,
                          const char *message) {
  streamable_respond_error(x, status, NULL, code, message);
}

/* Answers 200 with one JSON message given in pieces. */
static void respond_json(http_exchange *x, const char *const *parts,
                         const size_t *lens, int n) {
  strbuf b = {0};
  for (int i = 0; i < n; i++)
    strbuf_append(&b, parts[i], lens[i]);
  if (b.failed)
    respond_error(x, 500, JSONRPC_INTERNAL_ERROR, "out of memory");
  else
    http_exchange_respond(x, 200, json_media, b.data, b.len);
  strbuf_free(&b);
}

/* Whether the session's streams start with a priming event. */
static int primed(const hsession *hs) {
  return !hs->legacy && era_version_primes_streams(hs->session->version);
}

/* --- channels ----------------------------------------------------------- */

static uint64_t now_of(channel *c) {
  return uv_now(c->hs->h->loop);
}

static void write_raw(channel *c, const char *text, size_t len) {
  http_exchange_stream_write(c->x, &text, &len, 1);
  c->last_byte = now_of(c);
}

/* Writes the log from `after` on to the connection. */
static void replay(channel *c, uint64_t after) {
  for (sse_event *e = c->head; e; e = e->next)
    if (e->seq > after) {
      const char *t = e->text;
      http_exchange_stream_write(c->x, &t, &e->len, 1);
    }
  c->sent = c->seq;
  c->last_byte = now_of(c);
}

/* Answers the channel's exchange with an SSE stream; a session of
 * 2025-11-25 or later first gets a priming event, whose id makes the
 * stream resumable before anything was said on it. */
static void open_stream(channel *c) {
  http_exchange_stream_open(c->x);
  c->sse = 1;
  c->waiting = 0;
  c->attached = c->last_byte = now_of(c);
  if (primed(c->hs)) {
    const http_settings *o = c->hs->h->opts;
    char prime[96];
    int n = snprintf(
        prime, sizeof(prime), "id: %u-%llu\nretry: %llu\ndata: \n\n", c->num,
        (unsigned long long)c->seq,
        (unsigned long long)(o->sse_poll_ms ? o->sse_poll_ms : RETRY_MS));
    write_raw(c, prime, (size_t)n);
  }
}

static void log_drop_oldest(channel *c) {
  sse_event *e = c->head;
  c->head = e->next;
  if (c->head == NULL)
    c->tail = NULL;
  c->log_bytes -= e->len;
  free(e);
}

/* Adds one message to the channel as an event, and sends it if a
 * connection is on it. */
static void channel_event(channel *c, const char *const *parts,
                          const size_t *lens, int n) {
  size_t body = 0, len;
  char head[48];
  int hl;
  sse_event *e;

  for (int i = 0; i < n; i++)
    body += lens[i];
  if (c->hs->legacy)
    hl = snprintf(head, sizeof(head), "event: message\ndata: ");
  else
    hl = snprintf(head, sizeof(head),
                  "id: %u-%llu\nevent: message\ndata: ", c->num,
                  (unsigned long long)(c->seq + 1));
  len = (size_t)hl + body + 2;
  if ((e = malloc(sizeof(*e) + len)) == NULL) {
    log_error("HTTP session %.8s: an event of %zu bytes was dropped", c->hs->id,
              len);
    return;
  }
  e->next = NULL;
  e->seq = ++c->seq;
  e->len = len;
  memcpy(e->text, head, (size_t)hl);
  len = (size_t)hl;
  for (int i = 0; i < n; i++) {
    memcpy(e->text + len, parts[i], lens[i]);
    len += lens[i];
  }
  memcpy(e->text + len, "\n\n", 2);
  /* The newest event stays, however large (a big result). */
  while (c->head != NULL && c->log_bytes + e->len > LOG_MAX)
    log_drop_oldest(c);
  if (c->tail)
    c->tail->next = e;
  else
    c->head = e;
  c->tail = e;
  c->log_bytes += e->len;
  if (c->x != NULL && c->sse) {
    const char *t = e->text;
    http_exchange_stream_write(c->x, &t, &e->len, 1);
    c->sent = e->seq;
    c->last_byte = now_of(c);
  }
}

static void channel_clear(channel *c) {
  while (c->head != NULL)
    log_drop_oldest(c);
  json_object_put(c->id);
  c->id = NULL;
}

static void channel_unlink(channel *c) {
  hsession *hs = c->hs;
  if (hs == NULL || c->num == 0)
    return;
  if (c->prev)
    c->prev->next = c->next;
  else
    hs->channels = c->next;
  if (c->next)
    c->next->prev = c->prev;
  c->prev = c->next = NULL;
}

/* Frees a request channel; its connection (if any) forgets it. */
static void channel_free(channel *c) {
  channel_unlink(c);
  if (c->x != NULL)
    http_exchange_set_data(c->x, NULL);
  channel_clear(c);
  free(c);
}

static channel *channel_new(hsession *hs, http_exchange *x, json_object *id) {
  channel *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return NULL;
  c->hs = hs;
  c->num = ++hs->next_num;
  c->id = json_object_get(id);
  c->x = x;
  http_exchange_set_data(x, c);
  c->next = hs->channels;
  if (hs->channels)
    hs->channels->prev = c;
  hs->channels = c;
  return c;
}

/* Moves a connection onto `c`, replacing the one it had (a client that
 * reconnects after a silent drop). */
static void channel_attach(channel *c, http_exchange *x, uint64_t after) {
  if (c->x != NULL) {
    http_exchange_set_data(c->x, NULL);
    if (http_exchange_is_stream(c->x))
      http_exchange_stream_end(c->x);
    else
      respond_error(c->x, 409, JSONRPC_INVALID_REQUEST,
                    "Conflict: another connection took this stream");
  }
  c->x = x;
  c->resumed = 1;
  http_exchange_set_data(x, c);
  http_exchange_stream_open(x);
  c->sse = 1;
  c->attached = now_of(c);
  c->detached = 0;
  replay(c, after);
  if (c->done)
    http_exchange_stream_end(x);
}

/* --- sessions ----------------------------------------------------------- */

/* The session `id`, if the request's identity owns it: another client's
 * session is as unknown as an ended one. */
static hsession *session_find(streamable *h, const char *id) {
  for (hsession *hs = h->sessions; hs; hs = hs->next)
    if (strcmp(hs->id, id) == 0)
      return hs->who == NULL || strcmp(hs->who, h->who) == 0 ? hs : NULL;
  return NULL;
}

/* Routes what the session writes.  A response goes to its request's
 * channel; a message that relates to a request goes there too; the rest
 * goes to the standalone stream.  (session_write_fn) */
static void session_write(void *ctx, json_object *related, int answer, int code,
                          const char *const *parts, const size_t *lens, int n) {
  hsession *hs = ctx;
  streamable *h = hs->h;
  channel *c = NULL;

  if (hs->legacy) {
    channel_event(&hs->standalone, parts, lens, n);
    return;
  }
  if (related != NULL) {
    for (c = hs->channels; c; c = c->next)
      if (!c->done && c->id != NULL && json_object_equal(c->id, related))
        break;
  } else if (answer && h->current != NULL && !h->current_answered &&
             http_exchange_data(h->current) == NULL) {
    /* An error for input that never became a request: it answers the
     * POST that carried it. */
    h->current_answered = 1;
    respond_json(h->current, parts, lens, n);
    return;
  }
  if (c == NULL) {
    if (answer) {
      /* Its POST is gone and was not resumable: a response never goes on
       * the standalone stream. */
      log_debug("HTTP session %.8s: dropped a response whose POST closed",
                hs->id);
      return;
    }
    channel_event(&hs->standalone, parts, lens, n);
    return;
  }
  if (!c->sse) {
    if (c->x == NULL) {
      /* A JSON POST whose client went away. */
      if (answer)
        channel_free(c);
      return;
    }
    if (answer) {
      c->done = 1;
      respond_json(c->x, parts, lens, n);
      return;
    }
    open_stream(c);
  }
  channel_event(c, parts, lens, n);
  if (answer) {
    c->done = 1;
    if (c->x != NULL)
      http_exchange_stream_end(c->x);
  }
}

/* Seconds until one of the sessions `who` holds (every identity's, when
 * NULL) may expire, if nobody uses it: what Retry-After says when the
 * limit is reached.  Sessions in use count as the whole timeout. */
static unsigned retry_after(const streamable *h, const char *who) {
  uint64_t now = uv_now(h->loop), idle = h->opts->session_timeout_s * 1000;
  uint64_t best = idle;

  for (const hsession *hs = h->sessions; hs; hs = hs->next) {
    uint64_t end = hs->last_used + idle;
    if (who != NULL && (hs->who == NULL || strcmp(hs->who, who) != 0))
      continue;
    if (hs->legacy || hs->standalone.x != NULL ||
        hs->session->requests_in_flight > 0)
      continue;
    uint64_t left = end > now ? end - now : 0;
    if (left < best)
      best = left;
  }
  /* Expired sessions are swept on the next tick. */
  return (unsigned)(best / 1000) + 2;
}

/* Whether another session may open now; if not, refuses `x` with 503
 * (the server's limit) or 429 (the identity's share) and Retry-After,
 * under `id`.  One identity may hold a share of the limit only, so that
 * it can never lock the others out. */
static int session_room(streamable *h, http_exchange *x, json_object *id) {
  const http_settings *o = h->opts;
  size_t each = o->max_sessions_each  ? o->max_sessions_each
                : o->max_sessions / 4 ? o->max_sessions / 4
                                      : 1;
  char text[160], retry[24];
  unsigned status = 0;

  if (h->n_sessions >= o->max_sessions) {
    status = 503;
    snprintf(text, sizeof(text),
             "Server busy: %zu sessions are open (the limit)", h->n_sessions);
  } else if (h->auth != NULL) {
    size_t mine = 0;
    for (const hsession *hs = h->sessions; hs; hs = hs->next)
      mine += hs->who != NULL && strcmp(hs->who, h->who) == 0;
    if (mine >= each) {
      status = 429;
      snprintf(text, sizeof(text),
               "Too many sessions: this identity holds %zu (its limit); end "
               "some (DELETE) or retry later",
               mine);
    }
  }
  if (status == 0)
    return 1;
  snprintf(retry, sizeof(retry), "%u",
           retry_after(h, status == 429 ? h->who : NULL));
  http_exchange_add_header(x, "Retry-After", retry);
  streamable_respond_error(x, status, id, JSONRPC_SERVER_BUSY, text);
  return 0;
}

static hsession *hsession_new(streamable *h, int legacy) {
  unsigned char raw[16];
  const char *prefix = h->opts->session_prefix ? h->opts->session_prefix : "";
  hsession *hs;
  size_t pl = strlen(prefix);

  if (uv_random(NULL, NULL, raw, sizeof(raw), 0, NULL) != 0)
    return NULL;
  if ((hs = calloc(1, sizeof(*hs))) == NULL)
    return NULL;
  /* 128 random bits in hex after the operator's prefix (which routes the
   * session to this process behind a proxy): visible ASCII. */
  memcpy(hs->id, prefix, pl);
  for (size_t i = 0; i < sizeof(raw); i++)
    snprintf(hs->id + pl + 2 * i, 3, "%02x", raw[i]);
  hs->h = h;
  hs->legacy = legacy;
  if (h->auth != NULL && (hs->who = strdup(h->who)) == NULL) {
    free(hs);
    return NULL;
  }
  hs->standalone.hs = hs;
  hs->session = h->cb.open(h->cb.arg, session_write, hs);
  /* What outlives the session (its tasks) belongs to who opened it. */
  if (hs->session != NULL &&
      session_set_owner(hs->session, h->auth != NULL ? h->who : "") != 0) {
    h->cb.close(h->cb.arg, hs->session);
    hs->session = NULL;
  }
  if (hs->session == NULL) {
    free(hs->who);
    free(hs);
    return NULL;
  }
  hs->last_used = uv_now(h->loop);
  hs->next = h->sessions;
  h->sessions = hs;
  h->n_sessions++;
  return hs;
}

/* streamable_modern.open: a session for one modern POST, owned by the
 * identity its token speaks for, as a legacy session is. */
static session *modern_open(void *arg, session_write_fn write, void *ctx) {
  streamable *h = arg;
  session *s = h->cb.open(h->cb.arg, write, ctx);
  if (s != NULL && session_set_owner(s, h->auth != NULL ? h->who : "") != 0) {
    h->cb.close(h->cb.arg, s);
    return NULL;
  }
  return s;
}

static void modern_close(void *arg, session *s) {
  streamable *h = arg;
  h->cb.close(h->cb.arg, s);
}

int streamable_has_room(const streamable *h) {
  return h->n_sessions < h->opts->max_sessions;
}

size_t streamable_sse_open(const streamable *h) {
  size_t n = 0;
  for (const hsession *hs = h->sessions; hs; hs = hs->next) {
    n += hs->standalone.x != NULL;
    for (const channel *c = hs->channels; c; c = c->next)
      n += c->sse && c->x != NULL;
  }
  return n;
}

/* Ends a session: its streams end, its unanswered POSTs get 404. */
static void hsession_end(hsession *hs) {
  streamable *h = hs->h;
  hsession **pp = &h->sessions;

  while (*pp != hs)
    pp = &(*pp)->next;
  *pp = hs->next;
  h->n_sessions--;
  while (hs->channels != NULL) {
    channel *c = hs->channels;
    http_exchange *x = c->x;
    channel_free(c);
    if (x == NULL)
      continue;
    if (http_exchange_is_stream(x))
      http_exchange_stream_end(x);
    else
      respond_error(x, 404, JSONRPC_CONNECTION_CLOSED, "the session ended");
  }
  if (hs->standalone.x != NULL) {
    http_exchange_set_data(hs->standalone.x, NULL);
    http_exchange_stream_end(hs->standalone.x);
  }
  channel_clear(&hs->standalone);
  h->cb.close(h->cb.arg, hs->session);
  free(hs->who);
  free(hs);
}

/* --- requests ----------------------------------------------------------- */

/* What a POST body holds, as far as routing cares. */
typedef struct body_info {
  json_object *obj; /* the parsed body, owned */
  json_object *id;  /* the first request's id, borrowed, or NULL */
  int initialize;   /* it is an initialize request */
} body_info;

static void scan_message(json_object *m, body_info *bi) {
  json_object *method, *id;
  if (!json_object_is_type(m, json_type_object) ||
      !json_object_object_get_ex(m, "method", &method) ||
      !json_object_object_get_ex(m, "id", &id))
    return;
  if (bi->id == NULL && jsonrpc_valid_id(id))
    bi->id = id;
  if (jsonrpc_name(method) != NULL &&
      strcmp(json_object_get_string(method), "initialize") == 0)
    bi->initialize = 1;
}

/* Parses a POST body, once: the session gets the parsed message.
 * Answers 400 itself when it is not JSON-RPC's JSON. */
static int parse_body(streamable *h, http_exchange *x, const char *body,
                      size_t len, body_info *bi) {
  const char *why = "out of memory";
  char text[200];
  int rc;

  memset(bi, 0, sizeof(*bi));
  if ((rc = jsonrpc_parse(h->tok, body, len, &bi->obj, &why)) ==
      JSONRPC_INVALID_REQUEST) {
    /* Valid JSON that cannot be served: refused under its own id. */
    json_object *obj = jsonrpc_parse_unservable(h->tok, body, len), *id = NULL;
    int code;
    if (json_object_is_type(obj, json_type_array)) {
      /* A batch: the session refuses its unservable members alone and
       * serves the rest. */
      bi->obj = obj;
      for (size_t i = 0; i < json_object_array_length(obj); i++)
        scan_message(json_object_array_get_idx(obj, i), bi);
      bi->initialize = 0;
      return 0;
    }
    code = obj != NULL ? jsonrpc_unservable_code(obj, &id)
                       : JSONRPC_INVALID_REQUEST;
    snprintf(text, sizeof(text), "%s: %s",
             code == JSONRPC_INVALID_PARAMS ? "Invalid params"
                                            : "Invalid Request",
             why);
    if (code == 0)
      http_exchange_respond(x, 202, NULL, "", 0);
    else
      streamable_respond_error(x, 400, id, code, text);
    json_object_put(obj);
    return -1;
  }
  if (rc != 0) {
    snprintf(text, sizeof(text), "Parse error: %s", why);
    respond_error(x, 400, JSONRPC_PARSE_ERROR, text);
    return -1;
  }
  if (json_object_is_type(bi->obj, json_type_array)) {
    for (size_t i = 0; i < json_object_array_length(bi->obj); i++)
      scan_message(json_object_array_get_idx(bi->obj, i), bi);
    bi->initialize = 0; /* refused by the session inside a batch */
  } else {
    scan_message(bi->obj, bi);
  }
  return 0;
}

/* Whether an Accept header takes `type` ("application/json"), counting
 * the wildcards "* / *" and "application/ *" (without the spaces). */
static int accepts(const char *accept, const char *type) {
  const char *slash = strchr(type, '/');
  char major[32];
  if (accept == NULL)
    return 0;
  if (strstr(accept, type) != NULL || strstr(accept, "*/*") != NULL)
    return 1;
  snprintf(major, sizeof(major), "%.*s/*", (int)(slash - type), type);
  return strstr(accept, major) != NULL;
}

static void post_mcp(streamable *h, http_exchange *x, const char *body,
                     size_t len) {
  const char *sid = http_exchange_header(x, "Mcp-Session-Id");
  const char *type = http_exchange_header(x, "Content-Type");
  const char *accept = http_exchange_header(x, "Accept");
  const char *version = http_exchange_header(x, "MCP-Protocol-Version");
  body_info bi;
  hsession *hs;
  channel *c = NULL;
  era_error err;
  json_object *err_id;

  if (!accepts(accept, "application/json") ||
      !accepts(accept, "text/event-stream")) {
    respond_error(x, 406, JSONRPC_INVALID_REQUEST,
                  "Not Acceptable: Accept must list application/json and "
                  "text/event-stream");
    return;
  }
  if (type == NULL ||
      strncasecmp(type, json_media, sizeof(json_media) - 1) != 0 ||
      (type[sizeof(json_media) - 1] != '\0' &&
       type[sizeof(json_media) - 1] != ';' &&
       type[sizeof(json_media) - 1] != ' ')) {
    respond_error(x, 415, JSONRPC_INVALID_REQUEST,
                  "Unsupported Media Type: Content-Type must be "
                  "application/json");
    return;
  }
  if (parse_body(h, x, body, len, &bi) != 0)
    return;
  switch (era_route_post(sid != NULL, bi.obj, version, &err, &err_id)) {
  case ERA_ROUTE_MODERN:
    streamable_modern_post(&h->modern, x, bi.obj);
    goto out;
  case ERA_ROUTE_REFUSED:
    streamable_respond_error(x, era_http_status(err.code), err_id, err.code,
                             err.message);
    json_object_put(err.data);
    goto out;
  case ERA_ROUTE_LEGACY:
    break;
  }
  if (version != NULL && !era_is_legacy_version(version)) {
    respond_error(x, 400, JSONRPC_INVALID_REQUEST,
                  "Bad Request: unsupported MCP-Protocol-Version");
    goto out;
  }
  if (sid == NULL) {
    if (!bi.initialize) {
      respond_error(x, 400, JSONRPC_INVALID_REQUEST,
                    "Bad Request: Mcp-Session-Id header is required");
      goto out;
    }
    if (!session_room(h, x, bi.id))
      goto out;
    if ((hs = hsession_new(h, 0)) == NULL) {
      respond_error(x, 503, JSONRPC_INTERNAL_ERROR,
                    "cannot open a session now");
      goto out;
    }
    http_exchange_add_header(x, "Mcp-Session-Id", hs->id);
  } else if ((hs = session_find(h, sid)) == NULL || hs->legacy) {
    respond_error(x, 404, JSONRPC_INVALID_REQUEST, "Session not found");
    goto out;
  }
  hs->last_used = uv_now(h->loop);
  if (bi.id != NULL && (c = channel_new(hs, x, bi.id)) == NULL) {
    respond_error(x, 500, JSONRPC_INTERNAL_ERROR, "out of memory");
    goto out;
  }
  h->current = x;
  h->current_answered = 0;
  session_handle_json(hs->session, bi.obj);
  h->current = NULL;
  if (c == NULL) {
    /* Notifications and responses only: accepted, unless the session
     * answered with an error (bad JSON-RPC). */
    if (!h->current_answered)
      http_exchange_respond(x, 202, NULL, "", 0);
  } else if (!c->done && !c->sse && c->x == x && primed(hs)) {
    /* Not answered yet: a stream soon, resumable from its priming event,
     * unless the answer comes first. */
    c->waiting = uv_now(h->loop);
    if (!uv_is_active((uv_handle_t *)&h->stream_after))
      uv_timer_start(&h->stream_after, stream_after_cb, STREAM_AFTER_MS, 0);
  }
out:
  json_object_put(bi.obj);
}

/* The Streamable HTTP session a GET or DELETE names; NULL after answering
 * 400 (no Mcp-Session-Id) or 404 (none such, or not the caller's). */
static hsession *session_of(streamable *h, http_exchange *x) {
  const char *sid = http_exchange_header(x, "Mcp-Session-Id");
  hsession *hs;
  if (sid == NULL) {
    respond_error(x, 400, JSONRPC_INVALID_REQUEST,
                  "Bad Request: Mcp-Session-Id header is required");
    return NULL;
  }
  if ((hs = session_find(h, sid)) == NULL || hs->legacy) {
    respond_error(x, 404, JSONRPC_INVALID_REQUEST, "Session not found");
    return NULL;
  }
  return hs;
}

/* Parses a Last-Event-ID of ours, "<channel>-<seq>". */
static int parse_event_id(const char *s, unsigned *num, uint64_t *seq) {
  unsigned long long a, b;
  char tail;
  if (s == NULL || sscanf(s, "%llu-%llu%c", &a, &b, &tail) != 2 ||
      a > 0xffffffffu)
    return -1;
  *num = (unsigned)a;
  *seq = b;
  return 0;
}

static void get_mcp(streamable *h, http_exchange *x) {
  const char *last = http_exchange_header(x, "Last-Event-ID");
  hsession *hs;
  channel *c;
  unsigned num;
  uint64_t after;

  if (!accepts(http_exchange_header(x, "Accept"), "text/event-stream")) {
    respond_error(x, 406, JSONRPC_INVALID_REQUEST,
                  "Not Acceptable: GET needs Accept: text/event-stream");
    return;
  }
  if ((hs = session_of(h, x)) == NULL)
    return;
  hs->last_used = uv_now(h->loop);
  c = &hs->standalone;
  after = c->sent;
  if (parse_event_id(last, &num, &after) == 0 && num != 0) {
    /* Resuming a POST's stream: only that stream's events. */
    for (c = hs->channels; c; c = c->next)
      if (c->num == num)
        break;
    if (c == NULL) {
      respond_error(x, 404, JSONRPC_INVALID_REQUEST,
                    "Not Found: that stream is gone");
      return;
    }
  } else if (last == NULL) {
    after = c->sent; /* what was said while nobody listened */
  }
  channel_attach(c, x, after);
}

static void delete_mcp(streamable *h, http_exchange *x) {
  hsession *hs = session_of(h, x);
  if (hs == NULL)
    return;
  hsession_end(hs);
  http_exchange_respond(x, 200, NULL, "", 0);
}

/* GET /sse: a session of the HTTP+SSE transport and its stream. */
static void get_sse(streamable *h, http_exchange *x) {
  hsession *hs;
  char endpoint[160];
  int n;

  if (!session_room(h, x, NULL))
    return;
  if ((hs = hsession_new(h, 1)) == NULL) {
    respond_error(x, 503, JSONRPC_INTERNAL_ERROR, "cannot open a session now");
    return;
  }
  hs->standalone.x = x;
  http_exchange_set_data(x, &hs->standalone);
  http_exchange_stream_open(x);
  hs->standalone.sse = 1;
  hs->standalone.attached = uv_now(h->loop);
  n = snprintf(endpoint, sizeof(endpoint),
               "event: endpoint\ndata: " MESSAGES_PATH "?sessionId=%s\n\n",
               hs->id);
  write_raw(&hs->standalone, endpoint, (size_t)n);
}

/* POST /messages?sessionId=...: accepted; answers go on the stream. */
static void post_messages(streamable *h, http_exchange *x, const char *body,
                          size_t len) {
  const char *sid = http_exchange_query(x, "sessionId");
  hsession *hs;
  body_info bi;

  if (sid == NULL) {
    respond_error(x, 400, JSONRPC_INVALID_REQUEST,
                  "Bad Request: the sessionId parameter is required");
    return;
  }
  if ((hs = session_find(h, sid)) == NULL || !hs->legacy) {
    respond_error(x, 404, JSONRPC_INVALID_REQUEST, "Session not found");
    return;
  }
  if (parse_body(h, x, body, len, &bi) != 0)
    return;
  hs->last_used = uv_now(h->loop);
  http_exchange_respond(x, 202, "text/plain", "Accepted", 8);
  session_handle_json(hs->session, bi.obj);
  json_object_put(bi.obj);
}

/* With a token source: serves the protected-resource metadata (RFC 9728),
 * which needs no token, and answers 401 to a request without a valid
 * one.  Returns whether the request goes on. */
static int authorized(streamable *h, http_exchange *x, http_method method,
                      const char *path) {
  const char *why;
  char challenge[AUTH_CHALLENGE_SIZE];
  char message[128];

  if (auth_is_metadata_path(h->auth, path)) {
    size_t len;
    const char *doc = auth_metadata(h->auth, &len);
    if (method == HTTP_METHOD_GET) {
      http_exchange_respond(x, 200, json_media, doc, len);
    } else {
      http_exchange_add_header(x, "Allow", "GET");
      respond_error(x, 405, JSONRPC_INVALID_REQUEST, "Method Not Allowed");
    }
    return 0;
  }
  if (auth_verify_who(h->auth, http_exchange_header(x, "Authorization"), &why,
                      h->who, sizeof(h->who)) == 0)
    return 1;
  /* `why` is ours, never the token's text. */
  log_debug("HTTP: %s %s refused: %s",
            method == HTTP_METHOD_GET    ? "GET"
            : method == HTTP_METHOD_POST ? "POST"
                                         : "request",
            path, why);
  if (auth_challenge(h->auth, why, challenge, sizeof(challenge)) > 0)
    http_exchange_add_header(x, "WWW-Authenticate", challenge);
  snprintf(message, sizeof(message), "Unauthorized: %s", why);
  respond_error(x, 401, JSONRPC_INVALID_REQUEST, message);
  return 0;
}

/* http_transport_cb.request */
static void request_cb(void *arg, http_exchange *x, http_method method,
                       const char *body, size_t len) {
  streamable *h = arg;
  const char *path = http_exchange_path(x);
  const char *version = http_exchange_header(x, "MCP-Protocol-Version");

  /* Health needs no token and says nothing of anyone. */
  if (ops_serve(&h->cb.ops, x, method, path, OPS_HEALTH))
    return;
  if (h->refusing) {
    respond_error(x, 503, JSONRPC_CONNECTION_CLOSED, "shutting down");
    return;
  }
  if (h->auth != NULL && !authorized(h, x, method, path))
    return;
  if (h->opts->metrics && ops_serve(&h->cb.ops, x, method, path, OPS_METRICS))
    return;
  if (strcmp(path, MCP_PATH) == 0) {
    /* A POST's version header is judged once its era is known. */
    if (method != HTTP_METHOD_POST && version != NULL &&
        !era_is_legacy_version(version)) {
      respond_error(x, 400, JSONRPC_INVALID_REQUEST,
                    "Bad Request: unsupported MCP-Protocol-Version");
      return;
    }
    switch (method) {
    case HTTP_METHOD_POST:
      post_mcp(h, x, body, len);
      return;
    case HTTP_METHOD_GET:
      get_mcp(h, x);
      return;
    case HTTP_METHOD_DELETE:
      delete_mcp(h, x);
      return;
    default:
      http_exchange_add_header(x, "Allow", "GET, POST, DELETE");
      break;
    }
  } else if (strcmp(path, SSE_PATH) == 0) {
    if (method == HTTP_METHOD_GET) {
      get_sse(h, x);
      return;
    }
    http_exchange_add_header(x, "Allow", "GET");
  } else if (strcmp(path, MESSAGES_PATH) == 0) {
    if (method == HTTP_METHOD_POST) {
      post_messages(h, x, body, len);
      return;
    }
    http_exchange_add_header(x, "Allow", "POST");
  } else {
    respond_error(x, 404, JSONRPC_INVALID_REQUEST,
                  "Not Found: the MCP endpoint is " MCP_PATH);
    return;
  }
  respond_error(x, 405, JSONRPC_INVALID_REQUEST, "Method Not Allowed");
}

/* http_transport_cb.closed: a connection is over. */
static void closed_cb(void *arg, http_exchange *x) {
  channel *c = http_exchange_data(x);
  hsession *hs;
  (void)arg;
  if (c != NULL && c->owner == OWNER_MODERN) {
    streamable_modern_closed(x);
    return;
  }
  if (c == NULL || c->x != x)
    return;
  c->x = NULL;
  hs = c->hs;
  if (hs == NULL)
    return;
  if (c->num == 0) {
    if (hs->legacy)
      hsession_end(hs); /* HTTP+SSE cannot resume */
    return;
  }
  if (!c->sse || c->done) {
    channel_free(c);
    return;
  }
  /* The call goes on; its events wait for a GET with Last-Event-ID. */
  c->detached = uv_now(hs->h->loop);
  log_debug("HTTP session %.8s: stream %u lost its connection", hs->id, c->num);
}

/* --- time --------------------------------------------------------------- */

static void tick_session(streamable *h, hsession *hs, uint64_t now) {
  const http_settings *o = h->opts;
  static const char keepalive[] = ":\n\n";
  channel *c, *next;
  size_t detached = 0;

  if (hs->standalone.x != NULL &&
      now - hs->standalone.last_byte >= STREAMABLE_KEEPALIVE_MS)
    write_raw(&hs->standalone, keepalive, sizeof(keepalive) - 1);
  for (c = hs->channels; c; c = next) {
    next = c->next;
    if (c->x != NULL) {
      if (!c->sse || c->done)
        continue;
      if (o->sse_poll_ms > 0 && !c->resumed &&
          now - c->attached >= o->sse_poll_ms && primed(hs)) {
        /* Polling: the POST's connection ends, the stream does not; the
         * client comes back with Last-Event-ID after `retry`, and that
         * connection stays until the response. */
        http_exchange_stream_end(c->x);
      } else if (now - c->last_byte >= STREAMABLE_KEEPALIVE_MS) {
        write_raw(c, keepalive, sizeof(keepalive) - 1);
      }
      continue;
    }
    if (++detached > DETACHED_MAX ||
        (c->done && now - c->detached >= DETACHED_TTL_MS))
      channel_free(c);
  }
}

/* POSTs that waited STREAM_AFTER_MS become streams; the timer comes back
 * for the next one to. */
static void stream_after_cb(uv_timer_t *timer) {
  streamable *h = timer->data;
  uint64_t now = uv_now(h->loop), next = 0;

  for (hsession *hs = h->sessions; hs; hs = hs->next)
    for (channel *c = hs->channels; c; c = c->next) {
      if (c->waiting == 0)
        continue;
      if (c->sse || c->done || c->x == NULL) {
        c->waiting = 0;
      } else if (now - c->waiting >= STREAM_AFTER_MS) {
        open_stream(c);
      } else {
        uint64_t left = STREAM_AFTER_MS - (now - c->waiting);
        if (next == 0 || left < next)
          next = left;
      }
    }
  if (next != 0)
    uv_timer_start(timer, stream_after_cb, next, 0);
}

static void tick_cb(uv_timer_t *timer) {
  streamable *h = timer->data;
  uint64_t now = uv_now(h->loop);
  uint64_t idle = h->opts->session_timeout_s * 1000;
  hsession *hs, *next;

  streamable_modern_tick(&h->modern, now);
  for (hs = h->sessions; hs; hs = next) {
    next = hs->next;
    tick_session(h, hs, now);
    if (hs->legacy || hs->standalone.x != NULL ||
        hs->session->requests_in_flight > 0)
      continue; /* a client is listening, or waiting */
    if (now - hs->last_used >= idle) {
      log_debug("HTTP session %.8s expired", hs->id);
      hsession_end(hs);
    }
  }
}

/* --- the endpoint ------------------------------------------------------- */

/* Whether a --listen address stays on this machine. */
static int loopback_listen(const char *listen) {
  return strncmp(listen, "unix:", 5) == 0 || strncmp(listen, "127.", 4) == 0 ||
         strncmp(listen, "localhost:", 10) == 0 ||
         strncmp(listen, "[::1]:", 6) == 0;
}

streamable *streamable_new(uv_loop_t *loop, const http_settings *o,
                           const streamable_cb *cb) {
  http_transport_cb tcb = {request_cb, closed_cb, NULL};
  streamable *h;
  uint64_t tick;

  if (!loopback_listen(o->listen) && !o->allow_remote &&
      o->auth.auth_token_file == NULL && o->auth.auth_jwks == NULL) {
    log_error("--listen %s: not a loopback address, and nothing "
              "authenticates clients; give a token source (--auth-token-file, "
              "--auth-jwks) or --allow-remote if a proxy in front does",
              o->listen);
    return NULL;
  }
  if ((h = calloc(1, sizeof(*h))) == NULL) {
    log_error("out of memory");
    return NULL;
  }
  h->loop = loop;
  h->opts = o;
  h->cb = *cb;
  h->modern.loop = loop;
  h->modern.open = modern_open;
  h->modern.close = modern_close;
  h->modern.arg = h;
  if ((h->tok = json_tokener_new_ex(JSONRPC_MAX_DEPTH)) == NULL) {
    log_error("out of memory");
    free(h);
    return NULL;
  }
  tcb.arg = h;
  h->http = http_transport_new(loop, o->listen, o->max_message,
                               (const char *const *)o->allow_hosts,
                               o->n_allow_hosts, &tcb);
  if (h->http == NULL) {
    json_tokener_free(h->tok);
    free(h);
    return NULL;
  }
  uv_timer_init(loop, &h->tick);
  h->tick.data = h;
  uv_timer_init(loop, &h->stream_after);
  h->stream_after.data = h;
  {
    /* The resource URL clients see, unless --resource-url says it: the
     * address bound (a unix socket has none of its own). */
    const char *a = http_transport_address(h->http);
    char url[200];
    snprintf(url, sizeof(url), "%s" MCP_PATH,
             strncmp(a, "unix:", 5) ? a : "http://localhost");
    if (auth_new(&o->auth, url, &h->auth) != 0) {
      streamable_close(h, NULL, NULL, 1);
      return NULL;
    }
  }
  tick = TICK_MS;
  if (o->sse_poll_ms > 0 && o->sse_poll_ms / 4 < tick)
    tick = o->sse_poll_ms / 4 ? o->sse_poll_ms / 4 : 1;
  uv_timer_start(&h->tick, tick_cb, tick, tick);
  uv_unref((uv_handle_t *)&h->tick);
  {
    const char *a = http_transport_address(h->http);
    log_info("listening on %s%s", a, strncmp(a, "unix:", 5) ? MCP_PATH : "");
    if (h->auth != NULL)
      log_info("clients need a bearer token; metadata at %s",
               auth_metadata_url(h->auth));
  }
  return h;
}

void streamable_refuse(streamable *h) {
  if (h != NULL)
    h->refusing = 1;
}

/* One of the two closes (the tick timer, the transport) is over. */
static void closed_part(streamable *h) {
  void (*done)(void *) = h->done;
  void *arg = h->done_arg;
  if (--h->closing > 0)
    return;
  auth_free(h->auth);
  json_tokener_free(h->tok);
  free(h);
  if (done != NULL)
    done(arg);
}

static void tick_closed_cb(uv_handle_t *handle) {
  closed_part(handle->data);
}

static void transport_closed_cb(void *arg) {
  streamable *h = arg;
  h->http = NULL;
  closed_part(h);
}

void streamable_close(streamable *h, void (*done)(void *arg), void *arg,
                      int now) {
  if (h->closing > 0) {
    if (now && h->http != NULL)
      http_transport_close(h->http, NULL, NULL, 1);
    return;
  }
  h->refusing = 1;
  h->done = done;
  h->done_arg = arg;
  h->closing = 3;
  uv_close((uv_handle_t *)&h->tick, tick_closed_cb);
  uv_close((uv_handle_t *)&h->stream_after, tick_closed_cb);
  while (h->sessions != NULL)
    hsession_end(h->sessions);
  streamable_modern_close(&h->modern);
  http_transport_close(h->http, transport_closed_cb, h, now);
}
