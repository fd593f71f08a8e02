/* SPDX-License-Identifier: MIT */
/* test_server.c -- one server, many sessions: each session is answered on
 * its own transport, hears registry changes once it is initialized, and
 * hears plugin logs at the level it asked for; closing one leaves the
 * others serving. */
#include "config.h"

#include <string.h>

#include "loader.h"
#include "unit.h"

static harness h;
static memory_transport other_out;
static session *other;

static void setup(void) {
  harness_init(&h, NULL);
  harness_session(&h);
  other = harness_open(&h, &other_out);
}

static void teardown(void) {
  harness_free(&h);
  memory_transport_free(&other_out);
}

static void line_to(session *s, const char *line) {
  session_handle_line(s, line, strlen(line));
}

static void initialize(session *s, memory_transport *out, const char *version) {
  char line[512];
  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
           "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
           "\"clientInfo\":{\"name\":\"unit\",\"version\":\"0\"}}}",
           version);
  line_to(s, line);
  ck_assert_uint_eq(out->n, 1);
  ck_assert_ptr_nonnull(strstr(out->msgs[0], version));
  memory_transport_clear(out);
}

START_TEST(test_each_session_answered_on_its_own) {
  initialize(h.session, &h.cap, "2025-11-25");
  initialize(other, &other_out, "2025-03-26");
  ck_assert_str_eq(h.session->version, "2025-11-25");
  ck_assert_str_eq(other->version, "2025-03-26");

  line_to(h.session, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\"}");
  line_to(other, "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"ping\"}");
  ck_assert_uint_eq(h.cap.n, 1);
  ck_assert_uint_eq(other_out.n, 1);
  ck_assert_str_eq(h.cap.msgs[0], "{\"jsonrpc\":\"2.0\",\"id\":\"a\","
                                  "\"result\":{}}");
  ck_assert_str_eq(other_out.msgs[0], "{\"jsonrpc\":\"2.0\",\"id\":\"b\","
                                      "\"result\":{}}");

  /* Each keeps its own revision's rules: batches only where negotiated. */
  harness_clear(&h);
  memory_transport_clear(&other_out);
  line_to(h.session, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
  line_to(other, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
  ck_assert_uint_eq(h.cap.n, 1);
  ck_assert_ptr_nonnull(strstr(h.cap.msgs[0], "-32600"));
  ck_assert_uint_eq(other_out.n, 1);
  ck_assert_str_eq(other_out.msgs[0],
                   "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}]");
}
END_TEST

START_TEST(test_list_changed_to_initialized_sessions) {
  initialize(h.session, &h.cap, "2025-11-25");
  harness_copy(&h, MCPD_ECHO_SO, "echo.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  harness_turn(&h);
  ck_assert_uint_eq(harness_count(&h.cap, "notifications/tools/list_changed"),
                    1);
  /* Not initialized yet: it hears nothing. */
  ck_assert_uint_eq(other_out.n, 0);

  initialize(other, &other_out, "2025-06-18");
  harness_clear(&h);
  unlink(harness_path(&h, "echo.so"));
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  harness_turn(&h);
  ck_assert_uint_eq(harness_count(&h.cap, "notifications/tools/list_changed"),
                    1);
  ck_assert_uint_eq(
      harness_count(&other_out, "notifications/tools/list_changed"), 1);
}
END_TEST

/* good.so loaded (its announcement flushed), both sessions initialized. */
static void good_and_both_initialized(void) {
  harness_copy(&h, "good.so", "good.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  harness_turn(&h);
  initialize(h.session, &h.cap, "2025-11-25");
  initialize(other, &other_out, "2025-11-25");
}

static int answered(harness *hh, void *arg) {
  (void)hh, (void)arg;
  return harness_count(&h.cap, "\"result\"") == 1;
}

/* A call's log lines belong to the request that made it: only the client
 * that called hears them, at the level it asked for, before the answer. */
START_TEST(test_call_logs_go_to_the_caller) {
  good_and_both_initialized();
  line_to(h.session,
          "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
          "\"logging/setLevel\",\"params\":{\"level\":\"warning\"}}");
  line_to(other, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                 "\"logging/setLevel\",\"params\":{\"level\":\"debug\"}}");
  harness_clear(&h);
  memory_transport_clear(&other_out);

  /* good's "log" tool logs at debug, info, warning and error. */
  line_to(h.session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                     "\"params\":{\"name\":\"log\"}}");
  harness_run_until(&h, answered, NULL);
  ck_assert_uint_eq(harness_count(&h.cap, "notifications/message"), 2);
  ck_assert_uint_eq(harness_count(&h.cap, "\"level\":\"warning\""), 1);
  ck_assert_uint_eq(harness_count(&h.cap, "\"level\":\"error\""), 1);
  ck_assert_ptr_nonnull(strstr(h.cap.msgs[h.cap.n - 1], "\"id\":2"));
  /* The other client, listening at debug, heard none of it. */
  ck_assert_uint_eq(other_out.n, 0);
}
END_TEST

START_TEST(test_closing_one_leaves_the_other) {
  good_and_both_initialized();

  line_to(h.session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                     "\"params\":{\"name\":\"slow\",\"arguments\":"
                     "{\"ms\":50}}}");
  ck_assert_uint_eq(h.srv.exec.in_flight, 1);
  server_close_session(&h.srv, h.session);
  h.session = NULL;
  ck_assert_uint_eq(h.srv.n_sessions, 1);

  line_to(other, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");
  ck_assert_uint_eq(other_out.n, 1);
  ck_assert_str_eq(other_out.msgs[0],
                   "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}");
  harness_run_until(&h, harness_calls_done, NULL);
  /* The closed session's late answer reached nobody. */
  ck_assert_uint_eq(other_out.n, 1);
  ck_assert_uint_eq(h.cap.n, 0);
}
END_TEST

Suite *server_suite(void) {
  Suite *s = suite_create("server");
  TCase *tc = tcase_create("sessions");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_each_session_answered_on_its_own);
  tcase_add_test(tc, test_list_changed_to_initialized_sessions);
  tcase_add_test(tc, test_call_logs_go_to_the_caller);
  tcase_add_test(tc, test_closing_one_leaves_the_other);
  suite_add_tcase(s, tc);
  return s;
}
