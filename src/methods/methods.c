/* SPDX-License-Identifier: MIT */
/* methods.c -- the MCP methods mcpd answers, from one static table: the
 * table and its dispatch, the lifecycle (initialize, server/discover, ping,
 * logging/setLevel), the lists, and the client's notifications.  The
 * methods that run plugin code are in calls.c; subscriptions and listen
 * streams in subscribe.c. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/linkhash.h>

#include "call_core.h"
#include "calls.h"
#include "era.h"
#include "jsonrpc.h"
#include "log.h"
#include "methods.h"
#include "subscribe.h"
#include "utf8.h"

/* The method may be called before initialize. */
#define METHOD_BEFORE_INIT 0x1u
/* Legacy only: the 2026-07-28 revision removed it (-32601 there). */
#define METHOD_LEGACY 0x2u
/* 2026-07-28 only: a legacy client gets -32601 as it always did. */
#define METHOD_MODERN 0x4u

/* The cache hints of the cacheable modern results answered here (calls.c
 * has the read's; calls_cacheable() sets them, public).  Lists: hot
 * reload can change them at any moment, but a client that cares listens
 * (subscriptions/listen) and hears list_changed within a loop turn of the
 * change, so the TTL only bounds how stale a client that does not listen
 * may be.  10 s keeps a reload visible to it within seconds -- about as
 * soon as a person notices -- and spares a client that lists before every
 * call a page fetch per call.  server/discover stays at 0: behind a load
 * balancer the next process may run another build or configuration. */
#define CACHE_TTL_LISTS_MS 10000
#define CACHE_TTL_DISCOVER_MS 0

typedef void (*method_fn)(methods_ctx *ctx, request *r);

typedef struct method {
  const char *name;
  method_fn handler;
  unsigned flags;
} method;

/* The 2025-11-25 tasks capability: tools/call as a task, tasks/list and
 * tasks/cancel. */
static json_object *tasks_capability(void) {
  json_object *cap = json_object_new_object();
  json_object *requests = json_object_new_object();
  json_object *tools = json_object_new_object();

  json_object_object_add(cap, "list", json_object_new_object());
  json_object_object_add(cap, "cancel", json_object_new_object());
  json_object_object_add(tools, "call", json_object_new_object());
  json_object_object_add(requests, "tools", tools);
  json_object_object_add(cap, "requests", requests);
  return cap;
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
  /* A version holding a NUL character is none this server speaks: read
   * through jsonrpc_name(), it is negotiated as any unknown one. */
  if (!json_object_object_get_ex(r->params, "protocolVersion", &v) ||
      !json_object_is_type(v, json_type_string)) {
    request_fail(r, JSONRPC_INVALID_PARAMS,
                 "Invalid params: protocolVersion must be a string", NULL);
    return;
  }
  requested = jsonrpc_name(v);
  s->version = era_negotiate(requested);
  if (json_object_object_get_ex(r->params, "capabilities", &v) &&
      json_object_is_type(v, json_type_object)) {
    size_t len;
    free(s->client_caps_json);
    s->client_caps = call_client_caps(v);
    s->client_caps_json = strdup(jsonrpc_to_string(v, &len));
  }
  s->initialized = 1;
  log_debug("initialized: client asked for %s, speaking %s",
            requested != NULL ? requested : "a version with a NUL character",
            s->version);

  /* Everything is declared whatever is loaded now: plugins come and go
   * while the client stays connected. */
  caps = json_object_new_object();
  tools = json_object_new_object();
  json_object_object_add(tools, "listChanged", json_object_new_boolean(1));
  json_object_object_add(caps, "tools", tools);
  v = json_object_new_object();
  json_object_object_add(v, "subscribe", json_object_new_boolean(1));
  json_object_object_add(v, "listChanged", json_object_new_boolean(1));
  json_object_object_add(caps, "resources", v);
  v = json_object_new_object();
  json_object_object_add(v, "listChanged", json_object_new_boolean(1));
  json_object_object_add(caps, "prompts", v);
  json_object_object_add(caps, "logging", json_object_new_object());
  json_object_object_add(caps, "completions", json_object_new_object());
  json_object_object_add(caps, "tasks", tasks_capability());

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
  if (ctx->initialize_meta != NULL)
    json_object_object_add(result, "_meta",
                           json_object_get(ctx->initialize_meta));
  request_reply(r, result);
}

/* Adds capability `name` to `caps` with the flags among `a` and `b` that
 * are on. */
static void caps_member(json_object *caps, const char *name, const char *a,
                        int a_on, const char *b, int b_on) {
  json_object *v = json_object_new_object();
  if (a != NULL && a_on)
    json_object_object_add(v, a, json_object_new_boolean(1));
  if (b != NULL && b_on)
    json_object_object_add(v, b, json_object_new_boolean(1));
  json_object_object_add(caps, name, v);
}

/* server/discover: what a modern client needs to choose this server. */
static void on_discover(methods_ctx *ctx, request *r) {
  json_object *caps = json_object_new_object();
  json_object *versions = era_supported_versions();
  json_object *result = json_object_new_object();

  /* As initialize declares them: list changes and resource updates are
   * heard through subscriptions/listen.  logging is on: a request that
   * sets logLevel hears its own call's log lines. */
  caps_member(caps, "tools", "listChanged", MODERN_TOOLS_LIST_CHANGED, NULL, 0);
  caps_member(caps, "resources", "subscribe", MODERN_RESOURCES_SUBSCRIBE,
              "listChanged", MODERN_RESOURCES_LIST_CHANGED);
  caps_member(caps, "prompts", "listChanged", MODERN_PROMPTS_LIST_CHANGED, NULL,
              0);
  json_object_object_add(caps, "logging", json_object_new_object());
  json_object_object_add(caps, "completions", json_object_new_object());
  {
    /* Tasks are the io.modelcontextprotocol/tasks extension here. */
    json_object *ext = json_object_new_object();
    json_object_object_add(ext, ERA_EXT_TASKS, json_object_new_object());
    json_object_object_add(caps, "extensions", ext);
  }
  json_object_object_add(result, "supportedVersions", versions);
  json_object_object_add(result, "capabilities", caps);
  if (ctx->opts->instructions)
    json_object_object_add(result, "instructions",
                           json_object_new_string(ctx->opts->instructions));
  calls_cacheable(r, CACHE_TTL_DISCOVER_MS);
  request_reply(r, result);
}

static void on_ping(methods_ctx *ctx, request *r) {
  (void)ctx;
  request_reply(r, NULL);
}

static void on_set_level(methods_ctx *ctx, request *r) {
  json_object *v;
  int level = -1;
  if (json_object_object_get_ex(r->params, "level", &v))
    level = era_log_level(jsonrpc_name(v));
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
  if ((s = jsonrpc_name(v)) == NULL)
    return -1;
  if (s[0] != 'p' || s[1] < '0' || s[1] > '9')
    return -1;
  n = strtoull(s + 1, &end, 10);
  /* A cursor at the very end is never issued: the last page has none. */
  if (*end != '\0' || (n > 0 && n >= count))
    return -1;
  *offset = (size_t)n;
  return 0;
}

/* Answers a page of `kind`'s list under `key`. */
static void list_page(methods_ctx *ctx, request *r, reg_kind kind,
                      const char *key) {
  size_t offset, next;
  json_object *result;

  if (parse_cursor(r->params, registry_count(ctx->registry, kind), &offset) !=
      0) {
    request_fail(r, JSONRPC_INVALID_PARAMS, "Invalid params: invalid cursor",
                 NULL);
    return;
  }
  result = json_object_new_object();
  json_object_object_add(
      result, key,
      registry_list(ctx->registry, kind, offset, ctx->opts->page_size, &next));
  calls_cacheable(r, CACHE_TTL_LISTS_MS);
  if (next > 0) {
    char cursor[32];
    snprintf(cursor, sizeof(cursor), "p%zu", next);
    json_object_object_add(result, "nextCursor",
                           json_object_new_string(cursor));
  }
  request_reply(r, result);
}

static void on_tools_list(methods_ctx *ctx, request *r) {
  list_page(ctx, r, REG_TOOL, "tools");
}

static void on_resources_list(methods_ctx *ctx, request *r) {
  list_page(ctx, r, REG_RESOURCE, "resources");
}

static void on_templates_list(methods_ctx *ctx, request *r) {
  list_page(ctx, r, REG_TEMPLATE, "resourceTemplates");
}

static void on_prompts_list(methods_ctx *ctx, request *r) {
  list_page(ctx, r, REG_PROMPT, "prompts");
}

/* --- the rooms below: calls, subscriptions ----------------------------- */

static void on_tools_call(methods_ctx *ctx, request *r) {
  calls_tools_call(ctx->registry, ctx->exec, &ctx->tasks, r);
}

static void on_tasks_get(methods_ctx *ctx, request *r) {
  tasks_get(&ctx->tasks, r);
}

static void on_tasks_result(methods_ctx *ctx, request *r) {
  tasks_result(&ctx->tasks, r);
}

static void on_tasks_list(methods_ctx *ctx, request *r) {
  tasks_list(&ctx->tasks, r);
}

static void on_tasks_cancel(methods_ctx *ctx, request *r) {
  tasks_cancel(&ctx->tasks, r);
}

static void on_tasks_update(methods_ctx *ctx, request *r) {
  tasks_update(&ctx->tasks, r);
}

static void on_resources_read(methods_ctx *ctx, request *r) {
  calls_resources_read(ctx->registry, ctx->exec, r);
}

static void on_prompts_get(methods_ctx *ctx, request *r) {
  calls_prompts_get(ctx->registry, ctx->exec, r);
}

static void on_complete(methods_ctx *ctx, request *r) {
  calls_complete(ctx->registry, ctx->exec, r);
}

static void on_subscribe(methods_ctx *ctx, request *r) {
  subscribe_resource(&ctx->subs, r);
}

static void on_unsubscribe(methods_ctx *ctx, request *r) {
  subscribe_unsubscribe(&ctx->subs, r);
}

static void on_listen(methods_ctx *ctx, request *r) {
  subscribe_listen(&ctx->subs, r);
}

void methods_session_closed(methods_ctx *ctx, session *s) {
  tasks_session_closed(&ctx->tasks, s);
  subscribe_session_closed(&ctx->subs, s);
}

void methods_registry_changed(methods_ctx *ctx) {
  subscribe_registry_changed(&ctx->subs);
}

void methods_list_changed(methods_ctx *ctx, reg_kind kind) {
  subscribe_list_changed(&ctx->subs, kind);
}

void methods_resource_updated(methods_ctx *ctx, const char *uri) {
  subscribe_resource_updated(&ctx->subs, uri);
}

int methods_subscribed(const session *s, const char *uri) {
  return subscribe_session_has(s, uri);
}

/* tasks.changed_cb: a listen stream hears of the tasks it asked for. */
static void task_changed(void *arg, const char *id, json_object *task) {
  methods_ctx *ctx = arg;
  subscribe_task_changed(&ctx->subs, id, task);
}

int methods_init(methods_ctx *ctx, registry *reg, const methods_settings *opts,
                 call_exec *exec) {
  memset(ctx, 0, sizeof(*ctx));
  ctx->registry = reg;
  ctx->opts = opts;
  ctx->exec = exec;
  if (subscribe_init(&ctx->subs, reg) != 0 ||
      tasks_init(&ctx->tasks, exec, reg, opts) != 0)
    return -1;
  ctx->tasks.changed_cb = task_changed;
  ctx->tasks.changed_arg = ctx;
  ctx->subs.task_visible = tasks_visible;
  ctx->subs.task_arg = &ctx->tasks;
  return 0;
}

void methods_shutdown(methods_ctx *ctx, int abandon) {
  tasks_shutdown(&ctx->tasks, abandon);
}

void methods_free(methods_ctx *ctx) {
  tasks_free(&ctx->tasks);
  subscribe_free(&ctx->subs);
  json_object_put(ctx->initialize_meta);
  ctx->initialize_meta = NULL;
}

/* Keep it sorted by name, in strcmp order: find_method() is a binary
 * search, which finds a method in four comparisons where a walk took up to
 * fifteen on every request.  An entry out of order would not be found. */
static const method methods[] = {
    {"completion/complete", on_complete, 0},
    {"initialize", on_initialize, METHOD_BEFORE_INIT | METHOD_LEGACY},
    {"logging/setLevel", on_set_level, METHOD_LEGACY},
    {"ping", on_ping, METHOD_BEFORE_INIT | METHOD_LEGACY},
    {"prompts/get", on_prompts_get, 0},
    {"prompts/list", on_prompts_list, 0},
    {"resources/list", on_resources_list, 0},
    {"resources/read", on_resources_read, 0},
    {"resources/subscribe", on_subscribe, METHOD_LEGACY},
    {"resources/templates/list", on_templates_list, 0},
    {"resources/unsubscribe", on_unsubscribe, METHOD_LEGACY},
    {"server/discover", on_discover, METHOD_MODERN},
    {"subscriptions/listen", on_listen, METHOD_MODERN},
    {"tasks/cancel", on_tasks_cancel, 0},
    {"tasks/get", on_tasks_get, 0},
    {"tasks/list", on_tasks_list, METHOD_LEGACY},
    {"tasks/result", on_tasks_result, METHOD_LEGACY},
    {"tasks/update", on_tasks_update, METHOD_MODERN},
    {"tools/call", on_tools_call, 0},
    {"tools/list", on_tools_list, 0},
    {NULL, NULL, 0}};

/* The entry for `name`, or the sentinel.  Methods of the other era
 * (`other`) are not there at all. */
static const method *find_method(const char *name, unsigned other) {
  const size_t count = sizeof(methods) / sizeof(methods[0]) - 1;
  size_t lo = 0, hi = count;

  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int cmp = strcmp(name, methods[mid].name);
    if (cmp == 0)
      return methods[mid].flags & other ? &methods[count] : &methods[mid];
    if (cmp < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return &methods[count];
}

void methods_request(void *arg, request *r) {
  methods_ctx *ctx = arg;
  const method *m =
      find_method(r->method, r->modern ? METHOD_LEGACY : METHOD_MODERN);
  char text[300];
  if (m->name == NULL && r->modern) {
    snprintf(text, sizeof(text),
             "Method not found: %.*s (not part of the 2026-07-28 revision)",
             (int)utf8_cut(r->method, strlen(r->method), 200), r->method);
    request_fail(r, JSONRPC_METHOD_NOT_FOUND, text, NULL);
    return;
  }
  if (m->name == NULL) {
    snprintf(text, sizeof(text), "Method not found: %.*s",
             (int)utf8_cut(r->method, strlen(r->method), 200), r->method);
    request_fail(r, JSONRPC_METHOD_NOT_FOUND, text, NULL);
    return;
  }
  if (r->modern) {
    /* The request's own logLevel is its only subscription to log lines;
     * the executor stops dropping lines at that level early. */
    if (r->log_level >= 0)
      call_exec_want_logs(ctx->exec, r->log_level);
    m->handler(ctx, r);
    return;
  }
  if (!r->session->initialized && !(m->flags & METHOD_BEFORE_INIT)) {
    request_fail(r, JSONRPC_INVALID_REQUEST,
                 "Invalid Request: the session is not initialized; send "
                 "initialize first",
                 NULL);
    return;
  }
  m->handler(ctx, r);
}

static void on_cancelled(methods_ctx *ctx, session *s, json_object *params) {
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
  /* A listen ends here, with nothing more sent for it. */
  if (subscribe_cancel(&ctx->subs, r))
    return;
  r->cancelled = 1;
  if (r->call)
    call_cancel(r->call);
  else
    tasks_drop_waiter(&ctx->tasks, r);
}

/* --- the client's roots ------------------------------------------------ */

typedef struct roots_fetch {
  methods_ctx *ctx;
  session *session;
} roots_fetch;

/* session_reply_fn for roots/list. */
static void roots_reply(void *arg, json_object *result, json_object *error) {
  roots_fetch *f = arg;
  session *s = f->session;
  methods_ctx *ctx = f->ctx;
  json_object *roots;
  const char *text;
  size_t len;
  char *copy;

  free(f);
  if (error != NULL) {
    json_object *code;
    /* The session ending before the answer is no news. */
    if (json_object_object_get_ex(error, "code", &code) &&
        json_object_get_int(code) == JSONRPC_CONNECTION_CLOSED)
      log_debug("roots/list: the session ended first");
    else
      log_warn("roots/list failed: %s", json_object_to_json_string(error));
    return;
  }
  if (!json_object_object_get_ex(result, "roots", &roots) ||
      !json_object_is_type(roots, json_type_array)) {
    log_warn("roots/list answered without a roots array; ignored");
    return;
  }
  text = jsonrpc_to_string(roots, &len);
  if ((copy = strdup(text)) == NULL)
    return;
  free(s->roots);
  s->roots = copy;
  log_debug("the client's roots: %s", copy);
  if (ctx->roots_changed_cb != NULL)
    ctx->roots_changed_cb(ctx->arg);
}

/* Asks the client for its roots, when it offers them. */
static void fetch_roots(methods_ctx *ctx, session *s) {
  roots_fetch *f;

  if (!(s->client_caps & CLIENT_ROOTS))
    return;
  if ((f = malloc(sizeof(*f))) == NULL)
    return;
  f->ctx = ctx;
  f->session = s;
  if (session_request(s, "roots/list", NULL, roots_reply, f) == NULL)
    free(f);
}

void methods_notification(void *arg, session *s, const char *name,
                          json_object *params) {
  methods_ctx *ctx = arg;
  if (strcmp(name, "notifications/initialized") == 0) {
    log_debug("the client is ready");
    fetch_roots(ctx, s);
  } else if (strcmp(name, "notifications/roots/list_changed") == 0) {
    fetch_roots(ctx, s);
  } else if (strcmp(name, "notifications/cancelled") == 0) {
    on_cancelled(ctx, s, params);
  } else {
    log_debug("ignoring notification %s", name);
  }
}
