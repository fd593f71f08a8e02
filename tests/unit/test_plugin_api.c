/* SPDX-License-Identifier: MIT */
/* test_plugin_api.c -- what a plugin does for itself through the host
 * table (plugin_api.c), as the plugin and the clients see it: run-time
 * tools come and go at once on the loop, and a bad one or an unknown key
 * is refused with last_error(); a line logged outside any call reaches
 * every client that asked for its level, one logged by a call only that
 * call's client (even once cancelled), and no more than 200 a second; reports
 * that break the rules are refused. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "call.h"
#include "jsonrpc.h"
#include "loader.h"
#include "unit.h"

static harness h;
/* A second client's messages, when a test opened one. */
static memory_transport other;
static int other_open;

static void setup(void) {
  harness_start_good(&h);
}

static void teardown(void) {
  harness_free(&h);
  if (other_open)
    memory_transport_free(&other);
  other_open = 0;
}

static int answer_ok(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_text(call, "ok");
}

static char roots_error[256];

static void roots_cb(void *arg) {
  (void)arg;
}

/* A POOL callback: off the loop. */
static int roots_off_loop(mcpd_call *call, const mcpd_request *req) {
  int rc = req->host->on_roots_changed(req->self, roots_cb, NULL);
  snprintf(roots_error, sizeof(roots_error), "%d %s", rc,
           req->host->last_error());
  return req->host->result_text(call, "ok");
}

START_TEST(test_tool_added_and_removed_on_the_loop) {
  mcpd_tool def = {.name = "rt", .call = answer_ok, .exec = MCPD_EXEC_INLINE};
  json_object *msg;

  ck_assert_int_eq(call_host_api.add_tool(harness_good_self(&h), &def),
                   MCPD_OK);
  ck_assert_ptr_nonnull(registry_find(&h.srv.registry, REG_TOOL, "rt"));
  msg = harness_tool(&h, 1, "rt", NULL);
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.content.0.text")), "ok");
  json_object_put(msg);
  ck_assert_int_eq(call_host_api.remove_tool(harness_good_self(&h), "rt"),
                   MCPD_OK);
  ck_assert_ptr_null(registry_find(&h.srv.registry, REG_TOOL, "rt"));
  ck_assert_int_eq(call_host_api.remove_tool(harness_good_self(&h), "rt"),
                   MCPD_ERROR);
  ck_assert_str_eq(call_host_api.last_error(),
                   "plugin \"good\" offers no tool \"rt\"");
}
END_TEST

START_TEST(test_bad_reports_refused) {
  mcpd_tool def = {
      .name = "has space", .call = answer_ok, .exec = MCPD_EXEC_INLINE};
  char *log;

  ck_assert_int_eq(call_host_api.add_tool(harness_good_self(&h), &def),
                   MCPD_ERROR);
  log = harness_log(&h);
  ck_assert_ptr_nonnull(strstr(log, "plugin \"good\": add_tool refused"));
  free(log);
  ck_assert_int_eq(
      call_host_api.resource_updated(harness_good_self(&h), "relative"),
      MCPD_ERROR);
  ck_assert_str_eq(call_host_api.last_error(),
                   "resource_updated: self must not be NULL and uri must be "
                   "an absolute URI");
  ck_assert_int_eq(call_host_api.remove_tool(NULL, "x"), MCPD_ERROR);
  ck_assert_str_eq(call_host_api.last_error(),
                   "remove: self and the key must not be NULL");
}
END_TEST

START_TEST(test_roots_callback_only_on_the_loop) {
  mcpd_tool def = {
      .name = "roots_pool", .call = roots_off_loop, .exec = MCPD_EXEC_POOL};
  ck_assert_int_eq(call_host_api.add_tool(harness_good_self(&h), &def),
                   MCPD_OK);
  json_object_put(harness_tool(&h, 1, "roots_pool", NULL));
  ck_assert_str_eq(roots_error, "-1 on_roots_changed: call it on the loop "
                                "thread (init(), INLINE callbacks)");
}
END_TEST

static void set_level(session *s, const char *level) {
  char line[256];
  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"id\":\"lvl\",\"method\":"
           "\"logging/setLevel\",\"params\":{\"level\":\"%s\"}}",
           level);
  session_handle_line(s, line, strlen(line));
}

/* A line of the plugin's own goes to every client at its level; a call's
 * line only to that call's client. */
START_TEST(test_log_lines_routed) {
  session *b = harness_open(&h, &other);
  static const char init[] =
      "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\","
      "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
      "\"clientInfo\":{\"name\":\"b\",\"version\":\"0\"}}}";

  other_open = 1;
  session_handle_line(b, init, strlen(init));
  set_level(h.session, "warning");
  set_level(b, "warning");
  harness_clear(&h);
  call_host_api.log(harness_good_self(&h), MCPD_LOG_WARNING, "for %s",
                    "everyone");
  call_host_api.log(harness_good_self(&h), MCPD_LOG_INFO, "for %s", "nobody");
  harness_turn(&h);
  ck_assert_uint_eq(harness_count(&h.cap, "for everyone"), 1);
  ck_assert_uint_eq(harness_count(&other, "for everyone"), 1);
  ck_assert_uint_eq(harness_count(&h.cap, "for nobody"), 0);
  json_object_put(harness_tool(&h, 1, "log", NULL));
  ck_assert_uint_eq(harness_count(&h.cap, "a warning message"), 1);
  ck_assert_uint_eq(harness_count(&other, "a warning message"), 0);
}
END_TEST

/* A POOL callback that waits to be cancelled (5 s at most), then logs. */
static int log_after_cancel(mcpd_call *call, const mcpd_request *req) {
  struct timespec ms = {0, 1000000};

  for (int i = 0; i < 5000 && !req->host->cancelled(call); i++)
    nanosleep(&ms, NULL);
  req->host->log(req->self, MCPD_LOG_WARNING, "logged after the cancel");
  return req->host->result_text(call, "done");
}

static int call_started(harness *hh, void *arg) {
  (void)arg;
  return hh->srv.exec.in_flight == 1;
}

/* A line a call logs after its client cancelled it still reaches that
 * client, which asked for the level (as an unrelated message: the request
 * is over for it), and still no other client. */
START_TEST(test_cancelled_call_logs_to_its_session) {
  mcpd_tool def = {.name = "log_after_cancel",
                   .call = log_after_cancel,
                   .exec = MCPD_EXEC_POOL};
  session *b = harness_open(&h, &other);
  static const char init[] =
      "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\","
      "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
      "\"clientInfo\":{\"name\":\"b\",\"version\":\"0\"}}}";
  static const char call[] =
      "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\","
      "\"params\":{\"name\":\"log_after_cancel\"}}";
  static const char cancel[] =
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":{\"requestId\":9}}";

  other_open = 1;
  ck_assert_int_eq(call_host_api.add_tool(harness_good_self(&h), &def),
                   MCPD_OK);
  session_handle_line(b, init, strlen(init));
  set_level(h.session, "warning");
  set_level(b, "warning");
  harness_turn(&h); /* the new tool's list_changed */
  harness_clear(&h);
  memory_transport_clear(&other);
  session_handle_line(h.session, call, strlen(call));
  harness_run_until(&h, call_started, NULL);
  session_handle_line(h.session, cancel, strlen(cancel));
  harness_run_until(&h, harness_calls_done, NULL);
  harness_turn(&h);
  ck_assert_uint_eq(h.cap.n, 1);
  ck_assert_uint_eq(harness_count(&h.cap, "notifications/message"), 1);
  ck_assert_uint_eq(harness_count(&h.cap, "logged after the cancel"), 1);
  /* No answer to the cancelled request, and nothing for the other. */
  ck_assert_uint_eq(harness_count(&h.cap, "\"id\":9"), 0);
  ck_assert_uint_eq(other.n, 0);
}
END_TEST

/* A burst of 250 lines: the clients get 200 of them. */
START_TEST(test_log_rate_limited) {
  set_level(h.session, "info");
  harness_clear(&h);
  for (int i = 0; i < 250; i++)
    call_host_api.log(harness_good_self(&h), MCPD_LOG_INFO, "burst %d", i);
  harness_turn(&h);
  ck_assert_uint_eq(harness_count(&h.cap, "burst "), 200);
}
END_TEST

Suite *plugin_api_suite(void) {
  Suite *s = suite_create("plugin_api");
  TCase *tc = tcase_create("self");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_tool_added_and_removed_on_the_loop);
  tcase_add_test(tc, test_bad_reports_refused);
  tcase_add_test(tc, test_roots_callback_only_on_the_loop);
  tcase_add_test(tc, test_log_lines_routed);
  tcase_add_test(tc, test_cancelled_call_logs_to_its_session);
  tcase_add_test(tc, test_log_rate_limited);
  suite_add_tcase(s, tc);
  return s;
}
