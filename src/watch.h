/* watch.h -- reacts to plugin files appearing, changing and disappearing.
 *
 * Each plugin directory is watched with a libuv fs event handle.  Events
 * only arm a short debounce timer; when the directory has been quiet for it,
 * one loader_scan() brings the live set in line, so a file copied in slowly
 * is loaded once, when complete, and a batch of changes is announced once. */
#ifndef MCPD_WATCH_H
#define MCPD_WATCH_H

struct server;
typedef struct watch watch;

/* Starts watching every plugin directory that exists.  Returns NULL when
 * there is nothing to watch (after logging why). */
watch *watch_start(struct server *srv);
/* Closes every handle; the memory goes in the last close callback. */
void watch_stop(watch *w);

#endif
