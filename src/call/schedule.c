/* SPDX-License-Identifier: MIT */
/* schedule.c -- where and until when a call runs: POOL calls of one plugin
 * wait their turn when it holds its share of the worker threads, and
 * every call that does not run inline has a deadline, after which its
 * client is answered and the plugin told to cancel. */
#include "config.h"

#include <limits.h>
#include <stdio.h>

#include "jsonrpc.h"
#include "loader.h"
#include "plugin_settings.h"
#include "schedule.h"

/* --- worker threads, shared fairly ------------------------------------- */

static void after_work_cb(uv_work_t *work, int status);

static void work_cb(uv_work_t *work) {
  mcpd_call *c = work->data;
  c->sched.status = call_invoke(c);
  /* Completed here, on the worker, not in after_work_cb: a cancellation
   * the loop handles in between must not run the plugin's on_cancel
   * callback after the tool returned. */
  call_mark_completed(c);
}

static void pool_start(mcpd_call *c) {
  plugin *p = c->plugin;
  p->pool_running++;
  if (uv_queue_work(c->exec->loop, &c->sched.work, work_cb, after_work_cb) !=
      0) {
    p->pool_running--;
    call_mark_completed(c);
    call_done(c, MCPD_ERROR);
  }
}

/* Starts the plugin's waiting calls while it is under its share. */
static void pool_next(plugin *p, unsigned cap) {
  while (p->pool_head != NULL && p->pool_running < cap) {
    mcpd_call *c = p->pool_head;
    if ((p->pool_head = c->sched.pool_next) == NULL)
      p->pool_tail = NULL;
    c->sched.pool_next = NULL;
    c->sched.pool_waiting = 0;
    pool_start(c);
  }
}

/* Runs a POOL call on a worker thread, or queues it behind its plugin's
 * other calls when the plugin holds its share of the threads already:
 * calls that never return starve only their own plugin. */
static void pool_submit(mcpd_call *c) {
  plugin *p = c->plugin;
  if (p->pool_running < c->exec->pool_cap && p->pool_head == NULL) {
    pool_start(c);
    return;
  }
  c->sched.pool_waiting = 1;
  if (p->pool_tail)
    p->pool_tail->sched.pool_next = c;
  else
    p->pool_head = c;
  p->pool_tail = c;
}

/* Takes a call that never got a thread out of its plugin's queue. */
static void pool_withdraw(mcpd_call *c) {
  plugin *p = c->plugin;
  mcpd_call **pp = &p->pool_head, *prev = NULL;
  while (*pp != NULL && *pp != c) {
    prev = *pp;
    pp = &(*pp)->sched.pool_next;
  }
  if (*pp == NULL)
    return;
  *pp = c->sched.pool_next;
  if (p->pool_tail == c)
    p->pool_tail = prev;
  c->sched.pool_next = NULL;
  c->sched.pool_waiting = 0;
}

static void after_work_cb(uv_work_t *work, int status) {
  mcpd_call *c = work->data;
  plugin *p = c->plugin;
  /* work_cb marked it, unless the pool cancelled the work before it ran. */
  if (status != 0)
    call_mark_completed(c);
  /* The thread is free: the plugin's next call gets it (before this
   * call's finish, which may drop the last reference to the plugin). */
  p->pool_running--;
  pool_next(p, c->exec->pool_cap ? c->exec->pool_cap : UINT_MAX);
  call_done(c, status == 0 ? c->sched.status : MCPD_ERROR);
}

int sched_start_pool(mcpd_call *c) {
  if (c->entry->exec == MCPD_EXEC_INLINE || c->entry->exec == MCPD_EXEC_ASYNC)
    return 0;
  if (c->exec->pool_cap == 0)
    pool_start(c);
  else
    pool_submit(c);
  return 1;
}

void sched_setup(mcpd_call *c) {
  c->sched.work.data = c;
}

void sched_cancel(mcpd_call *c) {
  /* A call still waiting for a worker thread never runs. */
  if (c->sched.pool_waiting) {
    pool_withdraw(c);
    call_mark_completed(c);
    (void)call_finish_queued(c, MCPD_ERROR);
  }
}

/* --- deadlines ----------------------------------------------------------
 *
 * One timer per exec, armed for the soonest deadline of a list kept in
 * due order: a call starts and ends without a timer handle of its own.
 * Most calls share one deadline length, so a new one goes at the tail and
 * the walk back from there is short. */

/* The call ran past its deadline: its client gets an error now, the
 * plugin is told to cancel, and whatever it produces later is dropped. */
static void deadline_passed(mcpd_call *c) {
  json_object *data;
  char msg[300];

  if (c->req == NULL || atomic_load(&c->completed))
    return; /* answered, or its finish is on its way */
  snprintf(msg, sizeof(msg),
           "plugin \"%s\": %s \"%s\" did not finish within its deadline of "
           "%llu ms",
           c->plugin->name, call_what(c), c->name,
           (unsigned long long)c->sched.deadline_ms);
  c->sched.deadline_passed = 1;
  data = json_object_new_object();
  json_object_object_add(data, "plugin",
                         json_object_new_string(c->plugin->name));
  json_object_object_add(data, "deadlineMs",
                         json_object_new_int64((int64_t)c->sched.deadline_ms));
  call_answer_early(c, JSONRPC_REQUEST_TIMEOUT, msg, data);
  call_cancel(c);
}

int sched_deadline_passed(const mcpd_call *c) {
  return c->sched.deadline_passed;
}

static void deadline_timer_cb(uv_timer_t *t);

/* Arms the exec's timer for its soonest deadline. */
static void deadline_arm(call_exec *e) {
  uint64_t now = uv_now(e->loop), due = e->deadlines->sched.deadline_due;
  uv_timer_start(&e->deadline_timer, deadline_timer_cb,
                 due > now ? due - now : 0, 0);
}

static void deadline_start(mcpd_call *c, uint64_t ms) {
  call_exec *e = c->exec;
  mcpd_call *after = e->deadlines_tail;
  call_sched *s = &c->sched;

  if (ms == 0)
    return;
  s->deadline_ms = ms;
  s->deadline_due = uv_now(e->loop) + ms;
  while (after != NULL && after->sched.deadline_due > s->deadline_due)
    after = after->sched.deadline_prev;
  s->deadline_prev = after;
  s->deadline_next = after != NULL ? after->sched.deadline_next : e->deadlines;
  if (s->deadline_next != NULL)
    s->deadline_next->sched.deadline_prev = c;
  else
    e->deadlines_tail = c;
  if (after != NULL) {
    after->sched.deadline_next = c;
  } else {
    e->deadlines = c;
    deadline_arm(e);
  }
}

/* Takes the call's deadline out of the list.  A timer armed for it may
 * still fire; it then finds nothing due and re-arms. */
static void deadline_stop(mcpd_call *c) {
  call_exec *e = c->exec;
  call_sched *s = &c->sched;
  if (s->deadline_due == 0)
    return;
  if (s->deadline_prev != NULL)
    s->deadline_prev->sched.deadline_next = s->deadline_next;
  else
    e->deadlines = s->deadline_next;
  if (s->deadline_next != NULL)
    s->deadline_next->sched.deadline_prev = s->deadline_prev;
  else
    e->deadlines_tail = s->deadline_prev;
  s->deadline_prev = s->deadline_next = NULL;
  s->deadline_due = 0;
  if (e->deadlines == NULL)
    uv_timer_stop(&e->deadline_timer);
}

static void deadline_timer_cb(uv_timer_t *t) {
  call_exec *e = t->data;
  uint64_t now = uv_now(e->loop);
  mcpd_call *c;

  while ((c = e->deadlines) != NULL && c->sched.deadline_due <= now) {
    deadline_stop(c);
    deadline_passed(c);
  }
  if (e->deadlines != NULL)
    deadline_arm(e);
}

/* An INLINE callback holds the loop until it returns: no timer can fire
 * before then (the watchdog covers it at exit). */
int sched_start_deadline(mcpd_call *c) {
  call_exec *e = c->exec;
  if (c->entry->exec != MCPD_EXEC_INLINE && e->opts != NULL)
    deadline_start(
        c, plugin_settings_deadline(e->opts, c->plugin->name,
                                    c->kind == CALL_TOOL ? c->name : NULL));
  return 0;
}

void sched_end(mcpd_call *c) {
  deadline_stop(c);
}

void sched_init(call_exec *e) {
  uv_timer_init(e->loop, &e->deadline_timer);
  e->deadline_timer.data = e;
}

void sched_close(call_exec *e) {
  uv_close((uv_handle_t *)&e->deadline_timer, NULL);
}
