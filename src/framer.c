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
  free(f->buf);
  f->buf = NULL;
  f->len = f->cap = f->scanned = 0;
}

size_t framer_pending(const framer *f) {
  return f->len;
}

int framer_reserve(framer *f, size_t want, char **base, size_t *avail) {
  if (f->cap - f->len < want + 1) {
    size_t cap = f->cap ? f->cap : 4096;
    char *nb;
    while (cap - f->len < want + 1)
      cap *= 2;
    nb = realloc(f->buf, cap);
    if (nb == NULL)
      return -1;
    f->buf = nb;
    f->cap = cap;
  }
  *base = f->buf + f->len;
  /* One byte stays free so a line can always be NUL-terminated in place. */
  *avail = f->cap - f->len - 1;
  return 0;
}

static int is_blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
      return 0;
  return 1;
}

void framer_commit(framer *f, size_t n, framer_cb cb, void *ctx) {
  size_t start = 0;
  size_t pos = f->scanned;

  f->len += n;
  for (;;) {
    char *nl = memchr(f->buf + pos, '\n', f->len - pos);
    size_t end;

    if (nl == NULL)
      break;
    end = (size_t)(nl - f->buf);
    if (f->discarding) {
      /* The tail of an oversized line: drop it, resume after it. */
      f->discarding = 0;
    } else {
      size_t len = end - start;
      if (len > 0 && f->buf[start + len - 1] == '\r')
        len--;
      if (len > f->max) {
        cb(ctx, NULL, len, 1);
      } else if (!is_blank(f->buf + start, len)) {
        f->buf[start + len] = '\0';
        cb(ctx, f->buf + start, len, 0);
      }
    }
    start = pos = end + 1;
  }

  if (f->discarding) {
    /* Everything held belongs to the oversized line. */
    f->len = f->scanned = 0;
  } else if (f->len - start > f->max + 1) {
    /* No newline within the limit (a '\r' may still end it): refuse now
     * instead of buffering without bound. */
    cb(ctx, NULL, f->len - start, 1);
    f->discarding = 1;
    f->len = f->scanned = 0;
  } else {
    if (start > 0) {
      memmove(f->buf, f->buf + start, f->len - start);
      f->len -= start;
    }
    f->scanned = f->len;
  }
  if (f->len == 0 && f->cap > FRAMER_KEEP_CAP) {
    free(f->buf);
    f->buf = NULL;
    f->cap = 0;
  }
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
