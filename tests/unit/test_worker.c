/* SPDX-License-Identifier: MIT */
/* test_worker.c -- an isolated plugin through worker_link and
 * worker_process: a real `mcpd --worker` runs the fault fixture, its tools
 * reach the registry, calls are forwarded and answered, a crash fails the
 * calls in flight with an error naming the plugin, and the worker comes
 * back. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonrpc.h"
#include "loader.h"
#include "registry.h"
#include "unit.h"
#include "worker_hello.h"
#include "worker_link.h"

#ifndef MCPD_BIN
#error "MCPD_BIN must name the built mcpd"
#endif

/* What a forwarded call's done() recorded. */
typedef struct answer {
  int calls;
  char text[512];    /* the result, as text */
  char message[512]; /* the error's message */
  char data[256];    /* the error's data */
} answer;

static uv_loop_t loop;
static registry reg;
static settings opts;
static plugin *plug;
static worker_env env;
static loader ldr;
static int changed, started, reports;
static char last_report[512];
static uv_timer_t deadline;
static int timed_out;

static void changed_cb(void *arg) {
  (void)arg;
  changed++;
}

static void started_cb(void *arg) {
  (void)arg;
  started++;
}

static void report_cb(void *arg, int level, const char *logger,
                      const char *text) {
  (void)arg, (void)level, (void)logger;
  reports++;
  snprintf(last_report, sizeof(last_report), "%s", text);
}

static void notify_cb(void *arg, void *call, plugin *p, const char *method,
                      json_object *params) {
  (void)arg, (void)call, (void)p, (void)method, (void)params;
}

static void request_cb(void *arg, void *call, plugin *p, json_object *id,
                       const char *method, json_object *params) {
  (void)arg, (void)call, (void)method, (void)params;
  worker_answer(p, id, NULL,
                jsonrpc_error(NULL, -32601, "not in this test", NULL));
}

static void done(void *call, json_object *result, const char *text, size_t len,
                 json_object *error) {
  answer *a = call;
  json_object *v;
  a->calls++;
  if (text != NULL)
    snprintf(a->text, sizeof(a->text), "%.*s", (int)len, text);
  else if (result != NULL)
    snprintf(a->text, sizeof(a->text), "%s", plain(result));
  if (error != NULL) {
    if (json_object_object_get_ex(error, "message", &v))
      snprintf(a->message, sizeof(a->message), "%s", json_object_get_string(v));
    if (json_object_object_get_ex(error, "data", &v))
      snprintf(a->data, sizeof(a->data), "%s", plain(v));
  }
}

static void deadline_cb(uv_timer_t *t) {
  timed_out = 1;
  uv_stop(t->loop);
}

/* Runs the loop until `done_fn` holds, for at most `ms`. */
static void run_until(int (*done_fn)(void *), void *arg, uint64_t ms) {
  timed_out = 0;
  uv_timer_start(&deadline, deadline_cb, ms, 0);
  while (!done_fn(arg) && !timed_out)
    uv_run(&loop, UV_RUN_ONCE);
  uv_timer_stop(&deadline);
  ck_assert_msg(!timed_out, "timed out after %llu ms", (unsigned long long)ms);
}

/* Runs the loop for `ms`, whatever happens. */
static void run_for(uint64_t ms) {
  timed_out = 0;
  uv_timer_start(&deadline, deadline_cb, ms, 0);
  while (!timed_out)
    uv_run(&loop, UV_RUN_ONCE);
}

static int is_started(void *arg) {
  (void)arg;
  return started > 0;
}

static int answered(void *arg) {
  return ((answer *)arg)->calls > 0;
}

static int both_answered(void *arg) {
  answer *a = arg;
  return a[0].calls > 0 && a[1].calls > 0;
}

static int tool_listed(void *arg) {
  return registry_find(&reg, REG_TOOL, arg) != NULL;
}

/* The loader starts the worker, as mcpd's does. */
static int isolate_cb(void *arg, plugin *p) {
  (void)arg;
  return worker_start(&env, p);
}

static void unisolate_cb(void *arg, plugin *p) {
  (void)arg;
  worker_stop(p);
}

static void all_gone_cb(void *arg) {
  *(int *)arg = 1;
}

static void setup(void) {
  loader_env lenv;
  char *argv[] = {(char *)"mcpd", (char *)"--log-level", (char *)"error", NULL};
  ck_assert_int_eq(settings_parse(&opts, 3, argv), 0);
  ck_assert_int_eq(uv_loop_init(&loop), 0);
  ck_assert_int_eq(registry_init(&reg), 0);
  uv_timer_init(&loop, &deadline);
  changed = started = reports = 0;
  last_report[0] = '\0';

  plug = NULL;
  memset(&lenv, 0, sizeof(lenv));
  lenv.registry = &reg;
  lenv.opts = &opts.loader;
  lenv.isolate_cb = isolate_cb;
  lenv.unisolate_cb = unisolate_cb;
  ck_assert_int_eq(loader_init(&ldr, &lenv), 0);

  memset(&env, 0, sizeof(env));
  env.loop = &loop;
  env.registry = &reg;
  env.opts = &opts.worker;
  env.changed_cb = changed_cb;
  env.notify_cb = notify_cb;
  env.request_cb = request_cb;
  env.report_cb = report_cb;
  env.started_cb = started_cb;
  worker_set_program(MCPD_BIN);
}

static void teardown(void) {
  int gone = 0;
  loader_free(&ldr);
  worker_shutdown(all_gone_cb, &gone);
  while (!gone)
    uv_run(&loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&deadline, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(uv_loop_close(&loop), 0);
  if (plug != NULL) {
    /* Only the test's reference is left: the worker and the loader let
     * go of theirs. */
    ck_assert_uint_eq(atomic_load(&plug->refs), 1);
    plugin_release(plug);
  }
  registry_free(&reg);
  settings_free(&opts);
  worker_set_program(NULL);
}

static const char ok_call[] = "{\"name\":\"ok\",\"arguments\":{}}";

/* Forwards tools/call with `params` to the worker, answered into `a`;
 * returns the call's id, for worker_cancel(). */
static uint64_t call_tool(const char *params, answer *a) {
  uint64_t id = 0;
  ck_assert_int_eq(
      worker_call(plug, "tools/call", params, strlen(params), a, done, &id), 0);
  ck_assert_uint_gt(id, 0);
  return id;
}

/* Starts the worker and waits until its tools are listed. */
static void start_worker(void) {
  uint64_t id;
  answer a = {0};
  /* mcpd loads nothing of it: the worker says its name. */
  plug = loader_load_file(&ldr, MCPD_FIXTURES_DIR "/fault.so");
  ck_assert_ptr_nonnull(plug);
  ck_assert_int_eq(plug->live, 0);
  ck_assert_ptr_null(plug->dl);
  plugin_ref(plug); /* the test's */
  /* Not ready yet: a call is refused, and the caller says so. */
  ck_assert_int_eq(worker_call(plug, "tools/call", ok_call, sizeof(ok_call) - 1,
                               &a, done, &id),
                   -1);
  run_until(is_started, NULL, 10000);
  ck_assert_int_eq(started, 1);
  ck_assert_int_eq(plug->live, 1);
  ck_assert_str_eq(plug->name, "fault");
  ck_assert_ptr_nonnull(registry_find(&reg, REG_TOOL, "ok"));
  ck_assert_ptr_eq(registry_find(&reg, REG_TOOL, "ok")->owner, plug);
  ck_assert_ptr_nonnull(registry_find(&reg, REG_TOOL, "segv_pool"));
  ck_assert_int_ge(changed, 1);
}

static void call_ok(void) {
  answer a = {0};
  call_tool(ok_call, &a);
  run_until(answered, &a, 5000);
  ck_assert_int_eq(a.calls, 1);
  ck_assert_str_eq(a.message, "");
  ck_assert_ptr_nonnull(strstr(a.text, "\"text\":\"ok\""));
}

START_TEST(test_forwarded_call) {
  start_worker();
  call_ok();
  /* Calls in a row, each answered once. */
  call_ok();
}
END_TEST

START_TEST(test_crash_fails_calls_and_restarts) {
  static const char slow[] =
      "{\"name\":\"slow_ok\",\"arguments\":{\"ms\":5000}}";
  static const char segv[] = "{\"name\":\"segv_pool\",\"arguments\":{}}";
  answer a[2] = {{0}};
  uint64_t id;
  int changed_before;

  start_worker();
  call_tool(slow, &a[0]);
  call_tool(segv, &a[1]);
  changed_before = changed;
  run_until(both_answered, a, 5000);
  for (int i = 0; i < 2; i++) {
    ck_assert_int_eq(a[i].calls, 1);
    ck_assert_str_eq(a[i].text, "");
    ck_assert_msg(strstr(a[i].message, "plugin \"fault\"") != NULL &&
                      strstr(a[i].message, "signal 11") != NULL,
                  "message: %s", a[i].message);
    ck_assert_str_eq(a[i].data, "{\"plugin\":\"fault\",\"signal\":11}");
  }
  /* Its tools left, every client hears why, and a call now is refused. */
  ck_assert_ptr_null(registry_find(&reg, REG_TOOL, "ok"));
  ck_assert_int_gt(changed, changed_before);
  ck_assert_int_eq(reports, 1);
  ck_assert_ptr_nonnull(strstr(last_report, "plugin \"fault\""));
  {
    answer b = {0};
    ck_assert_int_eq(worker_call(plug, "tools/call", ok_call,
                                 sizeof(ok_call) - 1, &b, done, &id),
                     -1);
  }
  /* It comes back after the first backoff, and works. */
  run_until(tool_listed, (void *)"ok", 5000);
  ck_assert_int_eq(started, 1);
  call_ok();
  /* The calls that failed heard nothing more. */
  ck_assert_int_eq(a[0].calls, 1);
  ck_assert_int_eq(a[1].calls, 1);
}
END_TEST

/* A call that ignores its cancellation past the grace period costs the
 * worker: it is killed, the call fails once, the worker returns. */
START_TEST(test_cancel_grace_kills) {
  static const char hang[] = "{\"name\":\"hang_pool\",\"arguments\":{}}";
  answer a = {0};
  uint64_t id;

  start_worker();
  id = call_tool(hang, &a);
  worker_cancel(plug, id, 200);
  /* Cancelling again does not push the grace period back. */
  worker_cancel(plug, id, 60000);
  run_until(answered, &a, 5000);
  ck_assert_int_eq(a.calls, 1);
  ck_assert_msg(strstr(a.message, "plugin \"fault\"") != NULL &&
                    strstr(a.message, "signal 9") != NULL,
                "message: %s", a.message);
  run_until(tool_listed, (void *)"ok", 5000);
  call_ok();
}
END_TEST

/* Starts the worker, forwards a 20-second slow_ok that stops when
 * cancelled, cancels it with `grace_ms` and checks that it was answered
 * once, as cancelled.  Returns its id. */
static uint64_t cancel_slow_call(answer *a, uint64_t grace_ms) {
  static const char slow[] =
      "{\"name\":\"slow_ok\",\"arguments\":{\"ms\":20000}}";
  uint64_t id;

  start_worker();
  id = call_tool(slow, a);
  worker_cancel(plug, id, grace_ms);
  run_until(answered, a, 5000);
  ck_assert_int_eq(a->calls, 1);
  ck_assert_msg(strstr(a->text, "cancelled") != NULL, "text: %s", a->text);
  return id;
}

/* A call that stops when cancelled ends on the host too: the worker
 * answers the forwarded request once its plugin stopped, so the call's
 * entry leaves the link (the host drops the answer if its client
 * cancelled). */
START_TEST(test_cancel_ends_the_call) {
  answer a = {0};
  uint64_t id = cancel_slow_call(&a, 0);

  ck_assert_str_eq(a.message, "");
  /* Cancelling a call that is over tells nobody anything. */
  worker_cancel(plug, id, 0);
  call_ok();
  ck_assert_int_eq(a.calls, 1);
}
END_TEST

/* Past a deadline, a call that stops within the grace period keeps its
 * worker: only one that ignores its cancellation is killed. */
START_TEST(test_cancel_grace_spares_a_call_that_stops) {
  answer a = {0};

  cancel_slow_call(&a, 300);
  /* Well past the grace period, the worker still runs: nothing reported
   * a kill, its tools stayed, and it answers. */
  run_for(600);
  ck_assert_int_eq(reports, 0);
  ck_assert_ptr_nonnull(registry_find(&reg, REG_TOOL, "ok"));
  call_ok();
  ck_assert_int_eq(a.calls, 1);
}
END_TEST

/* Unloading lets what is in flight finish. */
START_TEST(test_stop_drains_calls) {
  static const char slow[] =
      "{\"name\":\"slow_ok\",\"arguments\":{\"ms\":300}}";
  answer a = {0};

  start_worker();
  call_tool(slow, &a);
  /* The call in flight runs to its end, as in-process; then the worker
   * is let go. */
  worker_stop(plug);
  ck_assert_int_eq(a.calls, 0);
  ck_assert_ptr_nonnull(plug->worker);
  run_until(answered, &a, 10000);
  ck_assert_str_eq(a.message, "");
  ck_assert_ptr_nonnull(strstr(a.text, "slept"));
  ck_assert_ptr_null(plug->worker);
}
END_TEST

/* A pipe's read end holding `text`, its write end closed. */
static int pipe_with(const char *text) {
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  ck_assert_int_eq(write(fds[1], text, strlen(text)), (ssize_t)strlen(text));
  close(fds[1]);
  return fds[0];
}

/* The worker reads its config line and nothing after it: what follows is
 * the MCP stream's. */
START_TEST(test_config_read) {
  json_object *config;
  worker_limits lim;
  char err[256], rest[64];
  int fd =
      pipe_with("{\"jsonrpc\":\"2.0\",\"method\":\"io.mcpd/config\","
                "\"params\":{\"config\":{\"k\":1},\"limits\":{"
                "\"openFiles\":16,\"addressSpaceMiB\":64}}}\n{\"next\":1}\n");

  ck_assert_int_eq(
      worker_config_read(fd, 4096, &config, &lim, err, sizeof(err)), 0);
  ck_assert(json_object_object_get_ex(config, "k", NULL));
  ck_assert_uint_eq(lim.open_files, 16);
  ck_assert_uint_eq(lim.address_space_mib, 64);
  ck_assert_uint_eq(lim.cpu_seconds, 0);
  json_object_put(config);
  ck_assert_int_eq(read(fd, rest, sizeof(rest)), 11);
  ck_assert_int_eq(memcmp(rest, "{\"next\":1}\n", 11), 0);
  close(fd);

  /* EOF first: the host will not use this worker. */
  fd = pipe_with("");
  ck_assert_int_eq(
      worker_config_read(fd, 4096, &config, &lim, err, sizeof(err)), 1);
  close(fd);

  /* A null config is none; anything but the config message is refused. */
  fd = pipe_with("{\"jsonrpc\":\"2.0\",\"method\":\"io.mcpd/config\","
                 "\"params\":{\"config\":null}}\n");
  ck_assert_int_eq(
      worker_config_read(fd, 4096, &config, &lim, err, sizeof(err)), 0);
  ck_assert_ptr_null(config);
  close(fd);
  {
    static const char *const bad[] = {
        "{\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"params\":{}}\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"io.mcpd/config\",\"params\":{"
        "\"config\":[1]}}\n",
        "not json\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"io.mcpd/config\"", /* no newline */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
      fd = pipe_with(bad[i]);
      ck_assert_msg(
          worker_config_read(fd, 4096, &config, &lim, err, sizeof(err)) == -1,
          "accepted %s", bad[i]);
      ck_assert_ptr_null(config);
      close(fd);
    }
  }
  /* Larger than the limit. */
  fd = pipe_with("{\"jsonrpc\":\"2.0\",\"method\":\"io.mcpd/config\"}\n");
  ck_assert_int_eq(worker_config_read(fd, 8, &config, &lim, err, sizeof(err)),
                   -1);
  ck_assert_ptr_nonnull(strstr(err, "larger than 8 bytes"));
  close(fd);
}
END_TEST

Suite *worker_suite(void) {
  Suite *s = suite_create("worker");
  TCase *tc = tcase_create("hello");

  tcase_add_test(tc, test_config_read);
  suite_add_tcase(s, tc);

  tc = tcase_create("link");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_forwarded_call);
  tcase_add_test(tc, test_stop_drains_calls);
  suite_add_tcase(s, tc);

  tc = tcase_create("process");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_crash_fails_calls_and_restarts);
  tcase_add_test(tc, test_cancel_grace_kills);
  tcase_add_test(tc, test_cancel_ends_the_call);
  tcase_add_test(tc, test_cancel_grace_spares_a_call_that_stops);
  suite_add_tcase(s, tc);
  return s;
}
