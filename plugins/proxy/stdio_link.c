/* SPDX-License-Identifier: MIT */
/* stdio_link.c -- an upstream MCP server run as a child process: one JSON
 * message a line on its stdin and stdout, its stderr passed on line by
 * line for the log.
 *
 * The child runs in a process group of its own, so ending it ends what it
 * started too (npx starts node, a shell script its programs).  On Linux it
 * also gets SIGTERM when the thread that started it -- the proxy thread --
 * goes away, so a crashed mcpd leaves no upstream behind; elsewhere, and
 * in the portable build (MCPD_PORTABLE), the child sees EOF on its stdin,
 * which ends every well-behaved MCP server. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__) && !defined(MCPD_PORTABLE)
#include <sys/prctl.h>
#endif

#include "../common/buf.h"
#include "link.h"

/* The longest line an upstream may write: a bigger message ends the
 * link rather than the memory. */
#define MAX_LINE (16u << 20)
/* The most written to a child and not yet read by it. */
#define MAX_PENDING ((size_t)64 << 20)
/* How long a child that closed its stdout has to exit, and one asked to
 * stop has to go, before its group is killed. */
#define EXIT_GRACE_MS 2000
#define STOP_GRACE_MS 500

typedef struct stdio_link {
  px_link base;
  pid_t pid;
  int in, out, err;   /* our ends; -1 once closed */
  struct pc_buf wbuf; /* what is still to be written to the child's stdin */
  size_t woff;
  struct pc_buf rbuf, ebuf; /* partial lines from stdout and stderr */
  int closed;               /* `closed` was reported */
  int64_t reap_at;          /* stdout ended: when to look for the exit again */
  int64_t kill_at;          /* ... and when to stop waiting */
  char why[200];
} stdio_link;

extern char **environ;

/* pc_buf_append(), saying whether it worked. */
static int append(struct pc_buf *b, const char *p, size_t n) {
  pc_buf_append(b, p, n);
  return b->failed ? -1 : 0;
}

static void close_fd(int *fd) {
  if (*fd >= 0)
    close(*fd);
  *fd = -1;
}

/* Reports the end once, with `why`. */
static void report_closed(stdio_link *l, const char *why) {
  if (l->closed)
    return;
  l->closed = 1;
  close_fd(&l->in);
  if (l->base.ev.closed != NULL)
    l->base.ev.closed(l->base.ev.arg, why);
}

static void describe_status(int status, char *out, size_t size) {
  if (WIFEXITED(status))
    snprintf(out, size, "exited with status %d", WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    snprintf(out, size, "killed by signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
  else
    snprintf(out, size, "ended (status %d)", status);
}

/* Tries to collect the child; 1 when it has exited. */
static int reap(stdio_link *l) {
  int status;
  pid_t r;
  if (l->pid <= 0)
    return 1;
  do
    r = waitpid(l->pid, &status, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == 0)
    return 0;
  if (l->why[0] != '\0')
    ; /* the reason is already known */
  else if (r == l->pid)
    describe_status(status, l->why, sizeof(l->why));
  else
    snprintf(l->why, sizeof(l->why), "ended (%s)", strerror(errno));
  /* Whatever the leader left in its group goes with it. */
  kill(-l->pid, SIGKILL);
  l->pid = -1;
  return 1;
}

/* Hands every complete line of `b` to `line`, keeping the rest. */
static void split_lines(stdio_link *l, struct pc_buf *b,
                        void (*line)(stdio_link *, char *, size_t)) {
  size_t start = 0;
  char *nl;
  while (!l->closed && (nl = memchr(b->data + start, '\n', b->len - start))) {
    size_t n = (size_t)(nl - (b->data + start));
    b->data[start + n] = '\0';
    if (n > 0 && b->data[start + n - 1] == '\r')
      b->data[start + --n] = '\0';
    line(l, b->data + start, n);
    start = (size_t)(nl - b->data) + 1;
  }
  memmove(b->data, b->data + start, b->len - start);
  b->len -= start;
  if (b->data)
    b->data[b->len] = '\0';
}

static void message_line(stdio_link *l, char *s, size_t n) {
  json_tokener *tok;
  json_object *msg;
  size_t i;

  while (n > 0 && (*s == ' ' || *s == '\t'))
    s++, n--;
  if (n == 0)
    return;
  if ((tok = json_tokener_new_ex(PX_MAX_DEPTH)) == NULL)
    return;
  msg = json_tokener_parse_ex(tok, s, (int)n);
  if (msg == NULL || json_tokener_get_parse_end(tok) != n) {
    char line[160];
    snprintf(line, sizeof(line),
             "not a JSON message on stdout, ignored: %.100s", s);
    if (l->base.ev.stderr_line != NULL)
      l->base.ev.stderr_line(l->base.ev.arg, line);
  } else if (json_object_is_type(msg, json_type_array)) {
    for (i = 0; i < json_object_array_length(msg) && !l->closed; i++)
      l->base.ev.message(l->base.ev.arg, json_object_array_get_idx(msg, i),
                         NULL);
  } else {
    l->base.ev.message(l->base.ev.arg, msg, NULL);
  }
  json_object_put(msg);
  json_tokener_free(tok);
}

static void error_line(stdio_link *l, char *s, size_t n) {
  if (n > 0 && l->base.ev.stderr_line != NULL)
    l->base.ev.stderr_line(l->base.ev.arg, s);
}

/* Reads what `fd` has; 0 on EOF or error (the descriptor is closed). */
static int drain(stdio_link *l, int *fd, struct pc_buf *b,
                 void (*line)(stdio_link *, char *, size_t)) {
  char chunk[65536];
  for (;;) {
    ssize_t n = read(*fd, chunk, sizeof(chunk));
    if (n > 0) {
      if (b->len + (size_t)n > MAX_LINE || append(b, chunk, (size_t)n)) {
        close_fd(fd);
        return -1;
      }
      split_lines(l, b, line);
      if (l->closed || *fd < 0)
        return 1;
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return 1;
    close_fd(fd);
    return 0;
  }
}

static void flush(stdio_link *l) {
  while (l->in >= 0 && l->woff < l->wbuf.len) {
    ssize_t n = write(l->in, l->wbuf.data + l->woff, l->wbuf.len - l->woff);
    if (n > 0) {
      l->woff += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return;
    /* EPIPE: the child closed its stdin; its exit is noticed on stdout. */
    close_fd(&l->in);
    return;
  }
  if (l->woff == l->wbuf.len)
    l->woff = l->wbuf.len = 0;
}

static int link_send(px_link *base, json_object *msg) {
  stdio_link *l = (stdio_link *)base;
  size_t len;
  const char *s;

  if (l->closed || l->in < 0)
    return -1;
  s = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN, &len);
  /* A child that stops reading its stdin fails what is sent to it then,
   * rather than growing our memory without bound. */
  if (s == NULL || l->wbuf.len - l->woff + len > MAX_PENDING ||
      append(&l->wbuf, s, len) || append(&l->wbuf, "\n", 1))
    return -1;
  flush(l);
  return 0;
}

static size_t link_want(px_link *base, struct curl_waitfd *fds, size_t room) {
  stdio_link *l = (stdio_link *)base;
  size_t n = 0;
  if (l->closed)
    return 0;
  if (l->out >= 0 && n < room)
    fds[n++] = (struct curl_waitfd){.fd = l->out, .events = CURL_WAIT_POLLIN};
  if (l->err >= 0 && n < room)
    fds[n++] = (struct curl_waitfd){.fd = l->err, .events = CURL_WAIT_POLLIN};
  if (l->in >= 0 && l->woff < l->wbuf.len && n < room)
    fds[n++] = (struct curl_waitfd){.fd = l->in, .events = CURL_WAIT_POLLOUT};
  return n;
}

/* stdout ended: the child is on its way out.  Its exit is reported once
 * it is collected (or it is killed after a grace period). */
static void stdout_ended(stdio_link *l, int too_long) {
  int64_t now = px_now_ms();
  if (too_long) {
    snprintf(l->why, sizeof(l->why), "wrote a line longer than %u MiB; stopped",
             MAX_LINE >> 20);
    kill(-l->pid, SIGKILL);
  }
  l->reap_at = now;
  l->kill_at = now + EXIT_GRACE_MS;
}

static void link_ready(px_link *base, const struct curl_waitfd *fds, size_t n) {
  stdio_link *l = (stdio_link *)base;
  for (size_t i = 0; i < n && !l->closed; i++) {
    if (fds[i].revents == 0)
      continue;
    if (fds[i].fd == l->in)
      flush(l);
    else if (fds[i].fd == l->err) {
      if (drain(l, &l->err, &l->ebuf, error_line) <= 0 && l->ebuf.len > 0) {
        error_line(l, l->ebuf.data, l->ebuf.len);
        l->ebuf.len = 0;
      }
    } else if (fds[i].fd == l->out) {
      int r = drain(l, &l->out, &l->rbuf, message_line);
      if (r <= 0 && !l->closed)
        stdout_ended(l, r < 0);
    }
  }
}

static int64_t link_deadline(px_link *base) {
  stdio_link *l = (stdio_link *)base;
  return l->closed || l->reap_at == 0 ? -1 : l->reap_at;
}

static void link_tick(px_link *base, int64_t now) {
  stdio_link *l = (stdio_link *)base;
  if (l->closed || l->reap_at == 0 || now < l->reap_at)
    return;
  if (l->pid > 0 && !reap(l)) {
    if (now >= l->kill_at)
      kill(-l->pid, SIGKILL);
    l->reap_at = now + 20;
    return;
  }
  report_closed(l, l->why[0] ? l->why : "ended");
}

static void link_close(px_link *base) {
  stdio_link *l = (stdio_link *)base;
  l->closed = 1;
  close_fd(&l->in);
  close_fd(&l->out);
  close_fd(&l->err);
  if (l->pid > 0) {
    int64_t until = px_now_ms() + STOP_GRACE_MS;
    kill(-l->pid, SIGTERM);
    while (!reap(l) && px_now_ms() < until) {
      struct timespec ts = {0, 10 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
    if (l->pid > 0) {
      kill(-l->pid, SIGKILL);
      while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    }
  }
  pc_buf_free(&l->wbuf);
  pc_buf_free(&l->rbuf);
  pc_buf_free(&l->ebuf);
  free(l);
}

static const px_link_ops stdio_ops = {
    .send = link_send,
    .want = link_want,
    .ready = link_ready,
    .deadline = link_deadline,
    .tick = link_tick,
    .close = link_close,
};

static int nonblocking(int fd) {
  int fl = fcntl(fd, F_GETFL);
  return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int cloexec_pipe(int fd[2]) {
  if (pipe(fd) < 0)
    return -1;
  if (fcntl(fd[0], F_SETFD, FD_CLOEXEC) < 0 ||
      fcntl(fd[1], F_SETFD, FD_CLOEXEC) < 0) {
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  return 0;
}

/* The child's side of the fork: only async-signal-safe calls, and the
 * reason of a failure written to `report` as an errno and a step. */
static void child(char *const argv[], char *const envp[], const char *cwd,
                  int in, int out, int err, int report) {
  int e;
  char step;
  sigset_t none;

  setpgid(0, 0);
#if defined(__linux__) && !defined(MCPD_PORTABLE)
  prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  signal(SIGPIPE, SIG_DFL);
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) {
    step = 'd';
    goto fail;
  }
  if (cwd != NULL && chdir(cwd) < 0) {
    step = 'c';
    goto fail;
  }
  if (envp != NULL)
    environ = (char **)envp;
  execvp(argv[0], argv);
  step = 'x';
fail:
  e = errno;
  if (write(report, &step, 1) == 1)
    (void)!write(report, &e, sizeof(e));
  _exit(127);
}

px_link *stdio_link_open(char *const argv[], char *const envp[],
                         const char *cwd, const px_link_events *ev, char *err,
                         size_t errlen) {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1};
  int rep[2] = {-1, -1};
  stdio_link *l = calloc(1, sizeof(*l));
  char step = 0;
  int e = 0;
  ssize_t n;

  if (l == NULL) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  if (cloexec_pipe(in) || cloexec_pipe(out) || cloexec_pipe(er) ||
      cloexec_pipe(rep)) {
    snprintf(err, errlen, "pipe: %s", strerror(errno));
    goto fail;
  }
  l->pid = fork();
  if (l->pid < 0) {
    snprintf(err, errlen, "fork: %s", strerror(errno));
    goto fail;
  }
  if (l->pid == 0)
    child(argv, envp, cwd, in[0], out[1], er[1], rep[1]);
  /* Both sides set the group, so a kill(-pid) right after the fork
   * cannot miss it. */
  setpgid(l->pid, l->pid);
  close(rep[1]);
  rep[1] = -1;
  do
    n = read(rep[0], &step, 1);
  while (n < 0 && errno == EINTR);
  if (n == 1) {
    if (read(rep[0], &e, sizeof(e)) != (ssize_t)sizeof(e))
      e = 0;
    snprintf(err, errlen, "%s %s: %s",
             step == 'c' ? "cannot enter directory" : "cannot run",
             step == 'c' ? cwd : argv[0], e ? strerror(e) : "failed");
    while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
      ;
    l->pid = -1;
    goto fail;
  }
  close(rep[0]);
  close(in[0]);
  close(out[1]);
  close(er[1]);
  l->in = in[1];
  l->out = out[0];
  l->err = er[0];
  if (nonblocking(l->in) || nonblocking(l->out) || nonblocking(l->err)) {
    snprintf(err, errlen, "fcntl: %s", strerror(errno));
    link_close(&l->base);
    return NULL;
  }
  l->base.ops = &stdio_ops;
  l->base.ev = *ev;
  return &l->base;

fail:
  for (int i = 0; i < 2; i++) {
    if (in[i] >= 0)
      close(in[i]);
    if (out[i] >= 0)
      close(out[i]);
    if (er[i] >= 0)
      close(er[i]);
    if (rep[i] >= 0)
      close(rep[i]);
  }
  free(l);
  return NULL;
}
