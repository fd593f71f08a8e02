/* SPDX-License-Identifier: MIT */
/* sha256.h -- SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), small and
 * self-contained: the stdio server signs requestState with them and must
 * not link libcrypto (see doc/architecture.md, server_http). */
#ifndef MCPD_SHA256_H
#define MCPD_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_SIZE 32

typedef struct sha256_ctx {
  uint32_t h[8];
  uint64_t length; /* bytes hashed so far */
  unsigned char block[64];
  size_t used; /* bytes waiting in block */
} sha256_ctx;

void sha256_init(sha256_ctx *ctx);
void sha256_update(sha256_ctx *ctx, const void *data, size_t len);
void sha256_final(sha256_ctx *ctx, unsigned char out[SHA256_SIZE]);
/* The digest of one buffer. */
void sha256(const void *data, size_t len, unsigned char out[SHA256_SIZE]);
/* HMAC-SHA256 of `data` under `key` (any length). */
void hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
                 unsigned char out[SHA256_SIZE]);
/* Compares two digests in time that does not depend on where they
 * differ; returns nonzero when equal. */
int sha256_equal(const unsigned char *a, const unsigned char *b);

#endif
