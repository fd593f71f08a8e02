/* SPDX-License-Identifier: MIT */
/* watch.c -- reacts to plugin files appearing, changing and disappearing. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <uv.h>

#include "log.h"
#include "platform.h"
#include "watch.h"

/* Quiet time after the last event before rescanning.  Long enough that a
 * copy in progress usually finishes first; a file caught half-written is
 * refused (the loader checks ELF completeness) and retried on its next
 * change. */
#define WATCH_DEBOUNCE_MS 40

/* How often a directory that cannot be watched (it does not exist yet, or
 * was removed) is tried again.  A stat() each time, so cheap; short enough
 * that a plugin folder made by hand is picked up before the user looks. */
#define WATCH_RETRY_MS 500

/* One watched directory.  Its fs event handle watches an inode, not a
 * path, and dies with it, so a directory removed or replaced gets a new
 * handle once its path names a directory again. */
typedef struct watch_dir {
  struct watch *w;
  char *path;
  const char *base;      /* what libuv names the directory itself in events */
  uv_fs_event_t *handle; /* NULL while the directory is not watched */
  dev_t dev;             /* the identity of the directory being watched */
  ino_t ino;
  int last_error; /* of the last failed attempt, not to repeat it */
} watch_dir;

struct watch {
  watch_cb cb;
  void *arg;
  uv_loop_t *loop;
  uv_timer_t timer; /* the debounce */
  uv_timer_t retry; /* runs while some directory is not watched */
  watch_dir *dirs;
  size_t n_dirs;
  size_t open_handles;
};

static void scan_cb(uv_timer_t *timer) {
  watch *w = timer->data;
  w->cb(w->arg);
}

/* Something changed: the owner rescans once things are quiet. */
static void changed(watch *w) {
  uv_timer_start(&w->timer, scan_cb, WATCH_DEBOUNCE_MS, 0);
}

static int interesting(const char *filename) {
  /* NULL: the platform did not say, so rescan to be safe. */
  return filename == NULL || platform_plugin_name(filename);
}

static void release(watch *w) {
  if (--w->open_handles == 0) {
    for (size_t i = 0; i < w->n_dirs; i++)
      free(w->dirs[i].path);
    free(w->dirs);
    free(w);
  }
}

static void timer_close_cb(uv_handle_t *handle) {
  release(handle->data);
}

static void dir_close_cb(uv_handle_t *handle) {
  watch_dir *d = handle->data;
  free(handle);
  release(d->w);
}

/* Stops watching what may be a dead inode. */
static void unwatch(watch_dir *d) {
  if (d->handle != NULL) {
    uv_close((uv_handle_t *)d->handle, dir_close_cb);
    d->handle = NULL;
  }
}

static void event_cb(uv_fs_event_t *handle, const char *filename, int events,
                     int status);

/* Starts watching `d` if its path names a directory.  Returns 0, or a
 * libuv error, which the caller reports as it sees fit. */
static int arm(watch_dir *d) {
  watch *w = d->w;
  struct stat st;
  uv_fs_event_t *h;
  int rc;

  if (stat(d->path, &st) != 0)
    return platform_uv_error(errno);
  if (!S_ISDIR(st.st_mode))
    return UV_ENOTDIR;
  if ((h = malloc(sizeof(*h))) == NULL)
    return UV_ENOMEM;
  uv_fs_event_init(w->loop, h);
  h->data = d;
  w->open_handles++;
  rc = uv_fs_event_start(h, event_cb, d->path, 0);
  if (rc != 0) {
    uv_close((uv_handle_t *)h, dir_close_cb);
    return rc;
  }
  d->handle = h;
  d->dev = st.st_dev;
  d->ino = st.st_ino;
  d->last_error = 0;
  return 0;
}

static void retry_cb(uv_timer_t *timer);

/* Tries the directories that are not watched again later, until each
 * path names a directory that can be watched. */
static void retry_later(watch *w) {
  if (!uv_is_active((uv_handle_t *)&w->retry))
    uv_timer_start(&w->retry, retry_cb, WATCH_RETRY_MS, WATCH_RETRY_MS);
}

static void retry_cb(uv_timer_t *timer) {
  watch *w = timer->data;
  int waiting = 0;

  for (size_t i = 0; i < w->n_dirs; i++) {
    watch_dir *d = &w->dirs[i];
    int rc;
    if (d->handle != NULL)
      continue;
    rc = arm(d);
    if (rc == 0) {
      log_info("watching plugin directory %s", d->path);
      /* Whatever it holds arrived unseen. */
      changed(w);
      continue;
    }
    waiting = 1;
    /* Said once per kind of trouble, not every half second. */
    if (rc != d->last_error && rc != UV_ENOENT)
      log_warn("cannot watch plugin directory %s: %s (will keep trying)",
               d->path, uv_strerror(rc));
    d->last_error = rc;
  }
  if (!waiting)
    uv_timer_stop(timer);
}

/* After an event that may mean the directory itself went away: was it
 * removed, renamed or replaced?  Then the handle watches a dead or foreign
 * inode and is swapped for a new one, now or once the path exists again.
 * `self` is set when the event names the directory itself, which is how
 * libuv reports its deletion or move; a directory made again at once may
 * have the old inode number, so that alone is enough to start afresh. */
static void check_dir(watch_dir *d, int self) {
  struct stat st;
  int gone = stat(d->path, &st) != 0 || !S_ISDIR(st.st_mode);

  if (!self && !gone && st.st_dev == d->dev && st.st_ino == d->ino)
    return;
  if (gone)
    log_info("plugin directory %s is gone; watching for it to come back",
             d->path);
  else if (st.st_dev != d->dev || st.st_ino != d->ino)
    log_info("plugin directory %s was replaced; watching the new one", d->path);
  unwatch(d);
  /* The owner rescans either way: what was in the old one is gone. */
  changed(d->w);
  if ((d->last_error = arm(d)) != 0)
    retry_later(d->w);
}

static void event_cb(uv_fs_event_t *handle, const char *filename, int events,
                     int status) {
  watch_dir *d = handle->data;
  if (status < 0) {
    log_warn("watching plugin directory: %s", uv_strerror(status));
    /* The handle may be dead: start afresh. */
    check_dir(d, 1);
    return;
  }
  if (!interesting(filename)) {
    /* Not a plugin file: perhaps the directory itself. */
    check_dir(d, (events & UV_RENAME) != 0 && filename != NULL &&
                     strcmp(filename, d->base) == 0);
    return;
  }
  log_debug("plugin directory event: %s", filename ? filename : "?");
  changed(d->w);
}

watch *watch_start(uv_loop_t *loop, char *const *dirs, size_t n_dirs,
                   int report_missing, watch_cb cb, void *arg) {
  watch *w = calloc(1, sizeof(*w));

  if (w == NULL || (w->dirs = calloc(n_dirs + 1, sizeof(*w->dirs))) == NULL) {
    free(w);
    log_error("out of memory: not watching plugin directories");
    return NULL;
  }
  w->cb = cb;
  w->arg = arg;
  w->loop = loop;
  uv_timer_init(loop, &w->timer);
  w->timer.data = w;
  uv_timer_init(loop, &w->retry);
  w->retry.data = w;
  w->open_handles = 2;
  for (size_t i = 0; i < n_dirs; i++) {
    watch_dir *d = &w->dirs[w->n_dirs];
    const char *slash;
    int rc;
    if ((d->path = strdup(dirs[i])) == NULL) {
      log_error("out of memory: not watching plugin directory %s", dirs[i]);
      continue;
    }
    /* As libuv names the directory in events about itself. */
    slash = strrchr(d->path, '/');
    d->base = slash ? slash + 1 : d->path;
    d->w = w;
    w->n_dirs++;
    rc = arm(d);
    if (rc != 0) {
      if (rc != UV_ENOENT || report_missing)
        log_warn("cannot watch plugin directory %s: %s (%s)", dirs[i],
                 uv_strerror(rc),
                 rc == UV_ENOENT ? "it will be watched once it exists"
                                 : "will keep trying");
      d->last_error = rc;
      retry_later(w);
      continue;
    }
    log_debug("watching %s", dirs[i]);
  }
  return w;
}

void watch_stop(watch *w) {
  uv_close((uv_handle_t *)&w->timer, timer_close_cb);
  uv_close((uv_handle_t *)&w->retry, timer_close_cb);
  for (size_t i = 0; i < w->n_dirs; i++)
    unwatch(&w->dirs[i]);
}
