/* SPDX-License-Identifier: MIT */
/* server_http.c -- wires the HTTP endpoint (streamable) to the server:
 * sessions come from server_open_session(), and shutdown reaches the
 * endpoint through the two hooks in `server`. */
#include "config.h"

#include <unistd.h>

#include "server_http.h"
#include "settings.h"
#include "streamable.h"
#include "watchdog.h"

static session *open_cb(void *arg, session_write_fn write, void *ctx) {
  return server_open_session(arg, write, ctx);
}

static void close_cb(void *arg, session *s) {
  server_close_session(arg, s);
}

static void refuse_hook(void *http) {
  streamable_refuse(http);
}

static void close_hook(void *http, void (*done)(void *arg), void *arg,
                       int now) {
  streamable_close(http, done, arg, now);
}

int server_serve_http(server *srv) {
  streamable_cb cb = {open_cb, close_cb, srv};
  int fd;

  /* No stdio protocol here, but plugins still must not print into fd 1
   * unnoticed: it goes to stderr like the rest of the log. */
  if ((fd = stdio_take_stdout()) >= 0)
    close(fd);
  if ((srv->http = streamable_new(srv->loop, &srv->opts->http, &cb)) == NULL)
    return -1;
  watchdog_start(-1);
  srv->http_refuse = refuse_hook;
  srv->http_close = close_hook;
  return 0;
}
