/* SPDX-License-Identifier: MIT */
/* test_auth.c -- bearer tokens on the HTTP transport, as a client sees
 * them: which Authorization values are accepted, the reason given for the
 * rest, the RFC 9728 metadata and WWW-Authenticate challenge, the start-up
 * errors of a wrong configuration, and the options that configure it.
 *
 * JWTs are minted with libjwt, an implementation other than the one under
 * test, from keys generated here; the JWK set is written from the same
 * keys.  Without libjwt (configure says so) the JWT tests are left out. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#ifdef HAVE_LIBJWT
#include <jwt.h>
#endif

#include "auth.h"
#include "auth_settings.h"
#include "log.h"
#include "settings.h"
#include "strbuf.h"
#include "unit.h"

#define ISS "https://auth.example.com"
#define AUD "https://mcp.example.com/mcp"
#define RESOURCE "https://mcp.example.com/mcp"
#define STATIC_TOKEN "s3cr3t-static-token-0123456789"

/* ---- files and the log ---- */

static char tmp_dir[PATH_MAX];

static void tmp_setup(void) {
  const char *base = getenv("TMPDIR");
  snprintf(tmp_dir, sizeof(tmp_dir), "%s/mcpd-auth-XXXXXX",
           base != NULL && base[0] == '/' ? base : "/tmp");
  ck_assert_msg(mkdtemp(tmp_dir) != NULL, "mkdtemp: %s", strerror(errno));
}

/* The path of `name` in the test's folder (static buffer). */
static const char *tmp_path(const char *name) {
  static char path[PATH_MAX + 64];
  snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
  return path;
}

static const char *write_file(const char *name, const char *text, int mode) {
  const char *path = tmp_path(name);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  size_t n = strlen(text);
  ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
  ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
  ck_assert_int_eq(fchmod(fd, (mode_t)mode), 0);
  close(fd);
  return path;
}

static char log_path[PATH_MAX + 16];
static int log_fd = -1;

/* Sends log lines, debug ones included, to a file until log_end(). */
static void log_begin(void) {
  snprintf(log_path, sizeof(log_path), "%s/log-XXXXXX", tmp_dir);
  log_fd = mkstemp(log_path);
  ck_assert_msg(log_fd >= 0, "mkstemp: %s", strerror(errno));
  log_set_fd(log_fd);
  log_set_level(LOG_LEVEL_DEBUG);
}

/* Everything logged since log_begin() (malloc'd). */
static char *log_text(void) {
  return unit_fd_text(log_fd);
}

static void log_end(void) {
  log_set_fd(2);
  log_set_level(LOG_LEVEL_INFO);
  close(log_fd);
  log_fd = -1;
}

/* auth_new() must refuse `o`, with a logged error that contains `needle`. */
static void assert_refused(const auth_settings *o, const char *needle) {
  auth *a = (auth *)1;
  char *text;
  log_begin();
  ck_assert_int_eq(auth_new(o, "http://127.0.0.1:8080/mcp", &a), -1);
  ck_assert_ptr_null(a);
  text = log_text();
  log_end();
  ck_assert_msg(strstr(text, "error") != NULL && strstr(text, needle),
                "the log lacks an error with \"%s\":\n%s", needle, text);
  free(text);
}

/* NULL when the Authorization value is accepted, else the reason. */
static const char *verdict(const auth *a, const char *authorization) {
  const char *why = "not set";
  int rc = auth_verify(a, authorization, &why);
  if (rc == 0) {
    ck_assert_ptr_null(why);
    return NULL;
  }
  ck_assert_int_eq(rc, -1);
  ck_assert_ptr_nonnull(why);
  return why;
}

static void assert_accepted(const auth *a, const char *authorization) {
  const char *why = verdict(a, authorization);
  ck_assert_msg(why == NULL, "\"%.60s...\" was refused: %s", authorization,
                why);
}

static void assert_rejected(const auth *a, const char *authorization,
                            const char *reason) {
  const char *why = verdict(a, authorization);
  ck_assert_msg(why != NULL, "\"%.60s...\" was accepted", authorization);
  ck_assert_msg(strcmp(why, reason) == 0, "\"%.60s...\": \"%s\", not \"%s\"",
                authorization, why, reason);
}

/* "Bearer <token>" (malloc'd). */
static char *bearer(const char *token) {
  size_t n = strlen(token) + 8;
  char *s = malloc(n);
  ck_assert_ptr_nonnull(s);
  snprintf(s, n, "Bearer %s", token);
  return s;
}

static void assert_token_accepted(const auth *a, const char *token) {
  char *h = bearer(token);
  assert_accepted(a, h);
  free(h);
}

static void assert_token_rejected(const auth *a, const char *token,
                                  const char *reason) {
  char *h = bearer(token);
  assert_rejected(a, h, reason);
  free(h);
}

/* ---- static tokens ---- */

static auth *static_auth(const char *file_text) {
  auth_settings o = {0};
  auth *a = NULL;
  o.auth_token_file = write_file("tokens", file_text, 0600);
  ck_assert_int_eq(auth_new(&o, "http://127.0.0.1:8080/mcp", &a), 0);
  ck_assert_ptr_nonnull(a);
  return a;
}

START_TEST(test_static_tokens) {
  auth *a;
  tmp_setup();
  a = static_auth("# tokens for mcpd\n"
                  "\n" STATIC_TOKEN "\n"
                  "   another-token-with-spaces-around \t\r\n"
                  "# the=last one has padding\n"
                  "tail-padded-token-abcdefgh==");
  assert_token_accepted(a, STATIC_TOKEN);
  assert_token_accepted(a, "another-token-with-spaces-around");
  assert_token_accepted(a, "tail-padded-token-abcdefgh==");
  /* The scheme is case-insensitive (RFC 7235 §2.1); spaces around are
   * tolerated. */
  assert_accepted(a, "bearer " STATIC_TOKEN);
  assert_accepted(a, "BEARER   " STATIC_TOKEN "  ");
  assert_accepted(a, " Bearer\t" STATIC_TOKEN);

  assert_token_rejected(a, "wrong-token-0123456789", "invalid token");
  assert_token_rejected(a, "s3cr3t-static-token", "invalid token");
  assert_token_rejected(a, STATIC_TOKEN "x", "invalid token");
  assert_token_rejected(a, "x" STATIC_TOKEN, "invalid token");
  assert_token_rejected(a, "tail-padded-token-abcdefgh", "invalid token");
  assert_token_rejected(a, "# tokens for mcpd", "invalid token");
  /* Not RFC 6750 token syntax. */
  assert_token_rejected(a, STATIC_TOKEN " " STATIC_TOKEN, "invalid token");
  assert_token_rejected(a, "=abc", "invalid token");
  auth_free(a);
}
END_TEST

START_TEST(test_missing_token) {
  auth *a;
  tmp_setup();
  a = static_auth(STATIC_TOKEN "\n");
  assert_rejected(a, NULL, "missing bearer token");
  assert_rejected(a, "", "missing bearer token");
  assert_rejected(a, "Bearer", "missing bearer token");
  assert_rejected(a, "Bearer   ", "missing bearer token");
  assert_rejected(a, "Basic " STATIC_TOKEN, "missing bearer token");
  assert_rejected(a, "Basic dXNlcjpwYXNz", "missing bearer token");
  assert_rejected(a, "Bearer" STATIC_TOKEN, "missing bearer token");
  assert_rejected(a, STATIC_TOKEN, "missing bearer token");
  auth_free(a);
}
END_TEST

START_TEST(test_static_token_too_long) {
  char *big = malloc(70000);
  auth *a;
  tmp_setup();
  a = static_auth(STATIC_TOKEN "\n");
  ck_assert_ptr_nonnull(big);
  memcpy(big, "Bearer ", 7);
  memset(big + 7, 'a', 70000 - 8);
  big[70000 - 1] = '\0';
  assert_rejected(a, big, "invalid token");
  free(big);
  auth_free(a);
}
END_TEST

/* ---- configuration errors ---- */

START_TEST(test_no_source) {
  auth_settings o = {0};
  auth *a = (auth *)1;
  ck_assert_int_eq(auth_new(&o, "http://127.0.0.1:8080/mcp", &a), 0);
  ck_assert_ptr_null(a);
  auth_free(NULL);
}
END_TEST

START_TEST(test_token_file_errors) {
  auth_settings o = {0};
  tmp_setup();

  o.auth_token_file = tmp_path("absent");
  assert_refused(&o, "No such file");
  o.auth_token_file = tmp_dir;
  assert_refused(&o, "not a regular file");
  o.auth_token_file = write_file("empty", "# only\n\n   \n# comments\n", 0600);
  assert_refused(&o, "holds no token");
  o.auth_token_file = write_file("empty2", "", 0600);
  assert_refused(&o, "holds no token");
  o.auth_token_file =
      write_file("bad", STATIC_TOKEN "\nnot a token, this\n", 0600);
  assert_refused(&o, "line 2 is not a bearer token");
}
END_TEST

START_TEST(test_token_file_mode_warning) {
  auth_settings o = {0};
  auth *a = NULL;
  char *text;
  tmp_setup();
  o.auth_token_file = write_file("tokens", STATIC_TOKEN "\nshort\n", 0644);
  log_begin();
  ck_assert_int_eq(auth_new(&o, "http://127.0.0.1:8080/mcp", &a), 0);
  text = log_text();
  log_end();
  ck_assert_ptr_nonnull(a);
  ck_assert_msg(strstr(text, "other users can read it") != NULL, "%s", text);
  ck_assert_msg(strstr(text, "line 2 is shorter than 16") != NULL ||
                    strstr(text, "on line 2 is shorter than 16") != NULL,
                "%s", text);
  /* The warnings name lines, never their content. */
  ck_assert_ptr_null(strstr(text, STATIC_TOKEN));
  ck_assert_ptr_null(strstr(text, "short\n"));
  free(text);
  auth_free(a);
}
END_TEST

START_TEST(test_jwt_options_go_together) {
  auth_settings o = {0};
  tmp_setup();
  o.auth_jwt_issuer = ISS;
  assert_refused(&o, "--auth-jwks");
  o.auth_jwt_audience = AUD;
  assert_refused(&o, "--auth-jwks");
  o.auth_jwt_issuer = NULL;
  o.auth_jwks = write_file("jwks.json", "{\"keys\":[]}", 0644);
  assert_refused(&o, "--auth-jwt-issuer");
}
END_TEST

static void assert_jwks_refused(const char *jwks, const char *needle) {
  auth_settings o = {0};
  o.auth_jwt_issuer = ISS;
  o.auth_jwt_audience = AUD;
  o.auth_jwks = write_file("jwks.json", jwks, 0644);
  assert_refused(&o, needle);
}

START_TEST(test_jwks_errors) {
  auth_settings o = {0};
  tmp_setup();
  o.auth_jwt_issuer = ISS;
  o.auth_jwt_audience = AUD;
  o.auth_jwks = tmp_path("absent.json");
  assert_refused(&o, "No such file");

  assert_jwks_refused("not json", "not a JSON object");
  assert_jwks_refused("{\"keys\":[]} trailing", "not a JSON object");
  assert_jwks_refused("{\"kty\":\"RSA\"}", "\"keys\" array");
  assert_jwks_refused("{\"keys\":[]}", "no usable key");
  /* A symmetric key, a curve we do not take, a broken RSA key, an EC
   * point that is not on the curve, a key for encryption. */
  assert_jwks_refused(
      "{\"keys\":[{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"},"
      "{\"kty\":\"EC\",\"crv\":\"P-521\",\"x\":\"AA\",\"y\":\"AA\"},"
      "{\"kty\":\"RSA\",\"n\":\"AQAB\",\"e\":\"AQAB\"},"
      "{\"kty\":\"RSA\",\"n\":\"!!\",\"e\":\"AQAB\"},"
      "{\"kty\":\"EC\",\"crv\":\"P-256\","
      "\"x\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\","
      "\"y\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE\"},"
      "{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"AA\",\"y\":\"AA\"},"
      "{\"kty\":\"RSA\",\"use\":\"enc\",\"n\":\"AQAB\",\"e\":\"AQAB\"},"
      "\"a string\"]}",
      "no usable key");
}
END_TEST

START_TEST(test_resource_url_errors) {
  auth_settings o = {0};
  tmp_setup();
  o.auth_token_file = write_file("tokens", STATIC_TOKEN "\n", 0600);
  o.resource_url = "ftp://mcp.example.com/mcp";
  assert_refused(&o, "https://");
  o.resource_url = "https://mcp.example.com/mcp#frag";
  assert_refused(&o, "fragment");
  o.resource_url = "https://mcp.example.com/mcp?x=1";
  assert_refused(&o, "query");
  o.resource_url = "https:///mcp";
  assert_refused(&o, "no host");
  o.resource_url = "https://mcp.example.com/m\"cp";
  assert_refused(&o, "not allowed");
}
END_TEST

/* ---- metadata and challenge ---- */

static auth *resource_auth(const char *resource_url) {
  auth_settings o = {0};
  auth *a = NULL;
  o.auth_token_file = write_file("tokens", STATIC_TOKEN "\n", 0600);
  o.resource_url = resource_url;
  ck_assert_int_eq(auth_new(&o, "http://127.0.0.1:8080/mcp", &a), 0);
  ck_assert_ptr_nonnull(a);
  return a;
}

START_TEST(test_metadata_paths) {
  auth *a;
  tmp_setup();
  a = resource_auth(RESOURCE);
  ck_assert_str_eq(
      auth_metadata_url(a),
      "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
  ck_assert(auth_is_metadata_path(a, "/.well-known/oauth-protected-resource"));
  ck_assert(
      auth_is_metadata_path(a, "/.well-known/oauth-protected-resource/mcp"));
  ck_assert(auth_is_metadata_path(
      a, "/.well-known/oauth-protected-resource/mcp?x=y"));
  ck_assert(!auth_is_metadata_path(a, "/mcp"));
  ck_assert(!auth_is_metadata_path(a, NULL));
  ck_assert(
      !auth_is_metadata_path(a, "/.well-known/oauth-protected-resource/"));
  ck_assert(
      !auth_is_metadata_path(a, "/.well-known/oauth-protected-resource/mcpx"));
  ck_assert(!auth_is_metadata_path(a, "/.well-known/oauth-protected-resourc"));
  auth_free(a);

  /* Without a path, or with "/", only the bare form exists. */
  a = resource_auth("https://mcp.example.com");
  ck_assert_str_eq(auth_metadata_url(a),
                   "https://mcp.example.com/.well-known/oauth-protected-"
                   "resource");
  auth_free(a);
  a = resource_auth("https://mcp.example.com:8443/");
  ck_assert_str_eq(auth_metadata_url(a),
                   "https://mcp.example.com:8443/.well-known/oauth-protected-"
                   "resource");
  auth_free(a);

  /* The caller's default stands in for --resource-url. */
  a = resource_auth(NULL);
  ck_assert_str_eq(
      auth_metadata_url(a),
      "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp");
  auth_free(a);
}
END_TEST

START_TEST(test_metadata_static_only) {
  auth *a;
  json_object *doc;
  size_t len = 0;
  const char *text;
  tmp_setup();
  a = resource_auth(RESOURCE);
  text = auth_metadata(a, &len);
  ck_assert_uint_eq(len, strlen(text));
  doc = parse_json(text);
  ck_assert_str_eq(json_object_get_string(json_path(doc, "resource")),
                   RESOURCE);
  ck_assert_str_eq(plain(json_path(doc, "bearer_methods_supported")),
                   "[\"header\"]");
  /* No OAuth authorization server issues static tokens. */
  ck_assert_ptr_null(json_path(doc, "authorization_servers"));
  json_object_put(doc);
  auth_free(a);
}
END_TEST

START_TEST(test_challenge) {
  char buf[AUTH_CHALLENGE_SIZE];
  const char *why = NULL;
  auth *a;
  int n;
  tmp_setup();
  a = resource_auth(RESOURCE);

  ck_assert_int_eq(auth_verify(a, NULL, &why), -1);
  n = auth_challenge(a, why, buf, sizeof(buf));
  ck_assert_str_eq(buf, "Bearer resource_metadata=\"https://mcp.example.com/"
                        ".well-known/oauth-protected-resource/mcp\"");
  ck_assert_int_eq(n, (int)strlen(buf));
  n = auth_challenge(a, NULL, buf, sizeof(buf));
  ck_assert_int_eq(n, (int)strlen(buf));
  ck_assert_ptr_null(strstr(buf, "error"));

  ck_assert_int_eq(auth_verify(a, "Bearer wrong-token-0123456789", &why), -1);
  n = auth_challenge(a, why, buf, sizeof(buf));
  ck_assert_str_eq(buf, "Bearer resource_metadata=\"https://mcp.example.com/"
                        ".well-known/oauth-protected-resource/mcp\", "
                        "error=\"invalid_token\", "
                        "error_description=\"invalid token\"");
  ck_assert_int_eq(n, (int)strlen(buf));

  /* A reason that is not ours is never copied into the header. */
  n = auth_challenge(a, "evil\"\r\nSet-Cookie: x", buf, sizeof(buf));
  ck_assert_int_gt(n, 0);
  ck_assert_ptr_null(strstr(buf, "evil"));
  ck_assert_ptr_nonnull(strstr(buf, "error_description=\"invalid token\""));

  ck_assert_int_eq(auth_challenge(a, why, buf, 20), -1);
  ck_assert_str_eq(buf, "");
  auth_free(a);
}
END_TEST

/* ---- JWT ---- */

#ifdef HAVE_LIBJWT

typedef struct test_key {
  EVP_PKEY *pkey;
  char *priv; /* PEM */
  char *pub;  /* PEM */
} test_key;

static struct {
  test_key rsa1;      /* kid "rsa1" in the JWKS */
  test_key rsa_nokid; /* in the JWKS without a kid */
  test_key rsa_other; /* not in the JWKS */
  test_key ec1;       /* P-256, kid "ec1" */
  test_key ec384;     /* P-384, kid "ec384" */
  test_key ec_other;  /* P-256, not in the JWKS */
  char dir[PATH_MAX];
  char jwks[PATH_MAX + 16];
} fx;

static char *pem(EVP_PKEY *pkey, int private_part) {
  BIO *bio = BIO_new(BIO_s_mem());
  char *data, *copy;
  long n;
  ck_assert_ptr_nonnull(bio);
  ck_assert_int_eq(private_part ? PEM_write_bio_PrivateKey(bio, pkey, NULL,
                                                           NULL, 0, NULL, NULL)
                                : PEM_write_bio_PUBKEY(bio, pkey),
                   1);
  n = BIO_get_mem_data(bio, &data);
  copy = strndup(data, (size_t)n);
  ck_assert_ptr_nonnull(copy);
  BIO_free(bio);
  return copy;
}

static void key_gen(test_key *k, const char *type, const char *curve) {
  k->pkey = curve != NULL ? EVP_PKEY_Q_keygen(NULL, NULL, type, curve)
                          : EVP_PKEY_Q_keygen(NULL, NULL, type, (size_t)2048);
  ck_assert_ptr_nonnull(k->pkey);
  k->priv = pem(k->pkey, 1);
  k->pub = pem(k->pkey, 0);
}

static void key_free(test_key *k) {
  EVP_PKEY_free(k->pkey);
  free(k->priv);
  free(k->pub);
}

/* Base64url without padding, written out separately from the decoder under
 * test. */
static void b64url(strbuf *b, const unsigned char *p, size_t n) {
  static const char abc[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)p[i] << 16;
    if (i + 1 < n)
      v |= (unsigned)p[i + 1] << 8;
    if (i + 2 < n)
      v |= p[i + 2];
    strbuf_append(b, &abc[(v >> 18) & 63], 1);
    strbuf_append(b, &abc[(v >> 12) & 63], 1);
    if (i + 1 < n)
      strbuf_append(b, &abc[(v >> 6) & 63], 1);
    if (i + 2 < n)
      strbuf_append(b, &abc[v & 63], 1);
  }
}

static void b64url_bn(strbuf *b, EVP_PKEY *pkey, const char *param, int size) {
  BIGNUM *bn = NULL;
  unsigned char bytes[512];
  int n;
  ck_assert_int_eq(EVP_PKEY_get_bn_param(pkey, param, &bn), 1);
  n = size > 0 ? BN_bn2binpad(bn, bytes, size) : BN_bn2bin(bn, bytes);
  ck_assert_int_gt(n, 0);
  b64url(b, bytes, (size_t)n);
  BN_free(bn);
}

static void jwk_rsa(strbuf *b, const test_key *k, const char *kid) {
  strbuf_puts(b, "{\"kty\":\"RSA\",\"use\":\"sig\",");
  if (kid != NULL) {
    strbuf_puts(b, "\"kid\":");
    strbuf_json_string(b, kid, strlen(kid));
    strbuf_puts(b, ",");
  }
  strbuf_puts(b, "\"n\":\"");
  b64url_bn(b, k->pkey, OSSL_PKEY_PARAM_RSA_N, 0);
  strbuf_puts(b, "\",\"e\":\"");
  b64url_bn(b, k->pkey, OSSL_PKEY_PARAM_RSA_E, 0);
  strbuf_puts(b, "\"}");
}

static void jwk_ec(strbuf *b, const test_key *k, const char *kid,
                   const char *crv, int size) {
  strbuf_puts(b, "{\"kty\":\"EC\",\"kid\":\"");
  strbuf_puts(b, kid);
  strbuf_puts(b, "\",\"crv\":\"");
  strbuf_puts(b, crv);
  strbuf_puts(b, "\",\"x\":\"");
  b64url_bn(b, k->pkey, OSSL_PKEY_PARAM_EC_PUB_X, size);
  strbuf_puts(b, "\",\"y\":\"");
  b64url_bn(b, k->pkey, OSSL_PKEY_PARAM_EC_PUB_Y, size);
  strbuf_puts(b, "\"}");
}

/* Once per tcase, before the tests fork: key generation is slow. */
static void jwt_fixture_setup(void) {
  const char *base = getenv("TMPDIR");
  strbuf b = {0};
  FILE *f;

  key_gen(&fx.rsa1, "RSA", NULL);
  key_gen(&fx.rsa_nokid, "RSA", NULL);
  key_gen(&fx.rsa_other, "RSA", NULL);
  key_gen(&fx.ec1, "EC", "P-256");
  key_gen(&fx.ec384, "EC", "P-384");
  key_gen(&fx.ec_other, "EC", "P-256");

  strbuf_puts(&b, "{\"keys\":[");
  /* An encryption key first, which must be skipped, not fatal. */
  strbuf_puts(&b, "{\"kty\":\"RSA\",\"use\":\"enc\",\"kid\":\"rsa1\","
                  "\"n\":\"AQAB\",\"e\":\"AQAB\"},");
  jwk_rsa(&b, &fx.rsa1, "rsa1");
  strbuf_puts(&b, ",");
  jwk_ec(&b, &fx.ec1, "ec1", "P-256", 32);
  strbuf_puts(&b, ",");
  jwk_ec(&b, &fx.ec384, "ec384", "P-384", 48);
  strbuf_puts(&b, ",");
  jwk_rsa(&b, &fx.rsa_nokid, NULL);
  strbuf_puts(&b, "]}");
  ck_assert(!b.failed);

  snprintf(fx.dir, sizeof(fx.dir), "%s/mcpd-jwks-XXXXXX",
           base != NULL && base[0] == '/' ? base : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(fx.dir));
  snprintf(fx.jwks, sizeof(fx.jwks), "%s/jwks.json", fx.dir);
  f = fopen(fx.jwks, "w");
  ck_assert_ptr_nonnull(f);
  fwrite(b.data, 1, b.len, f);
  fclose(f);
  strbuf_free(&b);
}

static void jwt_fixture_teardown(void) {
  key_free(&fx.rsa1);
  key_free(&fx.rsa_nokid);
  key_free(&fx.rsa_other);
  key_free(&fx.ec1);
  key_free(&fx.ec384);
  key_free(&fx.ec_other);
  unlink(fx.jwks);
  rmdir(fx.dir);
}

static auth *jwt_auth(void) {
  auth_settings o = {0};
  auth *a = NULL;
  o.auth_jwt_issuer = ISS;
  o.auth_jwt_audience = AUD;
  o.auth_jwks = fx.jwks;
  o.resource_url = RESOURCE;
  log_set_level(LOG_LEVEL_ERROR); /* the skipped "enc" key warns */
  ck_assert_int_eq(auth_new(&o, "http://127.0.0.1:8080/mcp", &a), 0);
  log_set_level(LOG_LEVEL_INFO);
  ck_assert_ptr_nonnull(a);
  return a;
}

static long now(void) {
  return (long)time(NULL);
}

/* A token signed with `key` (a PEM; the HMAC secret for HS*), with header
 * kid `kid` when not NULL, and the claims of the printf-style `fmt`
 * (malloc'd). */
static char *mint(jwt_alg_t alg, const char *key, const char *kid,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static char *mint(jwt_alg_t alg, const char *key, const char *kid,
                  const char *fmt, ...) {
  char claims[1024];
  jwt_t *jwt = NULL;
  char *token;
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(claims, sizeof(claims), fmt, ap);
  va_end(ap);
  ck_assert_int_eq(jwt_new(&jwt), 0);
  ck_assert_int_eq(jwt_add_grants_json(jwt, claims), 0);
  if (kid != NULL)
    ck_assert_int_eq(jwt_add_header(jwt, "kid", kid), 0);
  ck_assert_int_eq(jwt_set_alg(jwt, alg, (const unsigned char *)key,
                               key ? (int)strlen(key) : 0),
                   0);
  token = jwt_encode_str(jwt);
  ck_assert_ptr_nonnull(token);
  jwt_free(jwt);
  return token;
}

/* Standard claims, valid for an hour. */
#define GOOD "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":%ld}"

/* Checks a freshly minted token and frees it. */
static void expect(const auth *a, char *token, const char *reason) {
  if (reason == NULL)
    assert_token_accepted(a, token);
  else
    assert_token_rejected(a, token, reason);
  free(token);
}

/* A compact token from header and claims text, with `sig` as its
 * signature part (malloc'd). */
static char *forge(const char *header, const char *claims, const char *sig) {
  strbuf b = {0};
  b64url(&b, (const unsigned char *)header, strlen(header));
  strbuf_puts(&b, ".");
  b64url(&b, (const unsigned char *)claims, strlen(claims));
  strbuf_puts(&b, ".");
  strbuf_puts(&b, sig);
  ck_assert(!b.failed);
  return b.data;
}

START_TEST(test_jwt_valid) {
  auth *a;
  tmp_setup();
  a = jwt_auth();
  expect(a, mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1", GOOD, now() + 3600),
         NULL);
  expect(a, mint(JWT_ALG_RS384, fx.rsa1.priv, "rsa1", GOOD, now() + 3600),
         NULL);
  expect(a, mint(JWT_ALG_RS512, fx.rsa1.priv, "rsa1", GOOD, now() + 3600),
         NULL);
  expect(a, mint(JWT_ALG_ES256, fx.ec1.priv, "ec1", GOOD, now() + 3600), NULL);
  expect(a, mint(JWT_ALG_ES384, fx.ec384.priv, "ec384", GOOD, now() + 3600),
         NULL);
  /* No kid: every key of the right type is tried. */
  expect(a, mint(JWT_ALG_RS256, fx.rsa1.priv, NULL, GOOD, now() + 3600), NULL);
  expect(a, mint(JWT_ALG_RS256, fx.rsa_nokid.priv, NULL, GOOD, now() + 3600),
         NULL);
  expect(a, mint(JWT_ALG_ES256, fx.ec1.priv, NULL, GOOD, now() + 3600), NULL);
  /* An audience list that names us. */
  expect(a,
         mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1",
              "{\"iss\":\"" ISS "\",\"aud\":[\"other\",\"" AUD "\"],"
              "\"exp\":%ld}",
              now() + 3600),
         NULL);
  /* nbf and iat in the past, a fractional exp, a lowercase scheme. */
  expect(a,
         mint(JWT_ALG_ES256, fx.ec1.priv, "ec1",
              "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":%ld.5,"
              "\"nbf\":%ld,\"iat\":%ld,\"sub\":\"alice\"}",
              now() + 3600, now() - 10, now() - 10),
         NULL);
  {
    char *t = mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1", GOOD, now() + 3600);
    char h[4096];
    snprintf(h, sizeof(h), "bearer %s", t);
    assert_accepted(a, h);
    free(t);
  }
  auth_free(a);
}
END_TEST

/* Who a token speaks for: what a session is bound to. */
START_TEST(test_identity) {
  auth *a;
  char who[AUTH_WHO_SIZE], *t, *h;
  const char *why;

  tmp_setup();
  a = static_auth(STATIC_TOKEN "\nsecond-static-token-0123456789\n");
  h = bearer("second-static-token-0123456789");
  ck_assert_int_eq(auth_verify_who(a, h, &why, who, sizeof(who)), 0);
  ck_assert_str_eq(who, "token:2");
  free(h);
  h = bearer(STATIC_TOKEN);
  ck_assert_int_eq(auth_verify_who(a, h, &why, who, sizeof(who)), 0);
  ck_assert_str_eq(who, "token:1");
  free(h);
  auth_free(a);

  a = jwt_auth();
  t = mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1",
           "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":%ld,"
           "\"sub\":\"alice\"}",
           now() + 3600);
  h = bearer(t);
  ck_assert_int_eq(auth_verify_who(a, h, &why, who, sizeof(who)), 0);
  ck_assert_str_eq(who, "sub:alice");
  free(h);
  free(t);
  /* Without a subject the token is its own identity: 64 hex digits. */
  t = mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1", GOOD, now() + 3600);
  h = bearer(t);
  ck_assert_int_eq(auth_verify_who(a, h, &why, who, sizeof(who)), 0);
  ck_assert_uint_eq(strlen(who), 64);
  ck_assert_uint_eq(strspn(who, "0123456789abcdef"), 64);
  free(h);
  free(t);
  auth_free(a);
}
END_TEST

START_TEST(test_jwt_times) {
  auth *a;
  tmp_setup();
  a = jwt_auth();
  expect(a, mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1", GOOD, now() - 3600),
         "token expired");
  /* Within the 60 s leeway. */
  expect(a, mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1", GOOD, now() - 30), NULL);
  expect(a,
         mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1",
              "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\"}%s", ""),
         "token has no expiry");
  expect(a,
         mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1",
              "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":\"%ld\"}",
              now() + 3600),
         "token has no expiry");
  expect(a,
         mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1",
              "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":%ld,"
              "\"nbf\":%ld}",
              now() + 7200, now() + 3600),
         "token not yet valid");
  expect(a,
         mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1",
              "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":%ld,"
              "\"nbf\":%ld}",
              now() + 7200, now() + 30),
         NULL);
  expect(a,
         mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1",
              "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":%ld,"
              "\"iat\":%ld}",
              now() + 7200, now() + 3600),
         "token not yet valid");
  expect(a,
         mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1",
              "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":%ld}",
              9223372036854775807L),
         "token has no expiry");
  auth_free(a);
}
END_TEST

START_TEST(test_jwt_claims) {
  auth *a;
  tmp_setup();
  a = jwt_auth();
  expect(a,
         mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1",
              "{\"iss\":\"https://evil.example.com\",\"aud\":\"" AUD "\","
              "\"exp\":%ld}",
              now() + 3600),
         "token issuer not accepted");
  expect(a,
         mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1",
              "{\"aud\":\"" AUD "\",\"exp\":%ld}", now() + 3600),
         "token issuer not accepted");
  expect(a,
         mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1",
              "{\"iss\":\"" ISS "\",\"aud\":\"https://other.example.com\","
              "\"exp\":%ld}",
              now() + 3600),
         "token audience does not include this resource");
  expect(a,
         mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1",
              "{\"iss\":\"" ISS "\",\"aud\":[\"a\",\"b\"],\"exp\":%ld}",
              now() + 3600),
         "token audience does not include this resource");
  expect(a,
         mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1",
              "{\"iss\":\"" ISS "\",\"exp\":%ld}", now() + 3600),
         "token audience does not include this resource");
  /* A prefix of the audience is not the audience. */
  expect(a,
         mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1",
              "{\"iss\":\"" ISS "\",\"aud\":\"https://mcp.example.com\","
              "\"exp\":%ld}",
              now() + 3600),
         "token audience does not include this resource");
  auth_free(a);
}
END_TEST

START_TEST(test_jwt_keys) {
  auth *a;
  tmp_setup();
  a = jwt_auth();
  expect(a, mint(JWT_ALG_RS256, fx.rsa1.priv, "nope", GOOD, now() + 3600),
         "unknown signing key");
  /* Signed by a key we do not have, under a kid we know, and without. */
  expect(a, mint(JWT_ALG_RS256, fx.rsa_other.priv, "rsa1", GOOD, now() + 3600),
         "invalid token signature");
  expect(a, mint(JWT_ALG_RS256, fx.rsa_other.priv, NULL, GOOD, now() + 3600),
         "invalid token signature");
  expect(a, mint(JWT_ALG_ES256, fx.ec_other.priv, "ec1", GOOD, now() + 3600),
         "invalid token signature");
  /* The right key, named under the wrong kid. */
  expect(a, mint(JWT_ALG_RS256, fx.rsa_nokid.priv, "rsa1", GOOD, now() + 3600),
         "invalid token signature");
  /* An EC algorithm under an RSA kid, and a P-256 key for ES384. */
  expect(a, mint(JWT_ALG_ES256, fx.ec1.priv, "rsa1", GOOD, now() + 3600),
         "unknown signing key");
  expect(a, mint(JWT_ALG_ES384, fx.ec1.priv, "ec1", GOOD, now() + 3600),
         "unknown signing key");
  auth_free(a);
}
END_TEST

START_TEST(test_jwt_alg_attacks) {
  auth *a;
  char *t;
  tmp_setup();
  a = jwt_auth();
  /* The classic confusion: HS256 keyed with the public key text, which
   * a verifier that trusts the header would accept. */
  expect(a, mint(JWT_ALG_HS256, fx.rsa1.pub, "rsa1", GOOD, now() + 3600),
         "token algorithm not accepted");
  expect(a, mint(JWT_ALG_HS256, fx.rsa1.pub, NULL, GOOD, now() + 3600),
         "token algorithm not accepted");
  expect(a, mint(JWT_ALG_HS512, fx.ec1.pub, "ec1", GOOD, now() + 3600),
         "token algorithm not accepted");
  /* Unsigned tokens, with and without an empty signature part. */
  {
    char claims[256];
    snprintf(claims, sizeof(claims), GOOD, now() + 3600);
    t = forge("{\"alg\":\"none\",\"typ\":\"JWT\"}", claims, "");
    assert_token_rejected(a, t, "token algorithm not accepted");
    free(t);
    t = forge("{\"alg\":\"none\",\"kid\":\"rsa1\"}", claims, "AAAA");
    assert_token_rejected(a, t, "token algorithm not accepted");
    free(t);
    t = forge("{\"alg\":\"None\"}", claims, "");
    assert_token_rejected(a, t, "token algorithm not accepted");
    free(t);
    t = forge("{\"kid\":\"rsa1\"}", claims, "AAAA");
    assert_token_rejected(a, t, "invalid token");
    free(t);
    /* An extension we cannot understand. */
    t = forge("{\"alg\":\"RS256\",\"crit\":[\"exp\"],\"exp\":1}", claims,
              "AAAA");
    assert_token_rejected(a, t, "invalid token");
    free(t);
  }
  auth_free(a);
}
END_TEST

START_TEST(test_jwt_garbage) {
  auth *a;
  char *t, *copy;
  size_t n;
  tmp_setup();
  a = jwt_auth();
  t = mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1", GOOD, now() + 3600);
  n = strlen(t);
  copy = strdup(t);
  ck_assert_ptr_nonnull(copy);

  /* A truncated signature, and none at all. */
  copy[n - 10] = '\0';
  assert_token_rejected(a, copy, "invalid token signature");
  strcpy(copy, t);
  copy[strrchr(t, '.') - t + 1] = '\0';
  assert_token_rejected(a, copy, "invalid token");
  /* Header and claims only, or cut inside the header. */
  *strrchr(copy, '.') = '\0';
  assert_token_rejected(a, copy, "invalid token");
  copy[5] = '\0';
  assert_token_rejected(a, copy, "invalid token");
  /* A flipped signature bit; four parts; base64 padding or a foreign
   * character in the signature. */
  strcpy(copy, t);
  copy[n - 5] = copy[n - 5] == 'A' ? 'B' : 'A';
  assert_token_rejected(a, copy, "invalid token signature");
  {
    char *four = malloc(n + 8);
    ck_assert_ptr_nonnull(four);
    snprintf(four, n + 8, "%s.AAAA", t);
    assert_token_rejected(a, four, "invalid token");
    snprintf(four, n + 8, "%s==", t);
    assert_token_rejected(a, four, "invalid token");
    snprintf(four, n + 8, "%s+A", t);
    assert_token_rejected(a, four, "invalid token");
    free(four);
  }
  assert_token_rejected(a, "a.b.c", "invalid token");
  assert_token_rejected(a, "..", "invalid token");
  assert_token_rejected(a, "not-a-jwt-at-all", "invalid token");
  assert_token_rejected(a, "eyJhbGciOiJSUzI1NiJ9.e30.", "invalid token");

  /* Claims swapped under an intact header and signature. */
  {
    char claims[256], *dot1 = strchr(t, '.'), *dot2 = strrchr(t, '.');
    strbuf b = {0};
    snprintf(claims, sizeof(claims),
             "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":%ld}",
             now() + 99999);
    strbuf_append(&b, t, (size_t)(dot1 - t) + 1);
    b64url(&b, (const unsigned char *)claims, strlen(claims));
    strbuf_puts(&b, dot2);
    ck_assert(!b.failed);
    assert_token_rejected(a, b.data, "invalid token signature");
    strbuf_free(&b);
  }
  free(copy);
  free(t);
  auth_free(a);
}
END_TEST

START_TEST(test_jwt_metadata) {
  auth *a;
  json_object *doc;
  tmp_setup();
  a = jwt_auth();
  doc = parse_json(auth_metadata(a, NULL));
  ck_assert_str_eq(json_object_get_string(json_path(doc, "resource")),
                   RESOURCE);
  ck_assert_str_eq(plain(json_path(doc, "authorization_servers")),
                   "[\"" ISS "\"]");
  ck_assert_str_eq(plain(json_path(doc, "bearer_methods_supported")),
                   "[\"header\"]");
  json_object_put(doc);
  auth_free(a);
}
END_TEST

/* Static tokens and JWTs side by side: either kind is accepted. */
START_TEST(test_jwt_and_static) {
  auth_settings o = {0};
  auth *a = NULL;
  tmp_setup();
  o.auth_token_file = write_file("tokens", STATIC_TOKEN "\n", 0600);
  o.auth_jwt_issuer = ISS;
  o.auth_jwt_audience = AUD;
  o.auth_jwks = fx.jwks;
  log_set_level(LOG_LEVEL_ERROR);
  ck_assert_int_eq(auth_new(&o, "http://127.0.0.1:8080/mcp", &a), 0);
  log_set_level(LOG_LEVEL_INFO);
  assert_token_accepted(a, STATIC_TOKEN);
  expect(a, mint(JWT_ALG_ES256, fx.ec1.priv, "ec1", GOOD, now() + 3600), NULL);
  assert_token_rejected(a, "wrong-token-0123456789", "invalid token");
  expect(a, mint(JWT_ALG_ES256, fx.ec1.priv, "ec1", GOOD, now() - 3600),
         "token expired");
  auth_free(a);
}
END_TEST

/* Nothing of a rejected token reaches the log, at any level. */
START_TEST(test_no_token_in_log) {
  auth_settings o = {0};
  auth *a = NULL;
  char *tokens[6], *text, buf[AUTH_CHALLENGE_SIZE];
  const char *why;
  size_t i;
  tmp_setup();
  log_begin();
  o.auth_token_file = write_file("tokens", STATIC_TOKEN "\n", 0644);
  o.auth_jwt_issuer = ISS;
  o.auth_jwt_audience = AUD;
  o.auth_jwks = fx.jwks;
  ck_assert_int_eq(auth_new(&o, "http://127.0.0.1:8080/mcp", &a), 0);

  tokens[0] =
      mint(JWT_ALG_RS256, fx.rsa_other.priv, "rsa1", GOOD, now() + 3600);
  tokens[1] = mint(JWT_ALG_RS256, fx.rsa1.priv, "rsa1", GOOD, now() - 3600);
  tokens[2] = mint(JWT_ALG_HS256, fx.rsa1.pub, "rsa1", GOOD, now() + 3600);
  tokens[3] =
      mint(JWT_ALG_RS256, fx.rsa1.priv, "who-knows", GOOD, now() + 3600);
  tokens[4] = mint(JWT_ALG_ES256, fx.ec1.priv, "ec1",
                   "{\"iss\":\"leaky-issuer\",\"exp\":%ld}", now() + 3600);
  tokens[5] = strdup("almost-" STATIC_TOKEN);
  for (i = 0; i < 6; i++) {
    char *h = bearer(tokens[i]);
    ck_assert_int_eq(auth_verify(a, h, &why), -1);
    ck_assert_int_gt(auth_challenge(a, why, buf, sizeof(buf)), 0);
    ck_assert_ptr_null(strstr(buf, tokens[i]));
    free(h);
  }
  text = log_text();
  log_end();
  for (i = 0; i < 6; i++) {
    char *dot = strrchr(tokens[i], '.');
    ck_assert_msg(strstr(text, tokens[i]) == NULL, "token %zu logged", i);
    if (dot != NULL && strlen(dot + 1) >= 16)
      ck_assert_msg(strstr(text, dot + 1) == NULL, "signature %zu logged", i);
    ck_assert_ptr_null(strstr(text, "who-knows"));
    ck_assert_ptr_null(strstr(text, "leaky-issuer"));
    free(tokens[i]);
  }
  ck_assert_ptr_null(strstr(text, STATIC_TOKEN));
  free(text);
  auth_free(a);
}
END_TEST

#endif /* HAVE_LIBJWT */

/* ---- options ---- */

static int parse(settings *o, const char *const *args) {
  char *argv[32];
  int argc = 0;
  argv[argc++] = (char *)"mcpd";
  for (; *args != NULL; args++)
    argv[argc++] = (char *)*args;
  argv[argc] = NULL;
  return settings_parse(o, argc, argv);
}

START_TEST(test_options_flags) {
  settings o;
  const char *args[] = {"--transport",
                        "http",
                        "--auth-token-file",
                        "/etc/mcpd/tokens",
                        "--auth-jwt-issuer",
                        ISS,
                        "--auth-jwt-audience",
                        AUD,
                        "--auth-jwks=/etc/mcpd/jwks.json",
                        "--resource-url",
                        RESOURCE,
                        NULL};
  ck_assert_int_eq(parse(&o, args), 0);
  ck_assert_str_eq(o.http.auth.auth_token_file, "/etc/mcpd/tokens");
  ck_assert_str_eq(o.http.auth.auth_jwt_issuer, ISS);
  ck_assert_str_eq(o.http.auth.auth_jwt_audience, AUD);
  ck_assert_str_eq(o.http.auth.auth_jwks, "/etc/mcpd/jwks.json");
  ck_assert_str_eq(o.http.auth.resource_url, RESOURCE);
  settings_free(&o);

  {
    const char *plain_args[] = {"--transport", "http", NULL};
    ck_assert_int_eq(parse(&o, plain_args), 0);
    ck_assert_ptr_null(o.http.auth.auth_token_file);
    ck_assert_ptr_null(o.http.auth.auth_jwks);
    ck_assert_ptr_null(o.http.auth.resource_url);
    settings_free(&o);
  }
}
END_TEST

static void assert_parse_refused(const char *const *args, const char *needle) {
  settings o;
  char *text;
  log_begin();
  ck_assert_int_eq(parse(&o, args), -1);
  text = log_text();
  log_end();
  settings_free(&o);
  ck_assert_msg(strstr(text, needle) != NULL, "\"%s\" not in: %s", needle,
                text);
  free(text);
}

START_TEST(test_options_refused) {
  const char *stdio[] = {"--auth-token-file", "/etc/mcpd/tokens", NULL};
  const char *empty[] = {"--transport", "http", "--auth-jwks", "", NULL};
  const char *bad_key[] = {"--transport", "http", "--config", NULL, NULL};
  tmp_setup();
  assert_parse_refused(stdio, "--auth-token-file goes with --transport http");
  assert_parse_refused(empty, "--auth-jwks needs a non-empty value");
  bad_key[3] = write_file("c.json", "{\"authJwks\": 3}", 0600);
  assert_parse_refused(bad_key, "\"authJwks\": must be a non-empty string");
  bad_key[3] = write_file("c.json", "{\"resourceUrl\": \"\"}", 0600);
  assert_parse_refused(bad_key, "\"resourceUrl\": must be a non-empty string");
}
END_TEST

START_TEST(test_options_config) {
  settings o;
  const char *args[] = {"--transport",
                        "http",
                        "--config",
                        NULL,
                        "--auth-jwt-issuer",
                        "https://cli.example.com",
                        NULL};
  tmp_setup();
  args[3] = write_file("c.json",
                       "{\"authTokenFile\": \"/t\", \"authJwtIssuer\": "
                       "\"https://file.example.com\", \"authJwtAudience\": "
                       "\"aud\", \"authJwks\": \"/j\", \"resourceUrl\": "
                       "\"https://r.example.com/mcp\"}",
                       0600);
  ck_assert_int_eq(parse(&o, args), 0);
  ck_assert_str_eq(o.http.auth.auth_token_file, "/t");
  ck_assert_str_eq(o.http.auth.auth_jwt_issuer, "https://cli.example.com");
  ck_assert_str_eq(o.http.auth.auth_jwt_audience, "aud");
  ck_assert_str_eq(o.http.auth.auth_jwks, "/j");
  ck_assert_str_eq(o.http.auth.resource_url, "https://r.example.com/mcp");
  settings_free(&o);
}
END_TEST

START_TEST(test_options_help) {
  char path[PATH_MAX + 64], text[8192] = "";
  int fd;
  ssize_t n;
  tmp_setup();
  snprintf(path, sizeof(path), "%s", tmp_path("help"));
  fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  ck_assert_int_ge(fd, 0);
  settings_print_help("mcpd", fd);
  n = pread(fd, text, sizeof(text) - 1, 0);
  ck_assert_int_gt(n, 0);
  close(fd);
  ck_assert_ptr_nonnull(strstr(text, "--auth-token-file FILE"));
  ck_assert_ptr_nonnull(strstr(text, "--auth-jwt-issuer ISS"));
  ck_assert_ptr_nonnull(strstr(text, "--auth-jwt-audience AUD"));
  ck_assert_ptr_nonnull(strstr(text, "--auth-jwks FILE"));
  ck_assert_ptr_nonnull(strstr(text, "--resource-url URL"));
}
END_TEST

Suite *auth_suite(void) {
  Suite *s = suite_create("auth");
  TCase *tc = tcase_create("static");

  tcase_add_test(tc, test_static_tokens);
  tcase_add_test(tc, test_missing_token);
  tcase_add_test(tc, test_static_token_too_long);
  suite_add_tcase(s, tc);

  tc = tcase_create("errors");
  tcase_add_test(tc, test_no_source);
  tcase_add_test(tc, test_token_file_errors);
  tcase_add_test(tc, test_token_file_mode_warning);
  tcase_add_test(tc, test_jwt_options_go_together);
  tcase_add_test(tc, test_jwks_errors);
  tcase_add_test(tc, test_resource_url_errors);
  suite_add_tcase(s, tc);

  tc = tcase_create("metadata");
  tcase_add_test(tc, test_metadata_paths);
  tcase_add_test(tc, test_metadata_static_only);
  tcase_add_test(tc, test_challenge);
  suite_add_tcase(s, tc);

#ifdef HAVE_LIBJWT
  tc = tcase_create("jwt");
  /* RSA key generation under sanitizers takes its time. */
  tcase_set_timeout(tc, 30);
  tcase_add_unchecked_fixture(tc, jwt_fixture_setup, jwt_fixture_teardown);
  tcase_add_test(tc, test_jwt_valid);
  tcase_add_test(tc, test_identity);
  tcase_add_test(tc, test_jwt_times);
  tcase_add_test(tc, test_jwt_claims);
  tcase_add_test(tc, test_jwt_keys);
  tcase_add_test(tc, test_jwt_alg_attacks);
  tcase_add_test(tc, test_jwt_garbage);
  tcase_add_test(tc, test_jwt_metadata);
  tcase_add_test(tc, test_jwt_and_static);
  tcase_add_test(tc, test_no_token_in_log);
  suite_add_tcase(s, tc);
#endif

  tc = tcase_create("options");
  tcase_add_test(tc, test_options_flags);
  tcase_add_test(tc, test_options_refused);
  tcase_add_test(tc, test_options_config);
  tcase_add_test(tc, test_options_help);
  suite_add_tcase(s, tc);
  return s;
}
