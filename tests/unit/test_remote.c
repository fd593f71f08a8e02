/* SPDX-License-Identifier: MIT */
/* test_remote.c -- calls into isolated plugins (remote.c), as a client
 * sees them: with --isolate, good.so and asker.so run in workers of the
 * built mcpd, and a forwarded call answers exactly as one in process
 * does; the worker's progress carries the client's own token; its request
 * to the client reaches the client and the answer the plugin; its log
 * lines reach the client at the client's level. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "jsonrpc.h"
#include "loader.h"
#include "unit.h"
#include "worker_process.h"

#ifndef MCPD_BIN
#error "MCPD_BIN must name the built mcpd"
#endif

static harness h;

static int both_listed(harness *hh, void *arg) {
  (void)arg;
  return registry_find(&hh->srv.registry, REG_TOOL, "add") != NULL &&
         registry_find(&hh->srv.registry, REG_TOOL, "ask") != NULL;
}

static void setup_with(const char *const *extra) {
  harness_init(&h, extra);
  /* Workers run mcpd itself, not this test program. */
  worker_set_program(MCPD_BIN);
  harness_session(&h);
  harness_copy(&h, "good.so", "good.so");
  harness_copy(&h, "asker.so", "asker.so");
  loader_scan(&h.srv.loader);
  harness_run_until(&h, both_listed, NULL);
  harness_line(
      &h, "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\","
          "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":"
          "{\"sampling\":{}},\"clientInfo\":{\"name\":\"unit\","
          "\"version\":\"0\"}}}");
  harness_line(&h, "{\"jsonrpc\":\"2.0\","
                   "\"method\":\"notifications/initialized\"}");
  harness_clear(&h);
}

static void setup(void) {
  static const char *const extra[] = {"--isolate", NULL};
  setup_with(extra);
}

/* Two requests in flight at most: calls that never ended would soon
 * refuse every request. */
static void setup_cancel(void) {
  static const char *const extra[] = {"--isolate", "--max-in-flight", "2",
                                      NULL};
  setup_with(extra);
}

static void setup_deadline(void) {
  static const char *const extra[] = {"--isolate", "--deadline", "100", NULL};
  setup_with(extra);
}

static void teardown(void) {
  harness_free(&h);
}

START_TEST(test_forwarded_call_answers_the_same) {
  json_object *msg = harness_tool(&h, 1, "add", "{\"a\":1,\"b\":2}");
  ck_assert_str_eq(plain(json_path(msg, "result")),
                   "{\"content\":[{\"type\":\"text\",\"text\":\"3\"}],"
                   "\"structuredContent\":{\"sum\":3}}");
  json_object_put(msg);
  msg = harness_tool(&h, 2, "fail", NULL);
  ck_assert(json_object_get_boolean(json_path(msg, "result.isError")));
  json_object_put(msg);
}
END_TEST

START_TEST(test_worker_progress_has_the_clients_token) {
  json_object *msg;

  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"progress\",\"arguments\":"
                   "{\"steps\":2},\"_meta\":{\"progressToken\":\"mine\"}}}");
  json_object_put(harness_response(&h, 1));
  ck_assert_uint_eq(harness_count(&h.cap, "notifications/progress"), 2);
  msg = harness_msg(&h, 0);
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "params.progressToken")), "mine");
  json_object_put(msg);
  /* The host's keys never reach the client. */
  ck_assert_uint_eq(harness_count(&h.cap, "io.mcpd/"), 0);
}
END_TEST

static int have_sampling(harness *hh, void *arg) {
  (void)arg;
  return harness_count(&hh->cap, "sampling/createMessage") > 0;
}

START_TEST(test_worker_asks_the_client) {
  json_object *msg;
  char line[256];

  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"ask\",\"arguments\":{\"method\":"
                   "\"sampling/createMessage\",\"params\":{\"messages\":[],"
                   "\"maxTokens\":1}}}}");
  harness_run_until(&h, have_sampling, NULL);
  msg = harness_msg(&h, 0);
  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"model\":\"w\"}}",
           json_object_get_string(json_path(msg, "id")));
  json_object_put(msg);
  harness_line(&h, line);
  msg = harness_response(&h, 1);
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.content.0.text")),
      "{\"model\":\"w\"}");
  json_object_put(msg);
}
END_TEST

START_TEST(test_worker_log_reaches_the_client) {
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":\"lvl\",\"method\":"
                   "\"logging/setLevel\",\"params\":{\"level\":\"warning\"}}");
  harness_clear(&h);
  json_object_put(harness_tool(&h, 1, "log", NULL));
  ck_assert_uint_eq(harness_count(&h.cap, "a warning message"), 1);
  ck_assert_uint_eq(harness_count(&h.cap, "an info message"), 0);
  ck_assert_uint_eq(harness_count(&h.cap, "\"logger\":\"good\""), 2);
}
END_TEST

/* Sends tools/call slow as request `id`, long enough to be running
 * when it is cancelled. */
static void call_slow(int id) {
  char line[256];
  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"slow\",\"arguments\":{\"ms\":20000}}}",
           id);
  harness_line(&h, line);
}

/* A client cancels more calls into an isolated plugin than it may have
 * in flight: each one ends (the plugin honours cancellation) without a
 * word to the client, and the client is still served. */
START_TEST(test_cancelled_calls_end) {
  char line[256];
  json_object *msg;

  for (int id = 1; id <= 5; id++) {
    call_slow(id);
    snprintf(line, sizeof(line),
             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
             "\"params\":{\"requestId\":%d,\"reason\":\"unit\"}}",
             id);
    harness_line(&h, line);
    harness_run_until(&h, harness_calls_done, NULL);
  }
  msg = harness_tool(&h, 9, "add", "{\"a\":1,\"b\":2}");
  ck_assert_str_eq(plain(json_path(msg, "result.structuredContent")),
                   "{\"sum\":3}");
  json_object_put(msg);
  /* The cancelled requests got no response, and nothing else was said. */
  for (int id = 1; id <= 5; id++)
    ck_assert_int_eq(harness_response_index(&h, id), -1);
  ck_assert_uint_eq(h.cap.n, 1);
  ck_assert_uint_eq(h.session->requests_in_flight, 0);
}
END_TEST

/* Past its deadline a call of an isolated plugin is answered with the
 * timeout error and cancelled; one that stops when cancelled ends there,
 * and its worker is not killed for it. */
START_TEST(test_deadline_spares_a_call_that_stops) {
  json_object *msg;
  char *log;

  call_slow(1);
  msg = harness_response(&h, 1);
  ck_assert_int_eq(response_error_code(msg), JSONRPC_REQUEST_TIMEOUT);
  json_object_put(msg);
  /* Within the grace period (2 s), not at its end. */
  harness_run_until(&h, harness_calls_done, NULL);
  log = harness_log(&h);
  ck_assert_msg(strstr(log, "killing the worker") == NULL, "log: %s", log);
  free(log);
  /* The same worker serves the next call, which a killed one could not
   * yet (it restarts after a backoff). */
  msg = harness_tool(&h, 2, "add", "{\"a\":1,\"b\":2}");
  ck_assert_str_eq(plain(json_path(msg, "result.structuredContent")),
                   "{\"sum\":3}");
  json_object_put(msg);
  ck_assert_uint_eq(harness_count(&h.cap, "\"id\":1"), 1);
}
END_TEST

Suite *remote_suite(void) {
  Suite *s = suite_create("remote");
  TCase *tc = tcase_create("worker");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 10);
  tcase_add_test(tc, test_forwarded_call_answers_the_same);
  tcase_add_test(tc, test_worker_progress_has_the_clients_token);
  tcase_add_test(tc, test_worker_asks_the_client);
  tcase_add_test(tc, test_worker_log_reaches_the_client);
  suite_add_tcase(s, tc);

  tc = tcase_create("cancel");
  tcase_add_checked_fixture(tc, setup_cancel, teardown);
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, test_cancelled_calls_end);
  suite_add_tcase(s, tc);

  tc = tcase_create("deadline");
  tcase_add_checked_fixture(tc, setup_deadline, teardown);
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, test_deadline_spares_a_call_that_stops);
  suite_add_tcase(s, tc);
  return s;
}
