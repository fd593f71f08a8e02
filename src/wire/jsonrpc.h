/* SPDX-License-Identifier: MIT */
/* jsonrpc.h -- JSON-RPC 2.0 parsing, classification and replies.
 *
 * Pure functions over json-c objects: no I/O, no MCP knowledge. */
#ifndef MCPD_JSONRPC_H
#define MCPD_JSONRPC_H

#include <stddef.h>

#include <json-c/json.h>

/* Standard error codes, one list that also yields their names. */
#define JSONRPC_ERRORS(X)                                                      \
  X(PARSE_ERROR, -32700, "Parse error")                                        \
  X(INVALID_REQUEST, -32600, "Invalid Request")                                \
  X(METHOD_NOT_FOUND, -32601, "Method not found")                              \
  X(INVALID_PARAMS, -32602, "Invalid params")                                  \
  X(INTERNAL_ERROR, -32603, "Internal error")

enum {
#define JSONRPC_ENUM(name, code, text) JSONRPC_##name = code,
  JSONRPC_ERRORS(JSONRPC_ENUM)
#undef JSONRPC_ENUM
};

/* mcpd's own code in the range JSON-RPC leaves to servers: too many
 * requests of one client in flight. */
#define JSONRPC_SERVER_BUSY (-32000)
/* Answers of the server's own to its requests to the client, as the MCP
 * SDKs number them: the connection ended, or no answer came in time. */
#define JSONRPC_CONNECTION_CLOSED (-32000)
#define JSONRPC_REQUEST_TIMEOUT (-32001)
/* MCP's code for a resource that does not exist (2025-11-25). */
#define JSONRPC_RESOURCE_NOT_FOUND (-32002)

/* The standard message for a code ("Parse error"), or "Server error". */
const char *jsonrpc_strerror(int code);

/* The deepest nesting accepted; deeper input is a parse error. */
#define JSONRPC_MAX_DEPTH 512
#define JSONRPC_MAX_DEPTH_TEXT "512"

typedef enum jsonrpc_kind {
  JSONRPC_KIND_REQUEST,
  JSONRPC_KIND_NOTIFICATION,
  JSONRPC_KIND_RESPONSE,
  JSONRPC_KIND_INVALID
} jsonrpc_kind;

typedef struct jsonrpc_msg {
  jsonrpc_kind kind;
  json_object *id;     /* borrowed from the message; NULL when absent */
  const char *method;  /* borrowed; requests and notifications */
  json_object *params; /* borrowed; may be NULL */
  /* For JSONRPC_KIND_INVALID: why, and the id to answer with (may be NULL
   * when it could not be read). */
  const char *error;
} jsonrpc_msg;

/* Parses one line.  On success returns 0 and *out owns the value.  On
 * failure returns JSONRPC_PARSE_ERROR and *why says what was wrong, or
 * JSONRPC_INVALID_REQUEST for valid JSON that cannot be served (a number
 * beyond the range of a double); *out is then NULL.  `tok` is reused
 * across calls (created with json_tokener_new_ex). */
int jsonrpc_parse(json_tokener *tok, const char *line, size_t len,
                  json_object **out, const char **why);
/* After jsonrpc_parse() returned JSONRPC_INVALID_REQUEST: the message
 * anyway, with its infinite numbers, to be refused under its own id (or
 * not answered, when it is no request); NULL otherwise. */
json_object *jsonrpc_parse_unservable(json_tokener *tok, const char *line,
                                      size_t len);
/* How to refuse `msg`, which jsonrpc_parse_unservable() gave: the code
 * (-32602 when the numbers are in the params, else -32600), with *id set
 * to the id to answer with (borrowed; NULL for null), or 0 when nothing
 * may be answered (a notification, a response). */
int jsonrpc_unservable_code(json_object *msg, json_object **id);

/* Where the JSON value at `s` ends (`end` is the end of the text), or
 * NULL when it is not plainly JSON: a check that builds nothing, for text
 * passed on as it is.  It accepts less than jsonrpc_parse() -- no
 * whitespace, no exponents, no integer parts over 15 digits, no \u escape
 * of NUL or of a surrogate, at most JSONRPC_MAX_DEPTH levels -- so NULL
 * means "parse it to know", not "invalid".  Bytes are not checked for
 * UTF-8 here (utf8_valid does that).  `depth` is the nesting already
 * entered, 0 at the top. */
const char *jsonrpc_skip_value(const char *s, const char *end, int depth);
/* In the object at `s` (its '{', text that jsonrpc_skip_value accepted),
 * where the value of the last member named `key` starts (a key written
 * with escapes does not match), or NULL if there is none. */
const char *jsonrpc_member(const char *s, const char *end, const char *key);

/* Whether every number in `value` is finite: json-c accepts NaN, Infinity
 * and overflowing literals, and would print them as invalid JSON. */
int jsonrpc_all_finite(json_object *value);

/* The text of `v` when it is a string without a NUL character, else
 * NULL.  Names, versions and methods are read through it: read as C text,
 * "echo\u0000evil" would be cut to "echo" and match a name the client
 * never sent, while no such name exists. */
const char *jsonrpc_name(json_object *v);

/* The method jsonrpc_classify() gives a request or notification whose
 * method holds a NUL character: a name no method has, so that it is
 * answered (or, as a notification, ignored) as any unknown method. */
#define JSONRPC_NUL_METHOD "(a method name with a NUL character)"

/* Classifies one message (not an array). */
void jsonrpc_classify(json_object *msg, jsonrpc_msg *out);

/* Whether `id` is a valid request id: a string or an integer. */
int jsonrpc_valid_id(json_object *id);

/* Builders.  They take a new reference on `id` (NULL means null) and
 * consume `result` / `data`. */
json_object *jsonrpc_result(json_object *id, json_object *result);
json_object *jsonrpc_error(json_object *id, int code, const char *message,
                           json_object *data);
json_object *jsonrpc_notification(const char *method, json_object *params);

/* Takes member `key` out of params._meta, and _meta out of params when it
 * is left empty: mcpd's own tags between host and worker, which must not
 * travel further.  Returns the member (a reference the caller puts), or
 * NULL when there is none. */
json_object *jsonrpc_meta_take(json_object *params, const char *key);

/* Serializes compactly (no newlines, no escaped slashes). */
const char *jsonrpc_to_string(json_object *msg, size_t *len);

#endif
