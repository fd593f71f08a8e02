/* SPDX-License-Identifier: MIT */
/* base64.c -- strict RFC 4648 base64 and base64url (see base64.h). */
#include "config.h"

#include <stdint.h>

#include "base64.h"

static const char url_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* The value of `c` in the alphabet whose last two digits are c62, c63. */
static int digit(char c, char c62, char c63) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == c62)
    return 62;
  if (c == c63)
    return 63;
  return -1;
}

void base64url_encode(strbuf *out, const unsigned char *p, size_t len) {
  char quad[4];

  for (size_t i = 0; i < len; i += 3) {
    size_t n = len - i < 3 ? len - i : 3;
    uint32_t v = (uint32_t)p[i] << 16;
    if (n > 1)
      v |= (uint32_t)p[i + 1] << 8;
    if (n > 2)
      v |= p[i + 2];
    quad[0] = url_alphabet[(v >> 18) & 63];
    quad[1] = url_alphabet[(v >> 12) & 63];
    quad[2] = url_alphabet[(v >> 6) & 63];
    quad[3] = url_alphabet[v & 63];
    strbuf_append(out, quad, n + 1);
  }
}

/* Decodes `n` unpadded characters; 0 or -1. */
static int decode(const char *s, size_t n, char c62, char c63, strbuf *out) {
  uint32_t acc = 0;
  unsigned bits = 0;

  if (n % 4 == 1)
    return -1;
  if (strbuf_reserve(out, n / 4 * 3 + 2) != 0)
    return -1;
  for (size_t i = 0; i < n; i++) {
    int v = digit(s[i], c62, c63);
    if (v < 0)
      return -1;
    acc = ((acc << 6) | (uint32_t)v) & 0xffffu;
    bits += 6;
    if (bits >= 8) {
      char byte;
      bits -= 8;
      byte = (char)(acc >> bits);
      strbuf_append(out, &byte, 1);
    }
  }
  /* The bits past the last byte must be zero: one spelling per string. */
  if ((acc & ((1u << bits) - 1)) != 0)
    return -1;
  return out->failed ? -1 : 0;
}

int base64url_decode(const char *s, size_t n, strbuf *out) {
  return decode(s, n, '-', '_', out);
}

unsigned char *base64url_decode_alloc(const char *s, size_t n, size_t *len) {
  strbuf b = {0};

  if (base64url_decode(s, n, &b) != 0 || strbuf_reserve(&b, 0) != 0) {
    strbuf_free(&b);
    return NULL;
  }
  b.data[b.len] = '\0';
  *len = b.len;
  return (unsigned char *)b.data;
}

int base64_decode(const char *s, size_t n, strbuf *out) {
  size_t pad = 0;

  if (n % 4 != 0)
    return -1;
  while (pad < 2 && pad < n && s[n - 1 - pad] == '=')
    pad++;
  return decode(s, n - pad, '+', '/', out);
}
