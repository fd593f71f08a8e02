/* SPDX-License-Identifier: MIT */
/* test_streamable_modern.c -- 2026-07-28 POSTs through the real HTTP stack
 * (transport_http on a unix socket, streamable, a session per POST, the
 * methods and plugins of a real server), as a client sees them: the
 * status of each answer, its body, the header rules, and the sessions
 * that close with their exchanges; a legacy client is served beside. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader.h"
#include "streamable.h"
#include "unit.h"

#ifndef MCPD_EVERYTHING_SO
#error "MCPD_EVERYTHING_SO must name the built everything plugin"
#endif

static harness h;
static streamable *endpoint;
static char sock_path[PATH_MAX];
static char listen_arg[PATH_MAX + 8];

/* A baseline: the sessions the server has without any HTTP client, and
 * how many more a test expects to stay open (legacy ones). */
static size_t base_sessions, kept_sessions;

static session *open_cb(void *arg, session_write_fn write, void *ctx) {
  return server_open_session(arg, write, ctx);
}

static void close_cb(void *arg, session *s) {
  server_close_session(arg, s);
}

static void setup(void) {
  const char *tmp = getenv("TMPDIR");
  const char *extra[] = {"--transport", "http", "--listen", listen_arg, NULL};
  streamable_cb cb = {open_cb, close_cb, NULL};

  snprintf(sock_path, sizeof(sock_path), "%s/sm-%ld.sock",
           tmp != NULL ? tmp : "/tmp", (long)getpid());
  unlink(sock_path);
  snprintf(listen_arg, sizeof(listen_arg), "unix:%s", sock_path);
  harness_init(&h, extra);
  harness_copy(&h, MCPD_ECHO_SO, "echo.so");
  harness_copy(&h, MCPD_EVERYTHING_SO, "everything.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 2);
  harness_turn(&h);
  cb.arg = &h.srv;
  endpoint = streamable_new(&h.loop, &h.opts.http, &cb);
  ck_assert_ptr_nonnull(endpoint);
  base_sessions = h.srv.n_sessions;
  kept_sessions = 0;
}

static void closed(void *arg) {
  *(int *)arg = 1;
}

static int flag_set(harness *hh, void *arg) {
  (void)hh;
  return *(int *)arg;
}

static void teardown(void) {
  int done = 0;
  streamable_close(endpoint, closed, &done, 0);
  harness_run_until(&h, flag_set, &done);
  harness_free(&h);
  unlink(sock_path);
}

/* --- a client: one request per connection ------------------------------- */

typedef struct client {
  uv_pipe_t pipe;
  uv_connect_t connect;
  uv_write_t write;
  char *request;
  char *response; /* what came back, NUL-terminated */
  size_t len, cap;
  int done;
} client;

static void client_closed(uv_handle_t *handle) {
  client *c = handle->data;
  c->done = 1;
}

static void client_alloc(uv_handle_t *handle, size_t hint, uv_buf_t *buf) {
  client *c = handle->data;
  (void)hint;
  if (c->cap - c->len < 4096) {
    c->cap = c->cap * 2 + 65536;
    c->response = realloc(c->response, c->cap + 1);
    ck_assert_ptr_nonnull(c->response);
  }
  *buf = uv_buf_init(c->response + c->len, (unsigned)(c->cap - c->len));
}

static void client_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf) {
  client *c = stream->data;
  (void)buf;
  if (n > 0) {
    c->len += (size_t)n;
    c->response[c->len] = '\0';
  } else if (n < 0) {
    uv_close((uv_handle_t *)&c->pipe, client_closed);
  }
}

static void client_wrote(uv_write_t *req, int status) {
  (void)req;
  ck_assert_int_eq(status, 0);
}

static void client_connected(uv_connect_t *req, int status) {
  client *c = req->data;
  uv_buf_t buf = uv_buf_init(c->request, (unsigned)strlen(c->request));
  ck_assert_int_eq(status, 0);
  ck_assert_int_eq(
      uv_write(&c->write, (uv_stream_t *)&c->pipe, &buf, 1, client_wrote), 0);
  ck_assert_int_eq(
      uv_read_start((uv_stream_t *)&c->pipe, client_alloc, client_read), 0);
}

static int client_done(harness *hh, void *arg) {
  (void)hh;
  return ((client *)arg)->done;
}

/* An answer as the client reads it. */
typedef struct answer {
  int status;
  char *head;        /* the status line and headers */
  json_object *body; /* the JSON body, or NULL */
  char *raw;         /* the body as it came */
} answer;

static void answer_free(answer *a) {
  free(a->head);
  free(a->raw);
  json_object_put(a->body);
}

/* The body of a chunked answer without its chunk framing, in place. */
static void unchunk(char *body) {
  char *in = body, *out = body, *end;
  unsigned long size;

  while ((size = strtoul(in, &end, 16)) > 0 && strncmp(end, "\r\n", 2) == 0) {
    in = end + 2;
    ck_assert_uint_le(size, strlen(in));
    memmove(out, in, size);
    out += size;
    in += size;
    ck_assert_int_eq(strncmp(in, "\r\n", 2), 0);
    in += 2;
  }
  *out = '\0';
}

/* POSTs `body` to /mcp with `headers` (each a whole line, "\r\n" ended,
 * may be ""), and reads the whole answer (the server closes it). */
static answer post(const char *headers, const char *body) {
  client c = {0};
  answer a = {0};
  size_t size = strlen(headers) + strlen(body) + 512;
  char *split;

  c.request = malloc(size);
  ck_assert_ptr_nonnull(c.request);
  snprintf(c.request, size,
           "POST /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
           "Content-Type: application/json\r\n"
           "Accept: application/json, text/event-stream\r\n"
           "%sContent-Length: %zu\r\n\r\n%s",
           headers, strlen(body), body);
  ck_assert_int_eq(uv_pipe_init(&h.loop, &c.pipe, 0), 0);
  c.pipe.data = &c;
  c.connect.data = &c;
  uv_pipe_connect(&c.connect, &c.pipe, sock_path, client_connected);
  harness_run_until(&h, client_done, &c);
  free(c.request);
  ck_assert_ptr_nonnull(c.response);
  ck_assert_int_eq(sscanf(c.response, "HTTP/1.1 %d", &a.status), 1);
  split = strstr(c.response, "\r\n\r\n");
  ck_assert_ptr_nonnull(split);
  a.head = strndup(c.response, (size_t)(split - c.response));
  a.raw = strdup(split + 4);
  if (strcasestr(a.head, "Transfer-Encoding: chunked") != NULL)
    unchunk(a.raw);
  a.body = json_tokener_parse(a.raw);
  free(c.response);
  /* Whatever the answer, the POST's session is gone with it. */
  harness_turn(&h);
  ck_assert_uint_eq(h.srv.n_sessions, base_sessions + kept_sessions);
  return a;
}

#define ENVELOPE                                                               \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","     \
  "\"io.modelcontextprotocol/clientCapabilities\":{}}"
#define STD_HEADERS(method)                                                    \
  "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: " method "\r\n"

START_TEST(test_tool_call_answered_as_json) {
  answer a = post(STD_HEADERS("tools/call") "Mcp-Name: echo\r\n",
                  "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
                  "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":"
                  "\"hi\"}," ENVELOPE "}}");
  ck_assert_int_eq(a.status, 200);
  ck_assert_ptr_nonnull(strcasestr(a.head, "Content-Type: application/json"));
  ck_assert_ptr_nonnull(a.body);
  ck_assert_str_eq(plain(json_path(a.body, "id")), "5");
  ck_assert_str_eq(plain(json_path(a.body, "result.resultType")),
                   "\"complete\"");
  ck_assert_str_eq(plain(json_path(a.body, "result.content")),
                   "[{\"type\":\"text\",\"text\":\"hi\"}]");
  ck_assert_ptr_nonnull(strstr(a.raw, "\"io.modelcontextprotocol/serverInfo\":"
                                      "{\"name\":\"mcpd\""));
  answer_free(&a);
}
END_TEST

START_TEST(test_status_follows_error_code) {
  answer a;

  /* A method the modern revision does not have: 404, -32601. */
  a = post(
      STD_HEADERS("ping"),
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{" ENVELOPE
      "}}");
  ck_assert_int_eq(a.status, 404);
  ck_assert_int_eq(response_error_code(a.body), -32601);
  answer_free(&a);

  /* An unknown tool is invalid params: 400. */
  a = post(STD_HEADERS("tools/call") "Mcp-Name: nope\r\n",
           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"nope\"," ENVELOPE "}}");
  ck_assert_int_eq(a.status, 400);
  ck_assert_int_eq(response_error_code(a.body), -32602);
  ck_assert_str_eq(plain(json_path(a.body, "id")), "2");
  answer_free(&a);

  /* A revision not served: 400, -32022 with what is. */
  a = post(STD_HEADERS("tools/list"),
           "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\","
           "\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
           "protocolVersion\":\"2030-01-01\",\"io.modelcontextprotocol/"
           "clientCapabilities\":{}}}}");
  /* The header names 2026-07-28 but the body another: that is checked
   * first. */
  ck_assert_int_eq(a.status, 400);
  ck_assert_int_eq(response_error_code(a.body), -32020);
  answer_free(&a);
  a = post("MCP-Protocol-Version: 2030-01-01\r\nMcp-Method: tools/list\r\n",
           "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\","
           "\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
           "protocolVersion\":\"2030-01-01\",\"io.modelcontextprotocol/"
           "clientCapabilities\":{}}}}");
  ck_assert_int_eq(a.status, 400);
  ck_assert_int_eq(response_error_code(a.body), -32022);
  ck_assert_str_eq(plain(json_path(a.body, "error.data")),
                   "{\"supported\":[\"2026-07-28\"],"
                   "\"requested\":\"2030-01-01\"}");
  answer_free(&a);
}
END_TEST

START_TEST(test_standard_headers_checked) {
  answer a;

  a = post(STD_HEADERS("tools/list"),
           "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"prompts/list\","
           "\"params\":{" ENVELOPE "}}");
  ck_assert_int_eq(a.status, 400);
  ck_assert_int_eq(response_error_code(a.body), -32020);
  ck_assert_str_eq(plain(json_path(a.body, "id")), "\"x\"");
  ck_assert_ptr_nonnull(strstr(a.raw, "Mcp-Method header does not match"));
  answer_free(&a);

  a = post(
      STD_HEADERS("tools/call") "Mcp-Name: =?base64?ZWNobw==?=\r\n",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
      "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"b\"}," ENVELOPE
      "}}");
  ck_assert_int_eq(a.status, 200);
  ck_assert_str_eq(plain(json_path(a.body, "result.content")),
                   "[{\"type\":\"text\",\"text\":\"b\"}]");
  answer_free(&a);

  /* No MCP-Protocol-Version at all: the header is required. */
  a = post("Mcp-Method: tools/list\r\n",
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
           "\"params\":{" ENVELOPE "}}");
  ck_assert_int_eq(a.status, 400);
  ck_assert_int_eq(response_error_code(a.body), -32020);
  ck_assert_ptr_nonnull(strstr(a.raw, "MCP-Protocol-Version header is req"));
  answer_free(&a);
}
END_TEST

START_TEST(test_param_headers_by_value) {
  static const char body[] =
      "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"test_param_headers\",\"arguments\":{\"region\":\"eu\","
      "\"priority\":100}," ENVELOPE "}}";
  answer a;

  a = post(STD_HEADERS("tools/call") "Mcp-Name: test_param_headers\r\n"
                                     "Mcp-Param-Region: eu\r\n"
                                     "Mcp-Param-Priority: 1e2\r\n",
           body);
  ck_assert_int_eq(a.status, 200);
  ck_assert_ptr_null(json_path(a.body, "error"));
  answer_free(&a);

  a = post(STD_HEADERS("tools/call") "Mcp-Name: test_param_headers\r\n"
                                     "Mcp-Param-Region: eu\r\n"
                                     "Mcp-Param-Priority: 0x64\r\n",
           body);
  ck_assert_int_eq(a.status, 400);
  ck_assert_int_eq(response_error_code(a.body), -32020);
  ck_assert_ptr_nonnull(strstr(a.raw, "Mcp-Param-Priority header does not"));
  answer_free(&a);

  a = post(STD_HEADERS("tools/call") "Mcp-Name: test_param_headers\r\n"
                                     "Mcp-Param-Priority: 100\r\n",
           body);
  ck_assert_int_eq(a.status, 400);
  ck_assert_ptr_nonnull(strstr(a.raw, "Mcp-Param-Region header is required"));
  answer_free(&a);
}
END_TEST

START_TEST(test_progress_turns_into_a_stream) {
  answer a = post(
      STD_HEADERS("tools/call") "Mcp-Name: test_tool_with_progress\r\n",
      "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"test_tool_with_progress\",\"arguments\":{},\"_meta\":{"
      "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
      "\"io.modelcontextprotocol/clientCapabilities\":{},"
      "\"progressToken\":\"p\"}}}");
  const char *progress, *result;

  /* Said something before its response: an SSE stream, 200, whose last
   * event is the response; no event ids (nothing to resume). */
  ck_assert_int_eq(a.status, 200);
  ck_assert_ptr_nonnull(strcasestr(a.head, "Content-Type: text/event-stream"));
  progress = strstr(a.raw, "event: message\ndata: {\"jsonrpc\":\"2.0\","
                           "\"method\":\"notifications/progress\"");
  result = strstr(a.raw, "event: message\ndata: {\"jsonrpc\":\"2.0\","
                         "\"id\":4,\"result\":{\"resultType\":\"complete\"");
  ck_assert_ptr_nonnull(progress);
  ck_assert_ptr_nonnull(result);
  ck_assert(progress < result);
  ck_assert_ptr_null(strstr(a.raw, "\nid:"));
  ck_assert_ptr_null(strstr(result + 1, "event: message"));
  answer_free(&a);
}
END_TEST

START_TEST(test_era_chosen_per_post) {
  answer a;

  /* A claim-less initialize naming 2026-07-28 in its header. */
  a = post("MCP-Protocol-Version: 2026-07-28\r\n",
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
           "\"params\":{\"protocolVersion\":\"2025-11-25\","
           "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\","
           "\"version\":\"0\"}}}");
  ck_assert_int_eq(a.status, 400);
  ck_assert_int_eq(response_error_code(a.body), -32020);
  answer_free(&a);

  /* Any other claim-less request with that header. */
  a = post("MCP-Protocol-Version: 2026-07-28\r\n",
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
  ck_assert_int_eq(a.status, 400);
  ck_assert_int_eq(response_error_code(a.body), -32602);
  answer_free(&a);

  /* A claimed notification has nothing to say without a session. */
  a = post(STD_HEADERS("notifications/initialized"),
           "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\","
           "\"params\":{" ENVELOPE "}}");
  ck_assert_int_eq(a.status, 202);
  answer_free(&a);
}
END_TEST

START_TEST(test_legacy_session_beside) {
  answer a;
  /* The legacy session stays open after its POST. */
  kept_sessions = 1;
  a = post("", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
               "\"params\":{\"protocolVersion\":\"2025-06-18\","
               "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\","
               "\"version\":\"0\"}}}");
  ck_assert_int_eq(a.status, 200);
  ck_assert_ptr_nonnull(strcasestr(a.head, "Mcp-Session-Id: "));
  ck_assert_str_eq(plain(json_path(a.body, "result.protocolVersion")),
                   "\"2025-06-18\"");
  ck_assert_ptr_null(json_path(a.body, "result.resultType"));
  answer_free(&a);
}
END_TEST

Suite *streamable_modern_suite(void) {
  Suite *s = suite_create("streamable_modern");
  TCase *tc = tcase_create("post");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_tool_call_answered_as_json);
  tcase_add_test(tc, test_status_follows_error_code);
  tcase_add_test(tc, test_standard_headers_checked);
  tcase_add_test(tc, test_param_headers_by_value);
  tcase_add_test(tc, test_progress_turns_into_a_stream);
  tcase_add_test(tc, test_era_chosen_per_post);
  suite_add_tcase(s, tc);
  tc = tcase_create("legacy");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_legacy_session_beside);
  suite_add_tcase(s, tc);
  return s;
}
