/* strbuf.h -- a growable byte buffer and JSON text helpers.
 *
 * Replies on the hot path are written as text straight into buffers rather
 * than built as json-c trees and serialized: a tree costs a handful of
 * allocations per message, text costs a memcpy. */
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
/* Makes room for `n` more bytes; returns 0 or -1. */
int strbuf_reserve(strbuf *b, size_t n);
void strbuf_append(strbuf *b, const char *data, size_t n);
void strbuf_puts(strbuf *b, const char *s);
void strbuf_int64(strbuf *b, int64_t v);
/* Formats `v` in decimal at the end of `tmp`; returns where it starts and
 * sets *len.  For callers that hand the text on without a strbuf. */
const char *strbuf_format_int64(char tmp[24], int64_t v, size_t *len);
/* Appends `s` as a JSON string literal, quotes included. */
void strbuf_json_string(strbuf *b, const char *s, size_t n);

#endif
