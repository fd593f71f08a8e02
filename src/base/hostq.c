/* SPDX-License-Identifier: MIT */
/* hostq.c -- the queue through which other threads hand work to the loop. */
#include "config.h"

#include <string.h>

#include "hostq.h"

/* Enough to empty a burst of progress or log events in one turn, small
 * enough that a turn stays well under a millisecond. */
#define HOSTQ_BATCH 256

static hostq_event *pop(hostq *q) {
  hostq_event *ev;
  uv_mutex_lock(&q->lock);
  ev = q->head;
  if (ev != NULL) {
    q->head = ev->next;
    if (q->head == NULL)
      q->tail = NULL;
    atomic_fetch_sub(&q->length, 1);
  }
  uv_mutex_unlock(&q->lock);
  return ev;
}

static void async_cb(uv_async_t *handle) {
  hostq *q = handle->data;
  size_t n;

  for (n = 0; n < q->batch; n++) {
    hostq_event *ev = pop(q);
    if (ev == NULL)
      return;
    ev->run(ev);
  }
  /* More is waiting: come back on the next turn, after I/O. */
  if (!hostq_empty(q))
    uv_async_send(&q->async);
}

int hostq_init(hostq *q, uv_loop_t *loop) {
  int rc;
  memset(q, 0, sizeof(*q));
  q->batch = HOSTQ_BATCH;
  q->loop_thread = uv_thread_self();
  atomic_init(&q->length, 0);
  if ((rc = uv_mutex_init(&q->lock)) != 0)
    return rc;
  if ((rc = uv_async_init(loop, &q->async, async_cb)) != 0) {
    uv_mutex_destroy(&q->lock);
    return rc;
  }
  q->async.data = q;
  return 0;
}

static void close_cb(uv_handle_t *handle) {
  hostq *q = handle->data;
  uv_mutex_destroy(&q->lock);
}

void hostq_close(hostq *q) {
  hostq_event *ev;
  while ((ev = pop(q)) != NULL)
    ev->run(ev);
  uv_close((uv_handle_t *)&q->async, close_cb);
}

void hostq_post(hostq *q, hostq_event *ev) {
  ev->next = NULL;
  uv_mutex_lock(&q->lock);
  if (q->tail != NULL)
    q->tail->next = ev;
  else
    q->head = ev;
  q->tail = ev;
  atomic_fetch_add(&q->length, 1);
  uv_mutex_unlock(&q->lock);
  uv_async_send(&q->async);
}

int hostq_empty(hostq *q) {
  return atomic_load(&q->length) == 0;
}

int hostq_on_loop(const hostq *q) {
  uv_thread_t self = uv_thread_self();
  return uv_thread_equal(&self, &q->loop_thread);
}
