/* SPDX-License-Identifier: MIT */
/* fs.c -- the "fs" plugin: browse, read, search and (when allowed) write
 * files under root directories.
 *
 * The roots come from the plugin's config object, or, when none are
 * configured, from the client: each call serves the roots its client
 * declared (call_roots()), opened for that call (roots.c).  Nothing
 * outside a call's roots is ever opened (resolve.c says how).  With
 * configured roots the files under them are registered as resources at
 * init, breadth first and bounded, so a client can list them; the template
 * file:///{+path} reads anything else under the roots and completes paths.
 * Resources can be subscribed to (watch.c).  The tools are in tools.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/base64.h"
#include "../common/buf.h"
#include "../common/plugin_config.h"
#include "../common/utf8.h"
#include "fs.h"
#include "roots.h"
#include "watch.h"

#define FS_DEFAULT_MAX_READ_BYTES (1024 * 1024)
#define FS_DEFAULT_MAX_RESULTS 1000
#define FS_DEFAULT_MAX_LISTED 500
/* How much the listing at init may look at before it gives up: init runs
 * on mcpd's loop thread. */
#define FS_LIST_MAX_ENTRIES 100000
#define FS_LIST_MAX_MS 2000
/* completion/complete answers at most this many values (MCP's limit). */
#define FS_COMPLETE_MAX 100

/* --- reading resources --------------------------------------------------- */

/* The JSON-RPC error for a failed open: anything that means "there is no
 * such resource here" is not found; the rest is the server's trouble. */
static int read_fail(mcpd_call *call, const mcpd_request *req, int code) {
  int not_found = code == FS_E_OUTSIDE || code == FS_E_ESCAPE ||
                  code == FS_E_SPECIAL || code == FS_E_SYMLINK ||
                  code == FS_E_BADURI || code == FS_E_NOROOTS ||
                  code == -ENOENT || code == -ENOTDIR;

  return req->host->fail(call,
                         not_found ? MCPD_ERR_NOT_FOUND : MCPD_ERR_INTERNAL,
                         "cannot read %s: %s", req->name, fs_strerror(code));
}

static int read_directory(mcpd_call *call, const mcpd_request *req, int fd) {
  const struct fs_state *st = req->state;
  struct fs_entry *e = NULL;
  struct pc_buf b = {0};
  size_t n = 0;
  int more, rc;

  if ((rc = fs_read_entries(fd, NULL, FS_DIR_MAX, &e, &n, &more)) < 0)
    return read_fail(call, req, rc);
  for (size_t i = 0; i < n && i < st->max_results; i++)
    pc_buf_printf(&b, "%s%s\n", e[i].name, S_ISDIR(e[i].mode) ? "/" : "");
  if (more || n > st->max_results)
    pc_buf_printf(&b, "(listing cut at %zu entries)\n", st->max_results);
  fs_entries_free(e, n);
  rc = b.failed ? req->host->fail(call, MCPD_ERR_INTERNAL, "out of memory")
                : req->host->result_resource_text(call, NULL, "inode/directory",
                                                  b.data ? b.data : "");
  pc_buf_free(&b);
  return rc;
}

/* Serves both the listed resources and the template: the URI says what to
 * read, and it is resolved again on every read. */
static int read_cb(mcpd_call *call, const mcpd_request *req) {
  const struct fs_state *st = req->state;
  const mcpd_host *host = req->host;
  struct fs_roots roots;
  struct fs_target t = {0};
  struct stat sb;
  char *data = NULL;
  size_t n = 0;
  int fd, rc;

  if ((rc = fs_roots_get(req, call, &roots)) != FS_OK ||
      (rc = fs_locate_uri(&roots, req->name, &t)) != FS_OK) {
    rc = read_fail(call, req, rc);
    goto out;
  }
  if ((fd = fs_open_read(st, &t, &sb)) < 0) {
    rc = read_fail(call, req, fd);
    goto out;
  }
  if (S_ISDIR(sb.st_mode)) {
    rc = read_directory(call, req, fd);
    goto out;
  }
  /* Read one byte more than allowed, so a file that grew since fstat is
   * caught too. */
  rc = (uint64_t)sb.st_size > st->max_read_bytes
           ? 0
           : fs_read_all(fd, 0, st->max_read_bytes + 1, &data, &n);
  close(fd);
  if (rc < 0) {
    rc = read_fail(call, req, rc);
  } else if ((uint64_t)sb.st_size > st->max_read_bytes ||
             n > st->max_read_bytes) {
    rc = host->fail(call, MCPD_ERR_INTERNAL,
                    "cannot read %s: it is %lld bytes, more than this "
                    "server's max_read_bytes (%zu); the read_file tool reads "
                    "it in parts",
                    req->name,
                    (long long)(n > (size_t)sb.st_size ? (off_t)n : sb.st_size),
                    st->max_read_bytes);
  } else {
    const char *mime = fs_mime_type(t.rel);

    if (pc_utf8_is_text(data, n)) {
      rc = host->result_resource_text(call, NULL, mime, data);
    } else {
      char *b64 = pc_base64_encode((const unsigned char *)data, n);

      if (strncmp(mime, "text/", 5) == 0)
        mime = "application/octet-stream";
      rc = b64 ? host->result_resource_blob(call, NULL, mime, b64)
               : host->fail(call, MCPD_ERR_INTERNAL, "out of memory");
      free(b64);
    }
  }
out:
  free(data);
  fs_target_free(&t);
  fs_roots_release(&roots);
  return rc;
}

/* --- completing template paths ------------------------------------------- */

/* Offers the roots that begin with what was typed ("" offers them all). */
static void complete_roots(mcpd_call *call, const struct fs_state *st,
                           const struct fs_roots *roots, const char *value,
                           size_t *added, size_t *total) {
  size_t vlen = strlen(value);

  for (size_t i = 0; i < roots->n; i++) {
    /* Without the leading '/': the template has it. */
    char *v = st->host->mprintf("%s/", roots->v[i].path + 1);

    if (v && strncmp(v, value, vlen) == 0) {
      (*total)++;
      if (*added < FS_COMPLETE_MAX &&
          st->host->completion_value(call, v) == MCPD_OK)
        (*added)++;
    }
    st->host->free(v);
  }
}

/* Completes the template's `path`: the entries of the directory typed so
 * far that begin with the last, partial component.  Dot files are offered
 * only once a '.' was typed. */
static int complete_cb(mcpd_call *call, const mcpd_request *req,
                       const char *argument, const char *value,
                       json_object *context) {
  const struct fs_state *st = req->state;
  const mcpd_host *host = req->host;
  const char *slash = strrchr(value, '/');
  size_t dirlen = slash ? (size_t)(slash - value) + 1 : 0;
  const char *prefix = value + dirlen;
  size_t added = 0, total = 0, n = 0;
  struct fs_roots roots;
  struct fs_target t = {0};
  struct fs_entry *e = NULL;
  struct stat sb;
  char *dir;
  int fd, more = 0, rc;

  (void)context;
  if (strcmp(argument, "path") != 0)
    return MCPD_OK;
  if (fs_roots_get(req, call, &roots) != FS_OK)
    return MCPD_OK; /* no roots: nothing to offer */
  if ((dir = host->mprintf("/%.*s", (int)dirlen, value)) == NULL) {
    fs_roots_release(&roots);
    return host->fail(call, MCPD_ERR_INTERNAL, "out of memory");
  }
  rc = fs_locate(&roots, dir, &t);
  host->free(dir);
  if (rc == FS_E_OUTSIDE) {
    /* Above the roots: offer the roots themselves. */
    complete_roots(call, st, &roots, value, &added, &total);
    goto done;
  }
  if (rc != FS_OK || (fd = fs_open_read(st, &t, &sb)) < 0)
    goto done; /* nothing to offer */
  if (!S_ISDIR(sb.st_mode)) {
    close(fd);
    goto done;
  }
  if (fs_read_entries(fd, prefix, FS_DIR_MAX, &e, &n, &more) < 0)
    goto done;
  for (size_t i = 0; i < n; i++) {
    if (e[i].name[0] == '.' && prefix[0] != '.')
      continue;
    total++;
    if (added < FS_COMPLETE_MAX) {
      char *v = host->mprintf("%.*s%s%s", (int)dirlen, value, e[i].name,
                              S_ISDIR(e[i].mode) ? "/" : "");
      if (v && host->completion_value(call, v) == MCPD_OK)
        added++;
      host->free(v);
    }
  }
done:
  if (total > added || more)
    host->completion_total(call, total, 1);
  fs_entries_free(e, n);
  fs_target_free(&t);
  fs_roots_release(&roots);
  return MCPD_OK;
}

/* --- resources listed at init -------------------------------------------- */

/* Nonzero when `abs` is another root than `self`: that root lists its own
 * files, so a root inside a root does not list them twice. */
static int is_other_root(const struct fs_state *st, size_t self,
                         const char *abs) {
  for (size_t i = 0; i < st->n_roots; i++) {
    if (i != self && strcmp(st->roots[i].path, abs) == 0)
      return 1;
  }
  return 0;
}

static int add_file(struct fs_state *st, const struct fs_root *root,
                    const char *rel) {
  struct fs_target t = {.root = root, .rel = (char *)rel};
  char *abs = fs_target_path(&t), *uri = abs ? fs_path_uri(abs) : NULL;
  mcpd_resource r = {
      .uri = uri,
      .name = rel,
      .description = abs,
      .mime_type = fs_mime_type(rel),
      .read = read_cb,
      .subscribe = fs_subscribe_cb,
      .exec = MCPD_EXEC_POOL,
  };
  int rc = -1;

  if (uri && st->host->add_resource(st->self, &r) == MCPD_OK)
    rc = 0;
  else if (uri)
    st->host->log(st->self, MCPD_LOG_DEBUG, "not listed: %s: %s", uri,
                  st->host->last_error());
  free(abs);
  free(uri);
  return rc;
}

static char *join_rel(const char *dir, const char *name) {
  size_t dl = strlen(dir), nl = strlen(name);
  char *p;

  if (strcmp(dir, ".") == 0)
    return strdup(name);
  if ((p = malloc(dl + nl + 2)) == NULL)
    return NULL;
  memcpy(p, dir, dl);
  p[dl] = '/';
  memcpy(p + dl + 1, name, nl + 1);
  return p;
}

/* Registers the files under the roots, breadth first and in name order,
 * up to max_listed.  What cannot be opened is skipped. */
static void list_files(struct fs_state *st) {
  long long deadline = fs_now_ms() + FS_LIST_MAX_MS;
  size_t listed = 0, looked = 0;
  const char *stopped = NULL;

  for (size_t r = 0; r < st->n_roots && listed < st->max_listed; r++) {
    char **queue = malloc(sizeof(*queue));
    size_t head = 0, n = 0, cap = 1;

    if (queue == NULL || (queue[n++] = strdup(".")) == NULL) {
      free(queue);
      stopped = "out of memory";
      break;
    }
    while (head < n && listed < st->max_listed && stopped == NULL) {
      char *dir = queue[head++];
      struct fs_entry *e = NULL;
      size_t ne = 0;
      int more, fd;

      fd = fs_open_beneath(st, &st->roots[r], dir,
                           O_RDONLY | O_DIRECTORY | O_NONBLOCK, 1);
      if (fd < 0 || fs_read_entries(fd, NULL, FS_LIST_MAX_ENTRIES - looked, &e,
                                    &ne, &more) < 0) {
        free(dir);
        continue;
      }
      looked += ne;
      for (size_t i = 0; i < ne && listed < st->max_listed; i++) {
        char *rel = join_rel(dir, e[i].name);
        int file;

        if (rel == NULL)
          continue;
        if (S_ISDIR(e[i].mode)) {
          struct fs_target t = {.root = &st->roots[r], .rel = rel};
          char *abs = fs_target_path(&t);
          if (abs && !is_other_root(st, r, abs)) {
            if (n == cap) {
              char **p = realloc(queue, cap * 2 * sizeof(*p));
              if (p != NULL) {
                queue = p;
                cap *= 2;
              }
            }
            if (n < cap) {
              queue[n++] = rel;
              rel = NULL;
            }
          }
          free(abs);
        } else if (S_ISREG(e[i].mode)) {
          /* Listed only when it can be read now. */
          file =
              fs_open_beneath(st, &st->roots[r], rel, O_RDONLY | O_NONBLOCK, 1);
          if (file >= 0) {
            close(file);
            if (add_file(st, &st->roots[r], rel) == 0)
              listed++;
          }
        }
        free(rel);
      }
      fs_entries_free(e, ne);
      free(dir);
      if (more || looked >= FS_LIST_MAX_ENTRIES)
        stopped = "entries";
      else if (fs_now_ms() > deadline)
        stopped = "time";
    }
    while (head < n)
      free(queue[head++]);
    free(queue);
  }
  if (listed == st->max_listed && st->max_listed > 0)
    stopped = "max_listed";
  if (stopped)
    st->host->log(st->self, MCPD_LOG_INFO,
                  "listed %zu files as resources, then stopped (%s%s); "
                  "file:///{+path} still reads every file under the roots",
                  listed, stopped,
                  strcmp(stopped, "max_listed") == 0 ? " reached" : "");
}

/* --- configuration ------------------------------------------------------- */

/* `key` as an integer in [lo, hi] into *out. */
static int config_size(const mcpd_host *host, char **errmsg, const char *key,
                       json_object *v, int64_t lo, int64_t hi, size_t *out) {
  int64_t n;

  if (config_int(host, errmsg, key, v, lo, hi, &n) != MCPD_OK)
    return MCPD_ERROR;
  *out = (size_t)n;
  return MCPD_OK;
}

/* Opens one configured root: "~" means $HOME, relative paths are relative
 * to mcpd's working directory, and symbolic links in it are resolved now,
 * once. */
static int add_root(struct fs_state *st, char **errmsg, size_t index,
                    const char *given) {
  const mcpd_host *host = st->host;
  const char *home = getenv("HOME");
  char *expanded = NULL;
  struct fs_root r;
  int rc;

  if (given[0] == '\0')
    return config_error(host, errmsg, "roots[%zu] is an empty string", index);
  if (given[0] == '~' && (given[1] == '\0' || given[1] == '/')) {
    if (home == NULL || home[0] != '/')
      return config_error(host, errmsg,
                          "roots[%zu] \"%s\": $HOME is not set to an "
                          "absolute path",
                          index, given);
    expanded = host->mprintf("%s%s", home, given + 1);
  } else if (given[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == NULL)
      return config_error(host, errmsg, "roots[%zu] \"%s\": getcwd: %s", index,
                          given, fs_strerror(-errno));
    expanded = host->mprintf("%s/%s", cwd, given);
  } else {
    expanded = host->mprintf("%s", given);
  }
  if (expanded == NULL)
    return config_error(host, errmsg, "out of memory");
  rc = fs_root_open(expanded, &r);
  host->free(expanded);
  if (rc != FS_OK)
    return config_error(host, errmsg, "roots[%zu] \"%s\": %s", index, given,
                        rc == -ENOTDIR ? "not a directory" : fs_strerror(rc));
  for (size_t i = 0; i < st->n_roots; i++) {
    if (strcmp(st->roots[i].path, r.path) == 0) {
      fs_root_close(&r); /* the same directory twice */
      return MCPD_OK;
    }
  }
  st->roots[st->n_roots++] = r;
  return MCPD_OK;
}

static int parse_config(struct fs_state *st, json_object *config,
                        char **errmsg) {
  const mcpd_host *host = st->host;
  json_object *roots = NULL;

  if (config == NULL)
    return MCPD_OK; /* fs_init() serves the clients' roots then */
  if (!json_object_is_type(config, json_type_object))
    return config_error(
        host, errmsg,
        "the config must be an object, e.g. {\"plugins\": {\"fs\": "
        "{\"roots\": [\"/home/me/notes\"]}}}");
  json_object_object_foreach(config, key, v) {
    int rc;

    if (strcmp(key, "roots") == 0) {
      roots = v;
      continue;
    } else if (strcmp(key, "write") == 0) {
      rc = config_bool(host, errmsg, key, v, &st->write);
    } else if (strcmp(key, "use_openat2") == 0) {
      rc = config_bool(host, errmsg, key, v, &st->use_openat2);
    } else if (strcmp(key, "max_read_bytes") == 0) {
      rc = config_size(host, errmsg, key, v, 1, (int64_t)1 << 30,
                       &st->max_read_bytes);
    } else if (strcmp(key, "max_results") == 0) {
      rc = config_size(host, errmsg, key, v, 1, 1000000, &st->max_results);
    } else if (strcmp(key, "max_listed") == 0) {
      rc = config_size(host, errmsg, key, v, 0, 100000, &st->max_listed);
    } else {
      rc = config_error(host, errmsg,
                        "unknown key \"%s\" (known: roots, write, "
                        "max_read_bytes, max_results, max_listed, "
                        "use_openat2)",
                        key);
    }
    if (rc != MCPD_OK)
      return rc;
  }
  if (roots == NULL) {
    /* Limits may be tuned for the clients' roots; writing needs roots
     * the operator chose. */
    if (st->write)
      return config_error(host, errmsg,
                          "\"write\": true needs \"roots\": writing is "
                          "never offered under the clients' roots");
    return MCPD_OK;
  }
  if (!json_object_is_type(roots, json_type_array) ||
      json_object_array_length(roots) == 0)
    return config_error(host, errmsg,
                        "\"roots\" must be a non-empty array of directory "
                        "paths, e.g. \"roots\": [\"/home/me/notes\"]");
  {
    size_t n = json_object_array_length(roots);

    if ((st->roots = calloc(n, sizeof(*st->roots))) == NULL)
      return config_error(host, errmsg, "out of memory");
    for (size_t i = 0; i < n; i++) {
      json_object *item = json_object_array_get_idx(roots, i);

      if (!json_object_is_type(item, json_type_string))
        return config_error(host, errmsg, "roots[%zu] must be a string", i);
      if (add_root(st, errmsg, i, json_object_get_string(item)) != MCPD_OK)
        return MCPD_ERROR;
    }
  }
  return MCPD_OK;
}

static const mcpd_resource_template templates[] = {
    {
        .uri_template = "file:///{+path}",
        .name = "file",
        .title = "File or directory",
        .description =
            "Reads any file under the directories this server was given "
            "(its roots), also those not in the resource list.  A "
            "directory reads as its entries, one per line, directories "
            "ending in '/'.  Paths complete.",
        .read = read_cb,
        .complete = complete_cb,
        .subscribe = fs_subscribe_cb,
        .exec = MCPD_EXEC_POOL,
    },
    MCPD_RESOURCE_TEMPLATE_END,
};

/* --- init and fini ------------------------------------------------------- */

static void fs_fini(void *state) {
  struct fs_state *st = state;

  if (st == NULL)
    return;
  if (st->n_roots == 0)
    st->host->on_roots_changed(st->self, NULL, NULL);
  fs_roots_listen(st, NULL, NULL);
  fs_watch_free(st->watch);
  for (size_t i = 0; i < st->n_roots; i++)
    fs_root_close(&st->roots[i]);
  free(st->roots);
  free(st->seen);
  pthread_mutex_destroy(&st->seen_lock);
  free(st);
}

static int fs_init(const mcpd_host *host, mcpd_self *self, json_object *config,
                   void **state, char **errmsg) {
  struct fs_state *st = calloc(1, sizeof(*st));

  if (st == NULL || pthread_mutex_init(&st->seen_lock, NULL) != 0) {
    free(st);
    *errmsg = host->mprintf("out of memory");
    return MCPD_ERROR;
  }
  *state = st; /* fini() frees it, also when init fails */
  st->host = host;
  st->self = self;
  st->use_openat2 = 1;
  st->max_read_bytes = FS_DEFAULT_MAX_READ_BYTES;
  st->max_results = FS_DEFAULT_MAX_RESULTS;
  st->max_listed = FS_DEFAULT_MAX_LISTED;
  if (parse_config(st, config, errmsg) != MCPD_OK)
    return MCPD_ERROR;
#ifndef MCPD_PORTABLE
  if (st->use_openat2 &&
      !fs_have_openat2(st->n_roots > 0 ? st->roots[0].fd : AT_FDCWD)) {
    st->use_openat2 = 0;
    host->log(self, MCPD_LOG_INFO,
              "openat2(2) is not available; opening paths one component at "
              "a time, without following symbolic links");
  }
#endif
  if (st->n_roots == 0) {
    /* Installed but not configured (a config that names no roots is
     * refused above): serve each client its own roots, read-only.  There
     * is nothing to list as resources, since the roots are known per call
     * only. */
    if (host->on_roots_changed(self, fs_roots_changed_cb, st) != MCPD_OK) {
      *errmsg = host->mprintf("on_roots_changed: %s", host->last_error());
      return MCPD_ERROR;
    }
    host->log(self, MCPD_LOG_INFO,
              "no roots configured; serving each client's own roots "
              "(read-only, none listed as resources; set \"roots\" under "
              "plugins.fs in mcpd's --config file to serve fixed "
              "directories)");
    return MCPD_OK;
  }
  if (st->write && host->add_tool(self, &fs_write_tool) != MCPD_OK) {
    *errmsg = host->mprintf("cannot offer write_file: %s", host->last_error());
    return MCPD_ERROR;
  }
  list_files(st);
  host->log(self, MCPD_LOG_INFO,
            "serving the %zu configured root%s; clients' roots are ignored",
            st->n_roots, st->n_roots == 1 ? "" : "s");
  for (size_t i = 0; i < st->n_roots; i++)
    host->log(self, MCPD_LOG_INFO, "serving %s (%s)", st->roots[i].path,
              st->write ? "read-write" : "read-only");
  return MCPD_OK;
}

MCPD_PLUGIN_DEFINE(.name = "fs", .version = "1.0",
                   .description = "Browse, read, search and optionally write "
                                  "files under configured directories, or "
                                  "the client's roots.",
                   .init = fs_init, .fini = fs_fini, .tools = fs_tools,
                   .resource_templates = templates);
