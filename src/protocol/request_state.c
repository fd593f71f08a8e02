/* SPDX-License-Identifier: MIT */
/* request_state.c -- sealing and opening requestState; input request keys.
 *
 * A state is "1." base64url(payload) "." base64url(HMAC-SHA256(key,
 * "1." base64url(payload))), where the payload is the JSON object
 * {"b": binding, "e": expiry in Unix ms, "r": answers}.  The binding is the
 * SHA-256 of the method, the name and the arguments in a canonical form
 * (keys sorted), so the state of one tool's call opens for no other call,
 * and a client that reorders the members of its arguments still matches. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "base64.h"
#include "jsonrpc.h"
#include "request_state.h"
#include "sha256.h"
#include "strbuf.h"

#define STATE_VERSION "1."

uint64_t request_state_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int request_state_key(unsigned char key[REQUEST_STATE_KEY_SIZE],
                      const char *path, char *why, size_t why_len) {
  unsigned char buf[4096];
  sha256_ctx ctx;
  size_t total = 0;
  ssize_t n;
  int fd;

  if (path == NULL) {
    /* libuv asks the system's own source (getrandom, getentropy,
     * /dev/urandom, BCryptGenRandom). */
    int rc = uv_random(NULL, NULL, key, REQUEST_STATE_KEY_SIZE, 0, NULL);
    if (rc != 0) {
      snprintf(why, why_len, "no random bytes: %s", uv_strerror(rc));
      return -1;
    }
    return 0;
  }
  if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
    snprintf(why, why_len, "stateKeyFile \"%s\": %s", path, strerror(errno));
    return -1;
  }
  sha256_init(&ctx);
  while ((n = read(fd, buf, sizeof(buf))) != 0) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 || total > (1u << 20)) {
      snprintf(why, why_len, "stateKeyFile \"%s\": %s", path,
               n < 0 ? strerror(errno) : "larger than 1 MiB");
      close(fd);
      return -1;
    }
    sha256_update(&ctx, buf, (size_t)n);
    total += (size_t)n;
  }
  close(fd);
  memset(buf, 0, sizeof(buf));
  if (total < 16) {
    snprintf(why, why_len,
             "stateKeyFile \"%s\": holds %zu bytes; a key needs at least 16 "
             "(32 random bytes are best)",
             path, total);
    return -1;
  }
  sha256_final(&ctx, key);
  return 0;
}

/* --- canonical JSON and the binding ------------------------------------ */

static int compare_keys(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Writes `v` with every object's keys sorted. */
static void canonical(strbuf *out, json_object *v) {
  size_t len;
  const char *text;

  if (json_object_is_type(v, json_type_object)) {
    size_t n = (size_t)json_object_object_length(v), i = 0;
    const char **keys = malloc((n ? n : 1) * sizeof(*keys));
    if (keys == NULL) {
      out->failed = 1;
      return;
    }
    json_object_object_foreach(v, key, unused) {
      (void)unused;
      keys[i++] = key;
    }
    qsort(keys, n, sizeof(*keys), compare_keys);
    strbuf_puts(out, "{");
    for (i = 0; i < n; i++) {
      json_object *member = NULL;
      if (i > 0)
        strbuf_puts(out, ",");
      strbuf_json_string(out, keys[i], strlen(keys[i]));
      strbuf_puts(out, ":");
      json_object_object_get_ex(v, keys[i], &member);
      canonical(out, member);
    }
    strbuf_puts(out, "}");
    free(keys);
  } else if (json_object_is_type(v, json_type_array)) {
    strbuf_puts(out, "[");
    for (size_t i = 0; i < json_object_array_length(v); i++) {
      if (i > 0)
        strbuf_puts(out, ",");
      canonical(out, json_object_array_get_idx(v, i));
    }
    strbuf_puts(out, "]");
  } else {
    text = jsonrpc_to_string(v, &len);
    strbuf_append(out, text, len);
  }
}

static void hex(const unsigned char *p, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[p[i] >> 4];
    out[2 * i + 1] = digits[p[i] & 15];
  }
  out[2 * n] = '\0';
}

/* The binding as 64 hex digits; -1 when out of memory. */
static int binding(const char *method, const char *name, json_object *args,
                   char out[2 * SHA256_SIZE + 1]) {
  unsigned char digest[SHA256_SIZE];
  strbuf b = {0};
  int rc = -1;

  strbuf_puts(&b, method);
  strbuf_append(&b, "\n", 1);
  strbuf_puts(&b, name);
  strbuf_append(&b, "\n", 1);
  canonical(&b, args);
  if (!b.failed) {
    sha256(b.data, b.len, digest);
    hex(digest, sizeof(digest), out);
    rc = 0;
  }
  strbuf_free(&b);
  return rc;
}

static void mac_of(const unsigned char key[REQUEST_STATE_KEY_SIZE],
                   const char *signed_part, size_t len,
                   unsigned char mac[SHA256_SIZE]) {
  hmac_sha256(key, REQUEST_STATE_KEY_SIZE, signed_part, len, mac);
}

char *request_state_seal(const unsigned char key[REQUEST_STATE_KEY_SIZE],
                         const char *method, const char *name,
                         json_object *arguments, json_object *answers,
                         uint64_t expires_ms) {
  char bind[2 * SHA256_SIZE + 1];
  unsigned char mac[SHA256_SIZE];
  json_object *payload;
  const char *text;
  strbuf out = {0};
  size_t len;
  char *result = NULL;

  if (binding(method, name, arguments, bind) != 0 ||
      (payload = json_object_new_object()) == NULL)
    return NULL;
  json_object_object_add(payload, "b", json_object_new_string(bind));
  json_object_object_add(payload, "e",
                         json_object_new_int64((int64_t)expires_ms));
  json_object_object_add(payload, "r",
                         answers != NULL ? json_object_get(answers)
                                         : json_object_new_object());
  text = jsonrpc_to_string(payload, &len);
  strbuf_puts(&out, STATE_VERSION);
  base64url_encode(&out, (const unsigned char *)text, len);
  json_object_put(payload);
  if (!out.failed) {
    mac_of(key, out.data, out.len, mac);
    strbuf_puts(&out, ".");
    base64url_encode(&out, mac, sizeof(mac));
  }
  if (!out.failed && (result = malloc(out.len + 1)) != NULL) {
    memcpy(result, out.data, out.len);
    result[out.len] = '\0';
  }
  strbuf_free(&out);
  return result;
}

int request_state_open(const unsigned char key[REQUEST_STATE_KEY_SIZE],
                       const char *state, const char *method, const char *name,
                       json_object *arguments, uint64_t now_ms,
                       json_object **answers, char *why, size_t why_len) {
  const char *dot;
  unsigned char mac[SHA256_SIZE], *given = NULL, *payload_text = NULL;
  size_t given_len = 0, payload_len = 0;
  char bind[2 * SHA256_SIZE + 1];
  json_object *payload = NULL, *b, *e, *r;
  int rc = -1;

  *answers = NULL;
  if (strncmp(state, STATE_VERSION, strlen(STATE_VERSION)) != 0 ||
      (dot = strchr(state + strlen(STATE_VERSION), '.')) == NULL ||
      (given = base64url_decode_alloc(dot + 1, strlen(dot + 1), &given_len)) ==
          NULL ||
      given_len != SHA256_SIZE) {
    snprintf(why, why_len, "requestState is not one this server issued");
    goto out;
  }
  mac_of(key, state, (size_t)(dot - state), mac);
  if (!sha256_equal(mac, given)) {
    snprintf(why, why_len,
             "requestState failed its integrity check (altered, or sealed "
             "under another key: every process behind one endpoint needs "
             "the same stateKeyFile)");
    goto out;
  }
  payload_text = base64url_decode_alloc(
      state + strlen(STATE_VERSION),
      (size_t)(dot - state) - strlen(STATE_VERSION), &payload_len);
  if (payload_text == NULL ||
      (payload = json_tokener_parse((const char *)payload_text)) == NULL ||
      !json_object_object_get_ex(payload, "b", &b) ||
      !json_object_object_get_ex(payload, "e", &e) ||
      !json_object_object_get_ex(payload, "r", &r) ||
      !json_object_is_type(r, json_type_object)) {
    snprintf(why, why_len, "requestState is malformed");
    goto out;
  }
  if ((uint64_t)json_object_get_int64(e) <= now_ms) {
    snprintf(why, why_len,
             "requestState expired; call again without inputResponses and "
             "requestState to start over");
    goto out;
  }
  if (binding(method, name, arguments, bind) != 0) {
    snprintf(why, why_len, "out of memory");
    goto out;
  }
  if (strcmp(json_object_get_string(b), bind) != 0) {
    snprintf(why, why_len,
             "requestState belongs to another request (a different %s, "
             "name or arguments); it is only valid for the request that "
             "received it",
             method);
    goto out;
  }
  *answers = json_object_get(r);
  rc = 0;
out:
  json_object_put(payload);
  free(payload_text);
  free(given);
  return rc;
}

void request_state_input_key(const char *method, json_object *params,
                             unsigned nth,
                             char out[REQUEST_STATE_INPUT_KEY_MAX]) {
  unsigned char digest[SHA256_SIZE];
  char digits[17];
  const char *what = strchr(method, '/') != NULL ? method : "input";
  size_t what_len = strchr(method, '/') != NULL
                        ? (size_t)(strchr(method, '/') - method)
                        : strlen(what);
  strbuf b = {0};

  strbuf_puts(&b, method);
  strbuf_append(&b, "\n", 1);
  canonical(&b, params);
  sha256(b.data != NULL ? b.data : "", b.len, digest);
  strbuf_free(&b);
  hex(digest, 8, digits);
  if (what_len > 16)
    what_len = 16;
  if (nth > 1)
    snprintf(out, REQUEST_STATE_INPUT_KEY_MAX, "%.*s-%s-%u", (int)what_len,
             what, digits, nth);
  else
    snprintf(out, REQUEST_STATE_INPUT_KEY_MAX, "%.*s-%s", (int)what_len, what,
             digits);
}
