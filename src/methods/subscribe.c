/* SPDX-License-Identifier: MIT */
/* subscribe.c -- who hears of a resource that changed: legacy
 * resources/subscribe, modern subscriptions/listen, and the URI -> entry
 * bookkeeping that tells plugins of their subscribers.  See subscribe.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/linkhash.h>

#include "call.h"
#include "calls.h"
#include "era.h"
#include "jsonrpc.h"
#include "subscribe.h"

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
  json_object *task_ids; /* the granted taskIds (keys), or NULL */
  struct listener *next;
};
static void listen_end(subscribe_ctx *ctx, listener *l, int answer);

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
static void retarget(subscribe_ctx *ctx, subscription *sub, reg_entry *now) {
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

static void drop_subscriber(subscribe_ctx *ctx, const char *uri) {
  subscription *sub;
  void *v;
  if (!lh_table_lookup_ex(ctx->by_uri, uri, &v))
    return;
  sub = v;
  if (--sub->sessions > 0)
    return;
  retarget(ctx, sub, NULL);
  lh_table_delete(ctx->by_uri, sub->uri);
  free(sub->uri);
  free(sub);
}

/* Counts one more subscriber of `uri`, served by `e`: a legacy session
 * or a listen stream.  Returns 0, or -1 when out of memory. */
static int add_subscriber(subscribe_ctx *ctx, const char *uri, reg_entry *e) {
  subscription *sub;
  void *v;

  if (lh_table_lookup_ex(ctx->by_uri, uri, &v)) {
    sub = v;
  } else {
    sub = calloc(1, sizeof(*sub));
    if (sub == NULL || (sub->uri = strdup(uri)) == NULL ||
        lh_table_insert(ctx->by_uri, sub->uri, sub) != 0) {
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

static void subscribed_cb(void *arg) {
  request_reply(arg, NULL);
}

void subscribe_resource(subscribe_ctx *ctx, request *r) {
  session *s = r->session;
  const char *uri = calls_uri_param(r);
  json_object *vars;
  reg_entry *e;

  if (uri == NULL)
    return;
  e = calls_resolve_uri(ctx->registry, uri, &vars);
  json_object_put(vars);
  if (e == NULL) {
    calls_fail_named(r, JSONRPC_RESOURCE_NOT_FOUND, "Resource not found: ", uri,
                     calls_uri_data(uri));
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
  /* A plugin in a worker has its subscription once the worker handled
   * it: answering then means a change right after the answer is told,
   * as in-process. */
  if (call_subscribe_settled(e, subscribed_cb, r) != 0)
    request_reply(r, NULL);
}

void subscribe_unsubscribe(subscribe_ctx *ctx, request *r) {
  session *s = r->session;
  const char *uri = calls_uri_param(r);

  if (uri == NULL)
    return;
  if (s->subscriptions != NULL &&
      json_object_object_get_ex(s->subscriptions, uri, NULL)) {
    drop_subscriber(ctx, uri);
    json_object_object_del(s->subscriptions, uri);
  }
  request_reply(r, NULL);
}

int subscribe_session_has(const session *s, const char *uri) {
  return s->subscriptions != NULL &&
         json_object_object_get_ex(s->subscriptions, uri, NULL);
}

void subscribe_session_closed(subscribe_ctx *ctx, session *s) {
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

void subscribe_registry_changed(subscribe_ctx *ctx) {
  struct lh_entry *ent;
  lh_foreach(ctx->by_uri, ent) {
    subscription *sub = (subscription *)lh_entry_v(ent);
    json_object *vars;
    reg_entry *now = calls_resolve_uri(ctx->registry, sub->uri, &vars);
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
 * legacy sessions' in ctx->by_uri, so a plugin hears of the first
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
  json_object_object_add(meta, ERA_META_SUBSCRIPTION_ID,
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
static void listen_end(subscribe_ctx *ctx, listener *l, int answer) {
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
  json_object_put(l->task_ids);
  if (answer) {
    json_object *result = json_object_new_object();
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, ERA_META_SUBSCRIPTION_ID,
                           json_object_get(r->id));
    json_object_object_add(result, "_meta", meta);
    request_reply(r, result);
  } else {
    r->cancelled = 1; /* frees it without a word */
    request_reply(r, NULL);
  }
  free(l);
}

static listener *find_listener(subscribe_ctx *ctx, const request *r) {
  for (listener *l = ctx->listeners; l; l = l->next)
    if (l->request == r)
      return l;
  return NULL;
}

/* Grants the resource subscriptions of `asked` (an array of strings) that
 * name a resource served now, into l->uris and `granted`.  Returns 0, or
 * -1 when out of memory. */
static int listen_resources(subscribe_ctx *ctx, listener *l, json_object *asked,
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
    e = calls_resolve_uri(ctx->registry, uri, &vars);
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

/* Grants the taskIds of `asked` that the caller may see, into
 * l->task_ids and `granted`, for a request that negotiated the tasks
 * extension.  Returns 0, or -1 when out of memory. */
static int listen_tasks(subscribe_ctx *ctx, listener *l, json_object *asked,
                        json_object *granted) {
  size_t n = json_object_array_length(asked);
  json_object *ext;

  if (ctx->task_visible == NULL ||
      !json_object_object_get_ex(l->request->client_capabilities, "extensions",
                                 &ext) ||
      !json_object_object_get_ex(ext, ERA_EXT_TASKS, NULL))
    return 0;
  for (size_t i = 0; i < n; i++) {
    const char *id =
        json_object_get_string(json_object_array_get_idx(asked, i));
    if (!ctx->task_visible(ctx->task_arg, id, l->request) ||
        (l->task_ids != NULL &&
         json_object_object_get_ex(l->task_ids, id, NULL)))
      continue;
    if (l->task_ids == NULL && (l->task_ids = json_object_new_object()) == NULL)
      return -1;
    json_object_object_add(l->task_ids, id, NULL);
    json_object_array_add(granted, json_object_new_string(id));
  }
  return 0;
}

/* Whether `v` is an array of strings. */
static int string_array(json_object *v) {
  int ok = json_object_is_type(v, json_type_array);
  for (size_t i = 0; ok && i < json_object_array_length(v); i++)
    ok = json_object_is_type(json_object_array_get_idx(v, i), json_type_string);
  return ok;
}

void subscribe_task_changed(subscribe_ctx *ctx, const char *id,
                            json_object *task) {
  for (listener *l = ctx->listeners; l; l = l->next)
    if (l->task_ids != NULL &&
        json_object_object_get_ex(l->task_ids, id, NULL)) {
      json_object *copy = NULL;
      if (json_object_deep_copy(task, &copy, NULL) == 0)
        listen_notify(l, "notifications/tasks", copy);
    }
  json_object_put(task);
}

void subscribe_listen(subscribe_ctx *ctx, request *r) {
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
        calls_fail_named(r, JSONRPC_INVALID_PARAMS,
                         "Invalid params: must be a boolean: notifications.",
                         listen_flags[i].flag, NULL);
        return;
      }
    if (json_object_object_get_ex(asked, "taskIds", &v) && !string_array(v)) {
      request_fail(r, JSONRPC_INVALID_PARAMS,
                   "Invalid params: notifications.taskIds must be an array "
                   "of task ids",
                   NULL);
      return;
    }
    if (json_object_object_get_ex(asked, "resourceSubscriptions", &v)) {
      if (!string_array(v)) {
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
  if (json_object_object_get_ex(asked, "taskIds", &v)) {
    json_object *ids = json_object_new_array();
    json_object_object_add(granted, "taskIds", ids);
    if (listen_tasks(ctx, l, v, ids) != 0) {
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

void subscribe_list_changed(subscribe_ctx *ctx, reg_kind kind) {
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

void subscribe_resource_updated(subscribe_ctx *ctx, const char *uri) {
  for (listener *l = ctx->listeners; l; l = l->next)
    if (l->uris != NULL && json_object_object_get_ex(l->uris, uri, NULL)) {
      json_object *params = json_object_new_object();
      json_object_object_add(params, "uri", json_object_new_string(uri));
      listen_notify(l, "notifications/resources/updated", params);
    }
}

int subscribe_cancel(subscribe_ctx *ctx, request *r) {
  listener *l;
  if (r->call != NULL || (l = find_listener(ctx, r)) == NULL)
    return 0;
  listen_end(ctx, l, 0);
  return 1;
}

int subscribe_init(subscribe_ctx *ctx, registry *reg) {
  memset(ctx, 0, sizeof(*ctx));
  ctx->registry = reg;
  ctx->by_uri = lh_kchar_table_new(16, NULL);
  return ctx->by_uri ? 0 : -1;
}

void subscribe_free(subscribe_ctx *ctx) {
  struct lh_entry *ent;
  /* Their sessions were closed first, which ended them; what is left has
   * no session to answer. */
  while (ctx->listeners != NULL) {
    listener *l = ctx->listeners;
    ctx->listeners = l->next;
    json_object_put(l->uris);
    free(l);
  }
  if (ctx->by_uri == NULL)
    return;
  lh_foreach(ctx->by_uri, ent) {
    subscription *sub = (subscription *)lh_entry_v(ent);
    reg_entry_release(sub->entry);
    free(sub->uri);
    free(sub);
  }
  lh_table_free(ctx->by_uri);
  ctx->by_uri = NULL;
}
