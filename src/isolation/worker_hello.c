/* SPDX-License-Identifier: MIT */
/* worker_hello.c -- the worker's side of the first words with its host.
 * See worker_hello.h. */
#include "config.h"

#include <errno.h>
#ifndef _WIN32
#include <poll.h>
#endif
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jsonrpc.h"
#include "strbuf.h"
#include "worker_hello.h"

#ifdef _WIN32
/* The C runtime's descriptors always block: nothing to wait for.  (The
 * POLL* names come from winsock2.h.) */
static int wait_fd(int fd, short events) {
  (void)fd;
  (void)events;
  return -1;
}
#else
/* Waits until `fd` may be read or written: the MCP transport may already
 * have made it non-blocking. */
static int wait_fd(int fd, short events) {
  struct pollfd p = {.fd = fd, .events = events};
  int rc;
  while ((rc = poll(&p, 1, -1)) < 0 && errno == EINTR)
    ;
  return rc < 0 ? -1 : 0;
}
#endif

static int write_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, data, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (wait_fd(fd, POLLOUT) != 0)
        return -1;
      continue;
    }
    if (n <= 0)
      return -1;
    data += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Writes `method` with `params` (consumed) as one line. */
static int send_line(int fd, const char *method, json_object *params) {
  json_object *msg = jsonrpc_notification(method, params);
  const char *text;
  size_t len;
  strbuf line = {0};
  int rc;

  if (msg == NULL)
    return -1;
  text = jsonrpc_to_string(msg, &len);
  strbuf_append(&line, text, len);
  strbuf_append(&line, "\n", 1);
  rc = line.failed ? -1 : write_all(fd, line.data, line.len);
  strbuf_free(&line);
  json_object_put(msg);
  return rc;
}

int worker_hello_send(int fd, const char *name, const char *version,
                      const char *description) {
  json_object *params = json_object_new_object();
  if (params == NULL)
    return -1;
  json_object_object_add(params, "name", json_object_new_string(name));
  json_object_object_add(params, "version", json_object_new_string(version));
  if (description != NULL)
    json_object_object_add(params, "description",
                           json_object_new_string(description));
  return send_line(fd, WORKER_HELLO, params);
}

void worker_refused_send(int fd, const char *reason) {
  json_object *params = json_object_new_object();
  if (params == NULL)
    return;
  json_object_object_add(params, "reason", json_object_new_string(reason));
  (void)send_line(fd, WORKER_REFUSED, params);
}

/* Reads one line into `line`, without its newline.  0, 1 at EOF before
 * any byte, or -1 with the reason in `err`. */
static int read_line(int fd, size_t max, strbuf *line, char *err,
                     size_t errlen) {
  for (;;) {
    char c;
    ssize_t n = read(fd, &c, 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (wait_fd(fd, POLLIN) == 0)
        continue;
    }
    if (n < 0) {
      snprintf(err, errlen, "reading the host's config: %s", strerror(errno));
      return -1;
    }
    if (n == 0) {
      if (line->len == 0)
        return 1;
      snprintf(err, errlen, "the host's config ended without a newline");
      return -1;
    }
    if (c == '\n')
      return 0;
    if (line->len >= max) {
      snprintf(err, errlen, "the host's config is larger than %zu bytes", max);
      return -1;
    }
    strbuf_append(line, &c, 1);
    if (line->failed) {
      snprintf(err, errlen, "out of memory");
      return -1;
    }
  }
}

/* limits.KEY as a count, or 0. */
static uint64_t limit(json_object *limits, const char *key) {
  json_object *v;
  if (json_object_object_get_ex(limits, key, &v) &&
      json_object_is_type(v, json_type_int) && json_object_get_int64(v) > 0)
    return (uint64_t)json_object_get_int64(v);
  return 0;
}

int worker_config_read(int fd, size_t max, json_object **config,
                       worker_limits *limits, char *err, size_t errlen) {
  strbuf line = {0};
  json_tokener *tok = NULL;
  json_object *msg = NULL, *method, *params, *cfg = NULL, *lim = NULL;
  const char *why = NULL;
  int rc = read_line(fd, max, &line, err, errlen);

  *config = NULL;
  memset(limits, 0, sizeof(*limits));
  if (rc != 0) {
    strbuf_free(&line);
    return rc;
  }
  if ((tok = json_tokener_new_ex(JSONRPC_MAX_DEPTH)) == NULL)
    why = "out of memory";
  else if (jsonrpc_parse(tok, line.data ? line.data : "", line.len, &msg,
                         &why) != 0)
    ;
  else if (!json_object_object_get_ex(msg, "method", &method) ||
           !json_object_is_type(method, json_type_string) ||
           strcmp(json_object_get_string(method), WORKER_CONFIG) != 0 ||
           !json_object_object_get_ex(msg, "params", &params) ||
           !json_object_is_type(params, json_type_object))
    why = "not an " WORKER_CONFIG " message";
  else if (json_object_object_get_ex(params, "config", &cfg) && cfg != NULL &&
           !json_object_is_type(cfg, json_type_object))
    why = "its config is not an object";
  if (why == NULL) {
    json_object_object_get_ex(params, "limits", &lim);
    limits->address_space_mib = limit(lim, "addressSpaceMiB");
    limits->cpu_seconds = limit(lim, "cpuSeconds");
    limits->open_files = limit(lim, "openFiles");
    *config = json_object_get(cfg);
  } else {
    snprintf(err, errlen, "the host's config: %s", why);
  }
  json_object_put(msg);
  if (tok != NULL)
    json_tokener_free(tok);
  strbuf_free(&line);
  return why == NULL ? 0 : -1;
}
