/* SPDX-License-Identifier: MIT */
/* test_settings.c -- the settings table: every row reachable by a flag or
 * a key, bounds on both with the same numbers, defaults, the command line
 * over the file, refusals; the host-only settings per plugin
 * (plugins.NAME.mcpd) and the deadline each call gets; worker mode. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "settings.h"
#include "unit.h"

static char path[512];
static char log_path[512];
static int log_fd = -1;

static const char *tmp(void) {
  const char *dir = getenv("TMPDIR");
  return dir && dir[0] == '/' ? dir : "/tmp";
}

/* Sends log lines to a file until log_end(). */
static void log_begin(void) {
  snprintf(log_path, sizeof(log_path), "%s/settings-log-XXXXXX", tmp());
  log_fd = mkstemp(log_path);
  ck_assert_msg(log_fd >= 0, "mkstemp: %s", strerror(errno));
  unlink(log_path);
  log_set_fd(log_fd);
}

/* Everything logged since log_begin() (malloc'd); logging goes back to
 * stderr. */
static char *log_end(void) {
  char *text = unit_fd_text(log_fd);
  log_set_fd(2);
  close(log_fd);
  log_fd = -1;
  return text;
}

static void write_config(const char *json) {
  FILE *f;
  snprintf(path, sizeof(path), "%s/settings-test-%ld.json", tmp(),
           (long)getpid());
  f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(json, f);
  fclose(f);
}

static int parse_argv(settings *s, const char *const *argv) {
  int argc = 0;
  while (argv[argc] != NULL)
    argc++;
  return settings_parse(s, argc, (char **)argv);
}

/* Parses `extra` (NULL-terminated, after the program name), with a config
 * file holding `json` unless it is NULL. */
static int parse_with(settings *s, const char *json, const char *const *extra) {
  const char *argv[16] = {"mcpd"};
  int argc = 1;
  if (json != NULL) {
    write_config(json);
    argv[argc++] = "--config";
    argv[argc++] = path;
  }
  for (; extra != NULL && *extra != NULL && argc < 15; extra++)
    argv[argc++] = *extra;
  argv[argc] = NULL;
  return parse_argv(s, argv);
}

/* parse_with() must fail, logging a line that contains `needle`. */
static void assert_refused(const char *json, const char *const *extra,
                           const char *needle) {
  settings s;
  char *text;
  log_begin();
  ck_assert_int_eq(parse_with(&s, json, extra), -1);
  text = log_end();
  settings_free(&s);
  ck_assert_msg(strstr(text, needle) != NULL, "\"%s\" not in: %s", needle,
                text);
  free(text);
}

/* --- the table ---------------------------------------------------------- */

/* A row's value in `s`, as a number. */
static uint64_t number_at(const settings *s, const setting *row) {
  const char *at = (const char *)s + row->offset;
  switch (row->type) {
  case SETTING_SIZE:
    return *(const size_t *)(const void *)at;
  case SETTING_U64:
    return *(const uint64_t *)(const void *)at;
  default:
    return (uint64_t) * (const int *)(const void *)at;
  }
}

static const char *string_at(const settings *s, const setting *row) {
  return *(const char *const *)(const void *)((const char *)s + row->offset);
}

static int is_number(const setting *row) {
  return row->type == SETTING_SIZE || row->type == SETTING_U64;
}

/* What a row needs beside itself on the command line to be accepted:
 * authorization goes with http. */
static void context(const setting *row, const char **argv, int *argc) {
  if (row->flags & SETTING_F_HTTP) {
    argv[(*argc)++] = "--transport";
    argv[(*argc)++] = "http";
  }
}

START_TEST(test_rows) {
  size_t n;
  const setting *t = settings_table(&n);
  ck_assert_uint_gt(n, 30);
  for (size_t i = 0; i < n; i++) {
    const setting *row = &t[i];
    const char *name = row->flag ? row->flag : row->key;
    ck_assert_msg(row->flag != NULL || row->key != NULL, "row %zu: no name", i);
    ck_assert_msg(row->owner != NULL, "%s: no owner", name);
    ck_assert_msg(row->type != SETTING_CUSTOM || row->set != NULL,
                  "%s: custom without a setter", name);
    if (is_number(row)) {
      ck_assert_msg(row->min <= row->max, "%s: min > max", name);
      ck_assert_msg(row->def == 0 ||
                        (row->def >= row->min && row->def <= row->max),
                    "%s: default out of bounds", name);
      ck_assert_msg(row->flag == NULL || row->noun != NULL,
                    "%s: no noun for its error", name);
    }
    /* Each flag and each key is named once. */
    for (size_t j = 0; j < i; j++) {
      ck_assert_msg(!row->flag || !t[j].flag || strcmp(row->flag, t[j].flag),
                    "--%s twice", row->flag);
      ck_assert_msg(!row->key || !t[j].key || strcmp(row->key, t[j].key),
                    "\"%s\" twice", row->key);
    }
  }
}
END_TEST

/* Every number is held to the same bounds on the command line and in the
 * file; both refusals name them. */
START_TEST(test_bounds) {
  size_t n;
  const setting *t = settings_table(&n);
  for (size_t i = 0; i < n; i++) {
    const setting *row = &t[i];
    char flag[64], low[32], high[32], json[160], needle[200], rule[64];
    if (!is_number(row))
      continue;
    snprintf(flag, sizeof(flag), "--%s", row->flag ? row->flag : "");
    snprintf(low, sizeof(low), "%llu", (unsigned long long)row->min - 1);
    snprintf(high, sizeof(high), "%llu", (unsigned long long)row->max + 1);
    if (row->flags & SETTING_F_NO_UPPER)
      snprintf(rule, sizeof(rule), ">= %llu", (unsigned long long)row->min);
    else
      snprintf(rule, sizeof(rule), "from %llu to %llu",
               (unsigned long long)row->min, (unsigned long long)row->max);
    if (row->flag != NULL) {
      const char *argv[8];
      int argc = 0;
      context(row, argv, &argc);
      argv[argc++] = flag;
      argv[argc + 1] = NULL;
      for (int k = 0; k < 3; k++) {
        const char *bad = k == 0 ? (row->min > 0 ? low : "-1")
                          : k == 1
                              ? "x"
                              : (row->flags & SETTING_F_NO_UPPER ? "" : high);
        if (*bad == '\0')
          continue;
        argv[argc] = bad;
        snprintf(needle, sizeof(needle), "%s: \"%s\" is not a %s %s", flag, bad,
                 row->noun, rule);
        assert_refused(NULL, argv, needle);
      }
    }
    if (row->key != NULL) {
      snprintf(needle, sizeof(needle), "\"%s\": must be an integer %s",
               row->key, rule);
      snprintf(json, sizeof(json), "{\"%s\": %s}", row->key,
               row->min > 0 ? low : "-1");
      assert_refused(json, NULL, needle);
      snprintf(json, sizeof(json), "{\"%s\": \"%llu\"}", row->key,
               (unsigned long long)row->min);
      assert_refused(json, NULL, needle);
      if (!(row->flags & SETTING_F_NO_UPPER)) {
        snprintf(json, sizeof(json), "{\"%s\": %s}", row->key, high);
        assert_refused(json, NULL, needle);
      }
    }
  }
}
END_TEST

/* The bounds themselves are accepted, from either place. */
START_TEST(test_bounds_accepted) {
  size_t n;
  const setting *t = settings_table(&n);
  for (size_t i = 0; i < n; i++) {
    const setting *row = &t[i];
    uint64_t edge[2] = {row->min, row->max};
    if (!is_number(row))
      continue;
    for (int k = 0; k < 2; k++) {
      settings s;
      char flag[64], value[32], json[160];
      snprintf(value, sizeof(value), "%llu", (unsigned long long)edge[k]);
      if (row->flag != NULL) {
        const char *argv[8] = {"mcpd"};
        int argc = 1;
        context(row, argv, &argc);
        snprintf(flag, sizeof(flag), "--%s", row->flag);
        argv[argc++] = flag;
        argv[argc++] = value;
        argv[argc] = NULL;
        ck_assert_msg(parse_argv(&s, argv) == 0, "%s %s", flag, value);
        ck_assert_uint_eq(number_at(&s, row), edge[k]);
        settings_free(&s);
      }
      if (row->key != NULL) {
        snprintf(json, sizeof(json), "{\"%s\": %s}", row->key, value);
        ck_assert_msg(parse_with(&s, json, NULL) == 0, "%s", json);
        ck_assert_uint_eq(number_at(&s, row), edge[k]);
        settings_free(&s);
      }
    }
  }
}
END_TEST

START_TEST(test_defaults) {
  settings s;
  size_t n;
  const setting *t = settings_table(&n);
  const char *argv[] = {"mcpd", NULL};

  ck_assert_int_eq(parse_argv(&s, argv), 0);
  for (size_t i = 0; i < n; i++)
    if (t[i].type != SETTING_STRING && t[i].type != SETTING_CUSTOM)
      ck_assert_msg(number_at(&s, &t[i]) == t[i].def, "%s",
                    t[i].flag ? t[i].flag : t[i].key);
  ck_assert_int_eq(s.mode, MODE_SERVE);
  ck_assert_str_eq(s.transport, "stdio");
  ck_assert_ptr_null(s.http.listen);
  ck_assert_uint_eq(s.methods.page_size, MCPD_DEFAULT_PAGE_SIZE);
  ck_assert_uint_eq(s.max_message, MCPD_DEFAULT_MAX_MESSAGE);
  ck_assert_uint_eq(s.plugins.deadline_ms, MCPD_DEFAULT_DEADLINE_MS);
  ck_assert_int_eq(s.log_level, LOG_LEVEL_INFO);
  ck_assert_int_eq(s.watch, 1);
  /* The default plugin path, since none was given. */
  ck_assert_uint_gt(s.loader.n_plugin_dirs, 0);
  ck_assert_int_eq(s.loader.plugin_dirs_given, 0);
  /* Each owner's part sees what it shares with the others. */
  ck_assert_ptr_eq(s.loader.plugins, &s.plugins);
  ck_assert_ptr_eq(s.worker.plugins, &s.plugins);
  ck_assert_uint_eq(s.worker.max_message, s.max_message);
  ck_assert_uint_eq(s.http.max_message, s.max_message);
  ck_assert_uint_eq(s.worker.threads, s.call.threads);
  settings_free(&s);

  {
    const char *http[] = {"mcpd", "--transport", "http", NULL};
    ck_assert_int_eq(parse_argv(&s, http), 0);
    ck_assert_str_eq(s.http.listen, "127.0.0.1:8080");
    settings_free(&s);
  }
}
END_TEST

/* Every setting the command line and the file both set: the command line
 * wins, whichever comes first; the file alone sets it. */
START_TEST(test_command_line_wins) {
  size_t n;
  const setting *t = settings_table(&n);
  for (size_t i = 0; i < n; i++) {
    const setting *row = &t[i];
    char flag[64], cli[32], file[32], json[200];
    const char *argv[8];
    int argc = 0;
    settings s;
    if (row->flag == NULL || row->key == NULL || row->type == SETTING_CUSTOM)
      continue;
    snprintf(flag, sizeof(flag), "--%s", row->flag);
    context(row, argv, &argc);
    argv[argc++] = flag;
    switch (row->type) {
    case SETTING_BOOL:
      /* The flag sets one value; the file says the other. */
      snprintf(json, sizeof(json), "{\"%s\": %s}", row->key,
               row->flags & SETTING_F_NEGATE ? "true" : "false");
      break;
    case SETTING_LEVEL:
      argv[argc++] = "error";
      snprintf(json, sizeof(json), "{\"%s\": \"debug\"}", row->key);
      break;
    case SETTING_STRING:
      argv[argc++] = "from-cli";
      snprintf(json, sizeof(json), "{\"%s\": \"from-file\"}", row->key);
      break;
    default:
      snprintf(cli, sizeof(cli), "%llu", (unsigned long long)row->min);
      snprintf(file, sizeof(file), "%llu", (unsigned long long)row->min + 1);
      argv[argc++] = cli;
      snprintf(json, sizeof(json), "{\"%s\": %s}", row->key, file);
    }
    argv[argc] = NULL;
    ck_assert_msg(parse_with(&s, json, argv) == 0, "%s", json);
    if (row->type == SETTING_STRING)
      ck_assert_str_eq(string_at(&s, row), "from-cli");
    else if (row->type == SETTING_BOOL)
      ck_assert_uint_eq(number_at(&s, row), !(row->flags & SETTING_F_NEGATE));
    else if (row->type == SETTING_LEVEL)
      ck_assert_uint_eq(number_at(&s, row), LOG_LEVEL_ERROR);
    else
      ck_assert_uint_eq(number_at(&s, row), row->min);
    settings_free(&s);

    /* The file alone. */
    argc = 0;
    context(row, argv, &argc);
    argv[argc] = NULL;
    ck_assert_msg(parse_with(&s, json, argv) == 0, "%s", json);
    if (row->type == SETTING_STRING)
      ck_assert_str_eq(string_at(&s, row), "from-file");
    else if (row->type == SETTING_BOOL)
      ck_assert_uint_eq(number_at(&s, row), !!(row->flags & SETTING_F_NEGATE));
    else if (row->type == SETTING_LEVEL)
      ck_assert_uint_eq(number_at(&s, row), LOG_LEVEL_DEBUG);
    else
      ck_assert_uint_eq(number_at(&s, row), row->min + 1);
    settings_free(&s);
  }
}
END_TEST

START_TEST(test_plugin_dirs) {
  settings s;
  const char *cli[] = {"--plugins", "/a", "--plugins", "/b", NULL};
  /* The file's list, unless the command line gave one. */
  ck_assert_int_eq(parse_with(&s, "{\"pluginDirs\": [\"/f\"]}", NULL), 0);
  ck_assert_uint_eq(s.loader.n_plugin_dirs, 1);
  ck_assert_str_eq(s.loader.plugin_dirs[0], "/f");
  ck_assert_int_eq(s.loader.plugin_dirs_given, 2);
  settings_free(&s);
  ck_assert_int_eq(parse_with(&s, "{\"pluginDirs\": [\"/f\"]}", cli), 0);
  ck_assert_uint_eq(s.loader.n_plugin_dirs, 2);
  ck_assert_str_eq(s.loader.plugin_dirs[0], "/a");
  ck_assert_str_eq(s.loader.plugin_dirs[1], "/b");
  ck_assert_int_eq(s.loader.plugin_dirs_given, 1);
  settings_free(&s);
  assert_refused("{\"pluginDirs\": [1]}", cli, "\"pluginDirs\": must list");
}
END_TEST

START_TEST(test_unknown) {
  size_t n;
  const setting *t = settings_table(&n);
  settings s;
  char *text;
  const char *flag[] = {"--nope", NULL};
  const char *stray[] = {"stray", NULL};

  assert_refused(NULL, flag, "unknown option \"--nope\"; see --help");
  assert_refused(NULL, stray, "unexpected argument \"stray\"; see --help");
  /* An unknown key is refused, and the message lists every key. */
  log_begin();
  ck_assert_int_eq(parse_with(&s, "{\"nope\": 1}", NULL), -1);
  text = log_end();
  settings_free(&s);
  ck_assert_ptr_nonnull(strstr(text, "key \"nope\": unknown key (known: "));
  for (size_t i = 0; i < n; i++)
    if (t[i].key != NULL) {
      char comma[64], last[64];
      snprintf(comma, sizeof(comma), " %s,", t[i].key);
      snprintf(last, sizeof(last), " %s)", t[i].key);
      ck_assert_msg(strstr(text, comma) || strstr(text, last),
                    "%s not listed in %s", t[i].key, text);
    }
  free(text);
  /* Booleans, levels and strings in the file have their types. */
  assert_refused("{\"watch\": 1}", NULL, "\"watch\": must be true or false");
  assert_refused("{\"logLevel\": \"loud\"}", NULL,
                 "\"logLevel\": must be error, warn, info or debug");
  assert_refused("{\"instructions\": 1}", NULL,
                 "\"instructions\": must be a string");
  assert_refused("{\"stateKeyFile\": \"\"}", NULL,
                 "\"stateKeyFile\": must be a non-empty string (a path)");
  {
    const char *level[] = {"--log-level", "loud", NULL};
    assert_refused(NULL, level,
                   "--log-level: \"loud\" is not error, warn, info or debug");
  }
}
END_TEST

START_TEST(test_help) {
  size_t n;
  const setting *t = settings_table(&n);
  char file[600], text[8192] = "";
  int fd;
  ssize_t got;

  snprintf(file, sizeof(file), "%s/settings-help-XXXXXX", tmp());
  fd = mkstemp(file);
  ck_assert_int_ge(fd, 0);
  unlink(file);
  settings_print_help("mcpd", fd);
  got = pread(fd, text, sizeof(text) - 1, 0);
  close(fd);
  ck_assert_int_gt(got, 0);
  ck_assert_ptr_eq(strstr(text, "Usage: mcpd [OPTION]...\n"), text);
  /* Each public flag, at the start of a line; internal ones nowhere. */
  for (size_t i = 0; i < n; i++) {
    char line[80];
    if (t[i].flag == NULL)
      continue;
    snprintf(line, sizeof(line), "\n  --%s ", t[i].flag);
    if (t[i].flags & SETTING_F_INTERNAL)
      ck_assert_msg(strstr(text, line) == NULL, "%s in --help", t[i].flag);
    else
      ck_assert_msg(strstr(text, line) != NULL, "%s not in --help", t[i].flag);
  }
  /* The columns help2roff.awk reads. */
  ck_assert_ptr_nonnull(strstr(text, "\n  --page-size N           items per "
                                     "tools/list page (default 1000)\n"));
  ck_assert_ptr_nonnull(strstr(text, "\n  --allow-insecure-plugins  load "));
  ck_assert_ptr_nonnull(strstr(text, "\n  --auth-jwt-issuer ISS\n  --auth"));
  ck_assert_ptr_nonnull(strstr(text, "\n                          (default "
                                     "1024; more get an error)\n"));
}
END_TEST

/* --- per plugin --------------------------------------------------------- */

START_TEST(test_deadlines) {
  settings s;
  const char *cli[] = {"--deadline", "7000", NULL};
  const plugin_settings *ps = &s.plugins;
  ck_assert_int_eq(
      parse_with(&s,
                 "{\"deadlineMs\": 9000, \"plugins\": {"
                 "\"a\": {\"key\": 1, \"mcpd\": {\"deadlineMs\": 500, "
                 "\"tools\": {\"slow\": {\"deadlineMs\": 60000}}}},"
                 "\"b\": {\"mcpd\": {\"tools\": {\"t\": {}}}}}}",
                 cli),
      0);
  /* The command line wins over the file. */
  ck_assert_uint_eq(plugin_settings_deadline(ps, "c", "x"), 7000);
  ck_assert_uint_eq(plugin_settings_deadline(ps, "a", "slow"), 60000);
  ck_assert_uint_eq(plugin_settings_deadline(ps, "a", "other"), 500);
  ck_assert_uint_eq(plugin_settings_deadline(ps, "a", NULL), 500);
  ck_assert_uint_eq(plugin_settings_deadline(ps, "b", "t"), 7000);
  /* The plugin's init() sees its own keys only. */
  {
    json_object *a = plugin_settings_config(ps, "a");
    ck_assert_ptr_nonnull(a);
    ck_assert(json_object_object_get_ex(a, "key", NULL));
    ck_assert(!json_object_object_get_ex(a, "mcpd", NULL));
  }
  settings_free(&s);

  ck_assert_int_eq(parse_with(&s, "{\"deadlineMs\": 9000}", NULL), 0);
  ck_assert_uint_eq(plugin_settings_deadline(ps, "any", NULL), 9000);
  settings_free(&s);
  ck_assert_int_eq(parse_with(&s, "{}", NULL), 0);
  ck_assert_uint_eq(plugin_settings_deadline(ps, "any", "t"),
                    MCPD_DEFAULT_DEADLINE_MS);
  settings_free(&s);
}
END_TEST

START_TEST(test_isolation) {
  settings s;
  const char *cli[] = {"--isolate", "a", "--isolate=b", NULL};
  const char *all[] = {"--isolate", NULL};
  ck_assert_int_eq(
      parse_with(&s,
                 "{\"plugins\": {\"c\": {\"mcpd\": {\"isolate\": true, "
                 "\"limits\": {\"cpuSeconds\": 5}}}}}",
                 cli),
      0);
  ck_assert(plugin_settings_isolated(&s.plugins, "a"));
  ck_assert(plugin_settings_isolated(&s.plugins, "b"));
  ck_assert(plugin_settings_isolated(&s.plugins, "c"));
  /* Isolation is the default. */
  ck_assert(plugin_settings_isolated(&s.plugins, "d"));
  ck_assert_uint_eq(plugin_settings_limit(&s.plugins, "c", "cpuSeconds"), 5);
  ck_assert_uint_eq(plugin_settings_limit(&s.plugins, "c", "openFiles"), 0);
  settings_free(&s);
  ck_assert_int_eq(parse_with(&s, NULL, all), 0);
  ck_assert(plugin_settings_isolated(&s.plugins, "any"));
  settings_free(&s);
  {
    const char *bad[] = {"--isolate", "no way", NULL};
    assert_refused(NULL, bad, "--isolate \"no way\": not a plugin name");
  }
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
    settings s;
    ck_assert_msg(parse_with(&s, bad[i], cli) == -1, "accepted %s", bad[i]);
    settings_free(&s);
  }
  {
    settings s;
    const char *neg[] = {"--deadline", "0", NULL};
    ck_assert_int_eq(parse_with(&s, "{}", neg), -1);
    settings_free(&s);
  }
}
END_TEST

/* --- worker mode -------------------------------------------------------- */

START_TEST(test_worker) {
  settings o;
  const char *argv[] = {"mcpd", "--worker", "/x/p.so", NULL};

  ck_assert_int_eq(parse_argv(&o, argv), 0);
  ck_assert_int_eq(o.mode, MODE_WORKER);
  ck_assert_str_eq(o.worker_path, "/x/p.so");
  ck_assert_int_eq(o.watch, 0);
  ck_assert_uint_eq(o.loader.n_plugin_dirs, 0);
  /* Its config comes from the host later (worker_hello.h): none yet,
   * whatever name the plugin has. */
  ck_assert_ptr_null(plugin_settings_config(&o.plugins, "p"));
  settings_free(&o);
}
END_TEST

/* Where each plugin runs: isolated unless something says otherwise, the
 * most specific word winning. */
START_TEST(test_in_process) {
  static const struct {
    const char *argv[6];
    const char *config;
    int echo, calc; /* plugin_settings_isolated() of each */
    int all;        /* plugin_settings_all_in_process() */
  } cases[] = {
      {{NULL}, "{}", 1, 1, 0},
      {{"--isolate", NULL}, "{}", 1, 1, 0},
      {{"--in-process", NULL}, "{}", 0, 0, 1},
      {{"--in-process", "echo", NULL}, "{}", 0, 1, 0},
      {{"--in-process", "--isolate", "calc", NULL}, "{}", 0, 1, 0},
      {{"--in-process", "--isolate", NULL}, "{}", 1, 1, 0},
      {{NULL},
       "{\"plugins\":{\"echo\":{\"mcpd\":{\"isolate\":false}}}}",
       0,
       1,
       0},
      {{"--in-process", NULL},
       "{\"plugins\":{\"calc\":{\"mcpd\":{\"isolate\":true}}}}",
       0,
       1,
       0},
      {{"--in-process", "echo", NULL},
       "{\"plugins\":{\"echo\":{\"mcpd\":{\"isolate\":true}}}}",
       0,
       1,
       0},
  };

  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    settings s;
    ck_assert_int_eq(parse_with(&s, cases[i].config, cases[i].argv), 0);
    ck_assert_msg(plugin_settings_isolated(&s.plugins, "echo") == cases[i].echo,
                  "case %zu: echo", i);
    ck_assert_msg(plugin_settings_isolated(&s.plugins, "calc") == cases[i].calc,
                  "case %zu: calc", i);
    ck_assert_msg(plugin_settings_all_in_process(&s.plugins) == cases[i].all,
                  "case %zu: all", i);
    settings_free(&s);
  }
  {
    settings s;
    const char *bad[] = {"--in-process", "no/such", NULL};
    ck_assert_int_eq(parse_with(&s, "{}", bad), -1);
    settings_free(&s);
  }
}
END_TEST

START_TEST(test_worker_refused) {
  static const char *const clash[][4] = {
      {"--plugins", "/tmp", NULL},       {"--list", NULL},
      {"--call", "echo", NULL},          {"--transport", "http", NULL},
      {"--listen", "127.0.0.1:1", NULL}, {"--config", "/dev/null", NULL},
      {"--worker-config-fd", "3", NULL}, {"--rlimit-nofile", "16", NULL},
  };
  settings o;

  for (size_t i = 0; i < sizeof(clash) / sizeof(clash[0]); i++) {
    const char *argv[8] = {"mcpd", "--log-level", "error", "--worker", "/x.so"};
    int argc = 5;
    for (size_t j = 0; clash[i][j] != NULL; j++)
      argv[argc++] = clash[i][j];
    argv[argc] = NULL;
    ck_assert_msg(parse_argv(&o, argv) == -1, "accepted %s", clash[i][0]);
    settings_free(&o);
  }
}
END_TEST

/* --help and --version end parsing: what follows them is not read. */
START_TEST(test_modes) {
  settings s;
  const char *help[] = {"mcpd", "--help", "--nope", NULL};
  const char *version[] = {"mcpd", "--version", "stray", NULL};
  const char *call[] = {"mcpd", "--call", "echo", "--args", "{}", NULL};
  const char *list[] = {"mcpd", "--list", NULL};
  ck_assert_int_eq(parse_argv(&s, help), 0);
  ck_assert_int_eq(s.mode, MODE_HELP);
  settings_free(&s);
  ck_assert_int_eq(parse_argv(&s, version), 0);
  ck_assert_int_eq(s.mode, MODE_VERSION);
  settings_free(&s);
  ck_assert_int_eq(parse_argv(&s, call), 0);
  ck_assert_int_eq(s.mode, MODE_CALL);
  ck_assert_str_eq(s.call_tool, "echo");
  ck_assert_str_eq(s.call_args, "{}");
  settings_free(&s);
  ck_assert_int_eq(parse_argv(&s, list), 0);
  ck_assert_int_eq(s.mode, MODE_LIST);
  settings_free(&s);
  {
    const char *args[] = {"--args", "{}", NULL};
    assert_refused(NULL, args, "--args goes with --call TOOL");
  }
}
END_TEST

Suite *settings_suite(void) {
  Suite *s = suite_create("settings");
  TCase *tc = tcase_create("table");
  tcase_add_test(tc, test_rows);
  tcase_add_test(tc, test_bounds);
  tcase_add_test(tc, test_bounds_accepted);
  tcase_add_test(tc, test_defaults);
  tcase_add_test(tc, test_command_line_wins);
  tcase_add_test(tc, test_plugin_dirs);
  tcase_add_test(tc, test_unknown);
  tcase_add_test(tc, test_help);
  tcase_add_test(tc, test_modes);
  suite_add_tcase(s, tc);
  tc = tcase_create("hosting");
  tcase_add_test(tc, test_deadlines);
  tcase_add_test(tc, test_isolation);
  tcase_add_test(tc, test_bad_hosting);
  suite_add_tcase(s, tc);
  tc = tcase_create("worker");
  tcase_add_test(tc, test_worker);
  tcase_add_test(tc, test_worker_refused);
  tcase_add_test(tc, test_in_process);
  suite_add_tcase(s, tc);
  return s;
}
