/* SPDX-License-Identifier: MIT */
/* session.h -- one MCP conversation: lifecycle state, the negotiated
 * revision, the requests in flight, and the rule that every request gets
 * exactly one response.
 *
 * A session knows neither its transport nor the methods it serves.  Its
 * owner gives it two sets of callbacks: `session_io` to write messages out,
 * and `session_handler` to receive requests and notifications.  Whole
 * messages come in through session_handle_line(). */
#ifndef MCPD_SESSION_H
#define MCPD_SESSION_H

#include <stddef.h>

#include <json-c/json.h>

#include "era.h"
#include "id_table.h"

struct strbuf;

struct mcpd_call;
struct rpc_peer;
struct session;
struct batch;

/* Writes one message given as text pieces (no newline).  `related` is the
 * id of the client's request the message belongs to -- its response, and
 * what its call sends while it runs (progress, requests to the client) --
 * or NULL for a message that belongs to no request (list_changed, logs,
 * errors for input that never became a request).  It is borrowed for the
 * call.  `answer` is nonzero for a response (or a batch of them, or an
 * error for input that never became a request): the last message of its
 * request; zero for a notification or a request to the client.  `code`
 * is the JSON-RPC error code an answer carries, 0 for a result (and for
 * a batch).  A transport with one stream (stdio) ignores all three; HTTP
 * sends a related message on that request's own POST and ends it with
 * the answer, whose status follows `code` in the 2026-07-28 era. */
typedef void (*session_write_fn)(void *ctx, json_object *related, int answer,
                                 int code, const char *const *parts,
                                 const size_t *lens, int n);

typedef struct session_io {
  session_write_fn write;
  void *ctx;
} session_io;

struct request;

/* Where the answer of a request that no client sent goes: a task's run
 * (request_new_sink()), whose call answers into the task, not a stream. */
typedef struct request_sink {
  /* The answer: `result` as built (without a modern result's resultType
   * and _meta; `result_type` is request.result_type) or the JSON-RPC
   * `error` object; both borrowed for the call.  `arg` is the request's
   * sink_arg, NULL once its owner let go of it. */
  void (*answer)(void *arg, const char *result_type, json_object *result,
                 json_object *error);
  /* The call set its status message (copied by the callee). */
  void (*status)(void *arg, const char *message);
  /* The call sent its client a request (+1), or one ended (-1). */
  void (*asking)(void *arg, int delta);
} request_sink;

/* What a request has to do with tasks (tasks.c); most have none.  Apart
 * from the request, so that it costs the others one pointer. */
typedef struct request_task {
  /* A task's run: where its answer goes, and the task's id, which all its
   * call sends the client carries as related-task _meta. */
  const request_sink *sink;
  void *sink_arg;
  const char *task_id;
  /* A call that may turn into a task (mcpd_host.task_begin()): returns
   * the run that takes the call over, after answering `r` with the task;
   * NULL when it cannot. */
  struct request *(*begin)(void *arg, struct request *r);
  void *begin_arg;
} request_task;

typedef struct request {
  struct session *session; /* NULL once the session is gone */
  json_object *message;    /* the whole message; owns what follows */
  json_object *id;
  const char *method;
  json_object *params; /* a reference; never NULL: {} when absent.
                          Handlers MUST NOT modify it (it may be shared) */
  struct batch *batch;
  struct mcpd_call *call; /* set by the handler while a call runs */
  int cancelled;          /* the client cancelled: no response */
  int indexed;            /* in session.by_id */
  struct request *prev, *next;
  /* A 2026-07-28 request: its envelope was checked before the handler
   * ran, and its result gets resultType and _meta serverInfo.  What
   * follows describes this request alone, never the session. */
  int modern;
  int log_level; /* the envelope's logLevel; -1 for none (no logs) */
  /* The envelope's clientCapabilities (borrowed from `message`), or NULL
   * for a legacy request, whose capabilities are the session's. */
  json_object *client_capabilities;
  /* A cacheable modern result gets ttlMs and cacheScope: the handler sets
   * `cache_scope` ("public" or "private") before it answers. */
  const char *cache_scope;
  long long ttl_ms;
  /* The modern result's resultType: NULL for "complete", or
   * "input_required" (set by the call that answers with one). */
  const char *result_type;
  /* A modern request over HTTP: its header `name` as the reference
   * compares headers, into `out` (trimmed, "=?base64?...?=" decoded):
   * 1 when present, 0 when absent, -1 when badly encoded.  Set by the
   * transport's admit hook; usable while the handler first runs (for
   * Mcp-Param-*), NULL on stdio and for legacy requests. */
  int (*header)(void *ctx, const char *name, struct strbuf *out);
  void *header_ctx;
  /* NULL for most.  A task's run (request_new_sink(), which owns it) is
   * in no session's lists; its owner keeps `session` true (NULL: none).
   * A call that may turn into a task has one its handler set. */
  request_task *task;
} request;

/* The sink of a task's run, or NULL. */
#define REQUEST_SINK(r) ((r)->task != NULL ? (r)->task->sink : NULL)
/* The id of the task `r` runs for, or NULL. */
#define REQUEST_TASK_ID(r) ((r)->task != NULL ? (r)->task->task_id : NULL)

/* The answer to a request the server sent the client: exactly one of
 * `result` and `error` (the JSON-RPC error object) is set, both borrowed
 * for the duration of the call.  Runs exactly once per request: when the
 * answer arrives, when session_cancel_request() gives up on it, or when
 * the session is freed (then `error` is {"code": -32000, "message":
 * "the session ended"}). */
typedef void (*session_reply_fn)(void *arg, json_object *result,
                                 json_object *error);

typedef struct session_handler {
  /* Answer `r` exactly once, now or later. */
  void (*request)(void *arg, request *r);
  /* A notification from the client; `params` is borrowed, may be NULL. */
  void (*notification)(void *arg, struct session *s, const char *method,
                       json_object *params);
  void *arg;
} session_handler;

typedef struct session {
  session_io io;
  session_handler handler;
  int initialized; /* initialize was answered */
  /* Whether requests claiming 2026-07-28 (params._meta
   * ["io.modelcontextprotocol/protocolVersion"]) are routed to the
   * modern path; set by the owner for stdio only.  When zero, the claim
   * means nothing and every request takes the legacy path. */
  int modern_allowed;
  /* Runs for a modern request whose envelope passed, before its handler
   * looks at the method (HTTP compares the request's headers with its
   * body here, as the reference orders the checks).  Returns 0 to go on,
   * or -1 after answering `r`.  NULL: nothing more to check.  `ctx` is
   * io.ctx. */
  int (*admit)(void *ctx, request *r);
  era_conn era; /* what the connection speaks, pinned by era_route_request */
  const char *version; /* negotiated revision (static string) */
  int log_level;       /* client's logging/setLevel, -1 for none */
  /* The capabilities the client declared at initialize: as call_core's
   * CLIENT_* bits, and as JSON text for a plugin's worker (NULL: none).
   * Not a tree: json-c's objects cost some 3 KiB per idle session. */
  unsigned client_caps;
  char *client_caps_json;
  request *in_flight;
  size_t requests_in_flight;
  size_t max_in_flight; /* more get an error; 0 for no limit */
  /* Requests still in flight after their handler returned, by id: what a
   * cancellation looks up.  Requests answered at once never enter it. */
  id_table by_id;
  request *dispatching; /* the request whose handler is running */
  json_tokener *tok;
  json_object *empty_params; /* shared {} for requests without params */
  /* URIs the client subscribed to, as the keys of an object; kept by the
   * methods (methods_session_closed() empties it). */
  json_object *subscriptions;
  /* Requests this server sent the client, by id ("mcpd-<n>"), awaiting
   * their answers. */
  struct rpc_peer *outgoing;
  /* The client's roots (the roots/list result's array) as JSON text, or
   * NULL; kept by the methods. */
  char *roots;
  /* Worker mode: every notification or request that relates to a request
   * of the peer carries that request's id as params._meta
   * ["io.mcpd/related"], so the host can route it over one stream. */
  int tag_related;
  /* Worker mode: a cancelled request is still answered, with what its
   * call ended with.  MCP's rule that a cancelled request gets no
   * response is the host's to keep towards its client; on the private
   * link the answer is how the host learns that the call stopped (and
   * spares the worker the kill that awaits a call ignoring it). */
  int answer_cancelled;
  /* Who the client is, for what outlives the session (tasks): the
   * identity its credentials speak for, "" for anyone.  Owned. */
  char *owner;
  void *data; /* the owner's */
} session;

session *session_new(const session_io *io, const session_handler *handler);
/* Requests still in flight are detached: their late answers go nowhere. */
void session_free(session *s);

/* Handles one framed message. */
void session_handle_line(session *s, const char *line, size_t len);
/* The same for a message the transport already parsed with
 * jsonrpc_parse() (borrowed): an object, or an array (a batch). */
void session_handle_json(session *s, json_object *obj);
/* A message larger than the limit arrived; answers -32600. */
void session_oversize(session *s, size_t max);

/* Sends a notification if the session is initialized.  Consumes params. */
void session_notify(session *s, const char *method, json_object *params);
/* The same, for a notification that belongs to request `r` (progress):
 * the transport is told it relates to r's id. */
void session_notify_related(session *s, const request *r, const char *method,
                            json_object *params);

/* A notification about request `r` that needs no place on r's own stream
 * (notifications/elicitation/complete): written as session_notify()
 * does, but tagged with r's id where the session tags related messages. */
void session_notify_about(session *s, const request *r, const char *method,
                          json_object *params);

/* Every request gets exactly one of these; they consume their arguments
 * and free the request.  A NULL result is {}.  request_reply_raw takes the
 * result as JSON text, which is cheaper for results built as text; that
 * text MUST be valid UTF-8 (result.c repairs what plugins built), since it
 * is not checked again on its way out.  A modern request's result also
 * gets "resultType":"complete", _meta[ERA_META_SERVER_INFO] and, when
 * r->cache_scope is set, ttlMs and cacheScope, whichever call answers. */
void request_reply(request *r, json_object *result);
void request_reply_raw(request *r, const char *result, size_t len);
void request_fail(request *r, int code, const char *message, json_object *data);

/* Sends the client a request; `params` is consumed.  Returns the id it
 * was sent under (owned by the session until the reply runs), or NULL
 * when it could not be sent: then `reply` never runs.  The ids are
 * strings of the server's own ("mcpd-1", ...), never the client's. */
const char *session_request(session *s, const char *method, json_object *params,
                            session_reply_fn reply, void *arg);
/* The same, for a request sent on behalf of the client's request
 * `related` (a call asking for sampling, say); its cancellation relates
 * to it too. */
const char *session_request_related(session *s, const request *related,
                                    const char *method, json_object *params,
                                    session_reply_fn reply, void *arg);
/* Gives up on an outgoing request: tells the client with
 * notifications/cancelled (with `reason`) and runs its reply now with
 * `error`'s code and message.  Nothing happens for an unknown id. */
void session_cancel_request(session *s, const char *id, int code,
                            const char *message);

/* A request no client sent, for a task's run: `method` with `params`
 * (consumed) under `id` (copied), answered into `sink`.  `caps` (copied;
 * may be NULL) are the capabilities a modern run's call sees.  It is in
 * no session's lists, so its owner keeps `session` true (NULL when the
 * session it reports to is gone).  NULL when out of memory. */
request *request_new_sink(session *s, const char *id, const char *method,
                          json_object *params, int modern, json_object *caps,
                          const request_sink *sink, void *arg);

/* Sets who the session's client is (session.owner); NULL is "". */
int session_set_owner(session *s, const char *owner);

/* Finds a request in flight by id, in O(1). */
request *session_find_request(session *s, json_object *id);

#endif
