/* SPDX-License-Identifier: MIT */
/* utf8.c -- UTF-8 checks for text that crosses the protocol. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* The length of the well-formed sequence at s[i], or 0. */
static size_t sequence_at(const unsigned char *s, size_t n, size_t i) {
  unsigned char c = s[i], lo = 0x80, hi = 0xBF;
  size_t need;

  if (c < 0x80)
    return 1;
  if (c >= 0xC2 && c <= 0xDF)
    need = 1;
  else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0)
      lo = 0xA0; /* overlong */
    else if (c == 0xED)
      hi = 0x9F; /* surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0)
      lo = 0x90; /* overlong */
    else if (c == 0xF4)
      hi = 0x8F; /* past U+10FFFF */
  } else
    return 0;
  if (n - i <= need || s[i + 1] < lo || s[i + 1] > hi)
    return 0;
  for (size_t k = 2; k <= need; k++)
    if ((s[i + k] & 0xC0) != 0x80)
      return 0;
  return need + 1;
}

/* json-c's own check lets overlong forms through, so mcpd has its own. */
int utf8_valid(const char *text, size_t n) {
  const unsigned char *s = (const unsigned char *)text;
  size_t i = 0;
  while (i < n) {
    /* ASCII eight bytes at a time: most messages are all ASCII. */
    while (n - i >= 8) {
      uint64_t w;
      memcpy(&w, s + i, 8);
      if (w & 0x8080808080808080ull)
        break;
      i += 8;
    }
    if (i >= n)
      break;
    /* The last few bytes of an ASCII text, one at a time. */
    if (s[i] < 0x80) {
      i++;
      continue;
    }
    {
      size_t len = sequence_at(s, n, i);
      if (len == 0)
        return 0;
      i += len;
    }
  }
  return 1;
}

char *utf8_repair(const char *text, size_t n, size_t *out_len) {
  const unsigned char *s = (const unsigned char *)text;
  /* Each bad byte becomes three (U+FFFD). */
  char *out = malloc(n * 3 + 1);
  size_t o = 0;

  if (out == NULL)
    return NULL;
  for (size_t i = 0; i < n;) {
    size_t len = sequence_at(s, n, i);
    if (len == 0) {
      memcpy(out + o, "\xEF\xBF\xBD", 3);
      o += 3;
      i++;
    } else {
      memcpy(out + o, text + i, len);
      o += len;
      i += len;
    }
  }
  out[o] = '\0';
  *out_len = o;
  return out;
}

size_t utf8_cut(const char *text, size_t n, size_t max) {
  const unsigned char *s = (const unsigned char *)text;
  if (n <= max)
    return n;
  /* Back up over continuation bytes to the start of a character. */
  while (max > 0 && (s[max] & 0xC0) == 0x80)
    max--;
  return max;
}
