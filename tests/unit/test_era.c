/* SPDX-License-Identifier: MIT */
/* test_era.c -- the era rules as a client meets them, without a loop: the
 * revisions served, each envelope check and its code, where a request is
 * routed on each kind of connection and over HTTP, what a modern result
 * carries, the status of each error code, and how headers are compared
 * with the body (numbers by value, strings byte for byte). */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "era.h"
#include "jsonrpc.h"
#include "strbuf.h"
#include "unit.h"

/* --- versions ------------------------------------------------------------ */

START_TEST(test_version_lists) {
  static const char *const legacy[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                       "2024-11-05"};
  for (size_t i = 0; i < 4; i++) {
    ck_assert_str_eq(era_legacy_versions[i], legacy[i]);
    ck_assert(era_is_legacy_version(legacy[i]));
    ck_assert(!era_is_modern_version(legacy[i]));
  }
  ck_assert_ptr_null(era_legacy_versions[4]);
  ck_assert_str_eq(era_modern_versions[0], "2026-07-28");
  ck_assert_ptr_null(era_modern_versions[1]);
  ck_assert(era_is_modern_version("2026-07-28"));
  ck_assert(!era_is_legacy_version("2026-07-28"));
  ck_assert(!era_is_modern_version("2026-07-28 "));
  ck_assert(!era_is_modern_version(NULL));
  ck_assert(!era_is_legacy_version(NULL));
  ck_assert(!era_is_legacy_version("2025-11-2"));
}
END_TEST

START_TEST(test_negotiate_and_rules_per_version) {
  ck_assert_str_eq(era_negotiate("2025-03-26"), "2025-03-26");
  ck_assert_str_eq(era_negotiate("2024-11-05"), "2024-11-05");
  /* Anything not served, the modern revision included, gets the newest
   * legacy one. */
  ck_assert_str_eq(era_negotiate("2026-07-28"), "2025-11-25");
  ck_assert_str_eq(era_negotiate("1999-01-01"), "2025-11-25");
  ck_assert_str_eq(era_negotiate(NULL), "2025-11-25");
  ck_assert(era_version_has_batches("2025-03-26"));
  ck_assert(!era_version_has_batches("2025-11-25"));
  ck_assert(era_version_primes_streams("2025-11-25"));
  ck_assert(!era_version_primes_streams("2025-06-18"));
  ck_assert(!era_version_primes_streams("2024-11-05"));
  ck_assert(!era_version_primes_streams(NULL));
}
END_TEST

START_TEST(test_supported_and_unsupported_data) {
  json_object *list = era_supported_versions();
  json_object *requested = json_object_new_string("2099-01-01");
  json_object *data = era_unsupported_data(requested);

  ck_assert_str_eq(plain(list), "[\"2026-07-28\"]");
  ck_assert_str_eq(plain(data), "{\"supported\":[\"2026-07-28\"],"
                                "\"requested\":\"2099-01-01\"}");
  json_object_put(data);
  data = era_unsupported_data(NULL);
  ck_assert_str_eq(plain(data),
                   "{\"supported\":[\"2026-07-28\"],\"requested\":null}");
  json_object_put(data);
  json_object_put(requested);
  json_object_put(list);
}
END_TEST

START_TEST(test_log_levels) {
  static const char *const names[] = {"debug",   "info",     "notice",
                                      "warning", "error",    "critical",
                                      "alert",   "emergency"};
  for (int i = 0; i < 8; i++) {
    ck_assert_int_eq(era_log_level(names[i]), i);
    ck_assert_str_eq(era_log_level_name(i), names[i]);
  }
  ck_assert_int_eq(era_log_level("warn"), -1);
  ck_assert_int_eq(era_log_level("DEBUG"), -1);
  ck_assert_int_eq(era_log_level(NULL), -1);
  ck_assert_str_eq(era_log_level_name(8), "info");
  ck_assert_str_eq(era_log_level_name(-1), "info");
}
END_TEST

/* --- the envelope -------------------------------------------------------- */

#define V "\"io.modelcontextprotocol/protocolVersion\""
#define C "\"io.modelcontextprotocol/clientCapabilities\""
#define I "\"io.modelcontextprotocol/clientInfo\""
#define L "\"io.modelcontextprotocol/logLevel\""

/* Checks envelope `meta_text`; returns the code (0 when it passed). */
static int envelope(const char *meta_text, era_envelope *env, char *msg,
                    size_t size) {
  json_object *meta = parse_json(meta_text);
  era_error err;
  int code = 0;

  if (era_check_envelope(meta, env, &err) != 0) {
    code = err.code;
    snprintf(msg, size, "%s%s%s", err.message, err.data ? " " : "",
             err.data ? plain(err.data) : "");
    json_object_put(err.data);
  }
  json_object_put(meta);
  return code;
}

START_TEST(test_envelope_each_invalid_params_case) {
  static const struct {
    const char *meta;
    const char *names; /* what the message names */
  } cases[] = {
      {"{" V ":20260728," C ":{}}", "protocolVersion\"] must be a string"},
      {"{" V ":null," C ":{}}", "protocolVersion\"] must be a string"},
      {"{" V ":\"2026-07-28\"}", "clientCapabilities\"] must be an object"},
      {"{" V ":\"2026-07-28\"," C ":[]}",
       "clientCapabilities\"] must be an object"},
      {"{" V ":\"2026-07-28\"," C ":{}," I ":\"me\"}",
       "clientInfo\"] must be an object"},
      {"{" V ":\"2026-07-28\"," C ":{}," L ":\"loud\"}",
       "logLevel\"] must be one of debug"},
      {"{" V ":\"2026-07-28\"," C ":{}," L ":3}",
       "logLevel\"] must be one of debug"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    era_envelope env;
    char msg[600];
    ck_assert_int_eq(envelope(cases[i].meta, &env, msg, sizeof(msg)),
                     JSONRPC_INVALID_PARAMS);
    ck_assert_msg(strstr(msg, cases[i].names) != NULL, "case %zu: %s", i, msg);
    ck_assert_msg(strncmp(msg, "Invalid params: ", 16) == 0, "%s", msg);
  }
}
END_TEST

START_TEST(test_envelope_shape_before_version) {
  era_envelope env;
  char msg[600];
  /* An unsupported version with a bad shape is a shape error first. */
  ck_assert_int_eq(envelope("{" V ":\"2099-01-01\"}", &env, msg, sizeof(msg)),
                   JSONRPC_INVALID_PARAMS);
}
END_TEST

START_TEST(test_envelope_unsupported_version) {
  era_envelope env;
  char msg[600];
  ck_assert_int_eq(
      envelope("{" V ":\"2025-11-25\"," C ":{}}", &env, msg, sizeof(msg)),
      ERA_ERR_UNSUPPORTED_VERSION);
  ck_assert_str_eq(msg, "Unsupported protocol version: 2025-11-25 (this "
                        "server speaks 2026-07-28) {\"supported\":["
                        "\"2026-07-28\"],\"requested\":\"2025-11-25\"}");
}
END_TEST

/* A version or log level with a NUL character is none served, however
 * it starts. */
START_TEST(test_envelope_nul_in_version) {
  era_envelope env;
  char msg[600];
  ck_assert_int_eq(envelope("{" V ":\"2026-07-28\\u0000x\"," C ":{}}", &env,
                            msg, sizeof(msg)),
                   ERA_ERR_UNSUPPORTED_VERSION);
  ck_assert_int_eq(envelope("{" V ":\"2026-07-28\"," C ":{}," L
                            ":\"debug\\u0000\"}",
                            &env, msg, sizeof(msg)),
                   JSONRPC_INVALID_PARAMS);
}
END_TEST

START_TEST(test_envelope_accepted) {
  json_object *meta =
      parse_json("{" V ":\"2026-07-28\"," C ":{\"sampling\":{}}," I
                 ":{\"name\":\"c\"}," L ":\"warning\",\"other\":1}");
  era_envelope env;
  era_error err;

  ck_assert_int_eq(era_check_envelope(meta, &env, &err), 0);
  ck_assert_str_eq(env.version, "2026-07-28");
  ck_assert_str_eq(plain(env.capabilities), "{\"sampling\":{}}");
  ck_assert_str_eq(plain(env.client_info), "{\"name\":\"c\"}");
  ck_assert_int_eq(env.log_level, 3);
  json_object_put(meta);

  /* No log level: no log lines. */
  meta = parse_json("{" V ":\"2026-07-28\"," C ":{}}");
  ck_assert_int_eq(era_check_envelope(meta, &env, &err), 0);
  ck_assert_int_eq(env.log_level, -1);
  ck_assert_ptr_null(env.client_info);
  json_object_put(meta);
}
END_TEST

/* --- routing ------------------------------------------------------------- */

#define CLAIM "{\"_meta\":{" V ":\"2026-07-28\"," C ":{}}}"

typedef struct route_case {
  era_conn conn;
  const char *method;
  const char *params;
  era_route route;
  era_conn pin;
  int code; /* for ERA_ROUTE_REFUSED */
} route_case;

START_TEST(test_route_per_connection) {
  static const route_case cases[] = {
      /* Claim-less requests keep the legacy path until the connection is
       * modern; initialize pins it legacy. */
      {ERA_CONN_UNDECIDED, "ping", "{}", ERA_ROUTE_LEGACY, ERA_CONN_UNDECIDED,
       0},
      {ERA_CONN_UNDECIDED, "initialize", "{}", ERA_ROUTE_LEGACY,
       ERA_CONN_LEGACY, 0},
      {ERA_CONN_LEGACY, "tools/list", "{}", ERA_ROUTE_LEGACY, ERA_CONN_LEGACY,
       0},
      /* server/discover is answered anywhere and pins nothing. */
      {ERA_CONN_UNDECIDED, "server/discover", CLAIM, ERA_ROUTE_MODERN,
       ERA_CONN_UNDECIDED, 0},
      {ERA_CONN_LEGACY, "server/discover", CLAIM, ERA_ROUTE_MODERN,
       ERA_CONN_LEGACY, 0},
      /* The first other claimed request pins it modern. */
      {ERA_CONN_UNDECIDED, "tools/list", CLAIM, ERA_ROUTE_MODERN,
       ERA_CONN_MODERN, 0},
      {ERA_CONN_MODERN, "tools/call", CLAIM, ERA_ROUTE_MODERN, ERA_CONN_MODERN,
       0},
      /* A claimed initialize is a modern request (for a method that is not
       * there). */
      {ERA_CONN_UNDECIDED, "initialize", CLAIM, ERA_ROUTE_MODERN,
       ERA_CONN_MODERN, 0},
      /* The other era's requests are refused. */
      {ERA_CONN_LEGACY, "tools/list", CLAIM, ERA_ROUTE_REFUSED, ERA_CONN_LEGACY,
       JSONRPC_INVALID_REQUEST},
      {ERA_CONN_MODERN, "tools/list", "{}", ERA_ROUTE_REFUSED, ERA_CONN_MODERN,
       JSONRPC_INVALID_PARAMS},
      {ERA_CONN_MODERN, "initialize", "{\"protocolVersion\":\"2025-11-25\"}",
       ERA_ROUTE_REFUSED, ERA_CONN_MODERN, ERA_ERR_UNSUPPORTED_VERSION},
      /* A bad envelope pins nothing. */
      {ERA_CONN_UNDECIDED, "tools/list", "{\"_meta\":{" V ":\"2026-07-28\"}}",
       ERA_ROUTE_REFUSED, ERA_CONN_UNDECIDED, JSONRPC_INVALID_PARAMS},
      {ERA_CONN_UNDECIDED, "tools/list", "{\"_meta\":{" V ":\"1.0\"," C ":{}}}",
       ERA_ROUTE_REFUSED, ERA_CONN_UNDECIDED, ERA_ERR_UNSUPPORTED_VERSION},
      /* _meta that is not an object claims nothing. */
      {ERA_CONN_UNDECIDED, "tools/list", "{\"_meta\":[1]}", ERA_ROUTE_LEGACY,
       ERA_CONN_UNDECIDED, 0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    json_object *params = parse_json(cases[i].params);
    era_envelope env;
    era_error err = {0};
    era_conn pin;
    era_route got = era_route_request(cases[i].conn, cases[i].method, params,
                                      &pin, &env, &err);
    ck_assert_msg(got == cases[i].route, "case %zu: route %d", i, (int)got);
    if (got == ERA_ROUTE_REFUSED)
      ck_assert_msg(err.code == cases[i].code, "case %zu: code %d", i,
                    err.code);
    else
      ck_assert_msg(pin == cases[i].pin, "case %zu: pin %d", i, (int)pin);
    json_object_put(err.data);
    json_object_put(params);
  }
}
END_TEST

START_TEST(test_route_refused_initialize_data) {
  json_object *params = parse_json("{\"protocolVersion\":\"2025-06-18\"}");
  era_envelope env;
  era_error err;
  era_conn pin;

  ck_assert_int_eq(era_route_request(ERA_CONN_MODERN, "initialize", params,
                                     &pin, &env, &err),
                   ERA_ROUTE_REFUSED);
  ck_assert_str_eq(plain(err.data), "{\"supported\":[\"2026-07-28\"],"
                                    "\"requested\":\"2025-06-18\"}");
  json_object_put(err.data);
  json_object_put(params);
}
END_TEST

START_TEST(test_route_post) {
  static const struct {
    int sid;
    const char *body;
    const char *header;
    era_route route;
    int code;
    const char *id; /* the id answered with, as JSON; NULL for none */
  } cases[] = {
      {0,
       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/"
       "list\",\"params\":" CLAIM "}",
       "2026-07-28", ERA_ROUTE_MODERN, 0, NULL},
      /* A claim decides even with a legacy header (the version header is
       * compared with the body later). */
      {0,
       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/"
       "list\",\"params\":" CLAIM "}",
       "2025-11-25", ERA_ROUTE_MODERN, 0, NULL},
      /* A session's POST, a batch, a response: legacy, whatever they say. */
      {1,
       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/"
       "list\",\"params\":" CLAIM "}",
       "2026-07-28", ERA_ROUTE_LEGACY, 0, NULL},
      {0, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", "2026-07-28",
       ERA_ROUTE_LEGACY, 0, NULL},
      {0, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "2026-07-28",
       ERA_ROUTE_LEGACY, 0, NULL},
      {0, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}", NULL,
       ERA_ROUTE_LEGACY, 0, NULL},
      {0, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
       "2025-06-18", ERA_ROUTE_LEGACY, 0, NULL},
      {0, "{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\"}",
       "2026-07-28", ERA_ROUTE_REFUSED, ERA_ERR_HEADER_MISMATCH, "\"i\""},
      {0, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}",
       "2026-07-28", ERA_ROUTE_REFUSED, JSONRPC_INVALID_PARAMS, "7"},
      /* An id that is no id is not echoed. */
      {0, "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"tools/list\"}",
       "2026-07-28", ERA_ROUTE_REFUSED, JSONRPC_INVALID_PARAMS, NULL},
      {0, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
       "2026-07-28", ERA_ROUTE_REFUSED, JSONRPC_INVALID_PARAMS, NULL},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    json_object *body = parse_json(cases[i].body), *id;
    era_error err = {0};
    era_route got =
        era_route_post(cases[i].sid, body, cases[i].header, &err, &id);
    ck_assert_msg(got == cases[i].route, "case %zu: route %d", i, (int)got);
    if (got == ERA_ROUTE_REFUSED) {
      ck_assert_msg(err.code == cases[i].code, "case %zu: code %d", i,
                    err.code);
      if (cases[i].id == NULL)
        ck_assert_ptr_null(id);
      else
        ck_assert_str_eq(plain(id), cases[i].id);
    }
    json_object_put(body);
  }
}
END_TEST

/* --- modern results ------------------------------------------------------ */

#define SERVER_INFO                                                            \
  "\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"mcpd\","      \
  "\"title\":\"mcpd\",\"version\":\"" PACKAGE_VERSION "\"}}"

START_TEST(test_result_head) {
  era_result_info plain_info = {NULL, NULL, 0};
  era_result_info cached = {NULL, "public", 10000};
  era_result_info input = {"input_required", NULL, 0};
  char buf[512];
  size_t n;

  n = era_result_head(&plain_info, buf, sizeof(buf));
  ck_assert_uint_eq(n, strlen(buf));
  ck_assert_str_eq(buf, "\"resultType\":\"complete\"," SERVER_INFO);
  era_result_head(&cached, buf, sizeof(buf));
  ck_assert_str_eq(buf, "\"resultType\":\"complete\"," SERVER_INFO
                        ",\"ttlMs\":10000,\"cacheScope\":\"public\"");
  era_result_head(&input, buf, sizeof(buf));
  ck_assert_str_eq(buf, "\"resultType\":\"input_required\"," SERVER_INFO);
  /* Too small: nothing rather than a cut head. */
  ck_assert_uint_eq(era_result_head(&plain_info, buf, 10), 0);
}
END_TEST

START_TEST(test_result_can_splice) {
  ck_assert(era_result_can_splice("{\"content\":[]}", 14));
  ck_assert(era_result_can_splice("{}", 2));
  ck_assert(!era_result_can_splice("{\"_meta\":{}}", 12));
  ck_assert(!era_result_can_splice("{\"resultType\":\"x\"}", 18));
  ck_assert(!era_result_can_splice("{\"ttlMs\":1}", 11));
  ck_assert(!era_result_can_splice("{\"cacheScope\":1}", 16));
  ck_assert(!era_result_can_splice("[]", 2));
  ck_assert(!era_result_can_splice("{", 1));
}
END_TEST

START_TEST(test_result_decorate) {
  era_result_info info = {NULL, "public", 0};
  era_result_info bare = {NULL, NULL, 0};
  json_object *r;

  r = era_result_decorate(&bare, NULL);
  ck_assert_str_eq(plain(r), "{\"resultType\":\"complete\"," SERVER_INFO "}");
  json_object_put(r);
  /* Its own _meta keeps its members; a serverInfo of its own is ours. */
  r = era_result_decorate(
      &info, parse_json("{\"x\":1,\"_meta\":{\"k\":\"v\","
                        "\"io.modelcontextprotocol/serverInfo\":0}}"));
  ck_assert_str_eq(plain(json_path(r, "_meta.k")), "\"v\"");
  ck_assert_str_eq(
      plain(json_path(r, "_meta")),
      "{\"k\":\"v\",\"io.modelcontextprotocol/serverInfo\":{"
      "\"name\":\"mcpd\",\"title\":\"mcpd\",\"version\":\"" PACKAGE_VERSION
      "\"}}");
  ck_assert_str_eq(plain(json_path(r, "resultType")), "\"complete\"");
  ck_assert_str_eq(plain(json_path(r, "ttlMs")), "0");
  ck_assert_str_eq(plain(json_path(r, "cacheScope")), "\"public\"");
  ck_assert_str_eq(plain(json_path(r, "x")), "1");
  json_object_put(r);
  /* Not an object: left as it is. */
  r = era_result_decorate(&info, json_object_new_int(3));
  ck_assert_str_eq(plain(r), "3");
  json_object_put(r);
}
END_TEST

/* --- HTTP ---------------------------------------------------------------- */

START_TEST(test_status_per_code) {
  static const struct {
    int code;
    unsigned status;
  } cases[] = {
      {0, 200},      {-32601, 404}, {-32700, 400}, {-32600, 400}, {-32602, 400},
      {-32020, 400}, {-32021, 400}, {-32022, 400}, {-32603, 200}, {-32000, 200},
      {-32001, 200}, {-32002, 200}, {-32042, 200}, {-32099, 200}, {1, 200},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    ck_assert_msg(era_http_status(cases[i].code) == cases[i].status,
                  "code %d: %u", cases[i].code, era_http_status(cases[i].code));
}
END_TEST

START_TEST(test_header_decode) {
  strbuf b = {0};

  ck_assert_int_eq(era_header_decode(NULL, &b), 0);
  ck_assert_int_eq(era_header_decode(" \teu-west-1 \t", &b), 1);
  ck_assert_uint_eq(b.len, 9);
  ck_assert_int_eq(memcmp(b.data, "eu-west-1", 9), 0);
  ck_assert_int_eq(era_header_decode("", &b), 1);
  ck_assert_uint_eq(b.len, 0);
  /* "=?base64?...?=" (any case) is decoded: "é\n". */
  ck_assert_int_eq(era_header_decode(" =?BASE64?w6kK?= ", &b), 1);
  ck_assert_uint_eq(b.len, 3);
  ck_assert_int_eq(memcmp(b.data, "\xc3\xa9\n", 3), 0);
  ck_assert_int_eq(era_header_decode("=?base64?!!!?=", &b), -1);
  /* Not the whole pattern: taken as it is. */
  ck_assert_int_eq(era_header_decode("=?base64?w6k", &b), 1);
  ck_assert_uint_eq(b.len, 12);
  strbuf_free(&b);
}
END_TEST

/* Headers by name for the era_header_fn tests: NULL-terminated pairs. */
typedef struct fake_headers {
  const char *const *pairs;
} fake_headers;

static int fake_header(void *ctx, const char *name, strbuf *out) {
  const fake_headers *f = ctx;
  for (size_t i = 0; f->pairs[i] != NULL; i += 2)
    if (strcasecmp(f->pairs[i], name) == 0)
      return era_header_decode(f->pairs[i + 1], out);
  out->len = 0;
  return 0;
}

/* era_check_headers for `method` with `params`; returns the code, 0 when
 * it passed, and the message in `msg`. */
static int check_headers(const char *const *pairs, const char *method,
                         const char *params_text, char *msg, size_t size) {
  fake_headers f = {pairs};
  json_object *params = parse_json(params_text);
  era_error err;
  int code = 0;

  msg[0] = '\0';
  if (era_check_headers(fake_header, &f, method, params, &err) != 0) {
    code = err.code;
    snprintf(msg, size, "%s", err.message);
  }
  json_object_put(params);
  return code;
}

START_TEST(test_standard_headers) {
  static const char *const good[] = {"MCP-Protocol-Version",
                                     "2026-07-28",
                                     "Mcp-Method",
                                     "tools/call",
                                     "Mcp-Name",
                                     "echo",
                                     NULL};
  static const char *const no_version[] = {"Mcp-Method", "tools/list", NULL};
  static const char *const no_method[] = {"MCP-Protocol-Version", "2026-07-28",
                                          NULL};
  static const char *const other_name[] = {"MCP-Protocol-Version",
                                           "2026-07-28",
                                           "Mcp-Method",
                                           "tools/call",
                                           "Mcp-Name",
                                           "Echo",
                                           NULL};
  static const char *const prompt[] = {"MCP-Protocol-Version",
                                       "2026-07-28",
                                       "Mcp-Method",
                                       "prompts/get",
                                       "Mcp-Name",
                                       "Echo",
                                       NULL};
  static const char *const uri[] = {"MCP-Protocol-Version",
                                    "2026-07-28",
                                    "Mcp-Method",
                                    "resources/read",
                                    "Mcp-Name",
                                    "=?base64?ZmlsZTovLy90bXAvw6k=?=",
                                    NULL};
  char msg[400];

  ck_assert_int_eq(check_headers(good, "tools/call", "{\"name\":\"echo\"}", msg,
                                 sizeof(msg)),
                   0);
  ck_assert_int_eq(
      check_headers(no_version, "tools/list", "{}", msg, sizeof(msg)),
      ERA_ERR_HEADER_MISMATCH);
  ck_assert_str_eq(msg, "Header mismatch: the MCP-Protocol-Version header "
                        "is required");
  ck_assert_int_eq(
      check_headers(no_method, "tools/list", "{}", msg, sizeof(msg)),
      ERA_ERR_HEADER_MISMATCH);
  ck_assert_str_eq(msg, "Header mismatch: the Mcp-Method header is required");
  ck_assert_int_eq(check_headers(good, "tools/list", "{}", msg, sizeof(msg)),
                   ERA_ERR_HEADER_MISMATCH);
  ck_assert_str_eq(msg, "Header mismatch: the Mcp-Method header does not "
                        "match the request body");
  /* Names compare byte for byte. */
  ck_assert_int_eq(check_headers(other_name, "tools/call",
                                 "{\"name\":\"echo\"}", msg, sizeof(msg)),
                   ERA_ERR_HEADER_MISMATCH);
  ck_assert_str_eq(msg, "Header mismatch: the Mcp-Name header does not "
                        "match the request body");
  /* prompts/get names its prompt there too. */
  ck_assert_int_eq(check_headers(prompt, "prompts/get", "{\"name\":\"echo\"}",
                                 msg, sizeof(msg)),
                   ERA_ERR_HEADER_MISMATCH);
  ck_assert_str_eq(msg, "Header mismatch: the Mcp-Name header does not "
                        "match the request body");
  ck_assert_int_eq(check_headers(prompt, "prompts/get", "{\"name\":\"Echo\"}",
                                 msg, sizeof(msg)),
                   0);
  /* The name missing from the body is the handler's to answer. */
  ck_assert_int_eq(check_headers(good, "tools/call", "{}", msg, sizeof(msg)),
                   0);
  /* A URI with non-ASCII bytes travels base64-encoded. */
  ck_assert_int_eq(check_headers(uri, "resources/read",
                                 "{\"uri\":\"file:///tmp/\\u00e9\"}", msg,
                                 sizeof(msg)),
                   0);
}
END_TEST

START_TEST(test_version_header_against_body) {
  json_object *claimed = parse_json(CLAIM);
  json_object *bare = parse_json("{}");
  era_error err;

  ck_assert_int_eq(era_check_version_header(NULL, claimed, &err), 0);
  ck_assert_int_eq(era_check_version_header("2026-07-28", claimed, &err), 0);
  ck_assert_int_eq(era_check_version_header(" 2026-07-28\t", claimed, &err), 0);
  ck_assert_int_eq(era_check_version_header("2025-11-25", bare, &err), 0);
  ck_assert_int_eq(era_check_version_header("2025-11-25", claimed, &err), -1);
  ck_assert_int_eq(err.code, ERA_ERR_HEADER_MISMATCH);
  ck_assert_str_eq(err.message,
                   "Header mismatch: the MCP-Protocol-Version header differs "
                   "from _meta[\"io.modelcontextprotocol/protocolVersion\"]");
  json_object_put(claimed);
  json_object_put(bare);
}
END_TEST

static int eq(const char *arg_json, const char *header) {
  json_object *arg = parse_json(arg_json);
  int rc = era_param_equal(arg, header, strlen(header));
  json_object_put(arg);
  return rc;
}

START_TEST(test_param_numbers) {
  /* Numbers compare by value, as JSON writes them. */
  ck_assert(eq("100", "100"));
  ck_assert(eq("100", "1e2"));
  ck_assert(eq("100", "1E+2"));
  ck_assert(eq("100", "100.0"));
  ck_assert(eq("100", "10000e-2"));
  ck_assert(!eq("100", "101"));
  ck_assert(!eq("100", "0x64"));
  ck_assert(!eq("100", "+100"));
  ck_assert(!eq("100", " 100"));
  ck_assert(!eq("100", "100 "));
  ck_assert(!eq("100", "0100"));
  ck_assert(!eq("100", "1e"));
  ck_assert(!eq("100", "100."));
  ck_assert(!eq("100", ".1e3"));
  ck_assert(!eq("100", ""));
  ck_assert(!eq("100", "inf"));
  /* Negative zero is zero. */
  ck_assert(eq("0", "-0"));
  ck_assert(eq("0", "-0.0"));
  ck_assert(eq("0.0", "-0"));
  ck_assert(eq("-7", "-7"));
  ck_assert(!eq("-7", "7"));
  ck_assert(eq("1.5", "15e-1"));
  ck_assert(eq("1.5", "1.50"));
  ck_assert(!eq("1.5", "1.25"));
}
END_TEST

START_TEST(test_param_big_integers) {
  json_object *umax = json_object_new_uint64(UINT64_MAX);

  ck_assert(eq("9223372036854775807", "9223372036854775807"));
  ck_assert(!eq("9223372036854775807", "9223372036854775808"));
  ck_assert(!eq("9223372036854775807", "9223372036854775806"));
  ck_assert(eq("-9223372036854775808", "-9223372036854775808"));
  ck_assert(!eq("-9223372036854775808", "-9223372036854775809"));
  /* Past 2^53 only the exact integer text matches: a double there stands
   * for several integers. */
  ck_assert(eq("9007199254740993", "9007199254740993"));
  ck_assert(!eq("9007199254740993", "9007199254740992"));
  ck_assert(!eq("9007199254740993", "9.007199254740993e15"));
  ck_assert(eq("4503599627370496", "4.503599627370496e15"));
  ck_assert(era_param_equal(umax, "18446744073709551615", 20));
  ck_assert(!era_param_equal(umax, "18446744073709551614", 20));
  ck_assert(!era_param_equal(umax, "18446744073709551616", 20));
  json_object_put(umax);
  /* A header value with a NUL in it is no number. */
  {
    json_object *seven = json_object_new_int(7);
    ck_assert(!era_param_equal(seven, "7\0", 2));
    ck_assert(era_param_equal(seven, "7\0", 1));
    json_object_put(seven);
  }
}
END_TEST

START_TEST(test_param_strings_and_booleans) {
  json_object *s = parse_json("\"a\\\"b\\\\c\\u00e9\"");
  /* The string's value, not its JSON text. */
  ck_assert(era_param_equal(s, "a\"b\\c\xc3\xa9", 7));
  ck_assert(
      !era_param_equal(s, "a\\\"b\\\\c\\u00e9", strlen("a\\\"b\\\\c\\u00e9")));
  ck_assert(!era_param_equal(s, "a\"b\\c", 5));
  json_object_put(s);
  ck_assert(eq("\"100\"", "100"));
  ck_assert(!eq("\"100\"", "1e2"));
  ck_assert(eq("\"\"", ""));
  ck_assert(eq("true", "true"));
  ck_assert(eq("false", "false"));
  ck_assert(!eq("true", "True"));
  ck_assert(!eq("true", "1"));
  ck_assert(!eq("false", "true"));
  /* Objects and arrays are not mirrored in headers. */
  ck_assert(eq("{\"a\":1}", "whatever"));
  ck_assert(eq("[1]", ""));
}
END_TEST

#define PARAM_SCHEMA                                                           \
  "{\"type\":\"object\",\"properties\":{"                                      \
  "\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},"              \
  "\"priority\":{\"type\":\"integer\",\"x-mcp-header\":\"Priority\"},"         \
  "\"query\":{\"type\":\"string\"}}}"

static int param_check(const char *const *pairs, const char *args_text,
                       char *msg, size_t size) {
  fake_headers f = {pairs};
  json_object *schema = parse_json(PARAM_SCHEMA);
  json_object *args = args_text != NULL ? parse_json(args_text) : NULL;
  era_error err;
  int code = 0;

  msg[0] = '\0';
  if (era_check_param_headers(fake_header, &f, schema, args, &err) != 0) {
    code = err.code;
    snprintf(msg, size, "%s", err.message);
  }
  json_object_put(args);
  json_object_put(schema);
  return code;
}

START_TEST(test_param_headers) {
  static const char *const both[] = {"Mcp-Param-Region", "eu",
                                     "Mcp-Param-Priority", "1e1", NULL};
  static const char *const region[] = {"Mcp-Param-Region", "eu", NULL};
  static const char *const none[] = {NULL};
  static const char *const bad[] = {"Mcp-Param-Region", "=?base64?%%?=", NULL};
  char msg[400];

  ck_assert_int_eq(param_check(both, "{\"region\":\"eu\",\"priority\":10}", msg,
                               sizeof(msg)),
                   0);
  ck_assert_int_eq(param_check(region, "{\"region\":\"eu\",\"query\":\"q\"}",
                               msg, sizeof(msg)),
                   0);
  /* A null argument is an absent one. */
  ck_assert_int_eq(param_check(region, "{\"region\":\"eu\",\"priority\":null}",
                               msg, sizeof(msg)),
                   0);
  ck_assert_int_eq(param_check(none, "{\"region\":\"eu\"}", msg, sizeof(msg)),
                   ERA_ERR_HEADER_MISMATCH);
  ck_assert_str_eq(msg, "Header mismatch: the Mcp-Param-Region header is "
                        "required: its argument is in the body");
  ck_assert_int_eq(param_check(both, "{\"region\":\"eu\"}", msg, sizeof(msg)),
                   ERA_ERR_HEADER_MISMATCH);
  ck_assert_str_eq(msg, "Header mismatch: the Mcp-Param-Priority header has "
                        "no argument in the body");
  ck_assert_int_eq(param_check(both, "{\"region\":\"eu\",\"priority\":11}", msg,
                               sizeof(msg)),
                   ERA_ERR_HEADER_MISMATCH);
  ck_assert_str_eq(msg, "Header mismatch: the Mcp-Param-Priority header does "
                        "not match the request body");
  ck_assert_int_eq(param_check(bad, "{\"region\":\"eu\"}", msg, sizeof(msg)),
                   ERA_ERR_HEADER_MISMATCH);
  ck_assert_str_eq(msg, "Header mismatch: the Mcp-Param-Region header is not "
                        "valid (bad =?base64?...?= encoding)");
  /* No arguments at all, no headers: nothing to compare. */
  ck_assert_int_eq(param_check(none, NULL, msg, sizeof(msg)), 0);
}
END_TEST

Suite *era_suite(void) {
  Suite *s = suite_create("era");
  TCase *tc = tcase_create("versions");
  tcase_add_test(tc, test_version_lists);
  tcase_add_test(tc, test_negotiate_and_rules_per_version);
  tcase_add_test(tc, test_supported_and_unsupported_data);
  tcase_add_test(tc, test_log_levels);
  suite_add_tcase(s, tc);

  tc = tcase_create("envelope");
  tcase_add_test(tc, test_envelope_each_invalid_params_case);
  tcase_add_test(tc, test_envelope_shape_before_version);
  tcase_add_test(tc, test_envelope_unsupported_version);
  tcase_add_test(tc, test_envelope_nul_in_version);
  tcase_add_test(tc, test_envelope_accepted);
  suite_add_tcase(s, tc);

  tc = tcase_create("routing");
  tcase_add_test(tc, test_route_per_connection);
  tcase_add_test(tc, test_route_refused_initialize_data);
  tcase_add_test(tc, test_route_post);
  suite_add_tcase(s, tc);

  tc = tcase_create("results");
  tcase_add_test(tc, test_result_head);
  tcase_add_test(tc, test_result_can_splice);
  tcase_add_test(tc, test_result_decorate);
  suite_add_tcase(s, tc);

  tc = tcase_create("http");
  tcase_add_test(tc, test_status_per_code);
  tcase_add_test(tc, test_header_decode);
  tcase_add_test(tc, test_standard_headers);
  tcase_add_test(tc, test_version_header_against_body);
  tcase_add_test(tc, test_param_numbers);
  tcase_add_test(tc, test_param_big_integers);
  tcase_add_test(tc, test_param_strings_and_booleans);
  tcase_add_test(tc, test_param_headers);
  suite_add_tcase(s, tc);
  return s;
}
