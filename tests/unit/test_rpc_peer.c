/* SPDX-License-Identifier: MIT */
/* test_rpc_peer.c -- the outgoing side of a JSON-RPC peer: ids, lookups,
 * correlation, timeouts, fail-all and the write queue, as the session and
 * the worker link use them. */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jsonrpc.h"
#include "rpc_peer.h"
#include "unit.h"

/* An outgoing request as a user keeps it: the entry first, then what its
 * callback records. */
typedef struct rec {
  rpc_entry entry;
  int calls;    /* how often the callback ran */
  int timeouts; /* how often the timeout ran */
  int local;
  int code; /* of the error, or 0 */
  char result[256];
  char text[256];
  char message[128];
  char data[128];
} rec;

static void copy_json(char *dst, size_t n, json_object *obj) {
  snprintf(dst, n, "%s", obj ? plain(obj) : "");
}

static void rec_cb(rpc_entry *e, const rpc_reply *r) {
  rec *q = (rec *)e;
  json_object *v;
  q->calls++;
  q->local = r->local;
  copy_json(q->result, sizeof(q->result), r->result);
  snprintf(q->text, sizeof(q->text), "%.*s", r->text ? (int)r->len : 0,
           r->text ? r->text : "");
  if (r->error != NULL) {
    q->code = json_object_object_get_ex(r->error, "code", &v)
                  ? json_object_get_int(v)
                  : 0;
    copy_json(q->message, sizeof(q->message),
              json_object_object_get_ex(r->error, "message", &v) ? v : NULL);
    copy_json(q->data, sizeof(q->data),
              json_object_object_get_ex(r->error, "data", &v) ? v : NULL);
  }
}

static void answer(rpc_peer *p, const char *line, int expect) {
  json_object *msg = parse_json(line);
  ck_assert_int_eq(rpc_peer_response(p, msg, line, strlen(line)), expect);
  json_object_put(msg);
}

START_TEST(test_numeric_ids) {
  rpc_peer p;
  rec a = {0}, b = {0}, c = {0};
  json_object *id;

  ck_assert_int_eq(rpc_peer_init(&p, NULL, NULL), 0);
  ck_assert_int_eq(rpc_peer_add(&p, &a.entry, rec_cb), 0);
  ck_assert_int_eq(rpc_peer_add(&p, &b.entry, rec_cb), 0);
  ck_assert_int_eq(rpc_peer_add(&p, &c.entry, rec_cb), 0);
  ck_assert_str_eq(a.entry.id, "1");
  ck_assert_str_eq(b.entry.id, "2");
  ck_assert_str_eq(c.entry.id, "3");
  id = rpc_peer_id_json(&p, &b.entry);
  ck_assert_str_eq(plain(id), "2");
  json_object_put(id);
  ck_assert_uint_eq(rpc_peer_pending(&p), 3);
  ck_assert_ptr_eq(rpc_peer_find(&p, 2), &b.entry);
  ck_assert_ptr_eq(rpc_peer_find_text(&p, "3"), &c.entry);
  ck_assert_ptr_null(rpc_peer_find(&p, 4));
  /* A string id is not the number: JSON-RPC ids keep their type. */
  id = json_object_new_string("2");
  ck_assert_ptr_null(rpc_peer_find_json(&p, id));
  json_object_put(id);
  /* Once answered, numbering goes on: ids are never reused. */
  answer(&p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", 0);
  ck_assert_int_eq(rpc_peer_add(&p, &c.entry, rec_cb), 0);
  ck_assert_str_eq(c.entry.id, "4");
  rpc_peer_fail_all(&p, -1, "x", NULL);
  /* A new connection starts again at 1. */
  rpc_peer_restart_ids(&p);
  ck_assert_int_eq(rpc_peer_add(&p, &a.entry, rec_cb), 0);
  ck_assert_str_eq(a.entry.id, "1");
  rpc_peer_fail_all(&p, -1, "x", NULL);
  rpc_peer_close(&p);
}
END_TEST

START_TEST(test_string_ids) {
  rpc_peer p;
  rec a = {0}, b = {0};
  json_object *id;

  ck_assert_int_eq(rpc_peer_init(&p, NULL, "mcpd-"), 0);
  ck_assert_int_eq(rpc_peer_add(&p, &a.entry, rec_cb), 0);
  ck_assert_int_eq(rpc_peer_add(&p, &b.entry, rec_cb), 0);
  ck_assert_str_eq(a.entry.id, "mcpd-1");
  ck_assert_str_eq(b.entry.id, "mcpd-2");
  id = rpc_peer_id_json(&p, &a.entry);
  ck_assert_str_eq(plain(id), "\"mcpd-1\"");
  json_object_put(id);
  ck_assert_ptr_eq(rpc_peer_find_text(&p, "mcpd-2"), &b.entry);
  /* Only the exact text finds it. */
  ck_assert_ptr_null(rpc_peer_find_text(&p, "mcpd-02"));
  ck_assert_ptr_null(rpc_peer_find_text(&p, "mcpd-2x"));
  ck_assert_ptr_null(rpc_peer_find_text(&p, "mcpd-"));
  ck_assert_ptr_null(rpc_peer_find_text(&p, "2"));
  ck_assert_ptr_null(rpc_peer_find_text(&p, NULL));
  id = json_object_new_int(2);
  ck_assert_ptr_null(rpc_peer_find_json(&p, id));
  json_object_put(id);
  answer(&p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}", -1);
  answer(&p, "{\"jsonrpc\":\"2.0\",\"id\":\"mcpd-2\",\"result\":{\"x\":1}}", 0);
  ck_assert_int_eq(b.calls, 1);
  ck_assert_str_eq(b.result, "{\"x\":1}");
  /* A string peer has no text fast path: its users parse everything. */
  {
    const char *line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
    ck_assert_int_eq(rpc_peer_line(&p, line, strlen(line)), 0);
  }
  ck_assert_int_eq(a.calls, 0);
  rpc_peer_fail_all(&p, -1, "x", NULL);
  rpc_peer_close(&p);
}
END_TEST

/* An entry with nothing but a count, so that many fit in memory. */
typedef struct small {
  rpc_entry entry;
  int calls;
} small;

static void small_cb(rpc_entry *e, const rpc_reply *r) {
  (void)r;
  ((small *)e)->calls++;
}

/* CPU seconds for `loops` lookups spread over ids 1..n. */
static double time_lookups(const rpc_peer *p, size_t n, size_t loops) {
  clock_t start = clock();
  size_t found = 0;
  for (size_t k = 0; k < loops; k++)
    found += rpc_peer_find(p, 1 + (k * 7919) % n) != NULL;
  ck_assert_uint_gt(found, 0);
  return (double)(clock() - start) / CLOCKS_PER_SEC;
}

/* Many requests in flight, answered out of order: every lookup finds the
 * right entry, and a lookup costs about the same however many wait. */
START_TEST(test_many_pending) {
  enum { N = 200000, FEW = 100, LOOPS = 1000000 };
  rpc_peer p, q;
  small *recs = calloc(N, sizeof(*recs)), *few = calloc(FEW, sizeof(*few));
  double t_few, t_many;

  ck_assert_ptr_nonnull(recs);
  ck_assert_ptr_nonnull(few);
  ck_assert_int_eq(rpc_peer_init(&p, NULL, NULL), 0);
  for (size_t i = 0; i < N; i++)
    ck_assert_int_eq(rpc_peer_add(&p, &recs[i].entry, small_cb), 0);
  ck_assert_uint_eq(rpc_peer_pending(&p), N);
  /* Forget every third one, from the middle out, so that removals
   * happen inside runs of the table. */
  for (size_t i = N / 2; i < N; i += 3)
    rpc_peer_forget(&p, &recs[i].entry);
  for (size_t i = N / 2 + 1; i-- > 0;)
    if (i % 3 == (N / 2) % 3)
      rpc_peer_forget(&p, &recs[i].entry);
  for (size_t i = 0; i < N; i++) {
    rpc_entry *e = rpc_peer_find(&p, i + 1);
    if (i % 3 == (N / 2) % 3)
      ck_assert_ptr_null(e);
    else
      ck_assert_ptr_eq(e, &recs[i].entry);
  }

  /* The same number of lookups among 100 and among 130 000 pending: a
   * list walk would be about 1000 times slower on the larger one, a hash
   * table only by what cache misses cost.  CPU time, so that other
   * processes do not count, and a ratio, so that valgrind passes. */
  ck_assert_int_eq(rpc_peer_init(&q, NULL, NULL), 0);
  for (size_t i = 0; i < FEW; i++)
    ck_assert_int_eq(rpc_peer_add(&q, &few[i].entry, small_cb), 0);
  t_few = time_lookups(&q, FEW, LOOPS);
  t_many = time_lookups(&p, N, LOOPS);
  ck_assert_msg(t_many < 100 * t_few + 0.05,
                "lookups among %d took %.3f s, among %d %.3f s", N, t_many, FEW,
                t_few);

  rpc_peer_fail_all(&p, -1, "x", NULL);
  for (size_t i = 0; i < N; i++)
    ck_assert_int_eq(recs[i].calls, i % 3 == (N / 2) % 3 ? 0 : 1);
  ck_assert_uint_eq(rpc_peer_pending(&p), 0);
  rpc_peer_fail_all(&q, -1, "x", NULL);
  rpc_peer_close(&p);
  rpc_peer_close(&q);
  free(recs);
  free(few);
}
END_TEST

START_TEST(test_response_routed_once) {
  rpc_peer p;
  rec a = {0}, b = {0};

  ck_assert_int_eq(rpc_peer_init(&p, NULL, NULL), 0);
  ck_assert_int_eq(rpc_peer_add(&p, &a.entry, rec_cb), 0);
  ck_assert_int_eq(rpc_peer_add(&p, &b.entry, rec_cb), 0);
  answer(&p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"n\":2}}", 0);
  ck_assert_int_eq(a.calls, 0);
  ck_assert_int_eq(b.calls, 1);
  ck_assert_int_eq(b.local, 0);
  ck_assert_str_eq(b.result, "{\"n\":2}");
  /* The text of the result comes along when the line has mcpd's shape. */
  ck_assert_str_eq(b.text, "{\"n\":2}");
  /* A duplicate, an unknown id, a null id and no id: dropped. */
  answer(&p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"n\":3}}", -1);
  answer(&p, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}", -1);
  answer(&p, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{}}", -1);
  answer(&p, "{\"jsonrpc\":\"2.0\",\"id\":-1,\"result\":{}}", -1);
  answer(&p, "{\"jsonrpc\":\"2.0\",\"result\":{}}", -1);
  ck_assert_int_eq(b.calls, 1);
  ck_assert_str_eq(b.result, "{\"n\":2}");
  ck_assert_int_eq(a.calls, 0);
  /* An error answer reaches the callback as it came. */
  answer(&p,
         "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,"
         "\"message\":\"no\"}}",
         0);
  ck_assert_int_eq(a.calls, 1);
  ck_assert_int_eq(a.local, 0);
  ck_assert_int_eq(a.code, -32601);
  ck_assert_str_eq(a.message, "\"no\"");
  ck_assert_str_eq(a.result, "");
  ck_assert_uint_eq(rpc_peer_pending(&p), 0);
  rpc_peer_close(&p);
}
END_TEST

START_TEST(test_text_fast_path) {
  rpc_peer p;
  rec a = {0}, b = {0};
  const char *line;

  ck_assert_int_eq(rpc_peer_init(&p, NULL, NULL), 0);
  a.entry.text_ok = 1;
  ck_assert_int_eq(rpc_peer_add(&p, &a.entry, rec_cb), 0);
  ck_assert_int_eq(rpc_peer_add(&p, &b.entry, rec_cb), 0);
  /* Not text_ok: left for a parse. */
  line = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"b\":1}}";
  ck_assert_int_eq(rpc_peer_line(&p, line, strlen(line)), 0);
  ck_assert_int_eq(b.calls, 0);
  /* Another shape (a member after the result), or invalid UTF-8: too. */
  line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"x\":1}";
  ck_assert_int_eq(rpc_peer_line(&p, line, strlen(line)), 0);
  line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"\xff\"}}";
  ck_assert_int_eq(rpc_peer_line(&p, line, strlen(line)), 0);
  line = "{\"jsonrpc\":\"2.0\",\"id\":01,\"result\":{}}";
  ck_assert_int_eq(rpc_peer_line(&p, line, strlen(line)), 0);
  ck_assert_int_eq(a.calls, 0);
  line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}";
  ck_assert_int_eq(rpc_peer_line(&p, line, strlen(line)), 1);
  ck_assert_int_eq(a.calls, 1);
  ck_assert_str_eq(a.text, "{\"content\":[]}");
  ck_assert_str_eq(a.result, "");
  ck_assert_int_eq(rpc_peer_line(&p, line, strlen(line)), 0);
  ck_assert_int_eq(a.calls, 1);
  rpc_peer_fail_all(&p, -1, "x", NULL);
  rpc_peer_close(&p);
}
END_TEST

/* A callback that sends another request while the peer fails them all. */
static rec late;
static rpc_peer *adding_to;
static void adds_another_cb(rpc_entry *e, const rpc_reply *r) {
  rec_cb(e, r);
  ck_assert_int_eq(rpc_peer_add(adding_to, &late.entry, rec_cb), 0);
}

START_TEST(test_fail_all_and_cancel) {
  rpc_peer p;
  rec a = {0}, b = {0}, c = {0};
  json_object *data = parse_json("{\"plugin\":\"fault\",\"signal\":11}");

  memset(&late, 0, sizeof(late));
  ck_assert_int_eq(rpc_peer_init(&p, NULL, "mcpd-"), 0);
  ck_assert_int_eq(rpc_peer_add(&p, &a.entry, rec_cb), 0);
  ck_assert_int_eq(rpc_peer_add(&p, &b.entry, rec_cb), 0);
  ck_assert_int_eq(rpc_peer_add(&p, &c.entry, rec_cb), 0);
  rpc_peer_cancel(&p, &b.entry, -32001, "timed out");
  ck_assert_int_eq(b.calls, 1);
  ck_assert_int_eq(b.local, 1);
  ck_assert_int_eq(b.code, -32001);
  ck_assert_str_eq(b.message, "\"timed out\"");
  ck_assert_ptr_null(rpc_peer_find_text(&p, "mcpd-2"));
  /* Cancelling twice, or answering after, changes nothing. */
  rpc_peer_cancel(&p, &b.entry, -32001, "again");
  answer(&p, "{\"jsonrpc\":\"2.0\",\"id\":\"mcpd-2\",\"result\":{}}", -1);
  ck_assert_int_eq(b.calls, 1);
  ck_assert_str_eq(b.message, "\"timed out\"");

  /* c's callback sends another request. */
  adding_to = &p;
  rpc_peer_forget(&p, &c.entry);
  ck_assert_int_eq(rpc_peer_add(&p, &c.entry, adds_another_cb), 0);
  rpc_peer_fail_all(&p, -32603, "plugin \"fault\": its worker died", data);
  json_object_put(data);
  ck_assert_int_eq(a.calls, 1);
  ck_assert_int_eq(c.calls, 1);
  ck_assert_int_eq(a.local, 1);
  ck_assert_int_eq(a.code, -32603);
  ck_assert_str_eq(a.message, "\"plugin \\\"fault\\\": its worker died\"");
  ck_assert_str_eq(a.data, "{\"plugin\":\"fault\",\"signal\":11}");
  ck_assert_str_eq(c.data, "{\"plugin\":\"fault\",\"signal\":11}");
  /* What a callback sent meanwhile failed too. */
  ck_assert_int_eq(late.calls, 1);
  ck_assert_int_eq(late.code, -32603);
  ck_assert_int_eq(b.calls, 1);
  ck_assert_uint_eq(rpc_peer_pending(&p), 0);
  rpc_peer_close(&p);
  /* A closed peer takes nothing more, and closes again quietly. */
  ck_assert_int_eq(rpc_peer_add(&p, &a.entry, rec_cb), -1);
  rpc_peer_close(&p);
}
END_TEST

static void rec_timeout_cb(rpc_entry *e) {
  ((rec *)e)->timeouts++;
}

static void stop_cb(uv_timer_t *t) {
  uv_stop(t->loop);
}

static void run_for(uv_loop_t *loop, uint64_t ms) {
  uv_timer_t t;
  uv_timer_init(loop, &t);
  uv_timer_start(&t, stop_cb, ms, 0);
  uv_run(loop, UV_RUN_DEFAULT);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(loop, UV_RUN_NOWAIT);
}

START_TEST(test_timeout_once) {
  uv_loop_t loop;
  rpc_peer p;
  rec a = {0}, b = {0}, c = {0};

  ck_assert_int_eq(uv_loop_init(&loop), 0);
  ck_assert_int_eq(rpc_peer_init(&p, &loop, NULL), 0);
  ck_assert_int_eq(rpc_peer_add(&p, &a.entry, rec_cb), 0);
  ck_assert_int_eq(rpc_peer_add(&p, &b.entry, rec_cb), 0);
  ck_assert_int_eq(rpc_peer_add(&p, &c.entry, rec_cb), 0);
  ck_assert_int_eq(rpc_peer_set_timeout(&p, &a.entry, 10, rec_timeout_cb), 0);
  /* The first timeout armed stands. */
  ck_assert_int_eq(rpc_peer_set_timeout(&p, &a.entry, 5000, rec_timeout_cb), 0);
  ck_assert_int_eq(rpc_peer_set_timeout(&p, &b.entry, 10, rec_timeout_cb), 0);
  ck_assert_int_eq(rpc_peer_set_timeout(&p, &c.entry, 10, rec_timeout_cb), 0);
  /* b is answered and c given up before their time: no timeout. */
  answer(&p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}", 0);
  rpc_peer_cancel(&p, &c.entry, -1, "gone");
  run_for(&loop, 60);
  ck_assert_int_eq(a.timeouts, 1);
  ck_assert_int_eq(b.timeouts, 0);
  ck_assert_int_eq(c.timeouts, 0);
  /* The entry stays pending: its user decides what a timeout means. */
  ck_assert_int_eq(a.calls, 0);
  ck_assert_ptr_eq(rpc_peer_find(&p, 1), &a.entry);
  run_for(&loop, 30);
  ck_assert_int_eq(a.timeouts, 1);
  rpc_peer_fail_all(&p, -1, "closed", NULL);
  ck_assert_int_eq(a.calls, 1);
  rpc_peer_close(&p);
  uv_run(&loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

/* A peer without a loop has no timeouts. */
START_TEST(test_timeout_needs_loop) {
  rpc_peer p;
  rec a = {0};
  ck_assert_int_eq(rpc_peer_init(&p, NULL, NULL), 0);
  ck_assert_int_eq(rpc_peer_add(&p, &a.entry, rec_cb), 0);
  ck_assert_int_eq(rpc_peer_set_timeout(&p, &a.entry, 1, rec_timeout_cb), -1);
  rpc_peer_fail_all(&p, -1, "x", NULL);
  rpc_peer_close(&p);
}
END_TEST

/* What the write queue puts on a pipe, read back from its other end. */
START_TEST(test_write_queue) {
  uv_loop_t loop;
  uv_pipe_t out;
  rpc_peer p;
  rec a = {0}, b = {0}, c = {0};
  int fds[2];
  char buf[1024];
  ssize_t n;

  ck_assert_int_eq(uv_loop_init(&loop), 0);
  ck_assert_int_eq(pipe(fds), 0);
  uv_pipe_init(&loop, &out, 0);
  ck_assert_int_eq(uv_pipe_open(&out, fds[1]), 0);
  ck_assert_int_eq(rpc_peer_init(&p, &loop, NULL), 0);
  ck_assert_int_eq(rpc_peer_set_writer(&p, 0, "out of memory"), 0);
  /* Without a stream, messages are dropped (entries stay pending). */
  rpc_peer_send(&p, jsonrpc_notification("dropped", NULL));
  ck_assert_int_eq(rpc_peer_request_text(&p, &c.entry, rec_cb, "lost", "{}", 2),
                   0);
  rpc_peer_set_stream(&p, (uv_stream_t *)&out);
  ck_assert_int_eq(rpc_peer_request(&p, &b.entry, rec_cb, "tools/list",
                                    json_object_new_object()),
                   0);
  ck_assert_int_eq(rpc_peer_request_text(&p, &a.entry, rec_cb, "tools/call",
                                         "{\"name\":\"x\"}", 12),
                   0);
  /* Nothing leaves before the end of the loop turn... */
  ck_assert_int_eq(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
  ck_assert_int_eq(read(fds[0], buf, sizeof(buf)), -1);
  uv_run(&loop, UV_RUN_NOWAIT);
  /* ... then both messages, in one write. */
  n = read(fds[0], buf, sizeof(buf) - 1);
  ck_assert_int_gt(n, 0);
  buf[n] = '\0';
  ck_assert_str_eq(buf,
                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\","
                   "\"params\":{}}\n"
                   "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"x\"}}\n");
  ck_assert_uint_eq(rpc_peer_pending(&p), 3);
  rpc_peer_fail_all(&p, -1, "x", NULL);
  rpc_peer_set_stream(&p, NULL);
  rpc_peer_close(&p);
  uv_close((uv_handle_t *)&out, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  close(fds[0]);
  ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

Suite *rpc_peer_suite(void) {
  Suite *s = suite_create("rpc_peer");
  TCase *tc;

  tc = tcase_create("ids");
  tcase_add_test(tc, test_numeric_ids);
  tcase_add_test(tc, test_string_ids);
  tcase_add_test(tc, test_many_pending);
  suite_add_tcase(s, tc);

  tc = tcase_create("correlation");
  tcase_add_test(tc, test_response_routed_once);
  tcase_add_test(tc, test_text_fast_path);
  tcase_add_test(tc, test_fail_all_and_cancel);
  suite_add_tcase(s, tc);

  tc = tcase_create("timeouts");
  tcase_add_test(tc, test_timeout_once);
  tcase_add_test(tc, test_timeout_needs_loop);
  suite_add_tcase(s, tc);

  tc = tcase_create("writes");
  tcase_add_test(tc, test_write_queue);
  suite_add_tcase(s, tc);
  return s;
}
