/* SPDX-License-Identifier: MIT */
/* calls.c -- the methods that run plugin code: tools/call,
 * resources/read, prompts/get and completion/complete.  Each finds its
 * entry, checks the arguments and hands the call to call_start(). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "era.h"
#include "jsonrpc.h"
#include "request_state.h"
#include "schema.h"
#include "tasks.h"
#include "utf8.h"

/* Reads stay uncached: what a read returns can change at any moment and
 * nothing tells a plugin's resource apart from a volatile one; only
 * subscribers hear of it.  (methods.c gives the other cacheable results
 * their TTLs.) */
#define CACHE_TTL_READ_MS 0
/* No list or read sees the caller, so every cacheable result is public. */
#define CACHE_SCOPE "public"

void calls_cacheable(request *r, long long ttl_ms) {
  if (r->modern) {
    r->cache_scope = CACHE_SCOPE;
    r->ttl_ms = ttl_ms;
  }
}

/* A string member of params, and its length in *len; NULL (after
 * answering -32602) when it is missing or not a string. */
static const char *string_param(request *r, json_object *obj, const char *key,
                                const char *where, size_t *len) {
  json_object *v;
  char text[200];
  if (json_object_object_get_ex(obj, key, &v) &&
      json_object_is_type(v, json_type_string)) {
    *len = (size_t)json_object_get_string_len(v);
    return json_object_get_string(v);
  }
  snprintf(text, sizeof(text), "Invalid params: %s%s must be a string", where,
           key);
  request_fail(r, JSONRPC_INVALID_PARAMS, text, NULL);
  return NULL;
}

/* A name member of params (a tool's, a prompt's, an argument's, a URI, a
 * type), read as string_param() reads it.  Text holding a NUL character
 * is no name at all, whatever it starts with (see jsonrpc_name()): it is
 * answered as an unknown name, with `unknown` and the text (its NULs
 * shown as \u0000) and -32602, and NULL is returned. */
static const char *name_param(request *r, json_object *obj, const char *key,
                              const char *where, const char *unknown) {
  size_t n, o = 0;
  const char *s = string_param(r, obj, key, where, &n);
  char shown[260];

  if (s == NULL || strlen(s) == n)
    return s;
  for (size_t i = 0; i < n && o < sizeof(shown) - 7; i++) {
    if (s[i] != '\0') {
      shown[o++] = s[i];
      continue;
    }
    memcpy(shown + o, "\\u0000", 6);
    o += 6;
  }
  shown[o] = '\0';
  calls_fail_named(r, JSONRPC_INVALID_PARAMS, unknown, shown, NULL);
  return NULL;
}

void calls_fail_named(request *r, int code, const char *prefix,
                      const char *name, json_object *data) {
  char text[400];
  snprintf(text, sizeof(text), "%s%.*s", prefix,
           (int)utf8_cut(name, strlen(name), 200), name);
  request_fail(r, code, text, data);
}

json_object *calls_uri_data(const char *uri) {
  json_object *data = json_object_new_object();
  json_object_object_add(data, "uri", json_object_new_string(uri));
  return data;
}

reg_entry *calls_resolve_uri(registry *reg, const char *uri,
                             json_object **vars) {
  reg_entry *e = registry_find(reg, REG_RESOURCE, uri);
  *vars = NULL;
  return e != NULL ? e : registry_match(reg, uri, vars);
}

const char *calls_uri_param(request *r) {
  const char *uri = name_param(r, r->params, "uri", "",
                               "Invalid params: not an absolute URI: ");
  if (uri != NULL && !registry_valid_uri(uri)) {
    calls_fail_named(r, JSONRPC_INVALID_PARAMS,
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
static int retry_answers(call_exec *exec, request *r, const char *what,
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
  /* A state holding a NUL character is none we gave: read as C text, a
   * real one with junk after a NUL would pass. */
  if (state != NULL && jsonrpc_name(state) == NULL) {
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
  if (request_state_open(exec->state_key, json_object_get_string(state), what,
                         name, args, request_state_now_ms(), &carried, why,
                         sizeof(why)) != 0) {
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

void calls_resources_read(registry *reg, call_exec *exec, request *r) {
  json_object *vars, *answers;
  const char *uri = calls_uri_param(r);
  reg_entry *e;

  if (uri == NULL)
    return;
  e = calls_resolve_uri(reg, uri, &vars);
  if (e == NULL) {
    /* 2026-07-28 moved "not found" to invalid params. */
    calls_fail_named(
        r, r->modern ? JSONRPC_INVALID_PARAMS : JSONRPC_RESOURCE_NOT_FOUND,
        "Resource not found: ", uri, calls_uri_data(uri));
    return;
  }
  if (retry_answers(exec, r, "resources/read", uri, NULL, &answers) != 0) {
    json_object_put(vars);
    return;
  }
  calls_cacheable(r, CACHE_TTL_READ_MS);
  {
    call_args a = {.kind = CALL_READ,
                   .entry = e,
                   .name = uri,
                   .variables = vars,
                   .answers = answers};
    call_start(exec, r, &a);
  }
  json_object_put(vars);
  json_object_put(answers);
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

void calls_prompts_get(registry *reg, call_exec *exec, request *r) {
  const char *name = name_param(r, r->params, "name", "", "Unknown prompt: ");
  json_object *args, *answers;
  reg_entry *e;

  if (name == NULL)
    return;
  e = registry_find(reg, REG_PROMPT, name);
  if (e == NULL) {
    calls_fail_named(r, JSONRPC_INVALID_PARAMS, "Unknown prompt: ", name, NULL);
    return;
  }
  if ((args = string_map(r, r->params, "arguments")) == NULL)
    return;
  for (size_t i = 0; i < e->n_arguments; i++)
    if (e->required[i] &&
        !json_object_object_get_ex(args, e->arguments[i], NULL)) {
      calls_fail_named(r, JSONRPC_INVALID_PARAMS,
                       "Missing required argument: ", e->arguments[i], NULL);
      json_object_put(args);
      return;
    }
  if (retry_answers(exec, r, "prompts/get", e->name, args, &answers) != 0) {
    json_object_put(args);
    return;
  }
  {
    call_args a = {.kind = CALL_PROMPT,
                   .entry = e,
                   .name = e->name,
                   .arguments = args,
                   .answers = answers};
    call_start(exec, r, &a);
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

void calls_complete(registry *reg, call_exec *exec, request *r) {
  json_object *ref, *argument, *context, *ctx_args;
  const char *type, *key, *name, *value;
  size_t len;
  reg_entry *e;

  if (!json_object_object_get_ex(r->params, "ref", &ref) ||
      !json_object_is_type(ref, json_type_object) ||
      !json_object_object_get_ex(r->params, "argument", &argument) ||
      !json_object_is_type(argument, json_type_object)) {
    request_fail(r, JSONRPC_INVALID_PARAMS,
                 "Invalid params: ref and argument must be objects", NULL);
    return;
  }
  if ((type = name_param(r, ref, "type", "ref.",
                         "Invalid params: ref.type must be ref/prompt or "
                         "ref/resource, not ")) == NULL)
    return;
  if (strcmp(type, "ref/prompt") == 0) {
    if ((key = name_param(r, ref, "name", "ref.", "Unknown prompt: ")) == NULL)
      return;
    e = registry_find(reg, REG_PROMPT, key);
    if (e == NULL) {
      calls_fail_named(r, JSONRPC_INVALID_PARAMS, "Unknown prompt: ", key,
                       NULL);
      return;
    }
  } else if (strcmp(type, "ref/resource") == 0) {
    if ((key = name_param(r, ref, "uri", "ref.",
                          "Unknown resource template: ")) == NULL)
      return;
    e = registry_find(reg, REG_TEMPLATE, key);
    if (e == NULL) {
      /* A plain resource has nothing to complete. */
      if (registry_find(reg, REG_RESOURCE, key) != NULL)
        no_candidates(r);
      else
        calls_fail_named(r, JSONRPC_INVALID_PARAMS,
                         "Unknown resource template: ", key, NULL);
      return;
    }
  } else {
    calls_fail_named(
        r, JSONRPC_INVALID_PARAMS,
        "Invalid params: ref.type must be ref/prompt or ref/resource, "
        "not ",
        type, NULL);
    return;
  }
  if ((name = name_param(r, argument, "name", "argument.",
                         "Unknown argument: ")) == NULL ||
      (value = string_param(r, argument, "value", "argument.", &len)) == NULL)
    return;
  if (!has_argument(e, name)) {
    calls_fail_named(r, JSONRPC_INVALID_PARAMS, "Unknown argument: ", name,
                     NULL);
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
    call_start(exec, r, &a);
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

void calls_tools_call(registry *reg, call_exec *exec, tasks *ts, request *r) {
  const char *name = name_param(r, r->params, "name", "", "Unknown tool: ");
  json_object *args = NULL, *answers;
  reg_tool *tool;
  char err[512], text[700];
  era_error herr;

  if (name == NULL)
    return;
  if (json_object_object_get_ex(r->params, "arguments", &args) &&
      !json_object_is_type(args, json_type_null) &&
      !json_object_is_type(args, json_type_object)) {
    request_fail(r, JSONRPC_INVALID_PARAMS,
                 "Invalid params: arguments must be an object", NULL);
    return;
  }
  tool = registry_find(reg, REG_TOOL, name);
  if (tool == NULL) {
    calls_fail_named(r, JSONRPC_INVALID_PARAMS, "Unknown tool: ", name, NULL);
    return;
  }
  if (tasks_refuse(ts, r, tool))
    return;
  /* params may be shared: an absent arguments object is made, not added. */
  if (args == NULL || json_object_is_type(args, json_type_null))
    args = json_object_new_object();
  else
    json_object_get(args);
  if (r->header != NULL &&
      era_check_param_headers(r->header, r->header_ctx, tool->input_schema,
                              args, &herr) != 0) {
    json_object_put(args);
    request_fail(r, herr.code, herr.message, herr.data);
    return;
  }
  if (schema_validate(tool->input_schema, args, err, sizeof(err)) != 0) {
    snprintf(text, sizeof(text), "Invalid arguments for tool %s: %s", name,
             err);
    json_object_put(args);
    request_reply(r, error_result(text));
    return;
  }
  if (retry_answers(exec, r, "tools/call", tool->name, args, &answers) != 0) {
    json_object_put(args);
    return;
  }
  /* A task, or a refusal of one, answers here; otherwise the call runs
   * (and may turn into a task on its tool's request). */
  if (tasks_tools_call(ts, r, tool, args, answers)) {
    json_object_put(args);
    json_object_put(answers);
    return;
  }
  {
    call_args a = {.kind = CALL_TOOL,
                   .entry = tool,
                   .name = tool->name,
                   .arguments = args,
                   .answers = answers};
    call_start(exec, r, &a);
  }
  json_object_put(args);
  json_object_put(answers);
}
