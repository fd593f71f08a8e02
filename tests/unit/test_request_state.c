/* SPDX-License-Identifier: MIT */
/* test_request_state.c -- SHA-256 and HMAC-SHA256 against their published
 * vectors, and requestState: a round trip, and each way a state is
 * refused. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "request_state.h"
#include "sha256.h"
#include "unit.h"

static void to_hex(const unsigned char *p, char out[2 * SHA256_SIZE + 1]) {
  for (int i = 0; i < SHA256_SIZE; i++)
    snprintf(out + 2 * i, 3, "%02x", p[i]);
}

static void check_sha(const char *data, size_t len, const char *want) {
  unsigned char d[SHA256_SIZE];
  char got[2 * SHA256_SIZE + 1];
  sha256(data, len, d);
  to_hex(d, got);
  ck_assert_str_eq(got, want);
}

/* FIPS 180-4 examples. */
START_TEST(sha256_vectors) {
  char *million = malloc(1000000);
  sha256_ctx ctx;
  unsigned char d[SHA256_SIZE];
  char got[2 * SHA256_SIZE + 1];

  check_sha("", 0,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  check_sha("abc", 3,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  check_sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  ck_assert_ptr_nonnull(million);
  memset(million, 'a', 1000000);
  check_sha(million, 1000000,
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  /* The same, fed in uneven pieces. */
  sha256_init(&ctx);
  for (size_t off = 0, step = 1; off < 1000000;
       off += step, step = step * 3 % 997 + 1)
    sha256_update(&ctx, million + off,
                  off + step > 1000000 ? 1000000 - off : step);
  sha256_final(&ctx, d);
  to_hex(d, got);
  ck_assert_str_eq(
      got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(million);
}
END_TEST

static void check_hmac(const void *key, size_t key_len, const char *data,
                       const char *want) {
  unsigned char d[SHA256_SIZE];
  char got[2 * SHA256_SIZE + 1];
  hmac_sha256(key, key_len, data, strlen(data), d);
  to_hex(d, got);
  ck_assert_str_eq(got, want);
}

/* RFC 4231 test cases 1, 2 and 6 (a key longer than the block). */
START_TEST(hmac_vectors) {
  unsigned char k1[20], k6[131];
  memset(k1, 0x0b, sizeof(k1));
  memset(k6, 0xaa, sizeof(k6));
  check_hmac(
      k1, sizeof(k1), "Hi There",
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  check_hmac(
      "Jefe", 4, "what do ya want for nothing?",
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  check_hmac(
      k6, sizeof(k6), "Test Using Larger Than Block-Size Key - Hash Key First",
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}
END_TEST

START_TEST(state_round_trip) {
  unsigned char key[REQUEST_STATE_KEY_SIZE], other[REQUEST_STATE_KEY_SIZE];
  json_object *args = json_tokener_parse("{\"a\":1,\"b\":{\"y\":2,\"x\":3}}");
  json_object *same = json_tokener_parse("{\"b\":{\"x\":3,\"y\":2},\"a\":1}");
  json_object *answers = json_tokener_parse("{\"k1\":{\"action\":\"accept\"}}");
  json_object *got = NULL;
  char why[300], *state;

  ck_assert_int_eq(request_state_key(key, NULL, why, sizeof(why)), 0);
  ck_assert_int_eq(request_state_key(other, NULL, why, sizeof(why)), 0);
  state = request_state_seal(key, "tools/call", "t", args, answers, 2000);
  ck_assert_ptr_nonnull(state);
  /* Members in another order are the same arguments. */
  ck_assert_int_eq(request_state_open(key, state, "tools/call", "t", same, 1000,
                                      &got, why, sizeof(why)),
                   0);
  ck_assert(json_object_equal(got, answers));
  json_object_put(got);
  /* Expired. */
  ck_assert_int_eq(request_state_open(key, state, "tools/call", "t", args, 2000,
                                      &got, why, sizeof(why)),
                   -1);
  ck_assert_ptr_nonnull(strstr(why, "expired"));
  /* Another tool, method or arguments. */
  ck_assert_int_eq(request_state_open(key, state, "tools/call", "u", args, 1000,
                                      &got, why, sizeof(why)),
                   -1);
  ck_assert_int_eq(request_state_open(key, state, "prompts/get", "t", args,
                                      1000, &got, why, sizeof(why)),
                   -1);
  ck_assert_int_eq(request_state_open(key, state, "tools/call", "t", answers,
                                      1000, &got, why, sizeof(why)),
                   -1);
  ck_assert_ptr_nonnull(strstr(why, "another request"));
  /* Another key, or one character changed anywhere. */
  ck_assert_int_eq(request_state_open(other, state, "tools/call", "t", args,
                                      1000, &got, why, sizeof(why)),
                   -1);
  for (size_t i = 0; i < strlen(state); i++) {
    char saved = state[i];
    state[i] = saved == 'A' ? 'B' : 'A';
    ck_assert_int_eq(request_state_open(key, state, "tools/call", "t", args,
                                        1000, &got, why, sizeof(why)),
                     -1);
    ck_assert_ptr_null(got);
    state[i] = saved;
  }
  free(state);
  json_object_put(args);
  json_object_put(same);
  json_object_put(answers);
}
END_TEST

START_TEST(input_keys) {
  json_object *p = json_tokener_parse("{\"maxTokens\":5,\"messages\":[]}");
  json_object *q = json_tokener_parse("{\"messages\":[],\"maxTokens\":5}");
  char a[REQUEST_STATE_INPUT_KEY_MAX], b[REQUEST_STATE_INPUT_KEY_MAX];
  char c[REQUEST_STATE_INPUT_KEY_MAX];

  request_state_input_key("sampling/createMessage", p, 1, a);
  request_state_input_key("sampling/createMessage", q, 1, b);
  ck_assert_str_eq(a, b);
  ck_assert(strncmp(a, "sampling-", 9) == 0);
  request_state_input_key("sampling/createMessage", p, 2, c);
  ck_assert_str_ne(a, c);
  request_state_input_key("roots/list", NULL, 1, c);
  ck_assert(strncmp(c, "roots-", 6) == 0);
  json_object_put(p);
  json_object_put(q);
}
END_TEST

Suite *request_state_suite(void) {
  Suite *s = suite_create("request_state");
  TCase *tc = tcase_create("digests");
  tcase_add_test(tc, sha256_vectors);
  tcase_add_test(tc, hmac_vectors);
  suite_add_tcase(s, tc);
  tc = tcase_create("state");
  tcase_add_test(tc, state_round_trip);
  tcase_add_test(tc, input_keys);
  suite_add_tcase(s, tc);
  return s;
}
