/* SPDX-License-Identifier: MIT */
/* base64.h -- strict RFC 4648 base64 and base64url.
 *
 * One decoder for the three places that read it: Mcp-Param-* header
 * values ("=?base64?...?=", standard alphabet, padded), JWS and JWK
 * fields (base64url without padding) and requestState (the same).  Each
 * accepts exactly one spelling of a byte string: a character outside the
 * alphabet, misplaced or missing padding, a length no encoding has, or
 * leftover bits that are not zero make the input invalid. */
#ifndef MCPD_BASE64_H
#define MCPD_BASE64_H

#include <stddef.h>

#include "strbuf.h"

/* Appends `len` bytes as base64url without padding. */
void base64url_encode(strbuf *out, const unsigned char *p, size_t len);
/* Appends what `n` characters of unpadded base64url decode to; returns
 * 0, or -1 when they are not valid (or memory ran out: out->failed). */
int base64url_decode(const char *s, size_t n, strbuf *out);
/* base64url_decode() into a new buffer (free() it) with a NUL after the
 * `*len` bytes, for parsers that want a C string; NULL when invalid. */
unsigned char *base64url_decode_alloc(const char *s, size_t n, size_t *len);
/* The same as base64url_decode() for the standard alphabet with its "="
 * padding. */
int base64_decode(const char *s, size_t n, strbuf *out);

#endif
