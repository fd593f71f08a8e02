/* SPDX-License-Identifier: MIT */
/* input_thread.c -- see input_thread.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input_thread.h"
#include "platform.h"
#include "watchdog.h"

/* One read() at most; the thread waits while this much is not taken. */
#define CHUNK (64 * 1024)
#define HIGH_WATER (1024 * 1024)

struct input_thread {
  uv_async_t async; /* wakes the loop; first, for the close callback */
  uv_thread_t thread;
  uv_mutex_t lock;
  uv_cond_t room;
  int fd;
  /* Under the lock. */
  char *buf;
  size_t len, cap;
  int ended; /* the thread read its last */
  int error; /* why, as a libuv error; 0 at EOF */
  int stop;  /* the owner closed: no async_send any more */
  int refs;  /* the thread's and the owner's */
  /* The loop's. */
  input_thread_cb cb;
  void *arg;
  int paused, closing, told_end, saw_end, end_status;
  void (*closed)(void *arg);
  void *closed_arg;
};

static void release(input_thread *r) {
  int last;
  uv_mutex_lock(&r->lock);
  last = --r->refs == 0;
  uv_mutex_unlock(&r->lock);
  if (!last)
    return;
  uv_cond_destroy(&r->room);
  uv_mutex_destroy(&r->lock);
  free(r->buf);
  free(r);
}

/* Appends under the lock: 0, or -1 when memory is lacking. */
static int append(input_thread *r, const char *data, size_t n) {
  if (r->len + n > r->cap) {
    size_t cap = r->cap ? r->cap : CHUNK;
    char *grown;
    while (cap < r->len + n)
      cap *= 2;
    if ((grown = realloc(r->buf, cap)) == NULL)
      return -1;
    r->buf = grown;
    r->cap = cap;
  }
  memcpy(r->buf + r->len, data, n);
  r->len += n;
  return 0;
}

static void run(void *arg) {
  input_thread *r = arg;
  char *chunk = malloc(CHUNK);

  for (;;) {
    ssize_t n;
    int done;

    uv_mutex_lock(&r->lock);
    while (r->len >= HIGH_WATER && !r->stop)
      uv_cond_wait(&r->room, &r->lock);
    done = r->stop;
    uv_mutex_unlock(&r->lock);
    if (done)
      break;
    if (chunk == NULL) {
      n = -1;
      errno = ENOMEM;
    } else {
      do
        n = read(r->fd, chunk, CHUNK);
      while (n < 0 && errno == EINTR);
    }
    uv_mutex_lock(&r->lock);
    if (n > 0 && append(r, chunk, (size_t)n) != 0) {
      n = -1;
      errno = ENOMEM;
    }
    if (n <= 0) {
      r->ended = 1;
      r->error = n < 0 ? platform_uv_error(errno) : 0;
      /* The loop may be held by plugin code: the watchdog must know. */
      watchdog_input_ended();
    }
    done = r->ended || r->stop;
    if (!r->stop)
      uv_async_send(&r->async);
    uv_mutex_unlock(&r->lock);
    if (done)
      break;
  }
  free(chunk);
  release(r);
}

/* Hands over what waits, then the end, unless paused or closed. */
static void async_cb(uv_async_t *async) {
  input_thread *r = async->data;
  char *data = NULL;
  size_t len = 0;

  if (r->paused || r->closing)
    return;
  uv_mutex_lock(&r->lock);
  if (r->len > 0) {
    data = r->buf;
    len = r->len;
    r->buf = NULL;
    r->len = r->cap = 0;
    uv_cond_signal(&r->room);
  }
  if (r->ended && !r->saw_end) {
    r->saw_end = 1;
    r->end_status = r->error ? r->error : UV_EOF;
  }
  uv_mutex_unlock(&r->lock);
  if (len > 0)
    r->cb(r->arg, data, len, 0);
  free(data);
  /* The callback may have paused or closed. */
  if (r->saw_end && !r->told_end && !r->paused && !r->closing) {
    r->told_end = 1;
    r->cb(r->arg, NULL, 0, r->end_status);
  }
}

input_thread *input_thread_start(uv_loop_t *loop, int fd, input_thread_cb cb,
                                 void *arg) {
  input_thread *r = calloc(1, sizeof(*r));

  if (r == NULL)
    return NULL;
  r->fd = fd;
  r->cb = cb;
  r->arg = arg;
  r->refs = 2;
  if (uv_mutex_init(&r->lock) != 0) {
    free(r);
    return NULL;
  }
  if (uv_cond_init(&r->room) != 0) {
    uv_mutex_destroy(&r->lock);
    free(r);
    return NULL;
  }
  if (uv_async_init(loop, &r->async, async_cb) != 0) {
    uv_cond_destroy(&r->room);
    uv_mutex_destroy(&r->lock);
    free(r);
    return NULL;
  }
  r->async.data = r;
  if (uv_thread_create(&r->thread, run, r) != 0) {
    /* Closed as usual, without a thread to let go. */
    r->refs = 1;
    input_thread_close(r, NULL, NULL);
    return NULL;
  }
  return r;
}

void input_thread_pause(input_thread *r, int paused) {
  r->paused = paused;
  if (!paused)
    uv_async_send(&r->async); /* what waits, if anything does */
}

static void close_cb(uv_handle_t *handle) {
  input_thread *r = handle->data;
  if (r->closed != NULL)
    r->closed(r->closed_arg);
  release(r);
}

void input_thread_close(input_thread *r, void (*closed)(void *arg), void *arg) {
  r->closing = 1;
  r->closed = closed;
  r->closed_arg = arg;
  uv_mutex_lock(&r->lock);
  r->stop = 1;
  uv_cond_signal(&r->room);
  uv_mutex_unlock(&r->lock);
  uv_close((uv_handle_t *)&r->async, close_cb);
}
