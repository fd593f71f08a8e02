/* SPDX-License-Identifier: MIT */
/* buf.c -- the growable byte buffer of the bundled plugins (see buf.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* Makes room for `more` bytes and the NUL after them.  Doubling keeps a
 * long run of appends linear. */
static int reserve(struct pc_buf *b, size_t more) {
  size_t need, cap;
  char *p;

  if (b->failed)
    return -1;
  if (more > SIZE_MAX - b->len - 1)
    goto fail;
  need = b->len + more + 1;
  if (need <= b->cap)
    return 0;
  cap = b->cap ? b->cap : 256;
  while (cap < need)
    cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  if ((p = realloc(b->data, cap)) == NULL)
    goto fail;
  b->data = p;
  b->cap = cap;
  return 0;
fail:
  b->failed = 1;
  return -1;
}

void pc_buf_append(struct pc_buf *b, const char *s, size_t n) {
  if (reserve(b, n) != 0)
    return;
  /* n == 0 may come with s == NULL, which memcpy() must not see. */
  if (n > 0)
    memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void pc_buf_putc(struct pc_buf *b, char c) {
  pc_buf_append(b, &c, 1);
}

void pc_buf_puts(struct pc_buf *b, const char *s) {
  pc_buf_append(b, s, strlen(s));
}

void pc_buf_printf(struct pc_buf *b, const char *fmt, ...) {
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->failed = 1;
    return;
  }
  if (reserve(b, (size_t)n) != 0)
    return;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void pc_buf_free(struct pc_buf *b) {
  free(b->data);
  memset(b, 0, sizeof(*b));
}
