/* SPDX-License-Identifier: MIT */
/* watch.h -- reacts to plugin files appearing, changing and disappearing.
 *
 * Each plugin directory is watched with a libuv fs event handle.  Events
 * only arm a short debounce timer; when the directories have been quiet for
 * it, the owner's callback runs once (it rescans), so a file copied in
 * slowly is loaded once, when complete, and a batch of changes is announced
 * once.  A directory that does not exist yet, or that is removed or
 * replaced (its handle dies with it), is tried again every half second
 * until it can be watched; the callback then runs too, since whatever the
 * new directory holds arrived unseen.  The watcher knows nothing of
 * plugins beyond their ".so" suffix. */
#ifndef MCPD_WATCH_H
#define MCPD_WATCH_H

#include <stddef.h>

#include <uv.h>

typedef struct watch watch;

/* Runs on the loop thread after a burst of changes has settled. */
typedef void (*watch_cb)(void *arg);

/* Starts watching each of `dirs`.  A directory that does not exist is
 * reported only when `report_missing` is set, and watched once it does.
 * Returns NULL after logging why (out of memory). */
watch *watch_start(uv_loop_t *loop, char *const *dirs, size_t n_dirs,
                   int report_missing, watch_cb cb, void *arg);
/* Closes every handle; the memory goes in the last close callback. */
void watch_stop(watch *w);

#endif
