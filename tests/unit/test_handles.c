/* SPDX-License-Identifier: MIT */
/* test_handles.c -- handles resolve while their object lives, and stale or
 * bogus ones resolve to nothing, also past the first chunk of slots. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "handles.h"
#include "unit.h"

/* Resolves `h`, expecting `object`; leaves the slot again. */
static void assert_resolves(uintptr_t h, void *object) {
  char owner[HANDLES_OWNER_MAX + 1];
  handle_slot *slot;
  void *got = handles_enter(h, &slot, owner);

  ck_assert_ptr_eq(got, object);
  ck_assert_ptr_nonnull(slot);
  handles_leave(slot);
}

/* Resolves a stale `h` to nothing and returns the owner name it knew. */
static const char *stale_owner(uintptr_t h) {
  static char owner[HANDLES_OWNER_MAX + 1];
  handle_slot *slot = (handle_slot *)1;

  ck_assert_ptr_null(handles_enter(h, &slot, owner));
  ck_assert_ptr_null(slot);
  return owner;
}

START_TEST(test_add_enter_remove) {
  int a, b;
  uintptr_t ha = handles_add(&a, "alpha"), hb = handles_add(&b, "beta");

  ck_assert(ha != 0 && hb != 0 && ha != hb);
  assert_resolves(ha, &a);
  assert_resolves(hb, &b);
  handles_remove(ha);
  ck_assert_str_eq(stale_owner(ha), "alpha");
  assert_resolves(hb, &b);
  handles_remove(hb);
  /* Removing twice, and bogus handles, change nothing. */
  handles_remove(hb);
  ck_assert_str_eq(stale_owner(hb), "beta");
  ck_assert_str_eq(stale_owner(0), "");
  ck_assert_str_eq(stale_owner(~(uintptr_t)0), "");
}
END_TEST

/* A reused slot gets a new generation and its new owner's name: the old
 * handle stays stale, whether the owner changed or not. */
START_TEST(test_reuse_is_a_new_handle) {
  static int objects[3000];
  uintptr_t handles[3000], old;
  int x;

  /* Enough at once to fill many chunks of slots. */
  for (int i = 0; i < 3000; i++) {
    handles[i] = handles_add(&objects[i], i % 2 ? "odd" : "even");
    ck_assert(handles[i] != 0);
  }
  for (int i = 0; i < 3000; i++)
    assert_resolves(handles[i], &objects[i]);
  for (int i = 0; i < 3000; i++)
    handles_remove(handles[i]);
  for (int i = 0; i < 3000; i++)
    ck_assert_str_eq(stale_owner(handles[i]), i % 2 ? "odd" : "even");

  /* Slots are reused oldest first, each with its new owner's name. */
  old = handles[0];
  for (int i = 0; i < 3000; i++) {
    handles[i] = handles_add(&objects[i], i % 3 ? "odd" : "third");
    ck_assert(handles[i] != 0);
  }
  for (int i = 0; i < 3000; i++)
    assert_resolves(handles[i], &objects[i]);
  ck_assert_ptr_null(handles_enter(old, &(handle_slot *){NULL},
                                   (char[HANDLES_OWNER_MAX + 1]){0}));
  for (int i = 0; i < 3000; i++)
    handles_remove(handles[i]);
  for (int i = 0; i < 3000; i++)
    ck_assert_str_eq(stale_owner(handles[i]), i % 3 ? "odd" : "third");

  /* A long owner name is cut at HANDLES_OWNER_MAX. */
  {
    char name[HANDLES_OWNER_MAX + 20];
    uintptr_t h;
    memset(name, 'n', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    h = handles_add(&x, name);
    handles_remove(h);
    ck_assert_uint_eq(strlen(stale_owner(h)), HANDLES_OWNER_MAX);
  }
}
END_TEST

/* Slots past the first block of chunk addresses (8192 slots) resolve like
 * the first ones, and a handle naming a slot in a block never grown
 * resolves to nothing. */
START_TEST(test_many_blocks) {
  enum { N = 9000 };
  static int objects[N];
  static uintptr_t handles[N];
  uintptr_t far = ((uintptr_t)1 << (sizeof(uintptr_t) * 4)) | 500000;

  for (int i = 0; i < N; i++) {
    handles[i] = handles_add(&objects[i], "many");
    ck_assert(handles[i] != 0);
  }
  for (int i = 0; i < N; i++)
    assert_resolves(handles[i], &objects[i]);
  ck_assert_str_eq(stale_owner(far), "");
  for (int i = 0; i < N; i++)
    handles_remove(handles[i]);
  for (int i = 0; i < N; i++)
    ck_assert_str_eq(stale_owner(handles[i]), "many");
}
END_TEST

Suite *handles_suite(void) {
  Suite *s = suite_create("handles");
  TCase *tc = tcase_create("core");

  tcase_add_test(tc, test_add_enter_remove);
  tcase_add_test(tc, test_reuse_is_a_new_handle);
  tcase_add_test(tc, test_many_blocks);
  suite_add_tcase(s, tc);
  return s;
}
