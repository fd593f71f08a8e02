/* SPDX-License-Identifier: MIT */
/* ask.h -- what a call says to and asks of its client: progress, requests
 * (sampling, elicitation, roots) with their timeouts, the end of a URL
 * elicitation, and for a 2026-07-28 client the input_required answer that
 * carries the questions and a sealed requestState instead. */
#ifndef MCPD_ASK_H
#define MCPD_ASK_H

#include <pthread.h>

#include "call_core.h"

/* The name a worker gave its request (client_request_keyed()), which
 * travels in the params' _meta to the host and must not reach the
 * client. */
#define INPUT_KEY_META "io.mcpd/inputKey"

/* Hooks of a call's life (see call_core.h). */
void ask_setup(mcpd_call *c);
void ask_cancel(mcpd_call *c); /* requests in flight are given up */
void ask_end(mcpd_call *c);    /* likewise */
void ask_free_call(mcpd_call *c);
/* Answers the call's request: input_required when the run asked what the
 * retry must answer, -32021 when it failed for want of a capability the
 * modern request did not declare, else what result.c answers. */
void ask_answer(mcpd_call *c, request *r, int status);

/* client_request_keyed() on an entered call: `cb` runs exactly once on
 * the loop with the answer or an error; `key` may be NULL.  Takes
 * `params`. */
int ask_client(mcpd_call *c, const char *key, const char *method,
               json_object *params,
               void (*cb)(void *, json_object *, int, const char *), void *arg);
/* What a thread blocked in client_request_wait() waits for: set up with
 * ask_waiter_init(), handed to ask_client() with ask_waiter_reply() as the
 * callback, then waited for with ask_waiter_wait() (which returns MCPD_OK
 * with *result, or MCPD_ERROR with last_error and *error, if not NULL,
 * set) or, when the request was refused, let go with ask_waiter_done(). */
typedef struct ask_waiter {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done;
  json_object *result; /* a private copy */
  char *error;
} ask_waiter;

void ask_waiter_init(ask_waiter *w);
void ask_waiter_reply(void *arg, json_object *result, int code,
                      const char *message);
int ask_waiter_wait(ask_waiter *w, json_object **result, char **error);
void ask_waiter_done(ask_waiter *w);

/* progress(), elicitation_complete() and call_roots() on an entered
 * call. */
int ask_progress(mcpd_call *c, double progress, double total,
                 const char *message);
int ask_elicitation_complete(mcpd_call *c, const char *id);
json_object *ask_roots(mcpd_call *c);

/* task_status() and task_begin() on an entered call. */
int ask_task_status(mcpd_call *c, const char *message);
int ask_task_begin(mcpd_call *c);
/* What they do on the loop thread, also for what a worker said of its
 * call (these notifications, related to the call's request). */
#define ASK_TASK_STATUS_METHOD "io.mcpd/taskStatus"
#define ASK_TASK_BEGIN_METHOD "io.mcpd/taskBegin"
void ask_task_status_now(mcpd_call *c, const char *message);
void ask_task_begin_now(mcpd_call *c);

#endif
