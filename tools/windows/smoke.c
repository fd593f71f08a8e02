/* SPDX-License-Identifier: MIT */
/*
 * tools/windows/smoke.c - smoke test for the Windows (mingw-w64) builds of
 * libuv and json-c made by tools/windows/build.sh.
 *
 * It runs a libuv loop (a thread-pool job, then a repeating timer that
 * fires three times), then parses a JSON object with json-c whose strings
 * are written as \u escapes (one of them a UTF-16 surrogate pair) and
 * prints the decoded, non-ASCII UTF-8 text.  build.sh compares the output
 * byte for byte, so keep it deterministic.  The source stays ASCII.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* uv.h first: on Windows it includes winsock2.h, which must come before
 * windows.h (uv.h includes that too). */
#include <json-c/json.h>
#include <uv.h>

#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#endif

#define TICKS 3

static uv_timer_t timer;
static uv_work_t work;
static int ticks;
static long sum;
static int failed;

static void fail(const char *what) {
  fprintf(stderr, "smoke: %s\n", what);
  failed = 1;
}

static void timer_cb(uv_timer_t *t) {
  printf("timer tick %d\n", ++ticks);
  if (ticks == TICKS) {
    uv_timer_stop(t);
    uv_close((uv_handle_t *)t, NULL);
  }
}

static void work_cb(uv_work_t *req) {
  long i;

  (void)req;
  for (i = 1; i <= 100; i++)
    sum += i;
}

static void after_work_cb(uv_work_t *req, int status) {
  (void)req;
  if (status != 0) {
    fail("thread-pool job failed");
    return;
  }
  printf("work done: %ld\n", sum);
  /* The timer starts only now, so the output order is fixed. */
  if (uv_timer_start(&timer, timer_cb, 10, 10) != 0)
    fail("uv_timer_start failed");
}

static int run_loop(void) {
  uv_loop_t loop;
  uint64_t t0;
  int rc;

  if (uv_loop_init(&loop) != 0 || uv_timer_init(&loop, &timer) != 0) {
    fail("uv_loop_init/uv_timer_init failed");
    return -1;
  }
  t0 = uv_hrtime();
  if (uv_queue_work(&loop, &work, work_cb, after_work_cb) != 0) {
    fail("uv_queue_work failed");
    return -1;
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  if (ticks != TICKS)
    fail("the timer did not fire three times");
  /* Three 10 ms ticks cannot take less than 30 ms. */
  if (uv_hrtime() - t0 < 29 * 1000000ull)
    fail("the timer fired too early");
  rc = uv_loop_close(&loop);
  printf("loop closed: %d\n", rc);
  return rc;
}

/* \u escapes: e-acute, o-umlaut, check mark, two CJK ideographs, and a
 * rocket (U+1F680, outside the BMP: a surrogate pair in JSON). */
static const char json_text[] =
    "{ \"name\": \"mcpd\","
    "  \"greeting\": \"h\\u00e9llo, w\\u00f6rld \\u2713 \\u65e5\\u672c\","
    "  \"emoji\": \"\\ud83d\\ude80\","
    "  \"n\": 3 }";

static void parse_json(void) {
  struct json_object *obj, *v;
  const char *s;

  obj = json_tokener_parse(json_text);
  if (!obj || !json_object_is_type(obj, json_type_object)) {
    fail("json_tokener_parse failed");
    return;
  }
  if (json_object_object_get_ex(obj, "name", &v))
    printf("name: %s\n", json_object_get_string(v));
  if (json_object_object_get_ex(obj, "greeting", &v))
    printf("greeting: %s\n", json_object_get_string(v));
  if (json_object_object_get_ex(obj, "emoji", &v)) {
    s = json_object_get_string(v);
    printf("emoji: %s (%u bytes)\n", s, (unsigned)strlen(s));
  }
  if (json_object_object_get_ex(obj, "n", &v))
    printf("n: %d\n", json_object_get_int(v));
  json_object_object_add(obj, "ok", json_object_new_boolean(1));
  printf("json: %s\n",
         json_object_to_json_string_ext(
             obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(obj);
}

int main(void) {
#ifdef _WIN32
  /* Raw bytes on stdout: no "\r\n" translation (the MCP stdio transport
   * will need the same), and UTF-8 when stdout is a console. */
  _setmode(_fileno(stdout), _O_BINARY);
  SetConsoleOutputCP(CP_UTF8);
#endif
  setvbuf(stdout, NULL, _IOFBF, 4096);

  printf("libuv %s\n", uv_version_string());
  printf("json-c %s\n", json_c_version());
  if (run_loop() != 0)
    fail("uv_loop_close failed");
  parse_json();
  printf("%s\n", failed ? "FAILED" : "ok");
  fflush(stdout);
  return failed ? 1 : 0;
}
