/* watch.c -- reacts to plugin files appearing, changing and disappearing. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "log.h"
#include "watch.h"

/* Quiet time after the last event before rescanning.  Long enough that a
 * copy in progress usually finishes first; a file caught half-written is
 * refused (the loader checks ELF completeness) and retried on its next
 * change. */
#define WATCH_DEBOUNCE_MS 40

struct watch {
  watch_cb cb;
  void *arg;
  uv_timer_t timer;
  uv_fs_event_t *dirs;
  size_t n_dirs;
  size_t open_handles;
};

static void scan_cb(uv_timer_t *timer) {
  watch *w = timer->data;
  w->cb(w->arg);
}

static int interesting(const char *filename) {
  size_t n;
  if (filename == NULL)
    return 1; /* the platform did not say: rescan to be safe */
  n = strlen(filename);
  return n > 3 && strcmp(filename + n - 3, ".so") == 0 && filename[0] != '.';
}

static void event_cb(uv_fs_event_t *handle, const char *filename, int events,
                     int status) {
  watch *w = handle->data;
  (void)events;
  if (status < 0) {
    log_warn("watching plugin directory: %s", uv_strerror(status));
    return;
  }
  if (!interesting(filename))
    return;
  log_debug("plugin directory event: %s", filename ? filename : "?");
  uv_timer_start(&w->timer, scan_cb, WATCH_DEBOUNCE_MS, 0);
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
  uv_timer_init(loop, &w->timer);
  w->timer.data = w;
  w->open_handles = 1;
  for (size_t i = 0; i < n_dirs; i++) {
    uv_fs_event_t *h = &w->dirs[w->n_dirs];
    int rc;
    uv_fs_event_init(loop, h);
    h->data = w;
    rc = uv_fs_event_start(h, event_cb, dirs[i], 0);
    w->open_handles++;
    w->n_dirs++;
    if (rc != 0) {
      if (rc != UV_ENOENT || report_missing)
        log_warn("cannot watch plugin directory %s: %s (send SIGHUP to "
                 "rescan)",
                 dirs[i], uv_strerror(rc));
      continue;
    }
    log_debug("watching %s", dirs[i]);
  }
  return w;
}

static void close_cb(uv_handle_t *handle) {
  watch *w = handle->data;
  if (--w->open_handles == 0) {
    free(w->dirs);
    free(w);
  }
}

void watch_stop(watch *w) {
  uv_close((uv_handle_t *)&w->timer, close_cb);
  for (size_t i = 0; i < w->n_dirs; i++)
    uv_close((uv_handle_t *)&w->dirs[i], close_cb);
}
