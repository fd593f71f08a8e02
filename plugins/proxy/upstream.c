/* SPDX-License-Identifier: MIT */
/* upstream.c -- one upstream MCP server, spoken to as its client.
 *
 * Its life: start (spawn or connect), `initialize`, then list what it
 * offers and keep those lists current on its list_changed; forward calls
 * and answer its requests; when it goes away, fail what was in flight,
 * withdraw its entries and start it again after a backoff (1 s, doubling
 * to 30 s; back to 1 s once it stayed up a minute).
 *
 * The proxy declares every client capability (sampling, elicitation in
 * both modes, roots) so the upstream offers everything; each request the
 * upstream sends is put to the client whose call it is serving -- over
 * HTTP the response stream it came on says which, over stdio the newest
 * call in flight is taken -- and a client that cannot answer gets the
 * upstream an error, as it would have had without the proxy.
 *
 * Roots: an upstream asks for them outside any call, but mcpd knows a
 * client's roots only through a call.  So each tool and prompt call first
 * compares its client's roots with those the upstream last got; when they
 * differ the upstream is told (notifications/roots/list_changed) and the
 * call waits until the upstream has fetched them, or 500 ms.
 *
 * Everything here runs on the proxy thread. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

#define PROTOCOL_VERSION "2025-11-25"
#define MODERN_VERSION "2026-07-28"
#define MODERN_META "io.modelcontextprotocol/"
#define INIT_TIMEOUT_MS 30000
#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 30000
#define STABLE_MS 60000
#define ROOTS_HOLD_MS 500
/* input_required rounds one call may take before it fails. */
#define MAX_ROUNDS 16
/* A listing whose nextCursor never ends is cut off here. */
#define LIST_MAX_ITEMS 100000
#define LIST_MAX_PAGES 10000

typedef enum what { P_INIT, P_DISCOVER, P_LIST, P_CALL, P_TASK, P_QUIET } what;

struct px_pending {
  px_pending *next;
  int64_t id;
  what what;
  px_kind kind;     /* P_LIST */
  json_object *acc; /* P_LIST: the items of the pages so far */
  char *cursor;     /* P_LIST: the cursor asked with, or NULL */
  int pages;        /* P_LIST: which page this is, from 1 */
  int64_t deadline; /* P_LIST: when it has failed unanswered */
  mcpd_call *call;  /* P_CALL, P_TASK */
  px_call_kind call_kind;
  char *task_id;    /* a tool run as a task upstream: its id there */
  json_object *msg; /* a call held until the roots are fetched */
  /* A call to a 2026-07-28 upstream: its method and params, to send again
   * with the answers to an input_required round; the answers so far and
   * how many are still to come. */
  const char *method;
  json_object *params;
  json_object *answers;
  json_object *state;
  int waiting;
  int rounds; /* input_required rounds so far */
};

px_upstream *up_new(px *p, const char *name, json_object *def, char **errmsg) {
  px_upstream *u = calloc(1, sizeof(*u));
  if (u == NULL || (u->name = strdup(name)) == NULL) {
    free(u);
    *errmsg = p->host->mprintf("config: out of memory");
    return NULL;
  }
  u->px = p;
  u->next_id = 1;
  u->backoff_ms = BACKOFF_MIN_MS;
  if (up_read_config(u, def, errmsg) != MCPD_OK) {
    up_free(u);
    return NULL;
  }
  return u;
}

static void pending_free(px_pending *q) {
  json_object_put(q->acc);
  free(q->cursor);
  json_object_put(q->msg);
  json_object_put(q->params);
  json_object_put(q->answers);
  json_object_put(q->state);
  free(q->task_id);
  free(q);
}

void up_free(px_upstream *u) {
  if (u == NULL)
    return;
  while (u->pending != NULL) {
    px_pending *q = u->pending;
    u->pending = q->next;
    pending_free(q);
  }
  ent_forget(u);
  for (size_t i = 0; i < u->n_subs; i++)
    free(u->subs[i]);
  free(u->subs);
  free(u->roots);
  json_object_put(u->caps);
  up_config_free(u);
  free(u->name);
  free(u);
}

/* --- sending ---------------------------------------------------------- */

/* What the proxy declares as a client: everything, so the upstream offers
 * everything; a call whose client cannot answer gets its upstream an
 * error. */
static json_object *client_caps(void) {
  json_object *caps = json_object_new_object();
  json_object *elicit = json_object_new_object();
  json_object *roots = json_object_new_object();
  json_object_object_add(elicit, "form", json_object_new_object());
  json_object_object_add(elicit, "url", json_object_new_object());
  json_object_object_add(roots, "listChanged", json_object_new_boolean(1));
  json_object_object_add(caps, "roots", roots);
  json_object_object_add(caps, "sampling", json_object_new_object());
  json_object_object_add(caps, "elicitation", elicit);
  return caps;
}

static json_object *client_info(void) {
  json_object *info = json_object_new_object();
  json_object_object_add(info, "name", json_object_new_string("mcpd-proxy"));
  json_object_object_add(info, "version", json_object_new_string("1.0"));
  return info;
}

/* A 2026-07-28 request says who asks in its own _meta. */
static void envelope(px_upstream *u, json_object *params) {
  json_object *meta;
  if (!json_object_object_get_ex(params, "_meta", &meta) || meta == NULL) {
    meta = json_object_new_object();
    json_object_object_add(params, "_meta", meta);
  }
  json_object_object_add(meta, MODERN_META "protocolVersion",
                         json_object_new_string(MODERN_VERSION));
  json_object_object_add(meta, MODERN_META "clientCapabilities", client_caps());
  json_object_object_add(meta, MODERN_META "clientInfo", client_info());
  json_object_object_add(meta, MODERN_META "logLevel",
                         json_object_new_string(u->px->log_level));
}

static void logf_(px_upstream *u, mcpd_log_level level, const char *fmt, ...)
    MCPD_PRINTF(3, 4);
static void logf_(px_upstream *u, mcpd_log_level level, const char *fmt, ...) {
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  u->px->host->log(u->px->self, level, "%s: %s", u->name, text);
}

static int linked(const px_upstream *u) {
  return u->link != NULL && !u->link_gone;
}

static int send_msg(px_upstream *u, json_object *msg) {
  int rc = linked(u) ? u->link->ops->send(u->link, msg) : -1;
  json_object_put(msg);
  return rc;
}

static json_object *new_msg(void) {
  json_object *m = json_object_new_object();
  json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
  return m;
}

static void notify(px_upstream *u, const char *method, json_object *params) {
  json_object *m = new_msg();
  json_object_object_add(m, "method", json_object_new_string(method));
  if (params != NULL)
    json_object_object_add(m, "params", params);
  send_msg(u, m);
}

/* A request: `q` (taken) waits for its answer.  `hold` keeps it back
 * until release_held().  -1 when it could not be sent (q is freed). */
static void envelope(px_upstream *u, json_object *params);

static int request(px_upstream *u, const char *method, json_object *params,
                   px_pending *q, int hold) {
  json_object *m = new_msg();
  if (params == NULL)
    params = json_object_new_object();
  if (u->modern)
    envelope(u, params);
  q->id = u->next_id++;
  if (q->what == P_LIST)
    q->deadline = px_now_ms() + u->px->list_timeout_ms;
  json_object_object_add(m, "id", json_object_new_int64(q->id));
  json_object_object_add(m, "method", json_object_new_string(method));
  json_object_object_add(m, "params", params);
  if (hold) {
    q->msg = m;
  } else if (send_msg(u, m) != 0) {
    pending_free(q);
    return -1;
  }
  q->next = u->pending;
  u->pending = q;
  return 0;
}

static px_pending *pending_new(what w) {
  px_pending *q = calloc(1, sizeof(*q));
  if (q != NULL)
    q->what = w;
  return q;
}

static int quiet(px_upstream *u, const char *method, json_object *params) {
  px_pending *q = pending_new(P_QUIET);
  if (q == NULL) {
    json_object_put(params);
    return -1;
  }
  return request(u, method, params, q, 0);
}

static void respond(px_upstream *u, json_object *id, json_object *result,
                    int code, const char *message) {
  json_object *m = new_msg();
  json_object_object_add(m, "id", json_object_get(id));
  if (result != NULL) {
    json_object_object_add(m, "result", result);
  } else {
    json_object *e = json_object_new_object();
    json_object_object_add(e, "code", json_object_new_int(code));
    json_object_object_add(e, "message", json_object_new_string(message));
    json_object_object_add(m, "error", e);
  }
  send_msg(u, m);
}

static px_pending *take_pending(px_upstream *u, int64_t id) {
  for (px_pending **pp = &u->pending; *pp; pp = &(*pp)->next)
    if ((*pp)->id == id) {
      px_pending *q = *pp;
      *pp = q->next;
      return q;
    }
  return NULL;
}

static px_pending *find_pending(px_upstream *u, int64_t id) {
  for (px_pending *q = u->pending; q; q = q->next)
    if (q->id == id)
      return q;
  return NULL;
}

/* --- finishing calls ---------------------------------------------------- */

static void fail_call(px_upstream *u, mcpd_call *call, px_call_kind kind,
                      const char *fmt, ...) MCPD_PRINTF(4, 5);
static void fail_call(px_upstream *u, mcpd_call *call, px_call_kind kind,
                      const char *fmt, ...) {
  const mcpd_host *host = u->px->host;
  char text[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  if (kind == PX_TOOL) {
    host->result_error(call, "%s", text);
    host->complete(call, MCPD_OK);
  } else {
    host->fail(call, MCPD_ERR_INTERNAL, "%s", text);
    host->complete(call, MCPD_ERROR);
  }
}

/* What a 2026-07-28 result says about itself, not about the call: mcpd
 * says it again to its own clients, in their era. */
static void strip_modern(json_object *result) {
  json_object *meta;
  json_object_object_del(result, "resultType");
  json_object_object_del(result, "ttlMs");
  json_object_object_del(result, "cacheScope");
  if (json_object_object_get_ex(result, "_meta", &meta) &&
      json_object_is_type(meta, json_type_object)) {
    json_object_object_del(meta, MODERN_META "serverInfo");
    if (json_object_object_length(meta) == 0)
      json_object_object_del(result, "_meta");
  }
}

static int input_round(px_upstream *u, px_pending *q, json_object *result);

/* The message of an upstream's error object: a string, whatever the
 * upstream sent. */
static const char *error_message(json_object *error) {
  json_object *m;
  return json_object_object_get_ex(error, "message", &m) &&
                 json_object_is_type(m, json_type_string)
             ? json_object_get_string(m)
             : "error";
}

/* The upstream's answer becomes the call's.  1 when it was an
 * input_required round, which took `q` (back in `pending`, or freed). */
static int finish_call(px_upstream *u, px_pending *q, json_object *result,
                       json_object *error) {
  const mcpd_host *host = u->px->host;
  if (result != NULL) {
    json_object *copy = NULL, *sc;
    if (input_round(u, q, result))
      return 1;
    /* 2025-11-25 says an object; a client's schema refuses anything else.
     * (2026-07-28 allows any value: mcpd's era rules apply there.) */
    if (q->call_kind == PX_TOOL && !u->modern &&
        json_object_object_get_ex(result, "structuredContent", &sc) &&
        !json_object_is_type(sc, json_type_object)) {
      fail_call(u, q->call, q->call_kind,
                "%s answered a result whose structuredContent is not an "
                "object",
                u->name);
      return 0;
    }
    /* The copy is the host's alone: json-c's counts are not atomic. */
    if (json_object_deep_copy(result, &copy, NULL) != 0) {
      fail_call(u, q->call, q->call_kind, "%s: out of memory", u->name);
      return 0;
    }
    if (u->modern)
      strip_modern(copy);
    host->result_json(q->call, copy);
    host->complete(q->call, MCPD_OK);
    return 0;
  }
  {
    json_object *v;
    int code = json_object_object_get_ex(error, "code", &v)
                   ? json_object_get_int(v)
                   : MCPD_ERR_INTERNAL;
    const char *msg = error_message(error);
    json_object *data, *uri;
    if (code != MCPD_ERR_INVALID_PARAMS && code != MCPD_ERR_NOT_FOUND)
      code = MCPD_ERR_INTERNAL;
    /* 2026-07-28 says a resource is not there with -32602 and data.uri:
     * that is mcpd's not-found, which each client gets in its own era's
     * form (-32002 for 2025-11-25). */
    if (u->modern && q->call_kind == PX_READ &&
        code == MCPD_ERR_INVALID_PARAMS &&
        json_object_object_get_ex(error, "data", &data) &&
        json_object_object_get_ex(data, "uri", &uri) &&
        json_object_is_type(uri, json_type_string))
      code = MCPD_ERR_NOT_FOUND;
    host->fail(q->call, code, "%s", msg);
    host->complete(q->call, MCPD_ERROR);
  }
  return 0;
}

/* --- forwarding ---------------------------------------------------------- */

/* Whether the call's client has other roots than the upstream last got;
 * then they become the upstream's. */
static int roots_moved(px_upstream *u, mcpd_call *call) {
  json_object *r = u->px->host->call_roots(call);
  const char *text =
      r != NULL ? json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN)
                : "[]";
  int moved =
      u->roots == NULL ? strcmp(text, "[]") != 0 : strcmp(text, u->roots) != 0;
  if (moved) {
    char *copy = strdup(text);
    if (copy != NULL) {
      free(u->roots);
      u->roots = copy;
    } else {
      moved = 0;
    }
  }
  json_object_put(r);
  return moved;
}

static void release_held(px_upstream *u) {
  px_pending *order[64];
  size_t n;
  u->hold_until = 0;
  do {
    n = 0;
    for (px_pending *q = u->pending; q && n < 64; q = q->next)
      if (q->msg != NULL)
        order[n++] = q;
    /* Oldest first: the list is newest first. */
    while (n > 0) {
      px_pending *q = order[--n];
      json_object *m = q->msg;
      q->msg = NULL;
      if (send_msg(u, m) != 0) {
        q = take_pending(u, q->id);
        fail_call(u, q->call, q->call_kind, "%s: could not send the request",
                  u->name);
        pending_free(q);
      }
    }
  } while (n > 0);
}

static json_object *take(json_object **p) {
  json_object *v = *p;
  *p = NULL;
  return v;
}

static void forward(px_upstream *u, px_cmd *cmd) {
  const px_entry *e = NULL;
  int found = 1;
  json_object *params = json_object_new_object(), *ref;
  const char *method = NULL;
  px_pending *q;
  int hold = 0;

  if (u->state != UP_READY) {
    json_object_put(params);
    fail_call(u, cmd->call, cmd->call_kind, "%s is not connected%s", u->name,
              u->restart_at ? " (it is being restarted)" : "");
    return;
  }
  switch (cmd->call_kind) {
  case PX_TOOL:
  case PX_PROMPT:
    e = ent_find(u, cmd->call_kind == PX_TOOL ? PX_TOOLS : PX_PROMPTS,
                 cmd->name);
    if ((found = e != NULL) == 0)
      break;
    method = cmd->call_kind == PX_TOOL ? "tools/call" : "prompts/get";
    json_object_object_add(params, "name", json_object_new_string(e->upname));
    json_object_object_add(params, "arguments", take(&cmd->params));
    hold = roots_moved(u, cmd->call);
    break;
  case PX_READ:
    method = "resources/read";
    json_object_object_add(params, "uri", json_object_new_string(cmd->name));
    break;
  case PX_COMPLETE_PROMPT:
  case PX_COMPLETE_TEMPLATE:
    ref = json_object_new_object();
    if (cmd->call_kind == PX_COMPLETE_PROMPT) {
      if ((e = ent_find(u, PX_PROMPTS, cmd->name)) == NULL) {
        json_object_put(ref);
        found = 0;
        break;
      }
      json_object_object_add(ref, "type", json_object_new_string("ref/prompt"));
      json_object_object_add(ref, "name", json_object_new_string(e->upname));
    } else {
      json_object_object_add(ref, "type",
                             json_object_new_string("ref/resource"));
      json_object_object_add(ref, "uri", json_object_new_string(cmd->name));
    }
    method = "completion/complete";
    json_object_object_add(params, "ref", ref);
    json_object_object_add(params, "argument", take(&cmd->extra));
    if (cmd->params != NULL && json_object_object_length(cmd->params) > 0) {
      json_object *ctx = json_object_new_object();
      json_object_object_add(ctx, "arguments", take(&cmd->params));
      json_object_object_add(params, "context", ctx);
    }
    break;
  default:
    found = 0;
    break;
  }
  if (!found) {
    json_object_put(params);
    fail_call(u, cmd->call, cmd->call_kind, "%s no longer offers \"%s\"",
              u->name, cmd->name);
    return;
  }
  if ((q = pending_new(P_CALL)) == NULL) {
    json_object_put(params);
    fail_call(u, cmd->call, cmd->call_kind, "out of memory");
    return;
  }
  q->call = cmd->call;
  q->call_kind = cmd->call_kind;
  if (cmd->call_kind == PX_TOOL && e->task_support == MCPD_TASK_REQUIRED) {
    /* The upstream runs it only as a task: mcpd's own task (or call)
     * waits for the upstream's. */
    q->what = P_TASK;
    json_object_object_add(params, "task", json_object_new_object());
  }
  if (hold) {
    notify(u, "notifications/roots/list_changed", NULL);
    u->hold_until = px_now_ms() + ROOTS_HOLD_MS;
  }
  hold = hold || u->hold_until != 0;
  /* The progress token upstream is the id request() is about to give:
   * progress for it is this call's. */
  if (cmd->extra != NULL && cmd->call_kind == PX_TOOL) {
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, "progressToken",
                           json_object_new_int64(u->next_id));
    json_object_object_add(params, "_meta", meta);
  }
  if (u->modern) {
    /* Kept to ask again with the answers of an input_required round. */
    q->method = method;
    if (json_object_deep_copy(params, &q->params, NULL) != 0)
      q->params = NULL;
  }
  if (request(u, method, params, q, hold) != 0)
    fail_call(u, cmd->call, cmd->call_kind, "%s: could not send the request",
              u->name);
}

static void cancel(px_upstream *u, mcpd_call *call) {
  px_pending *q = NULL;
  for (px_pending *p = u->pending; p; p = p->next)
    if (p->call == call && (p->what == P_CALL || p->what == P_TASK))
      q = p;
  if (q == NULL)
    return;
  q = take_pending(u, q->id);
  if (q->msg == NULL) {
    json_object *params = json_object_new_object();
    if (q->task_id != NULL) {
      json_object_object_add(params, "taskId",
                             json_object_new_string(q->task_id));
      quiet(u, "tasks/cancel", params);
    } else {
      json_object_object_add(params, "requestId", json_object_new_int64(q->id));
      json_object_object_add(params, "reason",
                             json_object_new_string("cancelled by the client"));
      notify(u, "notifications/cancelled", params);
    }
  }
  u->px->host->complete(q->call, MCPD_ERROR);
  pending_free(q);
}

static int sub_index(const px_upstream *u, const char *uri) {
  for (size_t i = 0; i < u->n_subs; i++)
    if (strcmp(u->subs[i], uri) == 0)
      return (int)i;
  return -1;
}

static void open_listen(px_upstream *u);
static void input_answered(px_upstream *u, px_cmd *cmd);

static void subscribe(px_upstream *u, const char *uri, int on) {
  int i = sub_index(u, uri);
  json_object *params;
  if (on && i < 0) {
    char **v = realloc(u->subs, (u->n_subs + 1) * sizeof(*v));
    if (v == NULL)
      return;
    u->subs = v;
    if ((u->subs[u->n_subs] = strdup(uri)) == NULL)
      return;
    u->n_subs++;
  } else if (!on && i >= 0) {
    free(u->subs[i]);
    u->subs[i] = u->subs[--u->n_subs];
  } else {
    return;
  }
  if (u->state != UP_READY)
    return;
  if (u->modern) {
    open_listen(u);
    return;
  }
  params = json_object_new_object();
  json_object_object_add(params, "uri", json_object_new_string(uri));
  quiet(u, on ? "resources/subscribe" : "resources/unsubscribe", params);
}

void up_command(px_upstream *u, px_cmd *cmd) {
  switch (cmd->kind) {
  case PX_CMD_CALL:
    forward(u, cmd);
    break;
  case PX_CMD_CANCEL:
    cancel(u, cmd->call);
    break;
  case PX_CMD_SUBSCRIBE:
    subscribe(u, cmd->name, cmd->flag);
    break;
  case PX_CMD_INPUT:
    input_answered(u, cmd);
    break;
  case PX_CMD_ANSWER:
    if (cmd->gen != u->gen || !linked(u))
      break;
    if (cmd->flag) {
      respond(u, cmd->id, take(&cmd->params), 0, NULL);
    } else {
      json_object *v;
      int code = json_object_object_get_ex(cmd->params, "code", &v)
                     ? json_object_get_int(v)
                     : -32603;
      const char *msg = json_object_object_get_ex(cmd->params, "message", &v)
                            ? json_object_get_string(v)
                            : "the client did not answer";
      respond(u, cmd->id, NULL, code, msg);
    }
    break;
  default:
    break;
  }
}

/* --- listing ---------------------------------------------------------- */

static void list(px_upstream *u, px_kind kind, json_object *acc,
                 const char *cursor, int page) {
  px_pending *q = pending_new(P_LIST);
  json_object *params = json_object_new_object();
  if (q == NULL) {
    json_object_put(acc);
    json_object_put(params);
    return;
  }
  q->kind = kind;
  q->acc = acc ? acc : json_object_new_array();
  q->pages = page;
  if (cursor != NULL) {
    json_object_object_add(params, "cursor", json_object_new_string(cursor));
    q->cursor = strdup(cursor);
  }
  u->listing[kind] = 1;
  if (request(u, ent_list_method(kind), params, q, 0) != 0)
    u->listing[kind] = 0;
}

static void relist(px_upstream *u, px_kind kind) {
  if (u->state != UP_READY)
    return;
  if (u->listing[kind])
    u->relist[kind] = 1;
  else
    list(u, kind, NULL, NULL, 1);
}

static void first_listing_done(px_upstream *u) {
  if (u->first_listing > 0 && --u->first_listing == 0 && !u->started) {
    u->started = 1;
    px_started(u->px);
  }
}

static void listed(px_upstream *u, px_pending *q, json_object *result,
                   json_object *error) {
  json_object *items, *next;
  px_kind kind = q->kind;

  if (error != NULL) {
    logf_(u, MCPD_LOG_WARNING, "%s failed: %s", ent_list_method(kind),
          error_message(error));
  } else {
    if (json_object_object_get_ex(result, ent_list_key(kind), &items) &&
        json_object_is_type(items, json_type_array))
      for (size_t i = 0; i < json_object_array_length(items); i++)
        json_object_array_add(
            q->acc, json_object_get(json_object_array_get_idx(items, i)));
    /* A cursor that leads back to its own page, or on forever, ends the
     * listing with what came so far. */
    if (json_object_object_get_ex(result, "nextCursor", &next) &&
        json_object_is_type(next, json_type_string)) {
      const char *cursor = json_object_get_string(next);
      if (q->cursor != NULL && strcmp(cursor, q->cursor) == 0) {
        logf_(u, MCPD_LOG_WARNING,
              "%s: the nextCursor of page %d is the cursor that asked for "
              "it; the listing ends there",
              ent_list_method(kind), q->pages);
      } else if (json_object_array_length(q->acc) >= LIST_MAX_ITEMS ||
                 q->pages >= LIST_MAX_PAGES) {
        logf_(u, MCPD_LOG_WARNING,
              "%s: stopped after %zu items in %d pages; its nextCursor "
              "does not end",
              ent_list_method(kind), json_object_array_length(q->acc),
              q->pages);
      } else {
        list(u, kind, take(&q->acc), cursor, q->pages + 1);
        return;
      }
    }
    ent_apply(u, kind, q->acc);
  }
  u->listing[kind] = 0;
  if (u->relist[kind]) {
    u->relist[kind] = 0;
    list(u, kind, NULL, NULL, 1);
    return;
  }
  first_listing_done(u);
}

static int has_cap(const px_upstream *u, const char *name) {
  json_object *v;
  return u->caps != NULL && json_object_object_get_ex(u->caps, name, &v) &&
         json_object_is_type(v, json_type_object);
}

/* A 2026-07-28 upstream keeps no session: what it changes reaches the
 * proxy on a subscriptions/listen request, opened again (the old one
 * cancelled) each time the set of subscribed URIs changes. */
static void open_listen(px_upstream *u) {
  json_object *params, *want, *subs, *v;
  px_pending *q;

  if (!u->modern || u->state != UP_READY)
    return;
  if (u->listen_id != 0) {
    json_object *p = json_object_new_object();
    px_pending *old = take_pending(u, u->listen_id);
    if (old != NULL)
      pending_free(old);
    json_object_object_add(p, "requestId", json_object_new_int64(u->listen_id));
    notify(u, "notifications/cancelled", p);
    u->listen_id = 0;
  }
  want = json_object_new_object();
  for (int k = 0; k < 3; k++) {
    static const char *const cap[] = {"tools", "prompts", "resources"};
    static const char *const flag[] = {"toolsListChanged", "promptsListChanged",
                                       "resourcesListChanged"};
    json_object *c;
    if (u->caps != NULL && json_object_object_get_ex(u->caps, cap[k], &c) &&
        json_object_object_get_ex(c, "listChanged", &v) &&
        json_object_get_boolean(v))
      json_object_object_add(want, flag[k], json_object_new_boolean(1));
  }
  if (u->n_subs > 0) {
    subs = json_object_new_array();
    for (size_t i = 0; i < u->n_subs; i++)
      json_object_array_add(subs, json_object_new_string(u->subs[i]));
    json_object_object_add(want, "resourceSubscriptions", subs);
  }
  if (json_object_object_length(want) == 0 ||
      (q = pending_new(P_QUIET)) == NULL) {
    json_object_put(want);
    return;
  }
  params = json_object_new_object();
  json_object_object_add(params, "notifications", want);
  if (request(u, "subscriptions/listen", params, q, 0) == 0)
    u->listen_id = q->id;
}

/* The upstream answered initialize (or server/discover): list what it
 * offers, and ask for what it will change. */
static void ready(px_upstream *u, json_object *result) {
  static const char *const caps[PX_KINDS] = {"tools", "resources", "resources",
                                             "prompts"};
  json_object *v, *info = NULL, *meta;

  json_object_put(u->caps);
  u->caps = NULL;
  if (json_object_object_get_ex(result, "capabilities", &v) &&
      json_object_is_type(v, json_type_object))
    json_object_deep_copy(v, &u->caps, NULL);
  if (!json_object_object_get_ex(result, "serverInfo", &info) &&
      json_object_object_get_ex(result, "_meta", &meta))
    json_object_object_get_ex(meta, MODERN_META "serverInfo", &info);
  logf_(u, MCPD_LOG_INFO, "connected to %s %s (protocol %s)",
        info && json_object_object_get_ex(info, "name", &v)
            ? json_object_get_string(v)
            : "?",
        info && json_object_object_get_ex(info, "version", &v)
            ? json_object_get_string(v)
            : "?",
        u->modern ? MODERN_VERSION
        : json_object_object_get_ex(result, "protocolVersion", &v)
            ? json_object_get_string(v)
            : "?");
  if (!u->modern)
    notify(u, "notifications/initialized", NULL);
  u->state = UP_READY;
  u->up_since = px_now_ms();
  if (u->modern) {
    open_listen(u);
  } else {
    if (has_cap(u, "logging")) {
      json_object *p = json_object_new_object();
      json_object_object_add(p, "level",
                             json_object_new_string(u->px->log_level));
      quiet(u, "logging/setLevel", p);
    }
    for (size_t i = 0; i < u->n_subs; i++) {
      json_object *p = json_object_new_object();
      json_object_object_add(p, "uri", json_object_new_string(u->subs[i]));
      quiet(u, "resources/subscribe", p);
    }
  }
  u->first_listing = 1; /* held until every listing below went out */
  for (int k = 0; k < PX_KINDS; k++)
    if (has_cap(u, caps[k])) {
      u->first_listing++;
      list(u, (px_kind)k, NULL, NULL, 1);
    }
  first_listing_done(u);
}

/* initialize was refused: perhaps the upstream speaks only 2026-07-28,
 * which has none.  server/discover says. */
static void discover(px_upstream *u) {
  px_pending *q = pending_new(P_DISCOVER);
  u->modern = 1;
  if (q == NULL || request(u, "server/discover", NULL, q, 0) != 0)
    u->link_gone = 1;
}

static int serves_modern(json_object *result) {
  json_object *list;
  if (!json_object_object_get_ex(result, "supportedVersions", &list) ||
      !json_object_is_type(list, json_type_array))
    return 0;
  for (size_t i = 0; i < json_object_array_length(list); i++) {
    json_object *v = json_object_array_get_idx(list, i);
    if (json_object_is_type(v, json_type_string) &&
        strcmp(json_object_get_string(v), MODERN_VERSION) == 0)
      return 1;
  }
  return 0;
}

/* --- what the upstream sends ---------------------------------------------- */

static void answered(px_upstream *u, json_object *msg) {
  json_object *id, *result = NULL, *error = NULL, *no_result = NULL;
  px_pending *q;

  if (!json_object_object_get_ex(msg, "id", &id) ||
      !json_object_is_type(id, json_type_int) ||
      (q = take_pending(u, json_object_get_int64(id))) == NULL)
    return;
  json_object_object_get_ex(msg, "result", &result);
  if (!json_object_object_get_ex(msg, "error", &error) || error == NULL) {
    error = NULL;
    if (result == NULL || !json_object_is_type(result, json_type_object)) {
      error = no_result = json_object_new_object();
      json_object_object_add(error, "code", json_object_new_int(-32603));
      json_object_object_add(
          error, "message",
          json_object_new_string("the upstream answered without a result"));
    }
  }
  if (error != NULL)
    result = NULL;
  switch (q->what) {
  case P_INIT:
    if (error != NULL) {
      snprintf(u->gone_why, sizeof(u->gone_why), "initialize refused: %s",
               error_message(error));
      discover(u);
    } else {
      ready(u, result);
    }
    break;
  case P_DISCOVER:
    if (error == NULL && serves_modern(result)) {
      u->gone_why[0] = '\0';
      ready(u, result);
    } else {
      u->modern = 0;
      u->link_gone = 1; /* gone_why says why initialize failed */
    }
    break;
  case P_LIST:
    listed(u, q, result, error);
    break;
  case P_TASK: {
    json_object *task, *tid;
    if (error == NULL && json_object_object_get_ex(result, "task", &task) &&
        json_object_object_get_ex(task, "taskId", &tid) &&
        json_object_is_type(tid, json_type_string)) {
      /* The task runs upstream; its result is the call's. */
      px_pending *r = pending_new(P_CALL);
      json_object *params = json_object_new_object();
      if (r == NULL ||
          (r->task_id = strdup(json_object_get_string(tid))) == NULL) {
        free(r);
        json_object_put(params);
        fail_call(u, q->call, q->call_kind, "out of memory");
        break;
      }
      r->call = q->call;
      r->call_kind = q->call_kind;
      json_object_object_add(params, "taskId",
                             json_object_new_string(r->task_id));
      if (request(u, "tasks/result", params, r, 0) != 0)
        fail_call(u, q->call, q->call_kind, "%s: could not send the request",
                  u->name);
      break;
    }
    if (finish_call(u, q, result, error))
      q = NULL; /* an input_required round took it */
    break;
  }
  case P_CALL:
    if (finish_call(u, q, result, error))
      q = NULL; /* an input_required round took it */
    break;
  case P_QUIET:
    if (error != NULL)
      logf_(u, MCPD_LOG_DEBUG, "request %lld failed: %s", (long long)q->id,
            error_message(error));
    break;
  }
  if (q != NULL)
    pending_free(q);
  json_object_put(no_result);
}

/* The call the upstream's request belongs to: the one whose stream it
 * came on, else the newest in flight. */
static px_pending *owner(px_upstream *u, json_object *via) {
  if (via != NULL && json_object_is_type(via, json_type_int)) {
    px_pending *q = find_pending(u, json_object_get_int64(via));
    if (q != NULL && q->call != NULL)
      return q;
  }
  for (px_pending *q = u->pending; q; q = q->next)
    if (q->call != NULL && q->msg == NULL)
      return q;
  return NULL;
}

typedef struct ask {
  px_upstream *u;
  unsigned gen;
  json_object *id;
  char *key; /* an input of a 2026-07-28 round: its key */
} ask;

/* The client answered (mcpd's loop thread): the answer goes to the proxy
 * thread, which hands it to the upstream that asked, if it still lives. */
static void asked(void *arg, json_object *result, int code,
                  const char *message) {
  ask *a = arg;
  px_cmd *cmd = calloc(1, sizeof(*cmd));
  if (cmd == NULL) {
    json_object_put(a->id);
    free(a->key);
    free(a);
    return;
  }
  cmd->kind = a->key != NULL ? PX_CMD_INPUT : PX_CMD_ANSWER;
  cmd->up = a->u;
  cmd->gen = a->gen;
  cmd->id = a->id;
  cmd->name = a->key;
  if (result != NULL &&
      json_object_deep_copy(result, &cmd->params, NULL) == 0) {
    cmd->flag = 1;
  } else {
    if (result != NULL)
      code = -32603, message = "out of memory";
    cmd->params = json_object_new_object();
    json_object_object_add(cmd->params, "code", json_object_new_int(code));
    json_object_object_add(cmd->params, "message",
                           json_object_new_string(message ? message : ""));
  }
  free(a);
  px_post(cmd->up->px, cmd);
}

static void server_request(px_upstream *u, json_object *msg, json_object *via) {
  const mcpd_host *host = u->px->host;
  json_object *id, *params = NULL, *copy = NULL;
  const char *method;
  px_pending *q;
  ask *a;

  json_object_object_get_ex(msg, "id", &id);
  method = json_object_get_string(json_object_object_get(msg, "method"));
  json_object_object_get_ex(msg, "params", &params);
  if (strcmp(method, "ping") == 0) {
    respond(u, id, json_object_new_object(), 0, NULL);
    return;
  }
  q = owner(u, via);
  if (strcmp(method, "roots/list") == 0) {
    json_object *result = json_object_new_object(), *roots = NULL;
    if (q != NULL)
      roots_moved(u, q->call);
    if (u->roots != NULL)
      roots = json_tokener_parse(u->roots);
    json_object_object_add(result, "roots",
                           roots ? roots : json_object_new_array());
    if (u->roots == NULL)
      u->roots = strdup("[]");
    respond(u, id, result, 0, NULL);
    if (u->hold_until != 0)
      release_held(u);
    return;
  }
  if (strcmp(method, "sampling/createMessage") != 0 &&
      strcmp(method, "elicitation/create") != 0) {
    respond(u, id, NULL, -32601, "Method not found");
    return;
  }
  if (q == NULL) {
    respond(u, id, NULL, -32603,
            "no call of this server is in flight to ask its client through");
    return;
  }
  if (params != NULL && json_object_deep_copy(params, &copy, NULL) != 0)
    copy = NULL;
  if ((a = calloc(1, sizeof(*a))) == NULL) {
    json_object_put(copy);
    respond(u, id, NULL, -32603, "out of memory");
    return;
  }
  a->u = u;
  a->gen = u->gen;
  json_object_deep_copy(id, &a->id, NULL);
  if (host->client_request(q->call, method,
                           copy ? copy : json_object_new_object(), asked,
                           a) != MCPD_OK) {
    respond(u, id, NULL, -32603, host->last_error());
    json_object_put(a->id);
    free(a);
  }
}

/* An upstream's level name; one it should not have sent reads as info. */
static mcpd_log_level log_level_of(const char *name) {
  int level = px_log_level(name);
  return level < 0 ? MCPD_LOG_INFO : (mcpd_log_level)level;
}

static void notification(px_upstream *u, json_object *msg) {
  const mcpd_host *host = u->px->host;
  const char *method =
      json_object_get_string(json_object_object_get(msg, "method"));
  json_object *params = json_object_object_get(msg, "params"), *v;

  if (strcmp(method, "notifications/tools/list_changed") == 0)
    relist(u, PX_TOOLS);
  else if (strcmp(method, "notifications/prompts/list_changed") == 0)
    relist(u, PX_PROMPTS);
  else if (strcmp(method, "notifications/resources/list_changed") == 0) {
    relist(u, PX_RESOURCES);
    relist(u, PX_TEMPLATES);
  } else if (strcmp(method, "notifications/resources/updated") == 0) {
    if (params && json_object_object_get_ex(params, "uri", &v) &&
        json_object_is_type(v, json_type_string))
      host->resource_updated(u->px->self, json_object_get_string(v));
  } else if (strcmp(method, "notifications/progress") == 0) {
    json_object *token, *progress, *total, *message;
    px_pending *q;
    if (params == NULL ||
        !json_object_object_get_ex(params, "progressToken", &token) ||
        !json_object_is_type(token, json_type_int) ||
        !json_object_object_get_ex(params, "progress", &progress) ||
        !(json_object_is_type(progress, json_type_int) ||
          json_object_is_type(progress, json_type_double)) ||
        (q = find_pending(u, json_object_get_int64(token))) == NULL ||
        q->call == NULL)
      return;
    json_object_object_get_ex(params, "total", &total);
    json_object_object_get_ex(params, "message", &message);
    host->progress(q->call, json_object_get_double(progress),
                   total ? json_object_get_double(total) : 0,
                   message && json_object_is_type(message, json_type_string)
                       ? json_object_get_string(message)
                       : NULL);
  } else if (strcmp(method, "notifications/message") == 0) {
    json_object *data = NULL, *logger = NULL, *level = NULL;
    if (params == NULL)
      return;
    json_object_object_get_ex(params, "data", &data);
    json_object_object_get_ex(params, "logger", &logger);
    json_object_object_get_ex(params, "level", &level);
    host->log(
        u->px->self, log_level_of(json_object_get_string(level)), "%s%s%s: %s",
        u->name, logger ? " " : "",
        logger ? json_object_get_string(logger) : "",
        data && json_object_is_type(data, json_type_string)
            ? json_object_get_string(data)
            : json_object_to_json_string_ext(data, JSON_C_TO_STRING_PLAIN));
  } else if (strcmp(method, "notifications/elicitation/complete") == 0) {
    px_pending *q = owner(u, NULL);
    if (q != NULL && params &&
        json_object_object_get_ex(params, "elicitationId", &v))
      host->elicitation_complete(q->call, json_object_get_string(v));
  }
}

static void on_message(void *arg, json_object *msg, json_object *via) {
  px_upstream *u = arg;
  json_object *method, *id;
  if (!json_object_is_type(msg, json_type_object) || u->link_gone)
    return;
  if (json_object_object_get_ex(msg, "method", &method) &&
      json_object_is_type(method, json_type_string)) {
    if (json_object_object_get_ex(msg, "id", &id) && id != NULL)
      server_request(u, msg, via);
    else
      notification(u, msg);
  } else {
    answered(u, msg);
  }
}

static void on_closed(void *arg, const char *why) {
  px_upstream *u = arg;
  u->link_gone = 1;
  snprintf(u->gone_why, sizeof(u->gone_why), "%s", why ? why : "it ended");
}

static void on_stderr(void *arg, const char *line) {
  px_upstream *u = arg;
  u->px->host->log(u->px->self, MCPD_LOG_INFO, "%s: %s", u->name, line);
}

/* --- input_required rounds of a 2026-07-28 upstream ------------------------
 */

/* Every input is answered: the call goes again, with the answers and
 * the state the upstream gave. */
static void retry(px_upstream *u, px_pending *q) {
  json_object *params = NULL, *meta, *token;
  mcpd_call *call = q->call;
  px_call_kind kind = q->call_kind;
  q = take_pending(u, q->id);
  if (json_object_deep_copy(q->params, &params, NULL) != 0) {
    fail_call(u, q->call, q->call_kind, "%s: out of memory", u->name);
    pending_free(q);
    return;
  }
  json_object_object_add(params, "inputResponses", q->answers);
  q->answers = NULL;
  if (q->state != NULL) {
    json_object_object_add(params, "requestState", q->state);
    q->state = NULL;
  }
  if (json_object_object_get_ex(params, "_meta", &meta) &&
      json_object_object_get_ex(meta, "progressToken", &token))
    json_object_object_add(meta, "progressToken",
                           json_object_new_int64(u->next_id));
  if (request(u, q->method, params, q, 0) != 0) /* q is freed */
    fail_call(u, call, kind, "%s: could not send the request", u->name);
}

/* A name mcpd takes as the key of a question (1-47 of A-Z a-z 0-9 _.:-). */
static int usable_key(const char *k) {
  size_t n = strlen(k);
  if (n == 0 || n > 47)
    return 0;
  for (; *k; k++)
    if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
          (*k >= '0' && *k <= '9') || strchr("_.:-", *k)))
      return 0;
  return 1;
}

static void round_failed(px_upstream *u, px_pending *q, const char *why) {
  q = take_pending(u, q->id);
  if (q == NULL)
    return;
  fail_call(u, q->call, q->call_kind, "%s", why);
  pending_free(q);
}

/* A 2026-07-28 upstream answered input_required: each of its questions
 * is put to the call's client (a roots/list is answered here), and once
 * all are answered the call goes again.  1 when `result` was such a
 * round (q is then back in `pending`, or finished). */
static int input_round(px_upstream *u, px_pending *q, json_object *result) {
  const mcpd_host *host = u->px->host;
  json_object *rt, *reqs, *st;

  if (!u->modern || q->params == NULL ||
      !json_object_object_get_ex(result, "resultType", &rt) ||
      !json_object_is_type(rt, json_type_string) ||
      strcmp(json_object_get_string(rt), "input_required") != 0)
    return 0;
  json_object_put(q->answers);
  q->answers = json_object_new_object();
  json_object_put(q->state);
  q->state = NULL;
  if (json_object_object_get_ex(result, "requestState", &st))
    json_object_deep_copy(st, &q->state, NULL);
  q->waiting = 0;
  q->next = u->pending;
  u->pending = q;
  /* An upstream that asks again and again (or asks only what the proxy
   * answers itself) would be sent the call for ever. */
  if (++q->rounds > MAX_ROUNDS) {
    char why[200];
    snprintf(why, sizeof(why), "%s asked for input %d times; given up", u->name,
             MAX_ROUNDS);
    round_failed(u, q, why);
    return 1;
  }
  /* A round may carry only new state: the call goes again with it.  One
   * that carries neither would be sent again at once, for ever. */
  if ((!json_object_object_get_ex(result, "inputRequests", &reqs) ||
       !json_object_is_type(reqs, json_type_object) ||
       json_object_object_length(reqs) == 0) &&
      q->state != NULL) {
    retry(u, q);
    return 1;
  }
  if (!json_object_object_get_ex(result, "inputRequests", &reqs) ||
      !json_object_is_type(reqs, json_type_object) ||
      json_object_object_length(reqs) == 0) {
    char why[200];
    snprintf(why, sizeof(why), "%s asked for input but named none", u->name);
    round_failed(u, q, why);
    return 1;
  }
  json_object_object_foreach(reqs, key, req) {
    json_object *m = NULL, *params = NULL, *copy = NULL;
    const char *method;
    ask *a;
    json_object_object_get_ex(req, "method", &m);
    json_object_object_get_ex(req, "params", &params);
    method = m ? json_object_get_string(m) : "";
    if (strcmp(method, "roots/list") == 0) {
      json_object *answer = json_object_new_object();
      json_object *roots = host->call_roots(q->call);
      json_object_object_add(answer, "roots",
                             roots ? roots : json_object_new_array());
      json_object_object_add(q->answers, key, answer);
      continue;
    }
    if (strcmp(method, "elicitation/create") != 0 &&
        strcmp(method, "sampling/createMessage") != 0) {
      char why[200];
      snprintf(why, sizeof(why), "%s asks \"%.60s\", which mcpd cannot pass on",
               u->name, method);
      round_failed(u, q, why);
      return 1;
    }
    if ((a = calloc(1, sizeof(*a))) == NULL || (a->key = strdup(key)) == NULL ||
        (params != NULL && json_object_deep_copy(params, &copy, NULL) != 0)) {
      if (a != NULL)
        free(a->key);
      free(a);
      round_failed(u, q, "out of memory");
      return 1;
    }
    a->u = u;
    a->gen = u->gen;
    a->id = json_object_new_int64(q->id);
    if (copy == NULL)
      copy = json_object_new_object();
    q->waiting++;
    if ((usable_key(key)
             ? host->client_request_keyed(q->call, key, method, copy, asked, a)
             : host->client_request(q->call, method, copy, asked, a)) !=
        MCPD_OK) {
      char why[300];
      snprintf(why, sizeof(why), "%s", host->last_error());
      json_object_put(a->id);
      free(a->key);
      free(a);
      round_failed(u, q, why);
      return 1;
    }
  }
  if (q->waiting == 0)
    retry(u, q);
  return 1;
}

/* The client answered one input of a round. */
static void input_answered(px_upstream *u, px_cmd *cmd) {
  px_pending *q;
  if (cmd->gen != u->gen || cmd->id == NULL ||
      (q = find_pending(u, json_object_get_int64(cmd->id))) == NULL ||
      q->answers == NULL)
    return;
  if (!cmd->flag) {
    json_object *v;
    round_failed(u, q,
                 json_object_object_get_ex(cmd->params, "message", &v)
                     ? json_object_get_string(v)
                     : "the client did not answer");
    return;
  }
  json_object_object_add(q->answers, cmd->name, take(&cmd->params));
  if (--q->waiting == 0)
    retry(u, q);
}

/* --- life ----------------------------------------------------------------- */

static void fail_all(px_upstream *u, const char *why) {
  while (u->pending != NULL) {
    px_pending *q = u->pending;
    u->pending = q->next;
    if (q->call != NULL)
      fail_call(u, q->call, q->call_kind, "%s: %s", u->name, why);
    pending_free(q);
  }
}

/* The upstream is gone: what was in flight fails, what it offered leaves,
 * and it is started again after the backoff. */
static void down(px_upstream *u, const char *why) {
  int64_t now = px_now_ms();
  if (u->link != NULL) {
    u->link->ops->close(u->link);
    u->link = NULL;
  }
  u->link_gone = 0;
  fail_all(u, why);
  ent_clear(u);
  u->state = UP_DOWN;
  json_object_put(u->caps);
  u->caps = NULL;
  memset(u->listing, 0, sizeof(u->listing));
  memset(u->relist, 0, sizeof(u->relist));
  u->first_listing = 0;
  u->hold_until = 0;
  free(u->roots);
  u->roots = NULL;
  if (u->up_since != 0 && now - u->up_since >= STABLE_MS)
    u->backoff_ms = BACKOFF_MIN_MS;
  u->up_since = 0;
  u->restart_at = now + u->backoff_ms;
  logf_(u, MCPD_LOG_WARNING, "%s; starting it again in %.1f s", why,
        (double)u->backoff_ms / 1000);
  u->backoff_ms =
      u->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : u->backoff_ms * 2;
  if (!u->started) {
    u->started = 1;
    px_started(u->px);
  }
}

void up_start(px_upstream *u) {
  px_link_events ev = {on_message, on_closed, on_stderr, u};
  json_object *params;
  char err[300] = "";
  px_pending *q;

  u->gen++;
  u->restart_at = 0;
  if (u->url != NULL)
    u->link =
        http_link_open(u->px->multi, u->url, u->headers, &ev, err, sizeof(err));
  else
    u->link = stdio_link_open(u->argv, u->envp, u->cwd, &ev, err, sizeof(err));
  if (u->link == NULL) {
    down(u, err[0] ? err : "cannot start");
    return;
  }
  u->state = UP_INIT;
  u->init_deadline = px_now_ms() + INIT_TIMEOUT_MS;
  u->modern = 0;
  u->listen_id = 0;
  params = json_object_new_object();
  json_object_object_add(params, "protocolVersion",
                         json_object_new_string(PROTOCOL_VERSION));
  json_object_object_add(params, "capabilities", client_caps());
  json_object_object_add(params, "clientInfo", client_info());
  if ((q = pending_new(P_INIT)) == NULL) {
    json_object_put(params);
    down(u, "out of memory");
    return;
  }
  if (request(u, "initialize", params, q, 0) != 0)
    u->link_gone = 1;
}

void up_stop(px_upstream *u) {
  if (u->link != NULL) {
    u->link->ops->close(u->link);
    u->link = NULL;
  }
  fail_all(u, "mcpd is stopping");
  u->state = UP_DOWN;
}

size_t up_want(px_upstream *u, struct curl_waitfd *fds, size_t room) {
  return u->link != NULL && !u->link_gone
             ? u->link->ops->want(u->link, fds, room)
             : 0;
}

void up_ready(px_upstream *u, const struct curl_waitfd *fds, size_t n) {
  if (u->link != NULL && !u->link_gone)
    u->link->ops->ready(u->link, fds, n);
}

static int64_t earliest(int64_t a, int64_t b) {
  if (a <= 0)
    return b;
  if (b <= 0)
    return a;
  return a < b ? a : b;
}

/* Listings unanswered past their deadline fail, so that the kind can be
 * listed again: a server that never answers one would otherwise keep its
 * list_changed from ever being followed. */
static void expire_listings(px_upstream *u, int64_t now) {
  char message[96];
  px_pending **pp = &u->pending;

  snprintf(message, sizeof(message), "no answer within %lld ms",
           (long long)u->px->list_timeout_ms);
  while (*pp != NULL) {
    px_pending *q = *pp;
    json_object *error;
    if (q->what != P_LIST || q->deadline == 0 || now < q->deadline) {
      pp = &q->next;
      continue;
    }
    *pp = q->next;
    error = json_object_new_object();
    json_object_object_add(error, "code", json_object_new_int(-32001));
    json_object_object_add(error, "message", json_object_new_string(message));
    listed(u, q, NULL, error);
    json_object_put(error);
    pending_free(q);
    pp = &u->pending; /* listed() may have asked for the next page */
  }
}

int64_t up_deadline(px_upstream *u) {
  int64_t d = -1;
  if (u->link_gone)
    return px_now_ms();
  for (px_pending *q = u->pending; q; q = q->next)
    if (q->what == P_LIST)
      d = earliest(d, q->deadline);
  if (u->link != NULL)
    d = earliest(d, u->link->ops->deadline(u->link));
  if (u->state == UP_DOWN)
    d = earliest(d, u->restart_at);
  if (u->state == UP_INIT)
    d = earliest(d, u->init_deadline);
  d = earliest(d, u->hold_until);
  return d;
}

void up_tick(px_upstream *u, int64_t now) {
  if (u->link != NULL && !u->link_gone) {
    int64_t d = u->link->ops->deadline(u->link);
    if (d > 0 && now >= d)
      u->link->ops->tick(u->link, now);
  }
  if (u->link_gone) {
    char why[sizeof(u->gone_why)];
    snprintf(why, sizeof(why), "%s", u->gone_why[0] ? u->gone_why : "it ended");
    u->gone_why[0] = '\0';
    down(u, why);
    return;
  }
  if (u->state == UP_DOWN && u->restart_at != 0 && now >= u->restart_at) {
    up_start(u);
    return;
  }
  if (u->state == UP_INIT && now >= u->init_deadline) {
    down(u, "no answer to initialize within 30 s");
    return;
  }
  if (u->hold_until != 0 && now >= u->hold_until)
    release_held(u);
  expire_listings(u, now);
}
