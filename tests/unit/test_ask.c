/* SPDX-License-Identifier: MIT */
/* test_ask.c -- what a call says to and asks of its client (ask.c), as
 * the client and the plugin see it: a request reaches the client and its
 * answer the plugin; one the client leaves unanswered times out, and the
 * client is told; one still open when its call is cancelled is given up,
 * and the client is told; a client that did not declare a capability is
 * never asked; progress goes out before the answer, increasing only.  A
 * 2026-07-28 client is never asked mid-call: the call answers
 * input_required with the question and a requestState, and the retry
 * with the answer completes; a capability the request did not declare is
 * named in -32021. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "call.h"
#include "era.h"
#include "jsonrpc.h"
#include "loader.h"
#include "unit.h"

static harness h;

#define SAMPLING_ARGS                                                          \
  "{\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[],"        \
  "\"maxTokens\":1}}"

/* asker.so and good.so loaded; the client declares sampling when
 * `sampling`. */
static void start(const char *const *extra, int sampling) {
  char line[512];

  harness_init(&h, extra);
  harness_session(&h);
  harness_copy(&h, "asker.so", "asker.so");
  harness_copy(&h, "good.so", "good.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 2);
  harness_turn(&h);
  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\","
           "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":"
           "%s,\"clientInfo\":{\"name\":\"unit\",\"version\":\"0\"}}}",
           sampling ? "{\"sampling\":{}}" : "{}");
  harness_line(&h, line);
  harness_line(&h, "{\"jsonrpc\":\"2.0\","
                   "\"method\":\"notifications/initialized\"}");
  harness_clear(&h);
}

static void setup(void) {
  static const char *const extra[] = {"--request-timeout", "100", NULL};
  start(extra, 1);
}

static void setup_no_sampling(void) {
  start(NULL, 0);
}

static void teardown(void) {
  harness_free(&h);
}

/* Index of the first captured message with `method`, or -1. */
static long method_index(const char *method) {
  for (size_t i = 0; i < h.cap.n; i++) {
    json_object *msg = harness_msg(&h, i), *v;
    int match = json_object_object_get_ex(msg, "method", &v) &&
                strcmp(json_object_get_string(v), method) == 0;
    json_object_put(msg);
    if (match)
      return (long)i;
  }
  return -1;
}

static int have_method(harness *hh, void *arg) {
  (void)hh;
  return method_index(arg) >= 0;
}

/* Waits for the request mcpd sends the client and copies out its id. */
static void client_request_id(char *id, size_t size) {
  json_object *msg;
  harness_run_until(&h, have_method, (void *)"sampling/createMessage");
  msg = harness_msg(&h, (size_t)method_index("sampling/createMessage"));
  snprintf(id, size, "%s", json_object_get_string(json_path(msg, "id")));
  json_object_put(msg);
}

START_TEST(test_request_answered) {
  char id[64], line[256];
  json_object *msg;

  harness_send_tool(&h, 1, "ask", SAMPLING_ARGS);
  client_request_id(id, sizeof(id));
  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"model\":\"m\"}}",
           id);
  harness_line(&h, line);
  msg = harness_response(&h, 1);
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.content.0.text")),
      "{\"model\":\"m\"}");
  json_object_put(msg);
}
END_TEST

/* Unanswered for --request-timeout: the client is told it is cancelled,
 * the plugin gets the timeout. */
START_TEST(test_request_times_out) {
  char id[64];
  json_object *msg, *cancel;

  harness_send_tool(&h, 1, "ask", SAMPLING_ARGS);
  client_request_id(id, sizeof(id));
  msg = harness_response(&h, 1);
  ck_assert(json_object_get_boolean(json_path(msg, "result.isError")));
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.content.0.text")),
      "no answer from the client within 100 ms (-32001)");
  json_object_put(msg);
  ck_assert_int_ge(method_index("notifications/cancelled"), 0);
  cancel = harness_msg(&h, (size_t)method_index("notifications/cancelled"));
  ck_assert_str_eq(
      json_object_get_string(json_path(cancel, "params.requestId")), id);
  json_object_put(cancel);
}
END_TEST

/* The call is cancelled while its request is open: the request is given
 * up at once, and the client hears why. */
START_TEST(test_request_given_up_with_its_call) {
  char id[64];
  json_object *cancel;

  harness_send_tool(&h, 1, "ask_async", SAMPLING_ARGS);
  client_request_id(id, sizeof(id));
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                   "cancelled\",\"params\":{\"requestId\":1}}");
  harness_run_until(&h, have_method, (void *)"notifications/cancelled");
  cancel = harness_msg(&h, (size_t)method_index("notifications/cancelled"));
  ck_assert_str_eq(
      json_object_get_string(json_path(cancel, "params.requestId")), id);
  ck_assert_str_eq(json_object_get_string(json_path(cancel, "params.reason")),
                   "the call was cancelled");
  json_object_put(cancel);
  harness_run_until(&h, harness_calls_done, NULL);
  ck_assert_int_lt(harness_response_index(&h, 1), 0);
}
END_TEST

/* A client that did not declare sampling is never asked for it. */
START_TEST(test_undeclared_capability_refused) {
  json_object *msg;

  harness_send_tool(&h, 1, "ask", SAMPLING_ARGS);
  msg = harness_response(&h, 1);
  ck_assert(json_object_get_boolean(json_path(msg, "result.isError")));
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.content.0.text")),
      "client_request: the client did not declare the sampling capability");
  json_object_put(msg);
  ck_assert_int_lt(method_index("sampling/createMessage"), 0);
}
END_TEST

/* Progress with the request's token goes out before the answer, and only
 * increasing values go out. */
START_TEST(test_progress_before_answer) {
  long answer;
  double last = -1;

  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"progress\",\"arguments\":"
                   "{\"steps\":3},\"_meta\":{\"progressToken\":\"tok\"}}}");
  json_object_put(harness_response(&h, 1));
  answer = harness_response_index(&h, 1);
  ck_assert_uint_eq(harness_count(&h.cap, "notifications/progress"), 3);
  for (long i = 0; i < answer; i++) {
    json_object *msg = harness_msg(&h, (size_t)i);
    ck_assert_str_eq(json_object_get_string(json_path(msg, "method")),
                     "notifications/progress");
    ck_assert_str_eq(
        json_object_get_string(json_path(msg, "params.progressToken")), "tok");
    ck_assert(json_object_get_double(json_path(msg, "params.progress")) > last);
    last = json_object_get_double(json_path(msg, "params.progress"));
    json_object_put(msg);
  }
  ck_assert_int_eq(answer, 3);
}
END_TEST

static void setup_modern(void) {
  harness_init(&h, NULL);
  harness_session(&h);
  harness_copy(&h, "asker.so", "asker.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  harness_turn(&h);
  /* The stdio rule: this connection may speak 2026-07-28. */
  h.session->modern_allowed = 1;
  harness_clear(&h);
}

/* Sends a 2026-07-28 tools/call of "ask" for sampling as request `id`, the
 * client declaring `caps`, with `retry` (",\"inputResponses\":...", or
 * ""), and returns the response. */
static json_object *modern_ask(int id, const char *caps, const char *retry) {
  char line[4096];
  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"ask\",\"arguments\":" SAMPLING_ARGS
           ",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
           "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":"
           "%s}%s}}",
           id, caps, retry);
  harness_line(&h, line);
  return harness_response(&h, id);
}

START_TEST(test_modern_input_required_then_retry) {
  json_object *msg, *inputs;
  const char *key = NULL, *state;
  char retry[3072];

  msg = modern_ask(1, "{\"sampling\":{}}", "");
  ck_assert_str_eq(json_object_get_string(json_path(msg, "result.resultType")),
                   "input_required");
  inputs = json_path(msg, "result.inputRequests");
  ck_assert_int_eq(json_object_object_length(inputs), 1);
  json_object_object_foreach(inputs, k, v) {
    key = k;
    ck_assert_str_eq(json_object_get_string(json_path(v, "method")),
                     "sampling/createMessage");
  }
  state = json_object_get_string(json_path(msg, "result.requestState"));
  ck_assert_ptr_nonnull(state);
  /* Nothing was sent to the client: it is asked in the result. */
  ck_assert_int_lt(method_index("sampling/createMessage"), 0);
  snprintf(retry, sizeof(retry),
           ",\"inputResponses\":{\"%s\":{\"model\":\"r\"}},"
           "\"requestState\":\"%s\"",
           key, state);
  json_object_put(msg);
  msg = modern_ask(2, "{\"sampling\":{}}", retry);
  ck_assert_str_eq(json_object_get_string(json_path(msg, "result.resultType")),
                   "complete");
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.content.0.text")),
      "{\"model\":\"r\"}");
  json_object_put(msg);
}
END_TEST

START_TEST(test_modern_missing_capability_named) {
  json_object *msg = modern_ask(1, "{}", "");
  ck_assert_int_eq(response_error_code(msg), ERA_ERR_MISSING_CAPABILITY);
  ck_assert_str_eq(plain(json_path(msg, "error.data.requiredCapabilities")),
                   "{\"sampling\":{}}");
  json_object_put(msg);
}
END_TEST

Suite *ask_suite(void) {
  Suite *s = suite_create("ask");
  TCase *tc = tcase_create("client");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_request_answered);
  tcase_add_test(tc, test_request_times_out);
  tcase_add_test(tc, test_request_given_up_with_its_call);
  tcase_add_test(tc, test_progress_before_answer);
  suite_add_tcase(s, tc);
  tc = tcase_create("capabilities");
  tcase_add_checked_fixture(tc, setup_no_sampling, teardown);
  tcase_add_test(tc, test_undeclared_capability_refused);
  suite_add_tcase(s, tc);
  tc = tcase_create("input_required");
  tcase_add_checked_fixture(tc, setup_modern, teardown);
  tcase_add_test(tc, test_modern_input_required_then_retry);
  tcase_add_test(tc, test_modern_missing_capability_named);
  suite_add_tcase(s, tc);
  return s;
}
