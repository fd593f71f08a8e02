/* SPDX-License-Identifier: MIT */
/* input_thread.h -- reads a blocking descriptor on a thread of its own and
 * hands what it read to the loop.
 *
 * For input libuv cannot wait on without blocking its loop: on Windows, a
 * pipe opened without overlapped I/O (what a client usually hands mcpd as
 * stdin).  libuv reads such a pipe after asking PeekNamedPipe how much
 * waits, which not every pipe answers (a Unix pipe under wine does not),
 * and then blocks the loop in ReadFile.  Here only this thread ever
 * blocks.
 *
 * The thread owns the descriptor from input_thread_start() on and never
 * closes it: a read it is blocked in cannot be taken back, and closing
 * the descriptor under it would wait for that read.  The process's end
 * takes both.  Everything else runs on the loop's thread. */
#ifndef MCPD_INPUT_THREAD_H
#define MCPD_INPUT_THREAD_H

#include <stddef.h>

#include <uv.h>

typedef struct input_thread input_thread;

/* `len` bytes at `data` were read (status 0), or the input ended: status
 * UV_EOF, or a negative libuv error, once. */
typedef void (*input_thread_cb)(void *arg, const char *data, size_t len,
                                int status);

/* Starts reading `fd`.  NULL, with nothing started, when memory or a
 * thread is lacking. */
input_thread *input_thread_start(uv_loop_t *loop, int fd, input_thread_cb cb,
                                 void *arg);

/* While paused, nothing is handed over, and the thread stops reading once
 * a megabyte waits. */
void input_thread_pause(input_thread *r, int paused);

/* No callback after this.  `closed` runs once the loop's handle is closed;
 * the thread lets go of what it shares when it next wakes. */
void input_thread_close(input_thread *r, void (*closed)(void *arg), void *arg);

#endif
