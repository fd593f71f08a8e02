/* SPDX-License-Identifier: MIT */
/* test_call.c -- the call core (call_core.c) as a client and a plugin see
 * it: every execution mode ends in exactly one answer, a callback gets the
 * request it was called for, a cancelled call answers nothing and leaves
 * no call behind, and a call abandoned at exit is answered at once. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "call.h"
#include "jsonrpc.h"
#include "loader.h"
#include "unit.h"

static harness h;

static void setup(void) {
  harness_start_good(&h);
}

static void teardown(void) {
  harness_free(&h);
}

/* How many responses (result or error) carry integer id `id`. */
static size_t responses_to(int id) {
  size_t n = 0;
  for (size_t i = 0; i < h.cap.n; i++) {
    json_object *msg = harness_msg(&h, i), *v;
    if (json_object_object_get_ex(msg, "id", &v) &&
        json_object_get_int(v) == id &&
        (json_object_object_get_ex(msg, "result", NULL) ||
         json_object_object_get_ex(msg, "error", NULL)))
      n++;
    json_object_put(msg);
  }
  return n;
}

/* What the test tool below saw of its request. */
static struct {
  char name[64];
  char arguments[256];
  char meta[256];
  int host_is_table;
  int self_is_owner;
} seen;

static int record_request(mcpd_call *call, const mcpd_request *req) {
  snprintf(seen.name, sizeof(seen.name), "%s", req->name);
  snprintf(seen.arguments, sizeof(seen.arguments), "%s",
           req->arguments ? plain(req->arguments) : "null");
  snprintf(seen.meta, sizeof(seen.meta), "%s",
           req->meta ? plain(req->meta) : "null");
  seen.host_is_table = req->host == &call_host_api;
  seen.self_is_owner = req->self == harness_good_self(&h);
  return req->host->result_text(call, "recorded");
}

static void add_test_tool(const char *name, mcpd_exec exec,
                          int (*cb)(mcpd_call *, const mcpd_request *)) {
  mcpd_tool def = {.name = name, .call = cb, .exec = exec};
  ck_assert_int_eq(call_host_api.add_tool(harness_good_self(&h), &def),
                   MCPD_OK);
}

/* INLINE, POOL and ASYNC calls each end in one answer, and no call is
 * left in flight. */
START_TEST(test_each_mode_answers_once) {
  json_object *msg = harness_tool(&h, 1, "add", "{\"a\":1,\"b\":2}");
  ck_assert_str_eq(json_object_get_string(json_path(msg, "result.content.0."
                                                         "text")),
                   "3");
  json_object_put(msg);
  msg = harness_tool(&h, 2, "slow", "{\"ms\":1}");
  ck_assert_ptr_nonnull(json_path(msg, "result.content"));
  json_object_put(msg);
  msg = harness_tool(&h, 3, "async_echo", "{\"text\":\"hi\"}");
  ck_assert_str_eq(json_object_get_string(json_path(msg, "result.content.0."
                                                         "text")),
                   "hi");
  json_object_put(msg);
  harness_run_until(&h, harness_calls_done, NULL);
  ck_assert_uint_eq(responses_to(1), 1);
  ck_assert_uint_eq(responses_to(2), 1);
  ck_assert_uint_eq(responses_to(3), 1);
  ck_assert_uint_eq(h.srv.exec.in_flight, 0);
}
END_TEST

/* The callback gets the name, arguments and _meta of its request, the
 * host table and its own plugin's self, on the loop and on the pool. */
START_TEST(test_callback_sees_its_request) {
  const char *modes[] = {"rec_inline", "rec_pool"};
  add_test_tool("rec_inline", MCPD_EXEC_INLINE, record_request);
  add_test_tool("rec_pool", MCPD_EXEC_POOL, record_request);
  for (int i = 0; i < 2; i++) {
    char line[512];
    json_object *msg;
    memset(&seen, 0, sizeof(seen));
    snprintf(line, sizeof(line),
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"%s\",\"arguments\":{\"x\":[1,2]},"
             "\"_meta\":{\"progressToken\":\"t\",\"k\":\"v\"}}}",
             10 + i, modes[i]);
    harness_line(&h, line);
    msg = harness_response(&h, 10 + i);
    ck_assert_str_eq(
        json_object_get_string(json_path(msg, "result.content.0.text")),
        "recorded");
    json_object_put(msg);
    ck_assert_str_eq(seen.name, modes[i]);
    ck_assert_str_eq(seen.arguments, "{\"x\":[1,2]}");
    ck_assert_str_eq(seen.meta, "{\"progressToken\":\"t\",\"k\":\"v\"}");
    ck_assert(seen.host_is_table);
    ck_assert(seen.self_is_owner);
  }
}
END_TEST

/* A call the client cancelled answers nothing (the legacy rule), its
 * on_cancel callback ends it, and the exec is left with no call. */
START_TEST(test_cancelled_call_answers_nothing) {
  json_object *msg;
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"complete_on_cancel\"}}");
  ck_assert_uint_eq(h.srv.exec.in_flight, 1);
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                   "cancelled\",\"params\":{\"requestId\":1}}");
  harness_run_until(&h, harness_calls_done, NULL);
  /* A later call is still answered: nothing was left half done. */
  msg = harness_tool(&h, 2, "add", "{\"a\":2,\"b\":2}");
  json_object_put(msg);
  ck_assert_uint_eq(responses_to(1), 0);
  ck_assert_uint_eq(responses_to(2), 1);
  ck_assert_uint_eq(h.srv.exec.in_flight, 0);
}
END_TEST

/* At exit a call that will not end is answered at once with the error
 * that names its plugin; its late result is dropped. */
START_TEST(test_abandoned_call_is_answered) {
  json_object *msg;
  request *r;

  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"stuck\",\"arguments\":"
                   "{\"ms\":200}}}");
  r = h.session->in_flight;
  ck_assert_ptr_nonnull(r);
  ck_assert_ptr_nonnull(r->call);
  call_abandon(r->call);
  msg = harness_response(&h, 1);
  ck_assert_int_eq(response_error_code(msg), JSONRPC_CONNECTION_CLOSED);
  ck_assert_str_eq(json_object_get_string(json_path(msg, "error.data.plugin")),
                   "good");
  ck_assert_ptr_nonnull(
      strstr(json_object_get_string(json_path(msg, "error.message")),
             "tool \"stuck\" was still running when mcpd exited"));
  json_object_put(msg);
  harness_run_until(&h, harness_calls_done, NULL);
  ck_assert_uint_eq(responses_to(1), 1);
}
END_TEST

Suite *call_suite(void) {
  Suite *s = suite_create("call");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_each_mode_answers_once);
  tcase_add_test(tc, test_callback_sees_its_request);
  tcase_add_test(tc, test_cancelled_call_answers_nothing);
  tcase_add_test(tc, test_abandoned_call_is_answered);
  suite_add_tcase(s, tc);
  return s;
}
