/* SPDX-License-Identifier: MIT */
/* methods.h -- the MCP methods mcpd answers, from one static table.
 *
 * The handlers answer from the registry and start tool calls; what they
 * need is named in `methods_ctx`, which the owner of the sessions passes
 * as the session_handler's argument. */
#ifndef MCPD_METHODS_H
#define MCPD_METHODS_H

#include <json-c/json.h>

#include "call.h"
#include "methods_settings.h"
#include "registry.h"
#include "session.h"
#include "subscribe.h"
#include "tasks.h"

typedef struct methods_ctx {
  registry *registry;
  const methods_settings *opts;
  call_exec *exec;
  subscribe_ctx subs; /* subscriptions and listen streams */
  tasks tasks;        /* tool calls that outlive their request */
  /* Runs on the loop when a session's roots changed (the owner tells the
   * plugins). */
  void (*roots_changed_cb)(void *arg);
  /* The initialize result's _meta (a worker names its plugin there), or
   * NULL; owned, freed by methods_free(). */
  json_object *initialize_meta;
  void *arg;
} methods_ctx;

int methods_init(methods_ctx *ctx, registry *reg, const methods_settings *opts,
                 call_exec *exec);
/* Forgets every subscription without telling plugins (they are being
 * unloaded too). */
void methods_free(methods_ctx *ctx);
/* Shutdown: tasks still running are cancelled (`abandon`: answered now);
 * no new task expires. */
void methods_shutdown(methods_ctx *ctx, int abandon);

/* The owner tells the methods what they cannot see themselves: a session
 * went away (its subscriptions end; its open listen streams get their
 * final response first, as at shutdown), the registry changed (subscriptions
 * follow the entries that now serve their URIs). */
void methods_session_closed(methods_ctx *ctx, session *s);
void methods_registry_changed(methods_ctx *ctx);
/* What a listen stream hears, as the owner learns of it: a list changed
 * (REG_TOOL, REG_RESOURCE -- templates too -- or REG_PROMPT), or the
 * resource at `uri` changed.  Each open listen that asked for it gets the
 * notification tagged with its subscription id. */
void methods_list_changed(methods_ctx *ctx, reg_kind kind);
void methods_resource_updated(methods_ctx *ctx, const char *uri);
/* Whether session `s` subscribed to `uri`. */
int methods_subscribed(const session *s, const char *uri);

/* session_handler.request: answers `r` exactly once, now or when its work
 * completes.  `ctx` is a methods_ctx. */
void methods_request(void *ctx, request *r);
/* session_handler.notification: unknown notifications are ignored. */
void methods_notification(void *ctx, session *s, const char *method,
                          json_object *params);

#endif
