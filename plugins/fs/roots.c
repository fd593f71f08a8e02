/* SPDX-License-Identifier: MIT */
/* roots.c -- the roots of the "fs" plugin: opening a directory as a root,
 * the roots a call serves (the configured ones, or the client's), and the
 * client roots the latest call saw, kept for subscriptions.
 *
 * This file sits below fs.c (configuration, resources), tools.c and
 * watch.c, and calls none of them: the watcher learns that the roots seen
 * changed through the listener it registers with fs_roots_listen().
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "roots.h"

/* Opens the directory at the absolute path `abs` as a root into *r:
 * symbolic links in its path are resolved now, once.  Returns FS_OK or a
 * negative code (-ENOTDIR: not a directory). */
int fs_root_open(const char *abs, struct fs_root *r) {
  char *real, *clean = NULL;
  int fd, rc;

  if ((real = realpath(abs, NULL)) == NULL)
    return -errno;
  if ((fd = open(real, FS_O_DIR | O_CLOEXEC)) < 0) {
    rc = -errno;
    free(real);
    return rc;
  }
  if ((rc = fs_clean_path(abs, 1, &clean)) != FS_OK) {
    close(fd);
    free(real);
    return rc;
  }
  r->path = real;
  r->len = strlen(real);
  r->fd = fd;
  r->given = strcmp(clean, real) != 0 ? clean : NULL;
  if (r->given == NULL)
    free(clean);
  return FS_OK;
}

void fs_root_close(struct fs_root *r) {
  free(r->path);
  free(r->given);
  close(r->fd);
}

/* Opens the client's roots listed in `list` (call_roots()'s array) into
 * *out: file:// URIs of local directories that exist, each once.  The rest
 * is skipped with a log line, at `level`. */
static int roots_open(const struct fs_state *st, json_object *list,
                      struct fs_roots *out, mcpd_log_level level) {
  size_t n = json_object_is_type(list, json_type_array)
                 ? json_object_array_length(list)
                 : 0;

  memset(out, 0, sizeof(*out));
  out->owned = 1;
  if (n == 0)
    return FS_E_NOROOTS;
  if ((out->v = calloc(n, sizeof(*out->v))) == NULL)
    return FS_E_NOMEM;
  for (size_t i = 0; i < n; i++) {
    json_object *uri = NULL;
    const char *text = NULL;
    char *path = NULL;
    struct fs_root r;
    int rc = FS_E_BADURI, dup = 0;

    if (json_object_object_get_ex(json_object_array_get_idx(list, i), "uri",
                                  &uri) &&
        json_object_is_type(uri, json_type_string)) {
      text = json_object_get_string(uri);
      /* A NUL inside would cut the path short: not a URI we serve. */
      if (strlen(text) == (size_t)json_object_get_string_len(uri) &&
          (rc = fs_uri_path(text, &path)) == FS_OK)
        rc = fs_root_open(path, &r);
      free(path);
    }
    if (rc != FS_OK) {
      st->host->log(st->self, level, "the client's root %s is not served: %s",
                    text ? text : "(no \"uri\")",
                    rc == -ENOTDIR ? "not a directory" : fs_strerror(rc));
      continue;
    }
    for (size_t j = 0; j < out->n && !dup; j++)
      dup = strcmp(out->v[j].path, r.path) == 0;
    if (dup)
      fs_root_close(&r);
    else
      out->v[out->n++] = r;
  }
  if (out->n == 0) {
    free(out->v);
    out->v = NULL;
    return FS_E_NOROOTS;
  }
  return FS_OK;
}

int fs_roots_get(const mcpd_request *req, mcpd_call *call,
                 struct fs_roots *out) {
  struct fs_state *st = req->state;
  json_object *list;
  const char *text;
  int changed = 0, rc;

  memset(out, 0, sizeof(*out));
  if (st->n_roots > 0) {
    /* Configured roots win; the client's are not even looked at. */
    out->v = st->roots;
    out->n = st->n_roots;
    return FS_OK;
  }
  if ((list = req->host->call_roots(call)) == NULL) {
    json_object *result = NULL, *roots;

    /* mcpd asks for the roots once the client is initialized; a call that
     * came first sees none yet.  Ask the client itself: this fails at once
     * when it offers no roots (or on the loop thread). */
    if (req->host->client_request_wait(call, "roots/list",
                                       json_object_new_object(), &result,
                                       NULL) == MCPD_OK &&
        json_object_object_get_ex(result, "roots", &roots))
      list = json_object_get(roots);
    json_object_put(result);
    if (list == NULL)
      return FS_E_NOROOTS;
  }
  /* Remembered for subscriptions, whose callback has no call to ask; the
   * watcher looks again when they changed. */
  text = json_object_to_json_string_ext(list, JSON_C_TO_STRING_PLAIN);
  pthread_mutex_lock(&st->seen_lock);
  if (text && (st->seen == NULL || strcmp(st->seen, text) != 0)) {
    char *copy = strdup(text);
    if (copy != NULL) {
      free(st->seen);
      st->seen = copy;
      changed = 1;
      if (st->seen_changed)
        st->seen_changed(st->seen_changed_arg);
    }
  }
  pthread_mutex_unlock(&st->seen_lock);
  /* Say once per change, not on every call, which roots are skipped. */
  rc = roots_open(st, list, out, changed ? MCPD_LOG_WARNING : MCPD_LOG_DEBUG);
  json_object_put(list);
  return rc;
}

int fs_roots_seen(struct fs_state *st, struct fs_roots *out) {
  json_object *list = NULL;
  int rc;

  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&st->seen_lock);
  if (st->seen != NULL)
    list = json_tokener_parse(st->seen);
  pthread_mutex_unlock(&st->seen_lock);
  if (list == NULL)
    return FS_E_NOROOTS;
  rc = roots_open(st, list, out, MCPD_LOG_DEBUG);
  json_object_put(list);
  return rc;
}

void fs_roots_release(struct fs_roots *roots) {
  if (roots->owned) {
    for (size_t i = 0; i < roots->n; i++)
      fs_root_close(&roots->v[i]);
    free(roots->v);
  }
  memset(roots, 0, sizeof(*roots));
}

/* on_roots_changed: a client's roots changed, so the ones the last call
 * saw may be stale.  Forget them: subscriptions go unwatched until the
 * next call says what the roots are now, rather than watch a root the
 * client took back. */
void fs_roots_changed_cb(void *arg) {
  struct fs_state *st = arg;

  pthread_mutex_lock(&st->seen_lock);
  free(st->seen);
  st->seen = NULL;
  if (st->seen_changed)
    st->seen_changed(st->seen_changed_arg);
  pthread_mutex_unlock(&st->seen_lock);
}

void fs_roots_listen(struct fs_state *st, void (*cb)(void *arg), void *arg) {
  pthread_mutex_lock(&st->seen_lock);
  st->seen_changed = cb;
  st->seen_changed_arg = arg;
  pthread_mutex_unlock(&st->seen_lock);
}
