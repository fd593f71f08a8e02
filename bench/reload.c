/* SPDX-License-Identifier: MIT */
/* reload.c -- how long a plugin renamed into a watched directory takes to
 * show up as notifications/tools/list_changed on mcpd's stdout.
 *
 *   mcpd-reload [-r RUNS] PLUGIN.so -- MCPD [ARGS...]
 *
 * The server is started with --plugins DIR appended (a private temporary
 * directory), initialized, and then RUNS times: the plugin is copied to a
 * hidden name in DIR (the watcher ignores dot files), the clock starts, the
 * copy is renamed to bench.so, and the clock stops at the list_changed line.
 * The file is then removed and its list_changed awaited, untimed.  Prints
 * one key=value line with p50 and max in microseconds. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char inbuf[1 << 16];
static size_t inlen;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Reads lines from `fd` until one contains `needle`; 0, or -1 on EOF or
 * after `timeout_ms`. */
static int wait_line(int fd, const char *needle, int timeout_ms) {
  double deadline = now_us() + timeout_ms * 1e3;
  for (;;) {
    char *nl;
    while ((nl = memchr(inbuf, '\n', inlen)) != NULL) {
      size_t n = (size_t)(nl - inbuf) + 1;
      int hit;
      *nl = '\0';
      hit = strstr(inbuf, needle) != NULL;
      memmove(inbuf, inbuf + n, inlen - n);
      inlen -= n;
      if (hit)
        return 0;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int left = (int)((deadline - now_us()) / 1e3);
    if (left <= 0 || poll(&p, 1, left) <= 0)
      return -1;
    ssize_t r = read(fd, inbuf + inlen, sizeof(inbuf) - inlen - 1);
    if (r <= 0)
      return -1;
    inlen += (size_t)r;
    if (inlen >= sizeof(inbuf) - 1)
      inlen = 0; /* a huge line we do not care about */
  }
}

static int copy(const char *src, const char *dst) {
  char buf[65536];
  int in = open(src, O_RDONLY), out;
  ssize_t n;
  if (in < 0)
    return -1;
  out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0) {
    close(in);
    return -1;
  }
  while ((n = read(in, buf, sizeof(buf))) > 0)
    if (write(out, buf, (size_t)n) != n)
      n = -1;
  close(in);
  close(out);
  return n < 0 ? -1 : 0;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int runs = 20, i, to[2], from[2], errors = 0;
  char dir[] = "/tmp/mcpd-reload-XXXXXX", hidden[256], target[256];
  const char *plugin;
  char **cmd;
  double *t;
  pid_t pid;
  static const char init[] =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
      "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
      "\"clientInfo\":{\"name\":\"mcpd-reload\",\"version\":\"1\"}}}\n"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

  if (argc > 2 && strcmp(argv[1], "-r") == 0) {
    runs = atoi(argv[2]);
    argv += 2;
    argc -= 2;
  }
  if (argc < 4 || strcmp(argv[2], "--") != 0 || runs < 1) {
    fprintf(stderr, "usage: mcpd-reload [-r RUNS] PLUGIN.so -- MCPD ...\n");
    return 2;
  }
  plugin = argv[1];
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  snprintf(hidden, sizeof(hidden), "%s/.staging.so", dir);
  snprintf(target, sizeof(target), "%s/bench.so", dir);
  cmd = calloc((size_t)argc, sizeof(*cmd));
  for (i = 3; i < argc; i++)
    cmd[i - 3] = argv[i];
  cmd[argc - 3] = "--plugins";
  cmd[argc - 2] = dir;
  if (pipe(to) != 0 || pipe(from) != 0)
    return 1;
  signal(SIGPIPE, SIG_IGN);
  pid = fork();
  if (pid == 0) {
    dup2(to[0], 0);
    dup2(from[1], 1);
    close(to[1]);
    close(from[0]);
    execvp(cmd[0], cmd);
    _exit(127);
  }
  close(to[0]);
  close(from[1]);
  if (write(to[1], init, sizeof(init) - 1) < 0 ||
      wait_line(from[0], "\"id\":1", 5000) != 0) {
    fprintf(stderr, "mcpd-reload: the server did not initialize\n");
    return 1;
  }
  t = calloc((size_t)runs, sizeof(*t));
  for (i = 0; i < runs; i++) {
    double t0;
    if (copy(plugin, hidden) != 0) {
      perror(plugin);
      return 1;
    }
    t0 = now_us();
    rename(hidden, target);
    if (wait_line(from[0], "notifications/tools/list_changed", 5000) != 0)
      errors++;
    t[i] = now_us() - t0;
    unlink(target);
    if (wait_line(from[0], "notifications/tools/list_changed", 5000) != 0)
      errors++;
  }
  close(to[1]);
  waitpid(pid, NULL, 0);
  rmdir(dir);
  qsort(t, (size_t)runs, sizeof(*t), cmp);
  printf("reload_runs=%d reload_p50_us=%.0f reload_max_us=%.0f errors=%d\n",
         runs, t[runs / 2], t[runs - 1], errors);
  free(t);
  free(cmd);
  return errors ? 1 : 0;
}
