/* SPDX-License-Identifier: MIT */
/* utf8.h -- UTF-8 checks for text that crosses the protocol.
 *
 * Every byte mcpd writes to a client is valid UTF-8: input is checked
 * before it is parsed, text a plugin hands over is repaired, and quoted
 * input is cut on character boundaries. */
#ifndef MCPD_UTF8_H
#define MCPD_UTF8_H

#include <stddef.h>

/* Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing past
 * U+10FFFF. */
int utf8_valid(const char *s, size_t n);
/* A malloc'd copy with every ill-formed byte replaced by U+FFFD, its
 * length in *out_len; NULL when out of memory. */
char *utf8_repair(const char *s, size_t n, size_t *out_len);
/* The longest prefix of s[0..n) no longer than `max` that ends on a
 * character boundary (`s` must be valid UTF-8). */
size_t utf8_cut(const char *s, size_t n, size_t max);

#endif
