/* SPDX-License-Identifier: MIT */
/* test_host_api.c -- the table plugins call (host_api.c), as a plugin
 * sees it: a call handle used after its call finished, or one never
 * handed out, is refused with last_error() and one log line, never
 * followed; complete() on a call that is not ASYNC is refused; the table
 * says its size and ABI and has every function. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "jsonrpc.h"
#include "loader.h"
#include "unit.h"

static harness h;
/* The handle the tool below was called with, kept past its end. */
static mcpd_call *kept;
static char complete_error[256];

static void setup(void) {
  harness_start_good(&h);
  kept = NULL;
  complete_error[0] = '\0';
}

static void teardown(void) {
  harness_free(&h);
}

static int keep_handle(mcpd_call *call, const mcpd_request *req) {
  kept = call;
  if (req->host->complete(call, MCPD_OK) != MCPD_ERROR)
    snprintf(complete_error, sizeof(complete_error), "accepted");
  else
    snprintf(complete_error, sizeof(complete_error), "%s",
             req->host->last_error());
  return req->host->result_text(call, "kept");
}

/* Every call function refuses `handle` as a finished call's. */
static void assert_refused(mcpd_call *handle) {
  const mcpd_host *host = &call_host_api;
  json_object *v = json_object_new_object();

  ck_assert_int_eq(host->result_text(handle, "late"), MCPD_ERROR);
  ck_assert_str_eq(host->last_error(),
                   "result_text: the call has already finished");
  ck_assert_int_eq(host->result_structured(handle, v), MCPD_ERROR);
  ck_assert_int_eq(host->progress(handle, 1, 2, NULL), MCPD_ERROR);
  ck_assert_int_eq(host->complete(handle, MCPD_OK), MCPD_ERROR);
  ck_assert_str_eq(host->last_error(),
                   "complete: the call has already finished");
  /* Check defines a fail() macro: call through the pointer. */
  ck_assert_int_eq((*host->fail)(handle, MCPD_ERR_INTERNAL, "x"), MCPD_ERROR);
  ck_assert_ptr_null(host->call_self(handle));
  ck_assert_ptr_null(host->call_tool_name(handle));
  ck_assert_ptr_null(host->call_roots(handle));
  /* A finished call reads as cancelled: its work is not wanted. */
  ck_assert_int_eq(host->cancelled(handle), 1);
}

START_TEST(test_stale_handle_refused) {
  mcpd_tool def = {
      .name = "keep_handle", .call = keep_handle, .exec = MCPD_EXEC_INLINE};
  reg_entry *add = registry_find(&h.srv.registry, REG_TOOL, "add");
  json_object *msg;
  char *log;

  ck_assert_int_eq(call_host_api.add_tool(&add->owner->self, &def), MCPD_OK);
  msg = harness_tool(&h, 1, "keep_handle", NULL);
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.content.0.text")), "kept");
  json_object_put(msg);
  ck_assert_ptr_nonnull(kept);
  assert_refused(kept);
  /* Nothing of it reached the client, and the log names the plugin. */
  harness_turn(&h);
  ck_assert_uint_eq(harness_count(&h.cap, "late"), 0);
  ck_assert_uint_eq(harness_count(&h.cap, "notifications/progress"), 0);
  log = harness_log(&h);
  ck_assert_ptr_nonnull(strstr(log, "plugin \"good\": result_text() on a call "
                                    "that has already finished"));
  free(log);
}
END_TEST

START_TEST(test_bogus_handle_refused) {
  assert_refused((mcpd_call *)(uintptr_t)0x5eed0);
  assert_refused(NULL);
}
END_TEST

/* complete() belongs to ASYNC calls alone. */
START_TEST(test_complete_refused_on_inline_call) {
  mcpd_tool def = {
      .name = "keep_handle", .call = keep_handle, .exec = MCPD_EXEC_INLINE};
  reg_entry *add = registry_find(&h.srv.registry, REG_TOOL, "add");
  json_object *msg;

  ck_assert_int_eq(call_host_api.add_tool(&add->owner->self, &def), MCPD_OK);
  msg = harness_tool(&h, 1, "keep_handle", NULL);
  ck_assert_int_eq(response_error_code(msg), 0);
  json_object_put(msg);
  ck_assert_str_eq(complete_error, "complete: the call is not asynchronous "
                                   "or was already completed");
}
END_TEST

START_TEST(test_table_complete) {
  const mcpd_host *host = &call_host_api;

  ck_assert_uint_eq(host->size, sizeof(mcpd_host));
  ck_assert_int_eq(host->abi_major, MCPD_ABI_MAJOR);
  ck_assert_int_eq(host->abi_minor, MCPD_ABI_MINOR);
  /* Every member after the header is a function a plugin may call. */
  for (size_t off = offsetof(mcpd_host, mprintf); off < sizeof(mcpd_host);
       off += sizeof(void (*)(void))) {
    void (*fn)(void);
    memcpy(&fn, (const char *)host + off, sizeof(fn));
    ck_assert_msg(fn != NULL, "no function at offset %zu", off);
  }
}
END_TEST

Suite *host_api_suite(void) {
  Suite *s = suite_create("host_api");
  TCase *tc = tcase_create("handles");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_stale_handle_refused);
  tcase_add_test(tc, test_bogus_handle_refused);
  tcase_add_test(tc, test_complete_refused_on_inline_call);
  tcase_add_test(tc, test_table_complete);
  suite_add_tcase(s, tc);
  return s;
}
