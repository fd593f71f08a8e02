/* SPDX-License-Identifier: MIT */
/* common_tests.c -- the helpers the bundled plugins share (plugins/common),
 * with Check: the growable buffer, UTF-8 and base64, at their edges.  The
 * plugins that use them are tested end to end (tests/e2e/fs, fetch and
 * sqlite); here each helper is held to what its header promises.
 *
 * Linked against libplugcommon itself, the library the plugins link. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../../plugins/common/base64.h"
#include "../../plugins/common/buf.h"
#include "../../plugins/common/utf8.h"

/* --- buf ------------------------------------------------------------------ */

START_TEST(buf_starts_empty) {
  struct pc_buf b = {0};

  /* Nothing is allocated until the first append, even an empty one. */
  ck_assert_ptr_null(b.data);
  pc_buf_append(&b, "", 0);
  ck_assert_ptr_nonnull(b.data);
  ck_assert_str_eq(b.data, "");
  ck_assert_uint_eq(b.len, 0);
  ck_assert(!b.failed);
  pc_buf_free(&b);
  ck_assert_ptr_null(b.data);
  ck_assert_uint_eq(b.len, 0);
  ck_assert_uint_eq(b.cap, 0);
}
END_TEST

START_TEST(buf_appends) {
  struct pc_buf b = {0};

  pc_buf_puts(&b, "one");
  pc_buf_putc(&b, ' ');
  pc_buf_append(&b, "two three", 3);
  pc_buf_printf(&b, " %d %s", 3, "four");
  ck_assert_str_eq(b.data, "one two 3 four");
  ck_assert_uint_eq(b.len, strlen("one two 3 four"));
  /* Bytes are bytes: a NUL inside counts, and the text stays terminated. */
  pc_buf_append(&b, "x\0y", 3);
  ck_assert_uint_eq(b.len, 17);
  ck_assert(memcmp(b.data + 14, "x\0y", 4) == 0);
  pc_buf_free(&b);
  /* A freed buffer is empty and can be used again. */
  pc_buf_puts(&b, "again");
  ck_assert_str_eq(b.data, "again");
  pc_buf_free(&b);
}
END_TEST

START_TEST(buf_grows_large) {
  struct pc_buf b = {0};
  char *big = malloc(100000);
  size_t n = 3 * 1024 * 1024;

  ck_assert_ptr_nonnull(big);
  /* Byte by byte past the first allocation, many times over. */
  for (size_t i = 0; i < n; i++)
    pc_buf_putc(&b, (char)('a' + i % 26));
  ck_assert(!b.failed);
  ck_assert_uint_eq(b.len, n);
  ck_assert_uint_ge(b.cap, n + 1);
  for (size_t i = 0; i < n; i += 4099)
    ck_assert_int_eq(b.data[i], 'a' + i % 26);
  ck_assert_int_eq(b.data[n], '\0');
  pc_buf_free(&b);
  /* One printf much longer than the buffer it lands in. */
  memset(big, 'z', 99999);
  big[99999] = '\0';
  pc_buf_puts(&b, "<");
  pc_buf_printf(&b, "%s>", big);
  ck_assert_uint_eq(b.len, 100001);
  ck_assert_int_eq(b.data[0], '<');
  ck_assert_int_eq(b.data[99999], 'z');
  ck_assert_str_eq(b.data + 100000, ">");
  pc_buf_free(&b);
  free(big);
}
END_TEST

START_TEST(buf_failure_sticks) {
  struct pc_buf b = {0};

  pc_buf_puts(&b, "kept");
  /* A size that cannot be added to the length fails without allocating
   * (and without reading the source). */
  pc_buf_append(&b, "", SIZE_MAX - 2);
  ck_assert(b.failed);
  ck_assert_uint_eq(b.len, 4);
  /* Every later append is a no-op, so one check at the end suffices. */
  pc_buf_puts(&b, "more");
  pc_buf_putc(&b, '!');
  pc_buf_printf(&b, "%d", 5);
  ck_assert(b.failed);
  ck_assert_uint_eq(b.len, 4);
  ck_assert(memcmp(b.data, "kept", 4) == 0);
  /* free() resets it to a fresh, working buffer. */
  pc_buf_free(&b);
  ck_assert(!b.failed);
  pc_buf_puts(&b, "new");
  ck_assert_str_eq(b.data, "new");
  pc_buf_free(&b);
}
END_TEST

START_TEST(buf_printf_error_fails) {
  struct pc_buf b = {0};
  /* A wide character the "C" locale cannot write: vsnprintf() fails. */
  static const wchar_t wide[] = {0x100, 0};

  pc_buf_puts(&b, "ok");
  pc_buf_printf(&b, "%ls", wide);
  ck_assert(b.failed);
  ck_assert_uint_eq(b.len, 2);
  pc_buf_free(&b);
}
END_TEST

/* --- utf8 ----------------------------------------------------------------- */

/* pc_utf8_sequence() on a string literal of `n` bytes. */
static int seq(const char *s, size_t n) {
  return pc_utf8_sequence((const unsigned char *)s, n);
}

START_TEST(utf8_sequences) {
  ck_assert_int_eq(seq("a", 1), 1);
  ck_assert_int_eq(seq("\x7f", 1), 1);
  ck_assert_int_eq(seq("\xc2\x80", 2), 2);         /* U+0080 */
  ck_assert_int_eq(seq("\xdf\xbf", 2), 2);         /* U+07FF */
  ck_assert_int_eq(seq("\xe0\xa0\x80", 3), 3);     /* U+0800 */
  ck_assert_int_eq(seq("\xe2\x82\xac", 3), 3);     /* U+20AC */
  ck_assert_int_eq(seq("\xed\x9f\xbf", 3), 3);     /* U+D7FF */
  ck_assert_int_eq(seq("\xee\x80\x80", 3), 3);     /* U+E000 */
  ck_assert_int_eq(seq("\xef\xbf\xbf", 3), 3);     /* U+FFFF */
  ck_assert_int_eq(seq("\xf0\x90\x80\x80", 4), 4); /* U+10000 */
  ck_assert_int_eq(seq("\xf4\x8f\xbf\xbf", 4), 4); /* U+10FFFF */
  /* Only the sequence counts, not what follows it. */
  ck_assert_int_eq(seq("\xc3\xa9xyz", 5), 2);
}
END_TEST

START_TEST(utf8_invalid) {
  /* Overlong forms. */
  ck_assert_int_eq(seq("\xc0\x80", 2), 0);
  ck_assert_int_eq(seq("\xc1\xbf", 2), 0);
  ck_assert_int_eq(seq("\xe0\x9f\xbf", 3), 0);
  ck_assert_int_eq(seq("\xe0\x80\xaf", 3), 0);
  ck_assert_int_eq(seq("\xf0\x8f\xbf\xbf", 4), 0);
  /* Surrogates, high and low. */
  ck_assert_int_eq(seq("\xed\xa0\x80", 3), 0);
  ck_assert_int_eq(seq("\xed\xbf\xbf", 3), 0);
  /* Past U+10FFFF, and leads that never start anything. */
  ck_assert_int_eq(seq("\xf4\x90\x80\x80", 4), 0);
  ck_assert_int_eq(seq("\xf5\x80\x80\x80", 4), 0);
  ck_assert_int_eq(seq("\xf8\x88\x80\x80\x80", 5), 0);
  ck_assert_int_eq(seq("\xff", 1), 0);
  ck_assert_int_eq(seq("\xfe", 1), 0);
  /* A continuation byte alone, and a lead without its continuation. */
  ck_assert_int_eq(seq("\x80", 1), 0);
  ck_assert_int_eq(seq("\xbf", 1), 0);
  ck_assert_int_eq(seq("\xc3\x41", 2), 0);
  ck_assert_int_eq(seq("\xe2\x82\x41", 3), 0);
}
END_TEST

START_TEST(utf8_cut_short) {
  /* A valid start the end cuts short is -1, not invalid. */
  ck_assert_int_eq(seq("\xc3", 1), -1);
  ck_assert_int_eq(seq("\xe2\x82", 2), -1);
  ck_assert_int_eq(seq("\xf0\x9f\x98", 3), -1);
  /* An invalid start is invalid however short. */
  ck_assert_int_eq(seq("\xe0\x80", 2), 0);
  ck_assert_int_eq(seq("\xed\xa0", 2), 0);
  ck_assert_int_eq(seq("\xf4\x90", 2), 0);
}
END_TEST

START_TEST(utf8_is_text) {
  ck_assert(pc_utf8_is_text("", 0));
  ck_assert(pc_utf8_is_text("plain ascii", 11));
  ck_assert(pc_utf8_is_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14));
  /* A NUL is not text, though it is valid UTF-8. */
  ck_assert(!pc_utf8_is_text("a\0b", 3));
  ck_assert(!pc_utf8_is_text("\xc0\x80", 2));
  ck_assert(!pc_utf8_is_text("ab\xed\xa0\x80", 5));
  ck_assert(!pc_utf8_is_text("ab\xe2\x82", 4));
  ck_assert(!pc_utf8_is_text("\xff", 1));
  /* Only the n bytes given are looked at. */
  ck_assert(pc_utf8_is_text("ok\xff", 2));
}
END_TEST

START_TEST(utf8_cuts) {
  /* Complete text is not cut. */
  ck_assert_uint_eq(pc_utf8_cut("", 0), 0);
  ck_assert_uint_eq(pc_utf8_cut("abc", 3), 3);
  ck_assert_uint_eq(pc_utf8_cut("ab\xe2\x82\xac", 5), 5);
  ck_assert_uint_eq(pc_utf8_cut_loose("ab\xe2\x82\xac", 5), 5);
  /* A character cut short is left out whole. */
  ck_assert_uint_eq(pc_utf8_cut("ab\xe2\x82", 4), 2);
  ck_assert_uint_eq(pc_utf8_cut("ab\xe2", 3), 2);
  ck_assert_uint_eq(pc_utf8_cut("\xf0\x9f\x98", 3), 0);
  ck_assert_uint_eq(pc_utf8_cut_loose("ab\xe2\x82", 4), 2);
  ck_assert_uint_eq(pc_utf8_cut_loose("\xf0\x9f\x98", 3), 0);
  /* Invalid tails: the strict cut keeps them for a validator to see; the
   * loose one drops whatever looks like an unfinished character. */
  ck_assert_uint_eq(pc_utf8_cut("ab\xc0", 3), 3);
  ck_assert_uint_eq(pc_utf8_cut_loose("ab\xc0", 3), 2);
  ck_assert_uint_eq(pc_utf8_cut("\xe0\x80", 2), 2);
  ck_assert_uint_eq(pc_utf8_cut_loose("\xe0\x80", 2), 0);
  ck_assert_uint_eq(pc_utf8_cut("x\xed\xa0", 3), 3);
  ck_assert_uint_eq(pc_utf8_cut_loose("x\xed\xa0", 3), 1);
  ck_assert_uint_eq(pc_utf8_cut("x\xf5\x80", 3), 3);
  ck_assert_uint_eq(pc_utf8_cut_loose("x\xf5\x80", 3), 1);
  /* Stray continuation bytes, more than any character has, are kept by
   * both. */
  ck_assert_uint_eq(pc_utf8_cut("a\x80\x80\x80\x80\x80", 6), 6);
  ck_assert_uint_eq(pc_utf8_cut_loose("a\x80\x80\x80\x80\x80", 6), 6);
  ck_assert_uint_eq(pc_utf8_cut("\xc3\x80\x80\x80\x80", 5), 5);
  ck_assert_uint_eq(pc_utf8_cut_loose("\xc3\x80\x80\x80\x80", 5), 5);
}
END_TEST

START_TEST(utf8_encodes) {
  static const struct {
    uint32_t cp;
    const char *utf8;
  } cases[] = {
      {0x41, "A"},
      {0x7f, "\x7f"},
      {0x80, "\xc2\x80"},
      {0x7ff, "\xdf\xbf"},
      {0x800, "\xe0\xa0\x80"},
      {0x20ac, "\xe2\x82\xac"},
      {0xfffd, "\xef\xbf\xbd"},
      {0xffff, "\xef\xbf\xbf"},
      {0x10000, "\xf0\x90\x80\x80"},
      {0x10ffff, "\xf4\x8f\xbf\xbf"},
  };
  char out[4];

  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    size_t len = pc_utf8_encode(cases[i].cp, out);
    ck_assert_uint_eq(len, strlen(cases[i].utf8));
    ck_assert(memcmp(out, cases[i].utf8, len) == 0);
  }
  ck_assert_uint_eq(pc_utf8_encode(0, out), 1);
  ck_assert_int_eq(out[0], '\0');
}
END_TEST

/* Every code point but the surrogates encodes to one sequence the
 * validator takes whole, of the length its range calls for. */
START_TEST(utf8_round_trip_every_code_point) {
  uint32_t bad = 0;
  char out[4];

  /* Checked without ck_assert() in the loop, which reports every pass to
   * the test runner: a million of those would take long. */
  for (uint32_t cp = 1; cp <= 0x10ffff && bad == 0; cp++) {
    size_t len, want = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;

    if (cp >= 0xd800 && cp <= 0xdfff)
      continue;
    len = pc_utf8_encode(cp, out);
    if (len != want ||
        pc_utf8_sequence((unsigned char *)out, len) != (int)len ||
        !pc_utf8_is_text(out, len) ||
        (len > 1 && (pc_utf8_sequence((unsigned char *)out, len - 1) != -1 ||
                     pc_utf8_cut(out, len - 1) != 0 ||
                     pc_utf8_cut_loose(out, len - 1) != 0)))
      bad = cp;
  }
  ck_assert_msg(bad == 0, "U+%04X does not round-trip", (unsigned)bad);
}
END_TEST

/* pc_utf8_clean() of `n` bytes equals `want` (wlen bytes). */
static void assert_cleans(const char *in, size_t n, const char *want,
                          size_t wlen) {
  size_t len = 12345;
  char *got = pc_utf8_clean(in, n, &len);

  ck_assert_ptr_nonnull(got);
  ck_assert_uint_eq(len, wlen);
  ck_assert(memcmp(got, want, wlen) == 0);
  ck_assert_int_eq(got[len], '\0');
  free(got);
}

#define CLEANS(in, want)                                                       \
  assert_cleans(in, sizeof(in) - 1, want, sizeof(want) - 1)
#define FFFD "\xef\xbf\xbd"

START_TEST(utf8_cleans) {
  CLEANS("", "");
  CLEANS("caf\xc3\xa9", "caf\xc3\xa9");
  /* Each NUL and each byte outside a valid sequence becomes U+FFFD. */
  CLEANS("a\0b", "a" FFFD "b");
  CLEANS("a\xff"
         "b",
         "a" FFFD "b");
  CLEANS("\xc0\x80", FFFD FFFD);
  CLEANS("\xed\xa0\x80", FFFD FFFD FFFD);
  CLEANS("x\xe2\x82", "x" FFFD FFFD);
  CLEANS("\xf4\x90\x80\x80!", FFFD FFFD FFFD FFFD "!");
  /* U+FFFD itself passes through unchanged. */
  CLEANS(FFFD, FFFD);
}
END_TEST

START_TEST(utf8_cleans_large) {
  size_t n = 1 << 20, len;
  char *in = malloc(n), *out;

  ck_assert_ptr_nonnull(in);
  /* Valid text comes out as it went in... */
  for (size_t i = 0; i < n; i += 2)
    memcpy(in + i, "\xc3\xa9", 2);
  out = pc_utf8_clean(in, n, &len);
  ck_assert_ptr_nonnull(out);
  ck_assert_uint_eq(len, n);
  ck_assert(memcmp(in, out, n) == 0);
  free(out);
  /* ...and invalid bytes triple. */
  memset(in, 0xff, n);
  out = pc_utf8_clean(in, n, &len);
  ck_assert_ptr_nonnull(out);
  ck_assert_uint_eq(len, 3 * n);
  ck_assert(memcmp(out + 3 * n - 3, FFFD, 3) == 0);
  ck_assert(pc_utf8_is_text(out, len));
  free(out);
  free(in);
}
END_TEST

/* --- base64 --------------------------------------------------------------- */

static void assert_encodes(const char *in, size_t n, const char *want) {
  char *got = pc_base64_encode((const unsigned char *)in, n);

  ck_assert_ptr_nonnull(got);
  ck_assert_str_eq(got, want);
  free(got);
}

START_TEST(base64_rfc4648_vectors) {
  /* RFC 4648, section 10: every amount of padding. */
  assert_encodes("", 0, "");
  assert_encodes("f", 1, "Zg==");
  assert_encodes("fo", 2, "Zm8=");
  assert_encodes("foo", 3, "Zm9v");
  assert_encodes("foob", 4, "Zm9vYg==");
  assert_encodes("fooba", 5, "Zm9vYmE=");
  assert_encodes("foobar", 6, "Zm9vYmFy");
}
END_TEST

START_TEST(base64_edges) {
  char *s = pc_base64_encode(NULL, 0);

  /* No bytes: an empty string, never NULL, and no read of `data`. */
  ck_assert_ptr_nonnull(s);
  ck_assert_str_eq(s, "");
  free(s);
  /* The last two letters of the standard alphabet, not the URL one. */
  assert_encodes("\xfb\xff", 2, "+/8=");
  assert_encodes("\xff\xff\xff", 3, "////");
  /* NUL bytes are data. */
  assert_encodes("\0\0\0", 3, "AAAA");
  assert_encodes("\0", 1, "AA==");
  /* A size whose encoding would not fit: NULL, nothing read. */
  ck_assert_ptr_null(pc_base64_encode((const unsigned char *)"", SIZE_MAX));
  ck_assert_ptr_null(
      pc_base64_encode((const unsigned char *)"", SIZE_MAX / 4 * 3));
}
END_TEST

/* The 6-bit value of a base64 letter, or -1. */
static int letter(char c) {
  static const char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const char *p = c ? strchr(alphabet, c) : NULL;

  return p ? (int)(p - alphabet) : -1;
}

START_TEST(base64_large_round_trip) {
  for (size_t n = 3 << 20; n < (3 << 20) + 3; n++) {
    unsigned char *in = malloc(n), *back = malloc(n);
    size_t len, k = 0;
    char *s;

    ck_assert_ptr_nonnull(in);
    ck_assert_ptr_nonnull(back);
    for (size_t i = 0; i < n; i++)
      in[i] = (unsigned char)(i * 2654435761u >> 13);
    s = pc_base64_encode(in, n);
    ck_assert_ptr_nonnull(s);
    len = strlen(s);
    ck_assert_uint_eq(len, (n + 2) / 3 * 4);
    /* Padded to whole quads; decoded back by hand, without ck_assert()
     * per letter. */
    ck_assert_uint_eq(n % 3 == 0 ? 0 : 3 - n % 3,
                      (s[len - 1] == '=') + (s[len - 2] == '='));
    for (size_t i = 0; i < len && k <= n; i += 4) {
      uint32_t v = 0;
      int pad = 0;

      for (int j = 0; j < 4; j++) {
        int d = s[i + j] == '=' ? (pad++, 0) : letter(s[i + j]);
        if (d < 0)
          ck_abort_msg("not a base64 letter at %zu", i + j);
        v = v << 6 | (uint32_t)d;
      }
      for (int j = 0; j < 3 - pad && k < n; j++)
        back[k++] = (unsigned char)(v >> (16 - 8 * j));
    }
    ck_assert_uint_eq(k, n);
    ck_assert(memcmp(in, back, n) == 0);
    free(s);
    free(back);
    free(in);
  }
}
END_TEST

int main(void) {
  Suite *buf = suite_create("buf"), *utf8 = suite_create("utf8"),
        *base64 = suite_create("base64");
  TCase *buf_core = tcase_create("core"), *buf_limits = tcase_create("limits");
  TCase *utf8_decode = tcase_create("decode"),
        *utf8_encode = tcase_create("encode"),
        *utf8_clean = tcase_create("clean");
  TCase *b64_core = tcase_create("core"), *b64_limits = tcase_create("limits");
  SRunner *sr;
  int failed;

  tcase_add_test(buf_core, buf_starts_empty);
  tcase_add_test(buf_core, buf_appends);
  tcase_add_test(buf_limits, buf_grows_large);
  tcase_add_test(buf_limits, buf_failure_sticks);
  tcase_add_test(buf_limits, buf_printf_error_fails);
  suite_add_tcase(buf, buf_core);
  suite_add_tcase(buf, buf_limits);

  tcase_add_test(utf8_decode, utf8_sequences);
  tcase_add_test(utf8_decode, utf8_invalid);
  tcase_add_test(utf8_decode, utf8_cut_short);
  tcase_add_test(utf8_decode, utf8_is_text);
  tcase_add_test(utf8_decode, utf8_cuts);
  tcase_add_test(utf8_encode, utf8_encodes);
  /* A million code points, each checked several ways: sanitized builds on
   * a busy machine need room. */
  tcase_set_timeout(utf8_encode, 60);
  tcase_add_test(utf8_encode, utf8_round_trip_every_code_point);
  tcase_add_test(utf8_clean, utf8_cleans);
  tcase_add_test(utf8_clean, utf8_cleans_large);
  suite_add_tcase(utf8, utf8_decode);
  suite_add_tcase(utf8, utf8_encode);
  suite_add_tcase(utf8, utf8_clean);

  tcase_add_test(b64_core, base64_rfc4648_vectors);
  tcase_add_test(b64_core, base64_edges);
  tcase_set_timeout(b64_limits, 60);
  tcase_add_test(b64_limits, base64_large_round_trip);
  suite_add_tcase(base64, b64_core);
  suite_add_tcase(base64, b64_limits);

  sr = srunner_create(buf);
  srunner_add_suite(sr, utf8);
  srunner_add_suite(sr, base64);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
