/* methods.c -- the MCP methods mcpd answers, from one static table. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/linkhash.h>

#include "jsonrpc.h"
#include "log.h"
#include "methods.h"
#include "schema.h"
#include "strbuf.h"
#include "utf8.h"

/* The method may be called before initialize. */
#define METHOD_BEFORE_INIT 0x1u
/* Legacy only: the 2026-07-28 revision removed it (-32601 there). */
#define METHOD_LEGACY 0x2u
/* 2026-07-28 only: a legacy client gets -32601 as it always did. */
#define METHOD_MODERN 0x4u

/* The cache hints of the six cacheable modern results.  Lists: hot
 * reload can change them at any moment, but a client that cares listens
 * (subscriptions/listen) and hears list_changed within a loop turn of the
 * change, so the TTL only bounds how stale a client that does not listen
 * may be.  10 s keeps a reload visible to it within seconds -- about as
 * soon as a person notices -- and spares a client that lists before every
 * call a page fetch per call.  Reads stay at 0: what a read returns can
 * change at any moment and nothing tells a plugin's resource apart from a
 * volatile one; only subscribers hear of it.  server/discover stays at 0:
 * behind a load balancer the next process may run another build or
 * configuration.  Nothing depends on who asks (no list or read sees the
 * caller), so the scope is public. */
#define CACHE_TTL_LISTS_MS 10000
#define CACHE_TTL_READ_MS 0
#define CACHE_TTL_DISCOVER_MS 0
#define CACHE_SCOPE "public"

/* What server/discover declares beside tools, resources, prompts, logging
 * and completions; subscriptions/listen grants by the same values. */
#define MODERN_TOOLS_LIST_CHANGED 1
#define MODERN_RESOURCES_LIST_CHANGED 1
#define MODERN_PROMPTS_LIST_CHANGED 1
#define MODERN_RESOURCES_SUBSCRIBE 1

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
  return session_log_level(name);
}

/* Marks a modern request's result cacheable for `ttl_ms`. */
static void cacheable(request *r, long long ttl_ms) {
  if (r->modern) {
    r->cache_scope = CACHE_SCOPE;
    r->ttl_ms = ttl_ms;
  }
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
  json_object *versions = json_object_new_array();
  json_object *result = json_object_new_object();

  for (size_t i = 0; session_modern_versions[i] != NULL; i++)
    json_object_array_add(versions,
                          json_object_new_string(session_modern_versions[i]));
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
  json_object_object_add(result, "supportedVersions", versions);
  json_object_object_add(result, "capabilities", caps);
  if (ctx->opts->instructions)
    json_object_object_add(result, "instructions",
                           json_object_new_string(ctx->opts->instructions));
  cacheable(r, CACHE_TTL_DISCOVER_MS);
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
  cacheable(r, CACHE_TTL_LISTS_MS);
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

/* A string member of params; NULL (after answering -32602) when it is
 * missing or not a string. */
static const char *string_param(request *r, json_object *obj, const char *key,
                                const char *where) {
  json_object *v;
  char text[200];
  if (json_object_object_get_ex(obj, key, &v) &&
      json_object_is_type(v, json_type_string))
    return json_object_get_string(v);
  snprintf(text, sizeof(text), "Invalid params: %s%s must be a string", where,
           key);
  request_fail(r, JSONRPC_INVALID_PARAMS, text, NULL);
  return NULL;
}

/* Fails `r` with `prefix` and a name cut to a sane length. */
static void fail_named(request *r, int code, const char *prefix,
                       const char *name, json_object *data) {
  char text[400];
  snprintf(text, sizeof(text), "%s%.*s", prefix,
           (int)utf8_cut(name, strlen(name), 200), name);
  request_fail(r, code, text, data);
}

static json_object *uri_data(const char *uri) {
  json_object *data = json_object_new_object();
  json_object_object_add(data, "uri", json_object_new_string(uri));
  return data;
}

/* The entry that serves reads of `uri`: a resource of that exact URI,
 * else the first template it matches (then *vars gets the variables). */
static reg_entry *resolve_uri(registry *reg, const char *uri,
                              json_object **vars) {
  reg_entry *e = registry_find(reg, REG_RESOURCE, uri);
  *vars = NULL;
  return e != NULL ? e : registry_match(reg, uri, vars);
}

/* A URI from params, checked; NULL after answering the request. */
static const char *uri_param(request *r) {
  const char *uri = string_param(r, r->params, "uri", "");
  if (uri != NULL && !registry_valid_uri(uri)) {
    fail_named(r, JSONRPC_INVALID_PARAMS,
               "Invalid params: not an absolute URI: ", uri, NULL);
    return NULL;
  }
  return uri;
}

/* --- input required (2026-07-28) ---------------------------------------
 *
 * A tools/call, resources/read or prompts/get that comes back after an
 * input_required result carries the client's inputResponses and the
 * requestState it got.  The state is checked (sealed by a process with
 * our key, for this very request, not expired) and its answers merged
 * with the new ones; the call then runs again with all of them.  The
 * state only carries answers the client gave in earlier rounds, so
 * answers sent without one are used as they are.  A
 * replay of a valid state within its lifetime is accepted: it only runs
 * the same request with answers the client gave, which the client could
 * have had by starting over, and a seen-set could not hold across the
 * processes of a load-balanced deployment anyway. */

/* Fills *answers for `r` (NULL on a first try).  `what` (the method),
 * `name` and `args` are what the state is bound to.  Returns 0, or -1 after
 * answering -32602. */
static int retry_answers(methods_ctx *ctx, request *r, const char *what,
                         const char *name, json_object *args,
                         json_object **answers) {
  json_object *responses = NULL, *state = NULL, *carried = NULL;
  char why[300], text[400];

  *answers = NULL;
  if (!r->modern)
    return 0;
  if (json_object_object_get_ex(r->params, "inputResponses", &responses) &&
      json_object_is_type(responses, json_type_null))
    responses = NULL;
  if (json_object_object_get_ex(r->params, "requestState", &state) &&
      json_object_is_type(state, json_type_null))
    state = NULL;
  if (responses != NULL) {
    int ok = json_object_is_type(responses, json_type_object);
    if (ok) {
      json_object_object_foreach(responses, k, v) {
        (void)k;
        ok &= json_object_is_type(v, json_type_object);
      }
    }
    if (!ok) {
      request_fail(r, JSONRPC_INVALID_PARAMS,
                   "Invalid params: inputResponses must be an object of "
                   "the client's results (objects) by input key",
                   NULL);
      return -1;
    }
  }
  if (state != NULL && !json_object_is_type(state, json_type_string)) {
    request_fail(r, JSONRPC_INVALID_PARAMS,
                 "Invalid params: requestState must be the string an "
                 "input_required result gave",
                 NULL);
    return -1;
  }
  /* Answers without a state are the client's own, as good as any it
   * could put beside a state: the run uses them (and ignores keys it
   * never asks for). */
  if (state == NULL) {
    if (responses != NULL &&
        json_object_deep_copy(responses, answers, NULL) != 0) {
      request_fail(r, JSONRPC_INTERNAL_ERROR, "out of memory", NULL);
      return -1;
    }
    return 0;
  }
  if (request_state_open(ctx->exec->state_key, json_object_get_string(state),
                         what, name, args, request_state_now_ms(), &carried,
                         why, sizeof(why)) != 0) {
    snprintf(text, sizeof(text), "Invalid params: %s", why);
    request_fail(r, JSONRPC_INVALID_PARAMS, text, NULL);
    return -1;
  }
  if (responses != NULL) {
    json_object_object_foreach(responses, k, v) {
      json_object_object_add(carried, k, json_object_get(v));
    }
  }
  *answers = carried;
  return 0;
}

static void on_resources_read(methods_ctx *ctx, request *r) {
  json_object *vars, *answers;
  const char *uri = uri_param(r);
  reg_entry *e;

  if (uri == NULL)
    return;
  e = resolve_uri(ctx->registry, uri, &vars);
  if (e == NULL) {
    /* 2026-07-28 moved "not found" to invalid params. */
    fail_named(r,
               r->modern ? JSONRPC_INVALID_PARAMS : JSONRPC_RESOURCE_NOT_FOUND,
               "Resource not found: ", uri, uri_data(uri));
    return;
  }
  if (retry_answers(ctx, r, "resources/read", uri, NULL, &answers) != 0) {
    json_object_put(vars);
    return;
  }
  cacheable(r, CACHE_TTL_READ_MS);
  {
    call_args a = {.kind = CALL_READ,
                   .entry = e,
                   .name = uri,
                   .variables = vars,
                   .answers = answers};
    call_start(ctx->exec, r, &a);
  }
  json_object_put(vars);
  json_object_put(answers);
}

/* --- subscriptions ------------------------------------------------------
 *
 * Each session keeps the set of URIs it subscribed to; the context keeps,
 * per URI, how many sessions did and which entry was told.  A plugin hears
 * of the first subscriber and of the last one leaving, and, after a
 * reload, the new instance hears of every subscription still open. */

/* An open subscriptions/listen stream (see below). */
typedef struct listener listener;
struct listener {
  request *request;
  unsigned kinds;    /* LISTEN_* */
  json_object *uris; /* the granted resource subscriptions (keys), or NULL */
  struct listener *next;
};
static void listen_end(methods_ctx *ctx, listener *l, int answer);

typedef struct subscription {
  char *uri;
  size_t sessions;
  reg_entry *entry; /* told of it (a reference), or NULL */
} subscription;

/* Whether `e` is still the registered entry under its key. */
static int registered(registry *reg, reg_entry *e) {
  return registry_find(reg, e->kind, e->name) == e;
}

/* Points `sub` at the entry that now serves its URI, telling the old one
 * it lost a subscriber and the new one it gained one. */
static void retarget(methods_ctx *ctx, subscription *sub, reg_entry *now) {
  if (now == sub->entry)
    return;
  if (sub->entry != NULL) {
    if (registered(ctx->registry, sub->entry))
      call_subscribe(sub->entry, sub->uri, 0);
    reg_entry_release(sub->entry);
  }
  sub->entry = now ? reg_entry_ref(now) : NULL;
  if (now != NULL)
    call_subscribe(now, sub->uri, 1);
}

static void drop_subscriber(methods_ctx *ctx, const char *uri) {
  subscription *sub;
  void *v;
  if (!lh_table_lookup_ex(ctx->subscriptions, uri, &v))
    return;
  sub = v;
  if (--sub->sessions > 0)
    return;
  retarget(ctx, sub, NULL);
  lh_table_delete(ctx->subscriptions, sub->uri);
  free(sub->uri);
  free(sub);
}

/* Counts one more subscriber of `uri`, served by `e`: a legacy session
 * or a listen stream.  Returns 0, or -1 when out of memory. */
static int add_subscriber(methods_ctx *ctx, const char *uri, reg_entry *e) {
  subscription *sub;
  void *v;

  if (lh_table_lookup_ex(ctx->subscriptions, uri, &v)) {
    sub = v;
  } else {
    sub = calloc(1, sizeof(*sub));
    if (sub == NULL || (sub->uri = strdup(uri)) == NULL ||
        lh_table_insert(ctx->subscriptions, sub->uri, sub) != 0) {
      if (sub)
        free(sub->uri);
      free(sub);
      return -1;
    }
  }
  if (sub->sessions++ == 0)
    retarget(ctx, sub, e);
  return 0;
}

static void on_subscribe(methods_ctx *ctx, request *r) {
  session *s = r->session;
  const char *uri = uri_param(r);
  json_object *vars;
  reg_entry *e;

  if (uri == NULL)
    return;
  e = resolve_uri(ctx->registry, uri, &vars);
  json_object_put(vars);
  if (e == NULL) {
    fail_named(r, JSONRPC_RESOURCE_NOT_FOUND, "Resource not found: ", uri,
               uri_data(uri));
    return;
  }
  if (s->subscriptions == NULL)
    s->subscriptions = json_object_new_object();
  if (json_object_object_get_ex(s->subscriptions, uri, NULL)) {
    request_reply(r, NULL); /* already subscribed */
    return;
  }
  if (add_subscriber(ctx, uri, e) != 0) {
    request_fail(r, JSONRPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  json_object_object_add(s->subscriptions, uri, NULL);
  request_reply(r, NULL);
}

static void on_unsubscribe(methods_ctx *ctx, request *r) {
  session *s = r->session;
  const char *uri = uri_param(r);

  if (uri == NULL)
    return;
  if (s->subscriptions != NULL &&
      json_object_object_get_ex(s->subscriptions, uri, NULL)) {
    drop_subscriber(ctx, uri);
    json_object_object_del(s->subscriptions, uri);
  }
  request_reply(r, NULL);
}

int methods_subscribed(const session *s, const char *uri) {
  return s->subscriptions != NULL &&
         json_object_object_get_ex(s->subscriptions, uri, NULL);
}

void methods_session_closed(methods_ctx *ctx, session *s) {
  for (listener *l = ctx->listeners, *next; l; l = next) {
    next = l->next;
    if (l->request->session == s)
      listen_end(ctx, l, 1);
  }
  if (s->subscriptions == NULL)
    return;
  json_object_object_foreach(s->subscriptions, uri, unused) {
    (void)unused;
    drop_subscriber(ctx, uri);
  }
  json_object_put(s->subscriptions);
  s->subscriptions = NULL;
}

void methods_registry_changed(methods_ctx *ctx) {
  struct lh_entry *ent;
  lh_foreach(ctx->subscriptions, ent) {
    subscription *sub = (subscription *)lh_entry_v(ent);
    json_object *vars;
    reg_entry *now = resolve_uri(ctx->registry, sub->uri, &vars);
    json_object_put(vars);
    retarget(ctx, sub, now);
  }
}

/* --- subscriptions/listen (2026-07-28) ----------------------------------
 *
 * A listen is a request that stays in flight: acknowledged at once with
 * what was granted, then tagged notifications of the kinds it asked for,
 * until the client cancels it (no response) or the server shuts down (the
 * response, which ends it).  Its resource subscriptions count with the
 * legacy sessions' in ctx->subscriptions, so a plugin hears of the first
 * subscriber and of the last one leaving, whichever era they speak. */

#define LISTEN_TOOLS 0x1u
#define LISTEN_RESOURCES 0x2u
#define LISTEN_PROMPTS 0x4u

/* The list_changed flags of the listen params, their bits, and whether
 * server/discover declares the capability that grants each. */
static const struct {
  const char *flag;
  unsigned bit;
  int declared;
} listen_flags[] = {
    {"toolsListChanged", LISTEN_TOOLS, MODERN_TOOLS_LIST_CHANGED},
    {"resourcesListChanged", LISTEN_RESOURCES, MODERN_RESOURCES_LIST_CHANGED},
    {"promptsListChanged", LISTEN_PROMPTS, MODERN_PROMPTS_LIST_CHANGED}};

/* params with _meta[subscriptionId] set to the listen's id. */
static json_object *tagged(const listener *l, json_object *params) {
  json_object *meta = json_object_new_object();
  if (params == NULL)
    params = json_object_new_object();
  json_object_object_add(meta, SESSION_META_SUBSCRIPTION_ID,
                         json_object_get(l->request->id));
  json_object_object_add(params, "_meta", meta);
  return params;
}

static void listen_notify(listener *l, const char *name, json_object *params) {
  request *r = l->request;
  if (r->session != NULL)
    session_notify_related(r->session, r, name, tagged(l, params));
  else
    json_object_put(params);
}

/* Ends listen `l`: with its final response (`answer`), or silently after
 * the client cancelled it. */
static void listen_end(methods_ctx *ctx, listener *l, int answer) {
  request *r = l->request;

  for (listener **pp = &ctx->listeners; *pp; pp = &(*pp)->next)
    if (*pp == l) {
      *pp = l->next;
      break;
    }
  if (l->uris != NULL) {
    json_object_object_foreach(l->uris, uri, unused) {
      (void)unused;
      drop_subscriber(ctx, uri);
    }
    json_object_put(l->uris);
  }
  if (answer) {
    json_object *result = json_object_new_object();
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, SESSION_META_SUBSCRIPTION_ID,
                           json_object_get(r->id));
    json_object_object_add(result, "_meta", meta);
    request_reply(r, result);
  } else {
    r->cancelled = 1; /* frees it without a word */
    request_reply(r, NULL);
  }
  free(l);
}

static listener *find_listener(methods_ctx *ctx, const request *r) {
  for (listener *l = ctx->listeners; l; l = l->next)
    if (l->request == r)
      return l;
  return NULL;
}

/* Grants the resource subscriptions of `asked` (an array of strings) that
 * name a resource served now, into l->uris and `granted`.  Returns 0, or
 * -1 when out of memory. */
static int listen_resources(methods_ctx *ctx, listener *l, json_object *asked,
                            json_object *granted) {
  size_t n = json_object_array_length(asked);

  for (size_t i = 0; i < n; i++) {
    const char *uri =
        json_object_get_string(json_object_array_get_idx(asked, i));
    json_object *vars;
    reg_entry *e;

    if (!registry_valid_uri(uri) ||
        (l->uris != NULL && json_object_object_get_ex(l->uris, uri, NULL)))
      continue;
    e = resolve_uri(ctx->registry, uri, &vars);
    json_object_put(vars);
    /* As resources/subscribe refuses it: a URI nothing serves is not
     * granted, and the acknowledgement leaves it out. */
    if (e == NULL)
      continue;
    if ((l->uris == NULL && (l->uris = json_object_new_object()) == NULL) ||
        add_subscriber(ctx, uri, e) != 0)
      return -1;
    json_object_object_add(l->uris, uri, NULL);
    json_object_array_add(granted, json_object_new_string(uri));
  }
  return 0;
}

static void on_listen(methods_ctx *ctx, request *r) {
  json_object *asked = NULL, *v, *granted, *params;
  listener *l;

  if (json_object_object_get_ex(r->params, "notifications", &asked) &&
      !json_object_is_type(asked, json_type_object)) {
    request_fail(r, JSONRPC_INVALID_PARAMS,
                 "Invalid params: notifications must be an object", NULL);
    return;
  }
  if (json_object_is_type(asked, json_type_object)) {
    for (size_t i = 0; i < sizeof(listen_flags) / sizeof(listen_flags[0]); i++)
      if (json_object_object_get_ex(asked, listen_flags[i].flag, &v) &&
          !json_object_is_type(v, json_type_boolean)) {
        fail_named(r, JSONRPC_INVALID_PARAMS,
                   "Invalid params: must be a boolean: notifications.",
                   listen_flags[i].flag, NULL);
        return;
      }
    if (json_object_object_get_ex(asked, "resourceSubscriptions", &v)) {
      int ok = json_object_is_type(v, json_type_array);
      for (size_t i = 0; ok && i < json_object_array_length(v); i++)
        ok = json_object_is_type(json_object_array_get_idx(v, i),
                                 json_type_string);
      if (!ok) {
        request_fail(r, JSONRPC_INVALID_PARAMS,
                     "Invalid params: notifications.resourceSubscriptions "
                     "must be an array of URIs",
                     NULL);
        return;
      }
    }
  }
  if ((l = calloc(1, sizeof(*l))) == NULL) {
    request_fail(r, JSONRPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  l->request = r;
  granted = json_object_new_object();
  for (size_t i = 0; i < sizeof(listen_flags) / sizeof(listen_flags[0]); i++)
    if (json_object_object_get_ex(asked, listen_flags[i].flag, &v) &&
        json_object_get_boolean(v) && listen_flags[i].declared) {
      l->kinds |= listen_flags[i].bit;
      json_object_object_add(granted, listen_flags[i].flag,
                             json_object_new_boolean(1));
    }
  if (json_object_object_get_ex(asked, "resourceSubscriptions", &v) &&
      MODERN_RESOURCES_SUBSCRIBE) {
    json_object *uris = json_object_new_array();
    json_object_object_add(granted, "resourceSubscriptions", uris);
    if (listen_resources(ctx, l, v, uris) != 0) {
      /* Undo what was counted; the listen never opened. */
      json_object_put(granted);
      l->next = ctx->listeners;
      ctx->listeners = l;
      listen_end(ctx, l, 0);
      return;
    }
  }
  l->next = ctx->listeners;
  ctx->listeners = l;
  /* The first message of the stream: what it will hear. */
  params = json_object_new_object();
  json_object_object_add(params, "notifications", granted);
  listen_notify(l, "notifications/subscriptions/acknowledged", params);
  /* The request stays in flight; the session indexes it by id, which is
   * what notifications/cancelled looks up. */
}

void methods_list_changed(methods_ctx *ctx, reg_kind kind) {
  static const char *const names[REG_KINDS] = {
      "notifications/tools/list_changed",
      "notifications/resources/list_changed",
      "notifications/resources/list_changed",
      "notifications/prompts/list_changed"};
  unsigned bit = kind == REG_TOOL     ? LISTEN_TOOLS
                 : kind == REG_PROMPT ? LISTEN_PROMPTS
                                      : LISTEN_RESOURCES;
  for (listener *l = ctx->listeners; l; l = l->next)
    if (l->kinds & bit)
      listen_notify(l, names[kind], NULL);
}

void methods_resource_updated(methods_ctx *ctx, const char *uri) {
  for (listener *l = ctx->listeners; l; l = l->next)
    if (l->uris != NULL && json_object_object_get_ex(l->uris, uri, NULL)) {
      json_object *params = json_object_new_object();
      json_object_object_add(params, "uri", json_object_new_string(uri));
      listen_notify(l, "notifications/resources/updated", params);
    }
}

int methods_init(methods_ctx *ctx, registry *reg, const options *opts,
                 call_exec *exec) {
  memset(ctx, 0, sizeof(*ctx));
  ctx->registry = reg;
  ctx->opts = opts;
  ctx->exec = exec;
  ctx->subscriptions = lh_kchar_table_new(16, NULL);
  return ctx->subscriptions ? 0 : -1;
}

void methods_free(methods_ctx *ctx) {
  struct lh_entry *ent;
  /* Their sessions were closed first, which ended them; what is left has
   * no session to answer. */
  while (ctx->listeners != NULL) {
    listener *l = ctx->listeners;
    ctx->listeners = l->next;
    json_object_put(l->uris);
    free(l);
  }
  json_object_put(ctx->initialize_meta);
  ctx->initialize_meta = NULL;
  if (ctx->subscriptions == NULL)
    return;
  lh_foreach(ctx->subscriptions, ent) {
    subscription *sub = (subscription *)lh_entry_v(ent);
    reg_entry_release(sub->entry);
    free(sub->uri);
    free(sub);
  }
  lh_table_free(ctx->subscriptions);
  ctx->subscriptions = NULL;
}

/* --- prompts and completion --------------------------------------------- */

/* An optional object of strings (prompt arguments, completion context):
 * a new reference, {} when absent; NULL after answering -32602. */
static json_object *string_map(request *r, json_object *obj, const char *key) {
  json_object *v;
  char text[300];

  if (!json_object_object_get_ex(obj, key, &v) ||
      json_object_is_type(v, json_type_null))
    return json_object_new_object();
  if (json_object_is_type(v, json_type_object)) {
    int ok = 1;
    json_object_object_foreach(v, k, item) {
      (void)k;
      if (!json_object_is_type(item, json_type_string))
        ok = 0;
    }
    if (ok)
      return json_object_get(v);
  }
  snprintf(text, sizeof(text),
           "Invalid params: %s must be an object of strings", key);
  request_fail(r, JSONRPC_INVALID_PARAMS, text, NULL);
  return NULL;
}

static void on_prompts_get(methods_ctx *ctx, request *r) {
  const char *name = string_param(r, r->params, "name", "");
  json_object *args, *answers;
  reg_entry *e;

  if (name == NULL)
    return;
  e = registry_find(ctx->registry, REG_PROMPT, name);
  if (e == NULL) {
    fail_named(r, JSONRPC_INVALID_PARAMS, "Unknown prompt: ", name, NULL);
    return;
  }
  if ((args = string_map(r, r->params, "arguments")) == NULL)
    return;
  for (size_t i = 0; i < e->n_arguments; i++)
    if (e->required[i] &&
        !json_object_object_get_ex(args, e->arguments[i], NULL)) {
      fail_named(r, JSONRPC_INVALID_PARAMS,
                 "Missing required argument: ", e->arguments[i], NULL);
      json_object_put(args);
      return;
    }
  if (retry_answers(ctx, r, "prompts/get", e->name, args, &answers) != 0) {
    json_object_put(args);
    return;
  }
  {
    call_args a = {.kind = CALL_PROMPT,
                   .entry = e,
                   .name = e->name,
                   .arguments = args,
                   .answers = answers};
    call_start(ctx->exec, r, &a);
  }
  json_object_put(args);
  json_object_put(answers);
}

/* Whether `e` (a prompt or template) has an argument called `name`. */
static int has_argument(const reg_entry *e, const char *name) {
  if (e->kind == REG_TEMPLATE) {
    for (size_t i = 0; i < uritpl_vars(e->tpl); i++)
      if (strcmp(uritpl_var(e->tpl, i), name) == 0)
        return 1;
    return 0;
  }
  for (size_t i = 0; i < e->n_arguments; i++)
    if (strcmp(e->arguments[i], name) == 0)
      return 1;
  return 0;
}

static void no_candidates(request *r) {
  json_object *completion = json_object_new_object();
  json_object *result = json_object_new_object();
  json_object_object_add(completion, "values", json_object_new_array());
  json_object_object_add(completion, "total", json_object_new_int(0));
  json_object_object_add(completion, "hasMore", json_object_new_boolean(0));
  json_object_object_add(result, "completion", completion);
  request_reply(r, result);
}

static void on_complete(methods_ctx *ctx, request *r) {
  json_object *ref, *argument, *context, *ctx_args;
  const char *type, *key, *name, *value;
  reg_entry *e;

  if (!json_object_object_get_ex(r->params, "ref", &ref) ||
      !json_object_is_type(ref, json_type_object) ||
      !json_object_object_get_ex(r->params, "argument", &argument) ||
      !json_object_is_type(argument, json_type_object)) {
    request_fail(r, JSONRPC_INVALID_PARAMS,
                 "Invalid params: ref and argument must be objects", NULL);
    return;
  }
  if ((type = string_param(r, ref, "type", "ref.")) == NULL)
    return;
  if (strcmp(type, "ref/prompt") == 0) {
    if ((key = string_param(r, ref, "name", "ref.")) == NULL)
      return;
    e = registry_find(ctx->registry, REG_PROMPT, key);
    if (e == NULL) {
      fail_named(r, JSONRPC_INVALID_PARAMS, "Unknown prompt: ", key, NULL);
      return;
    }
  } else if (strcmp(type, "ref/resource") == 0) {
    if ((key = string_param(r, ref, "uri", "ref.")) == NULL)
      return;
    e = registry_find(ctx->registry, REG_TEMPLATE, key);
    if (e == NULL) {
      /* A plain resource has nothing to complete. */
      if (registry_find(ctx->registry, REG_RESOURCE, key) != NULL)
        no_candidates(r);
      else
        fail_named(r, JSONRPC_INVALID_PARAMS,
                   "Unknown resource template: ", key, NULL);
      return;
    }
  } else {
    fail_named(r, JSONRPC_INVALID_PARAMS,
               "Invalid params: ref.type must be ref/prompt or ref/resource, "
               "not ",
               type, NULL);
    return;
  }
  if ((name = string_param(r, argument, "name", "argument.")) == NULL ||
      (value = string_param(r, argument, "value", "argument.")) == NULL)
    return;
  if (!has_argument(e, name)) {
    fail_named(r, JSONRPC_INVALID_PARAMS, "Unknown argument: ", name, NULL);
    return;
  }
  if (e->complete == NULL && !e->remote) {
    no_candidates(r);
    return;
  }
  if (json_object_object_get_ex(r->params, "context", &context) &&
      json_object_is_type(context, json_type_object))
    ctx_args = string_map(r, context, "arguments");
  else
    ctx_args = json_object_new_object();
  if (ctx_args == NULL)
    return;
  {
    call_args a = {.kind = CALL_COMPLETE,
                   .entry = e,
                   .name = e->name,
                   .arguments = ctx_args,
                   .argument = name,
                   .value = value};
    call_start(ctx->exec, r, &a);
  }
  json_object_put(ctx_args);
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

/* Whether header text `text` is the argument `arg` written as a header:
 * strings byte for byte, numbers by value, booleans as true/false. */
static int param_equal(json_object *arg, const char *text, size_t len) {
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

/* 2026-07-28 over HTTP: an argument whose schema property names an
 * "x-mcp-header" comes with the same value in its Mcp-Param-<name>
 * header, and a header comes only with its argument.  Returns 0, or -1
 * after answering -32020. */
static int param_headers_match(request *r, json_object *schema,
                               json_object *args) {
  json_object *props;

  if (r->header == NULL ||
      !json_object_object_get_ex(schema, "properties", &props) ||
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
    rc = r->header(r->header_ctx, header, &v);
    if (rc < 0 || v.failed)
      why = "is not valid (bad =?base64?...?= encoding)";
    else if (rc == 0 && arg != NULL)
      why = "is required: its argument is in the body";
    else if (rc == 1 && arg == NULL)
      why = "has no argument in the body";
    else if (rc == 1 && !param_equal(arg, v.data != NULL ? v.data : "", v.len))
      why = "does not match the request body";
    strbuf_free(&v);
    if (why != NULL) {
      snprintf(text, sizeof(text), "Header mismatch: the %s header %s", header,
               why);
      request_fail(r, SESSION_ERR_HEADER_MISMATCH, text, NULL);
      return -1;
    }
  }
  return 0;
}

static void on_tools_call(methods_ctx *ctx, request *r) {
  json_object *v, *args = NULL, *answers;
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
  tool = registry_find(ctx->registry, REG_TOOL, name);
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
  if (param_headers_match(r, tool->input_schema, args) != 0) {
    json_object_put(args);
    return;
  }
  if (schema_validate(tool->input_schema, args, err, sizeof(err)) != 0) {
    snprintf(text, sizeof(text), "Invalid arguments for tool %s: %s", name,
             err);
    json_object_put(args);
    request_reply(r, error_result(text));
    return;
  }
  if (retry_answers(ctx, r, "tools/call", tool->name, args, &answers) != 0) {
    json_object_put(args);
    return;
  }
  {
    call_args a = {.kind = CALL_TOOL,
                   .entry = tool,
                   .name = tool->name,
                   .arguments = args,
                   .answers = answers};
    call_start(ctx->exec, r, &a);
  }
  json_object_put(args);
  json_object_put(answers);
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
  listener *l;
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
  if (r->call == NULL && (l = find_listener(ctx, r)) != NULL) {
    /* A listen ends here, with nothing more sent for it. */
    listen_end(ctx, l, 0);
    return;
  }
  r->cancelled = 1;
  if (r->call)
    call_cancel(r->call);
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
  json_object *roots;
  roots_fetch *f;

  if (!json_object_object_get_ex(s->client_capabilities, "roots", &roots) ||
      !json_object_is_type(roots, json_type_object))
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
