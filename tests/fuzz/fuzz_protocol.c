/* SPDX-License-Identifier: MIT */
/* fuzz_protocol.c -- libFuzzer harness for the protocol path a client's
 * bytes take: framer -> jsonrpc -> session -> methods -> call -> plugins.
 * The server loads the bundled echo and calc plugins and the fixture
 * fuzzfix.so (fuzz_plugin.c): tools, resources, resource templates,
 * prompts, completion and subscription callbacks, some ASYNC so that
 * requests stay in flight until the next loop turn; nothing runs on
 * another thread.
 *
 * Input layout: the first byte selects the set-up, the rest is the byte
 * stream a client would write to mcpd's stdin.
 *
 *   selector % 8 in 0..3  the stream starts on a fresh session
 *   selector % 8 in 4..7  the session is first initialized (initialize +
 *                         notifications/initialized) for revision
 *                         2025-11-25, 2025-06-18, 2025-03-26 or 2024-11-05,
 *                         so batches and post-initialize methods are reached
 *   (selector / 8) % 8    when nonzero, the stream is fed a second time, on
 *                         a second fresh session, in pieces of 1, 2, 3, 5,
 *                         8, 13 or 64 bytes, and must get the same replies
 *   selector & 0x40       hang up: the session closes right after the
 *                         stream, with requests still in flight; their
 *                         calls must end and write nothing
 *
 * Corpus files start with a digit: '0'-'3' plain, '4'-'7' initialized
 * ('0'-'7' are 0x30-0x37, so (selector / 8) % 8 = 6: 13-byte pieces);
 * 'p'-'w' (0x70-0x77) are the same with a hang-up.
 *
 * The whole stream is fed, as the stdio transport would at EOF, then the
 * loop runs until no call is in flight.  A session is opened per input
 * and closed after it: a session carries state (initialized, revision, log
 * level, requests in flight) that would make a crash depend on earlier
 * inputs.  The server, its loop and the plugins are set up once, with
 * --max-message-size 2048 (oversized lines are within libFuzzer's input
 * lengths), --page-size 1 (list pages and cursors) and
 * --max-in-flight 3 (the busy error is reachable).  Subscriptions belong
 * to the session and end with it; the fixture's subscribe callbacks report
 * updates, which reach the session on a later loop turn.
 *
 * Invariants, on every message written (fuzz_check_message): one strict
 * JSON value, valid UTF-8, no raw newline, CR, NUL or control character, a
 * well-formed JSON-RPC 2.0 response, notification or batch of responses.
 * Per line, at once: at most one message; a line that is not JSON or not
 * an object or array gets exactly one error with a null id; a reply to a
 * request carries the request's id (or null, for an error); a notification
 * gets nothing, or an error with a null id.  Later: every reply that comes
 * on a loop turn answers a request that got none at once, each at most
 * once; every request is answered unless the stream cancels something; the
 * loop ends every call within a bounded number of turns; after a hang-up
 * nothing is written.  Replies to requests that make the fixture misuse a
 * builder (tools/call misuse, resources/read fuzz://misuse/..., prompts/get
 * misuse, completion/complete of a fixture entry with a value starting
 * with '!') are never results.  Results of completion/complete carry at
 * most 100 string values, a total no smaller and hasMore when it is
 * larger; of resources/read a non-empty list of contents, each with a URI
 * and text or a blob; of prompts/get messages whose role is user or
 * assistant and whose content is a typed block.  (Batches are checked
 * message by message only.)  notifications/resources/updated names a URI
 * the session is subscribed to (unless a batch may have changed that). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framer.h"
#include "fuzz_common.h"
#include "jsonrpc.h"
#include "registry.h"

#define FUZZ_MAX_MESSAGE 2048
#define FUZZ_MAX_TURNS 64

static fuzz_server fs;
static int trace; /* MCPD_FUZZ_TRACE: print the exchange to stderr */

/* What a reply to a request must be, besides well-formed. */
#define EXPECT_FAILURE 0x1u    /* an error: the fixture misuses a builder */
#define EXPECT_COMPLETION 0x2u /* a result is a CompleteResult */
#define EXPECT_READ 0x4u       /* a result is a ReadResourceResult */
#define EXPECT_PROMPT 0x8u     /* a result is a GetPromptResult */

/* A request not answered at once. */
typedef struct pending {
  char *id; /* JSON text */
  unsigned expect;
} pending;

typedef struct run {
  memory_transport mt;
  session *s;
  framer f;
  pending *pending;
  size_t n_pending;
  size_t cap_pending;
  int cancels; /* the stream sent notifications/cancelled */
  int batches; /* the stream sent a batch */
  /* The URIs the session is subscribed to once every line was handled,
   * by the replies to resources/subscribe and unsubscribe (outside
   * batches), as keys. */
  json_object *subscribed;
} run;

static void written_cb(void *arg, const char *text, size_t len) {
  (void)arg;
  if (trace)
    fprintf(stderr, "<- %.*s\n", (int)len, text);
  json_object_put(fuzz_check_message(text, len));
}

static json_object *reply(run *r, size_t i) {
  const char *why;
  json_object *msg = fuzz_parse_strict(r->mt.msgs[i], strlen(r->mt.msgs[i]),
                                       &why); /* checked in written_cb */
  FUZZ_CHECK(msg != NULL, "reply %zu vanished", i);
  return msg;
}

static int error_code(json_object *msg) {
  json_object *err, *code;
  if (!json_object_is_type(msg, json_type_object) ||
      !json_object_object_get_ex(msg, "error", &err) ||
      !json_object_object_get_ex(err, "code", &code))
    return 0;
  return json_object_get_int(code);
}

static int null_id_error(json_object *msg) {
  json_object *id;
  return error_code(msg) != 0 && json_object_object_get_ex(msg, "id", &id) &&
         id == NULL;
}

/* json-c 0.16 decodes some escaped surrogate pairs wrongly (mcpd works
 * around it), so string ids holding one are not compared. */
static int has_surrogate_escape(const char *line, size_t len) {
  for (size_t i = 0; i + 3 < len; i++)
    if (line[i] == '\\' && line[i + 1] == 'u' &&
        (line[i + 2] == 'd' || line[i + 2] == 'D') &&
        strchr("89abAB", line[i + 3]) != NULL && line[i + 3] != '\0')
      return 1;
  return 0;
}

static int is_cancel(json_object *msg) {
  json_object *m;
  return json_object_is_type(msg, json_type_object) &&
         json_object_object_get_ex(msg, "method", &m) &&
         json_object_is_type(m, json_type_string) &&
         strcmp(json_object_get_string(m), "notifications/cancelled") == 0;
}

static void note_cancels(run *r, json_object *req) {
  if (json_object_is_type(req, json_type_array)) {
    size_t n = json_object_array_length(req);
    for (size_t i = 0; i < n; i++)
      if (is_cancel(json_object_array_get_idx(req, i)))
        r->cancels = 1;
  } else if (is_cancel(req)) {
    r->cancels = 1;
  }
}

/* Requests in flight may share an id, and which is answered first is not
 * known here: such requests keep only the expectations they share. */
static void add_pending(run *r, const char *id, unsigned expect) {
  if (r->n_pending == r->cap_pending) {
    r->cap_pending = r->cap_pending ? r->cap_pending * 2 : 8;
    r->pending = realloc(r->pending, r->cap_pending * sizeof(*r->pending));
    FUZZ_CHECK(r->pending != NULL, "out of memory");
  }
  for (size_t i = 0; i < r->n_pending; i++)
    if (strcmp(r->pending[i].id, id) == 0) {
      expect &= r->pending[i].expect;
      r->pending[i].expect = expect;
    }
  r->pending[r->n_pending].id = strdup(id);
  r->pending[r->n_pending].expect = expect;
  FUZZ_CHECK(r->pending[r->n_pending].id != NULL, "out of memory");
  r->n_pending++;
}

/* Crosses a late reply's id off the requests still owed one; returns
 * whether one was, and what its reply must be in *expect. */
static int take_pending(run *r, const char *id, unsigned *expect) {
  for (size_t i = 0; i < r->n_pending; i++)
    if (strcmp(r->pending[i].id, id) == 0) {
      *expect = r->pending[i].expect;
      free(r->pending[i].id);
      r->pending[i] = r->pending[--r->n_pending];
      return 1;
    }
  return 0;
}

static const char *string_member(json_object *obj, const char *key) {
  json_object *v;
  if (json_object_is_type(obj, json_type_object) &&
      json_object_object_get_ex(obj, key, &v) &&
      json_object_is_type(v, json_type_string))
    return json_object_get_string(v);
  return NULL;
}

static int starts_with(const char *s, const char *prefix) {
  return s != NULL && strncmp(s, prefix, strlen(prefix)) == 0;
}

static int equals(const char *s, const char *t) {
  return s != NULL && strcmp(s, t) == 0;
}

/* What the reply to request `req` must be (EXPECT_* bits).  The names are
 * fuzz_plugin.c's: the entries that misuse a builder, and those with a
 * completion callback. */
static unsigned expectations(json_object *req) {
  const char *method = string_member(req, "method");
  json_object *params = NULL, *ref = NULL, *argument = NULL;
  const char *type;

  if (method == NULL)
    return 0;
  json_object_object_get_ex(req, "params", &params);
  if (strcmp(method, "tools/call") == 0)
    return equals(string_member(params, "name"), "misuse") ? EXPECT_FAILURE : 0;
  if (strcmp(method, "resources/read") == 0)
    return EXPECT_READ |
           (starts_with(string_member(params, "uri"), "fuzz://misuse/")
                ? EXPECT_FAILURE
                : 0);
  if (strcmp(method, "prompts/get") == 0)
    return EXPECT_PROMPT |
           (equals(string_member(params, "name"), "misuse") ? EXPECT_FAILURE
                                                            : 0);
  if (strcmp(method, "completion/complete") != 0)
    return 0;
  if (json_object_is_type(params, json_type_object)) {
    json_object_object_get_ex(params, "ref", &ref);
    json_object_object_get_ex(params, "argument", &argument);
  }
  type = string_member(ref, "type");
  if (starts_with(string_member(argument, "value"), "!") &&
      ((equals(type, "ref/prompt") &&
        (equals(string_member(ref, "name"), "say") ||
         equals(string_member(ref, "name"), "misuse"))) ||
       (equals(type, "ref/resource") &&
        (equals(string_member(ref, "uri"), "fuzz://item/{id}/{+rest}") ||
         equals(string_member(ref, "uri"), "fuzz://async{/key}~{#frag}")))))
    return EXPECT_COMPLETION | EXPECT_FAILURE;
  return EXPECT_COMPLETION;
}

static json_object *member(json_object *obj, const char *key, json_type type) {
  json_object *v;
  if (json_object_is_type(obj, json_type_object) &&
      json_object_object_get_ex(obj, key, &v) && json_object_is_type(v, type))
    return v;
  return NULL;
}

/* Checks a reply against what its request expects. */
static void check_answer(unsigned expect, json_object *msg, const char *text) {
  json_object *result = member(msg, "result", json_type_object), *list, *v;
  size_t n;

  if (result == NULL)
    return; /* an error; or no response, which fuzz_check_message judged */
  FUZZ_CHECK(!(expect & EXPECT_FAILURE),
             "a builder the call cannot carry was accepted: %.300s", text);
  if (expect & EXPECT_COMPLETION) {
    json_object *completion = member(result, "completion", json_type_object);
    json_object *total, *more;
    FUZZ_CHECK(completion != NULL, "no completion: %.300s", text);
    list = member(completion, "values", json_type_array);
    total = member(completion, "total", json_type_int);
    more = member(completion, "hasMore", json_type_boolean);
    FUZZ_CHECK(list != NULL && total != NULL && more != NULL,
               "completion lacks values, total or hasMore: %.300s", text);
    n = json_object_array_length(list);
    FUZZ_CHECK(n <= 100, "%zu completion values: %.300s", n, text);
    for (size_t i = 0; i < n; i++)
      FUZZ_CHECK(json_object_is_type(json_object_array_get_idx(list, i),
                                     json_type_string),
                 "a completion value is no string: %.300s", text);
    FUZZ_CHECK(json_object_get_uint64(total) >= n,
               "completion total below the values sent: %.300s", text);
    FUZZ_CHECK(json_object_get_uint64(total) == n ||
                   json_object_get_boolean(more),
               "more completions than sent, hasMore false: %.300s", text);
  }
  if (expect & EXPECT_READ) {
    list = member(result, "contents", json_type_array);
    n = list ? json_object_array_length(list) : 0;
    FUZZ_CHECK(n > 0, "a read result without contents: %.300s", text);
    for (size_t i = 0; i < n; i++) {
      v = json_object_array_get_idx(list, i);
      FUZZ_CHECK(member(v, "uri", json_type_string) != NULL &&
                     (member(v, "text", json_type_string) != NULL) !=
                         (member(v, "blob", json_type_string) != NULL),
                 "a read content needs a uri and text or blob: %.300s", text);
    }
  }
  if (expect & EXPECT_PROMPT) {
    list = member(result, "messages", json_type_array);
    FUZZ_CHECK(list != NULL, "a prompt result without messages: %.300s", text);
    n = json_object_array_length(list);
    for (size_t i = 0; i < n; i++) {
      const char *role;
      v = json_object_array_get_idx(list, i);
      role = string_member(v, "role");
      FUZZ_CHECK(equals(role, "user") || equals(role, "assistant"),
                 "a prompt message's role is not user or assistant: %.300s",
                 text);
      FUZZ_CHECK(
          string_member(member(v, "content", json_type_object), "type") != NULL,
          "a prompt message's content has no type: %.300s", text);
    }
  }
}

/* Follows the session's subscriptions: a subscribe or unsubscribe that
 * got a result at once took effect. */
static void note_subscription(run *r, json_object *req, json_object *reply) {
  const char *method = string_member(req, "method"), *uri;
  json_object *params = NULL;

  if (method == NULL || member(reply, "result", json_type_object) == NULL)
    return;
  json_object_object_get_ex(req, "params", &params);
  if ((uri = string_member(params, "uri")) == NULL)
    return;
  if (strcmp(method, "resources/subscribe") == 0)
    json_object_object_add(r->subscribed, uri, NULL);
  else if (strcmp(method, "resources/unsubscribe") == 0)
    json_object_object_del(r->subscribed, uri);
}

/* What one line may have produced at once: r->mt.msgs[before ..]. */
static void check_line(run *r, const char *line, size_t len, size_t before) {
  size_t n = r->mt.n - before;
  json_object *req, *first = NULL, *id, *rid;
  const char *why;

  FUZZ_CHECK(n <= 1, "one line got %zu replies: %.300s", n, line);
  if (n == 1)
    first = reply(r, before);

  req = memchr(line, '\0', len) == NULL ? fuzz_parse_strict(line, len, &why)
                                        : NULL;
  if (req == NULL || (!json_object_is_type(req, json_type_object) &&
                      !json_object_is_type(req, json_type_array))) {
    /* Not JSON at all, or a scalar: one error, id null. */
    FUZZ_CHECK(n == 1 && null_id_error(first),
               "no null-id error for a line that is no JSON-RPC message "
               "(%zu replies): %.300s",
               n, line);
    goto done;
  }
  note_cancels(r, req);
  if (json_object_is_type(req, json_type_array)) {
    r->batches = 1;
    goto done; /* Batches: checked message by message. */
  }
  if (json_object_object_get_ex(req, "method", NULL) &&
      json_object_object_get_ex(req, "id", &id)) {
    if (n == 0) {
      /* Still in flight: answered on a loop turn, or cancelled. */
      add_pending(r, fuzz_id_text(id), expectations(req));
      goto done;
    }
    check_answer(expectations(req), first, line);
    note_subscription(r, req, first);
    json_object_object_get_ex(first, "id", &rid);
    if (rid == NULL) {
      FUZZ_CHECK(error_code(first) != 0, "a result with a null id: %.300s",
                 line);
    } else if (!json_object_is_type(id, json_type_string) ||
               !has_surrogate_escape(line, len)) {
      FUZZ_CHECK(strcmp(fuzz_id_text(id), fuzz_id_text(rid)) == 0,
                 "reply id %s for request id %s: %.300s", fuzz_id_text(rid),
                 fuzz_id_text(id), line);
    }
  } else if (json_object_object_get_ex(req, "method", NULL)) {
    FUZZ_CHECK(n == 0 || null_id_error(first),
               "a notification got a reply other than a null-id error: "
               "%.300s",
               line);
  }
done:
  json_object_put(req);
  json_object_put(first);
}

static void frame_cb(void *ctx, char *line, size_t len, int oversize) {
  run *r = ctx;
  size_t before = r->mt.n;

  if (trace)
    fprintf(stderr, "-> %.*s\n", oversize ? 9 : (int)len,
            oversize ? "(oversize)" : line);
  if (oversize) {
    FUZZ_CHECK(line == NULL && len > FUZZ_MAX_MESSAGE,
               "oversize report for a %zu-byte line", len);
    session_oversize(r->s, FUZZ_MAX_MESSAGE);
    FUZZ_CHECK(r->mt.n == before + 1, "oversize got %zu replies",
               r->mt.n - before);
    return;
  }
  FUZZ_CHECK(len <= FUZZ_MAX_MESSAGE, "framer delivered %zu bytes", len);
  FUZZ_CHECK(line[len] == '\0', "line is not NUL-terminated");
  FUZZ_CHECK(memchr(line, '\n', len) == NULL, "line holds a newline");
  FUZZ_CHECK(len > 0, "framer delivered an empty line");
  session_handle_line(r->s, line, len);
  check_line(r, line, len, before);
}

static void run_open(run *r, int init) {
  static const char *const versions[] = {"2025-11-25", "2025-06-18",
                                         "2025-03-26", "2024-11-05"};
  char line[512];
  json_object *msg, *v;
  const char *version = versions[init & 3];

  memset(r, 0, sizeof(*r));
  r->subscribed = json_object_new_object();
  FUZZ_CHECK(r->subscribed != NULL, "out of memory");
  memory_transport_init(&r->mt, written_cb, r);
  r->s = server_open_session(&fs.srv, memory_transport_write, &r->mt);
  FUZZ_CHECK(r->s != NULL, "server_open_session failed");
  framer_init(&r->f, FUZZ_MAX_MESSAGE);
  if (!(init & 4))
    return;
  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
           "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
           "\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"0\"}}}",
           version);
  session_handle_line(r->s, line, strlen(line));
  FUZZ_CHECK(r->mt.n == 1, "initialize got %zu replies", r->mt.n);
  msg = reply(r, 0);
  FUZZ_CHECK(json_object_object_get_ex(msg, "result", &v) &&
                 json_object_object_get_ex(v, "protocolVersion", &v) &&
                 strcmp(json_object_get_string(v), version) == 0,
             "initialize failed: %s", r->mt.msgs[0]);
  json_object_put(msg);
  strcpy(line,
         "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  session_handle_line(r->s, line, strlen(line));
  FUZZ_CHECK(r->mt.n == 1, "notifications/initialized got a reply");
  memory_transport_clear(&r->mt);
}

/* Feeds the stream in pieces of `piece` bytes (0: all at once) and ends
 * it as the stdio transport does at EOF.  Then either lets the loop answer
 * what is in flight, checks the late replies and closes the session, or,
 * with `hangup`, closes the session first (the client went away mid-call)
 * and checks that nothing more is written.  The messages stay in r->mt. */
static void run_feed(run *r, const uint8_t *data, size_t size, size_t piece,
                     int hangup) {
  size_t fed, turns;

  if (piece == 0)
    piece = size;
  for (size_t off = 0; off < size; off += piece) {
    size_t n = size - off < piece ? size - off : piece;
    FUZZ_CHECK(framer_feed(&r->f, (const char *)data + off, n, frame_cb, r) ==
                   0,
               "framer_feed failed");
  }
  if (framer_pending(&r->f) > 0 && !r->f.discarding)
    framer_feed(&r->f, "\n", 1, frame_cb, r);
  framer_free(&r->f);

  fed = r->mt.n;
  if (hangup) {
    if (trace)
      fprintf(stderr, "-- hang up\n");
    server_close_session(&fs.srv, r->s);
    r->s = NULL;
  } else if (trace) {
    fprintf(stderr, "-- loop turns\n");
  }
  for (turns = 0; fs.srv.exec.in_flight > 0 && turns < FUZZ_MAX_TURNS; turns++)
    uv_run(&fs.loop, UV_RUN_NOWAIT);
  FUZZ_CHECK(fs.srv.exec.in_flight == 0,
             "%u calls still in flight after %d loop turns",
             fs.srv.exec.in_flight, FUZZ_MAX_TURNS);
  fuzz_server_turn(&fs);

  if (hangup) {
    FUZZ_CHECK(r->mt.n == fed, "%zu messages written after the session closed",
               r->mt.n - fed);
  } else {
    FUZZ_CHECK(r->s->requests_in_flight == 0,
               "%zu requests in flight, no call running",
               r->s->requests_in_flight);
    for (size_t i = fed; i < r->mt.n; i++) {
      json_object *msg = reply(r, i), *id;
      const char *uri;
      if (equals(string_member(msg, "method"),
                 "notifications/resources/updated") &&
          !r->batches) {
        /* Told while the loop ran, after every line: only URIs still
         * subscribed then. */
        uri = string_member(member(msg, "params", json_type_object), "uri");
        FUZZ_CHECK(uri != NULL &&
                       json_object_object_get_ex(r->subscribed, uri, NULL),
                   "an update of a URI not subscribed to: %s", r->mt.msgs[i]);
      }
      if (json_object_is_type(msg, json_type_object) &&
          !json_object_object_get_ex(msg, "method", NULL)) {
        unsigned expect = 0;
        json_object_object_get_ex(msg, "id", &id);
        FUZZ_CHECK(take_pending(r, fuzz_id_text(id), &expect),
                   "a late reply answers no request in flight: %s",
                   r->mt.msgs[i]);
        check_answer(expect, msg, r->mt.msgs[i]);
      }
      json_object_put(msg);
    }
    FUZZ_CHECK(r->n_pending == 0 || r->cancels,
               "%zu requests never answered, none cancelled (first id %s)",
               r->n_pending, r->n_pending ? r->pending[0].id : "");
    server_close_session(&fs.srv, r->s);
    r->s = NULL;
    fuzz_server_turn(&fs);
  }
  for (size_t i = 0; i < r->n_pending; i++)
    free(r->pending[i].id);
  free(r->pending);
  r->pending = NULL;
  r->n_pending = 0;
  json_object_put(r->subscribed);
  r->subscribed = NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  static const char *const plugins[] = {"echo.so", "calc.so", "fuzzfix.so",
                                        NULL};
  static const char *const want[] = {"echo",  "calculate", "deferred", "mirror",
                                     "typed", "misuse",    NULL};
  /* The rest of the fixture: a refused entry would pass unnoticed. */
  static const struct {
    reg_kind kind;
    const char *key;
  } entries[] = {
      {REG_RESOURCE, "fuzz://text"},
      {REG_RESOURCE, "fuzz://bytes"},
      {REG_RESOURCE, "fuzz://item/0/shadow"},
      {REG_RESOURCE, "fuzz://empty"},
      {REG_TEMPLATE, "fuzz://item/{id}/{+rest}"},
      {REG_TEMPLATE, "fuzz://fail/{code}"},
      {REG_TEMPLATE, "fuzz://bytes/{+hex}"},
      {REG_TEMPLATE, "fuzz://misuse/{how}"},
      {REG_TEMPLATE, "fuzz://async{/key}~{#frag}"},
      {REG_TEMPLATE, "fuzz://doc{/dir}/{name}~{.ext}"},
      {REG_PROMPT, "say"},
      {REG_PROMPT, "misuse"},
      {REG_PROMPT, "later"},
  };
  static const char *const extra[] = {
      "--max-message-size", "2048", "--page-size", "1",
      "--max-in-flight",    "3",    NULL};
  (void)argc, (void)argv;
  trace = getenv("MCPD_FUZZ_TRACE") != NULL;
  fuzz_server_init(&fs, plugins, want, extra);
  for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
    if (registry_find(&fs.srv.registry, entries[i].kind, entries[i].key) ==
        NULL) {
      fprintf(stderr,
              "fuzz: %s %s did not load from fuzzfix.so (run with "
              "MCPD_FUZZ_LOG=1)\n",
              reg_kind_name(entries[i].kind), entries[i].key);
      exit(1);
    }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const size_t pieces[8] = {0, 1, 2, 3, 5, 8, 13, 64};
  run whole, split;
  unsigned sel;

  if (size == 0)
    return 0;
  sel = data[0];
  data++, size--;

  /* One session at a time: plugin logs and list changes go to every open
   * session, which would mix the two runs' messages. */
  run_open(&whole, (int)(sel % 8));
  run_feed(&whole, data, size, 0, (sel & 0x40) != 0);

  if ((sel / 8) % 8 != 0) {
    /* How reads split the stream must not change a single message. */
    size_t piece = pieces[(sel / 8) % 8];
    run_open(&split, (int)(sel % 8));
    run_feed(&split, data, size, piece, (sel & 0x40) != 0);
    FUZZ_CHECK(split.mt.n == whole.mt.n,
               "%zu messages fed whole, %zu fed in %zu-byte pieces", whole.mt.n,
               split.mt.n, piece);
    for (size_t i = 0; i < whole.mt.n; i++)
      FUZZ_CHECK(strcmp(whole.mt.msgs[i], split.mt.msgs[i]) == 0,
                 "message %zu differs when fed in %zu-byte pieces:\n%s\n%s", i,
                 piece, whole.mt.msgs[i], split.mt.msgs[i]);
    memory_transport_free(&split.mt);
  }
  memory_transport_free(&whole.mt);
  return 0;
}
