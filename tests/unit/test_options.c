/* test_options.c -- the config's host-only settings per plugin
 * (plugins.NAME.mcpd) and the deadline each call gets. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "unit.h"

static char path[512];

/* Parses `argv` (NULL-terminated, after the program name) with a config
 * file holding `json`; returns options_parse()'s result. */
static int parse_with(options *o, const char *json, const char *const *extra) {
  const char *argv[16] = {"mcpd", "--config", path};
  int argc = 3;
  FILE *f;
  const char *dir = getenv("TMPDIR");

  snprintf(path, sizeof(path), "%s/options-test.json", dir ? dir : "/tmp");
  f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(json, f);
  fclose(f);
  for (; extra != NULL && *extra != NULL && argc < 15; extra++)
    argv[argc++] = *extra;
  argv[argc] = NULL;
  return options_parse(o, argc, (char **)argv);
}

START_TEST(test_deadlines) {
  options o;
  const char *cli[] = {"--deadline", "7000", NULL};
  ck_assert_int_eq(
      parse_with(&o,
                 "{\"deadlineMs\": 9000, \"plugins\": {"
                 "\"a\": {\"key\": 1, \"mcpd\": {\"deadlineMs\": 500, "
                 "\"tools\": {\"slow\": {\"deadlineMs\": 60000}}}},"
                 "\"b\": {\"mcpd\": {\"tools\": {\"t\": {}}}}}}",
                 cli),
      0);
  /* The command line wins over the file. */
  ck_assert_uint_eq(options_deadline(&o, "c", "x"), 7000);
  ck_assert_uint_eq(options_deadline(&o, "a", "slow"), 60000);
  ck_assert_uint_eq(options_deadline(&o, "a", "other"), 500);
  ck_assert_uint_eq(options_deadline(&o, "a", NULL), 500);
  ck_assert_uint_eq(options_deadline(&o, "b", "t"), 7000);
  /* The plugin's init() sees its own keys only. */
  {
    json_object *a = options_plugin_config(&o, "a");
    ck_assert_ptr_nonnull(a);
    ck_assert(json_object_object_get_ex(a, "key", NULL));
    ck_assert(!json_object_object_get_ex(a, "mcpd", NULL));
  }
  options_free(&o);

  ck_assert_int_eq(parse_with(&o, "{\"deadlineMs\": 9000}", NULL), 0);
  ck_assert_uint_eq(options_deadline(&o, "any", NULL), 9000);
  options_free(&o);
  ck_assert_int_eq(parse_with(&o, "{}", NULL), 0);
  ck_assert_uint_eq(options_deadline(&o, "any", "t"), MCPD_DEFAULT_DEADLINE_MS);
  options_free(&o);
}
END_TEST

START_TEST(test_bad_hosting) {
  static const char *const bad[] = {
      "{\"deadlineMs\": 0}",
      "{\"deadlineMs\": \"5\"}",
      "{\"plugins\": {\"a\": {\"mcpd\": 1}}}",
      "{\"plugins\": {\"a\": {\"mcpd\": {\"deadline\": 5}}}}",
      "{\"plugins\": {\"a\": {\"mcpd\": {\"deadlineMs\": -1}}}}",
      "{\"plugins\": {\"a\": {\"mcpd\": {\"tools\": []}}}}",
      "{\"plugins\": {\"a\": {\"mcpd\": {\"tools\": {\"t\": 5}}}}}",
      "{\"plugins\": {\"a\": {\"mcpd\": {\"tools\": {\"t\": {\"x\": 1}}}}}}",
      "{\"plugins\": {\"a\": {\"mcpd\": {\"tools\": {\"t\": "
      "{\"deadlineMs\": 1e3}}}}}}",
      NULL};
  const char *cli[] = {"--log-level", "error", NULL};
  for (size_t i = 0; bad[i] != NULL; i++) {
    options o;
    ck_assert_msg(parse_with(&o, bad[i], cli) == -1, "accepted %s", bad[i]);
    options_free(&o);
  }
  {
    options o;
    const char *neg[] = {"--deadline", "0", NULL};
    ck_assert_int_eq(parse_with(&o, "{}", neg), -1);
    options_free(&o);
  }
}
END_TEST

/* A pipe's read end holding `text`, its write end closed. */
static int pipe_with(const char *text) {
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  ck_assert_int_eq(write(fds[1], text, strlen(text)), (ssize_t)strlen(text));
  close(fds[1]);
  return fds[0];
}

static int parse_argv(options *o, const char *const *argv) {
  int argc = 0;
  while (argv[argc] != NULL)
    argc++;
  return options_parse(o, argc, (char **)argv);
}

START_TEST(test_worker) {
  options o;
  char fd[16];
  int rfd = pipe_with("{\"k\": 1}\n");
  const char *argv[] = {
      "mcpd", "--worker",        "/x/p.so", "--worker-config-fd",
      fd,     "--rlimit-nofile", "16",      "--rlimit-as",
      "64",   "--rlimit-cpu",    "5",       NULL};

  snprintf(fd, sizeof(fd), "%d", rfd);
  ck_assert_int_eq(parse_argv(&o, argv), 0);
  ck_assert_int_eq(o.mode, MODE_WORKER);
  ck_assert_str_eq(o.worker_path, "/x/p.so");
  ck_assert_int_eq(o.watch, 0);
  ck_assert_uint_eq(o.n_plugin_dirs, 0);
  ck_assert_uint_eq(o.rlimit_nofile, 16);
  ck_assert_uint_eq(o.rlimit_as_mib, 64);
  ck_assert_uint_eq(o.rlimit_cpu_s, 5);
  /* The one config, whatever name the plugin has; the fd is closed. */
  ck_assert(
      json_object_object_get_ex(options_plugin_config(&o, "any"), "k", NULL));
  ck_assert_int_eq(fcntl(rfd, F_GETFD), -1);
  options_free(&o);

  /* No fd, or the text null: no config. */
  {
    const char *bare[] = {"mcpd", "--worker", "/x/p.so", NULL};
    ck_assert_int_eq(parse_argv(&o, bare), 0);
    ck_assert_ptr_null(options_plugin_config(&o, "p"));
    options_free(&o);
  }
  rfd = pipe_with("null");
  snprintf(fd, sizeof(fd), "%d", rfd);
  {
    const char *null_config[] = {
        "mcpd", "--worker", "/x/p.so", "--worker-config-fd", fd, NULL};
    ck_assert_int_eq(parse_argv(&o, null_config), 0);
    ck_assert_ptr_null(options_plugin_config(&o, "p"));
    options_free(&o);
  }
}
END_TEST

START_TEST(test_worker_refused) {
  static const char *const clash[][4] = {
      {"--plugins", "/tmp", NULL},       {"--list", NULL},
      {"--call", "echo", NULL},          {"--transport", "http", NULL},
      {"--listen", "127.0.0.1:1", NULL}, {"--config", "/dev/null", NULL},
      {"--worker-config-fd", "1", NULL}, {"--worker-config-fd", "999", NULL},
      {"--rlimit-nofile", "0", NULL},    {"--rlimit-as", "x", NULL},
  };
  options o;

  for (size_t i = 0; i < sizeof(clash) / sizeof(clash[0]); i++) {
    const char *argv[8] = {"mcpd", "--log-level", "error", "--worker", "/x.so"};
    int argc = 5;
    for (size_t j = 0; clash[i][j] != NULL; j++)
      argv[argc++] = clash[i][j];
    argv[argc] = NULL;
    ck_assert_msg(parse_argv(&o, argv) == -1, "accepted %s", clash[i][0]);
    options_free(&o);
  }
  /* The worker's options go with --worker only. */
  {
    const char *argv[] = {"mcpd",         "--log-level", "error",
                          "--rlimit-cpu", "1",           NULL};
    ck_assert_int_eq(parse_argv(&o, argv), -1);
    options_free(&o);
  }
  /* A config that is not an object or null is refused, and its fd closed
   * all the same. */
  {
    char fd[16];
    int rfd = pipe_with("[1]");
    const char *argv[] = {"mcpd",  "--log-level",        "error", "--worker",
                          "/x.so", "--worker-config-fd", fd,      NULL};
    snprintf(fd, sizeof(fd), "%d", rfd);
    ck_assert_int_eq(parse_argv(&o, argv), -1);
    ck_assert_int_eq(fcntl(rfd, F_GETFD), -1);
    options_free(&o);
  }
}
END_TEST

Suite *options_suite(void) {
  Suite *s = suite_create("options");
  TCase *tc = tcase_create("hosting");
  tcase_add_test(tc, test_deadlines);
  tcase_add_test(tc, test_bad_hosting);
  suite_add_tcase(s, tc);
  tc = tcase_create("worker");
  tcase_add_test(tc, test_worker);
  tcase_add_test(tc, test_worker_refused);
  suite_add_tcase(s, tc);
  return s;
}
