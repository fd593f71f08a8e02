/* SPDX-License-Identifier: MIT */
/* calls.h -- the methods that run plugin code: tools/call, resources/read,
 * prompts/get and completion/complete.
 *
 * Each handler finds what the request names in the registry, checks its
 * arguments (the tool's schema, the prompt's required arguments, the
 * Mcp-Param-* headers, a retry's inputResponses and requestState) and
 * hands the call to call_start(), which answers the request.  The method
 * table (methods.c) calls them; subscribe.c shares the URI checks. */
#ifndef MCPD_CALLS_H
#define MCPD_CALLS_H

#include <json-c/json.h>

#include "call.h"
#include "registry.h"
#include "session.h"

struct tasks;

/* Each answers `r` exactly once, now or when its call completes. */
void calls_tools_call(registry *reg, call_exec *exec, struct tasks *ts,
                      request *r);
void calls_resources_read(registry *reg, call_exec *exec, request *r);
void calls_prompts_get(registry *reg, call_exec *exec, request *r);
void calls_complete(registry *reg, call_exec *exec, request *r);

/* Marks a modern request's result cacheable for `ttl_ms`, by anyone
 * (nothing mcpd answers depends on who asks); nothing for a legacy one. */
void calls_cacheable(request *r, long long ttl_ms);

/* The request's "uri" param, checked (a string, an absolute URI); NULL
 * after answering -32602. */
const char *calls_uri_param(request *r);
/* The entry that serves reads of `uri`: a resource of that exact URI,
 * else the first template it matches (then *vars gets the variables, a
 * reference the caller puts; else NULL). */
reg_entry *calls_resolve_uri(registry *reg, const char *uri,
                             json_object **vars);
/* Fails `r` with `prefix` and `name` cut to a sane length; consumes
 * `data`. */
void calls_fail_named(request *r, int code, const char *prefix,
                      const char *name, json_object *data);
/* {"uri": uri}: the data of a "Resource not found" error. */
json_object *calls_uri_data(const char *uri);

#endif
