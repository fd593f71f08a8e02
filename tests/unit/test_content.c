/* SPDX-License-Identifier: MIT */
/* test_content.c -- resources, resource templates, prompts and completion
 * as a client sees them, with tests/plugins/content.so loaded: every
 * method's result byte for byte, paging, the errors a client can get and
 * their codes, builders used where they have no meaning, subscriptions
 * across sessions, resources/updated, run-time changes and their
 * list_changed notifications, and a reload that keeps subscriptions. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jsonrpc.h"
#include "loader.h"
#include "unit.h"

static harness h;

/* A session and what it was sent: the harness's own, or a second one. */
typedef struct peer {
  session *s;
  memory_transport *out;
} peer;

static peer a;                 /* h.session, h.cap */
static peer b;                 /* opened by open_b() */
static memory_transport b_out; /* b's messages */
static int b_open;
static int next_id;

static void initialize(peer *p) {
  static const char line[] =
      "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\","
      "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
      "\"clientInfo\":{\"name\":\"unit\",\"version\":\"0\"}}}";
  session_handle_line(p->s, line, strlen(line));
  ck_assert_uint_eq(p->out->n, 1);
  ck_assert_ptr_nonnull(strstr(p->out->msgs[0], "\"result\""));
  memory_transport_clear(p->out);
}

/* content.so loaded, the startup announcement flushed, session `a`
 * initialized. */
static void start(const char *const *extra) {
  harness_init(&h, extra);
  harness_session(&h);
  harness_copy(&h, "content.so", "content.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  harness_turn(&h);
  ck_assert_uint_eq(h.cap.n, 0);
  harness_initialize(&h, "2025-11-25");
  a.s = h.session;
  a.out = &h.cap;
  b_open = 0;
  next_id = 1;
}

static void setup(void) {
  start(NULL);
}

static void setup_paged(void) {
  static const char *const extra[] = {"--page-size", "2", NULL};
  start(extra);
}

static void teardown(void) {
  harness_free(&h);
  if (b_open)
    memory_transport_free(&b_out);
  b_open = 0;
}

/* Opens and initializes session `b`. */
static void open_b(void) {
  b.s = harness_open(&h, &b_out);
  b.out = &b_out;
  b_open = 1;
  initialize(&b);
}

static void send_line(peer *p, const char *line) {
  session_handle_line(p->s, line, strlen(line));
}

/* Index in p->out of the response with integer id `id`, or -1. */
static long response_index(peer *p, int id) {
  char needle[64];
  snprintf(needle, sizeof(needle), "{\"jsonrpc\":\"2.0\",\"id\":%d,", id);
  for (size_t i = 0; i < p->out->n; i++)
    if (strncmp(p->out->msgs[i], needle, strlen(needle)) == 0)
      return (long)i;
  return -1;
}

typedef struct awaited {
  peer *p;
  int id;
} awaited;

static int answered(harness *hh, void *arg) {
  awaited *w = arg;
  (void)hh;
  return response_index(w->p, w->id) >= 0;
}

/* Sends request `method` with `params` (JSON text, or NULL) from `p` and
 * runs the loop until it is answered; the raw response line. */
static const char *rpc_raw(peer *p, const char *method, const char *params) {
  char line[8192];
  awaited w = {p, next_id++};

  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\"%s%s}", w.id,
           method, params ? ",\"params\":" : "", params ? params : "");
  send_line(p, line);
  harness_run_until(&h, answered, &w);
  return p->out->msgs[response_index(p, w.id)];
}

/* The same, parsed (the caller puts it). */
static json_object *rpc(peer *p, const char *method, const char *params) {
  return parse_json(rpc_raw(p, method, params));
}

/* The response must be exactly {"jsonrpc":"2.0","id":N,"result":want}. */
static void expect_result(peer *p, const char *method, const char *params,
                          const char *want) {
  const char *got = rpc_raw(p, method, params);
  const char *result = strstr(got, ",\"result\":");

  ck_assert_msg(result != NULL, "%s %s: %s", method, params ? params : "", got);
  result += strlen(",\"result\":");
  ck_assert_msg(strlen(result) == strlen(want) + 1 &&
                    strncmp(result, want, strlen(want)) == 0 &&
                    result[strlen(want)] == '}',
                "%s %s:\n got  %s\n want %s}", method, params ? params : "",
                result, want);
}

/* The response must be an error with `code`, a message that contains
 * `message`, and `data` as its data (JSON text), or none when NULL. */
static void expect_error(peer *p, const char *method, const char *params,
                         int code, const char *message, const char *data) {
  json_object *msg = rpc(p, method, params);
  json_object *m = json_path(msg, "error.message");
  json_object *d = json_path(msg, "error.data");

  ck_assert_msg(response_error_code(msg) == code, "%s %s: %s, not code %d",
                method, params ? params : "", plain(msg), code);
  ck_assert_ptr_nonnull(m);
  ck_assert_msg(strstr(json_object_get_string(m), message) != NULL,
                "%s %s: message \"%s\" lacks \"%s\"", method,
                params ? params : "", json_object_get_string(m), message);
  if (data == NULL)
    ck_assert_msg(d == NULL, "%s: unexpected data %s", method, plain(d));
  else
    ck_assert_msg(d != NULL && strcmp(plain(d), data) == 0,
                  "%s: data %s, not %s", method, d ? plain(d) : "(none)", data);
  json_object_put(msg);
}

static void read_is(peer *p, const char *uri, const char *want) {
  char params[1024];
  snprintf(params, sizeof(params), "{\"uri\":\"%s\"}", uri);
  expect_result(p, "resources/read", params, want);
}

static void read_fails(peer *p, const char *uri, int code, const char *message,
                       const char *data) {
  char params[1024];
  snprintf(params, sizeof(params), "{\"uri\":\"%s\"}", uri);
  expect_error(p, "resources/read", params, code, message, data);
}

/* tools/call `name` with `args` (JSON text); the text of its first
 * content block, copied into a static buffer; *is_error says whether the
 * result was an error result. */
static const char *tool(peer *p, const char *name, const char *args,
                        int *is_error) {
  static char text[4096];
  char params[1024];
  json_object *msg, *v;

  snprintf(params, sizeof(params), "{\"name\":\"%s\",\"arguments\":%s}", name,
           args ? args : "{}");
  msg = rpc(p, "tools/call", params);
  v = json_path(msg, "result.content.0.text");
  ck_assert_msg(v != NULL, "tools/call %s: %s", name, plain(msg));
  snprintf(text, sizeof(text), "%s", json_object_get_string(v));
  v = json_path(msg, "result.isError");
  if (is_error != NULL)
    *is_error = v != NULL && json_object_get_boolean(v);
  else
    ck_assert_msg(v == NULL || !json_object_get_boolean(v),
                  "tools/call %s failed: %s", name, text);
  json_object_put(msg);
  return text;
}

/* What content.so's subscribe callbacks heard so far. */
static const char *heard(void) {
  return tool(&a, "subscriptions", NULL, NULL);
}

#define RESOURCES_CHANGED                                                      \
  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/list_changed\"}"
#define PROMPTS_CHANGED                                                        \
  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/prompts/list_changed\"}"
#define TOOLS_CHANGED                                                          \
  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}"

/* How many captured messages are exactly `line`. */
static size_t count_exact(const memory_transport *out, const char *line) {
  size_t n = 0;
  for (size_t i = 0; i < out->n; i++)
    if (strcmp(out->msgs[i], line) == 0)
      n++;
  return n;
}

static size_t count_updated(const memory_transport *out, const char *uri) {
  char line[512];
  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/"
           "updated\",\"params\":{\"uri\":\"%s\"}}",
           uri);
  return count_exact(out, line);
}

typedef struct want_line {
  const memory_transport *out;
  const char *line;
} want_line;

static int line_seen(harness *hh, void *arg) {
  want_line *w = arg;
  (void)hh;
  return count_exact(w->out, w->line) > 0;
}

/* Runs the loop until `line` arrived in `out`. */
static void wait_line(const memory_transport *out, const char *line) {
  want_line w = {out, line};
  harness_run_until(&h, line_seen, &w);
}

/* Waits for the calls in flight, then runs a few loop turns so that
 * queued host events and the list_changed timer fire. */
static void settle(void) {
  harness_run_until(&h, harness_calls_done, NULL);
  for (int i = 0; i < 5; i++)
    harness_turn(&h);
}

/* Whether the log holds a line with `text`. */
static int logged(const char *text) {
  char *log = harness_log(&h);
  int found = strstr(log, text) != NULL;
  free(log);
  return found;
}

/* --- initialize and lists ----------------------------------------------- */

START_TEST(test_capabilities) {
  static const char *const methods[] = {
      "resources/list",      "resources/templates/list", "resources/read",
      "resources/subscribe", "resources/unsubscribe",    "prompts/list",
      "prompts/get",         "completion/complete"};

  b.s = harness_open(&h, &b_out);
  b.out = &b_out;
  b_open = 1;
  /* Nothing is served before initialize. */
  for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
    expect_error(&b, methods[i], "{\"uri\":\"content://text\"}",
                 JSONRPC_INVALID_REQUEST, "not initialized", NULL);
  memory_transport_clear(&b_out);
  send_line(&b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                "\"params\":{\"protocolVersion\":\"2025-11-25\","
                "\"capabilities\":{},\"clientInfo\":{\"name\":\"u\","
                "\"version\":\"0\"}}}");
  ck_assert_uint_eq(b_out.n, 1);
  ck_assert_ptr_nonnull(strstr(b_out.msgs[0],
                               "\"capabilities\":{\"tools\":{\"listChanged\":"
                               "true},\"resources\":{\"subscribe\":true,"
                               "\"listChanged\":true},\"prompts\":{"
                               "\"listChanged\":true},\"logging\":{},"
                               "\"completions\":{},\"tasks\":{\"list\":{},"
                               "\"cancel\":{},\"requests\":{\"tools\":"
                               "{\"call\":{}}}}}"));
}
END_TEST

#define LIST_RESOURCES                                                         \
  "{\"uri\":\"content://text\",\"name\":\"text\",\"title\":\"Text\","          \
  "\"description\":\"Inline text from the entry's data\","                     \
  "\"mimeType\":\"text/plain\"},"                                              \
  "{\"uri\":\"content://blob\",\"name\":\"blob\","                             \
  "\"mimeType\":\"application/octet-stream\"},"                                \
  "{\"uri\":\"content://async\",\"name\":\"async\"},"                          \
  "{\"uri\":\"content://multi\",\"name\":\"multi\","                           \
  "\"mimeType\":\"text/plain\"},"                                              \
  "{\"uri\":\"content://plain\",\"name\":\"plain\"}"

#define LIST_TEMPLATES                                                         \
  "{\"uriTemplate\":\"content://files/{+path}\",\"name\":\"files\","           \
  "\"title\":\"Files\",\"description\":\"Any file by path\","                  \
  "\"mimeType\":\"text/plain\"},"                                              \
  "{\"uriTemplate\":\"content://users/{id}/profile{.fmt}\","                   \
  "\"name\":\"profiles\",\"mimeType\":\"application/json\"},"                  \
  "{\"uriTemplate\":\"content://async/{key}\",\"name\":\"async-keys\"},"       \
  "{\"uriTemplate\":\"content://misuse/{how}\",\"name\":\"misuse\"}"

#define LIST_PROMPTS                                                           \
  "{\"name\":\"greet\",\"title\":\"Greeting\","                                \
  "\"description\":\"Greets someone\",\"arguments\":["                         \
  "{\"name\":\"name\",\"title\":\"Name\",\"description\":\"Who to greet\","    \
  "\"required\":true},"                                                        \
  "{\"name\":\"style\",\"description\":\"How to greet\"}]},"                   \
  "{\"name\":\"review\",\"description\":\"Reviews code\",\"arguments\":["      \
  "{\"name\":\"code\",\"required\":true},{\"name\":\"language\"}]},"           \
  "{\"name\":\"many\",\"arguments\":[{\"name\":\"n\"},{\"name\":\"m\"},"       \
  "{\"name\":\"k\"}]},"                                                        \
  "{\"name\":\"bad\",\"arguments\":[{\"name\":\"how\",\"required\":true}]}"

START_TEST(test_lists) {
  expect_result(&a, "resources/list", NULL,
                "{\"resources\":[" LIST_RESOURCES "]}");
  expect_result(&a, "resources/templates/list", "{}",
                "{\"resourceTemplates\":[" LIST_TEMPLATES "]}");
  expect_result(&a, "prompts/list", "{\"cursor\":null}",
                "{\"prompts\":[" LIST_PROMPTS "]}");
}
END_TEST

START_TEST(test_list_bad_cursor) {
  expect_error(&a, "resources/list", "{\"cursor\":\"bogus\"}",
               JSONRPC_INVALID_PARAMS, "invalid cursor", NULL);
  expect_error(&a, "resources/templates/list", "{\"cursor\":2}",
               JSONRPC_INVALID_PARAMS, "invalid cursor", NULL);
  /* A cursor at or past the end is never issued. */
  expect_error(&a, "prompts/list", "{\"cursor\":\"p4\"}",
               JSONRPC_INVALID_PARAMS, "invalid cursor", NULL);
}
END_TEST

/* Walks `method`'s pages of two; the members of every page joined, and
 * the number of pages. */
static size_t walk(const char *method, const char *key, char *joined,
                   size_t size) {
  char params[128] = "{}";
  size_t pages = 0, len = 0;

  joined[0] = '\0';
  for (;;) {
    json_object *msg = rpc(&a, method, params);
    json_object *list = json_path(msg, "result");
    json_object *next = json_path(msg, "result.nextCursor");
    json_object *items;

    ck_assert_ptr_nonnull(list);
    ck_assert(json_object_object_get_ex(list, key, &items));
    pages++;
    for (size_t i = 0; i < json_object_array_length(items); i++)
      len +=
          (size_t)snprintf(joined + len, size - len, "%s%s", len > 0 ? "," : "",
                           plain(json_object_array_get_idx(items, i)));
    if (next == NULL) {
      /* Only a full page may have a next one; the last holds 1 or 2. */
      ck_assert_uint_ge(json_object_array_length(items), 1);
      ck_assert_int_eq(json_object_object_length(list), 1);
      json_object_put(msg);
      return pages;
    }
    ck_assert_uint_eq(json_object_array_length(items), 2);
    ck_assert(json_object_is_type(next, json_type_string));
    snprintf(params, sizeof(params), "{\"cursor\":\"%s\"}",
             json_object_get_string(next));
    json_object_put(msg);
    ck_assert_uint_lt(pages, 10);
  }
}

START_TEST(test_paging) {
  char joined[8192];

  ck_assert_uint_eq(walk("resources/list", "resources", joined, sizeof(joined)),
                    3);
  ck_assert_str_eq(joined, LIST_RESOURCES);
  ck_assert_uint_eq(walk("resources/templates/list", "resourceTemplates",
                         joined, sizeof(joined)),
                    2);
  ck_assert_str_eq(joined, LIST_TEMPLATES);
  ck_assert_uint_eq(walk("prompts/list", "prompts", joined, sizeof(joined)), 2);
  ck_assert_str_eq(joined, LIST_PROMPTS);
  /* Each list has its own cursors: p4 is the end of the templates. */
  expect_error(&a, "resources/templates/list", "{\"cursor\":\"p4\"}",
               JSONRPC_INVALID_PARAMS, "invalid cursor", NULL);
}
END_TEST

/* --- resources/read ----------------------------------------------------- */

START_TEST(test_read_resources) {
  /* INLINE, the text from the entry's data, the entry's MIME type. */
  read_is(&a, "content://text",
          "{\"contents\":[{\"uri\":\"content://text\","
          "\"mimeType\":\"text/plain\",\"text\":\"hello text\"}]}");
  /* POOL, a blob. */
  read_is(&a, "content://blob",
          "{\"contents\":[{\"uri\":\"content://blob\","
          "\"mimeType\":\"application/octet-stream\",\"blob\":\"AAEC\"}]}");
  /* ASYNC, completed from the plugin's thread with its own MIME type. */
  read_is(&a, "content://async",
          "{\"contents\":[{\"uri\":\"content://async\","
          "\"mimeType\":\"text/markdown\",\"text\":\"# async\"}]}");
  /* Several contents, other URIs and MIME types. */
  read_is(&a, "content://multi",
          "{\"contents\":["
          "{\"uri\":\"content://multi\",\"mimeType\":\"text/plain\","
          "\"text\":\"one\"},"
          "{\"uri\":\"content://multi#2\",\"mimeType\":\"text/csv\","
          "\"text\":\"a,b\"},"
          "{\"uri\":\"content://multi#3\",\"mimeType\":\"image/png\","
          "\"blob\":\"aW1n\"}]}");
  /* No MIME type anywhere: none is sent. */
  read_is(
      &a, "content://plain",
      "{\"contents\":[{\"uri\":\"content://plain\",\"text\":\"no type\"}]}");
}
END_TEST

START_TEST(test_read_templates) {
  /* POOL; the variables reach the callback decoded, the entry's data
   * too. */
  read_is(&a, "content://files/docs/a%20b.md",
          "{\"contents\":[{\"uri\":\"content://files/docs/a%20b.md\","
          "\"mimeType\":\"text/plain\",\"text\":\"file: docs/a b.md\"}]}");
  read_is(&a, "content://users/7/profile.json",
          "{\"contents\":[{\"uri\":\"content://users/7/profile.json\","
          "\"mimeType\":\"application/json\",\"text\":\"{\\\"id\\\":\\\"7\\\"}"
          "\"}]}");
  /* ASYNC. */
  read_is(&a, "content://async/k1",
          "{\"contents\":[{\"uri\":\"content://async/k1\","
          "\"mimeType\":\"text/markdown\",\"text\":\"k1\"}]}");
}
END_TEST

START_TEST(test_read_not_found) {
  const char *raw;

  raw = rpc_raw(&a, "resources/read", "{\"uri\":\"content://nope\"}");
  ck_assert_str_eq(raw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{"
                        "\"code\":-32002,\"message\":\"Resource not found: "
                        "content://nope\",\"data\":{\"uri\":"
                        "\"content://nope\"}}}");
  /* Near a template but not matching it: an empty {id}, a bad escape. */
  read_fails(&a, "content://users//profile.json", JSONRPC_RESOURCE_NOT_FOUND,
             "Resource not found",
             "{\"uri\":\"content://users//profile.json\"}");
  read_fails(&a, "content://files/%zz", JSONRPC_RESOURCE_NOT_FOUND,
             "Resource not found", "{\"uri\":\"content://files/%zz\"}");
  /* The plugin's own fail(MCPD_ERR_NOT_FOUND): its message, the URI as
   * data -- from the loop, and from an ASYNC thread. */
  read_fails(&a, "content://users/missing/profile.json",
             JSONRPC_RESOURCE_NOT_FOUND, "no user missing",
             "{\"uri\":\"content://users/missing/profile.json\"}");
  read_fails(&a, "content://async/missing", JSONRPC_RESOURCE_NOT_FOUND,
             "no key missing", "{\"uri\":\"content://async/missing\"}");
  read_fails(&a, "content://misuse/notfound", JSONRPC_RESOURCE_NOT_FOUND,
             "nothing at content://misuse/notfound",
             "{\"uri\":\"content://misuse/notfound\"}");
  /* fail(MCPD_ERR_INVALID_PARAMS): -32602 without data. */
  read_fails(&a, "content://users/7/profile.xml", JSONRPC_INVALID_PARAMS,
             "format xml is not offered", NULL);
  read_fails(&a, "content://misuse/invalid", JSONRPC_INVALID_PARAMS,
             "bad how invalid", NULL);
}
END_TEST

START_TEST(test_read_bad_params) {
  expect_error(&a, "resources/read", "{\"uri\":5}", JSONRPC_INVALID_PARAMS,
               "uri must be a string", NULL);
  expect_error(&a, "resources/read", "{}", JSONRPC_INVALID_PARAMS,
               "uri must be a string", NULL);
  expect_error(&a, "resources/read", NULL, JSONRPC_INVALID_PARAMS,
               "uri must be a string", NULL);
  expect_error(&a, "resources/read", "{\"uri\":\"relative/path\"}",
               JSONRPC_INVALID_PARAMS, "not an absolute URI: relative/path",
               NULL);
  expect_error(&a, "resources/read", "{\"uri\":\"\"}", JSONRPC_INVALID_PARAMS,
               "not an absolute URI", NULL);
  expect_error(&a, "resources/read", "{\"uri\":\"content://a b\"}",
               JSONRPC_INVALID_PARAMS, "not an absolute URI", NULL);
  expect_error(&a, "resources/read", "{\"uri\":\":nothing\"}",
               JSONRPC_INVALID_PARAMS, "not an absolute URI", NULL);
}
END_TEST

/* Exact resources first, then templates in listing order. */
START_TEST(test_read_resolution_order) {
  int err;
  ck_assert_str_eq(tool(&a, "change",
                        "{\"op\":\"add\",\"kind\":\"template\","
                        "\"key\":\"content://{name}\"}",
                        &err),
                   "add template content://{name}");
  ck_assert(!err);
  ck_assert_str_eq(tool(&a, "change",
                        "{\"op\":\"add\",\"kind\":\"template\","
                        "\"key\":\"content://misuse/{+rest}\"}",
                        &err),
                   "add template content://misuse/{+rest}");
  ck_assert(!err);
  /* content://text also matches content://{name}. */
  read_is(&a, "content://text",
          "{\"contents\":[{\"uri\":\"content://text\","
          "\"mimeType\":\"text/plain\",\"text\":\"hello text\"}]}");
  read_is(&a, "content://other",
          "{\"contents\":[{\"uri\":\"content://other\",\"text\":"
          "\"dynamic content://other {\\\"name\\\":\\\"other\\\"}\"}]}");
  /* Both misuse templates match; the one listed first serves. */
  read_is(&a, "content://misuse/x",
          "{\"contents\":[{\"uri\":\"content://misuse/x\",\"text\":"
          "\"how=x\"}]}");
  read_is(&a, "content://misuse/x/y",
          "{\"contents\":[{\"uri\":\"content://misuse/x/y\",\"text\":"
          "\"dynamic content://misuse/x/y {\\\"rest\\\":\\\"x/y\\\"}\"}]}");
}
END_TEST

/* --- builders used where they mean nothing, and failures ------------------ */

/* content.so logged that the misused builder `how` returned MCPD_ERROR. */
static void builder_refused(const char *how) {
  char line[256];
  snprintf(line, sizeof(line), "plugin \"content\": %s returned -1\n", how);
  ck_assert_msg(logged(line), "no log line \"%s\"", line);
}

/* resources/read of content://misuse/`how` fails with -32603, and the log
 * says which builder was misused on what. */
static void read_misused(const char *how, const char *builder) {
  char uri[128], line[256];

  snprintf(uri, sizeof(uri), "content://misuse/%s", how);
  read_fails(&a, uri, JSONRPC_INTERNAL_ERROR, "built an invalid result", NULL);
  snprintf(line, sizeof(line),
           "mcpd: error: plugin \"content\": %s() on a resource read (read "
           "of %s); the call fails",
           builder, uri);
  ck_assert_msg(logged(line), "no log line \"%s\"", line);
  builder_refused(how);
}

START_TEST(test_read_misuse) {
  read_misused("image", "result_image");
  read_misused("audio", "result_audio");
  read_misused("link", "result_resource_link");
  read_misused("structured", "result_structured");
  read_misused("role", "prompt_role");
  read_misused("completion", "completion_value");
  read_misused("total", "completion_total");
  /* Text built before the misuse does not go out either. */
  read_misused("partial", "result_image");
  /* The server keeps serving. */
  read_is(&a, "content://text",
          "{\"contents\":[{\"uri\":\"content://text\","
          "\"mimeType\":\"text/plain\",\"text\":\"hello text\"}]}");
}
END_TEST

START_TEST(test_read_failures) {
  /* result_error() on a read is fail(MCPD_ERR_INTERNAL, ...). */
  read_fails(&a, "content://misuse/error", JSONRPC_INTERNAL_ERROR,
             "read went wrong", NULL);
  read_fails(&a, "content://misuse/nothing", JSONRPC_INTERNAL_ERROR,
             "read of content://misuse/nothing returned no contents", NULL);
  read_fails(&a, "content://misuse/failed", JSONRPC_INTERNAL_ERROR,
             "read of content://misuse/failed failed", NULL);
  /* MCPD_ERROR with contents built: still an error. */
  read_fails(&a, "content://misuse/failedbuilt", JSONRPC_INTERNAL_ERROR,
             "read of content://misuse/failedbuilt failed", NULL);
  read_fails(&a, "content://misuse/bogus", JSONRPC_INTERNAL_ERROR, "returned 7",
             NULL);
  read_fails(&a, "content://misuse/badjson", JSONRPC_INTERNAL_ERROR,
             "malformed result", NULL);
  /* The last fail() or result_error() decides. */
  read_fails(&a, "content://misuse/failtwice", JSONRPC_INTERNAL_ERROR, "second",
             NULL);
  read_fails(&a, "content://misuse/errorthenfail", JSONRPC_INVALID_PARAMS,
             "second", NULL);
  /* result_json() with a valid read result replaces it whole. */
  read_is(&a, "content://misuse/json",
          "{\"contents\":[{\"uri\":\"content://j\",\"text\":\"whole\"}]}");
  /* fail() takes only the MCPD_ERR_* codes. */
  read_is(&a, "content://misuse/badcode",
          "{\"contents\":[{\"uri\":\"content://misuse/badcode\",\"text\":"
          "\"refused: fail: -32000 is not one of the MCPD_ERR_* codes\"}]}");
}
END_TEST

static void prompt_misused(const char *how, const char *builder) {
  char params[256], line[256];

  snprintf(params, sizeof(params),
           "{\"name\":\"bad\",\"arguments\":{\"how\":\"%s\"}}", how);
  expect_error(&a, "prompts/get", params, JSONRPC_INTERNAL_ERROR,
               "prompt bad built an invalid result", NULL);
  snprintf(line, sizeof(line),
           "mcpd: error: plugin \"content\": %s() on a prompt get (prompt "
           "bad); the call fails",
           builder);
  ck_assert_msg(logged(line), "no log line \"%s\"", line);
  builder_refused(how);
}

START_TEST(test_prompt_misuse) {
  prompt_misused("structured", "result_structured");
  prompt_misused("completion", "completion_value");
  prompt_misused("total", "completion_total");
  expect_error(&a, "prompts/get",
               "{\"name\":\"bad\",\"arguments\":{\"how\":\"error\"}}",
               JSONRPC_INTERNAL_ERROR, "prompt went wrong", NULL);
  expect_error(&a, "prompts/get",
               "{\"name\":\"bad\",\"arguments\":{\"how\":\"invalid\"}}",
               JSONRPC_INVALID_PARAMS, "how invalid is bad", NULL);
  /* Not found outside a read carries no URI. */
  expect_error(&a, "prompts/get",
               "{\"name\":\"bad\",\"arguments\":{\"how\":\"notfound\"}}",
               JSONRPC_RESOURCE_NOT_FOUND, "no such thing", NULL);
  expect_error(&a, "prompts/get",
               "{\"name\":\"bad\",\"arguments\":{\"how\":\"failed\"}}",
               JSONRPC_INTERNAL_ERROR, "prompt bad failed", NULL);
  expect_error(&a, "prompts/get",
               "{\"name\":\"bad\",\"arguments\":{\"how\":\"bogus\"}}",
               JSONRPC_INTERNAL_ERROR, "returned 7", NULL);
  /* result_json(): a whole result, checked. */
  expect_result(&a, "prompts/get",
                "{\"name\":\"bad\",\"arguments\":{\"how\":\"json\"}}",
                "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":"
                "\"text\",\"text\":\"j\"}}]}");
  expect_error(&a, "prompts/get",
               "{\"name\":\"bad\",\"arguments\":{\"how\":\"badjson\"}}",
               JSONRPC_INTERNAL_ERROR, "prompt bad returned a malformed result",
               NULL);
  expect_result(&a, "prompts/get",
                "{\"name\":\"bad\",\"arguments\":{\"how\":\"fine\"}}",
                "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":"
                "\"text\",\"text\":\"how=fine\"}}]}");
}
END_TEST

static void completion_misused(const char *value, const char *builder) {
  char params[256], line[256];

  snprintf(params, sizeof(params),
           "{\"ref\":{\"type\":\"ref/resource\",\"uri\":"
           "\"content://misuse/{how}\"},\"argument\":{\"name\":\"how\","
           "\"value\":\"%s\"}}",
           value);
  expect_error(&a, "completion/complete", params, JSONRPC_INTERNAL_ERROR,
               "completion for content://misuse/{how} built an invalid result",
               NULL);
  snprintf(line, sizeof(line),
           "mcpd: error: plugin \"content\": %s() on a completion "
           "(completion for content://misuse/{how}); the call fails",
           builder);
  ck_assert_msg(logged(line), "no log line \"%s\"", line);
  builder_refused(value);
}

START_TEST(test_completion_misuse) {
  completion_misused("text", "result_text");
  completion_misused("image", "result_image");
  completion_misused("role", "prompt_role");
  completion_misused("resource", "result_resource_text");
  completion_misused("structured", "result_structured");
  expect_error(&a, "completion/complete",
               "{\"ref\":{\"type\":\"ref/resource\",\"uri\":"
               "\"content://misuse/{how}\"},\"argument\":{\"name\":\"how\","
               "\"value\":\"error\"}}",
               JSONRPC_INTERNAL_ERROR, "completion went wrong", NULL);
  expect_error(&a, "completion/complete",
               "{\"ref\":{\"type\":\"ref/resource\",\"uri\":"
               "\"content://misuse/{how}\"},\"argument\":{\"name\":\"how\","
               "\"value\":\"invalid\"}}",
               JSONRPC_INVALID_PARAMS, "cannot complete invalid", NULL);
  expect_error(&a, "completion/complete",
               "{\"ref\":{\"type\":\"ref/resource\",\"uri\":"
               "\"content://misuse/{how}\"},\"argument\":{\"name\":\"how\","
               "\"value\":\"failed\"}}",
               JSONRPC_INTERNAL_ERROR,
               "completion for content://misuse/{how} failed", NULL);
  /* result_json(): a whole result, at most 100 values. */
  expect_result(&a, "completion/complete",
                "{\"ref\":{\"type\":\"ref/resource\",\"uri\":"
                "\"content://misuse/{how}\"},\"argument\":{\"name\":\"how\","
                "\"value\":\"json\"}}",
                "{\"completion\":{\"values\":[\"j\"],\"total\":1,"
                "\"hasMore\":false}}");
  expect_error(&a, "completion/complete",
               "{\"ref\":{\"type\":\"ref/resource\",\"uri\":"
               "\"content://misuse/{how}\"},\"argument\":{\"name\":\"how\","
               "\"value\":\"json101\"}}",
               JSONRPC_INTERNAL_ERROR, "returned a malformed result", NULL);
  expect_result(&a, "completion/complete",
                "{\"ref\":{\"type\":\"ref/resource\",\"uri\":"
                "\"content://misuse/{how}\"},\"argument\":{\"name\":\"how\","
                "\"value\":\"ok\"}}",
                "{\"completion\":{\"values\":[\"ok\"],\"total\":1,"
                "\"hasMore\":false}}");
}
END_TEST

static void tool_misused(const char *how, const char *builder) {
  char params[256], line[256];

  snprintf(params, sizeof(params),
           "{\"name\":\"misuse_tool\",\"arguments\":{\"how\":\"%s\"}}", how);
  expect_error(&a, "tools/call", params, JSONRPC_INTERNAL_ERROR,
               "tool misuse_tool built an invalid result", NULL);
  snprintf(line, sizeof(line),
           "mcpd: error: plugin \"content\": %s() on a tool call (tool "
           "misuse_tool); the call fails",
           builder);
  ck_assert_msg(logged(line), "no log line \"%s\"", line);
  builder_refused(how);
}

START_TEST(test_tool_misuse) {
  tool_misused("completion_value", "completion_value");
  tool_misused("completion_total", "completion_total");
  tool_misused("prompt_role", "prompt_role");
  ck_assert_str_eq(tool(&a, "misuse_tool", "{\"how\":\"none\"}", NULL),
                   "how=none");
}
END_TEST

/* --- prompts/get -------------------------------------------------------- */

START_TEST(test_prompts_get) {
  expect_result(&a, "prompts/get",
                "{\"name\":\"greet\",\"arguments\":{\"name\":\"Ada\"}}",
                "{\"description\":\"Greets someone\",\"messages\":["
                "{\"role\":\"user\",\"content\":{\"type\":\"text\","
                "\"text\":\"Hello, Ada!\"}}]}");
  expect_result(&a, "prompts/get",
                "{\"name\":\"greet\",\"arguments\":{\"name\":\"Ada\","
                "\"style\":\"formal\"}}",
                "{\"description\":\"Greets someone\",\"messages\":["
                "{\"role\":\"user\",\"content\":{\"type\":\"text\","
                "\"text\":\"Hello, Ada!\"}},"
                "{\"role\":\"user\",\"content\":{\"type\":\"text\","
                "\"text\":\"Style: formal\"}}]}");
  /* POOL; roles and every content kind; a role other than user or
   * assistant is refused without spoiling the result. */
  expect_result(
      &a, "prompts/get",
      "{\"name\":\"review\",\"arguments\":{\"code\":\"int x;\","
      "\"language\":\"C\"}}",
      "{\"description\":\"Reviews code\",\"messages\":["
      "{\"role\":\"user\",\"content\":{\"type\":\"text\","
      "\"text\":\"Review this C:\"}},"
      "{\"role\":\"user\",\"content\":{\"type\":\"resource\",\"resource\":"
      "{\"uri\":\"content://code\",\"mimeType\":\"text/x-c\","
      "\"text\":\"int x;\"}}},"
      "{\"role\":\"assistant\",\"content\":{\"type\":\"text\","
      "\"text\":\"Looks fine.\"}},"
      "{\"role\":\"assistant\",\"content\":{\"type\":\"image\","
      "\"data\":\"aW1n\",\"mimeType\":\"image/png\"}},"
      "{\"role\":\"assistant\",\"content\":{\"type\":\"audio\","
      "\"data\":\"YXVk\",\"mimeType\":\"audio/wav\"}},"
      "{\"role\":\"user\",\"content\":{\"type\":\"resource_link\","
      "\"uri\":\"content://text\",\"name\":\"text\","
      "\"description\":\"the text\",\"mimeType\":\"text/plain\"}},"
      "{\"role\":\"user\",\"content\":{\"type\":\"resource\",\"resource\":"
      "{\"uri\":\"content://blob\",\"mimeType\":\"application/octet-stream\","
      "\"blob\":\"AAEC\"}}}]}");
  /* No description: none is sent.  Arguments may be left out. */
  expect_result(&a, "prompts/get", "{\"name\":\"many\"}",
                "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":"
                "\"text\",\"text\":\"many\"}}]}");
  expect_result(&a, "prompts/get", "{\"name\":\"many\",\"arguments\":null}",
                "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":"
                "\"text\",\"text\":\"many\"}}]}");
}
END_TEST

START_TEST(test_prompts_get_errors) {
  expect_error(&a, "prompts/get", "{\"name\":\"nope\"}", JSONRPC_INVALID_PARAMS,
               "Unknown prompt: nope", NULL);
  expect_error(&a, "prompts/get", "{\"name\":5}", JSONRPC_INVALID_PARAMS,
               "name must be a string", NULL);
  expect_error(&a, "prompts/get", "{}", JSONRPC_INVALID_PARAMS,
               "name must be a string", NULL);
  expect_error(
      &a, "prompts/get", "{\"name\":\"greet\",\"arguments\":{\"name\":5}}",
      JSONRPC_INVALID_PARAMS, "arguments must be an object of strings", NULL);
  expect_error(&a, "prompts/get",
               "{\"name\":\"greet\",\"arguments\":{\"name\":\"Ada\","
               "\"style\":null}}",
               JSONRPC_INVALID_PARAMS, "arguments must be an object of strings",
               NULL);
  expect_error(
      &a, "prompts/get", "{\"name\":\"greet\",\"arguments\":[\"Ada\"]}",
      JSONRPC_INVALID_PARAMS, "arguments must be an object of strings", NULL);
  expect_error(&a, "prompts/get", "{\"name\":\"greet\"}",
               JSONRPC_INVALID_PARAMS, "Missing required argument: name", NULL);
  expect_error(&a, "prompts/get",
               "{\"name\":\"greet\",\"arguments\":{\"style\":\"formal\"}}",
               JSONRPC_INVALID_PARAMS, "Missing required argument: name", NULL);
  expect_error(&a, "prompts/get",
               "{\"name\":\"review\",\"arguments\":{\"language\":\"C\"}}",
               JSONRPC_INVALID_PARAMS, "Missing required argument: code", NULL);
}
END_TEST

/* --- completion/complete ------------------------------------------------ */

#define COMPLETE(ref, arg, value, rest)                                        \
  "{\"ref\":" ref ",\"argument\":{\"name\":\"" arg "\",\"value\":\"" value     \
  "\"}" rest "}"
#define GREET "{\"type\":\"ref/prompt\",\"name\":\"greet\"}"
#define MANY "{\"type\":\"ref/prompt\",\"name\":\"many\"}"

START_TEST(test_complete_prompts) {
  expect_result(&a, "completion/complete", COMPLETE(GREET, "style", "f", ""),
                "{\"completion\":{\"values\":[\"formal\",\"friendly\","
                "\"funny\"],\"total\":3,\"hasMore\":false}}");
  /* The context's arguments reach the callback. */
  expect_result(&a, "completion/complete",
                COMPLETE(GREET, "style", "fr",
                         ",\"context\":{\"arguments\":{\"name\":\"Ada\"}}"),
                "{\"completion\":{\"values\":[\"friendly\",\"Ada-style\"],"
                "\"total\":2,\"hasMore\":false}}");
  /* The callback offers nothing. */
  expect_result(&a, "completion/complete", COMPLETE(GREET, "name", "", ""),
                "{\"completion\":{\"values\":[],\"total\":0,"
                "\"hasMore\":false}}");
  /* A prompt without a complete callback has no candidates. */
  expect_result(&a, "completion/complete",
                COMPLETE("{\"type\":\"ref/prompt\",\"name\":\"review\"}",
                         "code", "x", ""),
                "{\"completion\":{\"values\":[],\"total\":0,"
                "\"hasMore\":false}}");
  /* completion_total(): more exist than were added ... */
  expect_result(&a, "completion/complete", COMPLETE(MANY, "m", "", ""),
                "{\"completion\":{\"values\":[\"a\",\"b\",\"c\"],"
                "\"total\":1000,\"hasMore\":true}}");
  /* ... and a total below what was added counts what was added. */
  expect_result(&a, "completion/complete", COMPLETE(MANY, "k", "", ""),
                "{\"completion\":{\"values\":[\"a\",\"b\",\"c\"],"
                "\"total\":3,\"hasMore\":false}}");
}
END_TEST

/* 150 candidates: the client gets the first 100, total 150, hasMore. */
START_TEST(test_complete_caps_at_100) {
  json_object *msg =
      rpc(&a, "completion/complete", COMPLETE(MANY, "n", "", ""));
  json_object *values = json_path(msg, "result.completion.values");
  char want[8];

  ck_assert_ptr_nonnull(values);
  ck_assert_uint_eq(json_object_array_length(values), 100);
  for (size_t i = 0; i < 100; i++) {
    snprintf(want, sizeof(want), "v%03zu", i);
    ck_assert_str_eq(
        json_object_get_string(json_object_array_get_idx(values, i)), want);
  }
  ck_assert_int_eq(
      json_object_get_int(json_path(msg, "result.completion.total")), 150);
  ck_assert(
      json_object_get_boolean(json_path(msg, "result.completion.hasMore")));
  ck_assert_int_eq(json_object_object_length(json_path(msg, "result")), 1);
  ck_assert_int_eq(
      json_object_object_length(json_path(msg, "result.completion")), 3);
  json_object_put(msg);
}
END_TEST

#define FILES "{\"type\":\"ref/resource\",\"uri\":\"content://files/{+path}\"}"

START_TEST(test_complete_templates) {
  /* POOL. */
  expect_result(&a, "completion/complete", COMPLETE(FILES, "path", "docs/", ""),
                "{\"completion\":{\"values\":[\"docs/a.md\",\"docs/b.md\"],"
                "\"total\":2,\"hasMore\":false}}");
  /* ASYNC, completed from the plugin's thread. */
  expect_result(
      &a, "completion/complete",
      COMPLETE("{\"type\":\"ref/resource\",\"uri\":\"content://async/{key}\"}",
               "key", "x", ""),
      "{\"completion\":{\"values\":[\"x-1\",\"x-2\"],\"total\":2,"
      "\"hasMore\":false}}");
  /* A template without a complete callback, and a plain resource. */
  expect_result(&a, "completion/complete",
                COMPLETE("{\"type\":\"ref/resource\",\"uri\":"
                         "\"content://users/{id}/profile{.fmt}\"}",
                         "fmt", "j", ""),
                "{\"completion\":{\"values\":[],\"total\":0,"
                "\"hasMore\":false}}");
  expect_result(&a, "completion/complete",
                COMPLETE("{\"type\":\"ref/resource\",\"uri\":"
                         "\"content://text\"}",
                         "x", "", ""),
                "{\"completion\":{\"values\":[],\"total\":0,"
                "\"hasMore\":false}}");
}
END_TEST

START_TEST(test_complete_errors) {
  expect_error(&a, "completion/complete", COMPLETE(GREET, "mood", "", ""),
               JSONRPC_INVALID_PARAMS, "Unknown argument: mood", NULL);
  expect_error(&a, "completion/complete", COMPLETE(FILES, "name", "", ""),
               JSONRPC_INVALID_PARAMS, "Unknown argument: name", NULL);
  expect_error(
      &a, "completion/complete",
      COMPLETE("{\"type\":\"ref/prompt\",\"name\":\"nope\"}", "x", "", ""),
      JSONRPC_INVALID_PARAMS, "Unknown prompt: nope", NULL);
  expect_error(&a, "completion/complete",
               COMPLETE("{\"type\":\"ref/resource\",\"uri\":"
                        "\"content://nope/{x}\"}",
                        "x", "", ""),
               JSONRPC_INVALID_PARAMS,
               "Unknown resource template: content://nope/{x}", NULL);
  expect_error(
      &a, "completion/complete",
      COMPLETE("{\"type\":\"ref/tool\",\"name\":\"change\"}", "x", "", ""),
      JSONRPC_INVALID_PARAMS, "ref/tool", NULL);
  expect_error(&a, "completion/complete",
               COMPLETE("{\"name\":\"greet\"}", "style", "", ""),
               JSONRPC_INVALID_PARAMS, "ref.type must be a string", NULL);
  expect_error(&a, "completion/complete",
               COMPLETE("{\"type\":\"ref/prompt\"}", "style", "", ""),
               JSONRPC_INVALID_PARAMS, "ref.name must be a string", NULL);
  expect_error(&a, "completion/complete",
               "{\"argument\":{\"name\":\"style\",\"value\":\"\"}}",
               JSONRPC_INVALID_PARAMS, "ref and argument must be objects",
               NULL);
  expect_error(&a, "completion/complete", "{\"ref\":" GREET "}",
               JSONRPC_INVALID_PARAMS, "ref and argument must be objects",
               NULL);
  expect_error(&a, "completion/complete",
               "{\"ref\":" GREET ",\"argument\":{\"name\":\"style\"}}",
               JSONRPC_INVALID_PARAMS, "argument.value must be a string", NULL);
  expect_error(&a, "completion/complete",
               "{\"ref\":" GREET ",\"argument\":{\"value\":\"\"}}",
               JSONRPC_INVALID_PARAMS, "argument.name must be a string", NULL);
  expect_error(
      &a, "completion/complete",
      COMPLETE(GREET, "style", "", ",\"context\":{\"arguments\":{\"name\":1}}"),
      JSONRPC_INVALID_PARAMS, "arguments must be an object of strings", NULL);
}
END_TEST

/* --- subscriptions ------------------------------------------------------ */

START_TEST(test_subscribe_answers) {
  const char *raw;

  raw = rpc_raw(&a, "resources/subscribe", "{\"uri\":\"content://text\"}");
  ck_assert_str_eq(raw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
  /* Again from the same session: still {}, the plugin hears nothing. */
  raw = rpc_raw(&a, "resources/subscribe", "{\"uri\":\"content://text\"}");
  ck_assert_str_eq(raw, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
  ck_assert_str_eq(heard(), "+content://text ");
  raw = rpc_raw(&a, "resources/unsubscribe", "{\"uri\":\"content://text\"}");
  ck_assert_str_eq(raw, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}");
  ck_assert_str_eq(heard(), "+content://text -content://text ");
  /* Unsubscribing from what the session never subscribed to is fine. */
  raw = rpc_raw(&a, "resources/unsubscribe", "{\"uri\":\"content://text\"}");
  ck_assert_str_eq(raw, "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}");
  raw = rpc_raw(&a, "resources/unsubscribe", "{\"uri\":\"content://nope\"}");
  ck_assert_str_eq(raw, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}");
  ck_assert_str_eq(heard(), "+content://text -content://text ");
  /* A template's subscribe callback gets the variables. */
  raw = rpc_raw(&a, "resources/subscribe",
                "{\"uri\":\"content://users/7/profile.json\"}");
  ck_assert_str_eq(raw, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}");
  ck_assert_str_eq(heard(), "+content://text -content://text "
                            "+content://users/7/profile.json "
                            "{\"id\":\"7\",\"fmt\":\"json\"} ");
  /* An entry without a subscribe callback can be subscribed to. */
  raw = rpc_raw(&a, "resources/subscribe", "{\"uri\":\"content://plain\"}");
  ck_assert_str_eq(raw, "{\"jsonrpc\":\"2.0\",\"id\":11,\"result\":{}}");
}
END_TEST

START_TEST(test_subscribe_errors) {
  expect_error(&a, "resources/subscribe", "{\"uri\":\"content://nope\"}",
               JSONRPC_RESOURCE_NOT_FOUND, "Resource not found: content://nope",
               "{\"uri\":\"content://nope\"}");
  expect_error(&a, "resources/subscribe", "{\"uri\":7}", JSONRPC_INVALID_PARAMS,
               "uri must be a string", NULL);
  expect_error(&a, "resources/subscribe", "{\"uri\":\"nope\"}",
               JSONRPC_INVALID_PARAMS, "not an absolute URI", NULL);
  expect_error(&a, "resources/unsubscribe", "{}", JSONRPC_INVALID_PARAMS,
               "uri must be a string", NULL);
  expect_error(&a, "resources/unsubscribe", "{\"uri\":\"a b\"}",
               JSONRPC_INVALID_PARAMS, "not an absolute URI", NULL);
  ck_assert_str_eq(heard(), "");
}
END_TEST

/* The plugin hears of the first subscriber and of the last one leaving,
 * whether it unsubscribed or its session closed. */
START_TEST(test_subscribe_two_sessions) {
  open_b();
  expect_result(&a, "resources/subscribe", "{\"uri\":\"content://text\"}",
                "{}");
  expect_result(&b, "resources/subscribe", "{\"uri\":\"content://text\"}",
                "{}");
  expect_result(&b, "resources/subscribe", "{\"uri\":\"content://blob\"}",
                "{}");
  ck_assert_str_eq(heard(), "+content://text +content://blob ");
  expect_result(&a, "resources/unsubscribe", "{\"uri\":\"content://text\"}",
                "{}");
  ck_assert_str_eq(heard(), "+content://text +content://blob ");
  /* b goes away without unsubscribing: both URIs lose their last
   * subscriber. */
  server_close_session(&h.srv, b.s);
  b.s = NULL;
  {
    const char *now = heard();
    ck_assert_msg(strcmp(now, "+content://text +content://blob "
                              "-content://text -content://blob ") == 0 ||
                      strcmp(now, "+content://text +content://blob "
                                  "-content://blob -content://text ") == 0,
                  "heard \"%s\"", now);
  }
  /* Subscribing again is a first subscriber again. */
  expect_result(&a, "resources/subscribe", "{\"uri\":\"content://text\"}",
                "{}");
  ck_assert_uint_eq(strlen(heard()), strlen("+content://text +content://blob "
                                            "-content://text -content://blob "
                                            "+content://text "));
}
END_TEST

/* resources/updated reaches the sessions subscribed to exactly that URI,
 * before the answer of the call that reported it. */
START_TEST(test_updated_only_to_subscribers) {
  open_b();
  expect_result(&a, "resources/subscribe", "{\"uri\":\"content://text\"}",
                "{}");
  expect_result(&b, "resources/subscribe", "{\"uri\":\"content://blob\"}",
                "{}");
  expect_result(&b, "resources/subscribe",
                "{\"uri\":\"content://users/7/profile.json\"}", "{}");
  harness_clear(&h);
  memory_transport_clear(&b_out);

  ck_assert_str_eq(tool(&b, "touch", "{\"uri\":\"content://text\"}", NULL),
                   "touched content://text");
  ck_assert_uint_eq(h.cap.n, 1);
  ck_assert_uint_eq(count_updated(&h.cap, "content://text"), 1);
  ck_assert_uint_eq(b_out.n, 1); /* only the tool's answer */

  /* From a pool worker; the notification precedes the answer. */
  memory_transport_clear(&b_out);
  ck_assert_str_eq(tool(&b, "touch_pool", "{\"uri\":\"content://blob\"}", NULL),
                   "touched content://blob");
  ck_assert_uint_eq(b_out.n, 2);
  ck_assert_uint_eq(count_updated(&b_out, "content://blob"), 1);
  ck_assert_ptr_nonnull(strstr(b_out.msgs[0], "resources/updated"));
  ck_assert_uint_eq(h.cap.n, 1);

  /* A URI a template serves, exactly as subscribed. */
  memory_transport_clear(&b_out);
  tool(&a, "touch", "{\"uri\":\"content://users/7/profile.json\"}", NULL);
  tool(&a, "touch", "{\"uri\":\"content://users/8/profile.json\"}", NULL);
  ck_assert_uint_eq(b_out.n, 1);
  ck_assert_uint_eq(count_updated(&b_out, "content://users/7/profile.json"), 1);

  /* A change reported again before its notification went out is the
   * same change: a plugin reporting in a loop queues one. */
  memory_transport_clear(&b_out);
  tool(&a, "touch", "{\"uri\":\"content://blob\",\"times\":1000}", NULL);
  settle();
  ck_assert_uint_eq(count_updated(&b_out, "content://blob"), 1);
  /* Once it went out, the next report is news again. */
  tool(&a, "touch", "{\"uri\":\"content://blob\"}", NULL);
  ck_assert_uint_eq(count_updated(&b_out, "content://blob"), 2);

  /* Nobody subscribed: nobody hears. */
  harness_clear(&h);
  memory_transport_clear(&b_out);
  tool(&a, "touch", "{\"uri\":\"content://multi\"}", NULL);
  ck_assert_uint_eq(h.cap.n, 1);
  ck_assert_uint_eq(b_out.n, 0);

  /* After unsubscribing, nothing more. */
  expect_result(&a, "resources/unsubscribe", "{\"uri\":\"content://text\"}",
                "{}");
  harness_clear(&h);
  tool(&b, "touch", "{\"uri\":\"content://text\"}", NULL);
  settle();
  ck_assert_uint_eq(h.cap.n, 0);

  /* resource_updated() refuses what is not an absolute URI. */
  {
    int err;
    const char *text = tool(&a, "touch", "{\"uri\":\"not a uri\"}", &err);
    ck_assert(err);
    ck_assert_ptr_nonnull(strstr(text, "absolute URI"));
  }
}
END_TEST

/* --- run-time changes ----------------------------------------------------- */

static const char *change(const char *tool_name, const char *op,
                          const char *kind, const char *key, int *err) {
  char args[512];
  snprintf(args, sizeof(args), "{\"op\":\"%s\",\"kind\":\"%s\",\"key\":\"%s\"}",
           op, kind, key);
  return tool(&a, tool_name, args, err);
}

START_TEST(test_runtime_resource) {
  int err;

  harness_clear(&h);
  ck_assert_str_eq(change("change", "add", "resource", "content://dyn/1", &err),
                   "add resource content://dyn/1");
  ck_assert(!err);
  /* On the loop: registered before the answer; announced next turn. */
  read_is(
      &a, "content://dyn/1",
      "{\"contents\":[{\"uri\":\"content://dyn/1\","
      "\"mimeType\":\"text/plain\",\"text\":\"dynamic content://dyn/1\"}]}");
  settle();
  ck_assert_uint_eq(count_exact(&h.cap, RESOURCES_CHANGED), 1);
  ck_assert_uint_eq(count_exact(&h.cap, PROMPTS_CHANGED), 0);
  ck_assert_uint_eq(count_exact(&h.cap, TOOLS_CHANGED), 0);
  expect_result(&a, "resources/list", NULL,
                "{\"resources\":[" LIST_RESOURCES ","
                "{\"uri\":\"content://dyn/1\",\"name\":\"dynamic\","
                "\"mimeType\":\"text/plain\"}]}");

  /* From a pool worker: registered by the loop before the answer. */
  harness_clear(&h);
  ck_assert_str_eq(
      change("change_pool", "add", "resource", "content://dyn/2", &err),
      "add resource content://dyn/2");
  ck_assert(!err);
  read_is(
      &a, "content://dyn/2",
      "{\"contents\":[{\"uri\":\"content://dyn/2\","
      "\"mimeType\":\"text/plain\",\"text\":\"dynamic content://dyn/2\"}]}");
  wait_line(&h.cap, RESOURCES_CHANGED);
  settle();
  ck_assert_uint_eq(count_exact(&h.cap, RESOURCES_CHANGED), 1);

  /* Refusals name the reason. */
  ck_assert_ptr_nonnull(
      strstr(change("change", "add", "resource", "content://text", &err),
             "already offered"));
  ck_assert(err);
  ck_assert_ptr_nonnull(strstr(
      change("change", "add", "resource", "no-scheme", &err), "absolute URI"));
  ck_assert(err);
  ck_assert_ptr_nonnull(
      strstr(change("change_pool", "add", "resource", "no-scheme", &err),
             "absolute URI"));
  ck_assert(err);
  ck_assert_ptr_nonnull(
      strstr(change("change", "remove", "resource", "content://nope", &err),
             "offers no resource"));
  ck_assert(err);
  /* From a worker, a key already taken passes validation and is refused
   * by the loop afterwards, with a log line and no announcement. */
  harness_clear(&h);
  ck_assert_str_eq(
      change("change_pool", "add", "resource", "content://text", &err),
      "add resource content://text");
  ck_assert(!err);
  settle();
  ck_assert_uint_eq(count_exact(&h.cap, RESOURCES_CHANGED), 0);
  ck_assert(logged("mcpd: error: plugin \"content\": adding a resource "
                   "refused: resource \"content://text\" is already offered "
                   "by plugin \"content\""));
  read_is(&a, "content://text",
          "{\"contents\":[{\"uri\":\"content://text\","
          "\"mimeType\":\"text/plain\",\"text\":\"hello text\"}]}");

  /* Removal, on the loop and from a worker. */
  harness_clear(&h);
  change("change", "remove", "resource", "content://dyn/1", &err);
  ck_assert(!err);
  read_fails(&a, "content://dyn/1", JSONRPC_RESOURCE_NOT_FOUND,
             "Resource not found", "{\"uri\":\"content://dyn/1\"}");
  change("change_pool", "remove", "resource", "content://dyn/2", &err);
  ck_assert(!err);
  read_fails(&a, "content://dyn/2", JSONRPC_RESOURCE_NOT_FOUND,
             "Resource not found", "{\"uri\":\"content://dyn/2\"}");
  settle();
  ck_assert_uint_ge(count_exact(&h.cap, RESOURCES_CHANGED), 1);
  /* Table entries can be removed too. */
  change("change", "remove", "resource", "content://multi", &err);
  ck_assert(!err);
  expect_result(
      &a, "resources/list", NULL,
      "{\"resources\":["
      "{\"uri\":\"content://text\",\"name\":\"text\",\"title\":\"Text\","
      "\"description\":\"Inline text from the entry's data\","
      "\"mimeType\":\"text/plain\"},"
      "{\"uri\":\"content://blob\",\"name\":\"blob\","
      "\"mimeType\":\"application/octet-stream\"},"
      "{\"uri\":\"content://async\",\"name\":\"async\"},"
      "{\"uri\":\"content://plain\",\"name\":\"plain\"}]}");
}
END_TEST

START_TEST(test_runtime_template) {
  int err;

  harness_clear(&h);
  change("change_pool", "add", "template", "content://dyn/{x}/t", &err);
  ck_assert(!err);
  read_is(&a, "content://dyn/a%2Fb/t",
          "{\"contents\":[{\"uri\":\"content://dyn/a%2Fb/t\",\"text\":"
          "\"dynamic content://dyn/a%2Fb/t {\\\"x\\\":\\\"a/b\\\"}\"}]}");
  wait_line(&h.cap, RESOURCES_CHANGED);
  settle();
  ck_assert_uint_eq(count_exact(&h.cap, RESOURCES_CHANGED), 1);
  ck_assert_uint_eq(count_exact(&h.cap, PROMPTS_CHANGED), 0);
  expect_result(&a, "resources/templates/list", NULL,
                "{\"resourceTemplates\":[" LIST_TEMPLATES ","
                "{\"uriTemplate\":\"content://dyn/{x}/t\","
                "\"name\":\"dynamic-template\"}]}");
  /* A template the matcher cannot take is refused at once, also from a
   * worker. */
  ck_assert_ptr_nonnull(
      strstr(change("change_pool", "add", "template", "content://{a}{b}", &err),
             "literal text between"));
  ck_assert(err);
  ck_assert_ptr_nonnull(
      strstr(change("change", "add", "template", "content://{?q}", &err),
             "operator '?'"));
  ck_assert(err);

  harness_clear(&h);
  change("change", "remove", "template", "content://dyn/{x}/t", &err);
  ck_assert(!err);
  read_fails(&a, "content://dyn/a/t", JSONRPC_RESOURCE_NOT_FOUND,
             "Resource not found", "{\"uri\":\"content://dyn/a/t\"}");
  settle();
  ck_assert_uint_eq(count_exact(&h.cap, RESOURCES_CHANGED), 1);
  expect_result(&a, "resources/templates/list", NULL,
                "{\"resourceTemplates\":[" LIST_TEMPLATES "]}");
}
END_TEST

START_TEST(test_runtime_prompt) {
  int err;

  harness_clear(&h);
  change("change", "add", "prompt", "p1", &err);
  ck_assert(!err);
  change("change_pool", "add", "prompt", "p2", &err);
  ck_assert(!err);
  settle();
  ck_assert_uint_ge(count_exact(&h.cap, PROMPTS_CHANGED), 1);
  ck_assert_uint_eq(count_exact(&h.cap, RESOURCES_CHANGED), 0);
  /* The argument table was copied before the plugin scribbled on it. */
  expect_result(
      &a, "prompts/list", NULL,
      "{\"prompts\":[" LIST_PROMPTS ","
      "{\"name\":\"p1\",\"description\":\"A prompt added at run "
      "time\",\"arguments\":[{\"name\":\"topic\",\"required\":true}]},"
      "{\"name\":\"p2\",\"description\":\"A prompt added at run "
      "time\",\"arguments\":[{\"name\":\"topic\",\"required\":true}]}"
      "]}");
  expect_result(&a, "prompts/get",
                "{\"name\":\"p2\",\"arguments\":{\"topic\":\"cats\"}}",
                "{\"description\":\"A prompt added at run time\",\"messages\":"
                "[{\"role\":\"user\",\"content\":{\"type\":\"text\","
                "\"text\":\"prompt p2 about cats\"}}]}");
  expect_error(&a, "prompts/get", "{\"name\":\"p1\"}", JSONRPC_INVALID_PARAMS,
               "Missing required argument: topic", NULL);
  ck_assert_ptr_nonnull(strstr(change("change", "add", "prompt", "greet", &err),
                               "already offered"));
  ck_assert(err);
  ck_assert_ptr_nonnull(strstr(
      change("change", "add", "prompt", "bad name", &err), "valid name"));
  ck_assert(err);

  harness_clear(&h);
  change("change", "remove", "prompt", "p1", &err);
  ck_assert(!err);
  change("change_pool", "remove", "prompt", "p2", &err);
  ck_assert(!err);
  expect_error(&a, "prompts/get",
               "{\"name\":\"p1\",\"arguments\":{\"topic\":\"x\"}}",
               JSONRPC_INVALID_PARAMS, "Unknown prompt: p1", NULL);
  settle();
  ck_assert_uint_ge(count_exact(&h.cap, PROMPTS_CHANGED), 1);
  expect_result(&a, "prompts/list", NULL, "{\"prompts\":[" LIST_PROMPTS "]}");
}
END_TEST

/* Changes made in one loop turn are announced once per kind: resources
 * and templates share one notification. */
START_TEST(test_runtime_one_per_kind_per_turn) {
  static const char *const lines[] = {
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"change\",\"arguments\":{\"op\":\"add\",\"kind\":"
      "\"resource\",\"key\":\"content://t/1\"}}}",
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"change\",\"arguments\":{\"op\":\"add\",\"kind\":"
      "\"resource\",\"key\":\"content://t/2\"}}}",
      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"change\",\"arguments\":{\"op\":\"add\",\"kind\":"
      "\"template\",\"key\":\"content://t/{x}/y\"}}}",
      "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"change\",\"arguments\":{\"op\":\"add\",\"kind\":"
      "\"prompt\",\"key\":\"t1\"}}}",
      "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"change\",\"arguments\":{\"op\":\"remove\",\"kind\":"
      "\"prompt\",\"key\":\"many\"}}}",
  };

  open_b();
  harness_clear(&h);
  for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
    send_line(&a, lines[i]);
  /* INLINE: all answered at once, nothing announced yet. */
  ck_assert_uint_eq(h.cap.n, 5);
  ck_assert_uint_eq(harness_count(&h.cap, "\"isError\""), 0);
  harness_turn(&h);
  harness_turn(&h);
  ck_assert_uint_eq(h.cap.n, 7);
  ck_assert_uint_eq(count_exact(&h.cap, RESOURCES_CHANGED), 1);
  ck_assert_uint_eq(count_exact(&h.cap, PROMPTS_CHANGED), 1);
  ck_assert_uint_eq(count_exact(&h.cap, TOOLS_CHANGED), 0);
  /* Every initialized session hears it. */
  ck_assert_uint_eq(b_out.n, 2);
  ck_assert_uint_eq(count_exact(&b_out, RESOURCES_CHANGED), 1);
  ck_assert_uint_eq(count_exact(&b_out, PROMPTS_CHANGED), 1);
  /* A template alone is a resources/list_changed too. */
  harness_clear(&h);
  send_line(&a, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\","
                "\"params\":{\"name\":\"change\",\"arguments\":{\"op\":"
                "\"remove\",\"kind\":\"template\",\"key\":"
                "\"content://t/{x}/y\"}}}");
  harness_turn(&h);
  harness_turn(&h);
  ck_assert_uint_eq(h.cap.n, 2);
  ck_assert_uint_eq(count_exact(&h.cap, RESOURCES_CHANGED), 1);
}
END_TEST

/* A subscription follows its URI: the entry that serves it after a
 * change is told. */
START_TEST(test_subscription_follows_runtime_entries) {
  int err;

  change("change", "add", "resource", "content://dyn/s", &err);
  ck_assert(!err);
  expect_result(&a, "resources/subscribe", "{\"uri\":\"content://dyn/s\"}",
                "{}");
  ck_assert_str_eq(heard(), "+content://dyn/s ");
  /* The plugin removed it itself: nothing to tell it. */
  change("change", "remove", "resource", "content://dyn/s", &err);
  ck_assert(!err);
  settle();
  ck_assert_str_eq(heard(), "+content://dyn/s ");
  /* Back again: the new entry hears of the subscription still open. */
  change("change", "add", "resource", "content://dyn/s", &err);
  ck_assert(!err);
  settle();
  ck_assert_str_eq(heard(), "+content://dyn/s +content://dyn/s ");
  /* Now served by a template instead, which hears of it with the
   * variables; the resource, when it comes back, takes over. */
  change("change", "remove", "resource", "content://dyn/s", &err);
  change("change", "add", "template", "content://dyn/{v}", &err);
  ck_assert(!err);
  settle();
  ck_assert_str_eq(heard(), "+content://dyn/s +content://dyn/s "
                            "+content://dyn/s {\"v\":\"s\"} ");
  change("change", "add", "resource", "content://dyn/s", &err);
  ck_assert(!err);
  settle();
  ck_assert_str_eq(heard(), "+content://dyn/s +content://dyn/s "
                            "+content://dyn/s {\"v\":\"s\"} "
                            "-content://dyn/s {\"v\":\"s\"} "
                            "+content://dyn/s ");
  /* Updates still reach the session. */
  harness_clear(&h);
  tool(&a, "touch", "{\"uri\":\"content://dyn/s\"}", NULL);
  ck_assert_uint_eq(count_updated(&h.cap, "content://dyn/s"), 1);
}
END_TEST

/* --- reload ------------------------------------------------------------- */

/* Replaces content.so with `fixture`, with a modification time that
 * cannot look unchanged. */
static void replace_plugin(const char *fixture, int secs_ago) {
  struct timespec times[2];

  harness_copy(&h, fixture, "content.so");
  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= secs_ago;
  times[1] = times[0];
  ck_assert_int_eq(
      utimensat(AT_FDCWD, harness_path(&h, "content.so"), times, 0), 0);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
}

START_TEST(test_reload_keeps_subscriptions) {
  open_b();
  expect_result(&a, "resources/subscribe", "{\"uri\":\"content://text\"}",
                "{}");
  expect_result(&b, "resources/subscribe",
                "{\"uri\":\"content://users/7/profile.json\"}", "{}");
  ck_assert_str_eq(tool(&a, "version", NULL, NULL), "1");
  ck_assert_str_eq(heard(), "+content://text +content://users/7/profile.json "
                            "{\"id\":\"7\",\"fmt\":\"json\"} ");

  harness_clear(&h);
  memory_transport_clear(&b_out);
  replace_plugin("content_v2.so", 10);
  settle();
  /* Everything the plugin offers was replaced: each kind announced once. */
  ck_assert_uint_eq(count_exact(&h.cap, TOOLS_CHANGED), 1);
  ck_assert_uint_eq(count_exact(&h.cap, RESOURCES_CHANGED), 1);
  ck_assert_uint_eq(count_exact(&h.cap, PROMPTS_CHANGED), 1);
  ck_assert_str_eq(tool(&a, "version", NULL, NULL), "2");
  /* The new instance was told of both subscriptions still open, and the
   * old one was not told they ended. */
  {
    const char *now = heard();
    ck_assert_msg(
        strcmp(now, "+content://text +content://users/7/profile.json "
                    "{\"id\":\"7\",\"fmt\":\"json\"} ") == 0 ||
            strcmp(now,
                   "+content://users/7/profile.json "
                   "{\"id\":\"7\",\"fmt\":\"json\"} +content://text ") == 0,
        "the new instance heard \"%s\"", now);
  }
  /* The sessions stay subscribed: the new instance's updates reach
   * them. */
  harness_clear(&h);
  memory_transport_clear(&b_out);
  tool(&a, "touch", "{\"uri\":\"content://text\"}", NULL);
  tool(&a, "touch", "{\"uri\":\"content://users/7/profile.json\"}", NULL);
  ck_assert_uint_eq(count_updated(&h.cap, "content://text"), 1);
  ck_assert_uint_eq(count_updated(&h.cap, "content://users/7/profile.json"), 0);
  ck_assert_uint_eq(b_out.n, 1);
  ck_assert_uint_eq(count_updated(&b_out, "content://users/7/profile.json"), 1);
  /* And the new instance hears them leave. */
  expect_result(&a, "resources/unsubscribe", "{\"uri\":\"content://text\"}",
                "{}");
  ck_assert_ptr_nonnull(strstr(heard(), "-content://text "));
}
END_TEST

Suite *content_suite(void) {
  Suite *s = suite_create("content");
  TCase *tc;

  tc = tcase_create("lists");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_capabilities);
  tcase_add_test(tc, test_lists);
  tcase_add_test(tc, test_list_bad_cursor);
  suite_add_tcase(s, tc);

  tc = tcase_create("paging");
  tcase_add_checked_fixture(tc, setup_paged, teardown);
  tcase_add_test(tc, test_paging);
  suite_add_tcase(s, tc);

  tc = tcase_create("read");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_read_resources);
  tcase_add_test(tc, test_read_templates);
  tcase_add_test(tc, test_read_not_found);
  tcase_add_test(tc, test_read_bad_params);
  tcase_add_test(tc, test_read_resolution_order);
  suite_add_tcase(s, tc);

  tc = tcase_create("misuse");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_read_misuse);
  tcase_add_test(tc, test_read_failures);
  tcase_add_test(tc, test_prompt_misuse);
  tcase_add_test(tc, test_completion_misuse);
  tcase_add_test(tc, test_tool_misuse);
  suite_add_tcase(s, tc);

  tc = tcase_create("prompts");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_prompts_get);
  tcase_add_test(tc, test_prompts_get_errors);
  suite_add_tcase(s, tc);

  tc = tcase_create("completion");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_complete_prompts);
  tcase_add_test(tc, test_complete_caps_at_100);
  tcase_add_test(tc, test_complete_templates);
  tcase_add_test(tc, test_complete_errors);
  suite_add_tcase(s, tc);

  tc = tcase_create("subscriptions");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_subscribe_answers);
  tcase_add_test(tc, test_subscribe_errors);
  tcase_add_test(tc, test_subscribe_two_sessions);
  tcase_add_test(tc, test_updated_only_to_subscribers);
  suite_add_tcase(s, tc);

  tc = tcase_create("runtime");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_runtime_resource);
  tcase_add_test(tc, test_runtime_template);
  tcase_add_test(tc, test_runtime_prompt);
  tcase_add_test(tc, test_runtime_one_per_kind_per_turn);
  tcase_add_test(tc, test_subscription_follows_runtime_entries);
  suite_add_tcase(s, tc);

  tc = tcase_create("reload");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_reload_keeps_subscriptions);
  suite_add_tcase(s, tc);
  return s;
}
