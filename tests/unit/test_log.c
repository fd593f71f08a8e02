/* SPDX-License-Identifier: MIT */
/* test_log.c -- --log-format json: each line one JSON object that reads
 * back the message as it was logged, whatever bytes it holds. */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "log.h"
#include "unit.h"

/* Logs through `f` (may be NULL) into a pipe; the one line, parsed. */
static json_object *one_line(const log_fields *f, const char *text) {
  int fds[2];
  char buf[8192];
  ssize_t n;
  json_object *obj;

  ck_assert_int_eq(pipe(fds), 0);
  log_set_fd(fds[1]);
  log_set_json(1);
  log_fields_msg(LOG_LEVEL_WARN, f, "%s", text);
  log_set_json(0);
  log_set_fd(2);
  close(fds[1]);
  n = read(fds[0], buf, sizeof(buf) - 1);
  close(fds[0]);
  ck_assert_int_gt(n, 0);
  buf[n] = '\0';
  ck_assert_msg(buf[n - 1] == '\n' && strchr(buf, '\n') == buf + n - 1,
                "one line: %s", buf);
  obj = json_tokener_parse(buf);
  ck_assert_msg(obj != NULL, "not JSON: %s", buf);
  return obj;
}

static const char *member(json_object *obj, const char *key) {
  json_object *v;
  return json_object_object_get_ex(obj, key, &v) ? json_object_get_string(v)
                                                 : NULL;
}

START_TEST(test_json_escapes) {
  const char *text = "quote \" backslash \\ tab \t newline \n bell \a é ✓";
  log_fields f = {"plug\"in", "tool", "0a1b2c3d", "\"req-1\""};
  json_object *obj = one_line(&f, text);

  ck_assert_str_eq(member(obj, "message"), text);
  ck_assert_str_eq(member(obj, "level"), "warn");
  ck_assert_str_eq(member(obj, "plugin"), "plug\"in");
  ck_assert_str_eq(member(obj, "tool"), "tool");
  ck_assert_str_eq(member(obj, "session"), "0a1b2c3d");
  /* The request id is the client's JSON: a string stays a string. */
  ck_assert_str_eq(member(obj, "request"), "req-1");
  json_object_put(obj);
}
END_TEST

START_TEST(test_json_repairs_and_cuts) {
  char big[6000];
  json_object *obj = one_line(NULL, "bad \xff\xfe bytes \xc3");

  ck_assert_str_eq(member(obj, "message"),
                   "bad \xef\xbf\xbd\xef\xbf\xbd bytes \xef\xbf\xbd");
  ck_assert_ptr_null(member(obj, "plugin"));
  json_object_put(obj);

  /* Longer than a line holds: cut after a whole character, marked. */
  for (size_t i = 0; i + 2 < sizeof(big); i += 2)
    memcpy(big + i, "\xc3\xa9", 2);
  big[sizeof(big) - 2] = '\0';
  obj = one_line(NULL, big);
  {
    const char *m = member(obj, "message");
    size_t n = strlen(m);
    ck_assert_uint_gt(n, 1000);
    ck_assert_str_eq(m + n - 3, "...");
    ck_assert_str_eq(m + n - 5, "\xc3\xa9...");
  }
  json_object_put(obj);

  /* Escapes that outgrow the line: cut too, still one JSON line. */
  memset(big, '\x01', 1500);
  big[1500] = '\0';
  obj = one_line(NULL, big);
  {
    const char *m = member(obj, "message");
    size_t n = strlen(m);
    ck_assert_uint_gt(n, 300);
    ck_assert_uint_lt(n, 1500);
    ck_assert_str_eq(m + n - 3, "...");
  }
  json_object_put(obj);
}
END_TEST

START_TEST(test_session_tag) {
  char a[9], b[9], a2[9];
  int x, y;
  log_session_tag(&x, a);
  log_session_tag(&y, b);
  log_session_tag(&x, a2);
  ck_assert_uint_eq(strlen(a), 8);
  ck_assert_str_eq(a, a2);
  ck_assert_str_ne(a, b);
}
END_TEST

Suite *log_suite(void) {
  Suite *s = suite_create("log");
  TCase *tc = tcase_create("json");
  tcase_add_test(tc, test_json_escapes);
  tcase_add_test(tc, test_json_repairs_and_cuts);
  tcase_add_test(tc, test_session_tag);
  suite_add_tcase(s, tc);
  return s;
}
