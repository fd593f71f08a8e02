/* session.h -- one MCP conversation: lifecycle, negotiated revision,
 * requests in flight, and the transport it writes to.
 *
 * A transport delivers whole messages with session_handle_line() and
 * provides `send`, which consumes one serialized JSON-RPC message. */
#ifndef MCPD_SESSION_H
#define MCPD_SESSION_H

#include <stddef.h>

#include <json-c/json.h>

struct server;
struct mcpd_call;
struct session;
struct batch;

/* Consumes `msg`. */
typedef void (*session_send_fn)(struct session *s, json_object *msg);
/* Optional fast path: writes one message given as text pieces, newline
 * excluded. */
typedef void (*session_write_fn)(struct session *s, const char *const *parts,
                                 const size_t *lens, int n);

typedef struct request {
  struct session *session;
  json_object *message; /* the whole message; owns what follows */
  json_object *id;
  const char *method;
  json_object *params; /* a reference; never NULL: {} when absent.
                          Handlers MUST NOT modify it (it may be shared) */
  struct batch *batch;
  size_t batch_slot;
  struct mcpd_call *call; /* set while a tool call runs */
  int cancelled;          /* the client cancelled: no response */
  struct request *prev, *next;
} request;

typedef struct session {
  struct server *srv;
  int initialized;     /* initialize was answered */
  int ready;           /* notifications/initialized arrived */
  const char *version; /* negotiated revision (static string) */
  int log_level;       /* client's logging/setLevel, -1 for none */
  json_object *client_info;
  json_object *client_capabilities;
  request *in_flight;
  size_t requests_in_flight;
  json_tokener *tok;
  json_object *empty_params; /* shared {} for requests without params */
  session_send_fn send;
  session_write_fn write; /* may be NULL: replies then go through send */
  void *transport;
} session;

/* The revisions mcpd speaks, newest first, NULL-terminated. */
extern const char *const session_versions[];
/* The revision to answer a client that asked for `requested`. */
const char *session_negotiate(const char *requested);
/* Whether `version` takes JSON-RPC batches. */
int session_version_has_batches(const char *version);

session *session_new(struct server *srv, session_send_fn send, void *transport);
void session_free(session *s);

/* Handles one framed message. */
void session_handle_line(session *s, const char *line, size_t len);
/* A message larger than the limit arrived; answers -32600. */
void session_oversize(session *s, size_t max);

/* Sends a notification if the session is initialized.  Consumes params. */
void session_notify(session *s, const char *method, json_object *params);

/* Every request gets exactly one of these; they consume their arguments
 * and free the request.  A NULL result is {}.  request_reply_raw takes the
 * result as JSON text, which is cheaper for results built as text. */
void request_reply(request *r, json_object *result);
void request_reply_raw(request *r, const char *result, size_t len);
void request_fail(request *r, int code, const char *message, json_object *data);

/* Finds a request in flight by id. */
request *session_find_request(session *s, json_object *id);

#endif
