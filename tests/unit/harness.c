/* SPDX-License-Identifier: MIT */
/* harness.c -- a real server and session for the unit suites, without a
 * transport.  See unit.h. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jsonrpc.h"
#include "loader.h"
#include "log.h"
#include "unit.h"

/* Long enough for a loaded CI machine, short enough to fail with a message
 * before Check's own 4-second timeout kills the test without one. */
#define HARNESS_WAIT_MS 3000

int unit_known_bugs(void) {
  const char *v = getenv("MCPD_UNIT_KNOWN_BUGS");
  return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

char *unit_fd_text(int fd) {
  struct stat st;
  char *text;
  ck_assert_int_eq(fstat(fd, &st), 0);
  text = calloc(1, (size_t)st.st_size + 1);
  ck_assert_ptr_nonnull(text);
  ck_assert_int_eq(pread(fd, text, (size_t)st.st_size, 0), (ssize_t)st.st_size);
  return text;
}

static const char *tmp_base(void) {
  const char *base = getenv("TMPDIR");
  return base != NULL && base[0] == '/' ? base : "/tmp";
}

void harness_init(harness *h, const char *const *extra) {
  char *argv[32];
  int argc = 0;
  int fd;

  memset(h, 0, sizeof(*h));
  h->log_fd = -1;
  snprintf(h->dir, sizeof(h->dir), "%s/mcpd-unit-XXXXXX", tmp_base());
  ck_assert_msg(mkdtemp(h->dir) != NULL, "mkdtemp: %s", strerror(errno));
  ck_assert_int_eq(chmod(h->dir, 0700), 0);

  snprintf(h->log_path, sizeof(h->log_path), "%s/mcpd-unit-log-XXXXXX",
           tmp_base());
  fd = mkstemp(h->log_path);
  ck_assert_msg(fd >= 0, "mkstemp: %s", strerror(errno));
  h->log_fd = fd;
  log_set_fd(fd);
  log_set_level(LOG_LEVEL_INFO);

  argv[argc++] = (char *)"mcpd";
  argv[argc++] = (char *)"--plugins";
  argv[argc++] = h->dir;
  argv[argc++] = (char *)"--no-watch";
  /* These tests drive the host's own code paths; an `extra` --isolate
   * (the later word wins) sends plugins to workers. */
  argv[argc++] = (char *)"--in-process";
  for (size_t i = 0; extra != NULL && extra[i] != NULL; i++) {
    ck_assert_int_lt(argc, 31);
    argv[argc++] = (char *)extra[i];
  }
  argv[argc] = NULL;
  ck_assert_int_eq(settings_parse(&h->opts, argc, argv), 0);

  ck_assert_int_eq(uv_loop_init(&h->loop), 0);
  ck_assert_int_eq(server_init(&h->srv, &h->loop, &h->opts), 0);
  ck_assert_int_eq(uv_timer_init(&h->loop, &h->deadline), 0);
  h->deadline.data = h;
}

void harness_session(harness *h) {
  h->session = harness_open(h, &h->cap);
}

session *harness_open(harness *h, memory_transport *mt) {
  session *s;
  memory_transport_init(mt, NULL, NULL);
  s = server_open_session(&h->srv, memory_transport_write, mt);
  ck_assert_ptr_nonnull(s);
  return s;
}

static void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char path[PATH_MAX * 2];

  if (d == NULL)
    return;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

void harness_clear(harness *h) {
  memory_transport_clear(&h->cap);
}

int harness_calls_done(harness *h, void *arg) {
  (void)arg;
  return h->srv.exec.in_flight == 0;
}

size_t harness_count(const memory_transport *out, const char *needle) {
  size_t n = 0;
  for (size_t i = 0; i < out->n; i++)
    if (strstr(out->msgs[i], needle) != NULL)
      n++;
  return n;
}

void harness_free(harness *h) {
  char copy_dir[PATH_MAX] = "";
  struct stat st;

  if (h->srv.loader.files.copy_dir != NULL)
    snprintf(copy_dir, sizeof(copy_dir), "%s", h->srv.loader.files.copy_dir);
  /* Closes every session, unloads every plugin and closes every handle,
   * the deadline timer included; the loop then has nothing left to run. */
  h->session = NULL;
  server_shutdown(&h->srv, "test done");
  ck_assert_int_eq(uv_run(&h->loop, UV_RUN_DEFAULT), 0);
  ck_assert_msg(!h->srv.exit_hard, "calls were still running at exit");
  server_free(&h->srv);
  ck_assert_int_eq(uv_loop_close(&h->loop), 0);
  /* The private copies went with the plugins, and so did their folder
   * when one was needed (without memfd_create). */
  ck_assert_msg(copy_dir[0] == '\0' || stat(copy_dir, &st) != 0,
                "%s was left behind", copy_dir);
  settings_free(&h->opts);
  memory_transport_free(&h->cap);
  remove_tree(h->dir);
  log_set_fd(2);
  if (h->log_fd >= 0) {
    close(h->log_fd);
    unlink(h->log_path);
    h->log_fd = -1;
  }
}

const char *harness_path(harness *h, const char *name) {
  static char path[PATH_MAX * 2];
  snprintf(path, sizeof(path), "%s/%s", h->dir, name);
  return path;
}

static void write_file(const char *path, const char *data, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  size_t off = 0;

  ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
  while (off < len) {
    ssize_t w = write(fd, data + off, len - off);
    ck_assert_msg(w > 0, "write %s: %s", path, strerror(errno));
    off += (size_t)w;
  }
  /* Whatever the umask, the mode is exactly 0644. */
  ck_assert_int_eq(fchmod(fd, 0644), 0);
  ck_assert_int_eq(close(fd), 0);
}

static char *read_file(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  size_t cap = 65536, n = 0;
  char *buf;

  ck_assert_msg(fd >= 0, "open %s: %s (run `make check` to build it)", path,
                strerror(errno));
  buf = malloc(cap + 1);
  ck_assert_ptr_nonnull(buf);
  for (;;) {
    ssize_t r;
    if (n == cap) {
      cap *= 2;
      buf = realloc(buf, cap + 1);
      ck_assert_ptr_nonnull(buf);
    }
    r = read(fd, buf + n, cap - n);
    ck_assert_msg(r >= 0, "read %s: %s", path, strerror(errno));
    if (r == 0)
      break;
    n += (size_t)r;
  }
  close(fd);
  buf[n] = '\0';
  *len = n;
  return buf;
}

void harness_copy(harness *h, const char *fixture, const char *name) {
  char src[PATH_MAX * 2];
  char *data;
  size_t len;

  if (fixture[0] == '/')
    snprintf(src, sizeof(src), "%s", fixture);
  else
    snprintf(src, sizeof(src), "%s/%s", MCPD_FIXTURES_DIR, fixture);
  data = read_file(src, &len);
  write_file(harness_path(h, name), data, len);
  free(data);
}

void harness_write(harness *h, const char *name, const char *data, size_t len) {
  write_file(harness_path(h, name), data, len);
}

char *harness_log(harness *h) {
  size_t len;
  return read_file(h->log_path, &len);
}

size_t harness_error_lines(harness *h, char **out) {
  char *log = harness_log(h);
  size_t n = 0;

  if (out != NULL)
    *out = NULL;
  for (char *line = log, *end; *line != '\0'; line = end + 1) {
    end = strchr(line, '\n');
    if (end == NULL)
      end = line + strlen(line) - 1;
    if (strncmp(line, "mcpd: error: ", 13) == 0) {
      if (n == 0 && out != NULL)
        *out = strndup(line, (size_t)(end - line));
      n++;
    }
  }
  free(log);
  return n;
}

void harness_line(harness *h, const char *line) {
  ck_assert_ptr_nonnull(h->session);
  session_handle_line(h->session, line, strlen(line));
}

static void deadline_cb(uv_timer_t *timer) {
  harness *h = timer->data;
  h->timed_out = 1;
}

void harness_run_until(harness *h, int (*done)(harness *h, void *arg),
                       void *arg) {
  h->timed_out = 0;
  ck_assert_int_eq(
      uv_timer_start(&h->deadline, deadline_cb, HARNESS_WAIT_MS, 0), 0);
  while (!done(h, arg) && !h->timed_out)
    uv_run(&h->loop, UV_RUN_ONCE);
  uv_timer_stop(&h->deadline);
  ck_assert_msg(!h->timed_out, "nothing happened for %d ms (%zu messages)",
                HARNESS_WAIT_MS, h->cap.n);
}

static int have_n(harness *h, void *arg) {
  return h->cap.n >= *(size_t *)arg;
}

void harness_wait(harness *h, size_t n) {
  harness_run_until(h, have_n, &n);
}

void harness_turn(harness *h) {
  uv_run(&h->loop, UV_RUN_NOWAIT);
}

long harness_response_index(harness *h, int id) {
  for (size_t i = 0; i < h->cap.n; i++) {
    json_object *msg = harness_msg(h, i), *v;
    int match = json_object_is_type(msg, json_type_object) &&
                json_object_object_get_ex(msg, "id", &v) &&
                json_object_is_type(v, json_type_int) &&
                json_object_get_int(v) == id &&
                (json_object_object_get_ex(msg, "result", NULL) ||
                 json_object_object_get_ex(msg, "error", NULL));
    json_object_put(msg);
    if (match)
      return (long)i;
  }
  return -1;
}

static int have_response(harness *h, void *arg) {
  return harness_response_index(h, *(int *)arg) >= 0;
}

json_object *harness_response(harness *h, int id) {
  harness_run_until(h, have_response, &id);
  return harness_msg(h, (size_t)harness_response_index(h, id));
}

void harness_send_tool(harness *h, int id, const char *name, const char *args) {
  char line[2048];

  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"%s\"%s%s}}",
           id, name, args ? ",\"arguments\":" : "", args ? args : "");
  harness_line(h, line);
}

json_object *harness_tool(harness *h, int id, const char *name,
                          const char *args) {
  harness_send_tool(h, id, name, args);
  return harness_response(h, id);
}

json_object *harness_msg(harness *h, size_t i) {
  ck_assert_msg(i < h->cap.n, "message %zu of %zu", i, h->cap.n);
  return parse_json(h->cap.msgs[i]);
}

void harness_initialize(harness *h, const char *version) {
  char line[512];
  json_object *msg;

  snprintf(line, sizeof(line),
           "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\","
           "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
           "\"clientInfo\":{\"name\":\"unit\",\"version\":\"0\"}}}",
           version);
  harness_clear(h);
  harness_line(h, line);
  ck_assert_uint_eq(h->cap.n, 1);
  msg = harness_msg(h, 0);
  ck_assert_str_eq(
      json_object_get_string(json_path(msg, "result.protocolVersion")),
      era_negotiate(version));
  json_object_put(msg);
  harness_line(h, "{\"jsonrpc\":\"2.0\","
                  "\"method\":\"notifications/initialized\"}");
  ck_assert_uint_eq(h->cap.n, 1);
  harness_clear(h);
}

void harness_start_good(harness *h) {
  harness_init(h, NULL);
  harness_session(h);
  harness_copy(h, "good.so", "good.so");
  ck_assert_uint_eq(loader_scan(&h->srv.loader), 1);
  harness_turn(h);
  harness_initialize(h, "2025-11-25");
}

mcpd_self *harness_good_self(harness *h) {
  reg_entry *e = registry_find(&h->srv.registry, REG_TOOL, "add");
  ck_assert_ptr_nonnull(e);
  return &e->owner->self;
}

json_object *parse_json(const char *text) {
  json_object *obj = json_tokener_parse(text);
  ck_assert_msg(obj != NULL || strcmp(text, "null") == 0, "not valid JSON: %s",
                text);
  return obj;
}

json_object *json_path(json_object *obj, const char *path) {
  char buf[256];
  char *save = NULL;

  snprintf(buf, sizeof(buf), "%s", path);
  for (char *key = strtok_r(buf, ".", &save); key != NULL && obj != NULL;
       key = strtok_r(NULL, ".", &save)) {
    if (json_object_is_type(obj, json_type_array)) {
      char *end;
      long i = strtol(key, &end, 10);
      obj = *end == '\0' && i >= 0 ? json_object_array_get_idx(obj, (size_t)i)
                                   : NULL;
    } else if (!json_object_object_get_ex(obj, key, &obj)) {
      obj = NULL;
    }
  }
  return obj;
}

int response_error_code(json_object *msg) {
  json_object *code = json_path(msg, "error.code");
  return code != NULL ? json_object_get_int(code) : 0;
}

const char *plain(json_object *obj) {
  size_t len;
  return jsonrpc_to_string(obj, &len);
}
