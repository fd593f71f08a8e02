/* SPDX-License-Identifier: MIT */
/* strbuf.h -- the growable byte buffer, and JSON text helpers.
 *
 * One buffer type serves the framer's input, the transport's output and
 * replies built as text: on the hot path a reply is written as text
 * straight into a buffer rather than built as a json-c tree and
 * serialized, since a tree costs a handful of allocations per message and
 * text costs a memcpy.  After an allocation fails the buffer is marked
 * `failed` and further appends do nothing, so a builder checks once at the
 * end. */
#ifndef MCPD_STRBUF_H
#define MCPD_STRBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct strbuf {
  char *data;
  size_t len;
  size_t cap;
  int failed; /* an allocation failed; the content is incomplete */
} strbuf;

void strbuf_free(strbuf *b);
/* Makes room for `n` more bytes and a terminating NUL; returns 0, or -1
 * with `failed` set. */
int strbuf_reserve(strbuf *b, size_t n);
void strbuf_append(strbuf *b, const char *data, size_t n);
void strbuf_puts(strbuf *b, const char *s);
/* Formats `v` in decimal at the end of `tmp`; returns where it starts and
 * sets *len. */
const char *strbuf_format_int64(char tmp[24], int64_t v, size_t *len);
/* Appends `s` as a JSON string literal, quotes included. */
void strbuf_json_string(strbuf *b, const char *s, size_t n);

#endif
