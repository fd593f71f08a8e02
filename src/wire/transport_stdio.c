/* SPDX-License-Identifier: MIT */
/* transport_stdio.c -- newline-delimited JSON-RPC over stdin/stdout. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "framer.h"
#ifdef _WIN32
#include "input_thread.h"
#endif
#include "log.h"
#include "platform.h"
#include "strbuf.h"
#include "transport_stdio.h"

#define READ_CHUNK (64 * 1024)
/* Reading pauses while this much output waits, resumes below the low mark:
 * a client that stops reading cannot make mcpd buffer without bound. */
#define OUT_HIGH_WATER (8u << 20)
#define OUT_LOW_WATER (1u << 20)
/* Output buffers larger than this are released once written. */
#define OUT_KEEP_CAP (256u * 1024)

typedef union stdio_handle {
  uv_handle_t handle;
  uv_stream_t stream;
  uv_pipe_t pipe;
  uv_tty_t tty;
  uv_tcp_t tcp;
} stdio_handle;

struct stdio_transport {
  uv_loop_t *loop;
  stdio_transport_cb cb;
  int in_fd, out_fd;
  uv_handle_type in_type, out_type;
  stdio_handle in, out;
  int in_handle, out_handle; /* initialized libuv handles */
#ifdef _WIN32
  /* Windows reads an input pipe on a thread (input_thread.h), started
   * with the first read: what the worker handshake reads before that is
   * not taken from it. */
  int in_pipe_thread;
  input_thread *in_thread;
#endif
  uv_idle_t idle; /* drives reads of a regular file */
  int idle_handle;
  /* Writes made outside a read (calls that end on other threads, in a
   * worker, on a timer) wait for the next idle phase: those of one loop
   * turn leave in one write. */
  uv_idle_t flush;
  int flush_handle;
  uv_write_t stream_write;
  framer framer;
  strbuf pending; /* accumulating */
  strbuf flight;  /* being written */
  int writing;
  int dispatching; /* handling a read: hold writes until it is done */
  int reading;
  int paused;
  int stopped;
  int closing;
  int failed;
  int open_handles;
  void (*done)(void *arg);
  void *done_arg;
};

static void start_reading(stdio_transport *t);
static void maybe_finish_close(stdio_transport *t);

static int is_stream(uv_handle_type type) {
  return type == UV_TTY || type == UV_NAMED_PIPE || type == UV_TCP;
}

static int open_handle(uv_loop_t *loop, stdio_handle *h, uv_handle_type type,
                       int fd, int readable) {
  switch (type) {
  case UV_TTY:
    return uv_tty_init(loop, &h->tty, fd, readable);
  case UV_NAMED_PIPE: {
    int rc = uv_pipe_init(loop, &h->pipe, 0);
    if (rc == 0 && (rc = uv_pipe_open(&h->pipe, fd)) != 0)
      uv_close(&h->handle, NULL);
    return rc;
  }
  case UV_TCP: {
    int rc = uv_tcp_init(loop, &h->tcp);
    if (rc == 0 && (rc = uv_tcp_open(&h->tcp, fd)) != 0)
      uv_close(&h->handle, NULL);
    return rc;
  }
  default:
    return UV_EINVAL;
  }
}

int stdio_transport_input_fd(const stdio_transport *t) {
  return t->in_fd;
}

int stdio_transport_output_fd(const stdio_transport *t) {
  return t->out_fd;
}

int stdio_take_stdout(void) {
  int fd = platform_dup_private(1);
  if (fd >= 0 && dup2(2, 1) < 0)
    log_warn("cannot point fd 1 at stderr: %s", strerror(errno));
  return fd;
}

stdio_transport *stdio_transport_new(uv_loop_t *loop, size_t max_message,
                                     const stdio_transport_cb *cb) {
  stdio_transport *t = calloc(1, sizeof(*t));
  if (t == NULL)
    return NULL;
  t->loop = loop;
  t->cb = *cb;
  framer_init(&t->framer, max_message);

  t->out_fd = stdio_take_stdout();
  if (t->out_fd < 0) {
    log_error("stdout is not open: %s", strerror(errno));
    free(t);
    return NULL;
  }
  /* The same for input: a plugin's child process must not read the
   * client's next request, so fd 0 becomes /dev/null and the protocol
   * reads a private, close-on-exec copy. */
  t->in_fd = platform_dup_private(0);
  if (t->in_fd < 0) {
    log_error("stdin is not open: %s", strerror(errno));
    close(t->out_fd);
    free(t);
    return NULL;
  }
  {
    int null = open(PLATFORM_DEV_NULL, O_RDONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0)
      log_warn("cannot point fd 0 at /dev/null: %s", strerror(errno));
    if (null > 0)
      close(null);
  }

  t->in_type = uv_guess_handle(t->in_fd);
#ifdef _WIN32
  if (t->in_type == UV_NAMED_PIPE)
    t->in_pipe_thread = 1;
  else
#endif
      if (is_stream(t->in_type)) {
    if (open_handle(loop, &t->in, t->in_type, t->in_fd, 1) != 0)
      t->in_type = UV_FILE;
    else {
      t->in_handle = 1;
      t->in.handle.data = t;
    }
  } else {
    t->in_type = UV_FILE;
  }
  uv_idle_init(loop, &t->flush);
  t->flush.data = t;
  t->flush_handle = 1;
  if (t->in_type == UV_FILE) {
    uv_idle_init(loop, &t->idle);
    t->idle.data = t;
    t->idle_handle = 1;
  }
  t->out_type = uv_guess_handle(t->out_fd);
  if (is_stream(t->out_type)) {
    if (open_handle(loop, &t->out, t->out_type, t->out_fd, 0) != 0)
      t->out_type = UV_FILE;
    else {
      t->out_handle = 1;
      t->out.handle.data = t;
    }
  } else {
    t->out_type = UV_FILE;
  }
  return t;
}

/* --- output ------------------------------------------------------------- */

static void fail(stdio_transport *t, int status) {
  if (t->failed)
    return;
  t->failed = 1;
  if (status == UV_EPIPE || status == UV_ECONNRESET)
    log_debug("stdout closed by the client");
  else
    log_error("writing stdout failed: %s", uv_strerror(status));
  t->pending.len = 0;
  stdio_transport_stop_reading(t);
  t->cb.end(t->cb.arg, "stdout closed");
}

static void start_write(stdio_transport *t);

/* The buffer in flight is fully written: recycle it, resume reading if
 * output had paused it. */
static void flight_written(stdio_transport *t) {
  t->writing = 0;
  t->flight.len = 0;
  if (t->flight.cap > OUT_KEEP_CAP) {
    free(t->flight.data);
    memset(&t->flight, 0, sizeof(t->flight));
  }
  if (t->paused && t->pending.len < OUT_LOW_WATER) {
    t->paused = 0;
    start_reading(t);
  }
}

static void write_done(stdio_transport *t, int status) {
  t->writing = 0;
  if (status < 0) {
    fail(t, status);
  } else {
    flight_written(t);
    if (t->pending.len > 0 && !t->failed)
      start_write(t);
  }
  if (t->closing)
    maybe_finish_close(t);
}

static void stream_write_cb(uv_write_t *req, int status) {
  /* NULL: a forced close abandoned this write. */
  if (req->data != NULL)
    write_done(req->data, status);
}

/* Output to a regular file is written on the loop, synchronously: such a
 * write does not wait for a reader, and mcpd's own I/O must never queue
 * behind plugin work on the thread pool. */
static int file_write_all(stdio_transport *t) {
  size_t off = 0;
  while (off < t->flight.len) {
    ssize_t n = write(t->out_fd, t->flight.data + off, t->flight.len - off);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return platform_uv_error(errno);
    }
    off += (size_t)n;
  }
  return 0;
}

static void start_write(stdio_transport *t) {
  strbuf tmp = t->flight;
  uv_buf_t b;
  int rc;

  t->flight = t->pending;
  t->pending = tmp;
  t->pending.len = 0;
  t->writing = 1;
  b = uv_buf_init(t->flight.data, (unsigned)t->flight.len);
  if (t->out_handle) {
    /* Most writes fit in the pipe at once; uv_try_write then saves the
     * deferred callback and the extra loop turn a uv_write costs. */
    rc = uv_try_write(&t->out.stream, &b, 1);
    if (rc == (int)b.len) {
      flight_written(t);
      return;
    }
    if (rc < 0 && rc != UV_EAGAIN && rc != UV_ENOSYS) {
      t->writing = 0;
      fail(t, rc);
      return;
    }
    if (rc > 0)
      b = uv_buf_init(b.base + rc, b.len - (unsigned)rc);
    t->stream_write.data = t;
    rc = uv_write(&t->stream_write, &t->out.stream, &b, 1, stream_write_cb);
  } else {
    rc = file_write_all(t);
    if (rc == 0) {
      flight_written(t);
      return;
    }
  }
  if (rc != 0) {
    t->writing = 0;
    fail(t, rc);
  }
}

static void flush_cb(uv_idle_t *idle) {
  stdio_transport *t = idle->data;
  uv_idle_stop(idle);
  if (!t->writing && !t->failed && t->pending.len > 0)
    start_write(t);
}

/* Starts a write unless one is in flight or a read is being handled: every
 * reply to one read goes out in one write, and so do the replies of one
 * loop turn. */
static void flush_soon(stdio_transport *t) {
  if (!t->writing && !t->dispatching) {
    if (t->pending.len > 0) {
      if (t->flush_handle && !t->closing)
        uv_idle_start(&t->flush, flush_cb);
      else
        start_write(t);
    }
  } else if (t->pending.len > OUT_HIGH_WATER && t->reading) {
    t->paused = 1;
    if (t->in_handle)
      uv_read_stop(&t->in.stream);
#ifdef _WIN32
    if (t->in_thread != NULL)
      input_thread_pause(t->in_thread, 1);
#endif
    t->reading = 0;
  }
}

static int accepting(stdio_transport *t) {
  return !t->failed && !(t->closing && t->open_handles > 0 && !t->out_handle);
}

void stdio_transport_write(void *ctx, json_object *related, int answer,
                           int code, const char *const *parts,
                           const size_t *lens, int n) {
  stdio_transport *t = ctx;
  size_t total = 1;

  (void)related, (void)answer, (void)code; /* one stream carries everything */
  if (!accepting(t))
    return;
  for (int i = 0; i < n; i++)
    total += lens[i];
  if (strbuf_reserve(&t->pending, total) != 0) {
    t->pending.failed = 0;
    log_error("out of memory queueing a %zu-byte message; dropped", total);
    return;
  }
  for (int i = 0; i < n; i++) {
    memcpy(t->pending.data + t->pending.len, parts[i], lens[i]);
    t->pending.len += lens[i];
  }
  t->pending.data[t->pending.len++] = '\n';
  flush_soon(t);
}

/* --- input -------------------------------------------------------------- */

static void on_line(void *ctx, char *line, size_t len, int oversize) {
  stdio_transport *t = ctx;
  if (t->stopped)
    return;
  if (oversize)
    t->cb.oversize(t->cb.arg, t->framer.max);
  else
    t->cb.message(t->cb.arg, line, len);
}

static void on_eof(stdio_transport *t, const char *why) {
  if (framer_pending(&t->framer) > 0 && !t->framer.discarding) {
    /* The last line had no newline: handle it like any read, writes held
     * until it is done. */
    t->dispatching = 1;
    framer_feed(&t->framer, "\n", 1, on_line, t);
    t->dispatching = 0;
    flush_soon(t);
  }
  stdio_transport_stop_reading(t);
  t->cb.end(t->cb.arg, why);
}

static void alloc_cb(uv_handle_t *handle, size_t suggested, uv_buf_t *buf) {
  stdio_transport *t = handle->data;
  char *base;
  size_t avail;
  (void)suggested;
  if (framer_reserve(&t->framer, READ_CHUNK, &base, &avail) != 0) {
    *buf = uv_buf_init(NULL, 0);
    return;
  }
  *buf = uv_buf_init(base, (unsigned)(avail > (1u << 30) ? 1u << 30 : avail));
}

/* The protocol's input ended: UV_EOF, or a libuv error. */
static void input_ended(stdio_transport *t, int status) {
  if (status == UV_EOF) {
    on_eof(t, "stdin closed");
    return;
  }
  log_error("reading stdin failed: %s", uv_strerror(status));
  on_eof(t, STDIO_READ_FAILED);
}

static void read_cb(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
  stdio_transport *t = stream->data;
  (void)buf;
  if (nread > 0) {
    t->dispatching = 1;
    framer_commit(&t->framer, (size_t)nread, on_line, t);
    t->dispatching = 0;
    flush_soon(t);
  } else if (nread < 0) {
    input_ended(t, (int)nread);
  }
}

#ifdef _WIN32
static void thread_read_cb(void *arg, const char *data, size_t len,
                           int status) {
  stdio_transport *t = arg;
  if (status == 0) {
    int rc;
    t->dispatching = 1;
    rc = framer_feed(&t->framer, data, len, on_line, t);
    t->dispatching = 0;
    flush_soon(t);
    if (rc != 0) {
      log_error("out of memory reading stdin");
      on_eof(t, STDIO_READ_FAILED);
    }
  } else {
    input_ended(t, status);
  }
}
#endif

/* Input from a regular file is read on the loop too, one chunk per loop
 * turn (from an idle handle), so replies and timers still get their turn
 * and no pool thread is needed: with every pool thread stuck in plugin
 * code, mcpd still reads EOF. */
static void idle_cb(uv_idle_t *idle) {
  stdio_transport *t = idle->data;
  char *base;
  size_t avail;
  ssize_t n;

  uv_idle_stop(idle);
  if (t->stopped || t->paused || !t->reading)
    return;
  if (framer_reserve(&t->framer, READ_CHUNK, &base, &avail) != 0) {
    log_error("out of memory reading stdin");
    on_eof(t, "stdin closed");
    return;
  }
  do
    n = read(t->in_fd, base, avail > (1u << 30) ? 1u << 30 : avail);
  while (n < 0 && errno == EINTR);
  if (n > 0) {
    t->dispatching = 1;
    framer_commit(&t->framer, (size_t)n, on_line, t);
    t->dispatching = 0;
    flush_soon(t);
    if (!t->stopped && !t->paused && t->reading)
      uv_idle_start(idle, idle_cb);
  } else if (n == 0) {
    on_eof(t, "stdin closed");
  } else {
    log_error("reading stdin failed: %s", strerror(errno));
    on_eof(t, STDIO_READ_FAILED);
  }
}

static void file_read(stdio_transport *t) {
  if (t->idle_handle && !t->stopped && !t->paused && t->reading)
    uv_idle_start(&t->idle, idle_cb);
}

static void start_reading(stdio_transport *t) {
  if (t->stopped || t->reading)
    return;
  t->reading = 1;
#ifdef _WIN32
  if (t->in_pipe_thread) {
    if (t->in_thread == NULL &&
        (t->in_thread = input_thread_start(t->loop, t->in_fd, thread_read_cb,
                                           t)) == NULL) {
      log_error("cannot read stdin: no thread for it");
      t->reading = 0;
      t->cb.end(t->cb.arg, "stdin unreadable");
      return;
    }
    input_thread_pause(t->in_thread, 0);
    return;
  }
#endif
  if (t->in_handle) {
    int rc = uv_read_start(&t->in.stream, alloc_cb, read_cb);
    if (rc != 0) {
      log_error("cannot read stdin: %s", uv_strerror(rc));
      t->reading = 0;
      t->cb.end(t->cb.arg, "stdin unreadable");
    }
  } else {
    file_read(t);
  }
}

int stdio_transport_start(stdio_transport *t) {
  start_reading(t);
  return 0;
}

void stdio_transport_stop_reading(stdio_transport *t) {
  t->stopped = 1;
  if (t->reading && t->in_handle)
    uv_read_stop(&t->in.stream);
#ifdef _WIN32
  if (t->in_thread != NULL)
    input_thread_pause(t->in_thread, 1);
#endif
  if (t->idle_handle)
    uv_idle_stop(&t->idle);
  t->reading = 0;
}

/* --- closing ------------------------------------------------------------ */

static void free_transport(stdio_transport *t) {
  void (*done)(void *) = t->done;
  void *arg = t->done_arg;
  framer_free(&t->framer);
  strbuf_free(&t->pending);
  strbuf_free(&t->flight);
  /* A stream handle closed its descriptor with it. */
  if (t->out_type == UV_FILE && t->out_fd >= 0)
    close(t->out_fd);
  if (t->in_type == UV_FILE && t->in_fd >= 0)
    close(t->in_fd);
  free(t);
  if (done)
    done(arg);
}

/* One of its handles (or its input thread's) is closed. */
static void one_closed(void *arg) {
  stdio_transport *t = arg;
  if (--t->open_handles == 0 && !t->writing)
    free_transport(t);
}

static void close_cb(uv_handle_t *handle) {
  one_closed(handle->data);
}

static void maybe_finish_close(stdio_transport *t) {
  if (t->open_handles > 0)
    return; /* handles are closing; close_cb finishes */
  if (!t->writing && t->pending.len > 0 && !t->failed)
    start_write(t);
  if (t->writing)
    return; /* write_done comes back here */
  if (t->in_handle || t->out_handle || t->idle_handle || t->flush_handle
#ifdef _WIN32
      || t->in_thread != NULL
#endif
  ) {
    if (t->idle_handle) {
      t->idle_handle = 0;
      t->open_handles++;
      uv_close((uv_handle_t *)&t->idle, close_cb);
    }
    if (t->flush_handle) {
      t->flush_handle = 0;
      t->open_handles++;
      uv_close((uv_handle_t *)&t->flush, close_cb);
    }
#ifdef _WIN32
    if (t->in_thread != NULL) {
      input_thread *r = t->in_thread;
      t->in_thread = NULL;
      t->open_handles++;
      input_thread_close(r, one_closed, t);
    }
#endif
    if (t->in_handle) {
      t->in_handle = 0;
      t->open_handles++;
      uv_close(&t->in.handle, close_cb);
    }
    if (t->out_handle) {
      t->out_handle = 0;
      t->open_handles++;
      uv_close(&t->out.handle, close_cb);
    }
    return;
  }
  free_transport(t);
}

void stdio_transport_close(stdio_transport *t, void (*done)(void *arg),
                           void *arg, int force) {
  t->done = done;
  t->done_arg = arg;
  stdio_transport_stop_reading(t);
  if (force) {
    /* Pending output is dropped; a write in flight is cancelled by
     * uv_close and reports through its callback. */
    t->failed = 1;
    t->pending.len = 0;
    if (t->writing && t->out_handle) {
      t->writing = 0;
      t->stream_write.data = NULL;
    }
  }
  if (t->closing) {
    if (force && t->open_handles == 0)
      maybe_finish_close(t);
    return;
  }
  t->closing = 1;
  maybe_finish_close(t);
}
