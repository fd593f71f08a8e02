/* SPDX-License-Identifier: MIT */
/* test_watch.c -- the directory watcher on its own loop: a plugin directory
 * that is removed and made again, or that does not exist yet, is watched
 * once it exists, and the owner hears of it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "unit.h"
#include "watch.h"

/* As harness.c: fails with a message before Check's 4-second timeout. */
#define WAIT_MS 3000

typedef struct fixture {
  char base[PATH_MAX];     /* a private folder that holds the watched one */
  char dir[PATH_MAX + 16]; /* the watched plugin directory */
  char *dirs[1];
  uv_loop_t loop;
  uv_timer_t deadline;
  int timed_out;
  watch *w;
  unsigned calls; /* how often the watch callback ran */
  int log_fd;
} fixture;

static fixture fx;

static void watch_called(void *arg) {
  fixture *f = arg;
  f->calls++;
}

static void setup(void) {
  const char *tmp = getenv("TMPDIR");

  memset(&fx, 0, sizeof(fx));
  fx.log_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  ck_assert_int_ge(fx.log_fd, 0);
  /* What the watcher logs is not what these tests look at. */
  log_set_fd(fx.log_fd);
  snprintf(fx.base, sizeof(fx.base), "%s/mcpd-watch-XXXXXX",
           tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
  ck_assert_msg(mkdtemp(fx.base) != NULL, "mkdtemp: %s", strerror(errno));
  snprintf(fx.dir, sizeof(fx.dir), "%s/plugins", fx.base);
  fx.dirs[0] = fx.dir;
  ck_assert_int_eq(uv_loop_init(&fx.loop), 0);
  ck_assert_int_eq(uv_timer_init(&fx.loop, &fx.deadline), 0);
  fx.deadline.data = &fx;
}

static void teardown(void) {
  char path[PATH_MAX * 2];

  if (fx.w != NULL)
    watch_stop(fx.w);
  uv_close((uv_handle_t *)&fx.deadline, NULL);
  /* watch_stop() closed every handle it had: nothing is left to run. */
  ck_assert_int_eq(uv_run(&fx.loop, UV_RUN_DEFAULT), 0);
  ck_assert_int_eq(uv_loop_close(&fx.loop), 0);
  snprintf(path, sizeof(path), "%s/x.so", fx.dir);
  unlink(path);
  rmdir(fx.dir);
  rmdir(fx.base);
  log_set_fd(2);
  close(fx.log_fd);
}

static void start(void) {
  fx.w = watch_start(&fx.loop, fx.dirs, 1, 1, watch_called, &fx);
  ck_assert_ptr_nonnull(fx.w);
}

static void deadline_cb(uv_timer_t *timer) {
  fixture *f = timer->data;
  f->timed_out = 1;
}

/* Runs the loop until the callback has run `calls` times in all. */
static void wait_calls(unsigned calls, const char *what) {
  fx.timed_out = 0;
  ck_assert_int_eq(uv_timer_start(&fx.deadline, deadline_cb, WAIT_MS, 0), 0);
  while (fx.calls < calls && !fx.timed_out)
    uv_run(&fx.loop, UV_RUN_ONCE);
  uv_timer_stop(&fx.deadline);
  ck_assert_msg(!fx.timed_out, "no callback for %d ms after %s (%u calls)",
                WAIT_MS, what, fx.calls);
}

/* Runs the loop for `ms`, so that whatever is pending settles. */
static void run_for(uint64_t ms) {
  fx.timed_out = 0;
  ck_assert_int_eq(uv_timer_start(&fx.deadline, deadline_cb, ms, 0), 0);
  while (!fx.timed_out)
    uv_run(&fx.loop, UV_RUN_ONCE);
}

static void make_dir(void) {
  ck_assert_msg(mkdir(fx.dir, 0700) == 0, "mkdir %s: %s", fx.dir,
                strerror(errno));
}

static void remove_dir(void) {
  ck_assert_msg(rmdir(fx.dir) == 0, "rmdir %s: %s", fx.dir, strerror(errno));
}

/* Drops a file named x.so into the directory: the callback runs once more
 * only if the directory is watched. */
static void assert_watched(void) {
  char path[PATH_MAX * 2];
  unsigned before;
  int fd;

  /* Events of what came before have been handled. */
  run_for(200);
  before = fx.calls;
  snprintf(path, sizeof(path), "%s/x.so", fx.dir);
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, "x", 1), 1);
  ck_assert_int_eq(close(fd), 0);
  wait_calls(before + 1, "x.so was written");
}

START_TEST(test_watched) {
  make_dir();
  start();
  assert_watched();
}
END_TEST

/* Removed and made again before the loop hears of it. */
START_TEST(test_recreated_at_once) {
  make_dir();
  start();
  remove_dir();
  make_dir();
  /* The owner rescans: what was in the old directory is gone. */
  wait_calls(1, "the directory was made again");
  assert_watched();
}
END_TEST

/* Removed, missing for a while, then made again. */
START_TEST(test_recreated_later) {
  make_dir();
  start();
  remove_dir();
  wait_calls(1, "the directory was removed");
  run_for(700);
  make_dir();
  wait_calls(2, "the directory was made again");
  assert_watched();
}
END_TEST

/* Renamed away, and another directory put in its place. */
START_TEST(test_replaced_by_rename) {
  char other[PATH_MAX * 2], old[PATH_MAX * 2];

  snprintf(other, sizeof(other), "%s/new", fx.base);
  snprintf(old, sizeof(old), "%s/old", fx.base);
  make_dir();
  start();
  ck_assert_int_eq(mkdir(other, 0700), 0);
  ck_assert_int_eq(rename(fx.dir, old), 0);
  ck_assert_int_eq(rename(other, fx.dir), 0);
  wait_calls(1, "the directory was replaced");
  assert_watched();
  ck_assert_int_eq(rmdir(old), 0);
}
END_TEST

/* The default plugin directory often does not exist at start. */
START_TEST(test_missing_at_start) {
  start();
  run_for(100);
  ck_assert_uint_eq(fx.calls, 0);
  make_dir();
  wait_calls(1, "the directory was made");
  assert_watched();
}
END_TEST

/* Stopped while waiting for a directory: every handle closes. */
START_TEST(test_stop_while_missing) {
  start();
  run_for(50);
  watch_stop(fx.w);
  fx.w = NULL;
}
END_TEST

Suite *watch_suite(void) {
  Suite *s = suite_create("watch");
  TCase *tc = tcase_create("dirs");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_watched);
  tcase_add_test(tc, test_recreated_at_once);
  tcase_add_test(tc, test_recreated_later);
  tcase_add_test(tc, test_replaced_by_rename);
  tcase_add_test(tc, test_missing_at_start);
  tcase_add_test(tc, test_stop_while_missing);
  suite_add_tcase(s, tc);
  return s;
}
