/* SPDX-License-Identifier: MIT */
/* http_link.c -- a link to an upstream MCP server over HTTP: the
 * Streamable HTTP transport, with a fallback to the legacy HTTP+SSE one
 * (protocol 2024-11-05) for servers that speak only that.
 *
 * Every message sent is one POST, a transfer on the proxy loop's CURLM.
 * Its answer is nothing (202), one JSON body, or an SSE stream that
 * carries the request's response and, before it, whatever the server
 * sends while working on it (progress, server-to-client requests).  Once
 * the session is initialized a standalone GET stream carries what belongs
 * to no request; it is reopened when it ends.
 *
 * The first POST is the probe: while the initialize request is out,
 * whatever else the owner sends waits in `queue`.  When it is answered
 * 400, 404 or 405 the link turns to the legacy transport: a GET stream
 * whose "endpoint" event names where to POST, and every message from the
 * server on that stream.  There POSTs go one at a time, so that they
 * reach the server in the order they were sent.
 *
 * Nothing from the server reaches the owner from inside a libcurl
 * callback: the owner may send (and so add a transfer to the multi
 * handle) from its message callback, and libcurl refuses that within its
 * own callbacks.  The write callbacks parse and append to `inbox`;
 * done() and tick() deliver it, and a pending `closed` after it.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "../common/base64.h"
#include "../common/buf.h"
#include "link.h"

/* The largest SSE event, JSON body or error body read. */
#define HL_EVENT_MAX (16 * 1024 * 1024)
/* The largest non-2xx body kept to look for a JSON-RPC error in it, and
 * the most of any other body read before the transfer is dropped. */
#define HL_ERROR_BODY_MAX (64 * 1024)
#define HL_DISCARD_MAX (1024 * 1024)
#define HL_CONNECT_TIMEOUT_MS 10000
#define HL_DELETE_TIMEOUT_MS 1000
/* The standalone GET is reopened this long after it ends (or what the
 * server's "retry" field asks); after failures the wait doubles, up to
 * the maximum, so that a server that refuses it with something other than
 * 405 is not asked every second forever. */
#define HL_RETRY_MS 1000
#define HL_RETRY_MAX_MS 30000
/* Where a modern (2026-07-28) message names its protocol version. */
#define HL_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define HL_INTERNAL_ERROR -32603

/* --- small pieces --------------------------------------------------------- */

/* Appends to a buffer of plugins/common; -1 when out of memory or when
 * the total would pass `max`. */
static int bytes_add(struct pc_buf *b, const char *p, size_t n, size_t max) {
  if (n > max || b->len > max - n)
    return -1;
  pc_buf_append(b, p, n);
  return b->failed ? -1 : 0;
}

/* A formatted string (malloc), or NULL when out of memory. */
__attribute__((format(printf, 1, 2))) static char *format(const char *fmt,
                                                          ...) {
  va_list ap;
  char *s;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
    return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

/* Appends a copy of `line` to *list: 0, or -1 when out of memory (the
 * list is then unchanged, still the caller's to free). */
static int slist_add(struct curl_slist **list, const char *line) {
  struct curl_slist *l;

  if (line == NULL || (l = curl_slist_append(*list, line)) == NULL)
    return -1;
  *list = l;
  return 0;
}

/* The same for a line that was malloc'ed for it, which it frees. */
static int slist_take(struct curl_slist **list, char *line) {
  int rc = slist_add(list, line);

  free(line);
  return rc;
}

/* "Name: value" (malloc).  A value HTTP cannot carry as it is (a byte
 * outside printable ASCII, or a space or tab at either end, which HTTP
 * would strip) is sent as "=?base64?...?=" of its bytes, as the modern
 * protocol's headers allow; an empty one as "Name;", which is how libcurl
 * is told to send an empty header rather than drop it. */
static char *header_line(const char *name, const char *value, size_t len) {
  int plain = len == 0 || (value[0] != ' ' && value[0] != '\t' &&
                           value[len - 1] != ' ' && value[len - 1] != '\t');
  size_t i;
  char *b64, *line;

  for (i = 0; plain && i < len; i++)
    if ((unsigned char)value[i] < 0x20 || (unsigned char)value[i] > 0x7e)
      plain = 0;
  if (len == 0)
    return format("%s;", name);
  if (plain)
    return format("%s: %.*s", name, (int)len, value);
  if ((b64 = pc_base64_encode((const unsigned char *)value, len)) == NULL)
    return NULL;
  line = format("%s: =?base64?%s?=", name, b64);
  free(b64);
  return line;
}

/* Whether Content-Type `ct` is `type`, parameters aside. */
static int is_type(const char *ct, const char *type) {
  size_t n = strlen(type);

  if (ct == NULL)
    return 0;
  while (*ct == ' ' || *ct == '\t')
    ct++;
  return strncasecmp(ct, type, n) == 0 &&
         (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ' || ct[n] == '\t');
}

/* A JSON text of `len` bytes with nothing but whitespace after it, or
 * NULL. */
static json_object *parse_json(const char *s, size_t len) {
  json_tokener *tok = json_tokener_new_ex(PX_MAX_DEPTH);
  json_object *o;
  size_t end;

  if (tok == NULL || len > INT32_MAX) {
    if (tok != NULL)
      json_tokener_free(tok);
    return NULL;
  }
  o = json_tokener_parse_ex(tok, s, (int)len);
  if (json_tokener_get_error(tok) != json_tokener_success) {
    json_object_put(o);
    o = NULL;
  } else {
    for (end = json_tokener_get_parse_end(tok); end < len; end++)
      if (s[end] != ' ' && s[end] != '\t' && s[end] != '\r' && s[end] != '\n')
        break;
    if (end < len) {
      json_object_put(o);
      o = NULL;
    }
  }
  json_tokener_free(tok);
  return o;
}

/* The member `key` of `o` when `o` is an object and the member has `type`,
 * else NULL. */
static json_object *member(json_object *o, const char *key, json_type type) {
  json_object *v;

  if (o == NULL || !json_object_is_type(o, json_type_object) ||
      !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
    return NULL;
  return v;
}

/* The id of `msg` when it is a response (a result or an error, no
 * method), else NULL. */
static json_object *response_id(json_object *msg) {
  json_object *id;

  if (!json_object_is_type(msg, json_type_object) ||
      json_object_object_get_ex(msg, "method", NULL) ||
      (!json_object_object_get_ex(msg, "result", NULL) &&
       !json_object_object_get_ex(msg, "error", NULL)) ||
      !json_object_object_get_ex(msg, "id", &id) || id == NULL)
    return NULL;
  return id;
}

/* --- the link and its transfers ------------------------------------------- */

enum hl_mode {
  HL_FRESH,      /* nothing sent yet */
  HL_PROBING,    /* the initialize POST is out; the rest waits for it */
  HL_STREAMABLE, /* Streamable HTTP */
  HL_SSE_WAIT,   /* legacy: the SSE stream is opening, no endpoint yet */
  HL_SSE         /* legacy: POSTs go to the endpoint, one at a time */
};

enum xfer_kind {
  X_POST,      /* one message */
  X_GET,       /* the standalone GET stream (Streamable HTTP) */
  X_LEGACY_GET /* the legacy transport's SSE stream */
};

/* What is done with a response body. */
enum body_use {
  B_DISCARD, /* read and dropped */
  B_SSE,     /* parsed as an SSE stream as it arrives */
  B_JSON,    /* kept, parsed as messages at the end */
  B_ERROR    /* kept, looked at for a JSON-RPC error at the end */
};

/* An SSE parser's state (the WHATWG EventSource rules). */
struct sse {
  struct pc_buf line;  /* the line being read */
  struct pc_buf data;  /* the event's data lines, joined by "\n" */
  struct pc_buf event; /* the event's type, "" for "message" */
  char *last_id;       /* the last "id" field */
  int has_data;        /* a data line arrived for this event */
  int cr;              /* the last byte was a CR: a LF right after is part
                        * of the same line end */
  int first;           /* the first line is yet to come (it may have a BOM) */
};

struct http_link;

struct xfer {
  px_easy base; /* first: CURLOPT_PRIVATE points here */
  struct http_link *l;
  struct xfer *prev, *next; /* in l->running or l->queue */
  enum xfer_kind kind;
  CURL *easy;
  struct curl_slist *headers;

  /* A POST's message: its text, its id when it is a request (a copy),
   * and the headers it needs of its own (a modern message's). */
  char *body;
  size_t body_len;
  json_object *id;
  struct curl_slist *own;
  unsigned init : 1;         /* it is the initialize request */
  unsigned probe : 1;        /* it is the first POST */
  unsigned modern : 1;       /* a modern message: no session, own version */
  unsigned legacy : 1;       /* POSTed on the legacy transport */
  unsigned sent_session : 1; /* it carried Mcp-Session-Id */

  /* The response. */
  unsigned began : 1;     /* its status and type were looked at */
  unsigned answered : 1;  /* the response to `id` was delivered */
  unsigned streaming : 1; /* a GET got its 200 event stream */
  long status;
  enum body_use use;
  struct pc_buf resp; /* a B_JSON or B_ERROR body */
  size_t dropped;     /* bytes of a B_DISCARD body */
  struct sse sse;
  char *session;     /* its Mcp-Session-Id header */
  const char *error; /* why the write callback stopped it */
  char errbuf[CURL_ERROR_SIZE];
};

struct xlist {
  struct xfer *head, *tail;
};

/* A message read, waiting for delivery. */
struct inmsg {
  struct inmsg *next;
  json_object *msg;
  json_object *via;
};

struct http_link {
  px_link pub; /* first: a px_link * is a struct http_link * */
  CURLM *multi;
  char *url;             /* the configured URL, as libcurl normalised it */
  char *post_url;        /* the legacy endpoint; NULL: POST to `url` */
  char **config_headers; /* "Name: value" lines, NULL-terminated */

  enum hl_mode mode;
  struct xlist running; /* transfers on the multi handle */
  struct xlist queue;   /* POSTs not started yet */
  int posts_running;
  struct xfer *get; /* the GET stream of either transport, while open */

  char *session_id;
  int session_gone; /* a 404 said so: no DELETE */
  char *protocol_version;
  json_object *init_id; /* the initialize request's id, until answered */
  int init_answered;
  int initialized_sent;
  int reached; /* some POST was answered 2xx */
  long probe_status;

  /* The standalone GET: when to open it next (-1: not now). */
  int64_t get_at;
  int get_refused;
  int get_failures;
  long retry_ms;
  char *get_last_id;

  int wake; /* the queue may move: tick() soon */
  struct inmsg *inbox, *inbox_tail;
  char why[512]; /* closed's reason, once there is one */
  int closed;    /* closed was called */
};

static void list_append(struct xlist *list, struct xfer *x) {
  x->next = NULL;
  x->prev = list->tail;
  if (list->tail != NULL)
    list->tail->next = x;
  else
    list->head = x;
  list->tail = x;
}

static void list_prepend(struct xlist *list, struct xfer *x) {
  x->prev = NULL;
  x->next = list->head;
  if (list->head != NULL)
    list->head->prev = x;
  else
    list->tail = x;
  list->head = x;
}

static void list_remove(struct xlist *list, struct xfer *x) {
  if (x->prev != NULL)
    x->prev->next = x->next;
  else
    list->head = x->next;
  if (x->next != NULL)
    x->next->prev = x->prev;
  else
    list->tail = x->prev;
  x->prev = x->next = NULL;
}

/* Records why the link is gone; the first reason wins, and flush() tells
 * the owner once what was read before it has been delivered. */
__attribute__((format(printf, 2, 3))) static void
set_closed(struct http_link *l, const char *fmt, ...) {
  va_list ap;

  if (l->why[0] != '\0')
    return;
  va_start(ap, fmt);
  vsnprintf(l->why, sizeof(l->why), fmt, ap);
  va_end(ap);
  if (l->why[0] == '\0')
    snprintf(l->why, sizeof(l->why), "closed");
}

/* Forgets the response, and the easy handle (already off the multi). */
static void xfer_reset(struct xfer *x) {
  if (x->easy != NULL)
    curl_easy_cleanup(x->easy);
  x->easy = NULL;
  curl_slist_free_all(x->headers);
  x->headers = NULL;
  x->began = x->answered = x->streaming = x->sent_session = x->legacy = 0;
  x->status = 0;
  x->use = B_DISCARD;
  pc_buf_free(&x->resp);
  x->dropped = 0;
  pc_buf_free(&x->sse.line);
  pc_buf_free(&x->sse.data);
  pc_buf_free(&x->sse.event);
  free(x->sse.last_id);
  memset(&x->sse, 0, sizeof(x->sse));
  x->sse.first = 1;
  free(x->session);
  x->session = NULL;
  x->error = NULL;
  x->errbuf[0] = '\0';
}

static void xfer_free(struct xfer *x) {
  xfer_reset(x);
  curl_slist_free_all(x->own);
  free(x->body);
  json_object_put(x->id);
  free(x);
}

/* --- what arrives --------------------------------------------------------- */

/* Takes `msg` into the inbox.  `x` is the POST whose stream or body
 * carried it (NULL for a GET stream): its request id is the message's
 * `via`, and the response to it marks it answered. */
static void push(struct http_link *l, json_object *msg, struct xfer *x) {
  json_object *id = response_id(msg);
  struct inmsg *m = malloc(sizeof(*m));

  if (m == NULL) {
    /* Lost; a request left unanswered gets its error when its POST
     * ends. */
    json_object_put(msg);
    return;
  }
  if (id != NULL && x != NULL && x->id != NULL && json_object_equal(id, x->id))
    x->answered = 1;
  if (id != NULL && l->init_id != NULL && json_object_equal(id, l->init_id)) {
    json_object *v = member(member(msg, "result", json_type_object),
                            "protocolVersion", json_type_string);

    if (v != NULL) {
      free(l->protocol_version);
      l->protocol_version = strdup(json_object_get_string(v));
      l->init_answered = 1;
      /* The GET stream opens once the owner has also sent
       * notifications/initialized (it may already have). */
      if (l->initialized_sent && l->get_at < 0)
        l->get_at = px_now_ms();
    }
    json_object_put(l->init_id);
    l->init_id = NULL;
  }
  m->next = NULL;
  m->msg = msg;
  m->via = x != NULL ? json_object_get(x->id) : NULL;
  if (l->inbox_tail != NULL)
    l->inbox_tail->next = m;
  else
    l->inbox = m;
  l->inbox_tail = m;
}

/* A parsed body or event: one message, or a batch of them. */
static void push_parsed(struct http_link *l, json_object *o, struct xfer *x) {
  size_t i, n;

  if (json_object_is_type(o, json_type_object)) {
    push(l, o, x);
    return;
  }
  if (json_object_is_type(o, json_type_array))
    for (i = 0, n = json_object_array_length(o); i < n; i++) {
      json_object *e = json_object_array_get_idx(o, i);

      if (json_object_is_type(e, json_type_object))
        push(l, json_object_get(e), x);
    }
  json_object_put(o);
}

/* Adds member `key` = `v` (taken) to `o`; -1 when `v` is NULL (out of
 * memory) or cannot be added. */
static int add(json_object *o, const char *key, json_object *v) {
  if (v == NULL || json_object_object_add(o, key, v) != 0) {
    json_object_put(v);
    return -1;
  }
  return 0;
}

/* The error response the request of POST `x` gets when the server gave
 * none: "upstream HTTP: <text>".  Out of memory, it is lost. */
static void push_error(struct http_link *l, struct xfer *x, const char *text) {
  json_object *o = json_object_new_object(), *e = json_object_new_object();
  char message[600];

  snprintf(message, sizeof(message), "upstream HTTP: %s", text);
  if (o == NULL || e == NULL ||
      add(e, "code", json_object_new_int(HL_INTERNAL_ERROR)) != 0 ||
      add(e, "message", json_object_new_string(message)) != 0) {
    json_object_put(o);
    json_object_put(e);
    return;
  }
  if (add(o, "jsonrpc", json_object_new_string("2.0")) != 0 ||
      add(o, "id", json_object_get(x->id)) != 0 || add(o, "error", e) != 0) {
    json_object_put(o);
    return;
  }
  push(l, o, x);
}

/* Delivers the inbox, then closed when it is due.  Only from done() and
 * tick(): never inside a libcurl callback, never inside send().  The
 * owner may send from its callback, which only ever appends, so the
 * message is unlinked before the call. */
static void flush(struct http_link *l) {
  while (!l->closed && l->inbox != NULL) {
    struct inmsg *m = l->inbox;

    if ((l->inbox = m->next) == NULL)
      l->inbox_tail = NULL;
    l->pub.ev.message(l->pub.ev.arg, m->msg, m->via);
    json_object_put(m->msg);
    json_object_put(m->via);
    free(m);
  }
  if (!l->closed && l->why[0] != '\0') {
    l->closed = 1;
    l->pub.ev.closed(l->pub.ev.arg, l->why);
  }
}

/* --- server-sent events --------------------------------------------------- */

/* The legacy stream's "endpoint" event: the URL to POST to, relative to
 * the stream's.  It must stay on the same origin, so that the configured
 * headers (credentials, say) go nowhere else. */
static void take_endpoint(struct http_link *l, const char *data, size_t len) {
  CURLU *u, *base;
  char *url = NULL, *s1 = NULL, *s2 = NULL, *h1 = NULL, *h2 = NULL, *p1 = NULL,
       *p2 = NULL;
  int same;

  if (l->mode != HL_SSE_WAIT)
    return; /* only the first one counts */
  u = curl_url();
  base = curl_url();
  if (u == NULL || base == NULL) {
    set_closed(l, "SSE endpoint at %s: out of memory", l->url);
    goto out;
  }
  if (len == 0 || strlen(data) != len ||
      curl_url_set(base, CURLUPART_URL, l->url, 0) != CURLUE_OK ||
      curl_url_set(u, CURLUPART_URL, l->url, 0) != CURLUE_OK ||
      curl_url_set(u, CURLUPART_URL, data, 0) != CURLUE_OK ||
      curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK) {
    set_closed(l, "SSE endpoint \"%.200s\" at %s is not a usable URL", data,
               l->url);
    goto out;
  }
  same =
      curl_url_get(u, CURLUPART_SCHEME, &s1, 0) == CURLUE_OK &&
      curl_url_get(base, CURLUPART_SCHEME, &s2, 0) == CURLUE_OK &&
      curl_url_get(u, CURLUPART_HOST, &h1, 0) == CURLUE_OK &&
      curl_url_get(base, CURLUPART_HOST, &h2, 0) == CURLUE_OK &&
      curl_url_get(u, CURLUPART_PORT, &p1, CURLU_DEFAULT_PORT) == CURLUE_OK &&
      curl_url_get(base, CURLUPART_PORT, &p2, CURLU_DEFAULT_PORT) ==
          CURLUE_OK &&
      strcasecmp(s1, s2) == 0 && strcasecmp(h1, h2) == 0 && strcmp(p1, p2) == 0;
  if (!same) {
    set_closed(l, "SSE endpoint %.200s is not on the origin of %s", url,
               l->url);
    goto out;
  }
  if ((l->post_url = strdup(url)) == NULL) {
    set_closed(l, "SSE endpoint at %s: out of memory", l->url);
    goto out;
  }
  /* The held messages go from tick(): starting transfers is not allowed
   * inside the write callback this runs in. */
  l->mode = HL_SSE;
  l->wake = 1;
out:
  curl_free(url);
  curl_free(s1);
  curl_free(s2);
  curl_free(h1);
  curl_free(h2);
  curl_free(p1);
  curl_free(p2);
  curl_url_cleanup(u);
  curl_url_cleanup(base);
}

/* One whole event. */
static void sse_event(struct xfer *x, const char *type, const char *data,
                      size_t len) {
  json_object *o;

  if (strcmp(type, "endpoint") == 0) {
    if (x->kind == X_LEGACY_GET)
      take_endpoint(x->l, data, len);
    return;
  }
  /* Empty data is a server priming the stream for resumption; unknown
   * types and text that is not JSON carry nothing for the owner. */
  if (strcmp(type, "message") != 0 || len == 0 ||
      (o = parse_json(data, len)) == NULL)
    return;
  push_parsed(x->l, o, x->kind == X_POST ? x : NULL);
}

/* One line of the stream, its end taken off. */
static int sse_line(struct xfer *x) {
  struct sse *s = &x->sse;
  const char *line = s->line.data != NULL ? s->line.data : "", *colon, *value;
  size_t len = s->line.len, name_len, value_len;

  if (s->first) {
    s->first = 0;
    if (len >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
      line += 3;
      len -= 3;
    }
  }
  if (len == 0) {
    if (s->has_data)
      sse_event(x, s->event.len > 0 ? s->event.data : "message",
                s->data.data != NULL ? s->data.data : "", s->data.len);
    s->data.len = s->event.len = 0;
    s->has_data = 0;
    return 0;
  }
  if (line[0] == ':')
    return 0;
  colon = memchr(line, ':', len);
  name_len = colon != NULL ? (size_t)(colon - line) : len;
  value = colon != NULL ? colon + 1 : line + len;
  value_len = len - (size_t)(value - line);
  if (value_len > 0 && value[0] == ' ') {
    value++;
    value_len--;
  }
  if (name_len == 4 && memcmp(line, "data", 4) == 0) {
    if ((s->has_data && bytes_add(&s->data, "\n", 1, HL_EVENT_MAX) != 0) ||
        bytes_add(&s->data, value, value_len, HL_EVENT_MAX) != 0)
      return -1;
    s->has_data = 1;
  } else if (name_len == 5 && memcmp(line, "event", 5) == 0) {
    /* A type this long is none we know: "-" stands for it. */
    s->event.len = 0;
    if (bytes_add(&s->event, value_len <= 64 ? value : "-",
                  value_len <= 64 ? value_len : 1, 64) != 0)
      return -1;
  } else if (name_len == 2 && memcmp(line, "id", 2) == 0) {
    if (memchr(value, '\0', value_len) == NULL) {
      char *id = malloc(value_len + 1);

      if (id == NULL)
        return -1;
      memcpy(id, value, value_len);
      id[value_len] = '\0';
      free(s->last_id);
      s->last_id = id;
    }
  } else if (name_len == 5 && memcmp(line, "retry", 5) == 0) {
    long ms = 0;
    size_t i;

    for (i = 0; i < value_len && value[i] >= '0' && value[i] <= '9'; i++)
      if (ms <= HL_RETRY_MAX_MS)
        ms = ms * 10 + (value[i] - '0');
    /* Only the standalone stream is reopened by the link. */
    if (i == value_len && value_len > 0 && x->kind == X_GET)
      x->l->retry_ms = ms > HL_RETRY_MAX_MS ? HL_RETRY_MAX_MS : ms;
  }
  return 0;
}

/* Feeds bytes as they arrive; lines end in CRLF, LF or CR.  -1 with
 * x->error set when the stream must be dropped. */
static int sse_feed(struct xfer *x, const char *p, size_t n) {
  struct sse *s = &x->sse;
  size_t i = 0;

  while (i < n) {
    size_t k = i;

    if (s->cr) {
      s->cr = 0;
      if (p[i] == '\n') {
        i++;
        continue;
      }
    }
    while (k < n && p[k] != '\n' && p[k] != '\r')
      k++;
    /* The line and the data before it are one event. */
    if (s->data.len > HL_EVENT_MAX ||
        bytes_add(&s->line, p + i, k - i, HL_EVENT_MAX - s->data.len) != 0) {
      x->error = "an SSE event over 16 MiB (or out of memory)";
      return -1;
    }
    if (k == n)
      break; /* the line goes on in the next piece */
    s->cr = p[k] == '\r';
    i = k + 1;
    if (sse_line(x) != 0) {
      x->error = "an SSE event over 16 MiB (or out of memory)";
      return -1;
    }
    s->line.len = 0;
  }
  return 0;
}

/* --- responses ------------------------------------------------------------ */

/* A session id is visible ASCII (the spec's rule); anything else would
 * not survive being sent back as a header. */
static int session_id_ok(const char *s) {
  if (*s == '\0')
    return 0;
  for (; *s != '\0'; s++)
    if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e)
      return 0;
  return 1;
}

/* Looks at the status and type once, before the body's first byte (or at
 * the end when there is no body), and decides what the body is for. */
static void begin_body(struct xfer *x) {
  struct http_link *l = x->l;
  char *ct = NULL;
  int ok, sse, json;

  x->began = 1;
  curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
  curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ct);
  ok = x->status >= 200 && x->status < 300;
  sse = is_type(ct, "text/event-stream");
  json = is_type(ct, "application/json");
  x->use = B_DISCARD;
  if (x->kind != X_POST) {
    if (x->status == 200 && sse) {
      x->use = B_SSE;
      x->streaming = 1;
    } else if (!ok && json) {
      x->use = B_ERROR; /* it may say the session is gone */
    }
    return;
  }
  /* Before the body: a response on an SSE stream is delivered at once,
   * and the owner's next message needs the session id. */
  if (x->init && !x->legacy && ok && x->session != NULL &&
      l->session_id == NULL && session_id_ok(x->session)) {
    l->session_id = x->session;
    x->session = NULL;
  }
  if (x->legacy)
    return; /* its answer comes on the stream */
  if (ok && sse)
    x->use = B_SSE;
  else if (ok && json)
    x->use = B_JSON;
  else if (!ok && json)
    x->use = B_ERROR; /* a request's error, or a session refused */
}

static size_t write_cb(char *p, size_t size, size_t n, void *arg) {
  struct xfer *x = arg;
  size_t len = size * n;

  if (!x->began)
    begin_body(x);
  switch (x->use) {
  case B_SSE:
    if (sse_feed(x, p, len) != 0)
      return 0;
    break;
  case B_JSON:
    if (bytes_add(&x->resp, p, len, HL_EVENT_MAX) != 0) {
      x->error = "a JSON body over 16 MiB (or out of memory)";
      return 0;
    }
    break;
  case B_ERROR:
    /* Only a short error body can be a JSON-RPC error worth quoting. */
    if (bytes_add(&x->resp, p, len, HL_ERROR_BODY_MAX) != 0)
      x->use = B_DISCARD;
    break;
  case B_DISCARD:
    if ((x->dropped += len) > HL_DISCARD_MAX) {
      x->error = "an unexpected body over 1 MiB";
      return 0;
    }
    break;
  }
  return len;
}

/* Keeps the Mcp-Session-Id of the initialize POST; the header block of
 * each response (a 100 Continue's, say) starts afresh. */
static size_t header_cb(char *p, size_t size, size_t n, void *arg) {
  static const char name[] = "mcp-session-id:";
  struct xfer *x = arg;
  size_t len = size * n, k = sizeof(name) - 1;

  if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {
    free(x->session);
    x->session = NULL;
  } else if (x->init && len > k && strncasecmp(p, name, k) == 0) {
    const char *v = p + k, *end = p + len;

    while (v < end && (*v == ' ' || *v == '\t'))
      v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' ||
                       end[-1] == '\t'))
      end--;
    free(x->session);
    if ((x->session = malloc((size_t)(end - v) + 1)) != NULL) {
      memcpy(x->session, v, (size_t)(end - v));
      x->session[end - v] = '\0';
    }
  }
  return len;
}

/* --- starting transfers --------------------------------------------------- */

static void xfer_done_cb(px_easy *e, CURLcode rc);

/* A new easy handle for `x` with what every transfer of the link sets,
 * and the headers every request carries.  0 or -1. */
static int easy_setup(struct http_link *l, struct xfer *x, const char *url,
                      const char *accept) {
  CURLcode rc = CURLE_OK;
  char **h;

  x->base.done = xfer_done_cb;
  x->l = l;
  if ((x->easy = curl_easy_init()) == NULL)
    return -1;
  /* libcurl's option errors are all nonzero, so one test covers them. */
  rc |= curl_easy_setopt(x->easy, CURLOPT_URL, url);
  rc |= curl_easy_setopt(x->easy, CURLOPT_NOSIGNAL, 1L);
  rc |= curl_easy_setopt(x->easy, CURLOPT_PRIVATE, (void *)&x->base);
  rc |= curl_easy_setopt(x->easy, CURLOPT_PROTOCOLS_STR, "http,https");
  rc |= curl_easy_setopt(x->easy, CURLOPT_CONNECTTIMEOUT_MS,
                         (long)HL_CONNECT_TIMEOUT_MS);
  rc |= curl_easy_setopt(x->easy, CURLOPT_TCP_KEEPALIVE, 1L);
  rc |= curl_easy_setopt(x->easy, CURLOPT_FOLLOWLOCATION, 0L);
  rc |= curl_easy_setopt(x->easy, CURLOPT_ERRORBUFFER, x->errbuf);
  rc |= curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, write_cb);
  rc |= curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, x);
  rc |= curl_easy_setopt(x->easy, CURLOPT_HEADERFUNCTION, header_cb);
  rc |= curl_easy_setopt(x->easy, CURLOPT_HEADERDATA, x);
  if (rc != CURLE_OK || slist_add(&x->headers, accept) != 0)
    return -1;
  for (h = l->config_headers; *h != NULL; h++)
    if (slist_add(&x->headers, *h) != 0)
      return -1;
  return 0;
}

/* Puts `x`, set up, on the multi handle. */
static int xfer_add(struct http_link *l, struct xfer *x) {
  if (curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->headers) != CURLE_OK ||
      curl_multi_add_handle(l->multi, x->easy) != CURLM_OK)
    return -1;
  list_append(&l->running, x);
  return 0;
}

/* Starts POST `x`.  0, or -1 (out of memory) with `x` untouched but for
 * its response state. */
static int post_start(struct http_link *l, struct xfer *x) {
  const char *url = l->post_url != NULL ? l->post_url : l->url;
  struct curl_slist *h;
  CURLcode rc = CURLE_OK;

  if (easy_setup(l, x, url, "Accept: application/json, text/event-stream") !=
          0 ||
      slist_add(&x->headers, "Content-Type: application/json") != 0 ||
      /* No "Expect: 100-continue" wait for a large message. */
      slist_add(&x->headers, "Expect:") != 0)
    goto fail;
  x->legacy = l->mode == HL_SSE;
  if (!x->modern && l->session_id != NULL) {
    if (slist_take(&x->headers, header_line("Mcp-Session-Id", l->session_id,
                                            strlen(l->session_id))) != 0)
      goto fail;
    x->sent_session = 1;
  }
  if (!x->modern && l->protocol_version != NULL &&
      slist_take(&x->headers,
                 header_line("MCP-Protocol-Version", l->protocol_version,
                             strlen(l->protocol_version))) != 0)
    goto fail;
  for (h = x->own; h != NULL; h = h->next)
    if (slist_add(&x->headers, h->data) != 0)
      goto fail;
  rc |= curl_easy_setopt(x->easy, CURLOPT_POST, 1L);
  rc |= curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, x->body);
  rc |= curl_easy_setopt(x->easy, CURLOPT_POSTFIELDSIZE_LARGE,
                         (curl_off_t)x->body_len);
  if (rc != CURLE_OK || xfer_add(l, x) != 0)
    goto fail;
  l->posts_running++;
  return 0;
fail:
  xfer_reset(x);
  return -1;
}

/* Opens the GET stream of `kind`.  0 or -1. */
static int get_start(struct http_link *l, enum xfer_kind kind) {
  struct xfer *x = calloc(1, sizeof(*x));

  if (x == NULL)
    return -1;
  x->kind = kind;
  x->sse.first = 1;
  if (easy_setup(l, x, l->url, "Accept: text/event-stream") != 0 ||
      curl_easy_setopt(x->easy, CURLOPT_HTTPGET, 1L) != CURLE_OK)
    goto fail;
  if (kind == X_GET) {
    if (l->session_id != NULL) {
      if (slist_take(&x->headers, header_line("Mcp-Session-Id", l->session_id,
                                              strlen(l->session_id))) != 0)
        goto fail;
      x->sent_session = 1;
    }
    if (l->protocol_version != NULL &&
        slist_take(&x->headers,
                   header_line("MCP-Protocol-Version", l->protocol_version,
                               strlen(l->protocol_version))) != 0)
      goto fail;
    if (l->get_last_id != NULL &&
        slist_take(&x->headers, format("Last-Event-ID: %s", l->get_last_id)) !=
            0)
      goto fail;
  }
  if (xfer_add(l, x) != 0)
    goto fail;
  l->get = x;
  return 0;
fail:
  xfer_free(x);
  return -1;
}

/* Starts what the queue holds, as far as the mode allows: everything on
 * Streamable HTTP, one at a time on the legacy transport, nothing while
 * the probe is out or the endpoint unknown.  Out of memory, a request
 * gets its error and a notification is lost. */
static void pump(struct http_link *l) {
  l->wake = 0;
  while (l->queue.head != NULL && l->why[0] == '\0' &&
         (l->mode == HL_STREAMABLE ||
          (l->mode == HL_SSE && l->posts_running == 0))) {
    struct xfer *x = l->queue.head;

    list_remove(&l->queue, x);
    if (post_start(l, x) != 0) {
      if (x->id != NULL)
        push_error(l, x, "cannot send: out of memory");
      xfer_free(x);
    }
  }
}

/* --- finished transfers --------------------------------------------------- */

/* Why a transfer failed, for a message. */
static void failure_text(const struct xfer *x, CURLcode rc, char *out,
                         size_t n) {
  if (x->error != NULL)
    snprintf(out, n, "%s", x->error);
  else if (rc != CURLE_OK)
    snprintf(out, n, "%s",
             x->errbuf[0] != '\0' ? x->errbuf : curl_easy_strerror(rc));
  else
    snprintf(out, n, "status %ld", x->status);
}

/* A non-2xx answer to a request: the body's own JSON-RPC error when it
 * answers this request, else one made up, quoting the body's message. */
static void post_error_status(struct http_link *l, struct xfer *x) {
  json_object *o = x->use == B_ERROR && x->resp.len > 0
                       ? parse_json(x->resp.data, x->resp.len)
                       : NULL;
  json_object *id = o != NULL ? response_id(o) : NULL;
  json_object *m =
      member(member(o, "error", json_type_object), "message", json_type_string);
  char text[400];

  if (id != NULL && member(o, "error", json_type_object) != NULL &&
      json_object_equal(id, x->id)) {
    push(l, o, x);
    return;
  }
  if (m != NULL)
    snprintf(text, sizeof(text), "status %ld: %.300s", x->status,
             json_object_get_string(m));
  else
    snprintf(text, sizeof(text), "status %ld", x->status);
  json_object_put(o);
  push_error(l, x, text);
}

/* The initialize POST was refused the way a legacy-only server refuses
 * it: hold it again, first in the queue, and open the SSE stream. */
static void fall_back(struct http_link *l, struct xfer *x) {
  l->probe_status = x->status;
  l->mode = HL_SSE_WAIT;
  xfer_reset(x);
  x->probe = 0;
  list_prepend(&l->queue, x);
  if (get_start(l, X_LEGACY_GET) != 0)
    set_closed(l, "cannot open the SSE stream of %s: out of memory", l->url);
}

/* A POST ended.  Returns 1 when `x` was kept (held again), else 0. */
/* The server no longer knows our session.  The transport says 404; the
 * official SDKs' servers answer a session they do not know (after their
 * own restart, say) with 400 and a message naming the session, so that
 * counts too: either way the owner starts a new session. */
static int session_lost(const struct xfer *x) {
  static const char word[] = "session";
  if (!x->sent_session)
    return 0;
  if (x->status == 404)
    return 1;
  if (x->status != 400 || x->resp.data == NULL)
    return 0;
  for (size_t i = 0; i + sizeof(word) - 1 <= x->resp.len; i++)
    if (strncasecmp(x->resp.data + i, word, sizeof(word) - 1) == 0)
      return 1;
  return 0;
}

/* Whether a refused POST's body is a JSON-RPC error: the server speaks
 * MCP at this URL (one that speaks only 2026-07-28 refuses initialize so),
 * so the legacy transport is not the answer. */
static int jsonrpc_error_body(const struct xfer *x) {
  json_object *o, *e;
  int yes;
  if (x->use != B_ERROR || x->resp.len == 0 ||
      (o = parse_json(x->resp.data, x->resp.len)) == NULL)
    return 0;
  yes = json_object_is_type(o, json_type_object) &&
        json_object_object_get_ex(o, "error", &e) &&
        json_object_is_type(e, json_type_object);
  json_object_put(o);
  return yes;
}

static int post_done(struct http_link *l, struct xfer *x, CURLcode rc) {
  int ok = rc == CURLE_OK, good;
  char why[CURL_ERROR_SIZE + 64];

  l->posts_running--;
  good = ok && x->status >= 200 && x->status < 300;
  failure_text(x, rc, why, sizeof(why));
  if (x->probe) {
    /* No status at all: nothing answered at that address. */
    if (!ok && x->status == 0 && !l->reached) {
      set_closed(l, "cannot reach %s: %s", l->url, why);
      return 0;
    }
    if (ok && l->session_id == NULL &&
        (x->status == 400 || x->status == 404 || x->status == 405) &&
        !jsonrpc_error_body(x)) {
      fall_back(l, x);
      return 1;
    }
    l->mode = HL_STREAMABLE;
  }
  if (good)
    l->reached = 1;
  if (x->legacy) {
    /* Its answer comes on the stream, unless the POST was refused. */
    if (x->id != NULL && !good)
      push_error(l, x, why);
    return 0;
  }
  if (ok && x->use == B_JSON && x->resp.len > 0) {
    json_object *o = parse_json(x->resp.data, x->resp.len);

    if (o != NULL)
      push_parsed(l, o, x);
  }
  if (ok && session_lost(x)) {
    l->session_gone = 1;
    set_closed(l, "session expired (HTTP %ld)", x->status);
  }
  if (x->id == NULL || x->answered)
    return 0;
  if (!ok)
    push_error(l, x, why);
  else if (!good)
    post_error_status(l, x);
  else if (x->status == 202 || x->status == 204)
    ; /* accepted: a server may answer on the GET stream */
  else if (x->use == B_SSE)
    push_error(l, x, "stream ended before the response");
  else if (x->use == B_JSON)
    push_error(l, x, "the JSON body held no response to the request");
  else
    push_error(l, x, "a 2xx answer that is neither JSON nor an event stream");
  return 0;
}

/* The standalone GET stream ended: reopened later unless the server does
 * not offer one (405) or the session is gone. */
static void get_done(struct http_link *l, struct xfer *x, CURLcode rc) {
  int64_t delay;

  (void)rc;
  if (x->sse.last_id != NULL) {
    free(l->get_last_id);
    l->get_last_id = x->sse.last_id;
    x->sse.last_id = NULL;
  }
  if (x->status == 405) {
    l->get_refused = 1;
    return;
  }
  if (session_lost(x)) {
    l->session_gone = 1;
    set_closed(l, "session expired (HTTP %ld)", x->status);
    return;
  }
  if (x->streaming)
    l->get_failures = 0;
  else if (l->get_failures < 16)
    l->get_failures++;
  delay = l->retry_ms;
  if (l->get_failures > 1)
    delay <<= l->get_failures - 1;
  if (delay > HL_RETRY_MAX_MS)
    delay = HL_RETRY_MAX_MS;
  l->get_at = px_now_ms() + delay;
}

/* The legacy stream ended: with it the link, whose every message came on
 * it. */
static void legacy_get_done(struct http_link *l, struct xfer *x, CURLcode rc) {
  char why[CURL_ERROR_SIZE + 64];
  char *ct = NULL;

  if (x->streaming) {
    if (rc == CURLE_OK) {
      set_closed(l, "SSE stream ended");
    } else {
      failure_text(x, rc, why, sizeof(why));
      set_closed(l, "SSE stream ended: %s", why);
    }
    return;
  }
  if (rc != CURLE_OK)
    failure_text(x, rc, why, sizeof(why));
  else {
    curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ct);
    snprintf(why, sizeof(why), "status %ld, Content-Type %.100s", x->status,
             ct != NULL ? ct : "none");
  }
  set_closed(l,
             "neither Streamable HTTP nor SSE at %s: POST got status %ld, "
             "GET got %s",
             l->url, l->probe_status, why);
}

/* The loop's call for every transfer of the link that ended. */
static void xfer_done_cb(px_easy *e, CURLcode rc) {
  struct xfer *x = (struct xfer *)e;
  struct http_link *l = x->l;
  int kept = 0;

  curl_multi_remove_handle(l->multi, x->easy);
  list_remove(&l->running, x);
  if (!x->began)
    begin_body(x);
  switch (x->kind) {
  case X_POST:
    kept = post_done(l, x, rc);
    break;
  case X_GET:
    l->get = NULL;
    get_done(l, x, rc);
    break;
  case X_LEGACY_GET:
    l->get = NULL;
    legacy_get_done(l, x, rc);
    break;
  }
  if (!kept)
    xfer_free(x);
  pump(l);
  flush(l);
}

/* --- the ops -------------------------------------------------------------- */

static const struct {
  const char *method;
  const char *param;
} name_params[] = {
    /* What a modern request names in Mcp-Name, for routing by header. */
    {"tools/call", "name"},
    {"prompts/get", "name"},
    {"resources/read", "uri"},
    {"tasks/get", "taskId"},
    {"tasks/update", "taskId"},
    {"tasks/cancel", "taskId"},
    {NULL, NULL},
};

/* The headers of a modern message's own, into x->own: its version, its
 * method and what it names.  0 or -1. */
static int modern_headers(struct xfer *x, const char *method,
                          json_object *params, json_object *version) {
  json_object *v;
  size_t i;

  if (slist_take(&x->own, header_line("MCP-Protocol-Version",
                                      json_object_get_string(version),
                                      json_object_get_string_len(version))) !=
          0 ||
      slist_take(&x->own, header_line("Mcp-Method", method, strlen(method))) !=
          0)
    return -1;
  for (i = 0; name_params[i].method != NULL; i++)
    if (strcmp(method, name_params[i].method) == 0) {
      if ((v = member(params, name_params[i].param, json_type_string)) !=
              NULL &&
          slist_take(&x->own, header_line("Mcp-Name", json_object_get_string(v),
                                          json_object_get_string_len(v))) != 0)
        return -1;
      break;
    }
  return 0;
}

/* A POST for `msg`, not started.  NULL when out of memory. */
static struct xfer *post_new(json_object *msg) {
  struct xfer *x = calloc(1, sizeof(*x));
  json_object *m = member(msg, "method", json_type_string), *id = NULL;
  json_object *params = member(msg, "params", json_type_object);
  json_object *version = member(member(params, "_meta", json_type_object),
                                HL_META_VERSION, json_type_string);
  const char *text;

  if (x == NULL)
    return NULL;
  x->kind = X_POST;
  x->sse.first = 1;
  text = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN);
  if (text == NULL || (x->body = strdup(text)) == NULL)
    goto fail;
  x->body_len = strlen(x->body);
  if (m != NULL && json_object_object_get_ex(msg, "id", &id) && id != NULL &&
      json_object_deep_copy(id, &x->id, NULL) != 0)
    goto fail;
  x->init =
      x->id != NULL && strcmp(json_object_get_string(m), "initialize") == 0;
  if (m != NULL && version != NULL) {
    x->modern = 1;
    if (modern_headers(x, json_object_get_string(m), params, version) != 0)
      goto fail;
  }
  return x;
fail:
  xfer_free(x);
  return NULL;
}

static int hl_send(px_link *pl, json_object *msg) {
  struct http_link *l = (struct http_link *)pl;
  json_object *m = member(msg, "method", json_type_string);
  struct xfer *x;
  int new_init = 0;

  if (l->why[0] != '\0' || l->closed || (x = post_new(msg)) == NULL)
    return -1;
  /* Its response carries the protocol version. */
  if (x->init && l->init_id == NULL) {
    if (json_object_deep_copy(x->id, &l->init_id, NULL) != 0) {
      l->init_id = NULL;
      xfer_free(x);
      return -1;
    }
    new_init = 1;
  }
  if (l->mode == HL_FRESH) {
    /* Only an initialize can tell the transports apart: a modern
     * client's first message is a request like any other. */
    l->mode = x->init ? HL_PROBING : HL_STREAMABLE;
    x->probe = x->init;
  }
  if (x->probe || (l->queue.head == NULL &&
                   (l->mode == HL_STREAMABLE ||
                    (l->mode == HL_SSE && l->posts_running == 0)))) {
    if (post_start(l, x) != 0) {
      if (x->probe)
        l->mode = HL_FRESH;
      if (new_init) {
        json_object_put(l->init_id);
        l->init_id = NULL;
      }
      xfer_free(x);
      return -1;
    }
  } else {
    list_append(&l->queue, x);
    l->wake = 1;
  }
  if (m != NULL &&
      strcmp(json_object_get_string(m), "notifications/initialized") == 0) {
    l->initialized_sent = 1;
    if (l->init_answered && l->get_at < 0)
      l->get_at = px_now_ms();
  }
  return 0;
}

/* An HTTP link has no descriptor of its own: libcurl's sockets are
 * waited on by curl_multi_poll() itself. */
static size_t hl_want(px_link *pl, struct curl_waitfd *fds, size_t room) {
  (void)pl;
  (void)fds;
  (void)room;
  return 0;
}

static void hl_ready(px_link *pl, const struct curl_waitfd *fds, size_t n) {
  (void)pl;
  (void)fds;
  (void)n;
}

static int64_t hl_deadline(px_link *pl) {
  struct http_link *l = (struct http_link *)pl;

  if (l->closed)
    return -1;
  if (l->inbox != NULL || l->why[0] != '\0' || l->wake)
    return px_now_ms();
  return l->get_at;
}

static void hl_tick(px_link *pl, int64_t now) {
  struct http_link *l = (struct http_link *)pl;

  if (l->closed)
    return;
  pump(l);
  if (l->get_at >= 0 && now >= l->get_at) {
    l->get_at = -1;
    /* Only for a Streamable HTTP session (the GET would say nothing to a
     * modern server), once initialized. */
    if (l->mode == HL_STREAMABLE && l->init_answered && !l->get_refused &&
        l->get == NULL && l->why[0] == '\0' && get_start(l, X_GET) != 0)
      l->get_at = now + HL_RETRY_MS;
  }
  flush(l);
}

static size_t write_nothing_cb(char *p, size_t size, size_t n, void *arg) {
  (void)p;
  (void)arg;
  return size * n;
}

/* Ends the session on the server, best effort, for at most a second. */
static void delete_session(struct http_link *l) {
  struct curl_slist *h = NULL;
  CURL *e = curl_easy_init();
  char **c;
  int ok = e != NULL;

  ok = ok && slist_take(&h, header_line("Mcp-Session-Id", l->session_id,
                                        strlen(l->session_id))) == 0;
  if (ok && l->protocol_version != NULL)
    ok = slist_take(&h, header_line("MCP-Protocol-Version", l->protocol_version,
                                    strlen(l->protocol_version))) == 0;
  for (c = l->config_headers; ok && *c != NULL; c++)
    ok = slist_add(&h, *c) == 0;
  if (ok) {
    CURLcode rc = CURLE_OK;

    rc |= curl_easy_setopt(e, CURLOPT_URL, l->url);
    rc |= curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
    rc |= curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    rc |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    rc |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    rc |= curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)HL_DELETE_TIMEOUT_MS);
    /* The body is not wanted (libcurl would write it to stdout). */
    rc |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_nothing_cb);
    if (rc == CURLE_OK)
      (void)curl_easy_perform(e);
  }
  curl_slist_free_all(h);
  if (e != NULL)
    curl_easy_cleanup(e);
}

static void hl_close(px_link *pl) {
  struct http_link *l = (struct http_link *)pl;
  struct xfer *x;
  struct inmsg *m;
  char **c;

  while ((x = l->running.head) != NULL) {
    list_remove(&l->running, x);
    curl_multi_remove_handle(l->multi, x->easy);
    xfer_free(x);
  }
  while ((x = l->queue.head) != NULL) {
    list_remove(&l->queue, x);
    xfer_free(x);
  }
  if (l->session_id != NULL && !l->session_gone)
    delete_session(l);
  while ((m = l->inbox) != NULL) {
    l->inbox = m->next;
    json_object_put(m->msg);
    json_object_put(m->via);
    free(m);
  }
  for (c = l->config_headers; c != NULL && *c != NULL; c++)
    free(*c);
  free(l->config_headers);
  json_object_put(l->init_id);
  free(l->url);
  free(l->post_url);
  free(l->session_id);
  free(l->protocol_version);
  free(l->get_last_id);
  free(l);
}

static const px_link_ops http_link_ops = {
    hl_send, hl_want, hl_ready, hl_deadline, hl_tick, hl_close,
};

/* --- opening -------------------------------------------------------------- */

/* Headers the transport sets itself, which configuration may not. */
static const char *const reserved_headers[] = {
    "Accept",     "Content-Type", "Content-Length", "Transfer-Encoding",
    "Host",       "Expect",       "Mcp-Session-Id", "MCP-Protocol-Version",
    "Mcp-Method", "Mcp-Name",     "Last-Event-ID",  NULL,
};

/* Whether `s` is an HTTP field name (RFC 9110 token). */
static int token_ok(const char *s) {
  if (*s == '\0')
    return 0;
  for (; *s != '\0'; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9') || strchr("!#$%&'*+-.^_`|~", *s) != NULL))
      return 0;
  return 1;
}

/* The configured headers as lines, NULL-terminated, into l; 0, or -1 with
 * `err` set. */
static int take_headers(struct http_link *l, json_object *headers, char *err,
                        size_t errlen) {
  size_t n = 0, i;

  if (headers != NULL && !json_object_is_type(headers, json_type_object)) {
    snprintf(err, errlen, "headers: not an object");
    return -1;
  }
  if (headers != NULL)
    n = (size_t)json_object_object_length(headers);
  if ((l->config_headers = calloc(n + 1, sizeof(char *))) == NULL) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  if (headers == NULL)
    return 0;
  i = 0;
  json_object_object_foreach(headers, name, value) {
    const char *v;
    size_t len, k;

    if (!json_object_is_type(value, json_type_string)) {
      snprintf(err, errlen, "header \"%.100s\": not a string", name);
      return -1;
    }
    if (!token_ok(name)) {
      snprintf(err, errlen, "header \"%.100s\": not a valid header name", name);
      return -1;
    }
    for (k = 0; reserved_headers[k] != NULL; k++)
      if (strcasecmp(name, reserved_headers[k]) == 0) {
        snprintf(err, errlen, "header \"%s\": set by the transport itself",
                 name);
        return -1;
      }
    v = json_object_get_string(value);
    len = (size_t)json_object_get_string_len(value);
    if (strlen(v) != len || strpbrk(v, "\r\n") != NULL) {
      snprintf(err, errlen,
               "header \"%.100s\": its value holds a line break or NUL", name);
      return -1;
    }
    /* Sent as configured (a token, say), never encoded. */
    l->config_headers[i] =
        len == 0 ? format("%s;", name) : format("%s: %s", name, v);
    if (l->config_headers[i++] == NULL) {
      snprintf(err, errlen, "out of memory");
      return -1;
    }
  }
  return 0;
}

px_link *http_link_open(CURLM *multi, const char *url, json_object *headers,
                        const px_link_events *ev, char *err, size_t errlen) {
  struct http_link *l = calloc(1, sizeof(*l));
  CURLU *u = curl_url();
  char *scheme = NULL, *norm = NULL;

  if (l == NULL || u == NULL) {
    snprintf(err, errlen, "out of memory");
    goto fail;
  }
  l->pub.ops = &http_link_ops;
  l->pub.ev = *ev;
  l->multi = multi;
  l->mode = HL_FRESH;
  l->get_at = -1;
  l->retry_ms = HL_RETRY_MS;
  if (url == NULL ||
      curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) !=
          CURLUE_OK ||
      curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
      (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) ||
      curl_url_get(u, CURLUPART_URL, &norm, 0) != CURLUE_OK) {
    snprintf(err, errlen, "url \"%.200s\": not an http or https URL",
             url != NULL ? url : "");
    goto fail;
  }
  if ((l->url = strdup(norm)) == NULL) {
    snprintf(err, errlen, "out of memory");
    goto fail;
  }
  if (take_headers(l, headers, err, errlen) != 0)
    goto fail;
  curl_free(scheme);
  curl_free(norm);
  curl_url_cleanup(u);
  return &l->pub;
fail:
  curl_free(scheme);
  curl_free(norm);
  curl_url_cleanup(u);
  if (l != NULL) {
    if (l->pub.ops != NULL)
      hl_close(&l->pub);
    else
      free(l);
  }
  return NULL;
}
