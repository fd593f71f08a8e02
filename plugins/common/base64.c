/* SPDX-License-Identifier: MIT */
/* base64.c -- base64 for the bundled plugins (see base64.h). */
#include <stdint.h>
#include <stdlib.h>

#include "base64.h"

char *pc_base64_encode(const unsigned char *data, size_t n) {
  static const char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i;
  char *out, *w;

  /* Four characters per three bytes, rounded up, and the NUL. */
  if (n > (SIZE_MAX - 1) / 4 * 3 - 3)
    return NULL;
  if ((out = malloc((n + 2) / 3 * 4 + 1)) == NULL)
    return NULL;
  for (i = 0, w = out; i + 2 < n; i += 3) {
    uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 |
                 (uint32_t)data[i + 2];
    *w++ = alphabet[v >> 18];
    *w++ = alphabet[(v >> 12) & 63];
    *w++ = alphabet[(v >> 6) & 63];
    *w++ = alphabet[v & 63];
  }
  /* One or two bytes left: two or three characters, padded to four. */
  if (i < n) {
    uint32_t v = (uint32_t)data[i] << 16;

    if (i + 1 < n)
      v |= (uint32_t)data[i + 1] << 8;
    *w++ = alphabet[v >> 18];
    *w++ = alphabet[(v >> 12) & 63];
    *w++ = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
    *w++ = '=';
  }
  *w = '\0';
  return out;
}
