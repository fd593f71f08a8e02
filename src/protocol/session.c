/* SPDX-License-Identifier: MIT */
/* session.c -- one MCP conversation: framing up to dispatch, and the rule
 * that every request gets exactly one response. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "log.h"
#include "metrics.h"
#include "rpc_peer.h"
#include "session.h"
#include "strbuf.h"
#include "utf8.h"

/* A batch collects the responses of its requests and is written as one
 * array when the last of them is answered. */
typedef struct batch {
  session *session;
  json_object *related; /* the id of its first request, or NULL */
  json_object *responses;
  size_t pending; /* requests not yet answered, +1 while dispatching */
} batch;

/* The one way out: every byte a client receives is valid UTF-8.  Input
 * was checked before parsing, but text from plugins (a description, a
 * result) and error messages quoting input cut to fit a buffer may not be;
 * such bytes become U+FFFD here, whatever path built the message.  Bit i
 * of `trusted` marks parts[i] as known to be valid already. */
static void write_out(session *s, json_object *related, int answer, int code,
                      const char *const *parts, const size_t *lens, int n,
                      unsigned trusted) {
  size_t total = 0, off = 0, len;
  char *joined, *fixed;
  const char *text;
  int valid = 1;

  for (int i = 0; i < n; i++) {
    total += lens[i];
    if (valid && !(trusted & (1u << i)) && !utf8_valid(parts[i], lens[i]))
      valid = 0;
  }
  if (valid) {
    s->io.write(s->io.ctx, related, answer, code, parts, lens, n);
    return;
  }
  if ((joined = malloc(total + 1)) == NULL) {
    log_error("out of memory repairing a %zu-byte message; dropped", total);
    return;
  }
  for (int i = 0; i < n; i++) {
    memcpy(joined + off, parts[i], lens[i]);
    off += lens[i];
  }
  fixed = utf8_repair(joined, total, &len);
  free(joined);
  if (fixed == NULL) {
    log_error("out of memory repairing a %zu-byte message; dropped", total);
    return;
  }
  text = fixed;
  s->io.write(s->io.ctx, related, answer, code, &text, &len, 1);
  free(fixed);
}

/* Adds a reference to `val` to `obj` under `key`; json-c keeps the
 * reference only when the add succeeds.  Returns 0 or -1. */
static int add_ref(json_object *obj, const char *key, json_object *val) {
  if (json_object_object_add(obj, key, json_object_get(val)) == 0)
    return 0;
  json_object_put(val);
  return -1;
}

/* Copies the members of object `from` (if it is one) into `to`, but
 * `skip`.  Returns 0 or -1. */
static int copy_members(json_object *to, json_object *from, const char *skip) {
  if (!json_object_is_type(from, json_type_object))
    return 0;
  json_object_object_foreach(from, key, val) {
    if (strcmp(key, skip) != 0 && add_ref(to, key, val) != 0)
      return -1;
  }
  return 0;
}

/* Sets params._meta["io.mcpd/related"] of notification or request `msg`
 * to `id`, keeping the other members of params and _meta.  The params
 * object may be shared (one log line goes to several sessions), so it is
 * replaced by a copy one level deep, never changed.  Returns 0, or -1
 * when out of memory. */
static int tag_related(json_object *msg, json_object *id) {
  json_object *params = NULL, *meta = NULL;
  json_object *copy = json_object_new_object();
  json_object *meta_copy = json_object_new_object();
  int rc = -1;

  json_object_object_get_ex(msg, "params", &params);
  if (json_object_is_type(params, json_type_object))
    json_object_object_get_ex(params, "_meta", &meta);
  if (copy != NULL && meta_copy != NULL &&
      copy_members(copy, params, "_meta") == 0 &&
      copy_members(meta_copy, meta, "io.mcpd/related") == 0 &&
      add_ref(meta_copy, "io.mcpd/related", id) == 0 &&
      add_ref(copy, "_meta", meta_copy) == 0 &&
      add_ref(msg, "params", copy) == 0)
    rc = 0;
  json_object_put(copy);
  json_object_put(meta_copy);
  return rc;
}

/* Writes a message built as a json-c tree; consumes it. */
static void send_related(session *s, json_object *related, json_object *msg) {
  size_t len;
  const char *text;
  /* Whatever has no method -- a response, a batch of them, an error --
   * is an answer. */
  int answer = !json_object_object_get_ex(msg, "method", NULL);
  json_object *error = NULL, *code = NULL;

  if (s->tag_related && related != NULL && !answer &&
      tag_related(msg, related) != 0) {
    log_error("out of memory tagging a message with its request; dropped");
    json_object_put(msg);
    return;
  }
  if (answer && json_object_object_get_ex(msg, "error", &error))
    json_object_object_get_ex(error, "code", &code);
  text = jsonrpc_to_string(msg, &len);
  write_out(s, related, answer, json_object_get_int(code), &text, &len, 1, 0);
  json_object_put(msg);
}

static void send_msg(session *s, json_object *msg) {
  send_related(s, NULL, msg);
}

static void batch_settle(batch *b) {
  session *s = b->session;
  if (--b->pending > 0)
    return;
  if (s != NULL && json_object_array_length(b->responses) > 0)
    send_related(s, b->related, b->responses);
  else
    json_object_put(b->responses);
  json_object_put(b->related);
  free(b);
}

/* A request the server sent, awaiting its answer. */
typedef struct outgoing {
  rpc_entry entry; /* first: the peer hands it back */
  session_reply_fn reply;
  void *arg;
  json_object *related; /* the client request it was sent for, or NULL */
} outgoing;

/* The answer came, or the session gave up on the request: its reply runs
 * once, and the request is freed. */
static void outgoing_cb(rpc_entry *e, const rpc_reply *r) {
  outgoing *o = (outgoing *)e;
  json_object *error = r->error, *made = NULL;

  if (!r->local && error != NULL &&
      !json_object_is_type(error, json_type_object))
    error = NULL;
  if (r->result == NULL && error == NULL) {
    made = json_object_new_object();
    json_object_object_add(made, "code",
                           json_object_new_int(JSONRPC_INVALID_REQUEST));
    json_object_object_add(
        made, "message",
        json_object_new_string(
            "the client answered with neither a result nor an error object"));
    error = made;
  }
  o->reply(o->arg, error ? NULL : r->result, error);
  json_object_put(made);
  json_object_put(o->related);
  free(o);
}

/* `params` (taken over) with _meta["io.modelcontextprotocol/related-task"]
 * = {"taskId": id}, as everything a task's call sends says. */
static json_object *related_task(json_object *params, const char *id) {
  json_object *meta = NULL, *rel = json_object_new_object();

  if (params == NULL)
    params = json_object_new_object();
  if (!json_object_object_get_ex(params, "_meta", &meta) ||
      !json_object_is_type(meta, json_type_object)) {
    meta = json_object_new_object();
    json_object_object_add(params, "_meta", meta);
  }
  json_object_object_add(rel, "taskId", json_object_new_string(id));
  json_object_object_add(meta, ERA_META_RELATED_TASK, rel);
  return params;
}

const char *session_request(session *s, const char *method, json_object *params,
                            session_reply_fn reply, void *arg) {
  return session_request_related(s, NULL, method, params, reply, arg);
}

const char *session_request_related(session *s, const request *related,
                                    const char *method, json_object *params,
                                    session_reply_fn reply, void *arg) {
  outgoing *o = calloc(1, sizeof(*o));
  json_object *msg;

  /* A modern request never makes the server ask its client: that is what
   * input_required results are for. */
  if (o == NULL || !s->initialized || (related != NULL && related->modern) ||
      rpc_peer_add(s->outgoing, &o->entry, outgoing_cb) != 0) {
    free(o);
    json_object_put(params);
    return NULL;
  }
  o->reply = reply;
  o->arg = arg;
  o->related = related != NULL ? json_object_get(related->id) : NULL;
  if (related != NULL && REQUEST_TASK_ID(related) != NULL)
    params = related_task(params, REQUEST_TASK_ID(related));
  msg = jsonrpc_notification(method, params);
  json_object_object_add(msg, "id", json_object_new_string(o->entry.id));
  send_related(s, o->related, msg);
  return o->entry.id;
}

void session_cancel_request(session *s, const char *id, int code,
                            const char *message) {
  rpc_entry *e = rpc_peer_find_text(s->outgoing, id);
  outgoing *o = (outgoing *)e;
  json_object *params;
  if (e == NULL)
    return;
  params = json_object_new_object();
  json_object_object_add(params, "requestId", json_object_new_string(e->id));
  json_object_object_add(params, "reason", json_object_new_string(message));
  send_related(s, o->related,
               jsonrpc_notification("notifications/cancelled", params));
  rpc_peer_cancel(s->outgoing, e, code, message);
}

/* A response from the client: the answer to one of our requests. */
static void handle_response(session *s, json_object *obj, json_object *id) {
  if (rpc_peer_response(s->outgoing, obj, NULL, 0) != 0)
    /* Late (after a timeout), duplicated or never asked: dropped, as
     * JSON-RPC asks. */
    log_debug("ignoring a response to no request of ours (id %s)",
              json_object_to_json_string(id));
}

session *session_new(const session_io *io, const session_handler *handler) {
  session *s = calloc(1, sizeof(*s));
  if (s == NULL)
    return NULL;
  /* What only some sessions use comes when first used: the tokener
   * (about 20 KiB at this depth) parses lines, which HTTP sessions never
   * get, and the empty params only requests without any. */
  s->outgoing = malloc(sizeof(*s->outgoing));
  if (s->outgoing == NULL || rpc_peer_init(s->outgoing, NULL, "mcpd-") != 0) {
    free(s->outgoing);
    free(s);
    return NULL;
  }
  s->io = *io;
  s->handler = *handler;
  s->log_level = -1;
  return s;
}

void session_free(session *s) {
  if (s == NULL)
    return;
  /* Calls still running keep their requests; detach them so their late
   * completion writes nowhere. */
  for (request *r = s->in_flight, *next; r != NULL; r = next) {
    next = r->next;
    r->cancelled = 1;
    r->session = NULL;
    r->indexed = 0;
    r->prev = r->next = NULL;
    if (r->batch)
      r->batch->session = NULL;
  }
  /* Requests to the client get their answer now: there will be none. */
  rpc_peer_fail_all(s->outgoing, JSONRPC_CONNECTION_CLOSED, "the session ended",
                    NULL);
  rpc_peer_close(s->outgoing);
  free(s->outgoing);
  free(s->roots);
  free(s->client_caps_json);
  free(s->owner);
  json_object_put(s->empty_params);
  json_object_put(s->subscriptions);
  if (s->tok != NULL)
    json_tokener_free(s->tok);
  id_table_free(&s->by_id);
  free(s);
}

/* Sends a reply that is not tied to a request object (errors for messages
 * that never became requests). */
static void send_direct(session *s, batch *b, json_object *msg) {
  if (b != NULL)
    json_object_array_add(b->responses, msg);
  else
    send_msg(s, msg);
}

static void request_unlink(request *r) {
  session *s = r->session;
  if (r->indexed)
    id_table_remove(&s->by_id, r->id);
  if (r->prev)
    r->prev->next = r->next;
  else if (s->in_flight == r)
    s->in_flight = r->next;
  if (r->next)
    r->next->prev = r->prev;
  s->requests_in_flight--;
}

/* Frees an answered request and settles its batch. */
static void request_free(request *r) {
  batch *b = r->batch;
  if (r->session != NULL && r->session->dispatching == r)
    r->session->dispatching = NULL;
  json_object_put(r->params);
  json_object_put(r->message);
  free(r);
  if (b)
    batch_settle(b);
}

/* Unlinks and frees a request answered through the text path. */
static void request_done(request *r) {
  request_unlink(r);
  request_free(r);
}

/* Whether the request's answer stays unwritten: it was cancelled (and
 * its peer is not a host that wants the answer anyway), or detached by
 * session_free. */
static int answer_dropped(const request *r) {
  return r->session == NULL || (r->cancelled && !r->session->answer_cancelled);
}

/* Hands a run's answer to its sink and frees it. */
static void sink_send(request *r, json_object *msg) {
  json_object *result = NULL, *error = NULL;

  json_object_object_get_ex(msg, "result", &result);
  json_object_object_get_ex(msg, "error", &error);
  r->task->sink->answer(r->task->sink_arg, r->result_type, result, error);
  json_object_put(msg);
  request_free(r);
}

/* Counts what request `r` was answered with (metrics.h): the code of an
 * error message, or a result. */
static void count_answer(const request *r, json_object *msg) {
  json_object *error, *code;
  if (!metrics_on || REQUEST_SINK(r) != NULL)
    return;
  metrics_request(r->method,
                  msg != NULL &&
                          json_object_object_get_ex(msg, "error", &error) &&
                          json_object_object_get_ex(error, "code", &code)
                      ? json_object_get_int(code)
                      : 0);
}

static void request_send(request *r, json_object *msg) {
  session *s = r->session;

  if (REQUEST_SINK(r) != NULL) {
    sink_send(r, msg);
    return;
  }
  count_answer(r, msg);
  if (answer_dropped(r)) {
    /* Cancelled, or detached by session_free: nobody gets an answer. */
    json_object_put(msg);
  } else if (r->batch) {
    json_object_array_add(r->batch->responses, msg);
  } else {
    send_related(s, r->id, msg);
  }
  if (s != NULL)
    request_unlink(r);
  request_free(r);
}

/* Whether the reply can be written as text: a live, unbatched request. */
static int can_write_text(request *r) {
  return r->session != NULL && r->batch == NULL && REQUEST_SINK(r) == NULL;
}

/* What a modern request's result carries beside its content. */
static era_result_info result_info(const request *r) {
  era_result_info info = {r->result_type, r->cache_scope, r->ttl_ms};
  return info;
}

/* `checked`: the result is known to be valid UTF-8 already.  `splice`:
 * the modern members go in first (the result is an object without
 * them). */
static void write_reply(request *r, const char *result, size_t len, int checked,
                        int splice) {
  session *s = r->session;
  char idbuf[24], head[512];
  const char *parts[7];
  size_t lens[7];
  int n = 0, at = 3;

  count_answer(r, NULL);
  if (!answer_dropped(r)) {
    parts[n] = "{\"jsonrpc\":\"2.0\",\"id\":";
    lens[n++] = sizeof("{\"jsonrpc\":\"2.0\",\"id\":") - 1;
    if (json_object_is_type(r->id, json_type_int))
      parts[n] =
          strbuf_format_int64(idbuf, json_object_get_int64(r->id), &lens[n]);
    else
      parts[n] = jsonrpc_to_string(r->id, &lens[n]);
    n++;
    if (splice) {
      size_t i = 1;
      while (i < len && strchr(" \t\r\n", result[i]) != NULL)
        i++;
      parts[n] = ",\"result\":{";
      lens[n++] = sizeof(",\"result\":{") - 1;
      era_result_info info = result_info(r);
      parts[n] = head;
      lens[n++] = era_result_head(&info, head, sizeof(head));
      parts[n] = ",";
      lens[n++] = i < len && result[i] != '}';
      at = n;
      parts[n] = result + 1;
      lens[n++] = len - 1;
    } else {
      parts[n] = ",\"result\":";
      lens[n++] = sizeof(",\"result\":") - 1;
      parts[n] = result;
      lens[n++] = len;
    }
    parts[n] = "}";
    lens[n++] = 1;
    /* The envelope is ours and the id came from checked input: only the
     * result may need looking at. */
    write_out(s, r->id, 1, 0, parts, lens, n, checked ? ~0u : ~(1u << at));
  }
  request_done(r);
}

void request_reply(request *r, json_object *result) {
  if (r->modern && REQUEST_SINK(r) == NULL) {
    era_result_info info = result_info(r);
    result = era_result_decorate(&info, result);
  }
  if (can_write_text(r)) {
    if (result == NULL) {
      write_reply(r, "{}", 2, 1, 0);
    } else {
      size_t len;
      const char *text = jsonrpc_to_string(result, &len);
      write_reply(r, text, len, 0, 0);
      json_object_put(result);
    }
    return;
  }
  request_send(r, jsonrpc_result(r->id, result));
}

void request_reply_raw(request *r, const char *result, size_t len) {
  json_tokener *tok;
  json_object *obj;

  if (can_write_text(r) && (!r->modern || era_result_can_splice(result, len))) {
    write_reply(r, result, len, 1, r->modern);
    return;
  }
  /* Batches collect objects. */
  tok = json_tokener_new_ex(JSONRPC_MAX_DEPTH);
  obj = tok ? json_tokener_parse_ex(tok, result, (int)len) : NULL;
  json_tokener_free(tok);
  if (obj == NULL)
    request_fail(r, JSONRPC_INTERNAL_ERROR, "result is not valid JSON", NULL);
  else if (r->modern || REQUEST_SINK(r) != NULL)
    request_reply(r, obj);
  else
    request_send(r, jsonrpc_result(r->id, obj));
}

void request_fail(request *r, int code, const char *message,
                  json_object *data) {
  request_send(r, jsonrpc_error(r->id, code, message, data));
}

request *request_new_sink(session *s, const char *id, const char *method,
                          json_object *params, int modern, json_object *caps,
                          const request_sink *sink, void *arg) {
  /* The run and its task part, in one allocation. */
  struct run {
    request r;
    request_task task;
  } *run = calloc(1, sizeof(*run));
  json_object *msg = json_object_new_object();
  json_object *copy = NULL;
  request *r;

  if (run == NULL || msg == NULL ||
      (caps != NULL && json_object_deep_copy(caps, &copy, NULL) != 0)) {
    free(run);
    json_object_put(msg);
    json_object_put(params);
    return NULL;
  }
  r = &run->r;
  /* The message owns what the request points into, as a client's does. */
  json_object_object_add(msg, "id", json_object_new_string(id));
  json_object_object_add(msg, "method", json_object_new_string(method));
  json_object_object_add(msg, "params", params);
  if (copy != NULL)
    json_object_object_add(msg, "capabilities", copy);
  json_object_object_get_ex(msg, "id", &r->id);
  r->method = json_object_get_string(json_object_object_get(msg, "method"));
  r->params = json_object_get(params);
  r->message = msg;
  r->session = s;
  r->modern = modern;
  r->client_capabilities = copy;
  r->log_level = -1;
  r->task = &run->task;
  run->task.sink = sink;
  run->task.sink_arg = arg;
  return r;
}

int session_set_owner(session *s, const char *owner) {
  char *copy = strdup(owner != NULL ? owner : "");
  if (copy == NULL)
    return -1;
  free(s->owner);
  s->owner = copy;
  return 0;
}

request *session_find_request(session *s, json_object *id) {
  return jsonrpc_valid_id(id) ? id_table_get(&s->by_id, id) : NULL;
}

/* --- era selection (per connection) ---------------------------------- */

/* Routes request `r` to its era (era_route_request decides) and pins the
 * connection once the request goes ahead.  Returns 0 when the handler
 * should run (r->modern tells which path), or -1 after answering. */
static int route_era(session *s, request *r) {
  era_envelope env;
  era_error err;
  era_conn pin;

  switch (era_route_request(s->era, r->method, r->params, &pin, &env, &err)) {
  case ERA_ROUTE_REFUSED:
    request_fail(r, err.code, err.message, err.data);
    return -1;
  case ERA_ROUTE_MODERN:
    r->modern = 1;
    r->client_capabilities = env.capabilities;
    r->log_level = env.log_level;
    if (s->admit != NULL && s->admit(s->io.ctx, r) != 0)
      return -1;
    break;
  case ERA_ROUTE_LEGACY:
    break;
  }
  s->era = pin;
  return 0;
}

static void handle_message(session *s, json_object *obj, batch *b) {
  jsonrpc_msg m;
  request *r;

  jsonrpc_classify(obj, &m);
  switch (m.kind) {
  case JSONRPC_KIND_INVALID: {
    char text[200];
    snprintf(text, sizeof(text), "Invalid Request: %s", m.error);
    send_direct(s, b, jsonrpc_error(m.id, JSONRPC_INVALID_REQUEST, text, NULL));
    return;
  }
  case JSONRPC_KIND_RESPONSE:
    handle_response(s, obj, m.id);
    return;
  case JSONRPC_KIND_NOTIFICATION:
    s->handler.notification(s->handler.arg, s, m.method, m.params);
    return;
  case JSONRPC_KIND_REQUEST:
    break;
  }

  if (s->max_in_flight > 0 && s->requests_in_flight >= s->max_in_flight) {
    char text[160];
    snprintf(text, sizeof(text),
             "Server busy: %zu requests of this client are in flight (the "
             "limit); retry when some are answered",
             s->requests_in_flight);
    send_direct(s, b, jsonrpc_error(m.id, JSONRPC_SERVER_BUSY, text, NULL));
    return;
  }
  r = calloc(1, sizeof(*r));
  if (r == NULL) {
    send_direct(
        s, b,
        jsonrpc_error(m.id, JSONRPC_INTERNAL_ERROR, "out of memory", NULL));
    return;
  }
  r->session = s;
  r->message = json_object_get(obj);
  r->id = m.id;
  r->method = m.method;
  r->batch = b;
  if (b != NULL && b->related == NULL)
    b->related = json_object_get(m.id);
  r->next = s->in_flight;
  if (s->in_flight)
    s->in_flight->prev = r;
  s->in_flight = r;
  s->requests_in_flight++;
  if (b)
    b->pending++;

  if (m.params != NULL && !json_object_is_type(m.params, json_type_object)) {
    request_fail(r, JSONRPC_INVALID_PARAMS, "params must be an object", NULL);
    return;
  }
  if (m.params == NULL && s->empty_params == NULL)
    s->empty_params = json_object_new_object();
  r->params = json_object_get(m.params ? m.params : s->empty_params);
  r->log_level = -1;
  if (s->modern_allowed && route_era(s, r) != 0)
    return;
  s->dispatching = r;
  s->handler.request(s->handler.arg, r);
  /* Still in flight: index it for cancellation, unless a request with the
   * same id already is (ids must be unique; the first one keeps it). */
  if (s->dispatching == r) {
    s->dispatching = NULL;
    if (id_table_get(&s->by_id, r->id) == NULL &&
        id_table_put(&s->by_id, r->id, r) == 0)
      r->indexed = 1;
  }
}

static void handle_batch(session *s, json_object *array) {
  size_t n = json_object_array_length(array);
  batch *b;

  if (!era_version_has_batches(s->initialized ? s->version : NULL)) {
    send_msg(s, jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST,
                              s->initialized || s->era == ERA_CONN_MODERN
                                  ? "Invalid Request: JSON-RPC batches are "
                                    "not supported in this protocol revision"
                                  : "Invalid Request: a batch cannot come "
                                    "before initialize",
                              NULL));
    return;
  }
  if (n == 0) {
    send_msg(s, jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST,
                              "Invalid Request: empty batch", NULL));
    return;
  }
  b = calloc(1, sizeof(*b));
  if (b == NULL) {
    send_msg(
        s, jsonrpc_error(NULL, JSONRPC_INTERNAL_ERROR, "out of memory", NULL));
    return;
  }
  b->session = s;
  b->responses = json_object_new_array();
  b->pending = 1;
  for (size_t i = 0; i < n; i++) {
    json_object *item = json_object_array_get_idx(array, i);
    jsonrpc_msg m;
    json_object *id;
    int code;
    jsonrpc_classify(item, &m);
    if (m.kind == JSONRPC_KIND_REQUEST && strcmp(m.method, "initialize") == 0)
      send_direct(s, b,
                  jsonrpc_error(m.id, JSONRPC_INVALID_REQUEST,
                                "Invalid Request: initialize cannot be "
                                "part of a batch",
                                NULL));
    else if (!jsonrpc_all_finite(item)) {
      /* A number beyond a double's range: this member alone is refused,
       * under its own id (a notification or a response gets nothing). */
      if ((code = jsonrpc_unservable_code(item, &id)) != 0)
        send_direct(s, b,
                    jsonrpc_error(id, code,
                                  code == JSONRPC_INVALID_PARAMS
                                      ? "Invalid params: a number is beyond "
                                        "the range of a double"
                                      : "Invalid Request: a number is "
                                        "beyond the range of a double",
                                  NULL));
    } else
      handle_message(s, item, b);
  }
  batch_settle(b);
}

/* Valid JSON that cannot be served (a number beyond a double's range):
 * refused under the request's own id; a notification or a response gets
 * nothing, as always. */
static void refuse_unservable(session *s, const char *line, size_t len,
                              const char *why) {
  json_object *obj = jsonrpc_parse_unservable(s->tok, line, len), *id;
  int code;
  char text[200];

  if (json_object_is_type(obj, json_type_array)) {
    /* A batch: its other members are served (handle_batch). */
    handle_batch(s, obj);
    json_object_put(obj);
    return;
  }
  code = obj != NULL ? jsonrpc_unservable_code(obj, &id)
                     : (id = NULL, JSONRPC_INVALID_REQUEST);

  if (code != 0) {
    snprintf(text, sizeof(text), "%s: %s",
             code == JSONRPC_INVALID_PARAMS ? "Invalid params"
                                            : "Invalid Request",
             why);
    send_msg(s, jsonrpc_error(id, code, text, NULL));
  }
  json_object_put(obj);
}

/* The session's tokener, made on first use; NULL when out of memory. */
static json_tokener *session_tok(session *s) {
  if (s->tok == NULL && (s->tok = json_tokener_new_ex(JSONRPC_MAX_DEPTH)))
    json_tokener_set_flags(s->tok, JSON_TOKENER_STRICT);
  return s->tok;
}

void session_handle_line(session *s, const char *line, size_t len) {
  json_object *obj;
  const char *why;
  char text[200];
  int rc;

  if (session_tok(s) == NULL) {
    send_msg(
        s, jsonrpc_error(NULL, JSONRPC_INTERNAL_ERROR, "out of memory", NULL));
    return;
  }
  if ((rc = jsonrpc_parse(s->tok, line, len, &obj, &why)) != 0) {
    if (rc == JSONRPC_INVALID_REQUEST) {
      refuse_unservable(s, line, len, why);
      return;
    }
    snprintf(text, sizeof(text), "Parse error: %s", why);
    send_msg(s, jsonrpc_error(NULL, JSONRPC_PARSE_ERROR, text, NULL));
    return;
  }
  session_handle_json(s, obj);
  json_object_put(obj);
}

void session_handle_json(session *s, json_object *obj) {
  if (json_object_is_type(obj, json_type_array))
    handle_batch(s, obj);
  else
    handle_message(s, obj, NULL);
}

void session_oversize(session *s, size_t max) {
  char text[160];
  snprintf(text, sizeof(text),
           "Invalid Request: message exceeds the maximum size of %zu bytes",
           max);
  log_warn("refused a message larger than %zu bytes", max);
  send_msg(s, jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST, text, NULL));
}

void session_notify(session *s, const char *method, json_object *params) {
  session_notify_related(s, NULL, method, params);
}

void session_notify_about(session *s, const request *r, const char *method,
                          json_object *params) {
  session_notify_related(s, s->tag_related ? r : NULL, method, params);
}

void session_notify_related(session *s, const request *r, const char *method,
                            json_object *params) {
  /* A modern request's own notifications (progress, its log lines) need
   * no initialize; nothing else reaches a modern connection. */
  if (!s->initialized && !(r != NULL && r->modern)) {
    json_object_put(params);
    return;
  }
  if (r != NULL && REQUEST_TASK_ID(r) != NULL)
    params = related_task(params, REQUEST_TASK_ID(r));
  send_related(s, r != NULL ? r->id : NULL,
               jsonrpc_notification(method, params));
}
