/* SPDX-License-Identifier: MIT */
/* hostq.h -- the queue through which other threads hand work to the loop.
 *
 * Plugin code runs on pool workers and on threads of its own; whatever it
 * hands back (a completion, progress, a log line, a tool added at run
 * time) becomes an event on this queue, and the loop thread runs it.  An
 * event carries its own `run` function, so the queue knows nothing of what
 * it transports.  Events run in the order they were posted.
 *
 * Each loop turn runs a bounded batch: a thread that posts in a tight loop
 * cannot keep the loop from reading input, answering pings or noticing
 * EOF and signals. */
#ifndef MCPD_HOSTQ_H
#define MCPD_HOSTQ_H

#include <stdatomic.h>
#include <stddef.h>

#include <uv.h>

typedef struct hostq_event hostq_event;

/* Runs on the loop thread and owns `ev` (frees it). */
typedef void (*hostq_run_cb)(hostq_event *ev);

/* Embed as the first member of an event type of your own. */
struct hostq_event {
  hostq_event *next;
  hostq_run_cb run;
};

typedef struct hostq {
  uv_mutex_t lock;
  hostq_event *head;
  hostq_event *tail;
  atomic_size_t length;
  uv_async_t async;
  uv_thread_t loop_thread;
  size_t batch; /* events run per loop turn */
} hostq;

/* Call on the loop thread, which becomes the queue's consumer. */
int hostq_init(hostq *q, uv_loop_t *loop);
/* Runs what is left, then closes the wake-up handle (loop thread). */
void hostq_close(hostq *q);

/* Queues `ev` from any thread and wakes the loop. */
void hostq_post(hostq *q, hostq_event *ev);
/* Whether nothing is queued.  Exact on the loop thread for events that the
 * loop itself posted; a hint for events from other threads. */
int hostq_empty(hostq *q);
/* Whether the calling thread is the loop thread. */
int hostq_on_loop(const hostq *q);

#endif
