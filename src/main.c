/* SPDX-License-Identifier: MIT */
/* main.c -- the mcpd command: parse the command line, run the loop, exit
 * cleanly. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "cli.h"
#include "client_config.h"
#include "log.h"
#include "metrics.h"
#include "platform.h"
#include "scaffold.h"
#include "server.h"
#include "settings.h"
#include "strbuf.h"
#include "transport_stdio.h"
#include "watchdog.h"
#ifdef MCPD_WITH_HTTP
#include "server_http.h"
#endif

/* Started with fd 0, 1 or 2 closed, the next file opened would take its
 * number: libuv's epoll descriptor could become "stdout".  Fill the gaps
 * with /dev/null before anything else opens a file. */
static void fill_std_fds(void) {
#ifndef _WIN32 /* a Windows process started without them has none to take */
  for (int fd = 0; fd <= 2; fd++)
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      int null = open("/dev/null", O_RDWR);
      if (null >= 0 && null != fd) {
        dup2(null, fd);
        close(null);
      }
    }
#endif
}

/* Writing to a closed pipe must fail with EPIPE, not kill mcpd.  A handler
 * that does nothing, unlike SIG_IGN, is reset by exec, so programs that
 * plugins start get the default disposition they expect.  Windows has no
 * SIGPIPE: the write fails. */
#ifndef _WIN32
static void sigpipe_cb(int signum) {
  (void)signum;
}
#endif

static void ignore_sigpipe(void) {
#ifndef _WIN32
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = sigpipe_cb;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPIPE, &sa, NULL);
#endif
}

#ifndef MCPD_WITH_HTTP
/* `mcpd --transport http` runs mcpd-http, the same server with the HTTP
 * stack linked in: next to this program (a build tree, or both installed
 * in one place), else where it is installed.  Returns only on failure. */
static int exec_http(char **argv) {
#ifdef _WIN32
  (void)argv;
  log_error("--transport http and --metrics-listen are not available on "
            "Windows yet; serve over stdio, or run mcpd in WSL");
  return 1;
#else
  char self[PATH_MAX], path[PATH_MAX + 16];

  if (platform_self_exe(self, sizeof(self)) == 0) {
    char *slash;
    if ((slash = strrchr(self, '/')) != NULL) {
      snprintf(path, sizeof(path), "%.*s/mcpd-http", (int)(slash - self), self);
      if (access(path, X_OK) == 0)
        execv(path, argv);
    }
  }
  snprintf(path, sizeof(path), "%s/mcpd-http", MCPD_LIBEXEC_DIR);
  execv(path, argv);
  log_error("--transport http needs %s: %s", path, strerror(errno));
  return 1;
#endif
}
#endif

/* The absolute path of this program, into `out`: what a client's config
 * must run.  Falls back to argv[0] as it is. */
static void self_path(const char *argv0, char *out, size_t size) {
  if (platform_self_exe(out, size) != 0)
    snprintf(out, size, "%s", argv0);
}

/* `mcpd new`, `mcpd install` and `mcpd uninstall`: commands for a person
 * at a shell, before any server starts.  Returns -1 for anything else:
 * `mcpd` with options serves as it always did. */
static int subcommand(int argc, char **argv) {
  char self[PATH_MAX];

  if (argc < 2)
    return -1;
#ifdef _WIN32
  /* It writes a project for the POSIX systems: a Makefile for a .so. */
  if (strcmp(argv[1], "new") == 0) {
    log_error("mcpd new is not available on Windows yet: build a plugin "
              "DLL as the README shows");
    return 2;
  }
#endif
  if (strcmp(argv[1], "new") == 0)
    return scaffold_main(argc - 1, argv + 1);
  if (strcmp(argv[1], "install") == 0 || strcmp(argv[1], "uninstall") == 0) {
    self_path(argv[0], self, sizeof(self));
    return client_config_main(argc - 1, argv + 1, self);
  }
  return -1;
}

int main(int argc, char **argv) {
  settings opts;
  server srv;
  uv_loop_t loop;
  int status = 0, rc, parent_signals = 0;

  fill_std_fds();
  ignore_sigpipe();
  platform_init(argv[0]);
  if ((rc = subcommand(argc, argv)) >= 0)
    return rc;
  if (settings_parse(&opts, argc, argv) != 0) {
    settings_free(&opts);
    return 2;
  }
  if (opts.mode == MODE_HELP) {
    settings_print_help(argv[0], 1);
    settings_free(&opts);
    return 0;
  }
  if (opts.mode == MODE_VERSION) {
    printf("mcpd %s (plugin ABI %d.%d, platform %s)\n", PACKAGE_VERSION,
           MCPD_ABI_MAJOR, MCPD_ABI_MINOR, MCPD_PLATFORM);
    settings_free(&opts);
    return 0;
  }
  log_set_level((log_level)opts.log_level);
  log_set_json(opts.log_json);
  if (opts.mode == MODE_WORKER) {
    /* A worker ends with its host, whatever holds it.  The host may have
     * died before this call: then the parent is another already.  Where
     * the system cannot do it, the worker ends on EOF from the host's
     * pipe. */
    pid_t host = getppid();
    parent_signals = platform_die_with_parent(SIGKILL);
    if (parent_signals && getppid() != host)
      _exit(0);
    /* A plugin that calls exit() from one of its threads would run the
     * process's destructors under the feet of the others, and abort: the
     * status it asked for is what the host should hear. */
    platform_exit_fast();
    /* Its lines share the host's stderr: say whose they are. */
    const char *base = strrchr(opts.worker_path, '/');
    char prefix[96];
    snprintf(prefix, sizeof(prefix), "mcpd[%s]",
             base ? base + 1 : opts.worker_path);
    log_set_prefix(prefix);
  }
#ifndef MCPD_WITH_HTTP
  /* HTTP, or only the operator's listener of a stdio server: both need
   * the HTTP stack, which mcpd-http has. */
  if ((opts.http.listen != NULL || opts.http.metrics_listen != NULL) &&
      opts.mode == MODE_SERVE) {
    settings_free(&opts);
    return exec_http(argv);
  }
#endif
  /* POOL tools run on the libuv pool, and only they do: mcpd's own I/O
   * never waits for it.  libuv reads the size once, before its first use;
   * --threads (or "threads") wins over UV_THREADPOOL_SIZE. */
  {
    char tmp[25];
    size_t len;
    /* No printf at start-up: a quiet server never needs its pages. */
    const char *n = strbuf_format_int64(tmp, (int64_t)opts.call.threads, &len);
    tmp[24] = '\0';
    setenv("UV_THREADPOOL_SIZE", n, opts.call.threads != MCPD_DEFAULT_THREADS);
  }

  uv_loop_init(&loop);
  if (server_init(&srv, &loop, &opts) != 0) {
    log_error("cannot start");
    return 1;
  }
  srv.parent_signals = parent_signals;

  switch (opts.mode) {
  case MODE_LIST:
    status = cli_list(&srv);
    break;
  case MODE_CALL:
    status = cli_call(&srv, opts.call_tool, opts.call_args);
    break;
  default:
    /* Signals first: a client may signal as soon as we listen.  Then the
     * transport: it takes fd 1 before any plugin code can write to it. */
    server_catch_signals(&srv);
#ifdef MCPD_WITH_HTTP
    if (opts.http.listen != NULL) {
      /* Plugins first, isolated ones ready too, then the first client:
       * its first tools/list sees them all.  fd 1 goes to stderr before
       * any plugin code runs. */
      int fd = stdio_take_stdout();
      if (fd >= 0)
        close(fd);
      if (server_start(&srv, 1) == 0)
        server_wait_plugins(&srv);
      rc = server_serve_http(&srv);
      if (rc != 0) {
        status = 1;
        server_shutdown(&srv, "cannot listen");
      }
      uv_run(&loop, UV_RUN_DEFAULT);
      break;
    }
#endif
    rc = server_serve_stdio(&srv);
#ifdef MCPD_WITH_HTTP
    if (rc == 0 && opts.http.metrics_listen != NULL &&
        opts.mode == MODE_SERVE && server_serve_ops(&srv) != 0) {
      status = 1;
      server_shutdown(&srv, "cannot listen for metrics");
    } else
#endif
        if (rc != 0) {
      status = 1;
      server_shutdown(&srv,
                      opts.http.listen != NULL ? "cannot listen" : "no stdio");
    } else if (server_start(&srv, 1) != 0) {
      /* Only a worker fails to start: its host learns from status 3
       * that the plugin cannot be served, before anything was read. */
      status = 3;
      server_shutdown(&srv, "the plugin could not be loaded");
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    break;
  }

  watchdog_stop();
  if (srv.input_failed && status == 0)
    status = opts.mode == MODE_WORKER ? 3 : 1;
  if (srv.exit_hard) {
    /* A call is stuck in plugin code on a worker thread; its image must
     * stay mapped, so leave without unloading. */
    _exit(status);
  }
  server_free(&srv);
  metrics_free();
  rc = uv_loop_close(&loop);
  if (rc != 0) {
    log_error("uv_loop_close: %s (a handle was left open)", uv_strerror(rc));
    status = status ? status : 1;
  }
  settings_free(&opts);
  return status;
}
