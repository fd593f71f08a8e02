/* test_options.c -- the config's host-only settings per plugin
 * (plugins.NAME.mcpd) and the deadline each call gets. */
#include "config.h"

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

Suite *options_suite(void) {
  Suite *s = suite_create("options");
  TCase *tc = tcase_create("hosting");
  tcase_add_test(tc, test_deadlines);
  tcase_add_test(tc, test_bad_hosting);
  suite_add_tcase(s, tc);
  return s;
}
