/* SPDX-License-Identifier: MIT */
/* tasks.c -- tool calls that outlive their request (see tasks.h): the
 * store, a task's life (create, run, input, end, expire), and the methods
 * of both eras. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/linkhash.h>

#include "call.h"
#include "era.h"
#include "jsonrpc.h"
#include "log.h"
#include "tasks.h"

/* How often a client should poll, in milliseconds. */
#define POLL_INTERVAL_MS 500

typedef enum task_status {
  TASK_WORKING,
  TASK_INPUT_REQUIRED,
  TASK_COMPLETED,
  TASK_FAILED,
  TASK_CANCELLED
} task_status;

const char *const tasks_status_names[5] = {"working", "input_required",
                                           "completed", "failed", "cancelled"};
#define status_names tasks_status_names

/* A tasks/result waiting for its task to end. */
typedef struct waiter {
  request *r;
  struct waiter *next;
} waiter;

typedef struct task {
  tasks *ts;
  char id[80];
  char *owner;      /* the identity that made it ("" for anyone) */
  session *session; /* legacy: hears its status and asks; NULL once gone */
  int modern;       /* made through the 2026-07-28 extension */
  task_status status;
  char *message;                  /* statusMessage, or NULL */
  int64_t created_ms, updated_ms; /* wall clock */
  uint64_t ttl_ms;
  uint64_t expires; /* loop time it is dropped; 0 while it runs */
  /* What the call answered (completed; legacy failed), as JSON text: a
   * tree of json-c objects would cost some 2 KiB more per kept task. */
  char *result;
  json_object *error; /* the JSON-RPC error it answered (failed) */
  /* Modern input: the requests still unanswered, as tasks/get shows
   * them, and every answer the client gave, which each new run gets. */
  json_object *pending;
  json_object *answers;
  /* What a run calls: the tool, and {name, arguments, _meta} of the
   * request that made the task; a modern run's client capabilities (both
   * JSON text, or NULL). */
  char *tool;
  char *params;
  char *caps;
  request *run; /* the run in flight, or NULL */
  int asking;   /* legacy: the run's requests to the client unanswered */
  waiter *waiters;
  struct task *prev, *next;
} task;

static void task_ended(task *t);
static void task_fail(task *t, int code, const char *message);
static request *begin_cb(void *arg, request *r);

/* --- time and ids ------------------------------------------------------ */

static int64_t wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ISO 8601 in UTC with milliseconds: "2026-12-06T19:40:00.123Z". */
static json_object *iso_time(int64_t ms) {
  time_t secs = (time_t)(ms / 1000);
  struct tm tm;
  char text[40];
  size_t n;

  gmtime_r(&secs, &tm);
  n = strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(text + n, sizeof(text) - n, ".%03dZ", (int)(ms % 1000));
  return json_object_new_string(text);
}

/* A new id: the process prefix (so a proxy routes by Mcp-Name), then 128
 * random bits.  Returns 0, or -1 when no randomness could be had. */
static int new_id(const tasks *ts, char *out, size_t size) {
  unsigned char bytes[16];
  const char *prefix = ts->opts->task_prefix ? ts->opts->task_prefix : "";
  size_t n;

  if (uv_random(NULL, NULL, bytes, sizeof(bytes), 0, NULL) != 0)
    return -1;
  n = (size_t)snprintf(out, size, "%stask-", prefix);
  for (size_t i = 0; i < sizeof(bytes) && n + 2 < size; i++, n += 2)
    snprintf(out + n, size - n, "%02x", bytes[i]);
  return 0;
}

/* A tree of JSON text this file wrote (a result may nest as deep as any
 * message), or NULL when out of memory. */
static json_object *parse_text(const char *text) {
  json_tokener *tok = json_tokener_new_ex(JSONRPC_MAX_DEPTH);
  json_object *obj =
      tok != NULL ? json_tokener_parse_ex(tok, text, (int)strlen(text)) : NULL;
  json_tokener_free(tok);
  return obj;
}

/* --- the store --------------------------------------------------------- */

static const char *owner_of(const request *r) {
  return r->session != NULL && r->session->owner != NULL ? r->session->owner
                                                         : "";
}

static int terminal(const task *t) {
  return t->status >= TASK_COMPLETED;
}

static void expiry_cb(uv_timer_t *timer);

/* Sets the timer for the soonest end of an ended task. */
static void schedule_expiry(tasks *ts) {
  uint64_t soonest = 0, now;

  if (ts->closed)
    return;
  for (task *t = ts->head; t; t = t->next)
    if (t->expires != 0 && (soonest == 0 || t->expires < soonest))
      soonest = t->expires;
  if (soonest == 0) {
    uv_timer_stop(&ts->expiry);
    return;
  }
  now = uv_now(ts->exec->loop);
  uv_timer_start(&ts->expiry, expiry_cb, soonest > now ? soonest - now : 0, 0);
}

static void task_free(task *t) {
  tasks *ts = t->ts;

  if (t->prev)
    t->prev->next = t->next;
  else
    ts->head = t->next;
  if (t->next)
    t->next->prev = t->prev;
  else
    ts->tail = t->prev;
  ts->count--;
  lh_table_delete(ts->by_id, t->id);
  if (t->run != NULL) {
    /* Its call still runs; whatever it answers goes nowhere. */
    t->run->task->sink_arg = NULL;
    t->run->task->task_id = NULL;
  }
  while (t->waiters != NULL) {
    waiter *w = t->waiters;
    t->waiters = w->next;
    request_fail(w->r, JSONRPC_INVALID_PARAMS, "Task expired", NULL);
    free(w);
  }
  free(t->owner);
  free(t->message);
  free(t->tool);
  free(t->result);
  json_object_put(t->error);
  json_object_put(t->pending);
  json_object_put(t->answers);
  free(t->params);
  free(t->caps);
  free(t);
}

static void expiry_cb(uv_timer_t *timer) {
  tasks *ts = timer->data;
  uint64_t now = uv_now(ts->exec->loop);

  for (task *t = ts->head, *next; t; t = next) {
    next = t->next;
    if (t->expires != 0 && t->expires <= now) {
      log_debug("task %s expired", t->id);
      task_free(t);
    }
  }
  schedule_expiry(ts);
}

int tasks_init(tasks *ts, call_exec *exec, registry *reg,
               const methods_settings *opts) {
  memset(ts, 0, sizeof(*ts));
  ts->exec = exec;
  ts->registry = reg;
  ts->opts = opts;
  ts->begin.begin = begin_cb;
  ts->begin.begin_arg = ts;
  if (exec->loop == NULL || uv_timer_init(exec->loop, &ts->expiry) != 0) {
    /* No loop (a unit test of the methods): tasks are never dropped. */
    ts->closed = 1;
    return 0;
  }
  ts->expiry.data = ts;
  return 0;
}

void tasks_shutdown(tasks *ts, int abandon) {
  if (!ts->closed) {
    ts->closed = 1;
    uv_close((uv_handle_t *)&ts->expiry, NULL);
  }
  for (task *t = ts->head; t; t = t->next)
    if (t->run != NULL && t->run->call != NULL) {
      if (abandon)
        call_abandon(t->run->call);
      else
        call_cancel(t->run->call);
    }
}

void tasks_free(tasks *ts) {
  while (ts->head != NULL)
    task_free(ts->head);
  if (ts->by_id != NULL)
    lh_table_free(ts->by_id);
  ts->by_id = NULL;
}

/* The task `r` names in params.taskId, if its caller may see it; NULL
 * after answering -32602 otherwise. */
static task *find(tasks *ts, request *r) {
  json_object *v;
  const char *id = NULL;
  task *t = NULL;

  if (json_object_object_get_ex(r->params, "taskId", &v))
    id = jsonrpc_name(v);
  if (id == NULL) {
    request_fail(r, JSONRPC_INVALID_PARAMS,
                 "Invalid params: taskId must be a string", NULL);
    return NULL;
  }
  if (ts->by_id == NULL || !lh_table_lookup_ex(ts->by_id, id, (void **)&t) ||
      strcmp(t->owner, owner_of(r)) != 0) {
    /* Another identity's task is as unknown as one that never was. */
    request_fail(r, JSONRPC_INVALID_PARAMS, "Task not found", NULL);
    return NULL;
  }
  return t;
}

int tasks_visible(void *arg, const char *id, const request *r) {
  tasks *ts = arg;
  task *t = NULL;
  return ts->by_id != NULL && lh_table_lookup_ex(ts->by_id, id, (void **)&t) &&
         strcmp(t->owner, owner_of(r)) == 0;
}

/* --- what a client sees ------------------------------------------------- */

/* The Task object: legacy names (ttl, pollInterval) or modern ones (ttlMs,
 * pollIntervalMs); `detailed` adds what a modern tasks/get inlines. */
static json_object *task_json(const task *t, int modern, int detailed) {
  json_object *o = json_object_new_object();

  json_object_object_add(o, "taskId", json_object_new_string(t->id));
  json_object_object_add(o, "status",
                         json_object_new_string(status_names[t->status]));
  if (t->message != NULL)
    json_object_object_add(o, "statusMessage",
                           json_object_new_string(t->message));
  json_object_object_add(o, "createdAt", iso_time(t->created_ms));
  json_object_object_add(o, "lastUpdatedAt", iso_time(t->updated_ms));
  json_object_object_add(o, modern ? "ttlMs" : "ttl",
                         json_object_new_int64((int64_t)t->ttl_ms));
  json_object_object_add(o, modern ? "pollIntervalMs" : "pollInterval",
                         json_object_new_int(POLL_INTERVAL_MS));
  if (!detailed)
    return o;
  if (t->status == TASK_FAILED && t->error != NULL)
    json_object_object_add(o, "error", json_object_get(t->error));
  else if ((t->status == TASK_COMPLETED || t->status == TASK_FAILED) &&
           t->result != NULL)
    json_object_object_add(o, "result", parse_text(t->result));
  else if (t->status == TASK_INPUT_REQUIRED && t->pending != NULL)
    json_object_object_add(o, "inputRequests", json_object_get(t->pending));
  return o;
}

/* Tells whoever listens that the task's status changed. */
static void announce(task *t) {
  t->updated_ms = wall_ms();
  if (!t->modern && t->session != NULL && t->session->initialized)
    session_notify(t->session, "notifications/tasks/status",
                   task_json(t, 0, 0));
  if (t->modern && t->ts->changed_cb != NULL)
    t->ts->changed_cb(t->ts->changed_arg, t->id, task_json(t, 1, 1));
}

static void set_status(task *t, task_status status) {
  if (t->status == status)
    return;
  t->status = status;
  announce(t);
}

/* tasks/result's answer for an ended task: exactly what the call would
 * have answered, with the related-task _meta. */
static void answer_result(task *t, request *r) {
  json_object *result = NULL, *meta, *rel;
  char text[200];

  if (t->result == NULL) {
    json_object *v = NULL;
    int code = JSONRPC_INTERNAL_ERROR;
    const char *message = text;
    if (t->error != NULL) {
      if (json_object_object_get_ex(t->error, "code", &v))
        code = json_object_get_int(v);
      if (json_object_object_get_ex(t->error, "message", &v))
        message = json_object_get_string(v);
      v = NULL;
      json_object_object_get_ex(t->error, "data", &v);
      snprintf(text, sizeof(text), "%s", message ? message : "failed");
      request_fail(r, code, text, v != NULL ? json_object_get(v) : NULL);
      return;
    }
    snprintf(text, sizeof(text), "Task %s was %s", t->id,
             t->status == TASK_CANCELLED ? "cancelled" : "not completed");
    request_fail(r, JSONRPC_INTERNAL_ERROR, text, NULL);
    return;
  }
  if ((result = parse_text(t->result)) == NULL) {
    request_fail(r, JSONRPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  if (!json_object_object_get_ex(result, "_meta", &meta) ||
      !json_object_is_type(meta, json_type_object)) {
    meta = json_object_new_object();
    json_object_object_add(result, "_meta", meta);
  }
  rel = json_object_new_object();
  json_object_object_add(rel, "taskId", json_object_new_string(t->id));
  json_object_object_add(meta, ERA_META_RELATED_TASK, rel);
  request_reply(r, result);
}

/* The task reached a terminal status: waiters get their answer, and the
 * TTL starts. */
static void task_ended(task *t) {
  announce(t);
  while (t->waiters != NULL) {
    waiter *w = t->waiters;
    t->waiters = w->next;
    answer_result(t, w->r);
    free(w);
  }
  t->expires = uv_now(t->ts->exec->loop) + t->ttl_ms;
  schedule_expiry(t->ts);
}

/* --- a task's run -------------------------------------------------------- */

static void run_answer(void *arg, const char *result_type, json_object *result,
                       json_object *error) {
  task *t = arg;
  json_object *v;

  if (t == NULL)
    return; /* expired while it ran */
  t->run = NULL;
  t->asking = 0;
  if (terminal(t)) /* cancelled meanwhile */
    return;
  if (error != NULL) {
    json_object_deep_copy(error, &t->error, NULL);
    t->status = TASK_FAILED;
  } else if (result_type != NULL &&
             strcmp(result_type, "input_required") == 0 &&
             json_object_object_get_ex(result, "inputRequests", &v)) {
    /* A modern run asked what the client must answer: the task waits for
     * tasks/update; its answers are kept here, not in a requestState. */
    json_object_put(t->pending);
    t->pending = NULL;
    json_object_deep_copy(v, &t->pending, NULL);
    set_status(t, TASK_INPUT_REQUIRED);
    return;
  } else {
    t->result =
        strdup(json_object_to_json_string_ext(result, JSON_C_TO_STRING_PLAIN));
    /* 2025-11-25: a tool result with isError is a failed task; the
     * extension keeps "failed" for protocol errors. */
    t->status = !t->modern &&
                        json_object_object_get_ex(result, "isError", &v) &&
                        json_object_get_boolean(v)
                    ? TASK_FAILED
                    : TASK_COMPLETED;
    if (t->result == NULL) {
      task_fail(t, JSONRPC_INTERNAL_ERROR, "out of memory keeping the result");
      return;
    }
  }
  task_ended(t);
}

static void run_status(void *arg, const char *message) {
  task *t = arg;
  char *copy;

  if (t == NULL || terminal(t) || (copy = strdup(message)) == NULL)
    return;
  free(t->message);
  t->message = copy;
  announce(t);
}

static void run_asking(void *arg, int delta) {
  task *t = arg;

  if (t == NULL || terminal(t))
    return;
  t->asking += delta;
  set_status(t, t->asking > 0 ? TASK_INPUT_REQUIRED : TASK_WORKING);
}

static const request_sink run_sink = {run_answer, run_status, run_asking};

/* Ends a task that could not run. */
static void task_fail(task *t, int code, const char *message) {
  json_object *err = json_object_new_object();
  json_object_object_add(err, "code", json_object_new_int(code));
  json_object_object_add(err, "message", json_object_new_string(message));
  json_object_put(t->error);
  t->error = err;
  t->status = TASK_FAILED;
  task_ended(t);
}

/* A new run of the task's call, with every answer given so far. */
static request *run_new(task *t) {
  json_object *params = parse_text(t->params);
  json_object *caps = t->caps != NULL ? parse_text(t->caps) : NULL;
  request *run;

  if (params == NULL) {
    json_object_put(caps);
    return NULL;
  }
  run = request_new_sink(t->modern ? NULL : t->session, t->id, "tools/call",
                         params, t->modern, caps, &run_sink, t);
  json_object_put(caps);
  if (run != NULL)
    run->task->task_id = t->id;
  return run;
}

/* Starts a run of the task's tool (again, after tasks/update). */
static void run_start(task *t) {
  reg_tool *tool = registry_find(t->ts->registry, REG_TOOL, t->tool);
  json_object *args = NULL;
  request *run;
  char text[200];

  if (tool == NULL) {
    snprintf(text, sizeof(text), "Tool %.100s is no longer offered", t->tool);
    task_fail(t, JSONRPC_INVALID_PARAMS, text);
    return;
  }
  if ((run = run_new(t)) == NULL) {
    task_fail(t, JSONRPC_INTERNAL_ERROR, "out of memory");
    return;
  }
  json_object_object_get_ex(run->params, "arguments", &args);
  t->run = run;
  set_status(t, TASK_WORKING);
  {
    call_args a = {.kind = CALL_TOOL,
                   .entry = tool,
                   .name = tool->name,
                   .arguments = args,
                   .answers = t->answers};
    call_start(t->ts->exec, run, &a);
  }
}

/* --- creating a task ------------------------------------------------------ */

static size_t owned_by(const tasks *ts, const char *owner) {
  size_t n = 0;
  for (const task *t = ts->head; t; t = t->next)
    n += strcmp(t->owner, owner) == 0;
  return n;
}

/* The TTL a request asked for (params.task.ttl, in ms), clamped to the
 * configured maximum; the maximum when it asked for none. */
static uint64_t ttl_of(const tasks *ts, const request *r) {
  json_object *hint = NULL, *v;
  uint64_t max = ts->opts->task_ttl_ms;

  if (json_object_object_get_ex(r->params, "task", &hint) &&
      json_object_object_get_ex(hint, "ttl", &v) &&
      (json_object_is_type(v, json_type_int) ||
       json_object_is_type(v, json_type_double))) {
    double ttl = json_object_get_double(v);
    if (ttl >= 1 && ttl < (double)max)
      return (uint64_t)ttl;
  }
  return max;
}

/* What each run of a task is asked, as JSON text: the tool, its checked
 * arguments and the request's _meta (its progressToken stays valid for
 * the task).  NULL when out of memory. */
static char *params_text(const char *tool, json_object *args, request *r) {
  json_object *params = json_object_new_object(), *meta = NULL;
  char *text = NULL;

  if (params == NULL)
    return NULL;
  json_object_object_add(params, "name", json_object_new_string(tool));
  json_object_object_add(params, "arguments",
                         json_object_is_type(args, json_type_object)
                             ? json_object_get(args)
                             : json_object_new_object());
  if (json_object_object_get_ex(r->params, "_meta", &meta) &&
      json_object_is_type(meta, json_type_object))
    json_object_object_add(params, "_meta", json_object_get(meta));
  text = strdup(json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN));
  json_object_put(params);
  return text;
}

/* A new task for call `r` of `tool`, in the store, or NULL after
 * answering `r` with why not. */
static task *task_new(tasks *ts, request *r, reg_tool *tool, json_object *args,
                      json_object *answers) {
  const char *owner = owner_of(r);
  task *t = NULL;
  char text[200];

  if (ts->count >= ts->opts->max_tasks ||
      owned_by(ts, owner) >= ts->opts->max_tasks_each) {
    snprintf(text, sizeof(text),
             "Server busy: %zu tasks are kept (the limit%s); retry when "
             "some have ended and expired",
             ts->count >= ts->opts->max_tasks ? ts->count : owned_by(ts, owner),
             ts->count >= ts->opts->max_tasks ? "" : " for one client");
    request_fail(r, JSONRPC_SERVER_BUSY, text, NULL);
    return NULL;
  }
  /* The table comes with the first task: a process whose clients make
   * none pays nothing for it. */
  if ((ts->by_id == NULL &&
       (ts->by_id = lh_kchar_table_new(64, NULL)) == NULL) ||
      (t = calloc(1, sizeof(*t))) == NULL ||
      new_id(ts, t->id, sizeof(t->id)) != 0 ||
      (t->owner = strdup(owner)) == NULL ||
      (t->tool = strdup(tool->name)) == NULL ||
      (t->params = params_text(t->tool, args, r)) == NULL ||
      (answers != NULL &&
       json_object_deep_copy(answers, &t->answers, NULL) != 0) ||
      (r->modern && r->client_capabilities != NULL &&
       (t->caps = strdup(json_object_to_json_string_ext(
            r->client_capabilities, JSON_C_TO_STRING_PLAIN))) == NULL)) {
    if (t != NULL) {
      free(t->owner);
      free(t->tool);
      free(t->params);
      json_object_put(t->answers);
      free(t);
    }
    request_fail(r, JSONRPC_INTERNAL_ERROR, "out of memory", NULL);
    return NULL;
  }
  t->ts = ts;
  t->modern = r->modern;
  t->session = r->modern ? NULL : r->session;
  t->status = TASK_WORKING;
  t->created_ms = t->updated_ms = wall_ms();
  t->ttl_ms = ttl_of(ts, r);
  lh_table_insert(ts->by_id, t->id, t);
  t->prev = ts->tail;
  if (ts->tail)
    ts->tail->next = t;
  else
    ts->head = t;
  ts->tail = t;
  ts->count++;
  log_debug("task %s: %s", t->id, t->tool);
  return t;
}

/* Answers `r` with the CreateTaskResult of `t`: nested under "task" for
 * 2025-11-25, flat with resultType "task" for the extension. */
static void answer_created(task *t, request *r) {
  if (r->modern) {
    r->result_type = "task";
    r->cache_scope = NULL;
    request_reply(r, task_json(t, 1, 0));
  } else {
    json_object *result = json_object_new_object();
    json_object_object_add(result, "task", task_json(t, 0, 0));
    request_reply(r, result);
  }
}

/* Whether a modern request negotiated the extension. */
static int has_extension(const request *r) {
  json_object *ext;
  return json_object_object_get_ex(r->client_capabilities, "extensions",
                                   &ext) &&
         json_object_object_get_ex(ext, ERA_EXT_TASKS, NULL);
}

/* -32021, naming the extension a modern request must declare. */
static void fail_missing(request *r, const char *what) {
  json_object *data = json_object_new_object();
  json_object *caps = json_object_new_object();
  json_object *ext = json_object_new_object();
  char text[300];

  json_object_object_add(ext, ERA_EXT_TASKS, json_object_new_object());
  json_object_object_add(caps, "extensions", ext);
  json_object_object_add(data, "requiredCapabilities", caps);
  snprintf(text, sizeof(text),
           "Missing client capability: %s needs the %s extension, which "
           "this request's clientCapabilities do not declare",
           what, ERA_EXT_TASKS);
  request_fail(r, ERA_ERR_MISSING_CAPABILITY, text, data);
}

/* request_task.begin: a call of a tool that becomes a task on request asked to.
 * The task takes over from `r`, which is answered with it. */
static request *begin_cb(void *arg, request *r) {
  tasks *ts = arg;
  reg_tool *tool = r->call != NULL ? call_entry(r->call) : NULL;
  json_object *args = NULL, *answers = NULL;
  request *run;
  task *t;

  if (tool == NULL)
    return NULL;
  json_object_object_get_ex(r->params, "arguments", &args);
  answers = call_retry_answers(r->call);
  if ((t = task_new(ts, r, tool, args, answers)) == NULL)
    return NULL; /* r was answered with why */
  if ((run = run_new(t)) == NULL) {
    task_fail(t, JSONRPC_INTERNAL_ERROR, "out of memory");
    answer_created(t, r);
    return NULL;
  }
  t->run = run;
  answer_created(t, r);
  return run;
}

int tasks_refuse(tasks *ts, request *r, reg_tool *tool) {
  int asked = json_object_object_get_ex(r->params, "task", NULL);

  if (ts->exec->worker)
    return 0; /* the host keeps its client's tasks */
  if (r->modern) {
    /* Server-directed: a legacy `task` param is tolerated and means
     * nothing; the tool and the request's extension decide. */
    if (tool->task_support != MCPD_TASK_REQUIRED || has_extension(r))
      return 0;
    fail_missing(r, "this tool (it runs only as a task)");
    return 1;
  }
  if (asked && tool->task_support == MCPD_TASK_FORBIDDEN) {
    request_fail(r, JSONRPC_METHOD_NOT_FOUND,
                 "Tool does not support task-augmented execution", NULL);
    return 1;
  }
  if (!asked && tool->task_support == MCPD_TASK_REQUIRED) {
    request_fail(r, JSONRPC_METHOD_NOT_FOUND,
                 "Tool requires task-augmented execution: call it with "
                 "params.task",
                 NULL);
    return 1;
  }
  return 0;
}

int tasks_tools_call(tasks *ts, request *r, reg_tool *tool, json_object *args,
                     json_object *answers) {
  task *t;

  if (ts->exec->worker || tool->task_support == MCPD_TASK_FORBIDDEN)
    return 0;
  if (r->modern) {
    if (!has_extension(r))
      return 0;
    if (tool->task_start == MCPD_TASK_ON_REQUEST) {
      r->task = &ts->begin;
      return 0;
    }
  } else if (!json_object_object_get_ex(r->params, "task", NULL)) {
    return 0;
  }
  if ((t = task_new(ts, r, tool, args, answers)) == NULL)
    return 1;
  /* The task exists before the client hears of it: a tasks/get right
   * after the answer finds it. */
  answer_created(t, r);
  run_start(t);
  return 1;
}

/* --- the methods --------------------------------------------------------- */

/* The extension's methods need a modern request to declare it. */
static int gated(request *r) {
  if (r->modern && !has_extension(r)) {
    fail_missing(r, r->method);
    return 1;
  }
  return 0;
}

void tasks_get(tasks *ts, request *r) {
  task *t;
  if (gated(r) || (t = find(ts, r)) == NULL)
    return;
  request_reply(r, task_json(t, r->modern, r->modern));
}

void tasks_result(tasks *ts, request *r) {
  task *t = find(ts, r);
  waiter *w;

  if (t == NULL)
    return;
  if (terminal(t)) {
    answer_result(t, r);
    return;
  }
  if ((w = calloc(1, sizeof(*w))) == NULL) {
    request_fail(r, JSONRPC_INTERNAL_ERROR, "out of memory", NULL);
    return;
  }
  /* The client waits here, maybe on a new connection: what the task asks
   * the client goes there from now on. */
  if (!t->modern && r->session != NULL && t->session != r->session) {
    t->session = r->session;
    if (t->run != NULL)
      t->run->session = r->session;
  }
  w->r = r;
  w->next = t->waiters;
  t->waiters = w;
}

int tasks_drop_waiter(tasks *ts, request *r) {
  for (task *t = ts->head; t; t = t->next)
    for (waiter **pp = &t->waiters; *pp; pp = &(*pp)->next)
      if ((*pp)->r == r) {
        waiter *w = *pp;
        *pp = w->next;
        free(w);
        request_reply(r, NULL); /* cancelled: nothing goes out */
        return 1;
      }
  return 0;
}

void tasks_list(tasks *ts, request *r) {
  const char *owner = owner_of(r);
  json_object *list = json_object_new_array(), *result, *v;
  size_t offset = 0, seen = 0, page = ts->opts->page_size;
  const char *cursor;
  char *end, next[32];

  if (json_object_object_get_ex(r->params, "cursor", &v) &&
      !json_object_is_type(v, json_type_null)) {
    cursor = jsonrpc_name(v);
    if (cursor == NULL || cursor[0] != 't' || cursor[1] < '0' ||
        cursor[1] > '9' ||
        (offset = (size_t)strtoull(cursor + 1, &end, 10), *end != '\0')) {
      json_object_put(list);
      request_fail(r, JSONRPC_INVALID_PARAMS, "Invalid params: invalid cursor",
                   NULL);
      return;
    }
  }
  next[0] = '\0';
  for (task *t = ts->head; t; t = t->next) {
    if (strcmp(t->owner, owner) != 0)
      continue;
    if (seen >= offset + page) {
      snprintf(next, sizeof(next), "t%zu", seen);
      break;
    }
    if (seen++ >= offset)
      json_object_array_add(list, task_json(t, 0, 0));
  }
  result = json_object_new_object();
  json_object_object_add(result, "tasks", list);
  if (next[0] != '\0')
    json_object_object_add(result, "nextCursor", json_object_new_string(next));
  request_reply(r, result);
}

void tasks_cancel(tasks *ts, request *r) {
  task *t;

  if (gated(r) || (t = find(ts, r)) == NULL)
    return;
  if (terminal(t)) {
    /* The extension acknowledges again; 2025-11-25 refuses. */
    if (r->modern) {
      request_reply(r, NULL);
    } else {
      char text[160];
      snprintf(text, sizeof(text), "Cannot cancel task: it is already %s",
               status_names[t->status]);
      request_fail(r, JSONRPC_INVALID_PARAMS, text, NULL);
    }
    return;
  }
  free(t->message);
  t->message = strdup("The task was cancelled by request.");
  t->status = TASK_CANCELLED;
  if (t->run != NULL && t->run->call != NULL)
    call_cancel(t->run->call);
  task_ended(t);
  if (r->modern)
    request_reply(r, NULL);
  else
    request_reply(r, task_json(t, 0, 0));
}

void tasks_update(tasks *ts, request *r) {
  json_object *responses = NULL;
  task *t;

  if (gated(r) || (t = find(ts, r)) == NULL)
    return;
  if (!json_object_object_get_ex(r->params, "inputResponses", &responses) ||
      !json_object_is_type(responses, json_type_object)) {
    request_fail(r, JSONRPC_INVALID_PARAMS,
                 "Invalid params: inputResponses must be an object", NULL);
    return;
  }
  /* Answers to what the task asks are taken; any other key is not its
   * question and is ignored. */
  if (t->pending != NULL && !terminal(t)) {
    json_object_object_foreach(responses, key, answer) {
      json_object *copy = NULL;
      if (!json_object_object_get_ex(t->pending, key, NULL) ||
          json_object_deep_copy(answer, &copy, NULL) != 0)
        continue;
      if (t->answers == NULL)
        t->answers = json_object_new_object();
      json_object_object_add(t->answers, key, copy);
      json_object_object_del(t->pending, key);
    }
  }
  request_reply(r, NULL);
  /* Everything answered: the tool runs again with all of it. */
  if (t->status == TASK_INPUT_REQUIRED && t->run == NULL &&
      t->pending != NULL && json_object_object_length(t->pending) == 0) {
    json_object_put(t->pending);
    t->pending = NULL;
    run_start(t);
  }
}

void tasks_by_status(const tasks *ts, size_t counts[5]) {
  memset(counts, 0, 5 * sizeof(*counts));
  for (const task *t = ts->head; t; t = t->next)
    counts[t->status]++;
}

void tasks_session_closed(tasks *ts, session *s) {
  for (task *t = ts->head; t; t = t->next) {
    if (t->session == s)
      t->session = NULL;
    if (t->run != NULL && t->run->session == s)
      t->run->session = NULL;
  }
}
