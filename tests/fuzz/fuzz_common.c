/* SPDX-License-Identifier: MIT */
/* fuzz_common.c -- the server set-up and the independent message checks
 * the harnesses share.  See fuzz_common.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json_visit.h>

#include "fuzz_common.h"
#include "log.h"
#include "registry.h"

void fuzz_fail(const char *file, int line, const char *cond, const char *fmt,
               ...) {
  va_list ap;
  fprintf(stderr, "\n==fuzz== invariant violated at %s:%d: %s\n==fuzz== ", file,
          line, cond);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  abort();
}

/* --- the server ----------------------------------------------------------- */

static void copy_file(const char *from, const char *to) {
  int in = open(from, O_RDONLY | O_CLOEXEC), out;
  char buf[65536];
  ssize_t n;

  if (in < 0) {
    fprintf(stderr,
            "fuzz: cannot open %s: %s (build it with tests/fuzz/build.sh, or "
            "set MCPD_FUZZ_PLUGIN_DIR)\n",
            from, strerror(errno));
    exit(1);
  }
  out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    fprintf(stderr, "fuzz: cannot create %s: %s\n", to, strerror(errno));
    exit(1);
  }
  while ((n = read(in, buf, sizeof(buf))) > 0)
    if (write(out, buf, (size_t)n) != n) {
      fprintf(stderr, "fuzz: cannot write %s: %s\n", to, strerror(errno));
      exit(1);
    }
  fchmod(out, 0644);
  close(in);
  close(out);
}

/* Where the plugins were built: $MCPD_FUZZ_PLUGIN_DIR, else the directory
 * of the fuzzer binary. */
static void plugin_dir(char *out, size_t len) {
  const char *env = getenv("MCPD_FUZZ_PLUGIN_DIR");
  char self[PATH_MAX];
  ssize_t n;
  char *slash;

  if (env != NULL && env[0] != '\0') {
    snprintf(out, len, "%s", env);
    return;
  }
  n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) {
    snprintf(out, len, ".");
    return;
  }
  self[n] = '\0';
  slash = strrchr(self, '/');
  if (slash != NULL)
    *slash = '\0';
  snprintf(out, len, "%s", self);
}

void fuzz_server_init(fuzz_server *fs, const char *const *plugins,
                      const char *const *tools, const char *const *extra) {
  const char *tmp = getenv("TMPDIR");
  char from_dir[PATH_MAX], from[PATH_MAX * 2], copy[PATH_MAX * 2];
  char *argv[32];
  int argc = 0;

  memset(fs, 0, sizeof(*fs));
  if (getenv("MCPD_FUZZ_LOG") != NULL) {
    log_set_level(LOG_LEVEL_DEBUG);
  } else {
    int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (fd >= 0)
      log_set_fd(fd);
    log_set_level(LOG_LEVEL_ERROR);
  }

  snprintf(fs->dir, sizeof(fs->dir), "%s/mcpd-fuzz-XXXXXX",
           tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
  if (mkdtemp(fs->dir) == NULL || chmod(fs->dir, 0700) != 0) {
    fprintf(stderr, "fuzz: mkdtemp %s: %s\n", fs->dir, strerror(errno));
    exit(1);
  }
  plugin_dir(from_dir, sizeof(from_dir));
  for (size_t i = 0; plugins[i] != NULL; i++) {
    snprintf(from, sizeof(from), "%s/%s", from_dir, plugins[i]);
    snprintf(copy, sizeof(copy), "%s/%s", fs->dir, plugins[i]);
    copy_file(from, copy);
  }

  argv[argc++] = (char *)"mcpd";
  argv[argc++] = (char *)"--plugins";
  argv[argc++] = fs->dir;
  argv[argc++] = (char *)"--no-watch";
  /* The harness drives mcpd's own code in one process: no worker. */
  argv[argc++] = (char *)"--in-process";
  for (size_t i = 0; extra != NULL && extra[i] != NULL && argc < 31; i++)
    argv[argc++] = (char *)extra[i];
  argv[argc] = NULL;
  if (settings_parse(&fs->opts, argc, argv) != 0 ||
      uv_loop_init(&fs->loop) != 0 ||
      server_init(&fs->srv, &fs->loop, &fs->opts) != 0 ||
      server_start(&fs->srv, 0) != 0) {
    fprintf(stderr, "fuzz: cannot set up the server\n");
    exit(1);
  }
  for (size_t i = 0; tools[i] != NULL; i++)
    if (registry_find(&fs->srv.registry, REG_TOOL, tools[i]) == NULL) {
      fprintf(stderr,
              "fuzz: tool %s did not load from %s (run with "
              "MCPD_FUZZ_LOG=1)\n",
              tools[i], from_dir);
      exit(1);
    }
  /* Loaded from private copies; nothing rescans the directory. */
  for (size_t i = 0; plugins[i] != NULL; i++) {
    snprintf(copy, sizeof(copy), "%s/%s", fs->dir, plugins[i]);
    unlink(copy);
  }
  rmdir(fs->dir);
  fuzz_server_turn(fs);
}

void fuzz_server_turn(fuzz_server *fs) {
  for (int i = 0; i < 4; i++)
    uv_run(&fs->loop, UV_RUN_NOWAIT);
}

/* --- independent checks --------------------------------------------------- */

size_t fuzz_utf8_prefix(const char *text, size_t n) {
  const unsigned char *s = (const unsigned char *)text;
  size_t i = 0;

  while (i < n) {
    unsigned c = s[i], cp, need, min;
    if (c < 0x80) {
      i++;
      continue;
    }
    if ((c & 0xE0) == 0xC0)
      need = 1, cp = c & 0x1F, min = 0x80;
    else if ((c & 0xF0) == 0xE0)
      need = 2, cp = c & 0x0F, min = 0x800;
    else if ((c & 0xF8) == 0xF0)
      need = 3, cp = c & 0x07, min = 0x10000;
    else
      return i;
    if (n - i <= need)
      return i;
    for (size_t k = 1; k <= need; k++) {
      if ((s[i + k] & 0xC0) != 0x80)
        return i;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return i;
    i += need + 1;
  }
  return n;
}

int fuzz_utf8_valid(const char *text, size_t n) {
  return fuzz_utf8_prefix(text, n) == n;
}

json_object *fuzz_parse_strict(const char *text, size_t n, const char **why) {
  /* A fresh tokener each time: json-c 0.16's json_tokener_reset() keeps a
   * pending high surrogate, so a reused one would misread the next line
   * (mcpd never lets one reach json-c; this reference parser would). */
  json_tokener *tok;
  json_object *obj;
  enum json_tokener_error err;
  size_t end;

  *why = NULL;
  tok = json_tokener_new_ex(1024);
  FUZZ_CHECK(tok != NULL, "out of memory");
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
  obj = json_tokener_parse_ex(tok, text, (int)n);
  err = json_tokener_get_error(tok);
  if (err == json_tokener_continue && obj == NULL) {
    /* A bare number or literal waits for a delimiter. */
    obj = json_tokener_parse_ex(tok, "", 1);
    err = json_tokener_get_error(tok);
    end = n;
  } else {
    end = json_tokener_get_parse_end(tok);
  }
  json_tokener_free(tok);
  if (err != json_tokener_success) {
    *why = err == json_tokener_continue ? "truncated JSON"
                                        : json_tokener_error_desc(err);
    json_object_put(obj);
    return NULL;
  }
  /* JSON whitespace may follow (a line may end in a CR). */
  for (; end < n; end++)
    if (text[end] != ' ' && text[end] != '\t' && text[end] != '\r' &&
        text[end] != '\n') {
      *why = "data after the JSON value";
      json_object_put(obj);
      return NULL;
    }
  return obj;
}

static int nonfinite_cb(json_object *v, int flags, json_object *parent,
                        const char *key, size_t *index, void *arg) {
  (void)flags, (void)parent, (void)key, (void)index, (void)arg;
  if (json_object_is_type(v, json_type_double) &&
      !isfinite(json_object_get_double(v)))
    return JSON_C_VISIT_RETURN_ERROR;
  return JSON_C_VISIT_RETURN_CONTINUE;
}

/* Raw control characters: none inside strings, only tabs outside. */
static const char *control_chars(const char *s, size_t n) {
  int in_string = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (in_string) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_string = 0;
      else if (c < 0x20)
        return "raw control character inside a string";
    } else if (c == '"') {
      in_string = 1;
    } else if (c < 0x20 && c != '\t') {
      return "raw control character";
    }
  }
  return NULL;
}

static int valid_id(json_object *id) {
  return id == NULL || json_object_is_type(id, json_type_string) ||
         json_object_is_type(id, json_type_int);
}

static void check_response(json_object *msg, const char *text, int in_batch) {
  json_object *v, *id, *err, *code;
  int has_result, has_error;

  FUZZ_CHECK(json_object_is_type(msg, json_type_object),
             "message is not an object: %s", text);
  FUZZ_CHECK(json_object_object_get_ex(msg, "jsonrpc", &v) &&
                 json_object_is_type(v, json_type_string) &&
                 strcmp(json_object_get_string(v), "2.0") == 0,
             "no \"jsonrpc\":\"2.0\": %s", text);
  if (json_object_object_get_ex(msg, "method", &v)) {
    FUZZ_CHECK(!in_batch, "notification inside a batch reply: %s", text);
    FUZZ_CHECK(json_object_is_type(v, json_type_string),
               "method is not a string: %s", text);
    FUZZ_CHECK(!json_object_object_get_ex(msg, "id", NULL),
               "mcpd sent a request (it sends none yet): %s", text);
    return;
  }
  FUZZ_CHECK(json_object_object_get_ex(msg, "id", &id),
             "response without id: %s", text);
  FUZZ_CHECK(valid_id(id), "response id is not null, string or integer: %s",
             text);
  has_result = json_object_object_get_ex(msg, "result", &v);
  has_error = json_object_object_get_ex(msg, "error", &err);
  FUZZ_CHECK(has_result != has_error,
             "response needs exactly one of result and error: %s", text);
  if (has_result) {
    FUZZ_CHECK(json_object_is_type(v, json_type_object),
               "result is not an object: %s", text);
    return;
  }
  FUZZ_CHECK(json_object_is_type(err, json_type_object),
             "error is not an object: %s", text);
  FUZZ_CHECK(json_object_object_get_ex(err, "code", &code) &&
                 json_object_is_type(code, json_type_int),
             "error.code is not an integer: %s", text);
  FUZZ_CHECK(json_object_object_get_ex(err, "message", &v) &&
                 json_object_is_type(v, json_type_string),
             "error.message is not a string: %s", text);
}

json_object *fuzz_check_message(const char *text, size_t len) {
  json_object *msg;
  const char *why;

  FUZZ_CHECK(strlen(text) == len, "message holds a NUL byte at %zu of %zu",
             strlen(text), len);
  FUZZ_CHECK(memchr(text, '\n', len) == NULL,
             "raw newline in a message (it would split the stream): %s", text);
  FUZZ_CHECK(memchr(text, '\r', len) == NULL, "raw CR in a message: %s", text);
  FUZZ_CHECK(fuzz_utf8_valid(text, len), "message is not valid UTF-8: %s",
             text);
  why = control_chars(text, len);
  FUZZ_CHECK(why == NULL, "%s: %s", why, text);
  msg = fuzz_parse_strict(text, len, &why);
  FUZZ_CHECK(msg != NULL, "message is not strict JSON (%s): %s",
             why ? why : "null", text);
  FUZZ_CHECK(json_c_visit(msg, 0, nonfinite_cb, NULL) == 0,
             "message holds NaN or Infinity: %s", text);
  if (json_object_is_type(msg, json_type_array)) {
    size_t n = json_object_array_length(msg);
    FUZZ_CHECK(n > 0, "empty batch reply: %s", text);
    for (size_t i = 0; i < n; i++)
      check_response(json_object_array_get_idx(msg, i), text, 1);
  } else {
    check_response(msg, text, 0);
  }
  return msg;
}

const char *fuzz_id_text(json_object *id) {
  if (id == NULL)
    return "null";
  return json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN |
                                                JSON_C_TO_STRING_NOSLASHESCAPE);
}
