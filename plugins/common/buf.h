/* SPDX-License-Identifier: MIT */
/* buf.h -- a growable byte buffer for the bundled plugins (compiled into
 * each through libplugcommon; not part of the SDK).
 *
 * A buffer starts zeroed ({0}).  Appends never fail loudly: when memory
 * runs out, or a size would overflow, the buffer is marked failed and every
 * later append does nothing, so a caller builds a whole text and checks
 * `failed` once at the end. */
#ifndef MCPD_PLUGIN_COMMON_BUF_H
#define MCPD_PLUGIN_COMMON_BUF_H

#include <stddef.h>

#include <mcpd.h>

struct pc_buf {
  char *data; /* NUL-terminated while not failed; NULL until the first
               * append */
  size_t len;
  size_t cap;
  int failed; /* out of memory: every later append is a no-op */
};

void pc_buf_append(struct pc_buf *b, const char *s, size_t n);
void pc_buf_putc(struct pc_buf *b, char c);
void pc_buf_puts(struct pc_buf *b, const char *s);
/* A printf(3) format that cannot be formatted also marks the buffer
 * failed. */
void pc_buf_printf(struct pc_buf *b, const char *fmt, ...) MCPD_PRINTF(2, 3);
/* Frees the data and zeroes the buffer, which is then empty and usable
 * again. */
void pc_buf_free(struct pc_buf *b);

#endif
