/* SPDX-License-Identifier: MIT */
/* test_calls.c -- the methods that run plugin code, as a client sees them
 * before and around the call: tools/call, resources/read, prompts/get and
 * completion/complete find what the request names, check its arguments
 * with the right code and message, and answer in the client's era; a
 * modern retry's inputResponses and requestState are checked first. */
#include "config.h"

#include <string.h>

#include "loader.h"
#include "unit.h"

static harness h;

/* echo.so and everything.so loaded; the session speaks `version`, or the
 * modern era when it is NULL. */
static void start(const char *version) {
  harness_init(&h, NULL);
  harness_session(&h);
  harness_copy(&h, MCPD_ECHO_SO, "echo.so");
  harness_copy(&h, MCPD_EVERYTHING_SO, "everything.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 2);
  harness_turn(&h);
  if (version != NULL)
    harness_initialize(&h, version);
  else
    h.session->modern_allowed = 1; /* as the stdio server sets it */
  harness_clear(&h);
}

static void setup_legacy(void) {
  start("2025-11-25");
}

static void setup_modern(void) {
  start(NULL);
}

static void teardown(void) {
  harness_free(&h);
}

#define ENVELOPE                                                               \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","     \
  "\"io.modelcontextprotocol/clientCapabilities\":{}}"

/* Sends request `method` with params `params` (an object's members, no
 * braces; the modern envelope is added in the modern era) and returns
 * its answer, parsed (the caller puts it). */
static json_object *ask(const char *method, const char *params) {
  char line[4096];
  json_object *msg;

  harness_clear(&h);
  snprintf(
      line, sizeof(line),
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":{%s%s%s}}",
      method, params, h.session->modern_allowed && params[0] ? "," : "",
      h.session->modern_allowed ? ENVELOPE : "");
  harness_line(&h, line);
  harness_run_until(&h, harness_calls_done, NULL);
  harness_wait(&h, 1);
  msg = harness_msg(&h, h.cap.n - 1);
  return msg;
}

/* The answer's error message; "" when it has none. */
static const char *message_of(json_object *msg) {
  json_object *m = json_path(msg, "error.message");
  return m != NULL ? json_object_get_string(m) : "";
}

static void expect_error(const char *method, const char *params, int code,
                         const char *message) {
  json_object *msg = ask(method, params);
  ck_assert_msg(response_error_code(msg) == code, "%s {%s}: %s", method, params,
                plain(msg));
  ck_assert_msg(strstr(message_of(msg), message) != NULL, "%s {%s}: %s", method,
                params, plain(msg));
  json_object_put(msg);
}

START_TEST(test_tools_call_checks) {
  json_object *msg;

  expect_error("tools/call", "", -32602, "name must be a string");
  expect_error("tools/call", "\"name\":7", -32602, "name must be a string");
  expect_error("tools/call", "\"name\":\"echo\",\"arguments\":[]", -32602,
               "arguments must be an object");
  expect_error("tools/call", "\"name\":\"nope\"", -32602, "Unknown tool: nope");
  expect_error("tools/call", "\"name\":\"echo\",\"task\":{}", -32601,
               "does not support task-augmented execution");
  /* Arguments against the schema: a tool error the model can read. */
  msg = ask("tools/call", "\"name\":\"echo\",\"arguments\":{}");
  ck_assert_int_eq(response_error_code(msg), 0);
  ck_assert_str_eq(plain(json_path(msg, "result.isError")), "true");
  ck_assert_ptr_nonnull(strstr(plain(json_path(msg, "result.content")),
                               "Invalid arguments for tool echo"));
  json_object_put(msg);
  msg = ask("tools/call", "\"name\":\"echo\",\"arguments\":{\"text\":\"x\"}");
  ck_assert_str_eq(plain(json_path(msg, "result.content")),
                   "[{\"type\":\"text\",\"text\":\"x\"}]");
  ck_assert_ptr_null(json_path(msg, "result.resultType"));
  json_object_put(msg);
}
END_TEST

/* Text with a NUL character is no name, whatever it starts with: it
 * never runs or finds what its start names, and is answered as any
 * unknown name (-32602). */
START_TEST(test_names_with_nul_match_nothing) {
  expect_error("tools/call",
               "\"name\":\"echo\\u0000evil\",\"arguments\":{\"text\":\"x\"}",
               -32602, "Unknown tool: echo\\u0000evil");
  expect_error("prompts/get", "\"name\":\"test_prompt_with_arguments\\u0000\"",
               -32602, "Unknown prompt: test_prompt_with_arguments\\u0000");
  expect_error("resources/read", "\"uri\":\"test://static-text\\u0000x\"",
               -32602, "not an absolute URI: test://static-text\\u0000x");
  expect_error("completion/complete",
               "\"ref\":{\"type\":\"ref/prompt\\u0000\",\"name\":"
               "\"test_prompt_with_arguments\"},\"argument\":{\"name\":"
               "\"arg1\",\"value\":\"\"}",
               -32602, "ref.type must be ref/prompt or ref/resource");
  expect_error("completion/complete",
               "\"ref\":{\"type\":\"ref/prompt\",\"name\":"
               "\"test_prompt_with_arguments\\u0000\"},\"argument\":{\"name\":"
               "\"arg1\",\"value\":\"\"}",
               -32602, "Unknown prompt: test_prompt_with_arguments\\u0000");
  expect_error("completion/complete",
               "\"ref\":{\"type\":\"ref/prompt\",\"name\":"
               "\"test_prompt_with_arguments\"},\"argument\":{\"name\":"
               "\"arg1\\u0000\",\"value\":\"\"}",
               -32602, "Unknown argument: arg1\\u0000");
}
END_TEST

START_TEST(test_resources_read_checks_legacy) {
  json_object *msg;

  expect_error("resources/read", "", -32602, "uri must be a string");
  expect_error("resources/read", "\"uri\":\"relative/path\"", -32602,
               "not an absolute URI: relative/path");
  msg = ask("resources/read", "\"uri\":\"test://nothing\"");
  ck_assert_int_eq(response_error_code(msg), -32002);
  ck_assert_str_eq(plain(json_path(msg, "error.data")),
                   "{\"uri\":\"test://nothing\"}");
  json_object_put(msg);
  msg = ask("resources/read", "\"uri\":\"test://template/7/data\"");
  ck_assert_int_eq(response_error_code(msg), 0);
  ck_assert_ptr_nonnull(json_path(msg, "result.contents"));
  json_object_put(msg);
}
END_TEST

START_TEST(test_prompts_get_checks) {
  expect_error("prompts/get", "", -32602, "name must be a string");
  expect_error("prompts/get", "\"name\":\"nope\"", -32602,
               "Unknown prompt: nope");
  expect_error("prompts/get",
               "\"name\":\"test_prompt_with_arguments\",\"arguments\":{"
               "\"arg1\":\"a\"}",
               -32602, "Missing required argument: arg2");
  expect_error("prompts/get",
               "\"name\":\"test_prompt_with_arguments\",\"arguments\":{"
               "\"arg1\":1,\"arg2\":\"b\"}",
               -32602, "arguments must be an object of strings");
}
END_TEST

START_TEST(test_complete_checks) {
  json_object *msg;

  expect_error("completion/complete", "", -32602,
               "ref and argument must be objects");
  expect_error("completion/complete",
               "\"ref\":{\"type\":\"ref/tool\"},\"argument\":{}", -32602,
               "ref.type must be ref/prompt or ref/resource, not ref/tool");
  expect_error("completion/complete",
               "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"nope\"},"
               "\"argument\":{\"name\":\"a\",\"value\":\"\"}",
               -32602, "Unknown prompt: nope");
  expect_error("completion/complete",
               "\"ref\":{\"type\":\"ref/prompt\",\"name\":"
               "\"test_prompt_with_arguments\"},\"argument\":{\"name\":"
               "\"zzz\",\"value\":\"\"}",
               -32602, "Unknown argument: zzz");
  expect_error("completion/complete",
               "\"ref\":{\"type\":\"ref/resource\",\"uri\":\"test://x/{a}\"},"
               "\"argument\":{\"name\":\"a\",\"value\":\"\"}",
               -32602, "Unknown resource template: test://x/{a}");
  /* A plain resource has nothing to complete. */
  msg =
      ask("completion/complete",
          "\"ref\":{\"type\":\"ref/resource\",\"uri\":\"test://static-text\"},"
          "\"argument\":{\"name\":\"a\",\"value\":\"\"}");
  ck_assert_str_eq(plain(json_path(msg, "result.completion")),
                   "{\"values\":[],\"total\":0,\"hasMore\":false}");
  json_object_put(msg);
}
END_TEST

START_TEST(test_modern_answers) {
  json_object *msg;

  /* 2026-07-28 moved "not found" to invalid params, with the same data. */
  msg = ask("resources/read", "\"uri\":\"test://nothing\"");
  ck_assert_int_eq(response_error_code(msg), -32602);
  ck_assert_str_eq(plain(json_path(msg, "error.data")),
                   "{\"uri\":\"test://nothing\"}");
  json_object_put(msg);
  /* A read is cacheable for 0 ms, publicly. */
  msg = ask("resources/read", "\"uri\":\"test://static-text\"");
  ck_assert_str_eq(plain(json_path(msg, "result.resultType")), "\"complete\"");
  ck_assert_str_eq(plain(json_path(msg, "result.ttlMs")), "0");
  ck_assert_str_eq(plain(json_path(msg, "result.cacheScope")), "\"public\"");
  json_object_put(msg);
  /* A call is not cacheable. */
  msg = ask("tools/call", "\"name\":\"echo\",\"arguments\":{\"text\":\"m\"}");
  ck_assert_str_eq(plain(json_path(msg, "result.resultType")), "\"complete\"");
  ck_assert_ptr_null(json_path(msg, "result.ttlMs"));
  json_object_put(msg);
  /* No Mcp-Param-* check on stdio: there are no headers. */
  msg = ask("tools/call", "\"name\":\"test_param_headers\",\"arguments\":{"
                          "\"region\":\"eu\",\"priority\":1}");
  ck_assert_int_eq(response_error_code(msg), 0);
  json_object_put(msg);
}
END_TEST

START_TEST(test_modern_retry_checked) {
  expect_error("tools/call",
               "\"name\":\"echo\",\"arguments\":{\"text\":\"r\"},"
               "\"inputResponses\":[]",
               -32602, "inputResponses must be an object of the client's");
  expect_error("tools/call",
               "\"name\":\"echo\",\"arguments\":{\"text\":\"r\"},"
               "\"inputResponses\":{\"k\":1}",
               -32602, "inputResponses must be an object of the client's");
  expect_error("prompts/get",
               "\"name\":\"test_simple_prompt\",\"requestState\":5", -32602,
               "requestState must be the string an input_required result");
  expect_error("resources/read",
               "\"uri\":\"test://static-text\",\"requestState\":\"1.e30.AA\"",
               -32602, "Invalid params: ");
}
END_TEST

Suite *calls_suite(void) {
  Suite *s = suite_create("calls");
  TCase *tc = tcase_create("legacy");
  tcase_add_checked_fixture(tc, setup_legacy, teardown);
  tcase_add_test(tc, test_tools_call_checks);
  tcase_add_test(tc, test_names_with_nul_match_nothing);
  tcase_add_test(tc, test_resources_read_checks_legacy);
  tcase_add_test(tc, test_prompts_get_checks);
  tcase_add_test(tc, test_complete_checks);
  suite_add_tcase(s, tc);
  tc = tcase_create("modern");
  tcase_add_checked_fixture(tc, setup_modern, teardown);
  tcase_add_test(tc, test_modern_answers);
  tcase_add_test(tc, test_modern_retry_checked);
  suite_add_tcase(s, tc);
  return s;
}
