/* SPDX-License-Identifier: MIT */
/* test_loader.c -- the real fixture plugins, loaded from a private plugin
 * directory: what loads, what is refused, and the one log line a user reads
 * for each refusal. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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
    reg_tool *t = registry_find(&h.srv.registry, REG_TOOL, tools[i]);
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
  ck_assert_uint_eq(registry_count(&h.srv.registry, REG_TOOL), 27);
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

/* Tables are stepped through by the element size the plugin recorded; a
 * size no 1.x header produces is refused, not trusted. */
START_TEST(test_bad_element_size) {
  check_refused("bad_size.so", "tool size 8 is not what ABI 1.x allows");
}
END_TEST

/* Reserved fields are refused in every table, prompt arguments included. */
START_TEST(test_reserved_in_prompt_argument) {
  check_refused("bad_reserved.so",
                "prompt \"bad_reserved\": argument \"topic\" sets reserved "
                "fields");
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
  ck_assert_ptr_null(registry_find(&h.srv.registry, REG_TOOL, "null_name_ok"));
}
END_TEST

START_TEST(test_bad_schema) {
  check_refused("bad_schema.so", "not valid JSON");
  ck_assert_ptr_null(registry_find(&h.srv.registry, REG_TOOL, "bad_schema"));
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
  t = registry_find(&h.srv.registry, REG_TOOL, "same_name");
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
  ck_assert_uint_eq(registry_count(&h.srv.registry, REG_TOOL), 27);

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
  t = registry_find(&h.srv.registry, REG_TOOL, "same_name");
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
  ck_assert_ptr_nonnull(registry_find(&h.srv.registry, REG_TOOL, "v2_only"));
}
END_TEST

START_TEST(test_group_writable_refused) {
  char *line = NULL;

  harness_copy(&h, "good.so", "good.so");
  ck_assert_int_eq(chmod(harness_path(&h, "good.so"), 0664), 0);
  loader_scan(&h.srv.loader);
  ck_assert_ptr_null(find_plugin("good"));
  ck_assert_uint_eq(registry_count(&h.srv.registry, REG_TOOL), 0);
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
  h.opts.loader.allow_insecure = 1;
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
  ck_assert(h.opts.loader.allow_insecure);
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
  ck_assert_ptr_nonnull(registry_find(&h.srv.registry, REG_TOOL, "version"));
  ck_assert_ptr_null(registry_find(&h.srv.registry, REG_TOOL, "v2_only"));

  /* Overwritten in place with version 2. */
  harness_copy(&h, "reload_v2.so", "reload.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  ck_assert_uint_eq(count_plugins(), 1);
  p = find_plugin("reload");
  ck_assert_ptr_nonnull(p);
  ck_assert_str_eq(p->version, "2");
  version = registry_find(&h.srv.registry, REG_TOOL, "version");
  ck_assert_ptr_nonnull(version);
  ck_assert_ptr_eq(version->owner, p);
  ck_assert_ptr_nonnull(registry_find(&h.srv.registry, REG_TOOL, "v2_only"));
  ck_assert_uint_eq(registry_count(&h.srv.registry, REG_TOOL), 2);
  ck_assert_uint_eq(harness_error_lines(&h, NULL), 0);

  /* Back to version 1: v2_only goes away again. */
  harness_copy(&h, "reload_v1.so", "reload.so");
  age("reload.so", 5);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  ck_assert_str_eq(find_plugin("reload")->version, "1");
  ck_assert_ptr_null(registry_find(&h.srv.registry, REG_TOOL, "v2_only"));
  ck_assert_ptr_nonnull(registry_find(&h.srv.registry, REG_TOOL, "version"));
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
  ck_assert_ptr_nonnull(registry_find(&h.srv.registry, REG_TOOL, "version"));
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
  ck_assert_ptr_null(registry_find(&h.srv.registry, REG_TOOL, "add"));
  ck_assert_ptr_null(registry_find(&h.srv.registry, REG_TOOL, "crash"));
  ck_assert_ptr_nonnull(registry_find(&h.srv.registry, REG_TOOL, "version"));
  ck_assert_uint_eq(registry_count(&h.srv.registry, REG_TOOL), 1);
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
  ck_assert_ptr_null(registry_find(&h.srv.registry, REG_TOOL, "v2_only"));
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
  ck_assert_uint_eq(registry_count(&h.srv.registry, REG_TOOL), 0);
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
  ck_assert_uint_eq(h.opts.methods.page_size, 5);
  ck_assert_str_eq(plain(plugin_settings_config(&h.opts.plugins, "good")),
                   "{\"answer\":42}");
  ck_assert_ptr_null(plugin_settings_config(&h.opts.plugins, "other"));
  harness_copy(&h, "good.so", "good.so");
  loader_scan(&h.srv.loader);
  assert_good_loaded();
}
END_TEST

/* Seconds on the monotonic clock, for bounding how long a scan takes. */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds this thread has waited for a CPU, ready to run but not running
 * (the second field of /proc/thread-self/schedstat), or 0 where the
 * kernel does not keep it. */
static double runqueue_s(void) {
  unsigned long long run = 0, wait = 0;
  FILE *f = fopen("/proc/thread-self/schedstat", "r");
  if (f == NULL)
    return 0;
  if (fscanf(f, "%llu %llu", &run, &wait) != 2)
    wait = 0;
  fclose(f);
  return (double)wait / 1e9;
}

/* How often `text` occurs in the log. */
static size_t log_count(const char *text) {
  char *log = harness_log(&h);
  size_t n = 0;

  for (const char *p = log; (p = strstr(p, text)) != NULL; p += strlen(text))
    n++;
  free(log);
  return n;
}

static void make_fifo(const char *name) {
  ck_assert_int_eq(mkfifo(harness_path(&h, name), 0600), 0);
  /* Whatever the umask, only the type sets it apart from a plugin. */
  ck_assert_int_eq(chmod(harness_path(&h, name), 0644), 0);
}

/* Opening a FIFO for reading blocks until a writer comes; the loader must
 * refuse it at once and say why. */
START_TEST(test_fifo_refused) {
  char *line = NULL;

  make_fifo("x.so");
  harness_copy(&h, "good.so", "good.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  assert_one_error("x.so", "not a regular file");
  harness_error_lines(&h, &line);
  ck_assert_msg(strstr(line, "FIFO") != NULL, "%s", line);
  free(line);
  assert_good_loaded();
  /* Unchanged, it is not tried again. */
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 0);
  ck_assert_uint_eq(harness_error_lines(&h, NULL), 1);
}
END_TEST

/* What the swapping thread of test_fifo_swapped_in shares with the test. */
typedef struct swapper {
  atomic_int stop;
  atomic_uint loads; /* bumped by the test after every load */
  unsigned rescues;  /* how often a load blocked on the FIFO */
  char reg[PATH_MAX * 2], fifo[PATH_MAX * 2], tmp[PATH_MAX * 2];
  char target[PATH_MAX * 2];
} swapper;

/* Waits a random few microseconds, so that the swaps do not fall into
 * step with the loads and miss the window between a look and an open. */
static void pause_briefly(unsigned *seed) {
  double until = now_s() + (double)(rand_r(seed) % 20) / 1e6;
  while (now_s() < until)
    ;
}

/* Makes x.so a regular file and a FIFO in turn, each atomically, as fast
 * as it can. */
static void *swap_thread(void *arg) {
  swapper *s = arg;
  unsigned seen = 0, seed = 1;
  double last = now_s();

  while (!atomic_load(&s->stop)) {
    unsigned loads = atomic_load(&s->loads);
    /* rename() leaves both names when they are links to one file. */
    unlink(s->tmp);
    if (link(s->reg, s->tmp) == 0)
      rename(s->tmp, s->target);
    pause_briefly(&seed);
    unlink(s->tmp);
    if (link(s->fifo, s->tmp) == 0)
      rename(s->tmp, s->target);
    pause_briefly(&seed);
    if (loads != seen) {
      seen = loads;
      last = now_s();
    } else if (now_s() - last > 0.5) {
      /* A load is stuck opening the FIFO: become its writer so that the
       * test ends with a message instead of Check's timeout. */
      int fd = open(s->fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd >= 0) {
        close(fd);
        s->rescues++;
      }
      last = now_s();
    }
  }
  return NULL;
}

/* A FIFO renamed over a plugin file between the loader's look at the path
 * and its open(): the open must not block.  Loading the file directly, as
 * a scan does once it saw a change, tries on every round. */
START_TEST(test_fifo_swapped_in) {
  static const char text[] = "not a plugin, but a regular file\n";
  swapper *s = calloc(1, sizeof(*s));
  double start = now_s(), slowest = 0;
  pthread_t thread;
  unsigned loads = 0;

  ck_assert_ptr_nonnull(s);
  /* Hidden names: the scan skips them. */
  harness_write(&h, ".reg", text, sizeof(text) - 1);
  make_fifo(".fifo");
  snprintf(s->reg, sizeof(s->reg), "%s", harness_path(&h, ".reg"));
  snprintf(s->fifo, sizeof(s->fifo), "%s", harness_path(&h, ".fifo"));
  snprintf(s->tmp, sizeof(s->tmp), "%s", harness_path(&h, ".tmp"));
  snprintf(s->target, sizeof(s->target), "%s", harness_path(&h, "x.so"));
  ck_assert_int_eq(link(s->reg, s->target), 0);
  ck_assert_int_eq(pthread_create(&thread, NULL, swap_thread, s), 0);
  while (now_s() - start < 1.0 && slowest < 0.25) {
    /* A load blocked in open() sleeps; one the machine's load kept from
     * a CPU waits in the run queue.  Only the first counts. */
    double t0 = now_s(), q0 = runqueue_s(), took;
    ck_assert_ptr_null(loader_load_file(&h.srv.loader, s->target));
    took = now_s() - t0 - (runqueue_s() - q0);
    if (took > slowest)
      slowest = took;
    atomic_fetch_add(&s->loads, 1);
    loads++;
  }
  atomic_store(&s->stop, 1);
  ck_assert_int_eq(pthread_join(thread, NULL), 0);
  ck_assert_msg(slowest < 0.25 && s->rescues == 0,
                "a load took %.0f ms: the loader blocked opening a FIFO "
                "(%u loads)",
                slowest * 1000, loads);
  ck_assert_uint_eq(count_plugins(), 0);
  free(s);
}
END_TEST

/* A symbolic link to a plugin loads, under the link's name. */
START_TEST(test_symlink_loads) {
  char target[PATH_MAX * 2];
  plugin *p;

  /* A copy, for a mode that does not depend on the umask of the build; a
   * hidden name, so that only the link is scanned. */
  harness_copy(&h, "good.so", ".target");
  snprintf(target, sizeof(target), "%s", harness_path(&h, ".target"));
  ck_assert_int_eq(symlink(target, harness_path(&h, "linked.so")), 0);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  p = find_plugin("good");
  ck_assert_ptr_nonnull(p);
  ck_assert_str_eq(p->path, harness_path(&h, "linked.so"));
  ck_assert_uint_eq(harness_error_lines(&h, NULL), 0);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 0);
}
END_TEST

/* A link to a FIFO is no better than the FIFO. */
START_TEST(test_symlink_to_fifo_refused) {
  make_fifo(".fifo");
  ck_assert_int_eq(symlink(".fifo", harness_path(&h, "x.so")), 0);
  harness_copy(&h, "good.so", "good.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  assert_one_error("x.so", "FIFO");
  assert_good_loaded();
}
END_TEST

/* A link that leads back to itself is reported once, shows in the
 * failures (--list), and is tried again once the loop is broken. */
START_TEST(test_symlink_loop_reported) {
  char *line = NULL;

  ck_assert_int_eq(symlink("loop", harness_path(&h, "loop.so")), 0);
  ck_assert_int_eq(symlink("loop.so", harness_path(&h, "loop")), 0);
  harness_copy(&h, "reload_v1.so", "reload.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  assert_one_error("loop.so", "symbolic link");
  harness_error_lines(&h, &line);
  ck_assert_msg(strstr(line, strerror(ELOOP)) != NULL, "%s", line);
  free(line);
  ck_assert_ptr_nonnull(h.srv.loader.failures);
  ck_assert_str_eq(h.srv.loader.failures->path, harness_path(&h, "loop.so"));
  ck_assert_ptr_nonnull(strstr(h.srv.loader.failures->reason, "link"));
  /* Nothing changed: not reported again. */
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 0);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 0);
  ck_assert_uint_eq(harness_error_lines(&h, NULL), 1);
  /* The loop is broken where loop.so does not change: it loads now. */
  ck_assert_int_eq(unlink(harness_path(&h, "loop")), 0);
  harness_copy(&h, "good.so", "loop");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  ck_assert_ptr_nonnull(find_plugin("good"));
  ck_assert_str_eq(find_plugin("good")->path, harness_path(&h, "loop.so"));
  ck_assert_ptr_null(h.srv.loader.failures);
  ck_assert_uint_eq(harness_error_lines(&h, NULL), 1);
}
END_TEST

/* Writes the ELF header of good.so to `name` and makes it `size` bytes
 * long without writing the rest (a sparse file). */
static void write_sparse_elf(const char *name, off_t size) {
  char src[PATH_MAX * 2], header[64];
  int in, out;

  snprintf(src, sizeof(src), "%s/good.so", MCPD_FIXTURES_DIR);
  in = open(src, O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(in, 0);
  ck_assert_int_eq(read(in, header, sizeof(header)), (int)sizeof(header));
  close(in);
  out = open(harness_path(&h, name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
             0644);
  ck_assert_int_ge(out, 0);
  ck_assert_int_eq(write(out, header, sizeof(header)), (int)sizeof(header));
  ck_assert_int_eq(ftruncate(out, size), 0);
  ck_assert_int_eq(fchmod(out, 0644), 0);
  ck_assert_int_eq(close(out), 0);
}

/* A huge file is refused before any of it is copied: the loop must not
 * stall copying it. */
START_TEST(test_huge_file_refused_at_once) {
  double start, took;
  char *line = NULL;
  char limit[32];

  write_sparse_elf("big.so", (off_t)2 << 30);
  harness_copy(&h, "good.so", "good.so");
  start = now_s();
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  took = now_s() - start;
  ck_assert_msg(took < 1.0, "scan took %.1f s", took);
  assert_one_error("big.so", "2147483648 bytes");
  harness_error_lines(&h, &line);
  snprintf(limit, sizeof(limit), "%lld", (long long)MCPD_PLUGIN_MAX_SIZE);
  ck_assert_msg(strstr(line, limit) != NULL, "%s lacks the limit", line);
  free(line);
  assert_good_loaded();
}
END_TEST

/* A file that is not ELF is refused from its header, without being copied:
 * a copy would fail here, since files may not grow past 1 MiB. */
START_TEST(test_not_elf_not_copied) {
  static const char text[] = "#!/bin/sh\necho this is not a plugin\n";
  struct rlimit old, small;
  void (*old_handler)(int);
  int fd;

  harness_write(&h, "text.so", text, sizeof(text) - 1);
  fd = open(harness_path(&h, "text.so"), O_WRONLY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, 8 << 20), 0);
  close(fd);
  ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
  /* Only the soft limit, so that it can be raised again (CK_FORK=no). */
  small = old;
  small.rlim_cur = 1 << 20;
  old_handler = signal(SIGXFSZ, SIG_IGN);
  ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
  loader_scan(&h.srv.loader);
  ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, old_handler);
  assert_one_error("text.so", "not an ELF file");
}
END_TEST

/* A reload says which instance went and which came. */
START_TEST(test_reload_names_replaced_instance) {
  char expect[PATH_MAX * 3];

  harness_copy(&h, "reload_v1.so", "reload.so");
  age("reload.so", 10);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  harness_copy(&h, "reload_v2.so", "reload.so");
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  snprintf(expect, sizeof(expect),
           "mcpd: info: plugin \"reload\" 1 (%s) unloaded; 2 replaces it\n",
           harness_path(&h, "reload.so"));
  ck_assert_uint_eq(log_count(expect), 1);
  /* The line for a plain unload is kept for plain unloads. */
  ck_assert_uint_eq(log_count("unloaded plugin"), 0);
  ck_assert_int_eq(unlink(harness_path(&h, "reload.so")), 0);
  ck_assert_uint_eq(loader_scan(&h.srv.loader), 1);
  snprintf(expect, sizeof(expect), "unloaded plugin \"reload\" (%s)\n",
           harness_path(&h, "reload.so"));
  ck_assert_uint_eq(log_count(expect), 1);
}
END_TEST

/* A config entry for a plugin that is not loaded is most likely a typo:
 * one warning per name, however often asked. */
START_TEST(test_unused_plugin_config) {
  char config[PATH_MAX * 2];
  static const char text[] = "{\"plugins\":{\"good\":{\"answer\":42},"
                             "\"notez\":{},\"gone\":{\"x\":1},"
                             "\"goood\":{}}}";
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
  harness_copy(&h, "good.so", "good.so");
  loader_scan(&h.srv.loader);
  assert_good_loaded();
  loader_warn_unused_configs(&h.srv.loader);
  loader_warn_unused_configs(&h.srv.loader);
  ck_assert_uint_eq(log_count("mcpd: warn: config names plugin \"notez\", but "
                              "no plugin of that name is loaded"),
                    1);
  ck_assert_uint_eq(log_count("config names plugin \"gone\""), 1);
  /* Close to the name of a loaded plugin: that one is suggested. */
  ck_assert_uint_eq(log_count("config names plugin \"goood\", but no plugin "
                              "of that name is loaded (did you mean "
                              "\"good\"?)"),
                    1);
  ck_assert_uint_eq(log_count("did you mean"), 1);
  ck_assert_uint_eq(log_count("config names plugin \"good\""), 0);
  ck_assert_uint_eq(harness_error_lines(&h, NULL), 0);
}
END_TEST

/* Without plugin configs there is nothing to say. */
START_TEST(test_no_plugin_config_no_warning) {
  harness_copy(&h, "good.so", "good.so");
  loader_scan(&h.srv.loader);
  loader_warn_unused_configs(&h.srv.loader);
  ck_assert_uint_eq(log_count("config names plugin"), 0);
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
  tcase_add_test(tc, test_unused_plugin_config);
  tcase_add_test(tc, test_no_plugin_config_no_warning);
  tcase_add_test(tc, test_symlink_loads);
  suite_add_tcase(s, tc);

  tc = tcase_create("refusals");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_abi_major);
  tcase_add_test(tc, test_newer_minor);
  tcase_add_test(tc, test_no_symbol);
  tcase_add_test(tc, test_bad_element_size);
  tcase_add_test(tc, test_reserved_in_prompt_argument);
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

  tc = tcase_create("file_types");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_fifo_refused);
  tcase_add_test(tc, test_fifo_swapped_in);
  tcase_add_test(tc, test_symlink_to_fifo_refused);
  tcase_add_test(tc, test_symlink_loop_reported);
  tcase_add_test(tc, test_huge_file_refused_at_once);
  tcase_add_test(tc, test_not_elf_not_copied);
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
  tcase_add_test(tc, test_reload_names_replaced_instance);
  suite_add_tcase(s, tc);
  return s;
}
