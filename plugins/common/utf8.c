/* SPDX-License-Identifier: MIT */
/* utf8.c -- UTF-8 for the bundled plugins (see utf8.h). */
#include <stdlib.h>

#include "buf.h"
#include "utf8.h"

int pc_utf8_sequence(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  unsigned char lo = 0x80, hi = 0xBF;
  int len;

  if (c < 0x80)
    return 1;
  /* The lead byte says the length; for a few leads the range of the
   * second byte is narrower, which is what rules out overlong forms
   * (E0, F0), surrogates (ED) and code points past U+10FFFF (F4). */
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0)
      lo = 0xA0;
    else if (c == 0xED)
      hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0)
      lo = 0x90;
    else if (c == 0xF4)
      hi = 0x8F;
  } else {
    return 0;
  }
  for (int i = 1; i < len; i++) {
    if ((size_t)i >= n)
      return -1;
    if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xBF))
      return 0;
  }
  return len;
}

int pc_utf8_is_text(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;

  while (i < n) {
    int len;

    if (p[i] == 0)
      return 0;
    if (p[i] < 0x80) {
      i++;
      continue;
    }
    if ((len = pc_utf8_sequence(p + i, n - i)) <= 0)
      return 0;
    i += (size_t)len;
  }
  return 1;
}

size_t pc_utf8_cut(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;

  /* Step back over at most three continuation bytes to the lead byte of
   * the last sequence; drop it when it is a valid start cut short. */
  for (size_t back = 1; back <= 4 && back <= n; back++) {
    unsigned char c = p[n - back];

    if ((c & 0xC0) == 0x80)
      continue;
    if (c >= 0xC0 && pc_utf8_sequence(p + n - back, back) < 0)
      return n - back;
    break;
  }
  return n;
}

size_t pc_utf8_cut_loose(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = n;

  /* Step back over at most four continuation bytes: a lead further back
   * announces at most four bytes, so its sequence is not cut. */
  while (i > 0 && n - i < 4 && (p[i - 1] & 0xC0) == 0x80)
    i--;
  if (i > 0 && p[i - 1] >= 0xC0) {
    unsigned char lead = p[i - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;

    if (n - (i - 1) < need)
      return i - 1;
  }
  return n;
}

size_t pc_utf8_encode(uint32_t cp, char out[4]) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | cp >> 12);
    out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | cp >> 18);
  out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
  out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

char *pc_utf8_clean(const char *data, size_t n, size_t *out_len) {
  const unsigned char *s = (const unsigned char *)data;
  struct pc_buf b = {0};
  size_t i = 0;

  pc_buf_append(&b, "", 0); /* "" rather than NULL for empty input */
  while (i < n) {
    size_t run = i;
    int len;

    /* Copy runs of valid text at once. */
    while (run < n && s[run] != 0 &&
           (len = pc_utf8_sequence(s + run, n - run)) > 0)
      run += (size_t)len;
    pc_buf_append(&b, data + i, run - i);
    if (run < n) {
      pc_buf_append(&b, "\xEF\xBF\xBD", 3);
      run++;
    }
    i = run;
  }
  if (b.failed) {
    pc_buf_free(&b);
    return NULL;
  }
  *out_len = b.len;
  return b.data;
}
