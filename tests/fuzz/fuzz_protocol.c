/* fuzz_protocol.c -- libFuzzer harness for the protocol path a client's
 * bytes take: framer -> jsonrpc -> session -> methods -> call -> plugins.
 * The server loads the bundled echo and calc plugins and the fixture
 * fuzzfix.so (fuzz_plugin.c), whose "deferred" tool keeps requests in
 * flight until the next loop turn; nothing runs on another thread.
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
 * lengths), --page-size 1 (tools/list pages and cursors) and
 * --max-in-flight 3 (the busy error is reachable).
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
 * nothing is written. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framer.h"
#include "fuzz_common.h"
#include "jsonrpc.h"

#define FUZZ_MAX_MESSAGE 2048
#define FUZZ_MAX_TURNS 64

static fuzz_server fs;
static int trace; /* MCPD_FUZZ_TRACE: print the exchange to stderr */

typedef struct run {
  memory_transport mt;
  session *s;
  framer f;
  char **pending; /* ids (JSON text) of requests not answered at once */
  size_t n_pending;
  size_t cap_pending;
  int cancels; /* the stream sent notifications/cancelled */
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

static void add_pending(run *r, const char *id) {
  if (r->n_pending == r->cap_pending) {
    r->cap_pending = r->cap_pending ? r->cap_pending * 2 : 8;
    r->pending = realloc(r->pending, r->cap_pending * sizeof(*r->pending));
    FUZZ_CHECK(r->pending != NULL, "out of memory");
  }
  r->pending[r->n_pending] = strdup(id);
  FUZZ_CHECK(r->pending[r->n_pending] != NULL, "out of memory");
  r->n_pending++;
}

/* Crosses a late reply's id off the requests still owed one. */
static int take_pending(run *r, const char *id) {
  for (size_t i = 0; i < r->n_pending; i++)
    if (strcmp(r->pending[i], id) == 0) {
      free(r->pending[i]);
      r->pending[i] = r->pending[--r->n_pending];
      return 1;
    }
  return 0;
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
  if (json_object_is_type(req, json_type_array))
    goto done; /* Batches: checked message by message. */
  if (json_object_object_get_ex(req, "method", NULL) &&
      json_object_object_get_ex(req, "id", &id)) {
    if (n == 0) {
      /* Still in flight: answered on a loop turn, or cancelled. */
      add_pending(r, fuzz_id_text(id));
      goto done;
    }
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
      if (json_object_is_type(msg, json_type_object) &&
          !json_object_object_get_ex(msg, "method", NULL)) {
        json_object_object_get_ex(msg, "id", &id);
        FUZZ_CHECK(take_pending(r, fuzz_id_text(id)),
                   "a late reply answers no request in flight: %s",
                   r->mt.msgs[i]);
      }
      json_object_put(msg);
    }
    FUZZ_CHECK(r->n_pending == 0 || r->cancels,
               "%zu requests never answered, none cancelled (first id %s)",
               r->n_pending, r->n_pending ? r->pending[0] : "");
    server_close_session(&fs.srv, r->s);
    r->s = NULL;
    fuzz_server_turn(&fs);
  }
  for (size_t i = 0; i < r->n_pending; i++)
    free(r->pending[i]);
  free(r->pending);
  r->pending = NULL;
  r->n_pending = 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  static const char *const plugins[] = {"echo.so", "calc.so", "fuzzfix.so",
                                        NULL};
  static const char *const want[] = {"echo",   "calculate", "deferred",
                                     "mirror", "typed",     NULL};
  static const char *const extra[] = {
      "--max-message-size", "2048", "--page-size", "1",
      "--max-in-flight",    "3",    NULL};
  (void)argc, (void)argv;
  trace = getenv("MCPD_FUZZ_TRACE") != NULL;
  fuzz_server_init(&fs, plugins, want, extra);
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
