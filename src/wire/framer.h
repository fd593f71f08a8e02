/* SPDX-License-Identifier: MIT */
/* framer.h -- newline-delimited message framing.
 *
 * The transport reads straight into the framer's buffer (framer_reserve),
 * then commits what it read; the framer hands up every complete line.  A
 * trailing '\r' is dropped, blank lines are skipped, and a line longer than
 * the maximum is reported once and discarded up to its newline, so the
 * stream survives.  Each byte is scanned once and a partial line is moved at
 * most once per read, so cost stays linear in message size. */
#ifndef MCPD_FRAMER_H
#define MCPD_FRAMER_H

#include <stddef.h>

#include "strbuf.h"

/* `line` is NUL-terminated in place and valid only during the call.  When
 * `oversize` is nonzero, `line` is NULL: a message exceeded the maximum. */
typedef void (*framer_cb)(void *ctx, char *line, size_t len, int oversize);

typedef struct framer {
  strbuf buf;     /* bytes held */
  size_t scanned; /* bytes of buf already known to hold no newline */
  size_t max;     /* largest message accepted, newline excluded */
  int discarding; /* inside an oversized line */
} framer;

void framer_init(framer *f, size_t max);
void framer_free(framer *f);
/* Makes room for at least `want` bytes; returns 0 or -1 (out of memory). */
int framer_reserve(framer *f, size_t want, char **base, size_t *avail);
/* Accounts `n` bytes written at the reserved base and delivers lines. */
void framer_commit(framer *f, size_t n, framer_cb cb, void *ctx);
/* reserve + copy + commit, for callers that hold the bytes elsewhere. */
int framer_feed(framer *f, const char *data, size_t n, framer_cb cb, void *ctx);
/* Bytes of an incomplete message held (0 at a message boundary). */
size_t framer_pending(const framer *f);

#endif
