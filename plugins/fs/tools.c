/* SPDX-License-Identifier: MIT */
/* tools.c -- the tools of the "fs" plugin.
 *
 * Every tool runs on mcpd's pool (it touches the disk), takes the roots it
 * serves for this call (the configured ones, or its client's), resolves its
 * paths through resolve.c and works on the descriptors it opened.
 * Failures the model can act on are isError results that name the path and
 * the reason; a path outside the roots also names the roots.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/base64.h"
#include "../common/buf.h"
#include "../common/utf8.h"
#include "fs.h"
#include "roots.h"

/* Bounds of one search besides max_results: entries looked at and time. */
#define FS_SEARCH_MAX_ENTRIES 200000
#define FS_SEARCH_MAX_MS 10000

/* Ends the description of every tool's "path" argument. */
#define PATH_HINT                                                              \
  ": an absolute path under one of the allowed roots, or a path relative to "  \
  "the first root ('.' is that root)."

/* Answers the call with an isError result about `path`; returns MCPD_OK
 * (the call has its answer) or MCPD_ERROR when even that failed. */
static int path_error(mcpd_call *call, const mcpd_request *req,
                      const struct fs_roots *roots, const char *what,
                      const char *path, int code) {
  const mcpd_host *host = req->host;
  struct pc_buf b = {0};
  int rc;

  pc_buf_printf(&b, "cannot %s '%s': %s", what, path, fs_strerror(code));
  if (code == FS_E_OUTSIDE || code == FS_E_ESCAPE) {
    pc_buf_puts(&b, ". Allowed roots:");
    for (size_t i = 0; i < roots->n; i++)
      pc_buf_printf(&b, "%s %s", i ? "," : "", roots->v[i].path);
  }
  rc = host->result_error(call, "%s", b.failed ? "out of memory" : b.data);
  pc_buf_free(&b);
  return rc;
}

/* The string argument `key`, or NULL when absent.  Strings with a NUL
 * byte inside are refused: no path or pattern has one. */
static const char *string_arg(const mcpd_request *req, const char *key,
                              int *bad) {
  json_object *v;
  const char *s;

  if (!json_object_object_get_ex(req->arguments, key, &v) ||
      !json_object_is_type(v, json_type_string))
    return NULL;
  s = json_object_get_string(v);
  if (strlen(s) != (size_t)json_object_get_string_len(v))
    *bad = 1;
  return s;
}

/* Takes the call's roots into `roots` and resolves the "path" argument
 * against them into `t`.  Returns 0 when it did (release both when done);
 * otherwise the call has been answered, nothing is held and *ret is what
 * the callback returns. */
static int path_arg(mcpd_call *call, const mcpd_request *req, const char *what,
                    struct fs_roots *roots, struct fs_target *t,
                    const char **path_out, int *ret) {
  int bad = 0, rc;
  const char *path = string_arg(req, "path", &bad);

  t->rel = NULL;
  if (path == NULL || bad) {
    *ret = req->host->result_error(call, "argument 'path' must be a string "
                                         "without NUL characters");
    return -1;
  }
  *path_out = path;
  if ((rc = fs_roots_get(req, call, roots)) != FS_OK ||
      (rc = fs_locate(roots, path, t)) != FS_OK) {
    *ret = path_error(call, req, roots, what, path, rc);
    fs_roots_release(roots);
    return -1;
  }
  return 0;
}

static const char *type_name(mode_t mode) {
  if (S_ISREG(mode))
    return "file";
  if (S_ISDIR(mode))
    return "directory";
  if (S_ISLNK(mode))
    return "symlink";
  if (S_ISFIFO(mode))
    return "fifo";
  if (S_ISSOCK(mode))
    return "socket";
  if (S_ISCHR(mode))
    return "char_device";
  if (S_ISBLK(mode))
    return "block_device";
  return "unknown";
}

/* --- list_directory ------------------------------------------------------ */

static int list_directory(mcpd_call *call, const mcpd_request *req) {
  const struct fs_state *st = req->state;
  const mcpd_host *host = req->host;
  struct fs_roots roots;
  struct fs_target t;
  const char *path = NULL;
  struct fs_entry *e = NULL;
  size_t n = 0, shown;
  struct stat sb;
  struct pc_buf b = {0};
  char *abs = NULL;
  int fd, rc, more;

  if (path_arg(call, req, "list", &roots, &t, &path, &rc) != 0)
    return rc;
  fd = fs_open_read(st, &t, &sb);
  if (fd >= 0 && !S_ISDIR(sb.st_mode)) {
    close(fd);
    rc = host->result_error(call,
                            "cannot list '%s': it is a file, not a directory "
                            "(use read_file or stat)",
                            path);
    goto out;
  }
  if (fd < 0 ||
      (fd = fs_read_entries(fd, NULL, FS_DIR_MAX, &e, &n, &more)) < 0) {
    rc = path_error(call, req, &roots, "list", path, fd);
    goto out;
  }
  abs = fs_target_path(&t);
  shown = n < st->max_results ? n : st->max_results;
  if (shown < n || more)
    pc_buf_printf(&b, "%s: the first %zu entries by name\n", abs ? abs : path,
                  shown);
  else
    pc_buf_printf(&b, "%s: %zu entr%s\n", abs ? abs : path, n,
                  n == 1 ? "y" : "ies");
  for (size_t i = 0; i < shown; i++) {
    const char *type = e[i].mode ? type_name(e[i].mode) : "unknown";
    if (S_ISDIR(e[i].mode))
      pc_buf_printf(&b, "[%s] %s/\n", type, e[i].name);
    else if (S_ISREG(e[i].mode))
      pc_buf_printf(&b, "[%s] %s (%lld bytes)\n", type, e[i].name,
                    (long long)e[i].size);
    else if (e[i].target)
      pc_buf_printf(&b, "[%s] %s -> %s\n", type, e[i].name, e[i].target);
    else
      pc_buf_printf(&b, "[%s] %s\n", type, e[i].name);
  }
  if (shown < n || more)
    pc_buf_printf(&b,
                  "(%s%zu entries in all; the listing stops at %zu: use "
                  "search to find something specific)\n",
                  more ? "more than " : "", n, st->max_results);
  rc = b.failed ? host->result_error(call, "out of memory")
                : host->result_text_len(call, b.data, b.len);
out:
  fs_entries_free(e, n);
  pc_buf_free(&b);
  free(abs);
  fs_target_free(&t);
  fs_roots_release(&roots);
  return rc;
}

/* --- read_file ----------------------------------------------------------- */

static int is_image_type(const char *mime) {
  return strcmp(mime, "image/png") == 0 || strcmp(mime, "image/jpeg") == 0 ||
         strcmp(mime, "image/gif") == 0 || strcmp(mime, "image/webp") == 0;
}

static int64_t integer_arg(const mcpd_request *req, const char *key,
                           int64_t dflt) {
  json_object *v;

  if (!json_object_object_get_ex(req->arguments, key, &v) ||
      !json_object_is_type(v, json_type_int))
    return dflt;
  return json_object_get_int64(v);
}

static int read_file(mcpd_call *call, const mcpd_request *req) {
  const struct fs_state *st = req->state;
  const mcpd_host *host = req->host;
  struct fs_roots roots;
  struct fs_target t;
  const char *path = NULL;
  struct stat sb;
  char *data = NULL, *abs = NULL, *uri = NULL, *b64 = NULL;
  size_t n = 0, want, skip = 0;
  int64_t offset, length;
  int fd, rc;

  if (path_arg(call, req, "read", &roots, &t, &path, &rc) != 0)
    return rc;
  offset = integer_arg(req, "offset", 0);
  length = integer_arg(req, "length", -1);
  if (offset < 0 || (length != -1 && length < 1)) {
    rc = host->result_error(call, "offset must be >= 0 and length >= 1");
    goto out;
  }
  if ((fd = fs_open_read(st, &t, &sb)) < 0) {
    rc = path_error(call, req, &roots, "read", path, fd);
    goto out;
  }
  if (S_ISDIR(sb.st_mode)) {
    close(fd);
    rc = host->result_error(call,
                            "cannot read '%s': it is a directory (use "
                            "list_directory)",
                            path);
    goto out;
  }
  want = st->max_read_bytes;
  if (length != -1 && (uint64_t)length < want)
    want = (size_t)length;
  rc = offset > sb.st_size ? -EINVAL
                           : fs_read_all(fd, (off_t)offset, want, &data, &n);
  close(fd);
  if (rc == -EINVAL) {
    rc = host->result_error(call,
                            "cannot read '%s' at offset %lld: the file has "
                            "%lld bytes",
                            path, (long long)offset, (long long)sb.st_size);
    goto out;
  }
  if (rc < 0) {
    rc = path_error(call, req, &roots, "read", path, rc);
    goto out;
  }

  {
    int whole = offset == 0 && (off_t)n == sb.st_size;
    size_t cut = n;
    const char *mime = fs_mime_type(t.rel);

    if (!whole) {
      /* A range may start or end inside a UTF-8 sequence; trim those bytes
       * so a text file stays text. */
      while (skip < 3 && skip < n && offset > 0 &&
             ((unsigned char)data[skip] & 0xC0) == 0x80)
        skip++;
      cut = skip + pc_utf8_cut(data + skip, n - skip);
    }
    if (pc_utf8_is_text(data + skip, cut - skip)) {
      rc = host->result_text_len(call, data + skip, cut - skip);
      n = cut;
    } else {
      skip = 0;
      if ((b64 = pc_base64_encode((const unsigned char *)data, n)) == NULL ||
          (abs = fs_target_path(&t)) == NULL ||
          (uri = fs_path_uri(abs)) == NULL) {
        rc = host->result_error(call, "out of memory");
        goto out;
      }
      if (whole && is_image_type(mime)) {
        rc = host->result_image(call, b64, mime);
      } else {
        if (strncmp(mime, "text/", 5) == 0)
          mime = "application/octet-stream";
        rc = host->result_textf(call,
                                "'%s' is binary (%s); %zu bytes follow as a "
                                "base64 blob.",
                                path, mime, n);
        if (rc == MCPD_OK)
          rc = host->result_resource_blob(call, uri, mime, b64);
      }
    }
    if (rc == MCPD_OK && !whole) {
      long long start = (long long)offset + (long long)skip;
      long long end = (long long)offset + (long long)n;

      if (end < (long long)sb.st_size)
        rc = host->result_textf(call,
                                "[bytes %lld to %lld of %lld; read on with "
                                "offset %lld]",
                                start, end, (long long)sb.st_size, end);
      else
        rc = host->result_textf(call, "[bytes %lld to %lld of %lld]", start,
                                end, (long long)sb.st_size);
    }
  }
out:
  free(data);
  free(b64);
  free(abs);
  free(uri);
  fs_target_free(&t);
  fs_roots_release(&roots);
  return rc;
}

/* --- stat ---------------------------------------------------------------- */

static int stat_tool(mcpd_call *call, const mcpd_request *req) {
  const struct fs_state *st = req->state;
  const mcpd_host *host = req->host;
  struct fs_roots roots;
  struct fs_target t;
  const char *path = NULL;
  struct stat sb;
  char mtime[32], mode[8], target[4096] = "";
  char *abs = NULL;
  json_object *obj = NULL;
  int rc;

  if (path_arg(call, req, "stat", &roots, &t, &path, &rc) != 0)
    return rc;
  /* Looked at without being opened, so FIFOs and devices can be
   * described; a link as the last component is described itself, not
   * followed. */
  if ((rc = fs_stat_beneath(st, t.root, t.rel, 1, &sb, target,
                            sizeof(target))) != FS_OK) {
    rc = path_error(call, req, &roots, "stat", path, rc);
    goto out;
  }
  fs_iso8601(&FS_MTIM(&sb), mtime);
  snprintf(mode, sizeof(mode), "%04o", (unsigned)(sb.st_mode & 07777));
  if ((abs = fs_target_path(&t)) == NULL ||
      (obj = json_object_new_object()) == NULL) {
    rc = host->result_error(call, "out of memory");
    goto out;
  }
  json_object_object_add(obj, "path", json_object_new_string(abs));
  json_object_object_add(obj, "type",
                         json_object_new_string(type_name(sb.st_mode)));
  json_object_object_add(obj, "size", json_object_new_int64(sb.st_size));
  json_object_object_add(obj, "mode", json_object_new_string(mode));
  json_object_object_add(obj, "mtime", json_object_new_string(mtime));
  if (target[0])
    json_object_object_add(obj, "target", json_object_new_string(target));
  rc = host->result_textf(call,
                          "path: %s\ntype: %s\nsize: %lld\nmode: %s\n"
                          "mtime: %s%s%s",
                          abs, type_name(sb.st_mode), (long long)sb.st_size,
                          mode, mtime, target[0] ? "\ntarget: " : "", target);
  if (rc == MCPD_OK)
    rc = host->result_structured(call, obj);
  else
    json_object_put(obj);
out:
  free(abs);
  fs_target_free(&t);
  fs_roots_release(&roots);
  return rc;
}

/* --- search -------------------------------------------------------------- */

struct queue {
  char **items; /* relative to the search start; "" is the start */
  size_t head, n, cap;
};

static int queue_push(struct queue *q, char *item) {
  if (item == NULL)
    return -1;
  if (q->n == q->cap) {
    size_t cap = q->cap ? q->cap * 2 : 64;
    char **p = realloc(q->items, cap * sizeof(*p));
    if (p == NULL) {
      free(item);
      return -1;
    }
    q->items = p;
    q->cap = cap;
  }
  q->items[q->n++] = item;
  return 0;
}

static void queue_free(struct queue *q) {
  for (size_t i = q->head; i < q->n; i++)
    free(q->items[i]);
  free(q->items);
}

static char *join(const char *a, const char *b) {
  struct pc_buf buf = {0};

  if (b[0] == '\0')
    return strdup(a);
  if (a[0] && strcmp(a, ".") != 0) {
    pc_buf_puts(&buf, a);
    pc_buf_puts(&buf, "/");
  }
  pc_buf_puts(&buf, b);
  if (buf.failed) {
    pc_buf_free(&buf);
    return NULL;
  }
  return buf.data;
}

/* One search: where it starts, what it looks for, what it found so far. */
struct search {
  const struct fs_state *st;
  const struct fs_target *t; /* where it starts */
  const char *pattern;
  int substring;     /* mode "substring" on paths; else a glob on names */
  struct queue q;    /* the directories still to look through */
  struct pc_buf out; /* the matches, one a line */
  size_t matches, scanned, unreadable;
  long long deadline;
  const char *stopped; /* why it ended early ("max_results", ...), or NULL */
  int start_error;     /* the start could not be read: why */
};

/* Looks at one entry of the directory `dir_rel`: lists it when it matches
 * and queues it when it is a directory.  Returns 0, or -1 when out of
 * memory. */
static int search_entry(struct search *s, const char *dir_rel,
                        const struct fs_entry *e) {
  char *rel = join(dir_rel, e->name);
  int hit;

  if (rel == NULL)
    return -1;
  hit = s->substring ? strstr(rel, s->pattern) != NULL
                     : fnmatch(s->pattern, e->name, 0) == 0;
  if (hit) {
    if (s->matches == s->st->max_results) {
      s->stopped = "max_results";
    } else {
      pc_buf_printf(&s->out, "%s%s\n", rel, S_ISDIR(e->mode) ? "/" : "");
      s->matches++;
    }
  }
  if (S_ISDIR(e->mode) && s->stopped == NULL)
    return queue_push(&s->q, rel);
  free(rel);
  return 0;
}

/* Looks through the next directory of the queue.  Returns 0, or -1 when
 * out of memory.  A directory that cannot be read is counted, except the
 * start, whose code goes to start_error. */
static int search_directory(struct search *s) {
  char *dir_rel = s->q.items[s->q.head++];
  char *open_rel = join(s->t->rel, dir_rel);
  struct fs_entry *e = NULL;
  size_t n = 0;
  int fd, more, rc = 0;

  /* The start may be an in-root link, as for list_directory; below it,
   * links are not followed. */
  fd = open_rel
           ? fs_open_beneath(s->st, s->t->root, open_rel,
                             O_RDONLY | O_DIRECTORY | O_NONBLOCK, s->q.head > 1)
           : FS_E_NOMEM;
  free(open_rel);
  if (fd < 0 || fs_read_entries(fd, NULL, FS_SEARCH_MAX_ENTRIES - s->scanned,
                                &e, &n, &more) < 0) {
    if (s->q.head == 1)
      s->start_error = fd < 0 ? fd : -EIO;
    else
      s->unreadable++;
    free(dir_rel);
    return 0;
  }
  s->scanned += n;
  for (size_t i = 0; i < n && s->stopped == NULL && rc == 0; i++)
    rc = search_entry(s, dir_rel, &e[i]);
  fs_entries_free(e, n);
  free(dir_rel);
  if (rc != 0)
    return -1;
  if (s->stopped == NULL && (more || s->scanned >= FS_SEARCH_MAX_ENTRIES))
    s->stopped = "entries";
  if (s->stopped == NULL && fs_now_ms() > s->deadline)
    s->stopped = "time";
  return 0;
}

/* The result of a search that ran: its matches, and why it stopped early
 * if it did. */
static int search_report(mcpd_call *call, const mcpd_request *req,
                         const struct search *s, const char *path) {
  const mcpd_host *host = req->host;
  char *abs = fs_target_path(s->t);
  const char *where = abs ? abs : path;
  struct pc_buf text = {0};
  int rc;

  if (s->matches == 0)
    pc_buf_printf(&text, "No %s matches for '%s' under %s.\n",
                  s->substring ? "substring" : "glob", s->pattern, where);
  else
    pc_buf_printf(&text, "%zu match%s for '%s' under %s:\n%s", s->matches,
                  s->matches == 1 ? "" : "es", s->pattern, where, s->out.data);
  if (s->stopped && strcmp(s->stopped, "max_results") == 0)
    pc_buf_printf(&text,
                  "(truncated: stopped at max_results = %zu matches; "
                  "narrow the pattern or the path)\n",
                  s->st->max_results);
  else if (s->stopped && strcmp(s->stopped, "entries") == 0)
    pc_buf_printf(&text,
                  "(truncated: stopped after looking at %zu entries; "
                  "narrow the path)\n",
                  s->scanned);
  else if (s->stopped && strcmp(s->stopped, "time") == 0)
    pc_buf_printf(&text,
                  "(truncated: stopped after %d seconds; narrow the path)\n",
                  FS_SEARCH_MAX_MS / 1000);
  if (s->unreadable)
    pc_buf_printf(&text, "(%zu director%s could not be opened)\n",
                  s->unreadable, s->unreadable == 1 ? "y" : "ies");
  rc = text.failed ? host->result_error(call, "out of memory")
                   : host->result_text_len(call, text.data, text.len);
  pc_buf_free(&text);
  free(abs);
  return rc;
}

/* Breadth first from the start, bounded by max_results, the entries
 * looked at and the time taken. */
static int search(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  struct fs_roots roots;
  struct fs_target t;
  struct search s = {
      .st = req->state, .t = &t, .deadline = fs_now_ms() + FS_SEARCH_MAX_MS};
  const char *path = NULL, *mode;
  int bad = 0, rc;

  if (path_arg(call, req, "search", &roots, &t, &path, &rc) != 0)
    return rc;
  s.pattern = string_arg(req, "pattern", &bad);
  mode = string_arg(req, "mode", &bad);
  if (s.pattern == NULL || bad) {
    rc = host->result_error(call, "argument 'pattern' must be a string "
                                  "without NUL characters");
    goto out;
  }
  s.substring = mode && strcmp(mode, "substring") == 0;
  if (queue_push(&s.q, strdup("")) != 0)
    goto nomem;
  while (s.q.head < s.q.n && s.stopped == NULL) {
    if (host->cancelled(call)) {
      s.stopped = "cancelled";
      break;
    }
    if (search_directory(&s) != 0)
      goto nomem;
    if (s.start_error != 0) {
      rc = path_error(call, req, &roots, "search", path, s.start_error);
      goto out;
    }
  }
  if (s.out.failed)
    goto nomem;
  rc = search_report(call, req, &s, path);
  goto out;
nomem:
  rc = host->result_error(call, "out of memory");
out:
  queue_free(&s.q);
  pc_buf_free(&s.out);
  fs_target_free(&t);
  fs_roots_release(&roots);
  return rc;
}

/* --- write_file ---------------------------------------------------------- */

static int write_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t w = write(fd, data, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return -errno;
    data += w;
    len -= (size_t)w;
  }
  return 0;
}

static int write_file(mcpd_call *call, const mcpd_request *req) {
  static atomic_uint counter;
  const struct fs_state *st = req->state;
  const mcpd_host *host = req->host;
  struct fs_roots roots;
  struct fs_target t;
  const char *path = NULL, *content, *name;
  json_object *v;
  char *parent_rel = NULL, *abs = NULL, tmp[64];
  struct stat sb;
  size_t len;
  int rc, dirfd = -1, fd = -1, existed = 0, create_dirs = 0;
  mode_t mode = 0666;

  if (path_arg(call, req, "write", &roots, &t, &path, &rc) != 0)
    return rc;
  if (!json_object_object_get_ex(req->arguments, "content", &v) ||
      !json_object_is_type(v, json_type_string)) {
    rc = host->result_error(call, "argument 'content' must be a string");
    goto out;
  }
  content = json_object_get_string(v);
  len = (size_t)json_object_get_string_len(v);
  if (json_object_object_get_ex(req->arguments, "create_dirs", &v))
    create_dirs = json_object_get_boolean(v);
  if (strcmp(t.rel, ".") == 0) {
    rc = path_error(call, req, &roots, "write", path, -EISDIR);
    goto out;
  }
  if ((parent_rel = strdup(t.rel)) == NULL)
    goto nomem;
  {
    char *slash = strrchr(parent_rel, '/');
    if (slash) {
      *slash = '\0';
      name = t.rel + (slash - parent_rel) + 1;
    } else {
      strcpy(parent_rel, ".");
      name = t.rel;
    }
  }
  if (create_dirs && (rc = fs_mkdirs(st, t.root, parent_rel)) != FS_OK) {
    rc = path_error(call, req, &roots, "create the directories of", path, rc);
    goto out;
  }
  dirfd = fs_open_beneath(st, t.root, parent_rel, FS_O_DIR, 0);
  if (dirfd == -ENOENT && !create_dirs) {
    rc = host->result_error(call,
                            "cannot write '%s': its directory does not "
                            "exist (pass create_dirs: true to create it)",
                            path);
    goto out;
  }
  if (dirfd < 0) {
    rc = path_error(call, req, &roots, "write", path, dirfd);
    goto out;
  }
  if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
    if (!S_ISREG(sb.st_mode)) {
      rc = host->result_error(call,
                              "cannot write '%s': it exists and is a %s, not "
                              "a regular file",
                              path, type_name(sb.st_mode));
      goto out;
    }
    existed = 1;
    mode = sb.st_mode & 0777;
  } else if (errno != ENOENT) {
    rc = path_error(call, req, &roots, "write", path, -errno);
    goto out;
  }
  /* Write beside the target, then rename over it: readers see the old
   * content or the new one, never half of it.  O_EXCL | O_NOFOLLOW: the
   * temporary name cannot be a link planted by someone else. */
  for (int tries = 0; fd < 0 && tries < 16; tries++) {
    snprintf(tmp, sizeof(tmp), ".mcpd-write-%ld-%u.tmp", (long)getpid(),
             atomic_fetch_add(&counter, 1));
    fd = openat(dirfd, tmp,
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0) {
    rc = path_error(call, req, &roots, "write", path, -errno);
    goto out;
  }
  /* An existing file keeps its permissions, whatever the umask says. */
  if ((existed && fchmod(fd, mode) != 0) ||
      (rc = write_all(fd, content, len)) != 0 || fsync(fd) != 0 ||
      renameat(dirfd, tmp, dirfd, name) != 0) {
    int err = rc ? rc : -errno;
    unlinkat(dirfd, tmp, 0);
    rc = path_error(call, req, &roots, "write", path, err);
    goto out;
  }
  abs = fs_target_path(&t);
  rc = host->result_textf(call, "%s %s (%zu bytes)",
                          existed ? "Replaced" : "Created", abs ? abs : path,
                          len);
  goto out;
nomem:
  rc = host->result_error(call, "out of memory");
out:
  if (fd >= 0)
    close(fd);
  if (dirfd >= 0)
    close(dirfd);
  free(parent_rel);
  free(abs);
  fs_target_free(&t);
  fs_roots_release(&roots);
  return rc;
}

/* --- tables -------------------------------------------------------------- */

static const char list_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\",\"description\":\"The directory to "
    "list" PATH_HINT "\"}},"
    "\"required\":[\"path\"],\"additionalProperties\":false}";

static const char read_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\",\"description\":\"The file to read" PATH_HINT
    "\"},"
    "\"offset\":{\"type\":\"integer\",\"minimum\":0,"
    "\"description\":\"First byte to read (default 0).\"},"
    "\"length\":{\"type\":\"integer\",\"minimum\":1,"
    "\"description\":\"How many bytes to read at most (default and "
    "maximum: the server's limit).\"}},"
    "\"required\":[\"path\"],\"additionalProperties\":false}";

static const char stat_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\",\"description\":\"What to describe" PATH_HINT
    "\"}},"
    "\"required\":[\"path\"],\"additionalProperties\":false}";

static const char search_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\",\"description\":\"The directory to "
    "search" PATH_HINT "\"},"
    "\"pattern\":{\"type\":\"string\",\"minLength\":1,"
    "\"description\":\"A shell wildcard pattern for names (glob), or "
    "text to find in relative paths (substring).\"},"
    "\"mode\":{\"type\":\"string\",\"enum\":[\"glob\",\"substring\"],"
    "\"default\":\"glob\"}},"
    "\"required\":[\"path\",\"pattern\"],\"additionalProperties\":false}";

static const char write_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\",\"description\":\"The file to "
    "write" PATH_HINT "\"},"
    "\"content\":{\"type\":\"string\","
    "\"description\":\"The complete new content.\"},"
    "\"create_dirs\":{\"type\":\"boolean\",\"default\":false,"
    "\"description\":\"Create missing parent directories.\"}},"
    "\"required\":[\"path\",\"content\"],"
    "\"additionalProperties\":false}";

const mcpd_tool fs_tools[] = {
    {
        .name = "list_directory",
        .title = "List directory",
        .description =
            "Lists the entries of a directory under the allowed roots, "
            "sorted by name, with their type, size (files) and link target "
            "(symlinks).  Directories end with '/'.",
        .input_schema = list_schema,
        .call = list_directory,
        .exec = MCPD_EXEC_POOL,
        .read_only_hint = MCPD_HINT_TRUE,
        .destructive_hint = MCPD_HINT_FALSE,
        .idempotent_hint = MCPD_HINT_TRUE,
        .open_world_hint = MCPD_HINT_FALSE,
    },
    {
        .name = "read_file",
        .title = "Read file",
        .description =
            "Reads a file under the allowed roots.  Text (UTF-8) comes back "
            "as text, images (PNG, JPEG, GIF, WebP) as images, other binary "
            "files as a base64 resource blob.  Large files are cut at the "
            "server's limit; read the rest with offset and length (bytes).",
        .input_schema = read_schema,
        .call = read_file,
        .exec = MCPD_EXEC_POOL,
        .read_only_hint = MCPD_HINT_TRUE,
        .destructive_hint = MCPD_HINT_FALSE,
        .idempotent_hint = MCPD_HINT_TRUE,
        .open_world_hint = MCPD_HINT_FALSE,
    },
    {
        .name = "stat",
        .title = "File information",
        .description =
            "Describes a file, directory or link under the allowed roots: "
            "type, size in bytes, permission bits (octal), last "
            "modification time (ISO 8601, UTC) and, for a symbolic link, "
            "its target.  A link is described itself, not followed.",
        .input_schema = stat_schema,
        .output_schema =
            "{\"type\":\"object\",\"properties\":{"
            "\"path\":{\"type\":\"string\"},"
            "\"type\":{\"type\":\"string\",\"enum\":[\"file\",\"directory\","
            "\"symlink\",\"fifo\",\"socket\",\"char_device\","
            "\"block_device\",\"unknown\"]},"
            "\"size\":{\"type\":\"integer\",\"minimum\":0},"
            "\"mode\":{\"type\":\"string\"},"
            "\"mtime\":{\"type\":\"string\"},"
            "\"target\":{\"type\":\"string\"}},"
            "\"required\":[\"path\",\"type\",\"size\",\"mode\",\"mtime\"]}",
        .call = stat_tool,
        .exec = MCPD_EXEC_POOL,
        .read_only_hint = MCPD_HINT_TRUE,
        .destructive_hint = MCPD_HINT_FALSE,
        .idempotent_hint = MCPD_HINT_TRUE,
        .open_world_hint = MCPD_HINT_FALSE,
    },
    {
        .name = "search",
        .title = "Search files",
        .description =
            "Finds files and directories below a directory, breadth first, "
            "without following symbolic links.  mode \"glob\" (the default) "
            "matches the pattern against each entry's name with shell "
            "wildcards (*.md, report-??.txt); mode \"substring\" looks for "
            "the pattern in the path relative to the search directory "
            "(case-sensitive).  Results are bounded; the answer says when "
            "it was cut short.",
        .input_schema = search_schema,
        .call = search,
        .exec = MCPD_EXEC_POOL,
        .read_only_hint = MCPD_HINT_TRUE,
        .destructive_hint = MCPD_HINT_FALSE,
        .idempotent_hint = MCPD_HINT_TRUE,
        .open_world_hint = MCPD_HINT_FALSE,
    },
    MCPD_TOOL_END,
};

/* Added by init() only when the configuration says "write": true. */
const mcpd_tool fs_write_tool = {
    .name = "write_file",
    .title = "Write file",
    .description =
        "Creates or replaces a file under the allowed roots with the given "
        "UTF-8 text.  The write is atomic (a temporary file renamed over "
        "the target) and an existing file keeps its permissions.  Refuses "
        "directories, links and special files.  With create_dirs, missing "
        "parent directories are created.",
    .input_schema = write_schema,
    .call = write_file,
    .exec = MCPD_EXEC_POOL,
    .read_only_hint = MCPD_HINT_FALSE,
    .destructive_hint = MCPD_HINT_TRUE,
    .idempotent_hint = MCPD_HINT_TRUE,
    .open_world_hint = MCPD_HINT_FALSE,
};
