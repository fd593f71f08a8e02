/* SPDX-License-Identifier: MIT */
/* era.h -- the two protocol eras: which revisions mcpd speaks, and the
 * rules of the 2026-07-28 one that do not depend on a connection.
 *
 * This is the one list of supported revisions (both eras) and every walk
 * of it: negotiation, the -32022 data, server/discover's list, the HTTP
 * version header.  Beside it: the per-request envelope in params._meta,
 * which requests go to which era (and which are refused, with which
 * code), the members every modern result carries, the HTTP status of a
 * JSON-RPC error code, and the comparison of Mcp-* headers with the body.
 *
 * Everything here is a function of its arguments: no session, no request,
 * no loop.  session.c, streamable_modern.c and the methods apply what it
 * decides (answer, pin the connection, write the head). */
#ifndef MCPD_ERA_H
#define MCPD_ERA_H

#include <stddef.h>

#include <json-c/json.h>

struct strbuf;

/* The legacy revisions mcpd speaks (initialize, a session), newest first,
 * NULL-terminated. */
extern const char *const era_legacy_versions[];
/* The modern revisions (no initialize, an envelope on every request),
 * newest first, NULL-terminated. */
extern const char *const era_modern_versions[];

/* The keys of the modern envelope in params._meta, and of what modern
 * results and listen notifications carry there. */
#define ERA_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define ERA_META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define ERA_META_CLIENT_INFO "io.modelcontextprotocol/clientInfo"
#define ERA_META_LOG_LEVEL "io.modelcontextprotocol/logLevel"
#define ERA_META_SERVER_INFO "io.modelcontextprotocol/serverInfo"
#define ERA_META_SUBSCRIPTION_ID "io.modelcontextprotocol/subscriptionId"
/* Tasks: what relates a message to a task, and the extension's name. */
#define ERA_META_RELATED_TASK "io.modelcontextprotocol/related-task"
#define ERA_EXT_TASKS "io.modelcontextprotocol/tasks"

/* The modern-path error codes (reference section 3). */
#define ERA_ERR_HEADER_MISMATCH (-32020)
#define ERA_ERR_MISSING_CAPABILITY (-32021)
#define ERA_ERR_UNSUPPORTED_VERSION (-32022)

/* --- versions ------------------------------------------------------------ */

/* The legacy revision to answer a client whose initialize asked for
 * `requested` (NULL allowed): that one when served, else the newest. */
const char *era_negotiate(const char *requested);
/* Whether `version` is a legacy revision mcpd serves exactly. */
int era_is_legacy_version(const char *version);
/* Whether `version` is a modern revision mcpd serves exactly. */
int era_is_modern_version(const char *version);
/* Whether negotiated `version` takes JSON-RPC batches. */
int era_version_has_batches(const char *version);
/* Whether an HTTP stream of negotiated `version` starts with a priming
 * event (2025-11-25 and later), so it is resumable from its start. */
int era_version_primes_streams(const char *version);
/* The modern revisions as a new JSON array: server/discover's
 * supportedVersions and the `supported` list of -32022. */
json_object *era_supported_versions(void);
/* The data of -32022: {"supported": [...], "requested": requested}
 * (`requested` is borrowed; NULL is null). */
json_object *era_unsupported_data(json_object *requested);

/* An MCP log level name ("warning") as 0 (debug) .. 7 (emergency); -1
 * when unknown or NULL. */
int era_log_level(const char *name);
/* The name of level 0..7; "info" for anything else. */
const char *era_log_level_name(int level);

/* --- the envelope and routing ------------------------------------------- */

/* Why a request is refused: its JSON-RPC code, message and data (owned;
 * the caller hands it to the error it sends, or puts it). */
typedef struct era_error {
  int code;
  char message[320];
  json_object *data;
} era_error;

/* What a valid envelope says, for its request alone.  Pointers are
 * borrowed from the params they were read from. */
typedef struct era_envelope {
  const char *version;
  json_object *capabilities; /* an object, {} when the client offers none */
  json_object *client_info;  /* an object, or NULL */
  int log_level;             /* 0..7, or -1 for none (no log lines) */
} era_envelope;

/* Checks a claimed request's `meta` in the order the reference gives:
 * the version's type, capabilities, client info, log level (each -32602),
 * then whether the version is served (-32022 with era_unsupported_data).
 * Returns 0 with *env filled, or -1 with *err filled. */
int era_check_envelope(json_object *meta, era_envelope *env, era_error *err);

/* Which revision family a connection speaks (stdio decides it per
 * connection: reference section 1).  A connection starts undecided;
 * server/discover leaves it so. */
typedef enum era_conn {
  ERA_CONN_UNDECIDED,
  ERA_CONN_LEGACY, /* initialize arrived: 2025-11-25 and older */
  ERA_CONN_MODERN  /* a claimed request other than server/discover */
} era_conn;

typedef enum era_route {
  ERA_ROUTE_LEGACY, /* the legacy handler runs, exactly as before */
  ERA_ROUTE_MODERN, /* the envelope passed: the modern handler runs */
  ERA_ROUTE_REFUSED /* answer the error, run nothing */
} era_route;

/* Where request `method` with `params` goes on a connection that speaks
 * `conn`, as the reference pins a connection: server/discover is answered
 * on any connection and decides nothing; the first other claimed request
 * pins it modern; a claim-less initialize pins it legacy.  A request of
 * the other era than the connection's is refused, never served: on a
 * modern connection a claim-less initialize gets -32022 and any other
 * claim-less request -32602, on a legacy one a claimed request -32600.
 * Fills *env for ERA_ROUTE_MODERN, *err for ERA_ROUTE_REFUSED, and *pin
 * with what the connection speaks once the request goes ahead. */
era_route era_route_request(era_conn conn, const char *method,
                            json_object *params, era_conn *pin,
                            era_envelope *env, era_error *err);

/* Which era a POST to the HTTP endpoint takes (reference section 1), from
 * whether it names a session (`has_session_id`), its parsed `body` and
 * its MCP-Protocol-Version header (`version_header`, NULL when absent).
 * GET, DELETE, responses, batches and anything with Mcp-Session-Id are
 * legacy; a claimed request is modern; a claim-less initialize with a
 * modern version header is refused with -32020, any other claim-less
 * request with one with -32602 (both with status 400; *err_id is the id
 * to answer with, borrowed from `body`, or NULL). */
era_route era_route_post(int has_session_id, json_object *body,
                         const char *version_header, era_error *err,
                         json_object **err_id);

/* --- modern results ------------------------------------------------------ */

/* What a modern result carries beside its content: `result_type` NULL for
 * "complete"; `cache_scope` NULL when the result is not cacheable, else
 * "public" or "private" with `ttl_ms`. */
typedef struct era_result_info {
  const char *result_type;
  const char *cache_scope;
  long long ttl_ms;
} era_result_info;

/* Writes the members a modern result starts with (no braces, no trailing
 * comma) into `buf`; returns their length, 0 when they do not fit. */
size_t era_result_head(const era_result_info *info, char *buf, size_t size);
/* Whether era_result_head() can be spliced in after the opening brace of
 * result text as it is: an object that holds none of the members the
 * head adds.  A false alarm (the word inside a string) only costs a
 * parse. */
int era_result_can_splice(const char *result, size_t len);
/* Adds the modern members to `result` (consumed; NULL is {}), merging
 * serverInfo into a _meta of its own.  Returns the result. */
json_object *era_result_decorate(const era_result_info *info,
                                 json_object *result);

/* --- HTTP ---------------------------------------------------------------- */

/* The HTTP status of a modern answer with error `code` (0 for a result):
 * -32601 is 404; -32700, -32600, -32602, -32020, -32021 and -32022 are
 * 400; anything else 200. */
unsigned era_http_status(int code);

/* Reads one request header by name, as era_header_decode() leaves it:
 * 1 when present, 0 when absent, -1 when badly encoded. */
typedef int (*era_header_fn)(void *ctx, const char *name, struct strbuf *out);

/* A raw header value (NULL when absent) as the modern era compares it,
 * into `out`: spaces and tabs around it trimmed, "=?base64?...?="
 * decoded.  Returns 1 when present, 0 when absent, -1 when its encoding
 * is bad. */
int era_header_decode(const char *raw, struct strbuf *out);
/* A POST's MCP-Protocol-Version header (`raw`, NULL when absent) against
 * the version its body claims in params._meta: -1 with -32020 in *err
 * when the header is there and differs. */
int era_check_version_header(const char *raw, json_object *params,
                             era_error *err);
/* The headers a modern request must carry, checked after its envelope and
 * version and before its method, as the reference orders them:
 * MCP-Protocol-Version, Mcp-Method, and Mcp-Name for tools/call,
 * prompts/get (the name) and resources/read (the URI).  Returns 0, or -1
 * with -32020 in *err. */
int era_check_headers(era_header_fn get, void *ctx, const char *method,
                      json_object *params, era_error *err);
/* Whether header text `text` is argument `arg` as written in a header:
 * strings byte for byte, numbers by value (as JSON writes numbers, so
 * "1e2" is 100 but "0x64" and "+100" are nothing), booleans as
 * true/false; objects and arrays are not mirrored and always match. */
int era_param_equal(json_object *arg, const char *text, size_t len);
/* Each argument whose schema property names an "x-mcp-header" comes with
 * the same value in its Mcp-Param-<name> header, and a header comes only
 * with its argument.  `args` may be NULL.  Returns 0, or -1 with -32020
 * in *err. */
int era_check_param_headers(era_header_fn get, void *ctx, json_object *schema,
                            json_object *args, era_error *err);

#endif
