/* SPDX-License-Identifier: MIT */
/* test_subscribe.c -- who hears of a changed resource, as clients see it:
 * resources/subscribe and unsubscribe of a legacy session, and the
 * subscriptions/listen streams of the modern era -- what each grants,
 * what each then hears (tagged with its subscription id), and how each
 * ends: cancelled without a word, or answered when its session closes. */
#include "config.h"

#include <string.h>

#include "loader.h"
#include "methods.h"
#include "unit.h"

static harness h;

static void setup(void) {
  harness_init(&h, NULL);
  harness_session(&h);
  harness_copy(&h, MCPD_EVERYTHING_SO, "everything.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  harness_turn(&h);
  harness_clear(&h);
}

static void teardown(void) {
  harness_free(&h);
}

static void line_to(session *s, const char *line) {
  session_handle_line(s, line, strlen(line));
}

/* The last message captured, parsed (the caller puts it). */
static json_object *last(const memory_transport *out) {
  ck_assert_uint_gt(out->n, 0);
  return parse_json(out->msgs[out->n - 1]);
}

START_TEST(test_legacy_subscribe_and_unsubscribe) {
  json_object *msg;

  harness_initialize(&h, "2025-11-25");
  harness_clear(&h);
  line_to(h.session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                     "\"resources/subscribe\",\"params\":{\"uri\":"
                     "\"test://nothing\"}}");
  msg = last(&h.cap);
  ck_assert_int_eq(response_error_code(msg), -32002);
  ck_assert_str_eq(plain(json_path(msg, "error.data")),
                   "{\"uri\":\"test://nothing\"}");
  json_object_put(msg);
  line_to(h.session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
                     "\"resources/subscribe\",\"params\":{\"uri\":\"rel\"}}");
  msg = last(&h.cap);
  ck_assert_int_eq(response_error_code(msg), -32602);
  json_object_put(msg);
  ck_assert(!methods_subscribed(h.session, "test://static-text"));

  /* Subscribing twice is one subscription, answered twice. */
  for (int i = 0; i < 2; i++) {
    harness_clear(&h);
    line_to(h.session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
                       "\"resources/subscribe\",\"params\":{\"uri\":"
                       "\"test://static-text\"}}");
    ck_assert_str_eq(h.cap.msgs[0], "{\"jsonrpc\":\"2.0\",\"id\":3,"
                                    "\"result\":{}}");
  }
  ck_assert(methods_subscribed(h.session, "test://static-text"));
  /* A template's URI can be subscribed to as well. */
  line_to(h.session, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
                     "\"resources/subscribe\",\"params\":{\"uri\":"
                     "\"test://template/1/data\"}}");
  ck_assert(methods_subscribed(h.session, "test://template/1/data"));

  harness_clear(&h);
  line_to(h.session, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
                     "\"resources/unsubscribe\",\"params\":{\"uri\":"
                     "\"test://static-text\"}}");
  ck_assert_str_eq(h.cap.msgs[0], "{\"jsonrpc\":\"2.0\",\"id\":5,"
                                  "\"result\":{}}");
  ck_assert(!methods_subscribed(h.session, "test://static-text"));
  ck_assert(methods_subscribed(h.session, "test://template/1/data"));
  /* Unsubscribing from nothing is not an error. */
  line_to(h.session, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
                     "\"resources/unsubscribe\",\"params\":{\"uri\":"
                     "\"test://other\"}}");
  ck_assert_uint_eq(h.cap.n, 2);
  ck_assert_str_eq(h.cap.msgs[1], "{\"jsonrpc\":\"2.0\",\"id\":6,"
                                  "\"result\":{}}");
}
END_TEST

#define ENVELOPE                                                               \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","     \
  "\"io.modelcontextprotocol/clientCapabilities\":{}}"
#define SUB_ID "\"io.modelcontextprotocol/subscriptionId\""

/* Opens a listen with id `id` asking for `notifications` (JSON) on a
 * modern session writing to `out`. */
static void listen_on(session *s, int id, const char *notifications) {
  char line[1024];
  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"subscriptions/"
           "listen\",\"params\":{\"notifications\":%s," ENVELOPE "}}",
           id, notifications);
  line_to(s, line);
}

START_TEST(test_listen_grants_and_hears) {
  h.session->modern_allowed = 1;
  listen_on(h.session, 7,
            "{\"toolsListChanged\":true,\"promptsListChanged\":false,"
            "\"resourceSubscriptions\":[\"test://static-text\","
            "\"test://nothing\",\"not a uri\"]}");
  /* The first message: what was granted, tagged; no response yet. */
  ck_assert_uint_eq(h.cap.n, 1);
  ck_assert_str_eq(h.cap.msgs[0],
                   "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                   "subscriptions/acknowledged\",\"params\":{\"notifications\":"
                   "{\"toolsListChanged\":true,\"resourceSubscriptions\":["
                   "\"test://static-text\"]},\"_meta\":{" SUB_ID ":7}}}");
  harness_clear(&h);

  methods_resource_updated(&h.srv.methods, "test://static-text");
  methods_resource_updated(&h.srv.methods, "test://nothing");
  methods_list_changed(&h.srv.methods, REG_TOOL);
  methods_list_changed(&h.srv.methods, REG_PROMPT);
  ck_assert_uint_eq(h.cap.n, 2);
  ck_assert_str_eq(h.cap.msgs[0],
                   "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/"
                   "updated\",\"params\":{\"uri\":\"test://static-text\","
                   "\"_meta\":{" SUB_ID ":7}}}");
  ck_assert_str_eq(h.cap.msgs[1],
                   "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/"
                   "list_changed\",\"params\":{\"_meta\":{" SUB_ID ":7}}}");

  /* Cancelled: it ends without a response and hears nothing more. */
  harness_clear(&h);
  line_to(h.session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                     "cancelled\",\"params\":{\"requestId\":7}}");
  methods_resource_updated(&h.srv.methods, "test://static-text");
  methods_list_changed(&h.srv.methods, REG_TOOL);
  ck_assert_uint_eq(h.cap.n, 0);
  {
    json_object *id = json_object_new_int(7);
    ck_assert_ptr_null(session_find_request(h.session, id));
    json_object_put(id);
  }
}
END_TEST

START_TEST(test_listen_params_checked) {
  json_object *msg;
  static const char *const bad[] = {
      "[]",
      "{\"toolsListChanged\":1}",
      "{\"resourceSubscriptions\":\"test://static-text\"}",
      "{\"resourceSubscriptions\":[1]}",
  };
  h.session->modern_allowed = 1;
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    harness_clear(&h);
    listen_on(h.session, 1, bad[i]);
    ck_assert_uint_eq(h.cap.n, 1);
    msg = last(&h.cap);
    ck_assert_msg(response_error_code(msg) == -32602, "%s: %s", bad[i],
                  h.cap.msgs[0]);
    json_object_put(msg);
  }
}
END_TEST

START_TEST(test_no_listen_for_legacy) {
  json_object *msg;
  harness_initialize(&h, "2025-11-25");
  harness_clear(&h);
  line_to(h.session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
                     "\"subscriptions/listen\",\"params\":{}}");
  msg = last(&h.cap);
  ck_assert_int_eq(response_error_code(msg), -32601);
  json_object_put(msg);
}
END_TEST

START_TEST(test_listen_answered_when_session_closes) {
  memory_transport out;
  session *s = harness_open(&h, &out);
  json_object *msg;

  s->modern_allowed = 1;
  listen_on(s, 9, "{\"resourceSubscriptions\":[\"test://static-text\"]}");
  listen_on(s, 10, "{\"promptsListChanged\":true}");
  ck_assert_uint_eq(out.n, 2);
  memory_transport_clear(&out);
  /* Each listen hears only what it asked for. */
  methods_list_changed(&h.srv.methods, REG_PROMPT);
  ck_assert_uint_eq(out.n, 1);
  ck_assert_ptr_nonnull(strstr(out.msgs[0], SUB_ID ":10"));
  memory_transport_clear(&out);

  server_close_session(&h.srv, s);
  ck_assert_uint_eq(out.n, 2);
  for (size_t i = 0; i < 2; i++) {
    msg = parse_json(out.msgs[i]);
    ck_assert_str_eq(plain(json_path(msg, "result.resultType")),
                     "\"complete\"");
    ck_assert_ptr_nonnull(strstr(out.msgs[i], SUB_ID ":"));
    json_object_put(msg);
  }
  /* Nothing is left to hear it. */
  memory_transport_clear(&out);
  methods_resource_updated(&h.srv.methods, "test://static-text");
  ck_assert_uint_eq(out.n, 0);
  memory_transport_free(&out);
}
END_TEST

START_TEST(test_subscribers_of_both_eras_counted_together) {
  memory_transport out;
  session *modern = harness_open(&h, &out);
  json_object *msg;

  harness_initialize(&h, "2025-11-25");
  modern->modern_allowed = 1;
  line_to(h.session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                     "\"resources/subscribe\",\"params\":{\"uri\":"
                     "\"test://static-text\"}}");
  listen_on(modern, 2, "{\"resourceSubscriptions\":[\"test://static-text\"]}");
  /* The legacy session leaves; the listen still hears the resource. */
  line_to(h.session, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
                     "\"resources/unsubscribe\",\"params\":{\"uri\":"
                     "\"test://static-text\"}}");
  memory_transport_clear(&out);
  methods_resource_updated(&h.srv.methods, "test://static-text");
  ck_assert_uint_eq(out.n, 1);
  msg = last(&out);
  ck_assert_str_eq(plain(json_path(msg, "params.uri")),
                   "\"test://static-text\"");
  json_object_put(msg);
  server_close_session(&h.srv, modern);
  memory_transport_free(&out);
}
END_TEST

Suite *subscribe_suite(void) {
  Suite *s = suite_create("subscribe");
  TCase *tc = tcase_create("legacy");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_legacy_subscribe_and_unsubscribe);
  suite_add_tcase(s, tc);
  tc = tcase_create("listen");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_listen_grants_and_hears);
  tcase_add_test(tc, test_listen_params_checked);
  tcase_add_test(tc, test_no_listen_for_legacy);
  tcase_add_test(tc, test_listen_answered_when_session_closes);
  tcase_add_test(tc, test_subscribers_of_both_eras_counted_together);
  suite_add_tcase(s, tc);
  return s;
}
