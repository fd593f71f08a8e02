/* SPDX-License-Identifier: MIT */
/* framer.c -- newline-delimited message framing. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "framer.h"

/* Buffers larger than this are released once they are empty again, so one
 * huge message does not pin its memory for the life of the process. */
#define FRAMER_KEEP_CAP (256 * 1024)

void framer_init(framer *f, size_t max) {
  memset(f, 0, sizeof(*f));
  f->max = max;
}

void framer_free(framer *f) {
  strbuf_free(&f->buf);
  f->scanned = 0;
}

size_t framer_pending(const framer *f) {
  return f->buf.len;
}

int framer_reserve(framer *f, size_t want, char **base, size_t *avail) {
  if (strbuf_reserve(&f->buf, want) != 0) {
    f->buf.failed = 0;
    return -1;
  }
  *base = f->buf.data + f->buf.len;
  /* One byte stays free so a line can always be NUL-terminated in place. */
  *avail = f->buf.cap - f->buf.len - 1;
  return 0;
}

static int is_blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
      return 0;
  return 1;
}

void framer_commit(framer *f, size_t n, framer_cb cb, void *ctx) {
  char *buf = f->buf.data;
  size_t start = 0;
  size_t pos = f->scanned;

  f->buf.len += n;
  for (;;) {
    char *nl = memchr(buf + pos, '\n', f->buf.len - pos);
    size_t end;

    if (nl == NULL)
      break;
    end = (size_t)(nl - buf);
    if (f->discarding) {
      /* The tail of an oversized line: drop it, resume after it. */
      f->discarding = 0;
    } else {
      size_t len = end - start;
      if (len > 0 && buf[start + len - 1] == '\r')
        len--;
      if (len > f->max) {
        cb(ctx, NULL, len, 1);
      } else if (!is_blank(buf + start, len)) {
        buf[start + len] = '\0';
        cb(ctx, buf + start, len, 0);
      }
    }
    start = pos = end + 1;
  }

  if (f->discarding) {
    /* Everything held belongs to the oversized line. */
    f->buf.len = f->scanned = 0;
  } else if (f->buf.len - start > f->max + 1) {
    /* No newline within the limit (a '\r' may still end it): refuse now
     * instead of buffering without bound. */
    cb(ctx, NULL, f->buf.len - start, 1);
    f->discarding = 1;
    f->buf.len = f->scanned = 0;
  } else {
    if (start > 0) {
      memmove(buf, buf + start, f->buf.len - start);
      f->buf.len -= start;
    }
    f->scanned = f->buf.len;
  }
  if (f->buf.len == 0 && f->buf.cap > FRAMER_KEEP_CAP)
    strbuf_free(&f->buf);
}

int framer_feed(framer *f, const char *data, size_t n, framer_cb cb,
                void *ctx) {
  while (n > 0) {
    char *base;
    size_t avail;
    size_t chunk;
    if (framer_reserve(f, n < 65536 ? n : 65536, &base, &avail) != 0)
      return -1;
    chunk = n < avail ? n : avail;
    memcpy(base, data, chunk);
    framer_commit(f, chunk, cb, ctx);
    data += chunk;
    n -= chunk;
  }
  return 0;
}
