/* SPDX-License-Identifier: MIT */
/* test_result.c -- what a call answers (result.c), as a client sees it:
 * the answer's text exactly, structured content checked against the
 * tool's outputSchema, builders refused for the wrong kind of call (the
 * call then fails, and last_error() says why), results that are not one
 * refused, and text that is not UTF-8 repaired.  The tools are callbacks
 * of this file, added to good.so at run time, so each case builds exactly
 * what it checks. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "jsonrpc.h"
#include "loader.h"
#include "unit.h"

static harness h;
/* last_error() right after the misuse a tool below commits. */
static char misuse_error[256];

static void setup(void) {
  harness_start_good(&h);
  misuse_error[0] = '\0';
}

static void teardown(void) {
  harness_free(&h);
}

#define SUM_SCHEMA                                                             \
  "{\"type\":\"object\",\"properties\":{\"sum\":{\"type\":\"number\"}},"       \
  "\"required\":[\"sum\"]}"

static int wrong_structured(mcpd_call *call, const mcpd_request *req) {
  json_object *v = json_object_new_object();
  json_object_object_add(v, "sum", json_object_new_string("three"));
  return req->host->result_structured(call, v);
}

static int text_only(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_text(call, "3");
}

static int structured_only(mcpd_call *call, const mcpd_request *req) {
  json_object *v = json_object_new_object();
  json_object_object_add(v, "n", json_object_new_int(1));
  return req->host->result_structured(call, v);
}

static int role_on_tool(mcpd_call *call, const mcpd_request *req) {
  int rc = req->host->prompt_role(call, "assistant");
  snprintf(misuse_error, sizeof(misuse_error), "%d %s", rc,
           req->host->last_error());
  return req->host->result_text(call, "built anyway");
}

static int not_utf8(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_text(call, "a\xff"
                                      "b");
}

static int error_text(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_error(call, "no %s", "luck");
}

static int read_text(mcpd_call *call, const mcpd_request *req) {
  int rc = req->host->result_image(call, "aW1n", "image/png");
  snprintf(misuse_error, sizeof(misuse_error), "%d %s", rc,
           req->host->last_error());
  return MCPD_OK;
}

static int read_body(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_text(call, "body");
}

static void add_tool(const char *name, const char *output_schema,
                     int (*cb)(mcpd_call *, const mcpd_request *)) {
  mcpd_tool def = {.name = name,
                   .output_schema = output_schema,
                   .call = cb,
                   .exec = MCPD_EXEC_INLINE};
  ck_assert_int_eq(call_host_api.add_tool(harness_good_self(&h), &def),
                   MCPD_OK);
}

static void add_resource(const char *uri,
                         int (*cb)(mcpd_call *, const mcpd_request *)) {
  mcpd_resource def = {.uri = uri,
                       .name = "r",
                       .mime_type = "text/plain",
                       .read = cb,
                       .exec = MCPD_EXEC_INLINE};
  ck_assert_int_eq(call_host_api.add_resource(harness_good_self(&h), &def),
                   MCPD_OK);
}

/* The result of response `msg`, as mcpd's plain JSON. */
static const char *result_of(json_object *msg) {
  json_object *v = json_path(msg, "result");
  ck_assert_msg(v != NULL, "no result in %s", plain(msg));
  return plain(v);
}

static const char *error_message(json_object *msg) {
  json_object *v = json_path(msg, "error.message");
  ck_assert_msg(v != NULL, "no error in %s", plain(msg));
  return json_object_get_string(v);
}

START_TEST(test_text_builds_exactly) {
  json_object *msg = harness_tool(&h, 1, "add", "{\"a\":1,\"b\":2}");
  ck_assert_str_eq(result_of(msg),
                   "{\"content\":[{\"type\":\"text\",\"text\":"
                   "\"3\"}],\"structuredContent\":{\"sum\":3}}");
  json_object_put(msg);
  /* Structured content alone is mirrored as text for older clients. */
  add_tool("structured_only", NULL, structured_only);
  msg = harness_tool(&h, 2, "structured_only", NULL);
  ck_assert_str_eq(result_of(msg),
                   "{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"n\\\":1}"
                   "\"}],\"structuredContent\":{\"n\":1}}");
  json_object_put(msg);
  add_tool("error_text", NULL, error_text);
  msg = harness_tool(&h, 3, "error_text", NULL);
  ck_assert_str_eq(result_of(msg), "{\"content\":[{\"type\":\"text\",\"text\":"
                                   "\"no luck\"}],\"isError\":true}");
  json_object_put(msg);
}
END_TEST

START_TEST(test_structured_checked_against_output_schema) {
  json_object *msg;

  add_tool("wrong_structured", SUM_SCHEMA, wrong_structured);
  msg = harness_tool(&h, 1, "wrong_structured", NULL);
  ck_assert_int_eq(response_error_code(msg), JSONRPC_INTERNAL_ERROR);
  ck_assert_ptr_nonnull(strstr(error_message(msg),
                               "tool wrong_structured returned "
                               "structuredContent that does not match its "
                               "output schema"));
  json_object_put(msg);
  add_tool("text_only", SUM_SCHEMA, text_only);
  msg = harness_tool(&h, 2, "text_only", NULL);
  ck_assert_str_eq(error_message(msg),
                   "tool text_only declares an output schema but returned "
                   "no structuredContent");
  json_object_put(msg);
}
END_TEST

/* A builder of another kind of call is refused, and the call fails even
 * though it built something else afterwards. */
START_TEST(test_builder_refused_for_the_kind) {
  json_object *msg;

  add_tool("role_on_tool", NULL, role_on_tool);
  msg = harness_tool(&h, 1, "role_on_tool", NULL);
  ck_assert_str_eq(misuse_error,
                   "-1 prompt_role() cannot be used on a tool call");
  ck_assert_int_eq(response_error_code(msg), JSONRPC_INTERNAL_ERROR);
  ck_assert_str_eq(error_message(msg),
                   "tool role_on_tool built an invalid result");
  json_object_put(msg);

  add_resource("test://image", read_text);
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
                   "\"resources/read\",\"params\":{\"uri\":\"test://image\"}}");
  msg = harness_response(&h, 2);
  ck_assert_str_eq(misuse_error,
                   "-1 result_image() cannot be used on a resource read");
  ck_assert_int_eq(response_error_code(msg), JSONRPC_INTERNAL_ERROR);
  json_object_put(msg);
}
END_TEST

/* A read's text names the URI and the resource's MIME type. */
START_TEST(test_read_builds_contents) {
  json_object *msg;

  add_resource("test://body", read_body);
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                   "\"resources/read\",\"params\":{\"uri\":\"test://body\"}}");
  msg = harness_response(&h, 1);
  ck_assert_str_eq(result_of(msg),
                   "{\"contents\":[{\"uri\":\"test://body\",\"mimeType\":"
                   "\"text/plain\",\"text\":\"body\"}]}");
  json_object_put(msg);
}
END_TEST

/* What is not a result is refused with a message that says why. */
START_TEST(test_not_a_result_refused) {
  json_object *msg = harness_tool(&h, 1, "garbage", NULL);
  ck_assert_str_eq(error_message(msg), "tool garbage returned a malformed "
                                       "result");
  json_object_put(msg);
  msg = harness_tool(&h, 2, "nothing", NULL);
  ck_assert_str_eq(error_message(msg), "tool nothing returned no result");
  json_object_put(msg);
  msg = harness_tool(&h, 3, "bogus", NULL);
  ck_assert_str_eq(error_message(msg), "tool bogus returned 7, which is "
                                       "neither MCPD_OK nor MCPD_ERROR");
  json_object_put(msg);
}
END_TEST

/* Plugin text that is not UTF-8 reaches the client repaired. */
START_TEST(test_bad_utf8_repaired) {
  json_object *msg;
  char *log;

  add_tool("not_utf8", NULL, not_utf8);
  msg = harness_tool(&h, 1, "not_utf8", NULL);
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.content.0.text")),
      "a\xef\xbf\xbd"
      "b");
  json_object_put(msg);
  log = harness_log(&h);
  ck_assert_ptr_nonnull(strstr(log, "returned text that is not valid UTF-8"));
  free(log);
}
END_TEST

Suite *result_suite(void) {
  Suite *s = suite_create("result");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_text_builds_exactly);
  tcase_add_test(tc, test_structured_checked_against_output_schema);
  tcase_add_test(tc, test_builder_refused_for_the_kind);
  tcase_add_test(tc, test_read_builds_contents);
  tcase_add_test(tc, test_not_a_result_refused);
  tcase_add_test(tc, test_bad_utf8_repaired);
  suite_add_tcase(s, tc);
  return s;
}
