/* SPDX-License-Identifier: MIT */
/* load_stdio.c -- mcpd-load's stdio transport.
 *
 * The server reads newline-delimited JSON-RPC on its stdin and writes it on
 * its stdout.  Requests go out in one write per batch, through a
 * non-blocking pipe; responses come back through blocking reads of up to
 * 64 KiB, which the once-a-second tick interrupts so that a server that
 * hangs is noticed without a poll() per response.
 */

/* pipe2() is a GNU extension; the benchmarks run on Linux. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load.h"

extern char **environ;

/* Answers a request the server sent us.  The driver declares no client
 * capabilities, so only ping is legitimate. */
static void answer(load_run *r, const load_message *m) {
  load_buf_adds(&r->out, "{\"jsonrpc\":\"2.0\",\"id\":");
  load_buf_add(&r->out, m->id, m->id_len);
  if (m->method_len == 6 && memcmp(m->method, "\"ping\"", 6) == 0)
    load_buf_adds(&r->out, ",\"result\":{}}\n");
  else
    load_buf_adds(&r->out, ",\"error\":{\"code\":-32601,"
                           "\"message\":\"Method not found\"}}\n");
}

/* Reads whatever the server has written (blocking until something arrives)
 * and handles every complete line.  One timestamp serves the whole chunk:
 * every response in it had arrived by then. */
static void read_input(load_run *r) {
  size_t start;
  char *nl;
  ssize_t n;
  uint64_t now;

  load_buf_reserve(&r->in, LOAD_READ_CHUNK);
  n = read(r->from_fd, r->in.base + r->in.len, r->in.cap - r->in.len);
  if (n < 0) {
    if (errno != EINTR)
      load_fatal("read");
    load_check_timeout(r);
    return;
  }
  if (n == 0) {
    r->eof = 1;
    r->broken = 1;
    return;
  }
  now = load_now_ns();
  r->last_progress = now;
  r->in.len += n;

  start = 0;
  while ((nl = memchr(r->in.base + r->in_scanned, '\n',
                      r->in.len - r->in_scanned)) != NULL) {
    load_handle_message(r, r->in.base + start, nl - (r->in.base + start), now);
    start = nl - r->in.base + 1;
    r->in_scanned = start;
  }
  memmove(r->in.base, r->in.base + start, r->in.len - start);
  r->in.len -= start;
  r->in_scanned = r->in.len;
}

/* Writes what can be written without blocking.  The request pipe is
 * non-blocking so a server that stops reading cannot deadlock us while it
 * waits for us to read its replies. */
static void flush_out(load_run *r) {
  ssize_t n;

  while (r->out_off < r->out.len) {
    n = write(r->to_fd, r->out.base + r->out_off, r->out.len - r->out_off);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN)
        return;
      if (errno == EPIPE) {
        fprintf(stderr, "mcpd-load: %s closed its stdin\n", load_run_name(r));
        r->broken = 1;
        r->out.len = r->out_off = 0;
        return;
      }
      load_fatal("write");
    }
    r->out_off += n;
  }
  r->out.len = r->out_off = 0;
}

/* Tops the window up to W requests in flight. */
static void fill(load_run *r) {
  int64_t first;
  int64_t id;
  uint64_t t;

  if (!r->init_done)
    return;
  first = r->next_id;
  while (r->issued < r->phase_total && r->outstanding < load_opt.window) {
    load_buf_adds(&r->out, "{\"jsonrpc\":\"2.0\",\"id\":");
    load_buf_add_id(&r->out, r->next_id++);
    load_buf_add(&r->out, r->req_suffix, r->req_suffix_len);
    r->issued++;
    r->outstanding++;
  }
  if (first == r->next_id)
    return;
  t = load_now_ns();
  for (id = first; id < r->next_id; id++)
    r->t_send[id] = t;
  if (r->recording && r->first_send == 0)
    r->first_send = t;
}

/* Runs the loop until the current phase is answered or the run breaks. */
static void pump(load_run *r) {
  struct pollfd pfd[2];

  while (!r->broken && !(r->init_done && r->answered >= r->phase_total)) {
    fill(r);
    flush_out(r);
    if (r->out_off == r->out.len) {
      read_input(r);
      continue;
    }
    pfd[0].fd = r->to_fd;
    pfd[0].events = POLLOUT;
    pfd[1].fd = r->from_fd;
    pfd[1].events = POLLIN;
    if (poll(pfd, 2, -1) < 0) {
      if (errno != EINTR)
        load_fatal("poll");
      load_check_timeout(r);
      continue;
    }
    if (pfd[1].revents & (POLLIN | POLLHUP))
      read_input(r);
  }
}

static void spawn_server(load_run *r) {
  posix_spawn_file_actions_t fa;
  int in_pipe[2];
  int out_pipe[2];
  int err;

  if (pipe2(in_pipe, O_CLOEXEC) || pipe2(out_pipe, O_CLOEXEC))
    load_fatal("pipe2");
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], STDOUT_FILENO);
  if (load_opt.quiet)
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY,
                                     0);
  err = posix_spawnp(&r->pid, r->argv[0], &fa, NULL, r->argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err != 0) {
    fprintf(stderr, "mcpd-load: cannot run %s: %s\n", r->argv[0],
            strerror(err));
    exit(2);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  r->to_fd = in_pipe[1];
  r->from_fd = out_pipe[0];
  if (fcntl(r->to_fd, F_SETFL, O_NONBLOCK))
    load_fatal("fcntl");
}

/* Queues initialize (in the modern era server/discover) and runs until it
 * is answered. */
static void initialize(load_run *r) {
  if (r->modern)
    load_buf_adds(&r->out, LOAD_DISCOVER_REQUEST "\n");
  else
    load_buf_adds(&r->out,
                  "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
                  "" LOAD_INITIALIZE_PARAMS "}\n");
  r->t_send[0] = load_now_ns();
  r->next_id = 1;
  r->phase_total = 0;
  pump(r);
  if (r->broken || r->modern)
    return;
  load_buf_adds(
      &r->out,
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
}

/* Closes the server's stdin, drains its stdout until EOF, and reaps it.  A
 * server that does not leave within the timeout is killed.  Returns the
 * child's ru_maxrss in KiB. */
static long finish(load_run *r) {
  if (r->broken && !r->eof)
    kill(r->pid, SIGKILL);
  close(r->to_fd);
  r->last_progress = load_now_ns();
  r->broken = 0;
  while (!r->eof && !r->broken)
    read_input(r);
  if (!r->eof)
    kill(r->pid, SIGKILL);
  close(r->from_fd);
  return load_reap(r);
}

const load_transport load_stdio_transport = {
    "stdio", spawn_server, initialize, pump, answer, finish,
};
