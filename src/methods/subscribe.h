/* SPDX-License-Identifier: MIT */
/* subscribe.h -- who hears of a resource that changed: resources/subscribe
 * and unsubscribe of legacy sessions, and the subscriptions/listen streams
 * of the 2026-07-28 era.
 *
 * Per URI it counts the subscribers of both eras and keeps a reference on
 * the entry whose plugin was told, so a plugin hears of the first
 * subscriber and of the last one leaving; when the registry changes
 * (a reload) each URI follows the entry that now serves it. */
#ifndef MCPD_SUBSCRIBE_H
#define MCPD_SUBSCRIBE_H

#include <json-c/json.h>

#include "registry.h"
#include "session.h"

/* What server/discover declares beside tools, resources, prompts, logging
 * and completions; subscriptions/listen grants by the same values. */
#define MODERN_TOOLS_LIST_CHANGED 1
#define MODERN_RESOURCES_LIST_CHANGED 1
#define MODERN_PROMPTS_LIST_CHANGED 1
#define MODERN_RESOURCES_SUBSCRIBE 1

typedef struct subscribe_ctx {
  registry *registry;
  struct lh_table *by_uri; /* URI -> who subscribed, what was told */
  /* Open subscriptions/listen streams (2026-07-28), newest first. */
  struct listener *listeners;
  /* Whether the caller of `r` may hear of task `id` (a listen's
   * taskIds); NULL grants none.  Set by the owner. */
  int (*task_visible)(void *arg, const char *id, const request *r);
  void *task_arg;
} subscribe_ctx;

int subscribe_init(subscribe_ctx *ctx, registry *reg);
/* Forgets every subscription without telling plugins (they are being
 * unloaded too). */
void subscribe_free(subscribe_ctx *ctx);

/* resources/subscribe, resources/unsubscribe (legacy sessions) and
 * subscriptions/listen (modern): each answers `r`, except that a listen
 * stays in flight until it is cancelled or its session closes. */
void subscribe_resource(subscribe_ctx *ctx, request *r);
void subscribe_unsubscribe(subscribe_ctx *ctx, request *r);
void subscribe_listen(subscribe_ctx *ctx, request *r);
/* The client cancelled `r`: when it is an open listen, it ends without a
 * response and this returns 1; else 0. */
int subscribe_cancel(subscribe_ctx *ctx, request *r);
/* Task `id` changed: each open listen that asked for it (taskIds) gets
 * notifications/tasks with `task` (consumed). */
void subscribe_task_changed(subscribe_ctx *ctx, const char *id,
                            json_object *task);

/* Session `s` went away: its subscriptions end, and its open listens get
 * their final response first, as at shutdown. */
void subscribe_session_closed(subscribe_ctx *ctx, session *s);
/* The registry changed: each URI follows the entry that now serves it. */
void subscribe_registry_changed(subscribe_ctx *ctx);
/* A list changed (REG_TOOL, REG_RESOURCE -- templates too -- or
 * REG_PROMPT), or the resource at `uri` changed: each open listen that
 * asked for it gets the notification tagged with its subscription id. */
void subscribe_list_changed(subscribe_ctx *ctx, reg_kind kind);
void subscribe_resource_updated(subscribe_ctx *ctx, const char *uri);
/* Whether session `s` subscribed to `uri`. */
int subscribe_session_has(const session *s, const char *uri);

#endif
