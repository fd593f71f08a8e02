/* SPDX-License-Identifier: MIT */
/* base64.h -- base64 for the bundled plugins (compiled into each through
 * libplugcommon; not part of the SDK).  Images and blobs cross MCP as
 * base64 text. */
#ifndef MCPD_PLUGIN_COMMON_BASE64_H
#define MCPD_PLUGIN_COMMON_BASE64_H

#include <stddef.h>

/* The base64 (RFC 4648 section 4: the standard alphabet, padded with '=')
 * of `n` bytes, as a NUL-terminated string (malloc); NULL when out of
 * memory or when the result would not fit in a size_t.  `data` may be NULL
 * when n is 0. */
char *pc_base64_encode(const unsigned char *data, size_t n);

#endif
