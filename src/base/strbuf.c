/* SPDX-License-Identifier: MIT */
/* strbuf.c -- a growable byte buffer and JSON text helpers. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

void strbuf_free(strbuf *b) {
  free(b->data);
  memset(b, 0, sizeof(*b));
}

int strbuf_reserve(strbuf *b, size_t n) {
  size_t cap;
  char *nd;
  if (b->cap - b->len > n)
    return 0;
  cap = b->cap ? b->cap : 256;
  while (cap - b->len <= n) {
    if (cap > SIZE_MAX / 2) {
      b->failed = 1;
      return -1;
    }
    cap *= 2;
  }
  nd = realloc(b->data, cap);
  if (nd == NULL) {
    b->failed = 1;
    return -1;
  }
  b->data = nd;
  b->cap = cap;
  return 0;
}

void strbuf_append(strbuf *b, const char *data, size_t n) {
  /* Nothing to add; `data` may then be NULL, which memcpy must not see. */
  if (n == 0)
    return;
  if (strbuf_reserve(b, n) != 0)
    return;
  memcpy(b->data + b->len, data, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void strbuf_puts(strbuf *b, const char *s) {
  strbuf_append(b, s, strlen(s));
}

const char *strbuf_format_int64(char tmp[24], int64_t v, size_t *len) {
  size_t i = 24;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    tmp[--i] = (char)('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (v < 0)
    tmp[--i] = '-';
  *len = 24 - i;
  return tmp + i;
}

void strbuf_json_string(strbuf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  size_t start = 0;

  /* Room for the quotes; escapes grow the buffer as they come. */
  if (strbuf_reserve(b, n + 2) != 0)
    return;
  b->data[b->len++] = '"';
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    char esc[6];
    size_t elen = 2;
    if (c >= 0x20 && c != '"' && c != '\\')
      continue;
    strbuf_append(b, s + start, i - start);
    esc[0] = '\\';
    switch (c) {
    case '"':
      esc[1] = '"';
      break;
    case '\\':
      esc[1] = '\\';
      break;
    case '\n':
      esc[1] = 'n';
      break;
    case '\r':
      esc[1] = 'r';
      break;
    case '\t':
      esc[1] = 't';
      break;
    case '\b':
      esc[1] = 'b';
      break;
    case '\f':
      esc[1] = 'f';
      break;
    default:
      esc[1] = 'u';
      esc[2] = '0';
      esc[3] = '0';
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 15];
      elen = 6;
    }
    strbuf_append(b, esc, elen);
    start = i + 1;
  }
  strbuf_append(b, s + start, n - start);
  strbuf_append(b, "\"", 1);
}
