/* SPDX-License-Identifier: MIT */
/* auth.c -- bearer tokens for the HTTP transport: static tokens and JWT
 * access tokens, and the RFC 9728 metadata that tells clients where to get
 * one.  See auth.h.
 *
 * Signatures are checked with OpenSSL's EVP interface against keys built
 * once, at start, from the JWKS file.  We do not hand tokens to a JWT
 * library: libjwt 1.10 refuses any `typ` but "JWT", so it would turn away
 * RFC 9068 access tokens ("at+jwt"), and it verifies HS256 with whatever
 * key it is given, public PEM text included.  The header is parsed and
 * checked here, before any key is touched, and only a fixed list of
 * asymmetric algorithms can reach the verifier. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "auth.h"
#include "base64.h"
#include "log.h"
#include "strbuf.h"

/* Clock skew tolerated between us and the authorization server. */
#define AUTH_LEEWAY_S 60
/* Longer Authorization values are refused unread. */
#define AUTH_MAX_TOKEN 16384
/* Token and JWKS files larger than this are refused. */
#define AUTH_MAX_FILE (1024 * 1024)
/* RSA keys below this size are skipped (RFC 7518 §3.3 requires 2048). */
#define AUTH_MIN_RSA_BITS 2048
/* NumericDate claims beyond this many seconds from 1970 are malformed. */
#define MAX_NUMERIC_DATE INT64_C(1000000000000000)

/* The reasons auth_verify() gives.  auth_challenge() names only these, so
 * nothing a client sent can reach a response header through `why`. */
static const char reason_missing[] = "missing bearer token";
static const char reason_invalid[] = "invalid token";
static const char reason_alg[] = "token algorithm not accepted";
static const char reason_key[] = "unknown signing key";
static const char reason_signature[] = "invalid token signature";
static const char reason_no_exp[] = "token has no expiry";
static const char reason_expired[] = "token expired";
static const char reason_not_yet[] = "token not yet valid";
static const char reason_issuer[] = "token issuer not accepted";
static const char reason_audience[] =
    "token audience does not include this resource";

static const char *const reasons[] = {reason_missing,
                                      reason_invalid,
                                      reason_alg,
                                      reason_key,
                                      reason_signature,
                                      reason_no_exp,
                                      reason_expired,
                                      reason_not_yet,
                                      reason_issuer,
                                      reason_audience,
                                      NULL};

typedef enum key_kind { KEY_RSA, KEY_P256, KEY_P384 } key_kind;

/* The JWS algorithms we accept (RFC 7518 §3.1): asymmetric only, since a
 * resource server must never hold the secret that mints tokens. */
typedef struct jws_alg {
  const char *name;
  const char *digest; /* an OpenSSL digest name */
  key_kind kind;
  size_t ec_half; /* bytes of R and of S in an ECDSA signature; 0 for RSA */
} jws_alg;

static const jws_alg algs[] = {
    {"RS256", "SHA256", KEY_RSA, 0},   {"RS384", "SHA384", KEY_RSA, 0},
    {"RS512", "SHA512", KEY_RSA, 0},   {"ES256", "SHA256", KEY_P256, 32},
    {"ES384", "SHA384", KEY_P384, 48}, {NULL, NULL, KEY_RSA, 0}};

static const jws_alg *alg_find(const char *name) {
  for (const jws_alg *g = algs; g->name != NULL; g++)
    if (strcmp(g->name, name) == 0)
      return g;
  return NULL;
}

typedef struct auth_key {
  char *kid;          /* NULL when the JWK has none */
  key_kind kind;      /* RSA, or EC on one curve */
  const jws_alg *alg; /* the JWK's "alg", which binds it; NULL for any */
  EVP_PKEY *pkey;     /* the public key */
} auth_key;

struct auth {
  /* Static tokens, kept only as SHA-256 digests. */
  unsigned char (*digests)[32];
  size_t n_digests;
  /* JWT: all three or none. */
  char *issuer;
  char *audience;
  auth_key *keys;
  size_t n_keys;
  /* RFC 9728. */
  char *resource;
  char *metadata_url;
  char *metadata_path; /* the path-suffixed one (or the bare one) */
  char *metadata;
  size_t metadata_len;
};

/* ---- small helpers ---- */

static int is_ws(char c) {
  return c == ' ' || c == '\t';
}

/* RFC 6750 §2.1 b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+"
 * / "/" ) *"=". */
static int is_b64token(const char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    char c = s[i];
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
        (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
        c == '~' || c == '+' || c == '/')
      i++;
    else
      break;
  }
  if (i == 0)
    return 0;
  while (i < n && s[i] == '=')
    i++;
  return i == n;
}

/* Parses `n` bytes as exactly one JSON object, or returns NULL. */
static json_object *parse_object(const unsigned char *text, size_t n) {
  json_tokener *tok;
  json_object *obj;

  /* json-c would stop at a NUL; such text is not ours to guess about. */
  if (n == 0 || n > INT32_MAX || memchr(text, '\0', n) != NULL)
    return NULL;
  tok = json_tokener_new_ex(16);
  if (tok == NULL)
    return NULL;
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  obj = json_tokener_parse_ex(tok, (const char *)text, (int)n);
  if (obj != NULL && (json_tokener_get_error(tok) != json_tokener_success ||
                      json_tokener_get_parse_end(tok) != n ||
                      !json_object_is_type(obj, json_type_object))) {
    json_object_put(obj);
    obj = NULL;
  }
  json_tokener_free(tok);
  return obj;
}

/* The string member `key` of `obj`: 1 with *out set, 0 when absent, -1
 * when present but not a string. */
static int get_string(json_object *obj, const char *key, const char **out) {
  json_object *v;
  if (!json_object_object_get_ex(obj, key, &v))
    return 0;
  if (!json_object_is_type(v, json_type_string))
    return -1;
  *out = json_object_get_string(v);
  return 1;
}

/* Reads the whole regular file at `path` (at most AUTH_MAX_FILE bytes)
 * into a NUL-terminated buffer.  `what` names the option in errors. */
static char *read_file(const char *path, const char *what, size_t *len,
                       struct stat *st) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  char *buf = NULL;
  size_t got = 0;

  if (fd < 0) {
    log_error("%s %s: %s", what, path, strerror(errno));
    return NULL;
  }
  if (fstat(fd, st) != 0) {
    log_error("%s %s: %s", what, path, strerror(errno));
    goto fail;
  }
  if (!S_ISREG(st->st_mode)) {
    log_error("%s %s: not a regular file", what, path);
    goto fail;
  }
  if (st->st_size > AUTH_MAX_FILE) {
    log_error("%s %s: larger than %d bytes", what, path, AUTH_MAX_FILE);
    goto fail;
  }
  buf = malloc((size_t)st->st_size + 1);
  if (buf == NULL) {
    log_error("%s %s: out of memory", what, path);
    goto fail;
  }
  while (got < (size_t)st->st_size) {
    ssize_t r = read(fd, buf + got, (size_t)st->st_size - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      log_error("%s %s: %s", what, path, strerror(errno));
      goto fail;
    }
    if (r == 0)
      break; /* the file shrank; take what is there */
    got += (size_t)r;
  }
  buf[got] = '\0';
  *len = got;
  close(fd);
  return buf;
fail:
  if (buf != NULL) {
    OPENSSL_cleanse(buf, got);
    free(buf);
  }
  close(fd);
  return NULL;
}

static int sha256(const void *data, size_t n, unsigned char out[32]) {
  unsigned int len = 0;
  return EVP_Digest(data, n, out, &len, EVP_sha256(), NULL) == 1 && len == 32
             ? 0
             : -1;
}

/* ---- static tokens ---- */

static int load_token_file(auth *a, const char *path) {
  const char *what = "--auth-token-file";
  struct stat st;
  size_t len, line_no = 0, cap = 0;
  char *text = read_file(path, what, &len, &st);
  char *line, *next;
  int rc = -1;

  if (text == NULL)
    return -1;
  if (memchr(text, '\0', len) != NULL) {
    log_error("%s %s: holds a NUL byte; it must be text", what, path);
    goto done;
  }
  if ((st.st_mode & (S_IRGRP | S_IROTH)) != 0)
    log_warn("%s %s: other users can read it (mode %03o); chmod 600 it", what,
             path, (unsigned)(st.st_mode & 0777));

  for (line = text; line != NULL && *line != '\0'; line = next) {
    char *end;
    next = strchr(line, '\n');
    end = next != NULL ? next : line + strlen(line);
    if (next != NULL)
      next++;
    line_no++;
    while (line < end && (is_ws(*line) || *line == '\r'))
      line++;
    while (end > line && (is_ws(end[-1]) || end[-1] == '\r'))
      end--;
    if (line == end || *line == '#')
      continue;
    /* A token outside the RFC 6750 syntax could never be presented. */
    if (!is_b64token(line, (size_t)(end - line))) {
      log_error("%s %s: line %zu is not a bearer token (RFC 6750 allows "
                "letters, digits, -._~+/ and a tail of =)",
                what, path, line_no);
      goto done;
    }
    if ((size_t)(end - line) < 16)
      log_warn("%s %s: the token on line %zu is shorter than 16 characters "
               "and easy to guess",
               what, path, line_no);
    if (a->n_digests == cap) {
      size_t ncap = cap ? cap * 2 : 4;
      void *d = realloc(a->digests, ncap * sizeof(*a->digests));
      if (d == NULL) {
        log_error("%s %s: out of memory", what, path);
        goto done;
      }
      a->digests = d;
      cap = ncap;
    }
    if (sha256(line, (size_t)(end - line), a->digests[a->n_digests]) != 0) {
      log_error("%s %s: SHA-256 failed", what, path);
      goto done;
    }
    a->n_digests++;
  }
  if (a->n_digests == 0) {
    log_error("%s %s: holds no token (one per line; blank lines and # "
              "comments are ignored)",
              what, path);
    goto done;
  }
  rc = 0;
done:
  OPENSSL_cleanse(text, len);
  free(text);
  return rc;
}

/* Whether the token is one of the static ones.  Every configured digest
 * is compared, with no early exit and in constant time, and only digests
 * are compared, so neither the content nor the length of a configured
 * token shows in the timing. */
/* Which configured token `tok` is, counting from 1, or 0 for none.  Every
 * digest is compared, and the index is kept without a branch on the
 * outcome. */
static size_t static_match(const auth *a, const char *tok, size_t n) {
  unsigned char d[32];
  size_t found = 0;

  if (sha256(tok, n, d) != 0)
    return 0;
  for (size_t i = 0; i < a->n_digests; i++) {
    size_t equal = (size_t)(CRYPTO_memcmp(d, a->digests[i], sizeof(d)) == 0);
    found |= ((size_t)0 - equal) & (i + 1);
  }
  OPENSSL_cleanse(d, sizeof(d));
  return found;
}

/* ---- JWKS ---- */

/* Decodes base64url member `key` of a JWK into a big number. */
static BIGNUM *jwk_bignum(json_object *jwk, const char *key) {
  const char *s;
  unsigned char *bytes;
  size_t n;
  BIGNUM *bn;

  if (get_string(jwk, key, &s) != 1)
    return NULL;
  bytes = base64url_decode_alloc(s, strlen(s), &n);
  if (bytes == NULL || n == 0) {
    free(bytes);
    return NULL;
  }
  bn = BN_bin2bn(bytes, (int)n, NULL);
  free(bytes);
  return bn;
}

/* Builds a public key from OSSL_PARAMs and checks it.  Returns NULL and
 * sets *err when OpenSSL refuses it. */
static EVP_PKEY *pkey_from_params(const char *type, OSSL_PARAM_BLD *bld,
                                  const char **err) {
  OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
  EVP_PKEY_CTX *ctx = NULL, *check = NULL;
  EVP_PKEY *pkey = NULL;

  *err = "out of memory";
  if (params == NULL)
    goto done;
  ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
  if (ctx == NULL)
    goto done;
  *err = "OpenSSL refused the key";
  if (EVP_PKEY_fromdata_init(ctx) != 1 ||
      EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1)
    goto done;
  /* For EC this is where a point off the curve is caught. */
  check = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
  if (check == NULL || EVP_PKEY_public_check(check) != 1) {
    *err = "the public key fails OpenSSL's checks";
    EVP_PKEY_free(pkey);
    pkey = NULL;
  }
done:
  EVP_PKEY_CTX_free(check);
  EVP_PKEY_CTX_free(ctx);
  OSSL_PARAM_free(params);
  ERR_clear_error();
  return pkey;
}

static EVP_PKEY *jwk_rsa(json_object *jwk, const char **err) {
  BIGNUM *n = jwk_bignum(jwk, "n"), *e = jwk_bignum(jwk, "e");
  OSSL_PARAM_BLD *bld = NULL;
  EVP_PKEY *pkey = NULL;

  *err = "\"n\" and \"e\" must be base64url numbers";
  if (n == NULL || e == NULL)
    goto done;
  if (BN_num_bits(n) < AUTH_MIN_RSA_BITS) {
    *err = "RSA keys must have at least 2048 bits";
    goto done;
  }
  *err = "out of memory";
  bld = OSSL_PARAM_BLD_new();
  if (bld == NULL || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) ||
      !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e))
    goto done;
  pkey = pkey_from_params("RSA", bld, err);
done:
  OSSL_PARAM_BLD_free(bld);
  BN_free(n);
  BN_free(e);
  return pkey;
}

static EVP_PKEY *jwk_ec(json_object *jwk, key_kind *kind, const char **err) {
  const char *crv, *x, *y, *group;
  unsigned char *xb = NULL, *yb = NULL, pub[1 + 2 * 48];
  size_t xn = 0, yn = 0, half;
  OSSL_PARAM_BLD *bld = NULL;
  EVP_PKEY *pkey = NULL;

  *err = "\"crv\" must be P-256 or P-384";
  if (get_string(jwk, "crv", &crv) != 1)
    return NULL;
  if (strcmp(crv, "P-256") == 0) {
    *kind = KEY_P256;
    group = "prime256v1";
    half = 32;
  } else if (strcmp(crv, "P-384") == 0) {
    *kind = KEY_P384;
    group = "secp384r1";
    half = 48;
  } else {
    return NULL;
  }
  *err = "\"x\" and \"y\" must be base64url coordinates of the curve's size";
  if (get_string(jwk, "x", &x) != 1 || get_string(jwk, "y", &y) != 1)
    return NULL;
  xb = base64url_decode_alloc(x, strlen(x), &xn);
  yb = base64url_decode_alloc(y, strlen(y), &yn);
  /* RFC 7518 §6.2.1.2: the full size, leading zeros kept. */
  if (xb == NULL || yb == NULL || xn != half || yn != half)
    goto done;
  pub[0] = 0x04; /* uncompressed point */
  memcpy(pub + 1, xb, half);
  memcpy(pub + 1 + half, yb, half);
  *err = "out of memory";
  bld = OSSL_PARAM_BLD_new();
  if (bld == NULL ||
      !OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, group,
                                       0) ||
      !OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub,
                                        1 + 2 * half))
    goto done;
  pkey = pkey_from_params("EC", bld, err);
done:
  OSSL_PARAM_BLD_free(bld);
  free(xb);
  free(yb);
  return pkey;
}

/* Whether a key of `kind` can verify `alg`. */
static int kind_fits(key_kind kind, const jws_alg *alg) {
  return alg->kind == kind;
}

/* Reads JWK number `i` into a->keys.  Returns 0 when it was added or
 * skipped with a warning, -1 on a fatal error (out of memory). */
static int add_jwk(auth *a, const char *path, size_t i, json_object *jwk) {
  const char *kty, *use, *alg_name, *kid = NULL, *err = NULL;
  json_object *ops;
  auth_key k = {0};

  if (!json_object_is_type(jwk, json_type_object)) {
    err = "not a JSON object";
    goto skip;
  }
  if (get_string(jwk, "kid", &kid) < 0) {
    err = "\"kid\" is not a string";
    goto skip;
  }
  if (get_string(jwk, "use", &use) == 1 && strcmp(use, "sig") != 0) {
    err = "its \"use\" is not \"sig\"";
    goto skip;
  }
  if (json_object_object_get_ex(jwk, "key_ops", &ops)) {
    int verify = 0;
    if (json_object_is_type(ops, json_type_array))
      for (size_t j = 0; j < json_object_array_length(ops); j++) {
        json_object *op = json_object_array_get_idx(ops, j);
        verify |= json_object_is_type(op, json_type_string) &&
                  strcmp(json_object_get_string(op), "verify") == 0;
      }
    if (!verify) {
      err = "its \"key_ops\" lack \"verify\"";
      goto skip;
    }
  }
  switch (get_string(jwk, "alg", &alg_name)) {
  case 1:
    if ((k.alg = alg_find(alg_name)) == NULL) {
      err = "its \"alg\" is not RS256, RS384, RS512, ES256 or ES384";
      goto skip;
    }
    break;
  case -1:
    err = "\"alg\" is not a string";
    goto skip;
  default:
    break;
  }
  if (get_string(jwk, "kty", &kty) != 1) {
    err = "it has no \"kty\"";
    goto skip;
  }
  if (strcmp(kty, "RSA") == 0) {
    k.kind = KEY_RSA;
    k.pkey = jwk_rsa(jwk, &err);
  } else if (strcmp(kty, "EC") == 0) {
    k.pkey = jwk_ec(jwk, &k.kind, &err);
  } else {
    err = "its \"kty\" is not RSA or EC";
  }
  if (k.pkey == NULL)
    goto skip;
  if (k.alg != NULL && !kind_fits(k.kind, k.alg)) {
    err = "its \"alg\" does not fit the key type";
    goto skip;
  }
  if (json_object_object_get_ex(jwk, "d", NULL))
    log_warn("--auth-jwks %s: key %zu holds private key material; only its "
             "public part is used, and the file should not hold the rest",
             path, i);
  if (kid != NULL && (k.kid = strdup(kid)) == NULL)
    goto oom;
  {
    auth_key *keys = realloc(a->keys, (a->n_keys + 1) * sizeof(*keys));
    if (keys == NULL)
      goto oom;
    a->keys = keys;
    keys[a->n_keys++] = k;
  }
  return 0;
skip:
  log_warn("--auth-jwks %s: key %zu%s%s%s skipped: %s", path, i,
           kid ? " (kid \"" : "", kid ? kid : "", kid ? "\")" : "", err);
  EVP_PKEY_free(k.pkey);
  return 0;
oom:
  log_error("--auth-jwks %s: out of memory", path);
  free(k.kid);
  EVP_PKEY_free(k.pkey);
  return -1;
}

static int load_jwks(auth *a, const char *path) {
  struct stat st;
  size_t len;
  char *text = read_file(path, "--auth-jwks", &len, &st);
  json_object *root, *keys;
  int rc = -1;

  if (text == NULL)
    return -1;
  root = parse_object((const unsigned char *)text, len);
  free(text);
  if (root == NULL) {
    log_error("--auth-jwks %s: not a JSON object", path);
    return -1;
  }
  if (!json_object_object_get_ex(root, "keys", &keys) ||
      !json_object_is_type(keys, json_type_array)) {
    log_error("--auth-jwks %s: a JWK set has a \"keys\" array (RFC 7517 §5)",
              path);
    goto done;
  }
  for (size_t i = 0; i < json_object_array_length(keys); i++)
    if (add_jwk(a, path, i, json_object_array_get_idx(keys, i)) != 0)
      goto done;
  if (a->n_keys == 0) {
    log_error("--auth-jwks %s: no usable key (RSA of 2048 bits or more, or "
              "EC on P-256 or P-384, for signatures)",
              path);
    goto done;
  }
  rc = 0;
done:
  json_object_put(root);
  return rc;
}

/* ---- JWT ---- */

/* Checks the JWS signature over `input` with key `k`. */
static int signature_ok(const auth_key *k, const jws_alg *alg,
                        const char *input, size_t input_len,
                        const unsigned char *sig, size_t sig_len) {
  EVP_MD_CTX *md = EVP_MD_CTX_new();
  unsigned char *der = NULL;
  int ok = 0;

  if (md == NULL)
    goto done;
  if (alg->ec_half != 0) {
    /* JWS carries R and S side by side (RFC 7518 §3.4); OpenSSL wants the
     * DER form. */
    ECDSA_SIG *es;
    BIGNUM *r, *s;
    int der_len;
    if (sig_len != 2 * alg->ec_half)
      goto done;
    es = ECDSA_SIG_new();
    r = BN_bin2bn(sig, (int)alg->ec_half, NULL);
    s = BN_bin2bn(sig + alg->ec_half, (int)alg->ec_half, NULL);
    if (es == NULL || r == NULL || s == NULL || !ECDSA_SIG_set0(es, r, s)) {
      BN_free(r);
      BN_free(s);
      ECDSA_SIG_free(es);
      goto done;
    }
    der_len = i2d_ECDSA_SIG(es, &der);
    ECDSA_SIG_free(es);
    if (der_len <= 0)
      goto done;
    sig = der;
    sig_len = (size_t)der_len;
  }
  if (EVP_DigestVerifyInit_ex(md, NULL, alg->digest, NULL, NULL, k->pkey,
                              NULL) != 1)
    goto done;
  ok = EVP_DigestVerify(md, sig, sig_len, (const unsigned char *)input,
                        input_len) == 1;
done:
  OPENSSL_free(der);
  EVP_MD_CTX_free(md);
  ERR_clear_error();
  return ok;
}

/* A NumericDate claim: 1 with *out set, 0 when absent, -1 when malformed.
 * RFC 7519 allows fractions; they are dropped. */
static int numeric_date(json_object *claims, const char *name, int64_t *out) {
  json_object *v;
  if (!json_object_object_get_ex(claims, name, &v))
    return 0;
  /* The bound keeps `t + AUTH_LEEWAY_S` far from overflow; it is some 30
   * million years away. */
  if (json_object_is_type(v, json_type_int)) {
    int64_t i = json_object_get_int64(v);
    if (i <= -MAX_NUMERIC_DATE || i >= MAX_NUMERIC_DATE)
      return -1;
    *out = i;
    return 1;
  }
  if (json_object_is_type(v, json_type_double)) {
    double d = json_object_get_double(v);
    if (!(d > -MAX_NUMERIC_DATE && d < MAX_NUMERIC_DATE))
      return -1;
    *out = (int64_t)d;
    return 1;
  }
  return -1;
}

static int audience_ok(const auth *a, json_object *claims) {
  json_object *aud;
  if (!json_object_object_get_ex(claims, "aud", &aud))
    return 0;
  if (json_object_is_type(aud, json_type_string))
    return strcmp(json_object_get_string(aud), a->audience) == 0;
  if (json_object_is_type(aud, json_type_array))
    for (size_t i = 0; i < json_object_array_length(aud); i++) {
      json_object *e = json_object_array_get_idx(aud, i);
      if (json_object_is_type(e, json_type_string) &&
          strcmp(json_object_get_string(e), a->audience) == 0)
        return 1;
    }
  return 0;
}

static const char *check_claims(const auth *a, json_object *claims) {
  int64_t now = (int64_t)time(NULL), t;
  const char *iss;

  if (numeric_date(claims, "exp", &t) != 1)
    return reason_no_exp;
  if (now >= t + AUTH_LEEWAY_S)
    return reason_expired;
  switch (numeric_date(claims, "nbf", &t)) {
  case -1:
    return reason_invalid;
  case 1:
    if (now + AUTH_LEEWAY_S < t)
      return reason_not_yet;
  }
  switch (numeric_date(claims, "iat", &t)) {
  case -1:
    return reason_invalid;
  case 1:
    if (now + AUTH_LEEWAY_S < t)
      return reason_not_yet;
  }
  if (get_string(claims, "iss", &iss) != 1 || strcmp(iss, a->issuer) != 0)
    return reason_issuer;
  if (!audience_ok(a, claims))
    return reason_audience;
  return NULL;
}

/* Verifies a compact JWS token and its claims; NULL when valid, else the
 * reason.  Only the header, the key list and the configured values decide
 * which key is tried: header parameters that point at keys elsewhere
 * ("jku", "jwk", "x5u", "x5c") are ignored, never fetched or trusted. */
static const char *verify_jwt(const auth *a, const char *tok, size_t n,
                              char *who, size_t who_size) {
  const char *dot1 = memchr(tok, '.', n), *dot2, *why = reason_invalid;
  const char *alg_name, *kid = NULL;
  unsigned char *head_text = NULL, *body_text = NULL, *sig = NULL;
  size_t head_len, body_len, sig_len;
  json_object *head = NULL, *body = NULL;
  const jws_alg *alg;
  size_t tried = 0;
  int verified = 0;

  if (dot1 == NULL)
    return reason_invalid;
  dot2 = memchr(dot1 + 1, '.', n - (size_t)(dot1 + 1 - tok));
  if (dot2 == NULL || memchr(dot2 + 1, '.', n - (size_t)(dot2 + 1 - tok)))
    return reason_invalid;

  head_text = base64url_decode_alloc(tok, (size_t)(dot1 - tok), &head_len);
  if (head_text == NULL || (head = parse_object(head_text, head_len)) == NULL)
    goto done;
  if (get_string(head, "alg", &alg_name) != 1)
    goto done;
  /* "none" and every HS* fall out here, before any key is looked at. */
  if ((alg = alg_find(alg_name)) == NULL) {
    why = reason_alg;
    goto done;
  }
  /* We understand no extension, so RFC 7515 §4.1.11 says refuse. */
  if (json_object_object_get_ex(head, "crit", NULL))
    goto done;
  if (get_string(head, "kid", &kid) < 0)
    goto done;

  sig =
      base64url_decode_alloc(dot2 + 1, n - (size_t)(dot2 + 1 - tok), &sig_len);
  if (sig == NULL || sig_len == 0)
    goto done;
  for (size_t i = 0; i < a->n_keys && !verified; i++) {
    const auth_key *k = &a->keys[i];
    if (kid != NULL && (k->kid == NULL || strcmp(k->kid, kid) != 0))
      continue;
    if (!kind_fits(k->kind, alg) || (k->alg != NULL && k->alg != alg))
      continue;
    tried++;
    verified = signature_ok(k, alg, tok, (size_t)(dot2 - tok), sig, sig_len);
  }
  if (!verified) {
    why = tried == 0 ? reason_key : reason_signature;
    goto done;
  }

  /* The signature covers the encoded text, so what we decode here is what
   * the issuer signed. */
  body_text =
      base64url_decode_alloc(dot1 + 1, (size_t)(dot2 - dot1 - 1), &body_len);
  if (body_text == NULL || (body = parse_object(body_text, body_len)) == NULL)
    goto done;
  why = check_claims(a, body);
  if (why == NULL && who != NULL) {
    /* The subject names the client across token refreshes; a token
     * without one stands for itself. */
    const char *sub;
    if (get_string(body, "sub", &sub) == 1 && strlen(sub) < who_size - 5) {
      snprintf(who, who_size, "sub:%s", sub);
    } else {
      unsigned char d[32];
      size_t k = 0;
      if (sha256(tok, n, d) == 0)
        for (k = 0; k < sizeof(d) && 2 * k + 8 < who_size; k++)
          snprintf(who + 2 * k, who_size - 2 * k, "%02x", d[k]);
      who[2 * k] = '\0';
    }
  }
done:
  json_object_put(head);
  json_object_put(body);
  free(head_text);
  free(body_text);
  free(sig);
  return why;
}

/* ---- resource URL and metadata ---- */

/* Checks the resource URL and finds where its path starts.  RFC 9728 §1.2
 * and RFC 8707 §2: an absolute URL without a fragment; we refuse a query
 * too, and anything that would need quoting in a header. */
static int resource_parse(const char *url, const char *what, size_t *path_at) {
  size_t n = strlen(url), host;
  const char *slash;

  if (strncmp(url, "https://", 8) == 0)
    host = 8;
  else if (strncmp(url, "http://", 7) == 0)
    host = 7;
  else {
    log_error("%s \"%s\": must start with https:// (or http://)", what, url);
    return -1;
  }
  if (n > AUTH_MAX_RESOURCE_URL) {
    log_error("%s: longer than %d characters", what, AUTH_MAX_RESOURCE_URL);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)url[i];
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' ||
        c == '>') {
      log_error("%s \"%s\": character %zu is not allowed in a URL", what, url,
                i + 1);
      return -1;
    }
    if (c == '#' || c == '?') {
      log_error("%s \"%s\": a resource URL has no %s", what, url,
                c == '#' ? "fragment" : "query");
      return -1;
    }
  }
  slash = strchr(url + host, '/');
  *path_at = slash != NULL ? (size_t)(slash - url) : n;
  if (*path_at == host) {
    log_error("%s \"%s\": no host", what, url);
    return -1;
  }
  return 0;
}

static char *concat(const char *a, size_t an, const char *b) {
  size_t bn = strlen(b);
  char *s = malloc(an + bn + 1);
  if (s == NULL)
    return NULL;
  memcpy(s, a, an);
  memcpy(s + an, b, bn + 1);
  return s;
}

static int build_metadata(auth *a, const char *url_option) {
  size_t path_at;
  const char *path;
  strbuf b = {0};

  if (resource_parse(a->resource, url_option, &path_at) != 0)
    return -1;
  /* RFC 9728 §3.1: the well-known segment goes between the host and the
   * path, with a lone "/" path dropped.  We answer 401s with this
   * path-suffixed form: the MCP spec (2025-06-18 on) has clients use the
   * resource_metadata URL of the challenge as given, and when they probe
   * on their own, the TypeScript SDK tries the path-suffixed URL first and
   * the bare one after a 404 -- so both paths are served. */
  path = a->resource + path_at;
  if (strcmp(path, "/") == 0)
    path = "";
  a->metadata_path =
      concat(AUTH_METADATA_PATH, strlen(AUTH_METADATA_PATH), path);
  a->metadata_url = a->metadata_path == NULL
                        ? NULL
                        : concat(a->resource, path_at, a->metadata_path);
  if (a->metadata_url == NULL)
    goto oom;

  /* RFC 9728 §2.  Without JWT, tokens come from outside OAuth, so there is
   * no authorization server to name. */
  strbuf_puts(&b, "{\"resource\":");
  strbuf_json_string(&b, a->resource, strlen(a->resource));
  if (a->issuer != NULL) {
    strbuf_puts(&b, ",\"authorization_servers\":[");
    strbuf_json_string(&b, a->issuer, strlen(a->issuer));
    strbuf_puts(&b, "]");
  }
  strbuf_puts(&b, ",\"bearer_methods_supported\":[\"header\"]"
                  ",\"resource_name\":\"mcpd\"}");
  if (b.failed) {
    strbuf_free(&b);
    goto oom;
  }
  a->metadata = b.data;
  a->metadata_len = b.len;
  return 0;
oom:
  log_error("auth: out of memory");
  return -1;
}

/* ---- the API ---- */

int auth_new(const auth_settings *o, const char *default_resource_url,
             auth **out) {
  int jwt_parts = (o->auth_jwt_issuer != NULL) +
                  (o->auth_jwt_audience != NULL) + (o->auth_jwks != NULL);
  auth *a;

  *out = NULL;
  if (o->auth_token_file == NULL && jwt_parts == 0) {
    if (o->resource_url != NULL)
      log_warn("--resource-url is set but no token source is: the endpoint "
               "is open to anyone who can reach it");
    return 0;
  }
  if (jwt_parts != 0 && jwt_parts != 3) {
    log_error("--auth-jwt-issuer, --auth-jwt-audience and --auth-jwks go "
              "together; %s%s%s missing",
              o->auth_jwt_issuer ? "" : "--auth-jwt-issuer ",
              o->auth_jwt_audience ? "" : "--auth-jwt-audience ",
              o->auth_jwks ? "" : "--auth-jwks ");
    return -1;
  }
  if (o->resource_url == NULL && default_resource_url == NULL) {
    log_error("auth: no resource URL; set --resource-url");
    return -1;
  }
  a = calloc(1, sizeof(*a));
  if (a == NULL) {
    log_error("auth: out of memory");
    return -1;
  }
  a->resource =
      strdup(o->resource_url ? o->resource_url : default_resource_url);
  if (a->resource == NULL) {
    log_error("auth: out of memory");
    goto fail;
  }
  if (o->auth_token_file != NULL && load_token_file(a, o->auth_token_file) != 0)
    goto fail;
  if (jwt_parts == 3) {
    if (o->auth_jwt_issuer[0] == '\0' || o->auth_jwt_audience[0] == '\0') {
      log_error("--auth-jwt-issuer and --auth-jwt-audience must not be empty");
      goto fail;
    }
    a->issuer = strdup(o->auth_jwt_issuer);
    a->audience = strdup(o->auth_jwt_audience);
    if (a->issuer == NULL || a->audience == NULL) {
      log_error("auth: out of memory");
      goto fail;
    }
    if (load_jwks(a, o->auth_jwks) != 0)
      goto fail;
  }
  if (build_metadata(a, o->resource_url ? "--resource-url"
                                        : "the default resource URL") != 0)
    goto fail;
  *out = a;
  return 0;
fail:
  auth_free(a);
  return -1;
}

void auth_free(auth *a) {
  if (a == NULL)
    return;
  if (a->digests != NULL)
    OPENSSL_cleanse(a->digests, a->n_digests * sizeof(*a->digests));
  free(a->digests);
  for (size_t i = 0; i < a->n_keys; i++) {
    free(a->keys[i].kid);
    EVP_PKEY_free(a->keys[i].pkey);
  }
  free(a->keys);
  free(a->issuer);
  free(a->audience);
  free(a->resource);
  free(a->metadata_url);
  free(a->metadata_path);
  free(a->metadata);
  free(a);
}

int auth_verify(const auth *a, const char *authorization, const char **why) {
  return auth_verify_who(a, authorization, why, NULL, 0);
}

int auth_verify_who(const auth *a, const char *authorization, const char **why,
                    char *who, size_t who_size) {
  const char *s = authorization, *tok;
  size_t n, which;

  *why = reason_missing;
  if (s == NULL)
    return -1;
  while (is_ws(*s))
    s++;
  /* Another scheme (Basic, ...) is no bearer token at all. */
  if (strncasecmp(s, "Bearer", 6) != 0 || (s[6] != '\0' && !is_ws(s[6])))
    return -1;
  tok = s + 6;
  while (is_ws(*tok))
    tok++;
  n = strlen(tok);
  while (n > 0 && is_ws(tok[n - 1]))
    n--;
  if (n == 0)
    return -1;
  *why = reason_invalid;
  if (n > AUTH_MAX_TOKEN || !is_b64token(tok, n))
    return -1;
  if (a->n_digests > 0 && (which = static_match(a, tok, n)) > 0) {
    if (who != NULL)
      snprintf(who, who_size, "token:%zu", which);
    *why = NULL;
    return 0;
  }
  if (a->n_keys > 0)
    *why = verify_jwt(a, tok, n, who, who_size);
  return *why == NULL ? 0 : -1;
}

const char *auth_metadata(const auth *a, size_t *len) {
  if (len != NULL)
    *len = a->metadata_len;
  return a->metadata;
}

const char *auth_metadata_url(const auth *a) {
  return a->metadata_url;
}

int auth_is_metadata_path(const auth *a, const char *path) {
  size_t n;
  if (path == NULL)
    return 0;
  n = strcspn(path, "?");
  return (n == strlen(AUTH_METADATA_PATH) &&
          memcmp(path, AUTH_METADATA_PATH, n) == 0) ||
         (n == strlen(a->metadata_path) &&
          memcmp(path, a->metadata_path, n) == 0);
}

int auth_challenge(const auth *a, const char *why, char *buf, size_t size) {
  const char *desc = NULL;
  int n;

  if (why != NULL && why != reason_missing) {
    desc = reason_invalid;
    for (size_t i = 0; reasons[i] != NULL; i++)
      if (why == reasons[i])
        desc = reasons[i];
  }
  if (desc != NULL)
    n = snprintf(buf, size,
                 "Bearer resource_metadata=\"%s\", error=\"invalid_token\", "
                 "error_description=\"%s\"",
                 a->metadata_url, desc);
  else
    n = snprintf(buf, size, "Bearer resource_metadata=\"%s\"", a->metadata_url);
  if (n < 0 || (size_t)n >= size) {
    if (size > 0)
      buf[0] = '\0';
    return -1;
  }
  return n;
}
