/* SPDX-License-Identifier: MIT */
/* test_tools.c -- tools/call through a session, with good.so and echo.so
 * loaded: every execution mode, every kind of failure a client can see,
 * progress, the run-time registry and list_changed.  Also the crash suite:
 * a tool that segfaults takes its test down, and only that test. */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "call.h"
#include "jsonrpc.h"
#include "loader.h"
#include "unit.h"
#include "utf8.h"

static harness h;

/* good.so and echo.so loaded, the startup announcement flushed (it goes
 * nowhere before initialize), the session initialized with `version`. */
static void start(const char *version, const char *const *extra) {
  harness_init(&h, extra);
  harness_session(&h);
  harness_copy(&h, "good.so", "good.so");
  harness_copy(&h, MCPD_ECHO_SO, "echo.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 2);
  harness_turn(&h);
  ck_assert_uint_eq(h.cap.n, 0);
  ck_assert_uint_eq(h.srv.registry.changed, 0);
  harness_initialize(&h, version);
}

static void setup(void) {
  start("2025-11-25", NULL);
}

static void setup_batches(void) {
  start("2025-03-26", NULL);
}

static void teardown(void) {
  harness_free(&h);
}

/* harness_run_until's test: request `*(int *)arg` has its response. */
static int have_response(harness *hh, void *arg) {
  return harness_response_index(hh, *(int *)arg) >= 0;
}

/* The text of content block `i` of a tools/call result. */
static const char *text_of(json_object *msg, int i) {
  char path[64];
  json_object *v;

  snprintf(path, sizeof(path), "result.content.%d.text", i);
  v = json_path(msg, path);
  ck_assert_msg(v != NULL, "no %s", path);
  return json_object_get_string(v);
}

static int is_error_result(json_object *msg) {
  json_object *v = json_path(msg, "result.isError");
  return v != NULL && json_object_get_boolean(v);
}

START_TEST(test_add_structured) {
  json_object *msg = harness_tool(&h, 1, "add", "{\"a\":2,\"b\":40}");
  size_t i = (size_t)harness_response_index(&h, 1);

  ck_assert_str_eq(h.cap.msgs[i],
                   "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":"
                   "[{\"type\":\"text\",\"text\":\"42\"}],"
                   "\"structuredContent\":{\"sum\":42}}}");
  json_object_put(msg);

  msg = harness_tool(&h, 2, "add", "{\"a\":0.5,\"b\":-2}");
  ck_assert_double_eq(
      json_object_get_double(json_path(msg, "result.structuredContent.sum")),
      -1.5);
  ck_assert_str_eq(text_of(msg, 0), "-1.5");
  ck_assert(!is_error_result(msg));
  json_object_put(msg);
}
END_TEST

START_TEST(test_echo_plugin) {
  json_object *msg = harness_tool(
      &h, 1, "echo", "{\"text\":\"a\\u0000b / caf\\u00e9 \\\"q\\\"\"}");
  json_object *text = json_path(msg, "result.content.0.text");

  ck_assert_ptr_nonnull(text);
  /* The NUL survives, and nothing is escaped twice. */
  ck_assert_int_eq(json_object_get_string_len(text), 15);
  ck_assert_int_eq(
      memcmp(json_object_get_string(text), "a\0b / caf\xc3\xa9 \"q\"", 15), 0);
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.content.0.type")), "text");
  json_object_put(msg);
}
END_TEST

START_TEST(test_nothing_is_internal_error) {
  json_object *msg = harness_tool(&h, 1, "nothing", NULL);

  ck_assert_int_eq(response_error_code(msg), JSONRPC_INTERNAL_ERROR);
  ck_assert_ptr_nonnull(strstr(
      json_object_get_string(json_path(msg, "error.message")), "nothing"));
  json_object_put(msg);
}
END_TEST

START_TEST(test_garbage_is_internal_error) {
  json_object *msg = harness_tool(&h, 1, "garbage", "{}");

  ck_assert_int_eq(response_error_code(msg), JSONRPC_INTERNAL_ERROR);
  ck_assert_ptr_nonnull(strstr(
      json_object_get_string(json_path(msg, "error.message")), "garbage"));
  json_object_put(msg);
  /* The server carries on. */
  msg = harness_tool(&h, 2, "add", "{\"a\":1,\"b\":1}");
  ck_assert_str_eq(text_of(msg, 0), "2");
  json_object_put(msg);
}
END_TEST

START_TEST(test_fail_is_error_result) {
  json_object *msg = harness_tool(&h, 1, "fail", NULL);

  ck_assert_int_eq(response_error_code(msg), 0);
  ck_assert(is_error_result(msg));
  ck_assert_str_eq(text_of(msg, 0), "it failed on purpose");
  json_object_put(msg);
}
END_TEST

/* Bad arguments are a tool error the model reads, naming the argument. */
START_TEST(test_invalid_arguments) {
  json_object *msg = harness_tool(&h, 1, "add", "{\"a\":\"two\",\"b\":1}");

  ck_assert_int_eq(response_error_code(msg), 0);
  ck_assert(is_error_result(msg));
  ck_assert_ptr_nonnull(strstr(text_of(msg, 0), "argument 'a'"));
  ck_assert_ptr_nonnull(strstr(text_of(msg, 0), "add"));
  json_object_put(msg);

  msg = harness_tool(&h, 2, "add", "{\"a\":1}");
  ck_assert(is_error_result(msg));
  ck_assert_ptr_nonnull(strstr(text_of(msg, 0), "argument 'b'"));
  json_object_put(msg);

  msg = harness_tool(&h, 3, "add", "{\"a\":1,\"b\":2,\"c\":3}");
  ck_assert(is_error_result(msg));
  ck_assert_ptr_nonnull(strstr(text_of(msg, 0), "argument 'c'"));
  json_object_put(msg);

  /* Absent arguments are an empty object, so "required" still applies. */
  msg = harness_tool(&h, 4, "async_echo", NULL);
  ck_assert(is_error_result(msg));
  ck_assert_ptr_nonnull(strstr(text_of(msg, 0), "argument 'text'"));
  json_object_put(msg);

  msg = harness_tool(&h, 5, "slow", "{\"ms\":-1}");
  ck_assert(is_error_result(msg));
  ck_assert_ptr_nonnull(strstr(text_of(msg, 0), "argument 'ms'"));
  json_object_put(msg);
}
END_TEST

START_TEST(test_unknown_tool) {
  json_object *msg = harness_tool(&h, 1, "no_such_tool", "{}");

  ck_assert_int_eq(response_error_code(msg), JSONRPC_INVALID_PARAMS);
  ck_assert_ptr_nonnull(strstr(
      json_object_get_string(json_path(msg, "error.message")), "no_such_tool"));
  json_object_put(msg);
}
END_TEST

START_TEST(test_pool_tool) {
  json_object *msg = harness_tool(&h, 1, "slow", "{\"ms\":10}");

  ck_assert(!is_error_result(msg));
  ck_assert_str_eq(text_of(msg, 0), "slept 10");
  json_object_put(msg);
  ck_assert_uint_eq(h.srv.exec.in_flight, 0);
  ck_assert_uint_eq(h.session->requests_in_flight, 0);
}
END_TEST

/* Several pool calls at once are all answered, each with its own id. */
START_TEST(test_pool_concurrent) {
  for (int id = 1; id <= 6; id++) {
    char line[256];
    snprintf(line, sizeof(line),
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"slow\",\"arguments\":{\"ms\":%d}}}",
             id, 5 * (7 - id));
    harness_line(&h, line);
  }
  ck_assert_uint_eq(h.srv.exec.in_flight, 6);
  harness_wait(&h, 6);
  for (int id = 1; id <= 6; id++) {
    char want[32];
    json_object *msg = harness_msg(&h, (size_t)harness_response_index(&h, id));
    snprintf(want, sizeof(want), "slept %d", 5 * (7 - id));
    ck_assert_str_eq(text_of(msg, 0), want);
    json_object_put(msg);
  }
}
END_TEST

START_TEST(test_async_tool) {
  json_object *msg =
      harness_tool(&h, 1, "async_echo", "{\"text\":\"from a thread\"}");

  ck_assert(!is_error_result(msg));
  ck_assert_str_eq(text_of(msg, 0), "from a thread");
  json_object_put(msg);
  ck_assert_uint_eq(h.srv.exec.in_flight, 0);
}
END_TEST

START_TEST(test_progress) {
  double last = -1;
  size_t notes = 0;
  long answer;

  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"progress\",\"arguments\":"
                   "{\"steps\":4},\"_meta\":{\"progressToken\":\"tok-1\"}}}");
  {
    int id = 7;
    harness_run_until(&h, have_response, &id);
  }
  answer = harness_response_index(&h, 7);
  for (long i = 0; i < answer; i++) {
    json_object *msg = harness_msg(&h, (size_t)i);
    double p;
    ck_assert_str_eq(json_object_get_string(json_path(msg, "method")),
                     "notifications/progress");
    ck_assert_str_eq(
        json_object_get_string(json_path(msg, "params.progressToken")),
        "tok-1");
    p = json_object_get_double(json_path(msg, "params.progress"));
    ck_assert_msg(p > last, "progress %g after %g", p, last);
    last = p;
    ck_assert_double_eq(json_object_get_double(json_path(msg, "params.total")),
                        4);
    notes++;
    json_object_put(msg);
  }
  /* Every notification came before the response. */
  ck_assert_uint_eq(notes, 4);
  ck_assert_uint_eq((size_t)answer, h.cap.n - 1);
  ck_assert_double_eq(last, 4);
  {
    json_object *msg = harness_msg(&h, (size_t)answer);
    ck_assert_str_eq(text_of(msg, 0), "done");
    json_object_put(msg);
  }
}
END_TEST

START_TEST(test_progress_integer_token) {
  json_object *msg;

  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"progress\",\"arguments\":"
                   "{\"steps\":1},\"_meta\":{\"progressToken\":99}}}");
  harness_wait(&h, 2);
  msg = harness_msg(&h, 0);
  ck_assert_str_eq(plain(json_path(msg, "params.progressToken")), "99");
  json_object_put(msg);
}
END_TEST

START_TEST(test_no_progress_without_token) {
  json_object *msg = harness_tool(&h, 1, "progress", "{\"steps\":3}");

  ck_assert_str_eq(text_of(msg, 0), "done");
  json_object_put(msg);
  ck_assert_uint_eq(h.cap.n, 1);
}
END_TEST

static int listed(const char *name) {
  json_object *msg;
  json_object *tools;
  int found = 0;
  int id = 900;

  harness_clear(&h);
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":900,\"method\":"
                   "\"tools/list\"}");
  msg = harness_response(&h, id);
  tools = json_path(msg, "result.tools");
  ck_assert_ptr_nonnull(tools);
  for (size_t i = 0; i < json_object_array_length(tools); i++)
    if (strcmp(json_object_get_string(
                   json_path(json_object_array_get_idx(tools, i), "name")),
               name) == 0)
      found = 1;
  json_object_put(msg);
  return found;
}

static size_t count_list_changed(void) {
  size_t n = 0;
  for (size_t i = 0; i < h.cap.n; i++)
    if (strcmp(h.cap.msgs[i], "{\"jsonrpc\":\"2.0\",\"method\":"
                              "\"notifications/tools/list_changed\"}") == 0)
      n++;
  return n;
}

START_TEST(test_dynamic_tools) {
  json_object *msg;

  ck_assert(!listed("extra"));
  harness_clear(&h);
  msg = harness_tool(&h, 1, "dyn_add", "{\"name\":\"extra\"}");
  ck_assert_str_eq(text_of(msg, 0), "ok");
  json_object_put(msg);
  /* Announced on the next loop turn, once. */
  ck_assert_uint_eq(count_list_changed(), 0);
  harness_turn(&h);
  ck_assert_uint_eq(count_list_changed(), 1);
  harness_turn(&h);
  ck_assert_uint_eq(count_list_changed(), 1);

  ck_assert(listed("extra"));
  msg = harness_tool(&h, 2, "extra", NULL);
  ck_assert_str_eq(text_of(msg, 0), "dynamic extra");
  json_object_put(msg);

  /* A name already taken is refused, and the plugin learns why from
   * last_error(), not only the log. */
  msg = harness_tool(&h, 3, "dyn_add", "{\"name\":\"add\"}");
  ck_assert(is_error_result(msg));
  ck_assert_str_eq(text_of(msg, 0),
                   "add_tool(\"add\") failed: tool \"add\" is already offered "
                   "by plugin \"good\"");
  json_object_put(msg);
  msg = harness_tool(&h, 5, "dyn_add", "{\"name\":\"has space\"}");
  ck_assert(is_error_result(msg));
  ck_assert_ptr_nonnull(strstr(text_of(msg, 0), "is invalid"));
  json_object_put(msg);

  harness_clear(&h);
  msg = harness_tool(&h, 4, "dyn_remove", "{\"name\":\"extra\"}");
  ck_assert_str_eq(text_of(msg, 0), "ok");
  json_object_put(msg);
  harness_turn(&h);
  ck_assert_uint_eq(count_list_changed(), 1);
  ck_assert(!listed("extra"));
  msg = harness_tool(&h, 5, "extra", NULL);
  ck_assert_int_eq(response_error_code(msg), JSONRPC_INVALID_PARAMS);
  json_object_put(msg);

  /* A plugin may only remove its own tools. */
  msg = harness_tool(&h, 6, "dyn_remove", "{\"name\":\"echo\"}");
  ck_assert(is_error_result(msg));
  json_object_put(msg);
  ck_assert(listed("echo"));
}
END_TEST

/* Replacing a plugin file is announced once, and calls reach the new
 * version. */
START_TEST(test_reload_announced) {
  json_object *msg;

  harness_copy(&h, "reload_v1.so", "reload.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  harness_clear(&h);
  harness_turn(&h);
  ck_assert_uint_eq(count_list_changed(), 1);
  msg = harness_tool(&h, 1, "version", NULL);
  ck_assert_str_eq(text_of(msg, 0), "1");
  json_object_put(msg);

  harness_copy(&h, "reload_v2.so", "reload.so");
  {
    /* Make sure the rewrite does not look unchanged. */
    struct timespec times[2] = {{0, UTIME_NOW}, {1, 0}};
    ck_assert_int_eq(
        utimensat(AT_FDCWD, harness_path(&h, "reload.so"), times, 0), 0);
  }
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  harness_clear(&h);
  harness_turn(&h);
  ck_assert_uint_eq(count_list_changed(), 1);
  msg = harness_tool(&h, 2, "version", NULL);
  ck_assert_str_eq(text_of(msg, 0), "2");
  json_object_put(msg);
  msg = harness_tool(&h, 3, "v2_only", NULL);
  ck_assert_str_eq(text_of(msg, 0), "v2");
  json_object_put(msg);
  ck_assert(listed("v2_only"));
}
END_TEST

/* Several changes in one loop turn make one announcement. */
START_TEST(test_list_changed_batched) {
  harness_clear(&h);
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"dyn_add\",\"arguments\":"
                   "{\"name\":\"x1\"}}}");
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"dyn_add\",\"arguments\":"
                   "{\"name\":\"x2\"}}}");
  ck_assert_uint_eq(h.cap.n, 2);
  harness_turn(&h);
  harness_turn(&h);
  ck_assert_uint_eq(count_list_changed(), 1);
}
END_TEST

START_TEST(test_log_tool) {
  json_object *msg;
  char *log;
  size_t levels = 0;

  json_object_put(harness_tool(&h, 1, "log", NULL));
  harness_clear(&h);
  /* Nothing reaches a client that did not ask for logs... */
  msg = harness_tool(&h, 2, "log", NULL);
  json_object_put(msg);
  ck_assert_uint_eq(h.cap.n, 1);

  /* ...and a client that asked for warning gets warning and error. */
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
                   "\"logging/setLevel\",\"params\":{\"level\":"
                   "\"warning\"}}");
  harness_clear(&h);
  msg = harness_tool(&h, 5, "log", NULL);
  ck_assert_str_eq(text_of(msg, 0), "logged");
  json_object_put(msg);
  for (size_t i = 0; i + 1 < h.cap.n; i++) {
    json_object *note = harness_msg(&h, i);
    const char *level = json_object_get_string(json_path(note, "params.level"));
    ck_assert_str_eq(json_object_get_string(json_path(note, "method")),
                     "notifications/message");
    ck_assert_str_eq(json_object_get_string(json_path(note, "params.logger")),
                     "good");
    ck_assert(strcmp(level, "warning") == 0 || strcmp(level, "error") == 0);
    levels++;
    json_object_put(note);
  }
  ck_assert_uint_eq(levels, 2);

  /* The stderr log got them too, prefixed with the plugin. */
  log = harness_log(&h);
  ck_assert_ptr_nonnull(
      strstr(log, "mcpd: warn: plugin \"good\": a warning message\n"));
  ck_assert_ptr_nonnull(
      strstr(log, "mcpd: error: plugin \"good\": an error message\n"));
  ck_assert_ptr_nonnull(
      strstr(log, "mcpd: info: plugin \"good\": an info message\n"));
  ck_assert_ptr_null(strstr(log, "a debug message"));
  free(log);
}
END_TEST

START_TEST(test_config_tool) {
  json_object *msg = harness_tool(&h, 1, "config", NULL);

  ck_assert_str_eq(text_of(msg, 0), "null");
  json_object_put(msg);
}
END_TEST

START_TEST(test_tools_list) {
  json_object *msg, *tools, *add = NULL;
  int id = 1;

  harness_clear(&h);
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
  harness_run_until(&h, have_response, &id);
  msg = harness_msg(&h, 0);
  tools = json_path(msg, "result.tools");
  ck_assert_uint_eq(json_object_array_length(tools), 28);
  ck_assert_ptr_null(json_path(msg, "result.nextCursor"));
  for (size_t i = 0; i < json_object_array_length(tools); i++) {
    json_object *t = json_object_array_get_idx(tools, i);
    ck_assert_str_eq(json_object_get_string(json_path(t, "inputSchema.type")),
                     "object");
    if (strcmp(json_object_get_string(json_path(t, "name")), "add") == 0)
      add = t;
  }
  ck_assert_ptr_nonnull(add);
  ck_assert_str_eq(json_object_get_string(json_path(add, "description")),
                   "Adds two numbers.");
  ck_assert(
      json_object_get_boolean(json_path(add, "annotations.readOnlyHint")));
  ck_assert_ptr_nonnull(json_path(add, "outputSchema"));
  json_object_put(msg);
}
END_TEST

/* Cancelled requests get no response; the server stays usable. */
START_TEST(test_cancel) {
  json_object *msg;

  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"slow\",\"arguments\":"
                   "{\"ms\":2000}}}");
  ck_assert_uint_eq(h.srv.exec.in_flight, 1);
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                   "cancelled\",\"params\":{\"requestId\":1,\"reason\":"
                   "\"user\"}}");
  msg = harness_tool(&h, 2, "add", "{\"a\":1,\"b\":2}");
  json_object_put(msg);
  harness_run_until(&h, harness_calls_done, NULL);
  ck_assert_int_lt(harness_response_index(&h, 1), 0);
  ck_assert_uint_eq(h.session->requests_in_flight, 0);
}
END_TEST

START_TEST(test_batch_with_pool_call) {
  json_object *msg;

  harness_clear(&h);
  harness_line(&h, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"slow\",\"arguments\":{\"ms\":20}}},"
                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"},"
                   "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"add\",\"arguments\":{\"a\":1,"
                   "\"b\":1}}}]");
  /* Nothing until the slow call is done, then one array. */
  ck_assert_uint_eq(h.cap.n, 0);
  harness_wait(&h, 1);
  ck_assert_uint_eq(h.cap.n, 1);
  msg = harness_msg(&h, 0);
  ck_assert(json_object_is_type(msg, json_type_array));
  ck_assert_uint_eq(json_object_array_length(msg), 3);
  for (size_t i = 0; i < 3; i++) {
    json_object *item = json_object_array_get_idx(msg, i);
    int id = json_object_get_int(json_path(item, "id"));
    if (id == 1)
      ck_assert_str_eq(
          json_object_get_string(json_path(item, "result.content.0.text")),
          "slept 20");
    else if (id == 3)
      ck_assert_str_eq(
          json_object_get_string(json_path(item, "result.content.0.text")),
          "2");
    else
      ck_assert_int_eq(id, 2);
  }
  json_object_put(msg);
}
END_TEST

/* The plugin file disappears while one of its pool calls runs: the tools
 * leave the list at once, the call still completes normally, and the
 * plugin is finalized after it. */
START_TEST(test_unload_during_call) {
  json_object *msg;
  int id = 1;

  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"slow\",\"arguments\":"
                   "{\"ms\":100}}}");
  ck_assert_int_eq(unlink(harness_path(&h, "good.so")), 0);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  ck_assert_ptr_null(registry_find(&h.srv.registry, REG_TOOL, "slow"));
  msg = harness_response(&h, id);
  ck_assert_str_eq(text_of(msg, 0), "slept 100");
  json_object_put(msg);
  ck_assert_uint_eq(h.srv.exec.in_flight, 0);
}
END_TEST

/* Paging through 26 tools, 10 at a time. */
START_TEST(test_paging_many) {
  char config[PATH_MAX * 2];
  const char *base = getenv("TMPDIR");
  FILE *f;
  size_t total = 0;
  char cursor[32] = "";
  int pages = 0;

  snprintf(config, sizeof(config), "%s/mcpd-unit-many-%ld.json",
           base != NULL && base[0] == '/' ? base : "/tmp", (long)getpid());
  f = fopen(config, "w");
  ck_assert_ptr_nonnull(f);
  fputs("{\"plugins\":{\"many\":{\"count\":25}}}", f);
  fclose(f);
  {
    const char *const extra[] = {"--config", config, "--page-size", "10", NULL};
    harness_init(&h, extra);
  }
  unlink(config);
  harness_session(&h);
  harness_copy(&h, "many.so", "many.so");
  loader_scan(&h.srv.loader);
  ck_assert_uint_eq(registry_count(&h.srv.registry, REG_TOOL), 26);
  harness_initialize(&h, "2025-11-25");
  do {
    char line[256];
    json_object *msg, *next;
    int id = 100 + pages;

    snprintf(line, sizeof(line),
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\","
             "\"params\":{%s%s%s}}",
             id, cursor[0] ? "\"cursor\":\"" : "", cursor,
             cursor[0] ? "\"" : "");
    harness_clear(&h);
    harness_line(&h, line);
    msg = harness_response(&h, id);
    ck_assert_int_eq(response_error_code(msg), 0);
    total += json_object_array_length(json_path(msg, "result.tools"));
    next = json_path(msg, "result.nextCursor");
    snprintf(cursor, sizeof(cursor), "%s",
             next ? json_object_get_string(next) : "");
    json_object_put(msg);
    pages++;
    ck_assert_int_le(pages, 3);
  } while (cursor[0] != '\0');
  ck_assert_int_eq(pages, 3);
  ck_assert_uint_eq(total, 26);
}
END_TEST

/* An error that quotes a long non-ASCII argument name is cut to fit its
 * buffer; what reaches the client is still valid UTF-8 (found by the
 * protocol fuzzer). */
START_TEST(test_quoted_input_stays_utf8) {
  char line[2048];
  size_t off;
  int id = 1;

  off = (size_t)snprintf(line, sizeof(line),
                         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                         "\"tools/call\",\"params\":{\"name\":\"echo\","
                         "\"arguments\":{\"text\":\"a\",\"");
  for (int i = 0; i < 300; i++) {
    memcpy(line + off, "\xc3\xa9", 2);
    off += 2;
  }
  snprintf(line + off, sizeof(line) - off, "\":1}}}");
  harness_clear(&h);
  harness_line(&h, line);
  harness_run_until(&h, have_response, &id);
  ck_assert_msg(utf8_valid(h.cap.msgs[0], strlen(h.cap.msgs[0])),
                "not UTF-8: %s", h.cap.msgs[0]);
  ck_assert_ptr_nonnull(strstr(h.cap.msgs[0], "\"isError\":true"));
}
END_TEST

/* A plugin's own json-c serializer cannot start a second message on the
 * stream: the result must print as one line of strict JSON, or it is an
 * internal error. */
START_TEST(test_serializer_cannot_inject) {
  json_object *msg;

  harness_clear(&h);
  msg = harness_tool(&h, 1, "serializer", NULL);
  ck_assert_uint_eq(h.cap.n, 1);
  ck_assert_ptr_null(strchr(h.cap.msgs[0], '\n'));
  ck_assert_ptr_null(strstr(h.cap.msgs[0], "forged"));
  ck_assert_int_eq(response_error_code(msg), JSONRPC_INTERNAL_ERROR);
  json_object_put(msg);
}
END_TEST

/* The table entry's data and the call's name reach the callback. */
START_TEST(test_entry_data) {
  json_object *msg = harness_tool(&h, 1, "data_echo", NULL);
  ck_assert_str_eq(text_of(msg, 0), "data_echo entry-data");
  json_object_put(msg);
}
END_TEST

/* on_cancel(): the callback runs when the client cancels, and wakes a
 * tool that waits without polling. */
START_TEST(test_on_cancel_wakes) {
  harness_clear(&h);
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"wait_cancel\"}}");
  /* Let the worker register its callback, then cancel. */
  usleep(100 * 1000);
  harness_line(&h,
               "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
               "\"params\":{\"requestId\":1}}");
  harness_run_until(&h, harness_calls_done, NULL);
  ck_assert_uint_eq(h.cap.n, 0);
}
END_TEST

/* Every result builder, byte for byte as the client reads it. */
START_TEST(test_every_builder) {
  json_object *msg;

  harness_clear(&h);
  msg = harness_tool(&h, 1, "builders", NULL);
  ck_assert_str_eq(
      h.cap.msgs[0],
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":["
      "{\"type\":\"text\",\"text\":\"text\"},"
      "{\"type\":\"text\",\"text\":\"len\\u0000gt\"},"
      "{\"type\":\"text\",\"text\":\"textf-7\"},"
      "{\"type\":\"image\",\"data\":\"aW1n\",\"mimeType\":\"image/png\"},"
      "{\"type\":\"audio\",\"data\":\"YXVk\",\"mimeType\":\"audio/wav\"},"
      "{\"type\":\"resource_link\",\"uri\":\"file:///a\",\"name\":\"a\","
      "\"description\":\"the a\",\"mimeType\":\"text/plain\"},"
      "{\"type\":\"resource_link\",\"uri\":\"file:///b\",\"name\":\"b\"},"
      "{\"type\":\"resource\",\"resource\":{\"uri\":\"mem://t\","
      "\"mimeType\":\"text/plain\",\"text\":\"hi\"}},"
      "{\"type\":\"resource\",\"resource\":{\"uri\":\"mem://b\","
      "\"blob\":\"Ymxi\"}}]}}");
  json_object_put(msg);
  harness_clear(&h);
  msg = harness_tool(&h, 2, "json_result", NULL);
  ck_assert_str_eq(h.cap.msgs[0],
                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":["
                   "{\"type\":\"text\",\"text\":\"whole\"}],"
                   "\"isError\":false}}");
  json_object_put(msg);
}
END_TEST

/* A callback that returns neither MCPD_OK nor MCPD_ERROR has a bug: the
 * client gets an error, never the result it happened to build. */
START_TEST(test_bogus_return_code) {
  json_object *msg;

  harness_clear(&h);
  msg = harness_tool(&h, 1, "bogus", NULL);
  ck_assert_int_eq(response_error_code(msg), JSONRPC_INTERNAL_ERROR);
  ck_assert_ptr_nonnull(strstr(
      json_object_get_string(json_path(msg, "error.message")), "returned 7"));
  json_object_put(msg);
  {
    char *log = harness_log(&h);
    ck_assert_ptr_nonnull(strstr(log, "neither MCPD_OK nor MCPD_ERROR"));
    free(log);
  }
}
END_TEST

/* The misuse thread's late calls are refused without waking the loop; a
 * ticking timer does, so the report is polled. */
static uv_timer_t tick;

static void tick_cb(uv_timer_t *timer) {
  (void)timer;
}

static void start_ticking(void) {
  uv_timer_init(&h.loop, &tick);
  uv_timer_start(&tick, tick_cb, 10, 10);
}

static void setup_capped(void) {
  static const char *const extra[] = {"--max-in-flight", "3", NULL};
  start("2025-11-25", extra);
}

/* Above --max-in-flight, a request is refused at once with -32000 and its
 * own id; requests answered at once never count; once calls finish, new
 * ones are taken again. */
START_TEST(test_in_flight_cap) {
  json_object *msg;
  int id = 4;

  for (int i = 1; i <= 4; i++) {
    char line[256];
    snprintf(line, sizeof(line),
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"slow\",\"arguments\":{\"ms\":50}}}",
             i);
    harness_line(&h, line);
  }
  ck_assert_uint_eq(h.srv.exec.in_flight, 3);
  ck_assert_uint_eq(h.cap.n, 1);
  msg = harness_msg(&h, 0);
  ck_assert_int_eq(response_error_code(msg), JSONRPC_SERVER_BUSY);
  ck_assert_int_eq(json_object_get_int(json_path(msg, "id")), 4);
  json_object_put(msg);
  /* A ping is answered at once, even now. */
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}");
  ck_assert_uint_eq(h.cap.n, 2);
  harness_run_until(&h, harness_calls_done, NULL);
  ck_assert_uint_eq(h.cap.n, 5);
  harness_clear(&h);
  id = 6;
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"slow\",\"arguments\":{\"ms\":1}}}");
  harness_run_until(&h, have_response, &id);
  msg = harness_msg(&h, 0);
  ck_assert_int_eq(response_error_code(msg), 0);
  json_object_put(msg);
}
END_TEST

/* Cancellation finds the right request among many in flight, by id of
 * either kind, and leaves the others alone. */
START_TEST(test_cancel_among_many) {
  for (int i = 1; i <= 200; i++) {
    char line[256];
    snprintf(line, sizeof(line),
             "{\"jsonrpc\":\"2.0\",\"id\":%s%d%s,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"slow\",\"arguments\":{\"ms\":30}}}",
             i % 2 ? "" : "\"s", i, i % 2 ? "" : "\"");
    harness_line(&h, line);
  }
  ck_assert_uint_eq(h.srv.exec.in_flight, 200);
  harness_line(&h,
               "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
               "\"params\":{\"requestId\":77}}");
  harness_line(&h,
               "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
               "\"params\":{\"requestId\":\"s100\"}}");
  /* Ids that are not in flight, or of the wrong type, change nothing. */
  harness_line(&h,
               "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
               "\"params\":{\"requestId\":\"77\"}}");
  harness_line(&h,
               "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
               "\"params\":{\"requestId\":100000}}");
  harness_run_until(&h, harness_calls_done, NULL);
  ck_assert_uint_eq(h.cap.n, 198);
  for (size_t i = 0; i < h.cap.n; i++) {
    ck_assert_ptr_null(strstr(h.cap.msgs[i], "\"id\":77,"));
    ck_assert_ptr_null(strstr(h.cap.msgs[i], "\"id\":\"s100\""));
  }
}
END_TEST

/* Waits until the good plugin's misuse thread has reported. */
static int misuse_reported(harness *hh, void *arg) {
  json_object *msg;
  int id = *(int *)arg, done;
  char line[200];
  (void)hh;
  harness_clear(&h);
  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"misuse_report\"}}",
           id);
  harness_line(&h, line);
  if (h.cap.n != 1)
    return 0;
  msg = harness_msg(&h, 0);
  done =
      json_object_get_string_len(json_path(msg, "result.content.0.text")) > 0;
  json_object_put(msg);
  return done;
}

/* After complete(), the call's handle is stale: complete() again,
 * result_text() and progress() return MCPD_ERROR and cancelled() says
 * yes, each with a log line naming the plugin -- and nothing touches the
 * freed call (ASan sees the difference). */
START_TEST(test_use_after_complete_refused) {
  json_object *msg;
  int report = 100;
  char *log;

  harness_clear(&h);
  msg = harness_tool(&h, 1, "complete_twice", NULL);
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.content.0.text")), "once");
  json_object_put(msg);
  start_ticking();
  harness_run_until(&h, misuse_reported, &report);
  msg = harness_msg(&h, 0);
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.content.0.text")),
      "-1 -1 -1 1");
  json_object_put(msg);
  log = harness_log(&h);
  ck_assert_ptr_nonnull(strstr(
      log, "plugin \"good\": complete() on a call that has already finished"));
  free(log);
}
END_TEST

/* An ASYNC callback that fails and completes anyway: one error response,
 * and the late complete() is refused safely. */
START_TEST(test_complete_after_failure_refused) {
  json_object *msg;
  int report = 100;

  harness_clear(&h);
  msg = harness_tool(&h, 1, "fail_then_complete", NULL);
  ck_assert_int_eq(response_error_code(msg), JSONRPC_INTERNAL_ERROR);
  json_object_put(msg);
  start_ticking();
  harness_run_until(&h, misuse_reported, &report);
  msg = harness_msg(&h, 0);
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.content.0.text")),
      "-1 -1 -1 1");
  json_object_put(msg);
}
END_TEST

/* A session closed while a pool call runs: the late completion must write
 * nowhere and touch nothing that was freed (run under valgrind or ASan to
 * see the difference). */

START_TEST(test_session_freed_during_call) {
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"slow\",\"arguments\":"
                   "{\"ms\":50}}}");
  ck_assert_uint_eq(h.srv.exec.in_flight, 1);
  harness_clear(&h);
  server_close_session(&h.srv, h.session);
  h.session = NULL;
  harness_run_until(&h, harness_calls_done, NULL);
  ck_assert_uint_eq(h.cap.n, 0);
}
END_TEST

/* The same inside a batch (2025-03-26): the batch must not be written to
 * the freed session when its last request completes. */
START_TEST(test_session_freed_during_batch) {
  harness_line(&h, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"slow\",\"arguments\":"
                   "{\"ms\":50}}},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
                   "\"ping\"}]");
  ck_assert_uint_eq(h.srv.exec.in_flight, 1);
  ck_assert_uint_eq(h.cap.n, 0);
  server_close_session(&h.srv, h.session);
  h.session = NULL;
  harness_run_until(&h, harness_calls_done, NULL);
  ck_assert_msg(h.cap.n == 0, "a freed session sent: %s", h.cap.msgs[0]);
}
END_TEST

/* Whether `obj` holds a number JSON cannot express (NaN, an infinity). */
static int has_non_finite(json_object *obj) {
  switch (json_object_get_type(obj)) {
  case json_type_double:
    return !isfinite(json_object_get_double(obj));
  case json_type_array:
    for (size_t i = 0; i < json_object_array_length(obj); i++)
      if (has_non_finite(json_object_array_get_idx(obj, i)))
        return 1;
    return 0;
  case json_type_object: {
    json_object_object_foreach(obj, key, value) {
      (void)key;
      if (has_non_finite(value))
        return 1;
    }
    return 0;
  }
  default:
    return 0;
  }
}

/* NaN and Infinity are not JSON: a client that sends them gets a parse
 * error.  1e999 is JSON, but overflows to infinity; whatever the answer,
 * it must be a line a JSON parser can read.  Today all four make mcpd
 * write "structuredContent":{"sum":nan} (or inf). */
START_TEST(test_non_finite_numbers) {
  static const char *const args[] = {"NaN", "Infinity", "-Infinity", "1e999",
                                     NULL};

  for (size_t i = 0; args[i] != NULL; i++) {
    char line[256];
    json_object *msg;

    snprintf(line, sizeof(line),
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"add\",\"arguments\":{\"a\":%s,"
             "\"b\":1}}}",
             args[i]);
    harness_clear(&h);
    harness_line(&h, line);
    harness_wait(&h, 1);
    /* json-c's lenient parser reads nan and inf back, as doubles. */
    msg = parse_json(h.cap.msgs[0]);
    ck_assert_msg(!has_non_finite(msg),
                  "a=%s: sent a line that is not JSON: %s", args[i],
                  h.cap.msgs[0]);
    if (strcmp(args[i], "1e999") != 0)
      ck_assert_msg(response_error_code(msg) == JSONRPC_PARSE_ERROR,
                    "a=%s answered %s", args[i], h.cap.msgs[0]);
    json_object_put(msg);
  }
}
END_TEST

/* The crash suite: the tool raises SIGSEGV; in fork mode the child dies of
 * it, which is exactly what these tests expect.  A sanitizer's SIGSEGV
 * handler would turn the signal into an ordinary exit, so the default
 * action is restored first, as mcpd itself leaves it. */
static void setup_crash(void) {
  signal(SIGSEGV, SIG_DFL);
  setup();
}

START_TEST(test_crash_through_session) {
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"crash\"}}");
  ck_abort_msg("the crash tool returned");
}
END_TEST

START_TEST(test_crash_callback_directly) {
  reg_tool *t = registry_find(&h.srv.registry, REG_TOOL, "crash");
  json_object *args = json_object_new_object();

  mcpd_request req = {.size = sizeof(req),
                      .host = &call_host_api,
                      .state = t->owner->state,
                      .arguments = args};

  ck_assert_ptr_nonnull(t);
  t->cb(NULL, &req);
  json_object_put(args);
  ck_abort_msg("the crash tool returned");
}
END_TEST

/* A crash in one test does not affect the next: the harness still works. */
START_TEST(test_after_crash) {
  json_object *msg = harness_tool(&h, 1, "add", "{\"a\":20,\"b\":22}");
  ck_assert_str_eq(text_of(msg, 0), "42");
  json_object_put(msg);
}
END_TEST

Suite *crash_suite(void) {
  Suite *s = suite_create("crash");
  TCase *tc = tcase_create("isolation");

  tcase_add_checked_fixture(tc, setup_crash, teardown);
  tcase_add_test_raise_signal(tc, test_crash_through_session, SIGSEGV);
  tcase_add_test_raise_signal(tc, test_crash_callback_directly, SIGSEGV);
  tcase_add_test(tc, test_after_crash);
  suite_add_tcase(s, tc);
  return s;
}

Suite *tools_suite(void) {
  Suite *s = suite_create("tools");
  TCase *tc;

  tc = tcase_create("results");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_add_structured);
  tcase_add_test(tc, test_echo_plugin);
  tcase_add_test(tc, test_nothing_is_internal_error);
  tcase_add_test(tc, test_garbage_is_internal_error);
  tcase_add_test(tc, test_fail_is_error_result);
  tcase_add_test(tc, test_invalid_arguments);
  tcase_add_test(tc, test_unknown_tool);
  tcase_add_test(tc, test_config_tool);
  tcase_add_test(tc, test_tools_list);
  suite_add_tcase(s, tc);

  tc = tcase_create("execution");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_pool_tool);
  tcase_add_test(tc, test_pool_concurrent);
  tcase_add_test(tc, test_async_tool);
  tcase_add_test(tc, test_progress);
  tcase_add_test(tc, test_progress_integer_token);
  tcase_add_test(tc, test_no_progress_without_token);
  tcase_add_test(tc, test_cancel);
  tcase_add_test(tc, test_unload_during_call);
  suite_add_tcase(s, tc);

  tc = tcase_create("registry");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_dynamic_tools);
  tcase_add_test(tc, test_list_changed_batched);
  tcase_add_test(tc, test_reload_announced);
  tcase_add_test(tc, test_log_tool);
  suite_add_tcase(s, tc);

  tc = tcase_create("batches");
  tcase_add_checked_fixture(tc, setup_batches, teardown);
  tcase_add_test(tc, test_batch_with_pool_call);
  suite_add_tcase(s, tc);

  tc = tcase_create("paging");
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, test_paging_many);
  suite_add_tcase(s, tc);

  tc = tcase_create("lifetimes");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_session_freed_during_call);
  tcase_add_test(tc, test_bogus_return_code);
  tcase_add_test(tc, test_every_builder);
  tcase_add_test(tc, test_entry_data);
  tcase_add_test(tc, test_serializer_cannot_inject);
  tcase_add_test(tc, test_on_cancel_wakes);
  tcase_add_test(tc, test_quoted_input_stays_utf8);
  tcase_add_test(tc, test_use_after_complete_refused);
  tcase_add_test(tc, test_complete_after_failure_refused);
  tcase_add_test(tc, test_non_finite_numbers);
  suite_add_tcase(s, tc);
  tc = tcase_create("limits");
  tcase_add_checked_fixture(tc, setup_capped, teardown);
  tcase_add_test(tc, test_in_flight_cap);
  suite_add_tcase(s, tc);
  tc = tcase_create("cancellation");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_cancel_among_many);
  suite_add_tcase(s, tc);
  tc = tcase_create("lifetimes_batches");
  tcase_add_checked_fixture(tc, setup_batches, teardown);
  tcase_add_test(tc, test_session_freed_during_batch);
  suite_add_tcase(s, tc);
  return s;
}
