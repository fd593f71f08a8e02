/* SPDX-License-Identifier: MIT */
/* sha256.c -- SHA-256 and HMAC-SHA256, written from FIPS 180-4 and
 * RFC 2104. */
#include "config.h"

#include <string.h>

#include "sha256.h"

/* The first 32 bits of the fractional parts of the cube roots of the
 * first 64 primes (FIPS 180-4, 4.2.2). */
static const uint32_t round_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, unsigned n) {
  return (x >> n) | (x << (32 - n));
}

static uint32_t load_be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         (uint32_t)p[3];
}

static void store_be32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

static void compress(uint32_t h[8], const unsigned char block[64]) {
  uint32_t w[64], a, b, c, d, e, f, g, k;

  for (int t = 0; t < 16; t++)
    w[t] = load_be32(block + 4 * t);
  for (int t = 16; t < 64; t++) {
    uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  a = h[0], b = h[1], c = h[2], d = h[3];
  e = h[4], f = h[5], g = h[6], k = h[7];
  for (int t = 0; t < 64; t++) {
    uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) +
                  ((e & f) ^ (~e & g)) + round_k[t] + w[t];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) +
                  ((a & b) ^ (a & c) ^ (b & c));
    k = g, g = f, f = e, e = d + t1;
    d = c, c = b, b = a, a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d;
  h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void sha256_init(sha256_ctx *ctx) {
  static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                      0xa54ff53a, 0x510e527f, 0x9b05688c,
                                      0x1f83d9ab, 0x5be0cd19};
  memcpy(ctx->h, initial, sizeof(initial));
  ctx->length = 0;
  ctx->used = 0;
}

void sha256_update(sha256_ctx *ctx, const void *data, size_t len) {
  const unsigned char *p = data;

  ctx->length += len;
  while (len > 0) {
    size_t n = 64 - ctx->used < len ? 64 - ctx->used : len;
    memcpy(ctx->block + ctx->used, p, n);
    ctx->used += n;
    p += n;
    len -= n;
    if (ctx->used == 64) {
      compress(ctx->h, ctx->block);
      ctx->used = 0;
    }
  }
}

void sha256_final(sha256_ctx *ctx, unsigned char out[SHA256_SIZE]) {
  uint64_t bits = ctx->length * 8;

  /* A one bit, zeros up to 56 bytes into a block, the length in bits. */
  ctx->block[ctx->used++] = 0x80;
  if (ctx->used > 56) {
    memset(ctx->block + ctx->used, 0, 64 - ctx->used);
    compress(ctx->h, ctx->block);
    ctx->used = 0;
  }
  memset(ctx->block + ctx->used, 0, 56 - ctx->used);
  store_be32(ctx->block + 56, (uint32_t)(bits >> 32));
  store_be32(ctx->block + 60, (uint32_t)bits);
  compress(ctx->h, ctx->block);
  for (int i = 0; i < 8; i++)
    store_be32(out + 4 * i, ctx->h[i]);
  memset(ctx, 0, sizeof(*ctx));
}

void sha256(const void *data, size_t len, unsigned char out[SHA256_SIZE]) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, data, len);
  sha256_final(&ctx, out);
}

void hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
                 unsigned char out[SHA256_SIZE]) {
  unsigned char k[64] = {0}, pad[64], inner[SHA256_SIZE];
  sha256_ctx ctx;

  /* A key longer than the block is hashed first. */
  if (key_len > sizeof(k))
    sha256(key, key_len, k);
  else if (key_len > 0)
    memcpy(k, key, key_len);
  for (int i = 0; i < 64; i++)
    pad[i] = k[i] ^ 0x36;
  sha256_init(&ctx);
  sha256_update(&ctx, pad, sizeof(pad));
  sha256_update(&ctx, data, len);
  sha256_final(&ctx, inner);
  for (int i = 0; i < 64; i++)
    pad[i] = k[i] ^ 0x5c;
  sha256_init(&ctx);
  sha256_update(&ctx, pad, sizeof(pad));
  sha256_update(&ctx, inner, sizeof(inner));
  sha256_final(&ctx, out);
  memset(k, 0, sizeof(k));
  memset(pad, 0, sizeof(pad));
}

int sha256_equal(const unsigned char *a, const unsigned char *b) {
  unsigned char diff = 0;
  for (int i = 0; i < SHA256_SIZE; i++)
    diff |= a[i] ^ b[i];
  return diff == 0;
}
