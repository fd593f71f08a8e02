/* SPDX-License-Identifier: MIT */
/* watchdog.h -- mcpd stays able to exit while plugin code holds its loop.
 *
 * An INLINE tool (or init(), or any callback the loop runs) that never
 * returns freezes the event loop: EOF on stdin, SIGTERM, SIGINT and the
 * death of the parent would all wait forever.  A thread of its own watches
 * for those while the loop is inside plugin code and, if the plugin has
 * not returned a grace period later, ends the process with one line that
 * names what hung. */
#ifndef MCPD_WATCHDOG_H
#define MCPD_WATCHDOG_H

/* Starts the thread.  `input_fd` is the protocol's input (its hang-up is
 * EOF), or -1; it is duplicated.  Returns 0 or -1 (then nothing watches). */
int watchdog_start(int input_fd);
/* From now on the thread also ends the process at once (_exit(0)) when
 * the parent dies, whatever the loop is doing: for a worker on a system
 * that cannot signal it (platform_die_with_parent), within 100 ms. */
void watchdog_exit_with_parent(void);
/* Input ended, as a thread that reads it saw (Windows: input_thread.h);
 * any thread may say so. */
void watchdog_input_ended(void);
/* Stops and joins the thread. */
void watchdog_stop(void);
/* Notes `signum` for the thread, then runs the handler installed before
 * (libuv's): call after uv_signal_start() for that signal, once.  Up to
 * four signals are watched; further ones are ignored. */
void watchdog_catch(int signum);

/* On the loop thread, around plugin code: `plugin`, `what` (a kind of
 * call, "init()", ...) and `name` (what is called, or NULL) are kept, not
 * copied, so entering costs no formatting on every call.  They must stay
 * valid until watchdog_leave(): the thread reads them only while the loop
 * is inside the plugin code, which cannot free them before it returns. */
void watchdog_enter(const char *plugin, const char *what, const char *name);
void watchdog_leave(void);

#endif
