/* main.c -- the mcpd command: parse options, run the loop, exit cleanly. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "jsonrpc.h"
#include "loader.h"
#include "log.h"
#include "options.h"
#include "server.h"
#include "session.h"
#include "transport_stdio.h"

/* --list and --call print results for a person; they still keep fd 1 away
 * from plugin code, writing through a private descriptor. */
static int protect_stdout(void) {
  int fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (fd >= 0 && dup2(2, 1) < 0)
    log_warn("cannot point fd 1 at stderr: %s", strerror(errno));
  return fd;
}

static void print_list(server *srv, int out) {
  loader *l = &srv->loader;
  size_t n = 0;

  for (plugin *p = l->plugins; p; p = p->next)
    n++;
  dprintf(out, "%-20s %-10s %s\n", "PLUGIN", "VERSION", "FILE");
  /* The list is newest first; print in load order. */
  for (size_t i = n; i > 0; i--) {
    plugin *p = l->plugins;
    for (size_t k = 1; k < i; k++)
      p = p->next;
    dprintf(out, "%-20s %-10s %s\n", p->name, p->version, p->path);
    for (size_t k = 0; k < srv->registry.count; k++) {
      reg_tool *t = srv->registry.order[k];
      json_object *d;
      if (t->owner != p)
        continue;
      dprintf(out, "  tool %-24s %s\n", t->name,
              json_object_object_get_ex(t->listing, "description", &d)
                  ? json_object_get_string(d)
                  : "");
    }
  }
  if (n == 0)
    dprintf(out, "(no plugins loaded)\n");
  for (load_failure *f = l->failures; f; f = f->next)
    dprintf(out, "NOT LOADED %s: %s\n", f->path, f->reason);
}

typedef struct call_mode {
  int out;
  int status;
  int answered;
} call_mode;

static void call_send(session *s, json_object *msg) {
  call_mode *cm = s->transport;
  json_object *id, *result, *error, *is_error;

  if (json_object_object_get_ex(msg, "id", &id) &&
      json_object_is_type(id, json_type_string) &&
      strcmp(json_object_get_string(id), "call") == 0) {
    cm->answered = 1;
    if (json_object_object_get_ex(msg, "result", &result)) {
      dprintf(cm->out, "%s\n",
              json_object_to_json_string_ext(
                  result,
                  JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
      cm->status = json_object_object_get_ex(result, "isError", &is_error) &&
                           json_object_get_boolean(is_error)
                       ? 1
                       : 0;
    } else if (json_object_object_get_ex(msg, "error", &error)) {
      json_object *m;
      json_object_object_get_ex(error, "message", &m);
      log_error("--call %s", m ? json_object_get_string(m) : "failed");
      cm->status = 1;
    }
    server_shutdown(s->srv, "call answered");
  }
  json_object_put(msg);
}

static int run_call(server *srv, const char *tool, const char *args) {
  call_mode cm = {.out = protect_stdout(), .status = 1};
  json_object *arguments, *req, *params;
  session *s;
  const char *line;
  size_t len;

  arguments = json_tokener_parse(args ? args : "{}");
  if (arguments == NULL || !json_object_is_type(arguments, json_type_object)) {
    log_error("--args must be a JSON object, e.g. '{\"text\":\"hi\"}'");
    json_object_put(arguments);
    server_shutdown(srv, "bad --args");
    uv_run(srv->loop, UV_RUN_DEFAULT);
    return 2;
  }
  s = session_new(srv, call_send, &cm);
  srv->session = s;
  server_start(srv, 0);
  session_handle_line(
      s,
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
      "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
      "\"clientInfo\":{\"name\":\"mcpd --call\",\"version\":\"" PACKAGE_VERSION
      "\"}}}",
      strlen("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
             "\"params\":{\"protocolVersion\":\"2025-11-25\","
             "\"capabilities\":{},\"clientInfo\":{\"name\":\"mcpd --call\","
             "\"version\":\"" PACKAGE_VERSION "\"}}}"));
  params = json_object_new_object();
  json_object_object_add(params, "name", json_object_new_string(tool));
  json_object_object_add(params, "arguments", arguments);
  req = jsonrpc_notification("tools/call", params);
  json_object_object_add(req, "id", json_object_new_string("call"));
  line = jsonrpc_to_string(req, &len);
  session_handle_line(s, line, len);
  json_object_put(req);
  uv_run(srv->loop, UV_RUN_DEFAULT);
  if (!cm.answered)
    log_error("--call %s: no answer", tool);
  srv->session = NULL;
  session_free(s);
  if (cm.out >= 0)
    close(cm.out);
  return cm.status;
}

int main(int argc, char **argv) {
  options opts;
  server srv;
  uv_loop_t loop;
  int status = 0, rc;

  signal(SIGPIPE, SIG_IGN);
  if (options_parse(&opts, argc, argv) != 0) {
    options_free(&opts);
    return 2;
  }
  if (opts.mode == MODE_HELP) {
    options_print_help(argv[0], 1);
    options_free(&opts);
    return 0;
  }
  if (opts.mode == MODE_VERSION) {
    printf("mcpd %s (plugin ABI %d.%d)\n", PACKAGE_VERSION, MCPD_ABI_MAJOR,
           MCPD_ABI_MINOR);
    options_free(&opts);
    return 0;
  }
  log_set_level((log_level)opts.log_level);
  /* Slow tools run on the libuv pool; a few more threads than libuv's
   * default four keep a burst of them from queueing.  The environment
   * still wins. */
  setenv("UV_THREADPOOL_SIZE", "8", 0);

  uv_loop_init(&loop);
  if (server_init(&srv, &loop, &opts) != 0) {
    log_error("cannot start");
    return 1;
  }

  switch (opts.mode) {
  case MODE_LIST: {
    int out = protect_stdout();
    server_start(&srv, 0);
    print_list(&srv, out >= 0 ? out : 2);
    if (out >= 0)
      close(out);
    server_shutdown(&srv, "--list done");
    uv_run(&loop, UV_RUN_DEFAULT);
    break;
  }
  case MODE_CALL:
    status = run_call(&srv, opts.call_tool, opts.call_args);
    break;
  default:
    srv.stdio = stdio_transport_new(&srv);
    if (srv.stdio == NULL) {
      status = 1;
      server_shutdown(&srv, "no stdio");
      uv_run(&loop, UV_RUN_DEFAULT);
      break;
    }
    server_start(&srv, 1);
    if (stdio_transport_start(srv.stdio) != 0) {
      log_error("out of memory");
      server_shutdown(&srv, "out of memory");
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    break;
  }

  if (srv.exit_hard) {
    /* A call is stuck in plugin code on a worker thread; its image must
     * stay mapped, so leave without unloading. */
    _exit(status);
  }
  server_free(&srv);
  rc = uv_loop_close(&loop);
  if (rc != 0) {
    log_error("uv_loop_close: %s (a handle was left open)", uv_strerror(rc));
    status = status ? status : 1;
  }
  options_free(&opts);
  return status;
}
