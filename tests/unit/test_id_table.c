/* SPDX-License-Identifier: MIT */
/* test_id_table.c -- requests by id: what goes in comes out, what is
 * removed is gone, whatever the order, with integer and string ids alike
 * and a table that grows and empties many times over. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "id_table.h"
#include "unit.h"

#define N 600

static json_object *make_id(int i) {
  char buf[32];
  if (i % 3 == 0) {
    snprintf(buf, sizeof(buf), "req-%d", i);
    return json_object_new_string(buf);
  }
  return json_object_new_int64((int64_t)i * 7919);
}

START_TEST(test_against_a_reference) {
  json_object *ids[N];
  int in[N] = {0};
  id_table t = {0};
  unsigned seed = 12345;

  for (int i = 0; i < N; i++)
    ids[i] = make_id(i);
  /* Equal ids built apart are the same key; 7 and "7" are not. */
  {
    json_object *a = json_object_new_int64(7), *b = json_object_new_int64(7);
    json_object *c = json_object_new_string("7");
    ck_assert(id_same(a, b));
    ck_assert(!id_same(a, c));
    ck_assert_uint_eq(id_hash(a), id_hash(b));
    json_object_put(a);
    json_object_put(b);
    json_object_put(c);
  }
  for (int round = 0; round < 200000; round++) {
    int i;
    seed = seed * 1103515245u + 12345u;
    i = (int)((seed >> 8) % N);
    if (in[i]) {
      ck_assert_ptr_eq(id_table_get(&t, ids[i]), &in[i]);
      id_table_remove(&t, ids[i]);
      in[i] = 0;
    } else {
      ck_assert_ptr_null(id_table_get(&t, ids[i]));
      ck_assert_int_eq(id_table_put(&t, ids[i], &in[i]), 0);
      in[i] = 1;
    }
    if (round % 10007 == 0) {
      size_t live = 0;
      for (int k = 0; k < N; k++) {
        live += (size_t)in[k];
        ck_assert_ptr_eq(id_table_get(&t, ids[k]), in[k] ? &in[k] : NULL);
      }
      ck_assert_uint_eq(t.count, live);
    }
  }
  /* A key equal to one inside, but another object, finds it. */
  for (int k = 0; k < N; k++)
    if (in[k]) {
      json_object *twin = make_id(k);
      ck_assert_ptr_eq(id_table_get(&t, twin), &in[k]);
      id_table_remove(&t, twin);
      json_object_put(twin);
    }
  ck_assert_uint_eq(t.count, 0);
  id_table_remove(&t, ids[0]);
  id_table_free(&t);
  for (int i = 0; i < N; i++)
    json_object_put(ids[i]);
}
END_TEST

Suite *id_table_suite(void) {
  Suite *s = suite_create("id_table");
  TCase *tc = tcase_create("table");
  tcase_add_test(tc, test_against_a_reference);
  suite_add_tcase(s, tc);
  return s;
}
