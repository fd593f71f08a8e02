/* SPDX-License-Identifier: MIT */
/* rpc_peer.c -- the outgoing side of a JSON-RPC peer: pending requests by
 * id, correlation of answers, timeouts, fail-all, the write queue.  See
 * rpc_peer.h. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "log.h"
#include "rpc_peer.h"
#include "utf8.h"

/* A timeout's timer: allocated apart from its entry, which may be freed
 * while the timer closes; it finds the entry again by id. */
typedef struct rpc_timer {
  uv_timer_t handle;
  rpc_peer *peer;
  uint64_t n;
  rpc_timeout_cb cb;
} rpc_timer;

#define FIRST_CAP 16

int rpc_peer_init(rpc_peer *p, uv_loop_t *loop, const char *prefix) {
  memset(p, 0, sizeof(*p));
  p->loop = loop;
  p->prefix = prefix;
  p->slots = calloc(FIRST_CAP, sizeof(*p->slots));
  if (p->slots == NULL)
    return -1;
  p->cap = FIRST_CAP;
  return 0;
}

static void free_handle_cb(uv_handle_t *h) {
  free(h);
}

static void timer_close(rpc_entry *e) {
  if (e->timer != NULL) {
    uv_close((uv_handle_t *)&e->timer->handle, free_handle_cb);
    e->timer = NULL;
  }
}

void rpc_peer_close(rpc_peer *p) {
  while (p->oldest != NULL)
    rpc_peer_forget(p, p->oldest);
  free(p->slots);
  p->slots = NULL;
  p->cap = 0;
  if (p->flush != NULL)
    uv_close((uv_handle_t *)p->flush, free_handle_cb);
  p->flush = NULL;
  p->stream = NULL;
  strbuf_free(&p->out);
}

void rpc_peer_restart_ids(rpc_peer *p) {
  if (p->count == 0)
    p->next = 0;
}

size_t rpc_peer_pending(const rpc_peer *p) {
  return p->count;
}

/* --- the table ---------------------------------------------------------- */

/* Ids are consecutive, so a multiplicative hash spreads them well. */
static size_t slot_of(const rpc_peer *p, uint64_t n) {
  return (size_t)((n * 0x9e3779b97f4a7c15ull) >> 17) & (p->cap - 1);
}

static void slot_put(rpc_peer *p, rpc_entry *e) {
  size_t i = slot_of(p, e->n);
  while (p->slots[i] != NULL)
    i = (i + 1) & (p->cap - 1);
  p->slots[i] = e;
}

static int grow(rpc_peer *p) {
  rpc_entry **old = p->slots;
  size_t old_cap = p->cap;
  rpc_entry **slots = calloc(old_cap * 2, sizeof(*slots));
  if (slots == NULL)
    return -1;
  p->slots = slots;
  p->cap = old_cap * 2;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i] != NULL)
      slot_put(p, old[i]);
  free(old);
  return 0;
}

rpc_entry *rpc_peer_find(const rpc_peer *p, uint64_t n) {
  if (p->cap == 0)
    return NULL;
  for (size_t i = slot_of(p, n); p->slots[i] != NULL;
       i = (i + 1) & (p->cap - 1))
    if (p->slots[i]->n == n)
      return p->slots[i];
  return NULL;
}

/* Takes `e` out of the table, shifting back the entries after it in its
 * run so that lookups need no tombstones. */
static void slot_remove(rpc_peer *p, const rpc_entry *e) {
  size_t i = slot_of(p, e->n), j, k;
  while (p->slots[i] != e)
    i = (i + 1) & (p->cap - 1);
  p->slots[i] = NULL;
  for (j = (i + 1) & (p->cap - 1); p->slots[j] != NULL;
       j = (j + 1) & (p->cap - 1)) {
    k = slot_of(p, p->slots[j]->n);
    /* Moves slots[j] into the hole when its home is not within (i, j]. */
    if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
      p->slots[i] = p->slots[j];
      p->slots[j] = NULL;
      i = j;
    }
  }
}

/* "<prefix><n>" into e->id, without printf: this runs for every
 * forwarded call. */
static void set_id_text(const rpc_peer *p, rpc_entry *e) {
  char tmp[24];
  size_t len, plen = p->prefix != NULL ? strlen(p->prefix) : 0;
  const char *num = strbuf_format_int64(tmp, (int64_t)e->n, &len);
  if (plen + len >= sizeof(e->id))
    plen = 0; /* a prefix that long is not one of ours */
  if (plen > 0)
    memcpy(e->id, p->prefix, plen);
  memcpy(e->id + plen, num, len);
  e->id[plen + len] = '\0';
}

int rpc_peer_add(rpc_peer *p, rpc_entry *e, rpc_reply_cb cb) {
  if (p->slots == NULL || ((p->count + 1) * 2 > p->cap && grow(p) != 0))
    return -1;
  e->n = ++p->next;
  set_id_text(p, e);
  e->cb = cb;
  e->peer = p;
  e->timer = NULL;
  e->newer = NULL;
  e->older = p->newest;
  if (p->newest != NULL)
    p->newest->newer = e;
  else
    p->oldest = e;
  p->newest = e;
  slot_put(p, e);
  p->count++;
  return 0;
}

void rpc_peer_forget(rpc_peer *p, rpc_entry *e) {
  if (e->peer != p)
    return;
  slot_remove(p, e);
  if (e->older != NULL)
    e->older->newer = e->newer;
  else
    p->oldest = e->newer;
  if (e->newer != NULL)
    e->newer->older = e->older;
  else
    p->newest = e->older;
  e->older = e->newer = NULL;
  e->peer = NULL;
  p->count--;
  timer_close(e);
}

/* The digits of a JSON number id (no sign, no leading zero, at most 19)
 * into *n; returns what follows them, or NULL. */
static const char *scan_number(const char *s, const char *end, uint64_t *n) {
  const char *start = s;
  uint64_t v = 0;
  for (; s < end && *s >= '0' && *s <= '9'; s++) {
    if (s - start >= 19)
      return NULL;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  if (s == start || (*start == '0' && s - start > 1))
    return NULL;
  *n = v;
  return s;
}

rpc_entry *rpc_peer_find_text(const rpc_peer *p, const char *id) {
  size_t plen = p->prefix != NULL ? strlen(p->prefix) : 0;
  uint64_t n;
  rpc_entry *e;
  if (id == NULL || strncmp(id, p->prefix ? p->prefix : "", plen) != 0 ||
      scan_number(id + plen, id + strlen(id), &n) != id + strlen(id))
    return NULL;
  e = rpc_peer_find(p, n);
  return e != NULL && strcmp(e->id, id) == 0 ? e : NULL;
}

rpc_entry *rpc_peer_find_json(const rpc_peer *p, json_object *id) {
  if (p->prefix != NULL)
    return json_object_is_type(id, json_type_string)
               ? rpc_peer_find_text(p, json_object_get_string(id))
               : NULL;
  if (!json_object_is_type(id, json_type_int) || json_object_get_int64(id) < 0)
    return NULL;
  return rpc_peer_find(p, (uint64_t)json_object_get_int64(id));
}

json_object *rpc_peer_id_json(const rpc_peer *p, const rpc_entry *e) {
  return p->prefix != NULL ? json_object_new_string(e->id)
                           : json_object_new_int64((int64_t)e->n);
}

/* --- settling ------------------------------------------------------------ */

static void settle(rpc_peer *p, rpc_entry *e, const rpc_reply *r) {
  rpc_reply_cb cb = e->cb;
  rpc_peer_forget(p, e);
  cb(e, r);
}

static void fail_one(rpc_peer *p, rpc_entry *e, int code, const char *message,
                     json_object *data) {
  json_object *error = json_object_new_object();
  rpc_reply r = {0};
  json_object_object_add(error, "code", json_object_new_int(code));
  json_object_object_add(error, "message", json_object_new_string(message));
  if (data != NULL)
    json_object_object_add(error, "data", json_object_get(data));
  r.error = error;
  r.local = 1;
  settle(p, e, &r);
  json_object_put(error);
}

void rpc_peer_cancel(rpc_peer *p, rpc_entry *e, int code, const char *message) {
  if (e->peer == p)
    fail_one(p, e, code, message, NULL);
}

void rpc_peer_fail_all(rpc_peer *p, int code, const char *message,
                       json_object *data) {
  /* Each callback may add or cancel others: take the oldest each time. */
  while (p->oldest != NULL)
    fail_one(p, p->oldest, code, message, data);
}

static void timeout_cb(uv_timer_t *t) {
  rpc_timer *tm = (rpc_timer *)t;
  rpc_entry *e = rpc_peer_find(tm->peer, tm->n);
  if (e != NULL && e->timer == tm)
    tm->cb(e);
}

int rpc_peer_set_timeout(rpc_peer *p, rpc_entry *e, uint64_t ms,
                         rpc_timeout_cb cb) {
  rpc_timer *tm;
  if (e->peer != p || p->loop == NULL)
    return -1;
  if (e->timer != NULL)
    return 0;
  if ((tm = malloc(sizeof(*tm))) == NULL)
    return -1;
  tm->peer = p;
  tm->n = e->n;
  tm->cb = cb;
  uv_timer_init(p->loop, &tm->handle);
  uv_timer_start(&tm->handle, timeout_cb, ms, 0);
  e->timer = tm;
  return 0;
}

/* --- answers ------------------------------------------------------------- */

static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
static const char result_key[] = ",\"result\":";

/* Where the result is in a response line written as mcpd writes them,
 * {"jsonrpc":"2.0","id":N,"result":{...}}, with *n its id, or NULL for any
 * other shape.  The result must be the last member, or a duplicate key
 * after it would be passed on beside it, and text jsonrpc_skip_value()
 * accepts: keys without escapes, which the splice of modern results
 * compares byte for byte. */
static const char *result_text(const char *line, size_t len, uint64_t *n,
                               size_t *rlen) {
  const char *end = line + len, *s, *start;

  if (len < sizeof(head) - 1 || memcmp(line, head, sizeof(head) - 1) != 0 ||
      (s = scan_number(line + sizeof(head) - 1, end, n)) == NULL)
    return NULL;
  if ((size_t)(end - s) < sizeof(result_key) ||
      memcmp(s, result_key, sizeof(result_key) - 1) != 0)
    return NULL;
  start = s + sizeof(result_key) - 1;
  if (*start != '{' || (s = jsonrpc_skip_value(start, end, 1)) == NULL ||
      s + 1 != end || *s != '}')
    return NULL;
  *rlen = (size_t)(s - start);
  return start;
}

int rpc_peer_line(rpc_peer *p, const char *line, size_t len) {
  rpc_reply r = {0};
  rpc_entry *e;
  uint64_t n = 0;

  /* Cheap checks first: the id is looked up before the result is
   * skipped over, so that other answers cost no scan. */
  if (p->prefix != NULL || len < sizeof(head) - 1 ||
      memcmp(line, head, sizeof(head) - 1) != 0 ||
      scan_number(line + sizeof(head) - 1, line + len, &n) == NULL ||
      (e = rpc_peer_find(p, n)) == NULL || !e->text_ok)
    return 0;
  if ((r.text = result_text(line, len, &n, &r.len)) == NULL ||
      !utf8_valid(line, len))
    return 0;
  settle(p, e, &r);
  return 1;
}

int rpc_peer_response(rpc_peer *p, json_object *msg, const char *line,
                      size_t len) {
  json_object *id;
  rpc_reply r = {0};
  rpc_entry *e;
  uint64_t n;

  if (!json_object_object_get_ex(msg, "id", &id) ||
      (e = rpc_peer_find_json(p, id)) == NULL)
    return -1;
  json_object_object_get_ex(msg, "result", &r.result);
  json_object_object_get_ex(msg, "error", &r.error);
  if (r.error == NULL && r.result != NULL && line != NULL)
    r.text = result_text(line, len, &n, &r.len);
  settle(p, e, &r);
  return 0;
}

/* --- the write queue ----------------------------------------------------- */

typedef struct rpc_write {
  uv_write_t req;
  rpc_peer *peer;
  char data[];
} rpc_write;

static void flush_out(rpc_peer *p);

static void write_done_cb(uv_write_t *req, int status) {
  rpc_write *w = (rpc_write *)req;
  rpc_peer *p = w->peer;
  (void)status;
  free(w);
  p->writing = 0;
  flush_out(p);
}

/* Writes what is queued: most of it at once with uv_try_write, the rest
 * with one uv_write of a copy. */
static void flush_out(rpc_peer *p) {
  uv_buf_t buf;
  rpc_write *w;
  int n;

  if (p->stream == NULL || uv_is_closing((uv_handle_t *)p->stream) ||
      p->writing || p->out.len == 0)
    return;
  buf = uv_buf_init(p->out.data, (unsigned)p->out.len);
  n = uv_try_write(p->stream, &buf, 1);
  if (n == (int)buf.len) {
    p->out.len = 0;
    return;
  }
  if (n < 0 && n != UV_EAGAIN) {
    p->out.len = 0; /* the stream is going; its owner hears how */
    return;
  }
  if (n < 0)
    n = 0;
  if ((w = malloc(sizeof(*w) + buf.len - (size_t)n)) == NULL) {
    log_error("%s", p->oom_message);
    p->out.len = 0;
    return;
  }
  memcpy(w->data, buf.base + n, buf.len - (size_t)n);
  buf = uv_buf_init(w->data, buf.len - (unsigned)n);
  p->out.len = 0;
  w->peer = p;
  p->writing = 1;
  if (uv_write(&w->req, p->stream, &buf, 1, write_done_cb) != 0) {
    p->writing = 0;
    free(w);
  }
}

static void flush_idle_cb(uv_idle_t *idle) {
  rpc_peer *p = idle->data;
  uv_idle_stop(idle);
  flush_out(p);
}

int rpc_peer_set_writer(rpc_peer *p, size_t early, const char *oom) {
  if (p->loop == NULL || (p->flush = malloc(sizeof(*p->flush))) == NULL)
    return -1;
  uv_idle_init(p->loop, p->flush);
  p->flush->data = p;
  p->write_early = early;
  snprintf(p->oom_message, sizeof(p->oom_message), "%s", oom);
  return 0;
}

void rpc_peer_set_stream(rpc_peer *p, uv_stream_t *stream) {
  p->stream = stream;
  if (stream == NULL)
    p->out.len = 0;
}

/* A message was appended from `mark` on: it leaves at the end of this
 * loop turn with whatever else the turn queues, in one write -- or now,
 * once write_early bytes wait.  Returns 0, or -1 when memory ran out,
 * after taking back what was appended of it: the messages queued before
 * it stay whole. */
static int queued(rpc_peer *p, size_t mark) {
  if (p->out.failed) {
    p->out.failed = 0;
    p->out.len = mark;
    log_error("%s", p->oom_message);
    return -1;
  }
  if (p->write_early > 0 && p->out.len >= p->write_early) {
    flush_out(p);
    if (p->out.len == 0)
      return 0;
  }
  if (p->flush != NULL)
    uv_idle_start(p->flush, flush_idle_cb);
  return 0;
}

static int send_text(rpc_peer *p, json_object *msg) {
  size_t len, mark = p->out.len;
  const char *text = jsonrpc_to_string(msg, &len);
  strbuf_append(&p->out, text, len);
  strbuf_append(&p->out, "\n", 1);
  return queued(p, mark);
}

void rpc_peer_send(rpc_peer *p, json_object *msg) {
  if (p->stream != NULL)
    send_text(p, msg);
  json_object_put(msg);
}

int rpc_peer_request(rpc_peer *p, rpc_entry *e, rpc_reply_cb cb,
                     const char *method, json_object *params) {
  json_object *msg;
  if (rpc_peer_add(p, e, cb) != 0) {
    json_object_put(params);
    return -1;
  }
  msg = json_object_new_object();
  json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
  json_object_object_add(msg, "id", rpc_peer_id_json(p, e));
  json_object_object_add(msg, "method", json_object_new_string(method));
  if (params != NULL)
    json_object_object_add(msg, "params", params);
  rpc_peer_send(p, msg);
  return 0;
}

int rpc_peer_request_text(rpc_peer *p, rpc_entry *e, rpc_reply_cb cb,
                          const char *method, const char *params, size_t len) {
  size_t mark = p->out.len;
  if (rpc_peer_add(p, e, cb) != 0)
    return -1;
  if (p->stream == NULL)
    return 0; /* dropped, as rpc_peer_send() drops */
  strbuf_puts(&p->out, head);
  if (p->prefix != NULL)
    strbuf_json_string(&p->out, e->id, strlen(e->id));
  else
    strbuf_puts(&p->out, e->id);
  strbuf_puts(&p->out, ",\"method\":");
  strbuf_json_string(&p->out, method, strlen(method));
  strbuf_puts(&p->out, ",\"params\":");
  strbuf_append(&p->out, params, len);
  strbuf_append(&p->out, "}\n", 2);
  if (queued(p, mark) != 0) {
    rpc_peer_forget(p, e);
    return -1;
  }
  return 0;
}
