/* SPDX-License-Identifier: MIT */
/* utf8.h -- UTF-8 for the bundled plugins: validating, cutting on
 * character boundaries, encoding and cleaning (compiled into each through
 * libplugcommon; not part of the SDK).
 *
 * Valid means RFC 3629: no overlong forms, no surrogates (U+D800 to
 * U+DFFF), nothing above U+10FFFF. */
#ifndef MCPD_PLUGIN_COMMON_UTF8_H
#define MCPD_PLUGIN_COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The length (1 to 4) of the valid sequence at s[0..n), n > 0; 0 when it
 * is invalid; -1 when it is a valid start cut short by the end. */
int pc_utf8_sequence(const unsigned char *s, size_t n);

/* Nonzero when `s` is valid UTF-8 with no NUL byte. */
int pc_utf8_is_text(const char *s, size_t n);

/* The length of the longest prefix of `s` (at most n) that does not end
 * inside a valid sequence: a last sequence cut short is left out.  Invalid
 * bytes stay, so that a later check still sees them. */
size_t pc_utf8_cut(const char *s, size_t n);

/* The same, for text that may not be UTF-8 at all: a last byte from 0xC0
 * up followed by fewer continuation bytes than it announces is left out
 * whether or not it could start a valid sequence. */
size_t pc_utf8_cut_loose(const char *s, size_t n);

/* Writes the UTF-8 of code point `cp` (a valid one: below 0x110000 and no
 * surrogate) into out[0..4) and returns its length. */
size_t pc_utf8_encode(uint32_t cp, char out[4]);

/* A copy of `n` bytes as valid UTF-8 with no NUL byte: each byte that is
 * not part of a valid sequence, and each NUL, becomes U+FFFD.  Returns a
 * new NUL-terminated string (malloc) with its length in *out_len, or NULL
 * when out of memory. */
char *pc_utf8_clean(const char *data, size_t n, size_t *out_len);

#endif
