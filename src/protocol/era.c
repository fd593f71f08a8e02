/* SPDX-License-Identifier: MIT */
/* era.c -- the revisions mcpd speaks and the rules of the 2026-07-28 era
 * that need no connection: versions, the envelope, routing, modern
 * results, statuses and header matching.  See era.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base64.h"
#include "era.h"
#include "jsonrpc.h"
#include "strbuf.h"
#include "utf8.h"

const char *const era_legacy_versions[] = {"2025-11-25", "2025-06-18",
                                           "2025-03-26", "2024-11-05", NULL};

const char *const era_modern_versions[] = {"2026-07-28", NULL};

static const char *const log_levels[] = {"debug",   "info",     "notice",
                                         "warning", "error",    "critical",
                                         "alert",   "emergency"};

/* --- versions ------------------------------------------------------------ */

/* Where `version` is in `list`, or NULL. */
static const char *find_version(const char *const *list, const char *version) {
  for (size_t i = 0; version != NULL && list[i] != NULL; i++)
    if (strcmp(version, list[i]) == 0)
      return list[i];
  return NULL;
}

const char *era_negotiate(const char *requested) {
  const char *v = find_version(era_legacy_versions, requested);
  return v != NULL ? v : era_legacy_versions[0];
}

int era_is_legacy_version(const char *version) {
  return find_version(era_legacy_versions, version) != NULL;
}

int era_is_modern_version(const char *version) {
  return find_version(era_modern_versions, version) != NULL;
}

int era_version_has_batches(const char *version) {
  /* Batches came with 2025-03-26 and left with 2025-06-18; 2024-11-05 is
   * plain JSON-RPC 2.0, which has them too. */
  return version != NULL && (strcmp(version, "2025-03-26") == 0 ||
                             strcmp(version, "2024-11-05") == 0);
}

int era_version_primes_streams(const char *version) {
  /* Revision names are dates, so they sort as text. */
  return version != NULL && strcmp(version, "2025-11-25") >= 0;
}

json_object *era_supported_versions(void) {
  json_object *list = json_object_new_array();
  for (size_t i = 0; era_modern_versions[i] != NULL; i++)
    json_object_array_add(list, json_object_new_string(era_modern_versions[i]));
  return list;
}

json_object *era_unsupported_data(json_object *requested) {
  json_object *data = json_object_new_object();
  json_object_object_add(data, "supported", era_supported_versions());
  json_object_object_add(data, "requested", json_object_get(requested));
  return data;
}

int era_log_level(const char *name) {
  for (int i = 0; i < 8; i++)
    if (name != NULL && strcmp(name, log_levels[i]) == 0)
      return i;
  return -1;
}

const char *era_log_level_name(int level) {
  return level >= 0 && level < 8 ? log_levels[level] : "info";
}

/* --- the envelope and routing ------------------------------------------- */

static int refuse(era_error *err, int code, const char *message,
                  json_object *data) {
  err->code = code;
  snprintf(err->message, sizeof(err->message), "%s", message);
  err->data = data;
  return -1;
}

/* The envelope of `params` when the request claims a revision (its
 * params._meta is an object holding ERA_META_VERSION), else NULL. */
static json_object *era_claim(json_object *params) {
  json_object *meta = NULL;
  if (json_object_object_get_ex(params, "_meta", &meta) &&
      json_object_is_type(meta, json_type_object) &&
      json_object_object_get_ex(meta, ERA_META_VERSION, NULL))
    return meta;
  return NULL;
}

int era_check_envelope(json_object *meta, era_envelope *env, era_error *err) {
  json_object *version = NULL, *caps = NULL, *info = NULL, *level = NULL;
  char text[200];

  memset(env, 0, sizeof(*env));
  env->log_level = -1;
  json_object_object_get_ex(meta, ERA_META_VERSION, &version);
  if (!json_object_is_type(version, json_type_string))
    return refuse(err, JSONRPC_INVALID_PARAMS,
                  "Invalid params: _meta[\"" ERA_META_VERSION
                  "\"] must be a string",
                  NULL);
  if (!json_object_object_get_ex(meta, ERA_META_CAPABILITIES, &caps) ||
      !json_object_is_type(caps, json_type_object))
    return refuse(err, JSONRPC_INVALID_PARAMS,
                  "Invalid params: _meta[\"" ERA_META_CAPABILITIES
                  "\"] must be an object ({} when the client offers nothing)",
                  NULL);
  if (json_object_object_get_ex(meta, ERA_META_CLIENT_INFO, &info) &&
      !json_object_is_type(info, json_type_object))
    return refuse(err, JSONRPC_INVALID_PARAMS,
                  "Invalid params: _meta[\"" ERA_META_CLIENT_INFO
                  "\"] must be an object",
                  NULL);
  if (json_object_object_get_ex(meta, ERA_META_LOG_LEVEL, &level) &&
      (env->log_level = era_log_level(jsonrpc_name(level))) < 0)
    return refuse(err, JSONRPC_INVALID_PARAMS,
                  "Invalid params: _meta[\"" ERA_META_LOG_LEVEL
                  "\"] must be one of debug, info, notice, warning, error, "
                  "critical, alert, emergency",
                  NULL);
  env->version = json_object_get_string(version);
  /* A version holding a NUL character is none served, whatever its
   * start says. */
  if (jsonrpc_name(version) == NULL || !era_is_modern_version(env->version)) {
    snprintf(text, sizeof(text),
             "Unsupported protocol version: %.*s (this server speaks %s)",
             (int)utf8_cut(env->version,
                           (size_t)json_object_get_string_len(version), 60),
             env->version, era_modern_versions[0]);
    return refuse(err, ERA_ERR_UNSUPPORTED_VERSION, text,
                  era_unsupported_data(version));
  }
  env->capabilities = caps;
  env->client_info = info;
  return 0;
}

era_route era_route_request(era_conn conn, const char *method,
                            json_object *params, era_conn *pin,
                            era_envelope *env, era_error *err) {
  json_object *meta = era_claim(params);
  int discover = strcmp(method, "server/discover") == 0;
  int initialize = strcmp(method, "initialize") == 0;

  *pin = conn;
  if (meta == NULL) {
    if (conn != ERA_CONN_MODERN) {
      if (initialize)
        *pin = ERA_CONN_LEGACY;
      return ERA_ROUTE_LEGACY;
    }
    if (initialize) {
      json_object *v = NULL;
      json_object_object_get_ex(params, "protocolVersion", &v);
      refuse(err, ERA_ERR_UNSUPPORTED_VERSION,
             "Unsupported protocol version: this connection speaks "
             "2026-07-28, which has no initialize",
             era_unsupported_data(
                 json_object_is_type(v, json_type_string) ? v : NULL));
    } else {
      refuse(err, JSONRPC_INVALID_PARAMS,
             "Invalid params: this connection speaks 2026-07-28; "
             "params._meta must carry \"" ERA_META_VERSION
             "\" and \"" ERA_META_CAPABILITIES "\"",
             NULL);
    }
    return ERA_ROUTE_REFUSED;
  }
  /* Claimed.  server/discover is answered on any connection: it is a
   * probe, changes nothing, and a client that initialized may still ask. */
  if (conn == ERA_CONN_LEGACY && !discover) {
    refuse(err, JSONRPC_INVALID_REQUEST,
           "Invalid Request: this connection began with initialize "
           "and speaks a legacy revision; a request carrying "
           "_meta[\"" ERA_META_VERSION "\"] needs a connection of its own",
           NULL);
    return ERA_ROUTE_REFUSED;
  }
  if (era_check_envelope(meta, env, err) != 0)
    return ERA_ROUTE_REFUSED;
  if (!discover)
    *pin = ERA_CONN_MODERN;
  return ERA_ROUTE_MODERN;
}

era_route era_route_post(int has_session_id, json_object *body,
                         const char *version_header, era_error *err,
                         json_object **err_id) {
  json_object *method, *params = NULL, *id = NULL;
  int claim, modern_header, initialize;

  *err_id = NULL;
  if (has_session_id || !json_object_is_type(body, json_type_object) ||
      !json_object_object_get_ex(body, "method", &method))
    return ERA_ROUTE_LEGACY; /* a session's, a batch, or a response */
  json_object_object_get_ex(body, "params", &params);
  claim = era_claim(params) != NULL;
  initialize = json_object_object_get_ex(body, "id", &id) &&
               jsonrpc_name(method) != NULL &&
               strcmp(json_object_get_string(method), "initialize") == 0;
  modern_header = era_is_modern_version(version_header);
  if (claim)
    return ERA_ROUTE_MODERN;
  if (!modern_header)
    return ERA_ROUTE_LEGACY;
  *err_id = jsonrpc_valid_id(id) ? id : NULL;
  if (initialize)
    refuse(err, ERA_ERR_HEADER_MISMATCH,
           "Header mismatch: initialize belongs to the legacy "
           "revisions, but MCP-Protocol-Version names 2026-07-28",
           NULL);
  else
    refuse(err, JSONRPC_INVALID_PARAMS,
           "Invalid params: MCP-Protocol-Version names 2026-07-28, "
           "so params._meta must carry \"" ERA_META_VERSION
           "\" and \"" ERA_META_CAPABILITIES "\"",
           NULL);
  return ERA_ROUTE_REFUSED;
}

/* --- modern results ------------------------------------------------------
 *
 * Every modern result carries resultType and the server's identity, and a
 * cacheable one its cache hints.  Results built as text (tool calls,
 * reads) get these members spliced in after their opening brace, which
 * costs a few bytes of copying; only a result that may already hold one
 * of these members is parsed and merged. */

#define MODERN_HEAD                                                            \
  "\",\"_meta\":{\"" ERA_META_SERVER_INFO                                      \
  "\":{\"name\":\"mcpd\",\"title\":\"mcpd\",\"version\":\"" PACKAGE_VERSION    \
  "\"}}"

static const char *result_type(const era_result_info *info) {
  return info->result_type != NULL ? info->result_type : "complete";
}

size_t era_result_head(const era_result_info *info, char *buf, size_t size) {
  int n;
  if (info->cache_scope == NULL)
    n = snprintf(buf, size, "\"resultType\":\"%s%s", result_type(info),
                 MODERN_HEAD);
  else
    n = snprintf(
        buf, size, "\"resultType\":\"%s%s,\"ttlMs\":%lld,\"cacheScope\":\"%s\"",
        result_type(info), MODERN_HEAD, info->ttl_ms, info->cache_scope);
  return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

static int contains(const char *text, size_t len, const char *needle) {
  return memmem(text, len, needle, strlen(needle)) != NULL;
}

int era_result_can_splice(const char *result, size_t len) {
  return len >= 2 && result[0] == '{' && !contains(result, len, "\"_meta\"") &&
         !contains(result, len, "\"resultType\"") &&
         !contains(result, len, "\"ttlMs\"") &&
         !contains(result, len, "\"cacheScope\"");
}

json_object *era_result_decorate(const era_result_info *info,
                                 json_object *result) {
  json_object *meta, *old = NULL, *server;

  if (result == NULL)
    result = json_object_new_object();
  if (!json_object_is_type(result, json_type_object))
    return result;
  meta = json_object_new_object();
  /* The old _meta may be shared: its members move to a new object. */
  if (json_object_object_get_ex(result, "_meta", &old) &&
      json_object_is_type(old, json_type_object)) {
    json_object_object_foreach(old, key, val) {
      if (strcmp(key, ERA_META_SERVER_INFO) != 0)
        json_object_object_add(meta, key, json_object_get(val));
    }
  }
  server = json_object_new_object();
  json_object_object_add(server, "name", json_object_new_string("mcpd"));
  json_object_object_add(server, "title", json_object_new_string("mcpd"));
  json_object_object_add(server, "version",
                         json_object_new_string(PACKAGE_VERSION));
  json_object_object_add(meta, ERA_META_SERVER_INFO, server);
  json_object_object_add(result, "resultType",
                         json_object_new_string(result_type(info)));
  json_object_object_add(result, "_meta", meta);
  if (info->cache_scope != NULL) {
    json_object_object_add(result, "ttlMs",
                           json_object_new_int64(info->ttl_ms));
    json_object_object_add(result, "cacheScope",
                           json_object_new_string(info->cache_scope));
  }
  return result;
}

/* --- HTTP ---------------------------------------------------------------- */

unsigned era_http_status(int code) {
  switch (code) {
  case JSONRPC_METHOD_NOT_FOUND:
    return 404;
  case JSONRPC_PARSE_ERROR:
  case JSONRPC_INVALID_REQUEST:
  case JSONRPC_INVALID_PARAMS:
  case ERA_ERR_HEADER_MISMATCH:
  case ERA_ERR_MISSING_CAPABILITY:
  case ERA_ERR_UNSUPPORTED_VERSION:
    return 400;
  default:
    return 200;
  }
}

int era_header_decode(const char *raw, strbuf *out) {
  static const char prefix[] = "=?base64?";
  const char *v = raw;
  size_t len;

  out->len = 0;
  if (v == NULL)
    return 0;
  while (*v == ' ' || *v == '\t')
    v++;
  len = strlen(v);
  while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t'))
    len--;
  if (len >= sizeof(prefix) - 1 + 2 &&
      strncasecmp(v, prefix, sizeof(prefix) - 1) == 0 && v[len - 2] == '?' &&
      v[len - 1] == '=')
    return base64_decode(v + sizeof(prefix) - 1, len - (sizeof(prefix) - 1) - 2,
                         out) == 0
               ? 1
               : -1;
  strbuf_append(out, v, len);
  return out->failed ? -1 : 1;
}

/* Whether header `name` (read through `get`) equals `want`; fills *err
 * with -32020 and returns -1 when it is missing, badly encoded or
 * different. */
static int era_header_check(era_header_fn get, void *ctx, const char *name,
                            const char *want, size_t want_len, era_error *err) {
  strbuf v = {0};
  char text[200];
  int rc = get(ctx, name, &v);

  if (rc == 1 && v.len == want_len && memcmp(v.data, want, want_len) == 0) {
    strbuf_free(&v);
    return 0;
  }
  strbuf_free(&v);
  snprintf(text, sizeof(text), "Header mismatch: the %s header %s", name,
           rc == 0  ? "is required"
           : rc < 0 ? "is not valid (bad =?base64?...?= encoding)"
                    : "does not match the request body");
  return refuse(err, ERA_ERR_HEADER_MISMATCH, text, NULL);
}

int era_check_version_header(const char *raw, json_object *params,
                             era_error *err) {
  json_object *meta = era_claim(params), *version = NULL;
  strbuf v = {0};
  int rc, same;

  if (raw == NULL || meta == NULL ||
      !json_object_object_get_ex(meta, ERA_META_VERSION, &version) ||
      !json_object_is_type(version, json_type_string))
    return 0;
  rc = era_header_decode(raw, &v);
  same = rc == 1 && v.len == (size_t)json_object_get_string_len(version) &&
         memcmp(v.data, json_object_get_string(version), v.len) == 0;
  strbuf_free(&v);
  if (same)
    return 0;
  return refuse(err, ERA_ERR_HEADER_MISMATCH,
                "Header mismatch: the MCP-Protocol-Version header "
                "differs from _meta[\"" ERA_META_VERSION "\"]",
                NULL);
}

int era_check_headers(era_header_fn get, void *ctx, const char *method,
                      json_object *params, era_error *err) {
  const char *key = NULL;
  json_object *value;
  strbuf v = {0};
  int rc = get(ctx, "MCP-Protocol-Version", &v);

  strbuf_free(&v);
  /* Present is enough: its value was compared with the body before the
   * request reached its session. */
  if (rc == 0)
    return refuse(err, ERA_ERR_HEADER_MISMATCH,
                  "Header mismatch: the MCP-Protocol-Version header is "
                  "required",
                  NULL);
  if (era_header_check(get, ctx, "Mcp-Method", method, strlen(method), err) !=
      0)
    return -1;
  if (strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0)
    key = "name";
  else if (strcmp(method, "resources/read") == 0)
    key = "uri";
  else if (strcmp(method, "tasks/get") == 0 ||
           strcmp(method, "tasks/update") == 0 ||
           strcmp(method, "tasks/cancel") == 0)
    key = "taskId"; /* so a proxy routes them to the task's process */
  /* Without the value in the body there is nothing to compare: the
   * handler answers the missing parameter. */
  if (key != NULL && json_object_object_get_ex(params, key, &value) &&
      json_object_is_type(value, json_type_string) &&
      era_header_check(get, ctx, "Mcp-Name", json_object_get_string(value),
                       (size_t)json_object_get_string_len(value), err) != 0)
    return -1;
  return 0;
}

/* Whether `s` is a number as JSON writes one: nothing else strtod()
 * would take (hex, "+1", "inf", spaces). */
static int json_number(const char *s) {
  if (*s == '-')
    s++;
  if (*s == '0')
    s++;
  else if (*s >= '1' && *s <= '9')
    while (*s >= '0' && *s <= '9')
      s++;
  else
    return 0;
  if (*s == '.') {
    if (*++s < '0' || *s > '9')
      return 0;
    while (*s >= '0' && *s <= '9')
      s++;
  }
  if (*s == 'e' || *s == 'E') {
    if (*++s == '+' || *s == '-')
      s++;
    if (*s < '0' || *s > '9')
      return 0;
    while (*s >= '0' && *s <= '9')
      s++;
  }
  return *s == '\0';
}

/* Whether the JSON number text `buf` has the value of the integer `arg`:
 * integers exactly, over the whole int64 and uint64 range; other forms
 * ("7.0", "7e0") only when their double is that integer exactly. */
static int integer_equal(json_object *arg, const char *buf) {
  int64_t v = json_object_get_int64(arg);
  char *end;
  double d;

  errno = 0;
  if (strpbrk(buf, ".eE") == NULL) {
    if (buf[0] == '-') {
      long long h = strtoll(buf, &end, 10);
      return errno == 0 && h == v;
    } else {
      unsigned long long h = strtoull(buf, &end, 10);
      return errno == 0 && v >= 0 && h == json_object_get_uint64(arg);
    }
  }
  d = strtod(buf, &end);
  /* Beyond 2^53 a double stands for several integers. */
  if (errno != 0 || !(d > -9007199254740992.0 && d < 9007199254740992.0))
    return 0;
  return (double)(int64_t)d == d && (int64_t)d == v;
}

int era_param_equal(json_object *arg, const char *text, size_t len) {
  char buf[64], *end;

  switch (json_object_get_type(arg)) {
  case json_type_string:
    return (size_t)json_object_get_string_len(arg) == len &&
           memcmp(json_object_get_string(arg), text, len) == 0;
  case json_type_boolean:
    return len == (json_object_get_boolean(arg) ? 4u : 5u) &&
           memcmp(text, json_object_get_boolean(arg) ? "true" : "false", len) ==
               0;
  case json_type_int:
  case json_type_double:
    if (len == 0 || len >= sizeof(buf) || memchr(text, '\0', len) != NULL)
      return 0;
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (!json_number(buf))
      return 0;
    if (json_object_is_type(arg, json_type_int))
      return integer_equal(arg, buf);
    errno = 0;
    return strtod(buf, &end) == json_object_get_double(arg) && errno == 0;
  default:
    return 1; /* objects and arrays are not mirrored in headers */
  }
}

int era_check_param_headers(era_header_fn get, void *ctx, json_object *schema,
                            json_object *args, era_error *err) {
  json_object *props;

  if (!json_object_object_get_ex(schema, "properties", &props) ||
      !json_object_is_type(props, json_type_object))
    return 0;
  json_object_object_foreach(props, pname, pschema) {
    json_object *h = NULL, *arg = NULL;
    char header[128], text[300];
    const char *why = NULL;
    strbuf v = {0};
    int rc;

    if (!json_object_object_get_ex(pschema, "x-mcp-header", &h) ||
        !json_object_is_type(h, json_type_string))
      continue;
    snprintf(header, sizeof(header), "Mcp-Param-%.100s",
             json_object_get_string(h));
    if (args != NULL && json_object_object_get_ex(args, pname, &arg) &&
        json_object_is_type(arg, json_type_null))
      arg = NULL;
    rc = get(ctx, header, &v);
    if (rc < 0 || v.failed)
      why = "is not valid (bad =?base64?...?= encoding)";
    else if (rc == 0 && arg != NULL)
      why = "is required: its argument is in the body";
    else if (rc == 1 && arg == NULL)
      why = "has no argument in the body";
    else if (rc == 1 &&
             !era_param_equal(arg, v.data != NULL ? v.data : "", v.len))
      why = "does not match the request body";
    strbuf_free(&v);
    if (why != NULL) {
      snprintf(text, sizeof(text), "Header mismatch: the %s header %s", header,
               why);
      return refuse(err, ERA_ERR_HEADER_MISMATCH, text, NULL);
    }
  }
  return 0;
}
