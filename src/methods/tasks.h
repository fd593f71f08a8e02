/* SPDX-License-Identifier: MIT */
/* tasks.h -- tool calls that outlive their request: the 2025-11-25
 * tasks (params.task, tasks/get, tasks/result, tasks/list, tasks/cancel,
 * notifications/tasks/status) and the 2026-07-28 extension
 * io.modelcontextprotocol/tasks (server-directed creation, tasks/get with
 * the result inlined, tasks/update, tasks/cancel, notifications/tasks on
 * a listen stream).
 *
 * A task lives here, in the process that serves the client, whichever
 * process runs its plugin: its run is a call like any other, started on a
 * request no client sent (request_new_sink()), whose answer becomes the
 * task's.  A task belongs to the identity of the client that made it
 * (session.owner): it outlives the session, and only that identity can
 * see it.  Tasks are bounded in number, in all and per identity, and are
 * kept for their TTL once they end. */
#ifndef MCPD_TASKS_H
#define MCPD_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>
#include <uv.h>

#include "call.h"
#include "methods_settings.h"
#include "registry.h"
#include "session.h"

struct task;
struct lh_table;

typedef struct tasks {
  call_exec *exec;
  registry *registry;
  const methods_settings *opts;
  /* A modern task changed: `task` (the DetailedTask, consumed) goes to
   * the listen streams that asked for it.  Set by the owner. */
  void (*changed_cb)(void *arg, const char *id, json_object *task);
  void *changed_arg;
  struct task *head, *tail; /* every task, oldest first */
  size_t count;
  struct lh_table *by_id;
  uv_timer_t expiry; /* fires when the soonest ended task expires */
  /* What the requests of tools that become tasks on request point to. */
  request_task begin;
  int closed; /* the timer is closed: shutting down */
} tasks;

int tasks_init(tasks *ts, call_exec *exec, registry *reg,
               const methods_settings *opts);
/* Shutdown: every task's run is cancelled (`abandon`: answered now, as
 * call_abandon() does) and the timer closes. */
void tasks_shutdown(tasks *ts, int abandon);
/* Frees every task (after the loop ran its last turn). */
void tasks_free(tasks *ts);

/* tools/call of `tool`, before its arguments are checked: returns 1 after
 * refusing a call the tool's task support rules out (a task asked of a
 * tool that forbids them, a task-only tool called without one), else 0. */
int tasks_refuse(tasks *ts, request *r, reg_tool *tool);
/* tools/call of `tool` with checked `args` and a modern retry's `answers`
 * (may be NULL): returns 1 when it answered `r` (a task was created, or a
 * refusal), 0 when the caller runs the call as usual -- then `r` may have
 * begin_task set, for a tool that becomes a task on request. */
int tasks_tools_call(tasks *ts, request *r, reg_tool *tool, json_object *args,
                     json_object *answers);

/* The methods; each answers `r` exactly once.  tasks/result waits for the
 * task to end. */
void tasks_get(tasks *ts, request *r);
void tasks_result(tasks *ts, request *r);
void tasks_list(tasks *ts, request *r);
void tasks_cancel(tasks *ts, request *r);
void tasks_update(tasks *ts, request *r);

/* How many tasks have each status: working, input_required, completed,
 * failed, cancelled (in that order). */
void tasks_by_status(const tasks *ts, size_t counts[5]);
extern const char *const tasks_status_names[5];

/* A session is going away: its tasks carry on without it. */
void tasks_session_closed(tasks *ts, session *s);
/* The client cancelled request `r`: when it is a tasks/result waiting,
 * it stops waiting (unanswered, as cancelled requests are); returns 1
 * then, else 0. */
int tasks_drop_waiter(tasks *ts, request *r);
/* Whether the caller of `r` may see task `id` (subscribe.c's check for a
 * listen's taskIds). */
int tasks_visible(void *ts, const char *id, const request *r);

#endif
