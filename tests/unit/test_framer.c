/* SPDX-License-Identifier: MIT */
/* test_framer.c -- newline framing: what reaches the session, and what a
 * client that sends too much gets. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "framer.h"
#include "unit.h"

/* Everything the framer delivered, in order. */
typedef struct lines {
  char **text; /* copies; NULL for an oversize report */
  size_t *len;
  size_t n;
  size_t cap;
  size_t oversize; /* oversize reports */
} lines;

static void lines_cb(void *ctx, char *line, size_t len, int oversize) {
  lines *l = ctx;

  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 8;
    l->text = realloc(l->text, l->cap * sizeof(*l->text));
    l->len = realloc(l->len, l->cap * sizeof(*l->len));
    ck_assert(l->text != NULL && l->len != NULL);
  }
  if (oversize) {
    ck_assert_ptr_null(line);
    l->oversize++;
    l->text[l->n] = NULL;
  } else {
    ck_assert_ptr_nonnull(line);
    /* Lines are NUL-terminated in place. */
    ck_assert_int_eq(line[len], '\0');
    l->text[l->n] = malloc(len + 1);
    ck_assert_ptr_nonnull(l->text[l->n]);
    memcpy(l->text[l->n], line, len + 1);
  }
  l->len[l->n] = len;
  l->n++;
}

static void lines_free(lines *l) {
  for (size_t i = 0; i < l->n; i++)
    free(l->text[i]);
  free(l->text);
  free(l->len);
  memset(l, 0, sizeof(*l));
}

static void feed(framer *f, const char *s, lines *l) {
  ck_assert_int_eq(framer_feed(f, s, strlen(s), lines_cb, l), 0);
}

static void assert_line(const lines *l, size_t i, const char *want) {
  ck_assert_msg(i < l->n, "line %zu missing (%zu delivered)", i, l->n);
  ck_assert_ptr_nonnull(l->text[i]);
  ck_assert_uint_eq(l->len[i], strlen(want));
  ck_assert_str_eq(l->text[i], want);
}

START_TEST(test_byte_by_byte) {
  const char *in = "{\"a\":1}\n{\"b\":\"two\"}\n";
  framer f;
  lines l = {0};

  framer_init(&f, 1024);
  for (size_t i = 0; in[i] != '\0'; i++) {
    ck_assert_int_eq(framer_feed(&f, in + i, 1, lines_cb, &l), 0);
    /* Nothing is delivered before its newline. */
    if (i < 7)
      ck_assert_uint_eq(l.n, 0);
  }
  ck_assert_uint_eq(l.n, 2);
  assert_line(&l, 0, "{\"a\":1}");
  assert_line(&l, 1, "{\"b\":\"two\"}");
  ck_assert_uint_eq(framer_pending(&f), 0);
  framer_free(&f);
  lines_free(&l);
}
END_TEST

START_TEST(test_several_in_one_feed) {
  framer f;
  lines l = {0};

  framer_init(&f, 1024);
  feed(&f, "one\ntwo\nthree\nfou", &l);
  ck_assert_uint_eq(l.n, 3);
  assert_line(&l, 0, "one");
  assert_line(&l, 1, "two");
  assert_line(&l, 2, "three");
  /* The partial fourth line waits for the rest. */
  ck_assert_uint_eq(framer_pending(&f), 3);
  feed(&f, "r\n", &l);
  ck_assert_uint_eq(l.n, 4);
  assert_line(&l, 3, "four");
  ck_assert_uint_eq(framer_pending(&f), 0);
  framer_free(&f);
  lines_free(&l);
}
END_TEST

START_TEST(test_reserve_commit) {
  framer f;
  lines l = {0};
  char *base;
  size_t avail;

  framer_init(&f, 1024);
  ck_assert_int_eq(framer_reserve(&f, 10, &base, &avail), 0);
  ck_assert_uint_ge(avail, 10);
  memcpy(base, "ping\npo", 7);
  framer_commit(&f, 7, lines_cb, &l);
  ck_assert_uint_eq(l.n, 1);
  assert_line(&l, 0, "ping");
  ck_assert_int_eq(framer_reserve(&f, 10, &base, &avail), 0);
  memcpy(base, "ng\n", 3);
  framer_commit(&f, 3, lines_cb, &l);
  ck_assert_uint_eq(l.n, 2);
  assert_line(&l, 1, "pong");
  framer_free(&f);
  lines_free(&l);
}
END_TEST

START_TEST(test_crlf) {
  framer f;
  lines l = {0};

  framer_init(&f, 1024);
  feed(&f, "abc\r\n", &l);
  /* The '\r' arrives in one read and the '\n' in the next. */
  feed(&f, "def\r", &l);
  feed(&f, "\n", &l);
  ck_assert_uint_eq(l.n, 2);
  assert_line(&l, 0, "abc");
  assert_line(&l, 1, "def");
  framer_free(&f);
  lines_free(&l);
}
END_TEST

START_TEST(test_blank_lines_skipped) {
  framer f;
  lines l = {0};

  framer_init(&f, 1024);
  feed(&f, "\n\n   \n\t \t\n\r\n \r\nx\n\n", &l);
  ck_assert_uint_eq(l.n, 1);
  assert_line(&l, 0, "x");
  /* Leading and trailing spaces of a real line are the parser's business. */
  feed(&f, "  {} \n", &l);
  ck_assert_uint_eq(l.n, 2);
  assert_line(&l, 1, "  {} ");
  framer_free(&f);
  lines_free(&l);
}
END_TEST

START_TEST(test_nul_passed_through) {
  framer f;
  lines l = {0};

  framer_init(&f, 1024);
  ck_assert_int_eq(framer_feed(&f, "a\0b\nc\n", 6, lines_cb, &l), 0);
  ck_assert_uint_eq(l.n, 2);
  ck_assert_uint_eq(l.len[0], 3);
  ck_assert_int_eq(memcmp(l.text[0], "a\0b", 4), 0);
  assert_line(&l, 1, "c");
  framer_free(&f);
  lines_free(&l);
}
END_TEST

START_TEST(test_max_boundary) {
  framer f;
  lines l = {0};

  framer_init(&f, 8);
  feed(&f, "12345678\n", &l); /* exactly the maximum */
  feed(&f, "abcdefgh\r", &l); /* max + '\r': not over yet */
  feed(&f, "\n", &l);
  ck_assert_uint_eq(l.n, 2);
  ck_assert_uint_eq(l.oversize, 0);
  assert_line(&l, 0, "12345678");
  assert_line(&l, 1, "abcdefgh");
  feed(&f, "123456789\n", &l); /* one byte over */
  ck_assert_uint_eq(l.n, 3);
  ck_assert_uint_eq(l.oversize, 1);
  ck_assert_ptr_null(l.text[2]);
  ck_assert_uint_eq(l.len[2], 9);
  framer_free(&f);
  lines_free(&l);
}
END_TEST

START_TEST(test_oversize_complete_line) {
  char big[100];
  framer f;
  lines l = {0};

  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  framer_init(&f, 16);
  feed(&f, "before\n", &l);
  feed(&f, big, &l);
  feed(&f, "\nafter\n", &l);
  ck_assert_uint_eq(l.oversize, 1);
  ck_assert_uint_eq(l.n, 3);
  assert_line(&l, 0, "before");
  ck_assert_ptr_null(l.text[1]);
  assert_line(&l, 2, "after");
  framer_free(&f);
  lines_free(&l);
}
END_TEST

START_TEST(test_oversize_in_one_feed) {
  framer f;
  lines l = {0};

  framer_init(&f, 16);
  feed(&f, "ok1\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nok2\n", &l);
  ck_assert_uint_eq(l.n, 3);
  ck_assert_uint_eq(l.oversize, 1);
  assert_line(&l, 0, "ok1");
  ck_assert_ptr_null(l.text[1]);
  assert_line(&l, 2, "ok2");
  framer_free(&f);
  lines_free(&l);
}
END_TEST

/* A client streaming one endless line must be refused before its newline,
 * with the buffer bounded, and the line after it must arrive intact. */
START_TEST(test_oversize_before_newline) {
  enum { MAX = 1000, CHUNK = 64 };
  char chunk[CHUNK];
  framer f;
  lines l = {0};

  memset(chunk, 'y', sizeof(chunk));
  framer_init(&f, MAX);
  for (int i = 0; i < 200; i++) {
    ck_assert_int_eq(framer_feed(&f, chunk, CHUNK, lines_cb, &l), 0);
    ck_assert_uint_le(framer_pending(&f), MAX + CHUNK);
    if (i >= MAX / CHUNK + 1)
      ck_assert_msg(l.oversize == 1,
                    "after %d bytes without a newline: %zu reports",
                    (i + 1) * CHUNK, l.oversize);
  }
  /* Reported once, however much more arrives. */
  ck_assert_uint_eq(l.oversize, 1);
  ck_assert_uint_eq(l.n, 1);
  /* The remainder up to the newline is discarded, the next line kept. */
  feed(&f, "yyyy\n{\"next\":true}\n", &l);
  ck_assert_uint_eq(l.n, 2);
  assert_line(&l, 1, "{\"next\":true}");
  ck_assert_uint_eq(l.oversize, 1);
  ck_assert_uint_eq(framer_pending(&f), 0);
  framer_free(&f);
  lines_free(&l);
}
END_TEST

/* The same, when the tail of the long line and the next line share one
 * read. */
START_TEST(test_oversize_tail_and_next_together) {
  framer f;
  lines l = {0};

  framer_init(&f, 8);
  feed(&f, "aaaaaaaaaaaaaaaaaaaa", &l);
  ck_assert_uint_eq(l.oversize, 1);
  feed(&f, "aaaa\nb\nc\n", &l);
  ck_assert_uint_eq(l.oversize, 1);
  ck_assert_uint_eq(l.n, 3);
  assert_line(&l, 1, "b");
  assert_line(&l, 2, "c");
  framer_free(&f);
  lines_free(&l);
}
END_TEST

START_TEST(test_ten_mib_line) {
  const size_t n = (size_t)10 * 1024 * 1024;
  char *msg = malloc(n + 1);
  framer f;
  lines l = {0};

  ck_assert_ptr_nonnull(msg);
  for (size_t i = 0; i < n; i++)
    msg[i] = (char)('a' + i % 26);
  msg[n] = '\n';
  framer_init(&f, (size_t)64 * 1024 * 1024);
  ck_assert_int_eq(framer_feed(&f, msg, n + 1, lines_cb, &l), 0);
  ck_assert_uint_eq(l.n, 1);
  ck_assert_uint_eq(l.oversize, 0);
  ck_assert_uint_eq(l.len[0], n);
  ck_assert_int_eq(memcmp(l.text[0], msg, n), 0);
  ck_assert_uint_eq(framer_pending(&f), 0);
  framer_free(&f);
  lines_free(&l);
  free(msg);
}
END_TEST

/* 8 MiB in 1 KiB reads.  A framer that rescanned or moved the whole partial
 * line on every read would do ~32 GiB of work here; this one finishes in
 * milliseconds.  There is no timing assertion: the tcase timeout is the
 * backstop. */
START_TEST(test_linear_cost) {
  const size_t total = (size_t)8 * 1024 * 1024;
  char chunk[1024];
  framer f;
  lines l = {0};

  memset(chunk, 'z', sizeof(chunk));
  framer_init(&f, (size_t)64 * 1024 * 1024);
  for (size_t done = 0; done < total; done += sizeof(chunk))
    ck_assert_int_eq(framer_feed(&f, chunk, sizeof(chunk), lines_cb, &l), 0);
  ck_assert_uint_eq(l.n, 0);
  ck_assert_uint_eq(framer_pending(&f), total);
  feed(&f, "\n", &l);
  ck_assert_uint_eq(l.n, 1);
  ck_assert_uint_eq(l.len[0], total);
  framer_free(&f);
  lines_free(&l);
}
END_TEST

Suite *framer_suite(void) {
  Suite *s = suite_create("framer");
  TCase *tc;

  tc = tcase_create("core");
  tcase_add_test(tc, test_byte_by_byte);
  tcase_add_test(tc, test_several_in_one_feed);
  tcase_add_test(tc, test_reserve_commit);
  tcase_add_test(tc, test_crlf);
  tcase_add_test(tc, test_blank_lines_skipped);
  tcase_add_test(tc, test_nul_passed_through);
  suite_add_tcase(s, tc);

  tc = tcase_create("limits");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_max_boundary);
  tcase_add_test(tc, test_oversize_complete_line);
  tcase_add_test(tc, test_oversize_in_one_feed);
  tcase_add_test(tc, test_oversize_before_newline);
  tcase_add_test(tc, test_oversize_tail_and_next_together);
  tcase_add_test(tc, test_ten_mib_line);
  tcase_add_test(tc, test_linear_cost);
  suite_add_tcase(s, tc);
  return s;
}
