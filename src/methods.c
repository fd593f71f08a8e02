/* methods.c -- the MCP methods mcpd answers, from one static table. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "log.h"
#include "methods.h"
#include "schema.h"
#include "utf8.h"

/* The method may be called before initialize. */
#define METHOD_BEFORE_INIT 0x1u

typedef void (*method_fn)(methods_ctx *ctx, request *r);

typedef struct method {
  const char *name;
  method_fn handler;
  unsigned flags;
} method;

static const char *const log_levels[] = {"debug",   "info",     "notice",
                                         "warning", "error",    "critical",
                                         "alert",   "emergency"};

int methods_log_level(const char *name) {
  for (int i = 0; i < 8; i++)
    if (name && strcmp(name, log_levels[i]) == 0)
      return i;
  return -1;
}

const char *methods_log_level_name(int level) {
  return level >= 0 && level < 8 ? log_levels[level] : "info";
}

static void on_initialize(methods_ctx *ctx, request *r) {
  session *s = r->session;
  json_object *v, *caps, *tools, *info, *result;
  const char *requested;

  if (s->initialized) {
    request_fail(r, JSONRPC_INVALID_REQUEST,
                 "Invalid Request: the session is already initialized", NULL);
    return;
  }
  if (!json_object_object_get_ex(r->params, "protocolVersion", &v) ||
      !json_object_is_type(v, json_type_string)) {
    request_fail(r, JSONRPC_INVALID_PARAMS,
                 "Invalid params: protocolVersion must be a string", NULL);
    return;
  }
  requested = json_object_get_string(v);
  s->version = session_negotiate(requested);
  if (json_object_object_get_ex(r->params, "capabilities", &v) &&
      json_object_is_type(v, json_type_object))
    s->client_capabilities = json_object_get(v);
  if (json_object_object_get_ex(r->params, "clientInfo", &v) &&
      json_object_is_type(v, json_type_object))
    s->client_info = json_object_get(v);
  s->initialized = 1;
  log_debug("initialized: client asked for %s, speaking %s", requested,
            s->version);

  caps = json_object_new_object();
  tools = json_object_new_object();
  json_object_object_add(tools, "listChanged", json_object_new_boolean(1));
  json_object_object_add(caps, "tools", tools);
  json_object_object_add(caps, "logging", json_object_new_object());

  info = json_object_new_object();
  json_object_object_add(info, "name", json_object_new_string("mcpd"));
  json_object_object_add(info, "title", json_object_new_string("mcpd"));
  json_object_object_add(info, "version",
                         json_object_new_string(PACKAGE_VERSION));

  result = json_object_new_object();
  json_object_object_add(result, "protocolVersion",
                         json_object_new_string(s->version));
  json_object_object_add(result, "capabilities", caps);
  json_object_object_add(result, "serverInfo", info);
  if (ctx->opts->instructions)
    json_object_object_add(result, "instructions",
                           json_object_new_string(ctx->opts->instructions));
  request_reply(r, result);
}

static void on_ping(methods_ctx *ctx, request *r) {
  (void)ctx;
  request_reply(r, NULL);
}

static void on_set_level(methods_ctx *ctx, request *r) {
  json_object *v;
  int level = -1;
  if (json_object_object_get_ex(r->params, "level", &v) &&
      json_object_is_type(v, json_type_string))
    level = methods_log_level(json_object_get_string(v));
  if (level < 0) {
    request_fail(r, JSONRPC_INVALID_PARAMS,
                 "Invalid params: level must be one of debug, info, notice, "
                 "warning, error, critical, alert, emergency",
                 NULL);
    return;
  }
  r->session->log_level = level;
  call_exec_want_logs(ctx->exec, level);
  request_reply(r, NULL);
}

/* Cursors are opaque to clients; inside they are a list offset. */
static int parse_cursor(json_object *params, size_t count, size_t *offset) {
  json_object *v;
  const char *s;
  char *end;
  unsigned long long n;

  *offset = 0;
  if (!json_object_object_get_ex(params, "cursor", &v) ||
      json_object_is_type(v, json_type_null))
    return 0;
  if (!json_object_is_type(v, json_type_string))
    return -1;
  s = json_object_get_string(v);
  if (s[0] != 'p' || s[1] < '0' || s[1] > '9')
    return -1;
  n = strtoull(s + 1, &end, 10);
  /* A cursor at the very end is never issued: the last page has none. */
  if (*end != '\0' || (n > 0 && n >= count))
    return -1;
  *offset = (size_t)n;
  return 0;
}

static void on_tools_list(methods_ctx *ctx, request *r) {
  size_t offset, next;
  json_object *result;

  if (parse_cursor(r->params, ctx->registry->count, &offset) != 0) {
    request_fail(r, JSONRPC_INVALID_PARAMS, "Invalid params: invalid cursor",
                 NULL);
    return;
  }
  result = json_object_new_object();
  json_object_object_add(
      result, "tools",
      registry_list_tools(ctx->registry, offset, ctx->opts->page_size, &next));
  if (next > 0) {
    char cursor[32];
    snprintf(cursor, sizeof(cursor), "p%zu", next);
    json_object_object_add(result, "nextCursor",
                           json_object_new_string(cursor));
  }
  request_reply(r, result);
}

static json_object *error_result(const char *text) {
  json_object *result = json_object_new_object();
  json_object *content = json_object_new_array();
  json_object *block = json_object_new_object();
  json_object_object_add(block, "type", json_object_new_string("text"));
  json_object_object_add(block, "text", json_object_new_string(text));
  json_object_array_add(content, block);
  json_object_object_add(result, "content", content);
  json_object_object_add(result, "isError", json_object_new_boolean(1));
  return result;
}

static void on_tools_call(methods_ctx *ctx, request *r) {
  json_object *v, *args = NULL;
  reg_tool *tool;
  const char *name;
  char err[512], text[700];

  if (!json_object_object_get_ex(r->params, "name", &v) ||
      !json_object_is_type(v, json_type_string)) {
    request_fail(r, JSONRPC_INVALID_PARAMS,
                 "Invalid params: name must be a string", NULL);
    return;
  }
  name = json_object_get_string(v);
  if (json_object_object_get_ex(r->params, "arguments", &args) &&
      !json_object_is_type(args, json_type_null) &&
      !json_object_is_type(args, json_type_object)) {
    request_fail(r, JSONRPC_INVALID_PARAMS,
                 "Invalid params: arguments must be an object", NULL);
    return;
  }
  tool = registry_find(ctx->registry, name);
  if (tool == NULL) {
    snprintf(text, sizeof(text), "Unknown tool: %.*s",
             (int)utf8_cut(name, strlen(name), 200), name);
    request_fail(r, JSONRPC_INVALID_PARAMS, text, NULL);
    return;
  }
  if (json_object_object_get_ex(r->params, "task", NULL)) {
    /* No tool of ours declares taskSupport, so task-augmented calls are
     * refused as the 2025-11-25 revision asks. */
    request_fail(r, JSONRPC_METHOD_NOT_FOUND,
                 "Tool does not support task-augmented execution", NULL);
    return;
  }
  /* params may be shared: an absent arguments object is made, not added. */
  if (args == NULL || json_object_is_type(args, json_type_null))
    args = json_object_new_object();
  else
    json_object_get(args);
  if (schema_validate(tool->input_schema, args, err, sizeof(err)) != 0) {
    snprintf(text, sizeof(text), "Invalid arguments for tool %s: %s", name,
             err);
    json_object_put(args);
    request_reply(r, error_result(text));
    return;
  }
  call_start(ctx->exec, r, tool, args);
  json_object_put(args);
}

/* Sorted by name only for reading; lookup is a scan of a few entries. */
static const method methods[] = {
    {"initialize", on_initialize, METHOD_BEFORE_INIT},
    {"logging/setLevel", on_set_level, 0},
    {"ping", on_ping, METHOD_BEFORE_INIT},
    {"tools/call", on_tools_call, 0},
    {"tools/list", on_tools_list, 0},
    {NULL, NULL, 0}};

void methods_request(void *arg, request *r) {
  const method *m;
  char text[300];

  for (m = methods; m->name != NULL; m++)
    if (strcmp(m->name, r->method) == 0)
      break;
  if (m->name == NULL) {
    snprintf(text, sizeof(text), "Method not found: %.*s",
             (int)utf8_cut(r->method, strlen(r->method), 200), r->method);
    request_fail(r, JSONRPC_METHOD_NOT_FOUND, text, NULL);
    return;
  }
  if (!r->session->initialized && !(m->flags & METHOD_BEFORE_INIT)) {
    request_fail(r, JSONRPC_INVALID_REQUEST,
                 "Invalid Request: the session is not initialized; send "
                 "initialize first",
                 NULL);
    return;
  }
  m->handler(arg, r);
}

static void on_cancelled(session *s, json_object *params) {
  json_object *id;
  request *r;

  if (params == NULL || !json_object_object_get_ex(params, "requestId", &id) ||
      !jsonrpc_valid_id(id))
    return;
  r = session_find_request(s, id);
  /* Unknown or finished ids are ignored; initialize cannot be cancelled. */
  if (r == NULL || strcmp(r->method, "initialize") == 0)
    return;
  log_debug("request %s cancelled by the client",
            json_object_to_json_string(id));
  r->cancelled = 1;
  if (r->call)
    call_cancel(r->call);
}

void methods_notification(void *ctx, session *s, const char *name,
                          json_object *params) {
  (void)ctx;
  if (strcmp(name, "notifications/initialized") == 0)
    log_debug("the client is ready");
  else if (strcmp(name, "notifications/cancelled") == 0)
    on_cancelled(s, params);
  else
    log_debug("ignoring notification %s", name);
}
