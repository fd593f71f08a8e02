/* SPDX-License-Identifier: MIT */
/* test_session.c -- revision negotiation, and one session driven line by
 * line as a client would drive it, with no plugins loaded (and good.so
 * for a cancelled call's answer). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonrpc.h"
#include "loader.h"
#include "unit.h"

START_TEST(test_negotiate_supported) {
  static const char *const supported[] = {"2025-11-25", "2025-06-18",
                                          "2025-03-26", "2024-11-05", NULL};

  for (size_t i = 0; supported[i] != NULL; i++)
    ck_assert_str_eq(era_negotiate(supported[i]), supported[i]);
  /* era_legacy_versions lists the same revisions, newest first. */
  for (size_t i = 0; supported[i] != NULL; i++) {
    ck_assert_ptr_nonnull(era_legacy_versions[i]);
    ck_assert_str_eq(era_legacy_versions[i], supported[i]);
  }
  ck_assert_ptr_null(era_legacy_versions[4]);
}
END_TEST

START_TEST(test_negotiate_unknown) {
  ck_assert_str_eq(era_negotiate("2026-07-28"), "2025-11-25");
  ck_assert_str_eq(era_negotiate("1.0.0"), "2025-11-25");
  ck_assert_str_eq(era_negotiate(""), "2025-11-25");
  ck_assert_str_eq(era_negotiate(NULL), "2025-11-25");
  ck_assert_str_eq(era_negotiate("2025-11-25 "), "2025-11-25");
  ck_assert_str_eq(era_negotiate("2024-11-0"), "2025-11-25");
}
END_TEST

START_TEST(test_batches_by_version) {
  ck_assert(era_version_has_batches("2025-03-26"));
  ck_assert(era_version_has_batches("2024-11-05"));
  ck_assert(!era_version_has_batches("2025-06-18"));
  ck_assert(!era_version_has_batches("2025-11-25"));
  ck_assert(!era_version_has_batches("2026-07-28"));
  ck_assert(!era_version_has_batches(""));
  ck_assert(!era_version_has_batches(NULL));
}
END_TEST

/* Each test gets a server with an empty plugin directory and a session. */
static harness h;

static void setup(void) {
  harness_init(&h, NULL);
  harness_session(&h);
  /* Nothing to load; the scan must say nothing at error level. */
  loader_scan(&h.srv.loader);
  ck_assert_uint_eq(registry_count(&h.srv.registry, REG_TOOL), 0);
}

static void teardown(void) {
  harness_free(&h);
}

/* Sends `line`, expects exactly one reply and returns it parsed. */
static json_object *exchange(const char *line) {
  harness_clear(&h);
  harness_line(&h, line);
  ck_assert_msg(h.cap.n == 1, "%s: %zu replies", line, h.cap.n);
  return harness_msg(&h, 0);
}

/* Expects one error reply with `code` and the id serialized as `id`. */
static void assert_error(const char *line, int code, const char *id) {
  json_object *msg = exchange(line);

  ck_assert_msg(response_error_code(msg) == code, "%s: got %s", line,
                h.cap.msgs[0]);
  ck_assert_str_eq(plain(json_path(msg, "id")), id);
  ck_assert(
      json_object_is_type(json_path(msg, "error.message"), json_type_string));
  ck_assert_ptr_null(json_path(msg, "result"));
  ck_assert_str_eq(json_object_get_string(json_path(msg, "jsonrpc")), "2.0");
  json_object_put(msg);
}

START_TEST(test_ping_before_initialize) {
  json_object *msg =
      exchange("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
  ck_assert_str_eq(h.cap.msgs[0],
                   "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
  json_object_put(msg);
}
END_TEST

START_TEST(test_tools_list_before_initialize) {
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
               JSONRPC_INVALID_REQUEST, "2");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
               "\"params\":{\"name\":\"x\"}}",
               JSONRPC_INVALID_REQUEST, "3");
}
END_TEST

START_TEST(test_initialize_each_version) {
  static const char *const versions[] = {"2025-11-25",
                                         "2025-06-18",
                                         "2025-03-26",
                                         "2024-11-05",
                                         "2026-07-28",
                                         "1.0.0",
                                         ""};
  const char *version = versions[_i];
  char line[400];
  json_object *msg;

  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
           "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
           "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
           version);
  msg = exchange(line);
  ck_assert_msg(response_error_code(msg) == 0, "%s", h.cap.msgs[0]);
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.protocolVersion")),
      era_negotiate(version));
  ck_assert(json_object_get_boolean(
      json_path(msg, "result.capabilities.tools.listChanged")));
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.serverInfo.name")), "mcpd");
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.serverInfo.version")),
      PACKAGE_VERSION);
  ck_assert_int_eq(json_object_get_int(json_path(msg, "id")), 0);
  json_object_put(msg);
  ck_assert(h.session->initialized);
  ck_assert_str_eq(h.session->version, era_negotiate(version));

  /* Now the tools are available (an empty list here). */
  msg = exchange("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
  ck_assert_str_eq(h.cap.msgs[0],
                   "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}");
  json_object_put(msg);
}
END_TEST

START_TEST(test_initialize_instructions) {
  char config[PATH_MAX * 2];
  const char *base = getenv("TMPDIR");
  json_object *msg;
  FILE *f;

  harness_free(&h);
  snprintf(config, sizeof(config), "%s/mcpd-unit-instr-%ld.json",
           base != NULL && base[0] == '/' ? base : "/tmp", (long)getpid());
  f = fopen(config, "w");
  ck_assert_ptr_nonnull(f);
  fputs("{\"instructions\":\"Use add for sums.\"}", f);
  fclose(f);
  {
    const char *const extra[] = {"--config", config, NULL};
    harness_init(&h, extra);
  }
  unlink(config);
  harness_session(&h);
  msg = exchange("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                 "\"params\":{\"protocolVersion\":\"2025-06-18\","
                 "\"capabilities\":{}}}");
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.instructions")),
      "Use add for sums.");
  json_object_put(msg);
}
END_TEST

START_TEST(test_initialize_needs_version) {
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
               "\"params\":{\"capabilities\":{}}}",
               JSONRPC_INVALID_PARAMS, "1");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\","
               "\"params\":{\"protocolVersion\":20250618}}",
               JSONRPC_INVALID_PARAMS, "2");
  ck_assert(!h.session->initialized);
}
END_TEST

START_TEST(test_second_initialize) {
  harness_initialize(&h, "2025-06-18");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":\"again\",\"method\":"
               "\"initialize\",\"params\":{\"protocolVersion\":"
               "\"2024-11-05\",\"capabilities\":{}}}",
               JSONRPC_INVALID_REQUEST, "\"again\"");
  /* The first negotiation stands. */
  ck_assert_str_eq(h.session->version, "2025-06-18");
}
END_TEST

START_TEST(test_unknown_method) {
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"no/such\"}",
               JSONRPC_METHOD_NOT_FOUND, "9");
  harness_initialize(&h, "2025-11-25");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"resources/nope\"}",
               JSONRPC_METHOD_NOT_FOUND, "10");
  /* An unknown notification gets no answer at all. */
  harness_clear(&h);
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/nope\"}");
  ck_assert_uint_eq(h.cap.n, 0);
}
END_TEST

START_TEST(test_params_not_object) {
  harness_initialize(&h, "2025-11-25");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
               "\"params\":[1,2]}",
               JSONRPC_INVALID_PARAMS, "1");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\","
               "\"params\":[]}",
               JSONRPC_INVALID_PARAMS, "2");
  /* A string is not even a valid request. */
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\","
               "\"params\":\"x\"}",
               JSONRPC_INVALID_REQUEST, "3");
}
END_TEST

START_TEST(test_parse_error_reply) {
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":1,", JSONRPC_PARSE_ERROR, "null");
  assert_error("not json", JSONRPC_PARSE_ERROR, "null");
  /* The session keeps going. */
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}",
               JSONRPC_METHOD_NOT_FOUND, "1");
}
END_TEST

START_TEST(test_invalid_request_reply) {
  assert_error("{\"jsonrpc\":\"1.0\",\"id\":5,\"method\":\"ping\"}",
               JSONRPC_INVALID_REQUEST, "5");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
               JSONRPC_INVALID_REQUEST, "null");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
               JSONRPC_INVALID_REQUEST, "null");
  assert_error("\"just a string\"", JSONRPC_INVALID_REQUEST, "null");
}
END_TEST

/* JSON-RPC: valid JSON that is not a request object is -32600, not a
 * parse error. */
START_TEST(test_bare_number_is_invalid_request) {
  assert_error("42", JSONRPC_INVALID_REQUEST, "null");
}
END_TEST

/* An integer id beyond 64 bits must come back exactly as sent, or the
 * request must be refused; an answer under another id matches nothing the
 * client sent.  Such an integer is read as a double (as JavaScript reads
 * it), and a double is no id: -32600 with a null id, as for 1.5. */
START_TEST(test_huge_id_refused) {
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,"
               "\"method\":\"ping\"}",
               JSONRPC_INVALID_REQUEST, "null");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":-9223372036854775809,"
               "\"method\":\"ping\"}",
               JSONRPC_INVALID_REQUEST, "null");
  /* Within uint64 json-c is exact, but that is no int64 id. */
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":9223372036854775808,"
               "\"method\":\"ping\"}",
               JSONRPC_INVALID_REQUEST, "null");
}
END_TEST

/* Valid JSON is never a parse error: an integer beyond 64 bits elsewhere
 * in the message (Python's json.dumps(10**20) writes one) and a lone
 * surrogate escape (JavaScript's JSON.stringify of a string cut inside an
 * emoji) are served under the request's own id. */
START_TEST(test_valid_json_edges_served) {
  json_object_put(exchange("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                           "\"ping\",\"params\":{\"_meta\":{\"n\":"
                           "100000000000000000000}}}"));
  ck_assert_str_eq(h.cap.msgs[0],
                   "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
  json_object_put(exchange("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
                           "\"ping\",\"params\":{\"t\":\"\\ud800\"}}"));
  ck_assert_str_eq(h.cap.msgs[0],
                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
  /* In an id, the surrogate reads as U+FFFD, as a decoder reads it. */
  json_object_put(
      exchange("{\"jsonrpc\":\"2.0\",\"id\":\"\\udc00\",\"method\":\"ping\"}"));
  ck_assert_str_eq(
      h.cap.msgs[0],
      "{\"jsonrpc\":\"2.0\",\"id\":\"\xef\xbf\xbd\",\"result\":{}}");
  json_object_put(exchange(
      "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud800x\",\"method\":\"ping\"}"));
  ck_assert_str_eq(
      h.cap.msgs[0],
      "{\"jsonrpc\":\"2.0\",\"id\":\"\xef\xbf\xbdx\",\"result\":{}}");
}
END_TEST

/* A number beyond the range of a double is valid JSON that cannot be
 * served: refused under the request's own id (-32602 in the params), and
 * a notification carrying one gets no reply.  NaN stays a parse error. */
START_TEST(test_unservable_number_refused_with_id) {
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"params\":"
               "{\"x\":1e400}}",
               JSONRPC_INVALID_PARAMS, "6");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"ping\",\"x\":"
               "-1e400}",
               JSONRPC_INVALID_REQUEST, "\"s\"");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"ping\"}",
               JSONRPC_INVALID_REQUEST, "null");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":"
               "{\"x\":NaN}}",
               JSONRPC_PARSE_ERROR, "null");
  harness_clear(&h);
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"params\":"
                   "{\"x\":1e400}}");
  ck_assert_uint_eq(h.cap.n, 0);
}
END_TEST

/* The whole int64 range is a valid id, echoed digit for digit. */
START_TEST(test_int64_ids_echoed) {
  static const char *const ids[] = {"9223372036854775807",
                                    "-9223372036854775808",
                                    "0",
                                    "-1",
                                    "1234567890123456789",
                                    NULL};
  for (size_t i = 0; ids[i] != NULL; i++) {
    char line[200], want[200];
    snprintf(line, sizeof(line),
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}", ids[i]);
    snprintf(want, sizeof(want),
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}", ids[i]);
    json_object_put(exchange(line));
    ck_assert_str_eq(h.cap.msgs[0], want);
  }
}
END_TEST

/* Text json-c's strict mode accepts but JSON does not: each is -32700,
 * and never echoed back. */
START_TEST(test_not_json_refused) {
  static const char *const lines[] = {
      "{\"jsonrpc\":\"2.0\",\"id\":1.,\"method\":\"ping\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":01,\"method\":\"ping\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":-,\"method\":\"ping\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":1e}"
      "}",
      "{'jsonrpc':'2.0','id':1,'method':'ping'}",
      "{\"jsonrpc\":\"2.0\",\"id\":\"a\tb\",\"method\":\"ping\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":\"a\x01\",\"method\":\"ping\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} // comment",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":"
      "NaN}}",
      NULL};
  for (size_t i = 0; lines[i] != NULL; i++)
    assert_error(lines[i], JSONRPC_PARSE_ERROR, "null");
}
END_TEST

/* json-c 0.16 decodes some escaped astral characters (U+1D800, whose low
 * 16 bits are D800) as U+FFFD; they must round-trip exactly. */
START_TEST(test_astral_escape_round_trip) {
  json_object_put(exchange("{\"jsonrpc\":\"2.0\",\"id\":\"\\ud836\\udc00 "
                           "\\\\ud836 \\ud83d\\ude00\",\"method\":\"ping\"}"));
  ck_assert_str_eq(h.cap.msgs[0],
                   "{\"jsonrpc\":\"2.0\",\"id\":\"\xf0\x9d\xa0\x80 "
                   "\\\\ud836 \xf0\x9f\x98\x80\",\"result\":{}}");
}
END_TEST

/* After a parse error, nothing of the failed message (a pending high
 * surrogate, say) leaks into the next one. */
START_TEST(test_fresh_state_after_error) {
  assert_error("[\"\\ud83d", JSONRPC_PARSE_ERROR, "null");
  /* A lone low surrogate: U+FFFD, not the emoji the pending high one
   * would make of it. */
  json_object_put(
      exchange("{\"jsonrpc\":\"2.0\",\"id\":\"\\ude00\",\"method\":\"ping\"}"));
  ck_assert_str_eq(
      h.cap.msgs[0],
      "{\"jsonrpc\":\"2.0\",\"id\":\"\xef\xbf\xbd\",\"result\":{}}");
  json_object_put(
      exchange("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\"}"));
  ck_assert_str_eq(h.cap.msgs[0],
                   "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}");
  /* json-c 0.16 keeps a pending high surrogate across json_tokener_reset;
   * mcpd must never hand it one (found by the protocol fuzzer). */
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":\"\\ud836\\ulc00\",\"method\":"
               "\"ping\"}",
               JSONRPC_PARSE_ERROR, "null");
  json_object_put(exchange(
      "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u0090b\",\"method\":\"ping\"}"));
  ck_assert_str_eq(
      h.cap.msgs[0],
      "{\"jsonrpc\":\"2.0\",\"id\":\"a\xc2\x90\x62\",\"result\":{}}");
}
END_TEST

/* A method name with a NUL inside is not the name before the NUL. */
/* A method holding a NUL character is no method: -32601 with the id, as
 * for any unknown method, and as a notification it gets no reply at all.
 * Neither is "2.0" followed by a NUL the version 2.0. */
START_TEST(test_method_with_nul) {
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\\u0000x\"}",
               JSONRPC_METHOD_NOT_FOUND, "4");
  assert_error("{\"jsonrpc\":\"2.0\\u0000junk\",\"id\":5,\"method\":\"ping\"}",
               JSONRPC_INVALID_REQUEST, "5");
  harness_clear(&h);
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"ping\\u0000x\"}");
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                   "initialized\\u0000\"}");
  ck_assert_uint_eq(h.cap.n, 0);
}
END_TEST

/* A protocolVersion with a NUL character is no version this server
 * speaks: negotiated as any unknown one, never as the one it starts
 * with. */
START_TEST(test_initialize_version_with_nul) {
  json_object *msg = exchange(
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
      "\"protocolVersion\":\"2025-06-18\\u0000x\",\"capabilities\":{}}}");
  ck_assert_str_eq(plain(json_path(msg, "result.protocolVersion")),
                   "\"2025-11-25\"");
  json_object_put(msg);
}
END_TEST

/* A client's error response with a null id says it could not read one of
 * our messages; answering it would start an endless exchange. */
START_TEST(test_null_id_error_response_ignored) {
  harness_clear(&h);
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
                   "{\"code\":-32700,\"message\":\"Parse error\"}}");
  ck_assert_uint_eq(h.cap.n, 0);
}
END_TEST

START_TEST(test_client_response_ignored) {
  harness_clear(&h);
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                   "cancelled\",\"params\":{\"requestId\":99}}");
  ck_assert_uint_eq(h.cap.n, 0);
}
END_TEST

START_TEST(test_batch_2025_03_26) {
  json_object *msg, *item;

  harness_initialize(&h, "2025-03-26");
  harness_line(&h, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
                   "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"},"
                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"},"
                   "{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"},"
                   "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"},"
                   "5]");
  /* One message: an array of five responses; the notification has none. */
  ck_assert_uint_eq(h.cap.n, 1);
  msg = harness_msg(&h, 0);
  ck_assert(json_object_is_type(msg, json_type_array));
  ck_assert_uint_eq(json_object_array_length(msg), 5);

  item = json_object_array_get_idx(msg, 0);
  ck_assert_str_eq(plain(item), "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
  item = json_object_array_get_idx(msg, 1);
  ck_assert_int_eq(response_error_code(item), JSONRPC_METHOD_NOT_FOUND);
  ck_assert_int_eq(json_object_get_int(json_path(item, "id")), 2);
  item = json_object_array_get_idx(msg, 2);
  ck_assert_int_eq(response_error_code(item), JSONRPC_INVALID_REQUEST);
  ck_assert_int_eq(json_object_get_int(json_path(item, "id")), 3);
  item = json_object_array_get_idx(msg, 3);
  ck_assert_int_eq(json_object_get_int(json_path(item, "id")), 4);
  ck_assert(
      json_object_is_type(json_path(item, "result.tools"), json_type_array));
  item = json_object_array_get_idx(msg, 4);
  ck_assert_int_eq(response_error_code(item), JSONRPC_INVALID_REQUEST);
  ck_assert_str_eq(plain(json_path(item, "id")), "null");
  json_object_put(msg);
}
END_TEST

START_TEST(test_batch_2024_11_05_notifications_only) {
  harness_initialize(&h, "2024-11-05");
  harness_line(&h, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/a\"},"
                   "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/b\"}]");
  /* Nothing to answer, so nothing is sent, not even []. */
  ck_assert_uint_eq(h.cap.n, 0);
}
END_TEST

START_TEST(test_batch_no_initialize_inside) {
  json_object *msg;

  harness_initialize(&h, "2025-03-26");
  harness_line(&h, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                   "\"params\":{\"protocolVersion\":\"2025-03-26\"}}]");
  ck_assert_uint_eq(h.cap.n, 1);
  msg = harness_msg(&h, 0);
  ck_assert_uint_eq(json_object_array_length(msg), 1);
  ck_assert_int_eq(response_error_code(json_object_array_get_idx(msg, 0)),
                   JSONRPC_INVALID_REQUEST);
  json_object_put(msg);
}
END_TEST

START_TEST(test_batch_refused_2025_11_25) {
  harness_initialize(&h, "2025-11-25");
  assert_error("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
               "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]",
               JSONRPC_INVALID_REQUEST, "null");
}
END_TEST

START_TEST(test_batch_refused_2025_06_18) {
  harness_initialize(&h, "2025-06-18");
  assert_error("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
               JSONRPC_INVALID_REQUEST, "null");
}
END_TEST

START_TEST(test_batch_before_initialize) {
  assert_error("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
               JSONRPC_INVALID_REQUEST, "null");
}
END_TEST

START_TEST(test_empty_batch) {
  harness_initialize(&h, "2025-03-26");
  assert_error("[]", JSONRPC_INVALID_REQUEST, "null");
  assert_error("  [ ]  ", JSONRPC_INVALID_REQUEST, "null");
}
END_TEST

START_TEST(test_oversize) {
  json_object *msg;

  harness_clear(&h);
  session_oversize(h.session, 1024);
  ck_assert_uint_eq(h.cap.n, 1);
  msg = harness_msg(&h, 0);
  ck_assert_int_eq(response_error_code(msg), JSONRPC_INVALID_REQUEST);
  ck_assert_str_eq(plain(json_path(msg, "id")), "null");
  ck_assert_ptr_nonnull(
      strstr(json_object_get_string(json_path(msg, "error.message")), "1024"));
  json_object_put(msg);
}
END_TEST

START_TEST(test_set_level) {
  harness_initialize(&h, "2025-11-25");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\","
               "\"params\":{\"level\":\"loud\"}}",
               JSONRPC_INVALID_PARAMS, "1");
  ck_assert_int_eq(h.session->log_level, -1);
  json_object_put(exchange("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
                           "\"logging/setLevel\",\"params\":{\"level\":"
                           "\"warning\"}}"));
  ck_assert_str_eq(h.cap.msgs[0],
                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
  ck_assert_int_eq(h.session->log_level, 3);
}
END_TEST

START_TEST(test_tools_list_bad_cursor) {
  harness_initialize(&h, "2025-11-25");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
               "\"params\":{\"cursor\":\"bogus\"}}",
               JSONRPC_INVALID_PARAMS, "1");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\","
               "\"params\":{\"cursor\":\"p99\"}}",
               JSONRPC_INVALID_PARAMS, "2");
}
END_TEST

START_TEST(test_tools_call_unknown_and_bad_params) {
  harness_initialize(&h, "2025-11-25");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
               "\"params\":{\"name\":\"missing\"}}",
               JSONRPC_INVALID_PARAMS, "1");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
               "\"params\":{}}",
               JSONRPC_INVALID_PARAMS, "2");
  assert_error("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
               "\"params\":{\"name\":\"x\",\"arguments\":[1]}}",
               JSONRPC_INVALID_PARAMS, "3");
}
END_TEST

/* Notifications sent before initialize are dropped; after it they go out. */
START_TEST(test_notify_only_when_initialized) {
  harness_clear(&h);
  session_notify(h.session, "notifications/tools/list_changed", NULL);
  ck_assert_uint_eq(h.cap.n, 0);
  harness_initialize(&h, "2025-11-25");
  session_notify(h.session, "notifications/tools/list_changed", NULL);
  ck_assert_uint_eq(h.cap.n, 1);
  ck_assert_str_eq(h.cap.msgs[0], "{\"jsonrpc\":\"2.0\",\"method\":"
                                  "\"notifications/tools/list_changed\"}");
}
END_TEST

Suite *negotiation_suite(void) {
  Suite *s = suite_create("negotiation");
  TCase *tc = tcase_create("versions");

  tcase_add_test(tc, test_negotiate_supported);
  tcase_add_test(tc, test_negotiate_unknown);
  tcase_add_test(tc, test_batches_by_version);
  suite_add_tcase(s, tc);
  return s;
}

/* --- requests the server sends the client --------------------------- */

typedef struct reply_seen {
  int calls;
  char result[256];
  int code;
  char message[128];
} reply_seen;

static void record_reply(void *arg, json_object *result, json_object *error) {
  reply_seen *seen = arg;
  json_object *v;
  seen->calls++;
  if (result != NULL)
    snprintf(seen->result, sizeof(seen->result), "%s", plain(result));
  if (error != NULL) {
    if (json_object_object_get_ex(error, "code", &v))
      seen->code = json_object_get_int(v);
    if (json_object_object_get_ex(error, "message", &v))
      snprintf(seen->message, sizeof(seen->message), "%s",
               json_object_get_string(v));
  }
}

START_TEST(test_outgoing_request_answered) {
  reply_seen a = {0}, b = {0};
  const char *ida, *idb;
  json_object *msg;

  /* Nothing goes out before the session is initialized. */
  ck_assert_ptr_null(
      session_request(h.session, "roots/list", NULL, record_reply, &a));
  harness_initialize(&h, "2025-11-25");
  harness_clear(&h);
  ida = session_request(h.session, "roots/list", NULL, record_reply, &a);
  idb = session_request(h.session, "sampling/createMessage",
                        parse_json("{\"maxTokens\":1}"), record_reply, &b);
  ck_assert_str_eq(ida, "mcpd-1");
  ck_assert_str_eq(idb, "mcpd-2");
  ck_assert_uint_eq(h.cap.n, 2);
  msg = harness_msg(&h, 1);
  ck_assert_str_eq(json_object_get_string(json_path(msg, "method")),
                   "sampling/createMessage");
  ck_assert_str_eq(json_object_get_string(json_path(msg, "id")), "mcpd-2");
  ck_assert_int_eq(json_object_get_int(json_path(msg, "params.maxTokens")), 1);
  json_object_put(msg);

  /* Answers in any order reach their own callers, once; a repeat, an
   * unknown id or the client's own id space are ignored. */
  harness_clear(&h);
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":\"mcpd-2\","
                   "\"error\":{\"code\":-1,\"message\":\"no\"}}");
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":\"mcpd-1\","
                   "\"result\":{\"roots\":[]}}");
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":\"mcpd-1\","
                   "\"result\":{\"roots\":[1]}}");
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
  ck_assert_uint_eq(h.cap.n, 0);
  ck_assert_int_eq(a.calls, 1);
  ck_assert_str_eq(a.result, "{\"roots\":[]}");
  ck_assert_int_eq(b.calls, 1);
  ck_assert_int_eq(b.code, -1);
  ck_assert_str_eq(b.message, "no");
}
END_TEST

START_TEST(test_outgoing_request_cancelled_and_session_end) {
  reply_seen a = {0}, b = {0};
  const char *ida;
  json_object *msg;

  harness_initialize(&h, "2025-11-25");
  harness_clear(&h);
  ida = session_request(h.session, "roots/list", NULL, record_reply, &a);
  ck_assert_ptr_nonnull(
      session_request(h.session, "roots/list", NULL, record_reply, &b));
  harness_clear(&h);
  /* Giving up tells the client and answers the caller at once. */
  session_cancel_request(h.session, ida, -32001, "timed out");
  ck_assert_uint_eq(h.cap.n, 1);
  msg = harness_msg(&h, 0);
  ck_assert_str_eq(json_object_get_string(json_path(msg, "method")),
                   "notifications/cancelled");
  ck_assert_str_eq(json_object_get_string(json_path(msg, "params.requestId")),
                   "mcpd-1");
  json_object_put(msg);
  ck_assert_int_eq(a.calls, 1);
  ck_assert_int_eq(a.code, -32001);
  /* A late answer to it is dropped; cancelling twice does nothing. */
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":\"mcpd-1\",\"result\":{}}");
  session_cancel_request(h.session, "mcpd-1", -32001, "again");
  ck_assert_int_eq(a.calls, 1);
  /* An answer that is neither result nor error fails the request. */
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":\"mcpd-2\",\"error\":7}");
  ck_assert_int_eq(b.calls, 1);
  ck_assert_int_eq(b.code, -32600);
  /* The session ending answers what is still pending. */
  {
    reply_seen c = {0};
    ck_assert_ptr_nonnull(
        session_request(h.session, "roots/list", NULL, record_reply, &c));
    server_close_session(&h.srv, h.session);
    h.session = NULL;
    ck_assert_int_eq(c.calls, 1);
    ck_assert_int_eq(c.code, -32000);
  }
}
END_TEST

static void setup_good(void) {
  harness_init(&h, NULL);
  harness_session(&h);
  harness_copy(&h, "good.so", "good.so");
  loader_scan(&h.srv.loader);
  harness_initialize(&h, "2025-11-25");
}

/* A cancelled request gets no response from a client's session; a
 * worker's session (answer_cancelled: its peer is the host) answers it
 * with what its call ended with.  Either way the request is over. */
START_TEST(test_cancelled_request_answered_only_to_a_host) {
  json_object *msg;

  h.session->answer_cancelled = _i;
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"slow\",\"arguments\":"
                   "{\"ms\":20000}}}");
  harness_line(&h, "{\"jsonrpc\":\"2.0\",\"method\":"
                   "\"notifications/cancelled\",\"params\":{\"requestId\":1}}");
  harness_run_until(&h, harness_calls_done, NULL);
  ck_assert_uint_eq(h.session->requests_in_flight, 0);
  if (!_i) {
    ck_assert_int_eq(harness_response_index(&h, 1), -1);
    return;
  }
  msg = harness_msg(&h, (size_t)harness_response_index(&h, 1));
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.content.0.text")),
      "cancelled");
  json_object_put(msg);
}
END_TEST

Suite *session_suite(void) {
  Suite *s = suite_create("session");
  TCase *tc;

  tc = tcase_create("lifecycle");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_ping_before_initialize);
  tcase_add_test(tc, test_tools_list_before_initialize);
  tcase_add_loop_test(tc, test_initialize_each_version, 0, 7);
  tcase_add_test(tc, test_initialize_needs_version);
  tcase_add_test(tc, test_initialize_instructions);
  tcase_add_test(tc, test_second_initialize);
  tcase_add_test(tc, test_notify_only_when_initialized);
  suite_add_tcase(s, tc);

  tc = tcase_create("errors");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_unknown_method);
  tcase_add_test(tc, test_params_not_object);
  tcase_add_test(tc, test_parse_error_reply);
  tcase_add_test(tc, test_invalid_request_reply);
  tcase_add_test(tc, test_bare_number_is_invalid_request);
  tcase_add_test(tc, test_client_response_ignored);
  tcase_add_test(tc, test_oversize);
  tcase_add_test(tc, test_set_level);
  tcase_add_test(tc, test_tools_list_bad_cursor);
  tcase_add_test(tc, test_tools_call_unknown_and_bad_params);
  suite_add_tcase(s, tc);

  tc = tcase_create("batches");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_batch_2025_03_26);
  tcase_add_test(tc, test_batch_2024_11_05_notifications_only);
  tcase_add_test(tc, test_batch_no_initialize_inside);
  tcase_add_test(tc, test_batch_refused_2025_11_25);
  tcase_add_test(tc, test_batch_refused_2025_06_18);
  tcase_add_test(tc, test_batch_before_initialize);
  tcase_add_test(tc, test_empty_batch);
  suite_add_tcase(s, tc);

  tc = tcase_create("cancel");
  tcase_add_checked_fixture(tc, setup_good, teardown);
  tcase_add_loop_test(tc, test_cancelled_request_answered_only_to_a_host, 0, 2);
  suite_add_tcase(s, tc);

  tc = tcase_create("ids");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_huge_id_refused);
  tcase_add_test(tc, test_valid_json_edges_served);
  tcase_add_test(tc, test_unservable_number_refused_with_id);
  tcase_add_test(tc, test_int64_ids_echoed);
  suite_add_tcase(s, tc);

  tc = tcase_create("strict_text");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_not_json_refused);
  tcase_add_test(tc, test_astral_escape_round_trip);
  tcase_add_test(tc, test_fresh_state_after_error);
  tcase_add_test(tc, test_method_with_nul);
  tcase_add_test(tc, test_initialize_version_with_nul);
  tcase_add_test(tc, test_null_id_error_response_ignored);
  suite_add_tcase(s, tc);

  tc = tcase_create("outgoing");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_outgoing_request_answered);
  tcase_add_test(tc, test_outgoing_request_cancelled_and_session_end);
  suite_add_tcase(s, tc);
  return s;
}
