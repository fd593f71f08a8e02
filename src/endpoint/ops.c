/* SPDX-License-Identifier: MIT */
/* ops.c -- /healthz, /readyz and /metrics (see ops.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "ops.h"

#define TEXT_PLAIN "text/plain; charset=utf-8"
/* The Prometheus text exposition format, version 0.0.4. */
#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct ops_listener {
  http_transport *http;
  ops_cb cb;
  void (*done)(void *arg);
  void *done_arg;
};

int ops_serve(const ops_cb *cb, http_exchange *x, http_method method,
              const char *path, unsigned which) {
  int health = (which & OPS_HEALTH) &&
               (strcmp(path, "/healthz") == 0 || strcmp(path, "/readyz") == 0);
  int metrics = (which & OPS_METRICS) && strcmp(path, "/metrics") == 0;
  char why[160], body[200];

  if (!health && !metrics)
    return 0;
  if (method != HTTP_METHOD_GET) {
    http_exchange_add_header(x, "Allow", "GET");
    http_exchange_respond(x, 405, TEXT_PLAIN, "method not allowed\n", 19);
    return 1;
  }
  http_exchange_add_header(x, "Cache-Control", "no-store");
  if (strcmp(path, "/healthz") == 0) {
    /* Answered from the loop: the loop turns. */
    http_exchange_respond(x, 200, TEXT_PLAIN, "ok\n", 3);
  } else if (strcmp(path, "/readyz") == 0) {
    if (cb->ready(cb->arg, why, sizeof(why))) {
      http_exchange_respond(x, 200, TEXT_PLAIN, "ready\n", 6);
    } else {
      int n = snprintf(body, sizeof(body), "not ready: %s\n", why);
      http_exchange_respond(x, 503, TEXT_PLAIN, body,
                            n < (int)sizeof(body) ? (size_t)n
                                                  : sizeof(body) - 1);
    }
  } else {
    strbuf page = {0};
    cb->metrics(cb->arg, &page);
    if (page.failed)
      http_exchange_respond(x, 500, TEXT_PLAIN, "out of memory\n", 14);
    else
      http_exchange_respond(x, 200, METRICS_TYPE, page.data ? page.data : "",
                            page.len);
    strbuf_free(&page);
  }
  return 1;
}

static void request_cb(void *arg, http_exchange *x, http_method method,
                       const char *body, size_t len) {
  ops_listener *o = arg;
  (void)body;
  (void)len;
  if (!ops_serve(&o->cb, x, method, http_exchange_path(x),
                 OPS_HEALTH | OPS_METRICS))
    http_exchange_respond(x, 404, TEXT_PLAIN,
                          "not found: /metrics, /healthz, /readyz\n", 39);
}

static void closed_cb(void *arg, http_exchange *x) {
  (void)arg;
  (void)x;
}

/* Whether `listen` names a loopback address or a unix socket. */
static int loopback(const char *listen) {
  return strncmp(listen, "unix:", 5) == 0 || strncmp(listen, "127.", 4) == 0 ||
         strncmp(listen, "[::1]:", 6) == 0 ||
         strncmp(listen, "localhost:", 10) == 0;
}

ops_listener *ops_listen(uv_loop_t *loop, const char *listen,
                         const ops_cb *cb) {
  http_transport_cb tcb = {request_cb, closed_cb, NULL};
  ops_listener *o;

  if (!loopback(listen)) {
    log_error("--metrics-listen %s: only a loopback address (127.0.0.1, "
              "[::1], localhost) or unix:PATH, since it needs no token",
              listen);
    return NULL;
  }
  if ((o = calloc(1, sizeof(*o))) == NULL) {
    log_error("out of memory");
    return NULL;
  }
  o->cb = *cb;
  tcb.arg = o;
  if ((o->http = http_transport_new(loop, listen, 4096, NULL, 0, &tcb)) ==
      NULL) {
    free(o);
    return NULL;
  }
  log_info("metrics on %s/metrics", http_transport_address(o->http));
  return o;
}

static void transport_closed(void *arg) {
  ops_listener *o = arg;
  void (*done)(void *) = o->done;
  void *done_arg = o->done_arg;
  free(o);
  if (done != NULL)
    done(done_arg);
}

void ops_close(ops_listener *o, void (*done)(void *arg), void *arg, int now) {
  o->done = done;
  o->done_arg = arg;
  http_transport_close(o->http, transport_closed, o, now);
}
