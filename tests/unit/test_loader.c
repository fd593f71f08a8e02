/* test_loader.c -- the real fixture plugins, loaded from a private plugin
 * directory: what loads, what is refused, and the one log line a user reads
 * for each refusal. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "loader.h"
#include "unit.h"

static harness h;

static void setup(void) {
  harness_init(&h, NULL);
}

static void teardown(void) {
  harness_free(&h);
}

static plugin *find_plugin(const char *name) {
  for (plugin *p = h.srv.loader.plugins; p != NULL; p = p->next)
    if (strcmp(p->name, name) == 0)
      return p;
  return NULL;
}

static size_t count_plugins(void) {
  size_t n = 0;
  for (plugin *p = h.srv.loader.plugins; p != NULL; p = p->next)
    n++;
  return n;
}

/* good.so loaded with all fourteen of its tools. */
static void assert_good_loaded(void) {
  static const char *const tools[] = {
      "add",        "slow", "async_echo", "progress",      "nothing",
      "garbage",    "fail", "crash",      "stdout_writer", "dyn_add",
      "dyn_remove", "log",  "env",        "config",        NULL};
  plugin *p = find_plugin("good");

  ck_assert_msg(p != NULL, "good.so is not loaded");
  ck_assert(p->live);
  ck_assert_str_eq(p->version, "1.0");
  ck_assert_str_eq(p->path, harness_path(&h, "good.so"));
  for (size_t i = 0; tools[i] != NULL; i++) {
    reg_tool *t = registry_find(&h.srv.registry, tools[i]);
    ck_assert_msg(t != NULL, "tool %s missing", tools[i]);
    ck_assert_ptr_eq(t->owner, p);
  }
}

/* Exactly one error line, naming the file and containing `reason`. */
static void assert_one_error(const char *file, const char *reason) {
  char *line = NULL;
  size_t n = harness_error_lines(&h, &line);
  char path[PATH_MAX * 2];

  snprintf(path, sizeof(path), "%s", harness_path(&h, file));
  ck_assert_msg(n == 1, "%zu error lines for %s:\n%s", n, file,
                line ? line : "");
  ck_assert_msg(strstr(line, path) != NULL, "\"%s\" does not name %s", line,
                path);
  ck_assert_msg(strstr(line, reason) != NULL, "\"%s\" lacks \"%s\"", line,
                reason);
  /* One line, and it says what happened to the plugin. */
  ck_assert_ptr_null(strchr(line, '\n'));
  ck_assert_ptr_nonnull(strstr(line, "not loaded"));
  free(line);
}

/* A broken fixture next to good.so: it is refused with one line, and
 * good.so loads anyway. */
static void check_refused(const char *fixture, const char *reason) {
  harness_copy(&h, fixture, fixture);
  harness_copy(&h, "good.so", "good.so");
  loader_scan(&h.srv.loader);
  assert_one_error(fixture, reason);
  assert_good_loaded();
  ck_assert_uint_eq(count_plugins(), 1);
  ck_assert_ptr_nonnull(h.srv.loader.failures);
  ck_assert_str_eq(h.srv.loader.failures->path, harness_path(&h, fixture));
}

START_TEST(test_good_loads) {
  harness_copy(&h, "good.so", "good.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  assert_good_loaded();
  ck_assert_uint_eq(h.srv.registry.count, 21);
  ck_assert_uint_eq(harness_error_lines(&h, NULL), 0);
  /* A second scan of an unchanged directory changes nothing. */
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 0);
  ck_assert_uint_eq(count_plugins(), 1);
}
END_TEST

START_TEST(test_only_so_files) {
  harness_copy(&h, "good.so", "good.so.bak");
  harness_copy(&h, "good.so", ".hidden.so");
  harness_copy(&h, "good.so", "README");
  loader_scan(&h.srv.loader);
  ck_assert_uint_eq(count_plugins(), 0);
  ck_assert_uint_eq(harness_error_lines(&h, NULL), 0);
}
END_TEST

START_TEST(test_abi_major) {
  check_refused("abi_major.so", "ABI 99");
}
END_TEST

START_TEST(test_newer_minor) {
  char reason[80];

  snprintf(reason, sizeof(reason), "ABI %d.%d, host supports %d.0..%d.%d",
           MCPD_ABI_MAJOR, MCPD_ABI_MINOR + 1, MCPD_ABI_MAJOR, MCPD_ABI_MAJOR,
           MCPD_ABI_MINOR);
  check_refused("newer_minor.so", reason);
}
END_TEST

START_TEST(test_no_symbol) {
  check_refused("no_symbol.so", "does not export");
}
END_TEST

START_TEST(test_not_elf) {
  static const char text[] = "#!/bin/sh\necho this is not a plugin\n";

  harness_write(&h, "notelf.so", text, sizeof(text) - 1);
  harness_copy(&h, "good.so", "good.so");
  loader_scan(&h.srv.loader);
  assert_one_error("notelf.so", "ELF");
  assert_good_loaded();
}
END_TEST

START_TEST(test_empty_file) {
  harness_write(&h, "empty.so", "", 0);
  harness_copy(&h, "good.so", "good.so");
  loader_scan(&h.srv.loader);
  assert_one_error("empty.so", "empty file");
  assert_good_loaded();
}
END_TEST

/* A plugin caught half-copied must be refused, not mapped (SIGBUS). */
START_TEST(test_truncated_elf) {
  char src[PATH_MAX * 2];
  FILE *f;
  char *data;
  long size;

  snprintf(src, sizeof(src), "%s/good.so", MCPD_FIXTURES_DIR);
  f = fopen(src, "rb");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
  size = ftell(f);
  rewind(f);
  data = malloc((size_t)size);
  ck_assert_ptr_nonnull(data);
  ck_assert_uint_eq(fread(data, 1, (size_t)size, f), (size_t)size);
  fclose(f);
  harness_write(&h, "half.so", data, (size_t)size / 2);
  free(data);
  harness_copy(&h, "good.so", "good.so");
  loader_scan(&h.srv.loader);
  assert_one_error("half.so", "truncated");
  assert_good_loaded();
}
END_TEST

START_TEST(test_init_fails) {
  check_refused("init_fails.so", "database unreachable at db.example");
}
END_TEST

START_TEST(test_null_name) {
  check_refused("null_name.so", "no name");
  /* Nothing of it was registered, not even its valid first tool. */
  ck_assert_ptr_null(registry_find(&h.srv.registry, "null_name_ok"));
}
END_TEST

START_TEST(test_bad_schema) {
  check_refused("bad_schema.so", "not valid JSON");
  ck_assert_ptr_null(registry_find(&h.srv.registry, "bad_schema"));
}
END_TEST

START_TEST(test_schema_not_object) {
  check_refused("schema_not_object.so", "\"type\": \"object\"");
}
END_TEST

START_TEST(test_bad_name) {
  check_refused("bad_name.so", "invalid");
  {
    char *line = NULL;
    harness_error_lines(&h, &line);
    ck_assert_ptr_nonnull(strstr(line, "has space"));
    free(line);
  }
}
END_TEST

START_TEST(test_duplicate_tool) {
  char *line = NULL;
  reg_tool *t;

  harness_copy(&h, "dup_a.so", "dup_a.so");
  harness_copy(&h, "dup_b.so", "dup_b.so");
  loader_scan(&h.srv.loader);
  /* Sorted order: dup_a.so first, so dup_b.so is refused. */
  assert_one_error("dup_b.so", "same_name");
  harness_error_lines(&h, &line);
  ck_assert_msg(strstr(line, "dup_a") != NULL, "%s", line);
  ck_assert_msg(strstr(line, harness_path(&h, "dup_a.so")) != NULL, "%s", line);
  free(line);
  t = registry_find(&h.srv.registry, "same_name");
  ck_assert_ptr_nonnull(t);
  ck_assert_ptr_eq(t->owner, find_plugin("dup_a"));
  ck_assert_ptr_null(find_plugin("dup_b"));
}
END_TEST

/* A folder with every kind of broken plugin: one line each, naming its
 * file, and the good one loads anyway. */
START_TEST(test_many_refusals_at_once) {
  static const struct {
    const char *file, *reason;
  } broken[] = {
      {"abi_major.so", "ABI 99"},
      {"bad_name.so", "has space"},
      {"bad_schema.so", "not valid JSON"},
      {"init_fails.so", "database unreachable"},
      {"newer_minor.so", "host supports"},
      {"no_symbol.so", "does not export"},
      {"null_name.so", "no name"},
      {"schema_not_object.so", "\"type\": \"object\""},
  };
  const size_t n = sizeof(broken) / sizeof(broken[0]);
  char *log, *line, *end;
  size_t errors = 0, failures = 0;

  for (size_t i = 0; i < n; i++)
    harness_copy(&h, broken[i].file, broken[i].file);
  harness_copy(&h, "good.so", "good.so");
  harness_write(&h, "empty.so", "", 0);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  assert_good_loaded();
  ck_assert_uint_eq(count_plugins(), 1);
  ck_assert_uint_eq(h.srv.registry.count, 21);

  log = harness_log(&h);
  for (line = log; *line != '\0'; line = end + 1) {
    end = strchr(line, '\n');
    ck_assert_ptr_nonnull(end);
    *end = '\0';
    if (strncmp(line, "mcpd: error: ", 13) != 0)
      continue;
    errors++;
    if (strstr(line, "empty.so") != NULL) {
      ck_assert_ptr_nonnull(strstr(line, "empty file"));
      continue;
    }
    for (size_t i = 0; i < n; i++)
      if (strstr(line, harness_path(&h, broken[i].file)) != NULL)
        ck_assert_msg(strstr(line, broken[i].reason) != NULL,
                      "\"%s\" lacks \"%s\"", line, broken[i].reason);
  }
  free(log);
  ck_assert_uint_eq(errors, n + 1);
  for (load_failure *f = h.srv.loader.failures; f != NULL; f = f->next)
    failures++;
  ck_assert_uint_eq(failures, n + 1);
  /* Unchanged, nothing is retried or logged again. */
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 0);
  ck_assert_uint_eq(harness_error_lines(&h, NULL), n + 1);
}
END_TEST

/* A refused file is not retried (nor logged again) until it changes. */
START_TEST(test_failure_logged_once) {
  harness_copy(&h, "abi_major.so", "plugin.so");
  loader_scan(&h.srv.loader);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 0);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 0);
  assert_one_error("plugin.so", "ABI 99");
  /* Replaced by a good build, it loads on the next scan. */
  harness_copy(&h, "good.so", "plugin.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  ck_assert_ptr_nonnull(find_plugin("good"));
  ck_assert_ptr_null(h.srv.loader.failures);
}
END_TEST

/* The file that held the name leaves: the refused one loads on the next
 * scan, without being touched. */
START_TEST(test_conflict_retried_when_holder_leaves) {
  reg_tool *t;

  harness_copy(&h, "dup_a.so", "dup_a.so");
  harness_copy(&h, "dup_b.so", "dup_b.so");
  loader_scan(&h.srv.loader);
  ck_assert_ptr_null(find_plugin("dup_b"));
  /* Nothing changed: not retried, not logged again. */
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 0);
  assert_one_error("dup_b.so", "same_name");
  ck_assert_int_eq(unlink(harness_path(&h, "dup_a.so")), 0);
  loader_scan(&h.srv.loader);
  ck_assert_ptr_null(find_plugin("dup_a"));
  ck_assert_ptr_nonnull(find_plugin("dup_b"));
  t = registry_find(&h.srv.registry, "same_name");
  ck_assert_ptr_nonnull(t);
  ck_assert_ptr_eq(t->owner, find_plugin("dup_b"));
  ck_assert_uint_eq(harness_error_lines(&h, NULL), 1);
  ck_assert_ptr_null(h.srv.loader.failures);
}
END_TEST

START_TEST(test_name_conflict_retried_when_holder_leaves) {
  harness_copy(&h, "reload_v1.so", "a.so");
  harness_copy(&h, "reload_v2.so", "b.so");
  loader_scan(&h.srv.loader);
  ck_assert_str_eq(find_plugin("reload")->version, "1");
  ck_assert_int_eq(unlink(harness_path(&h, "a.so")), 0);
  loader_scan(&h.srv.loader);
  ck_assert_ptr_nonnull(find_plugin("reload"));
  ck_assert_str_eq(find_plugin("reload")->version, "2");
  ck_assert_str_eq(find_plugin("reload")->path, harness_path(&h, "b.so"));
  ck_assert_ptr_nonnull(registry_find(&h.srv.registry, "v2_only"));
}
END_TEST

START_TEST(test_group_writable_refused) {
  char *line = NULL;

  harness_copy(&h, "good.so", "good.so");
  ck_assert_int_eq(chmod(harness_path(&h, "good.so"), 0664), 0);
  loader_scan(&h.srv.loader);
  ck_assert_ptr_null(find_plugin("good"));
  ck_assert_uint_eq(h.srv.registry.count, 0);
  assert_one_error("good.so", "writable");
  harness_error_lines(&h, &line);
  ck_assert_msg(strstr(line, "0664") != NULL, "%s", line);
  free(line);
}
END_TEST

START_TEST(test_world_writable_dir_refused) {
  harness_copy(&h, "good.so", "good.so");
  ck_assert_int_eq(chmod(h.dir, 0777), 0);
  loader_scan(&h.srv.loader);
  ck_assert_ptr_null(find_plugin("good"));
  assert_one_error("good.so", "writable");
  {
    char *line = NULL;
    harness_error_lines(&h, &line);
    ck_assert_msg(strstr(line, "directory") != NULL, "%s", line);
    free(line);
  }
}
END_TEST

/* Fixing the mode is enough: the next scan loads the file, and a scan
 * before the fix does not log the refusal again. */
START_TEST(test_mode_fixed_then_loads) {
  harness_copy(&h, "good.so", "good.so");
  ck_assert_int_eq(chmod(harness_path(&h, "good.so"), 0664), 0);
  loader_scan(&h.srv.loader);
  loader_scan(&h.srv.loader);
  assert_one_error("good.so", "writable");
  ck_assert_int_eq(chmod(harness_path(&h, "good.so"), 0644), 0);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  assert_good_loaded();
  ck_assert_uint_eq(harness_error_lines(&h, NULL), 1);
}
END_TEST

START_TEST(test_dir_fixed_then_loads) {
  harness_copy(&h, "good.so", "good.so");
  ck_assert_int_eq(chmod(h.dir, 0770), 0);
  loader_scan(&h.srv.loader);
  loader_scan(&h.srv.loader);
  assert_one_error("good.so", "writable");
  ck_assert_int_eq(chmod(h.dir, 0755), 0);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  assert_good_loaded();
}
END_TEST

START_TEST(test_foreign_owner_refused) {
  char *line = NULL;

  harness_copy(&h, "good.so", "good.so");
  if (getuid() != 0 || chown(harness_path(&h, "good.so"), 65534, -1) != 0)
    return; /* Only root can give a file away. */
  loader_scan(&h.srv.loader);
  ck_assert_ptr_null(find_plugin("good"));
  assert_one_error("good.so", "owned by uid 65534");
  harness_error_lines(&h, &line);
  ck_assert_ptr_nonnull(strstr(line, "--allow-insecure-plugins"));
  free(line);
}
END_TEST

START_TEST(test_allow_insecure) {
  harness_copy(&h, "good.so", "good.so");
  ck_assert_int_eq(chmod(harness_path(&h, "good.so"), 0666), 0);
  h.opts.allow_insecure = 1;
  loader_scan(&h.srv.loader);
  assert_good_loaded();
  ck_assert_uint_eq(harness_error_lines(&h, NULL), 0);
}
END_TEST

START_TEST(test_allow_insecure_flag) {
  /* The same through the command line. */
  harness_free(&h);
  {
    static const char *const extra[] = {"--allow-insecure-plugins", NULL};
    harness_init(&h, extra);
  }
  ck_assert(h.opts.allow_insecure);
  harness_copy(&h, "good.so", "good.so");
  ck_assert_int_eq(chmod(harness_path(&h, "good.so"), 0664), 0);
  loader_scan(&h.srv.loader);
  assert_good_loaded();
}
END_TEST

/* Sets the modification time of `name` `secs` seconds into the past, so a
 * rewrite within the same clock tick still looks changed. */
static void age(const char *name, int secs) {
  struct timespec times[2];

  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= secs;
  times[1] = times[0];
  ck_assert_int_eq(utimensat(AT_FDCWD, harness_path(&h, name), times, 0), 0);
}

START_TEST(test_reload) {
  plugin *p;
  reg_tool *version;

  harness_copy(&h, "reload_v1.so", "reload.so");
  age("reload.so", 10);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  p = find_plugin("reload");
  ck_assert_ptr_nonnull(p);
  ck_assert_str_eq(p->version, "1");
  ck_assert_ptr_nonnull(registry_find(&h.srv.registry, "version"));
  ck_assert_ptr_null(registry_find(&h.srv.registry, "v2_only"));

  /* Overwritten in place with version 2. */
  harness_copy(&h, "reload_v2.so", "reload.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  ck_assert_uint_eq(count_plugins(), 1);
  p = find_plugin("reload");
  ck_assert_ptr_nonnull(p);
  ck_assert_str_eq(p->version, "2");
  version = registry_find(&h.srv.registry, "version");
  ck_assert_ptr_nonnull(version);
  ck_assert_ptr_eq(version->owner, p);
  ck_assert_ptr_nonnull(registry_find(&h.srv.registry, "v2_only"));
  ck_assert_uint_eq(h.srv.registry.count, 2);
  ck_assert_uint_eq(harness_error_lines(&h, NULL), 0);

  /* Back to version 1: v2_only goes away again. */
  harness_copy(&h, "reload_v1.so", "reload.so");
  age("reload.so", 5);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  ck_assert_str_eq(find_plugin("reload")->version, "1");
  ck_assert_ptr_null(registry_find(&h.srv.registry, "v2_only"));
  ck_assert_ptr_nonnull(registry_find(&h.srv.registry, "version"));
}
END_TEST

/* A replacement that fails to load leaves the loaded version serving. */
START_TEST(test_reload_broken_keeps_old) {
  char *line = NULL;

  harness_copy(&h, "reload_v1.so", "reload.so");
  loader_scan(&h.srv.loader);
  ck_assert_ptr_nonnull(find_plugin("reload"));
  harness_copy(&h, "abi_major.so", "reload.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 0);
  ck_assert_uint_eq(harness_error_lines(&h, &line), 1);
  ck_assert_msg(strstr(line, "keeping the version already loaded") != NULL,
                "%s", line);
  free(line);
  ck_assert_ptr_nonnull(find_plugin("reload"));
  ck_assert_str_eq(find_plugin("reload")->version, "1");
  ck_assert_ptr_nonnull(registry_find(&h.srv.registry, "version"));
}
END_TEST

START_TEST(test_removed_file_unloads) {
  harness_copy(&h, "good.so", "good.so");
  harness_copy(&h, "reload_v1.so", "reload.so");
  loader_scan(&h.srv.loader);
  ck_assert_uint_eq(count_plugins(), 2);
  ck_assert_int_eq(unlink(harness_path(&h, "good.so")), 0);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  ck_assert_ptr_null(find_plugin("good"));
  ck_assert_ptr_null(registry_find(&h.srv.registry, "add"));
  ck_assert_ptr_null(registry_find(&h.srv.registry, "crash"));
  ck_assert_ptr_nonnull(registry_find(&h.srv.registry, "version"));
  ck_assert_uint_eq(h.srv.registry.count, 1);
  ck_assert(h.srv.registry.changed & REGISTRY_TOOLS);
}
END_TEST

START_TEST(test_same_plugin_name_twice) {
  harness_copy(&h, "reload_v1.so", "a.so");
  harness_copy(&h, "reload_v2.so", "b.so");
  loader_scan(&h.srv.loader);
  assert_one_error("b.so", "\"reload\"");
  {
    char *line = NULL;
    harness_error_lines(&h, &line);
    ck_assert_msg(strstr(line, harness_path(&h, "a.so")) != NULL,
                  "\"%s\" does not name the plugin already loaded", line);
    free(line);
  }
  ck_assert_str_eq(find_plugin("reload")->path, harness_path(&h, "a.so"));
  ck_assert_ptr_null(registry_find(&h.srv.registry, "v2_only"));
}
END_TEST

START_TEST(test_load_file_directly) {
  plugin *p;

  harness_copy(&h, "good.so", "good.so");
  p = loader_load_file(&h.srv.loader, harness_path(&h, "good.so"));
  ck_assert_ptr_nonnull(p);
  ck_assert_ptr_eq(p, find_plugin("good"));
  ck_assert_ptr_null(
      loader_load_file(&h.srv.loader, harness_path(&h, "missing.so")));
  assert_one_error("missing.so", "cannot stat");
  /* Unloading removes its tools at once. */
  loader_unload(&h.srv.loader, p);
  ck_assert_uint_eq(h.srv.registry.count, 0);
  ck_assert_uint_eq(count_plugins(), 0);
}
END_TEST

START_TEST(test_plugin_config) {
  char config[PATH_MAX * 2];
  static const char text[] =
      "{\"plugins\":{\"good\":{\"answer\":42}},\"pageSize\":5}";
  FILE *f;

  harness_free(&h);
  snprintf(config, sizeof(config), "%s/mcpd-unit-config-%ld.json",
           getenv("TMPDIR") && getenv("TMPDIR")[0] == '/' ? getenv("TMPDIR")
                                                          : "/tmp",
           (long)getpid());
  f = fopen(config, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
  {
    const char *const extra[] = {"--config", config, NULL};
    harness_init(&h, extra);
  }
  unlink(config);
  ck_assert_uint_eq(h.opts.page_size, 5);
  ck_assert_str_eq(plain(options_plugin_config(&h.opts, "good")),
                   "{\"answer\":42}");
  ck_assert_ptr_null(options_plugin_config(&h.opts, "other"));
  harness_copy(&h, "good.so", "good.so");
  loader_scan(&h.srv.loader);
  assert_good_loaded();
}
END_TEST

Suite *loader_suite(void) {
  Suite *s = suite_create("loader");
  TCase *tc;

  tc = tcase_create("load");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_good_loads);
  tcase_add_test(tc, test_only_so_files);
  tcase_add_test(tc, test_load_file_directly);
  tcase_add_test(tc, test_plugin_config);
  suite_add_tcase(s, tc);

  tc = tcase_create("refusals");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_abi_major);
  tcase_add_test(tc, test_newer_minor);
  tcase_add_test(tc, test_no_symbol);
  tcase_add_test(tc, test_not_elf);
  tcase_add_test(tc, test_empty_file);
  tcase_add_test(tc, test_truncated_elf);
  tcase_add_test(tc, test_init_fails);
  tcase_add_test(tc, test_null_name);
  tcase_add_test(tc, test_bad_schema);
  tcase_add_test(tc, test_schema_not_object);
  tcase_add_test(tc, test_bad_name);
  tcase_add_test(tc, test_duplicate_tool);
  tcase_add_test(tc, test_same_plugin_name_twice);
  tcase_add_test(tc, test_failure_logged_once);
  tcase_add_test(tc, test_many_refusals_at_once);
  tcase_add_test(tc, test_conflict_retried_when_holder_leaves);
  tcase_add_test(tc, test_name_conflict_retried_when_holder_leaves);
  suite_add_tcase(s, tc);

  tc = tcase_create("permissions");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_group_writable_refused);
  tcase_add_test(tc, test_world_writable_dir_refused);
  tcase_add_test(tc, test_foreign_owner_refused);
  tcase_add_test(tc, test_mode_fixed_then_loads);
  tcase_add_test(tc, test_dir_fixed_then_loads);
  tcase_add_test(tc, test_allow_insecure);
  tcase_add_test(tc, test_allow_insecure_flag);
  suite_add_tcase(s, tc);

  tc = tcase_create("reload");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_reload);
  tcase_add_test(tc, test_reload_broken_keeps_old);
  tcase_add_test(tc, test_removed_file_unloads);
  suite_add_tcase(s, tc);
  return s;
}
