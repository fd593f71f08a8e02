/* SPDX-License-Identifier: MIT */
/* test_schedule.c -- where and until when calls run (schedule.c), as a
 * client sees it: with --threads 2 one plugin gets one thread at most, so
 * its stuck call delays only its own next call, never another plugin's;
 * a deadline answers its request once, with the timeout error, and the
 * late result is dropped; a deadline does not outlive its call; a call
 * still waiting for a thread is withdrawn when cancelled. */
#include "config.h"

#include <string.h>

#include "call.h"
#include "jsonrpc.h"
#include "loader.h"
#include "unit.h"

static harness h;

static void start(const char *const *extra) {
  harness_init(&h, extra);
  harness_session(&h);
  harness_copy(&h, "good.so", "good.so");
  harness_copy(&h, "asker.so", "asker.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 2);
  harness_turn(&h);
  harness_initialize(&h, "2025-11-25");
}

static void setup_two_threads(void) {
  static const char *const extra[] = {"--threads", "2", NULL};
  start(extra);
}

static void setup_deadline(void) {
  static const char *const extra[] = {"--deadline", "60", NULL};
  start(extra);
}

static void teardown(void) {
  harness_free(&h);
}

static int in_flight_is(harness *hh, void *arg) {
  return hh->srv.exec.in_flight == *(unsigned *)arg;
}

/* good's stuck call holds good's one thread: good's next call waits for
 * it, while asker's call runs at once on the other thread. */
START_TEST(test_fair_share_across_plugins) {
  json_object *msg;

  ck_assert_uint_eq(h.srv.exec.pool_cap, 1);
  harness_send_tool(&h, 1, "stuck", "{\"ms\":300}");
  harness_send_tool(&h, 2, "slow", "{\"ms\":1}");
  harness_send_tool(&h, 3, "meta_pool", "{}");
  msg = harness_response(&h, 3);
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.content.0.text")), "null");
  json_object_put(msg);
  /* asker's call was answered while good's two were still waiting. */
  ck_assert_int_lt(harness_response_index(&h, 1), 0);
  ck_assert_int_lt(harness_response_index(&h, 2), 0);
  harness_run_until(&h, harness_calls_done, NULL);
  /* good's calls ran in turn: the second after the first. */
  ck_assert_int_lt(harness_response_index(&h, 1),
                   harness_response_index(&h, 2));
}
END_TEST

/* A cancelled call that never got a thread ends at once, without waiting
 * for the call ahead of it, and without an answer. */
START_TEST(test_waiting_call_withdrawn_on_cancel) {
  unsigned one = 1;

  harness_send_tool(&h, 1, "stuck", "{\"ms\":300}");
  harness_send_tool(&h, 2, "slow", "{\"ms\":1}");
  ck_assert_uint_eq(h.srv.exec.in_flight, 2);
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                   "cancelled\",\"params\":{\"requestId\":2}}");
  harness_run_until(&h, in_flight_is, &one);
  ck_assert_int_lt(harness_response_index(&h, 1), 0);
  harness_run_until(&h, harness_calls_done, NULL);
  ck_assert_int_ge(harness_response_index(&h, 1), 0);
  ck_assert_int_lt(harness_response_index(&h, 2), 0);
}
END_TEST

/* Past its deadline a call's client gets -32001 naming the plugin and the
 * deadline, once: what the tool returns afterwards is dropped. */
START_TEST(test_deadline_answers_once) {
  json_object *msg;

  harness_send_tool(&h, 1, "stuck", "{\"ms\":250}");
  msg = harness_response(&h, 1);
  ck_assert_int_eq(response_error_code(msg), JSONRPC_REQUEST_TIMEOUT);
  ck_assert_str_eq(json_object_get_string(json_path(msg, "error.message")),
                   "plugin \"good\": tool \"stuck\" did not finish within "
                   "its deadline of 60 ms");
  ck_assert_str_eq(json_object_get_string(json_path(msg, "error.data.plugin")),
                   "good");
  ck_assert_int_eq(json_object_get_int(json_path(msg, "error.data.deadlineMs")),
                   60);
  json_object_put(msg);
  ck_assert_int_eq(h.srv.exec.in_flight, 1); /* the tool runs on */
  harness_run_until(&h, harness_calls_done, NULL);
  ck_assert_uint_eq(harness_count(&h.cap, "\"id\":1"), 1);
  ck_assert_uint_eq(harness_count(&h.cap, "unstuck"), 0);
}
END_TEST

static int timer_fired;

static void fired(uv_timer_t *t) {
  (void)t;
  timer_fired = 1;
}

static int have_fired(harness *hh, void *arg) {
  (void)hh, (void)arg;
  return timer_fired;
}

/* A call that finished in time takes its deadline with it: nothing is
 * sent when the deadline would have passed. */
START_TEST(test_deadline_ends_with_its_call) {
  uv_timer_t t;
  json_object *msg;
  size_t n;

  msg = harness_tool(&h, 1, "slow", "{\"ms\":1}");
  ck_assert_int_eq(response_error_code(msg), 0);
  json_object_put(msg);
  ck_assert_ptr_null(h.srv.exec.deadlines);
  n = h.cap.n;
  timer_fired = 0;
  uv_timer_init(&h.loop, &t);
  uv_timer_start(&t, fired, 150, 0);
  harness_run_until(&h, have_fired, NULL);
  uv_close((uv_handle_t *)&t, NULL);
  harness_turn(&h);
  ck_assert_uint_eq(h.cap.n, n);
}
END_TEST

Suite *schedule_suite(void) {
  Suite *s = suite_create("schedule");
  TCase *tc = tcase_create("pool");
  tcase_add_checked_fixture(tc, setup_two_threads, teardown);
  tcase_add_test(tc, test_fair_share_across_plugins);
  tcase_add_test(tc, test_waiting_call_withdrawn_on_cancel);
  suite_add_tcase(s, tc);
  tc = tcase_create("deadlines");
  tcase_add_checked_fixture(tc, setup_deadline, teardown);
  tcase_add_test(tc, test_deadline_answers_once);
  tcase_add_test(tc, test_deadline_ends_with_its_call);
  suite_add_tcase(s, tc);
  return s;
}
