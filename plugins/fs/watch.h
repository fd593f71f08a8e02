/* SPDX-License-Identifier: MIT */
/* watch.h -- resource subscriptions of the "fs" plugin (watch.c). */
#ifndef MCPD_PLUGIN_FS_WATCH_H
#define MCPD_PLUGIN_FS_WATCH_H

#include "fs.h"

/* The subscribe callback of the resources and the template, on mcpd's loop
 * thread.  The first subscription starts the watcher (st->watch). */
void fs_subscribe_cb(const mcpd_request *req, int subscribed);
/* Stops the watcher thread and frees every subscription.  Call it after
 * fs_roots_listen(st, NULL, NULL). */
void fs_watch_free(struct fs_watch *w);

#endif
