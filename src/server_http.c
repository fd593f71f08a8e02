/* SPDX-License-Identifier: MIT */
/* server_http.c -- wires the HTTP side to the server: the MCP endpoint
 * (streamable), whose sessions come from server_open_session(), and the
 * operator's endpoints (ops: /healthz, /readyz, /metrics), beside it or
 * on a listener of their own.  Shutdown reaches both through the two
 * hooks in `server`. */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "metrics.h"
#include "ops.h"
#include "server_http.h"
#include "settings.h"
#include "streamable.h"
#include "watchdog.h"

/* What srv->http points to: either listener may be absent. */
typedef struct front {
  server *srv;
  streamable *mcp;
  ops_listener *ops;
  int closing; /* close_hook ran */
  int busy;    /* inside close_hook: finish() waits */
  void (*done)(void *arg);
  void *done_arg;
} front;

static session *open_cb(void *arg, session_write_fn write, void *ctx) {
  front *f = arg;
  return server_open_session(f->srv, write, ctx);
}

static void close_cb(void *arg, session *s) {
  front *f = arg;
  server_close_session(f->srv, s);
}

/* ops_cb.ready: the server's plugins, and room for one more session. */
static int ready_cb(void *arg, char *why, size_t size) {
  front *f = arg;
  if (!server_ready(f->srv, why, size))
    return 0;
  if (f->mcp != NULL && !streamable_has_room(f->mcp)) {
    snprintf(why, size, "at the session limit (--max-sessions)");
    return 0;
  }
  return 1;
}

/* ops_cb.metrics: the server's page, and the endpoint's streams. */
static void metrics_cb(void *arg, strbuf *out) {
  front *f = arg;
  char text[48];

  server_metrics(f->srv, out);
  if (f->mcp != NULL) {
    metrics_family(out, "mcpd_sse_streams_open", "gauge",
                   "SSE streams with a client on them now.");
    snprintf(text, sizeof(text), "mcpd_sse_streams_open %zu\n",
             streamable_sse_open(f->mcp));
    strbuf_puts(out, text);
  }
}

static void refuse_hook(void *http) {
  front *f = http;
  if (f->mcp != NULL)
    streamable_refuse(f->mcp);
}

/* Frees the front once both listeners closed and no hook is running. */
static void finish(front *f) {
  void (*done)(void *);
  void *done_arg;

  if (f->mcp != NULL || f->ops != NULL || !f->closing || f->busy)
    return;
  done = f->done;
  done_arg = f->done_arg;
  f->srv->http = NULL;
  free(f);
  if (done != NULL)
    done(done_arg);
}

static void mcp_closed(void *arg) {
  front *f = arg;
  f->mcp = NULL;
  finish(f);
}

static void ops_closed(void *arg) {
  front *f = arg;
  f->ops = NULL;
  finish(f);
}

static void close_hook(void *http, void (*done)(void *arg), void *arg,
                       int now) {
  front *f = http;
  int first = !f->closing;

  f->closing = 1;
  f->done = done;
  f->done_arg = arg;
  f->busy = 1;
  if (f->mcp != NULL && (first || now))
    streamable_close(f->mcp, mcp_closed, f, now);
  if (f->ops != NULL && (first || now))
    ops_close(f->ops, ops_closed, f, now);
  f->busy = 0;
  finish(f);
}

/* The front, with the operator's listener if --metrics-listen asks. */
static front *front_new(server *srv) {
  front *f = calloc(1, sizeof(*f));
  const char *listen = srv->opts->http.metrics_listen;
  ops_cb ops = {ready_cb, metrics_cb, NULL};

  if (f == NULL)
    return NULL;
  f->srv = srv;
  ops.arg = f;
  if (srv->opts->http.metrics || listen != NULL)
    metrics_enable();
  if (listen != NULL &&
      (f->ops = ops_listen(srv->loop, listen, &ops)) == NULL) {
    free(f);
    return NULL;
  }
  return f;
}

int server_serve_http(server *srv) {
  streamable_cb cb = {open_cb, close_cb, NULL, {ready_cb, metrics_cb, NULL}};
  front *f;
  int fd;

  /* No stdio protocol here, but plugins still must not print into fd 1
   * unnoticed: it goes to stderr like the rest of the log. */
  if ((fd = stdio_take_stdout()) >= 0)
    close(fd);
  if ((f = front_new(srv)) == NULL)
    return -1;
  cb.arg = cb.ops.arg = f;
  if ((f->mcp = streamable_new(srv->loop, &srv->opts->http, &cb)) == NULL) {
    if (f->ops != NULL)
      ops_close(f->ops, NULL, NULL, 1);
    free(f);
    return -1;
  }
  watchdog_start(-1);
  srv->http = f;
  srv->http_refuse = refuse_hook;
  srv->http_close = close_hook;
  return 0;
}

int server_serve_ops(server *srv) {
  front *f = front_new(srv);
  if (f == NULL)
    return -1;
  srv->http = f;
  srv->http_refuse = refuse_hook;
  srv->http_close = close_hook;
  return 0;
}
