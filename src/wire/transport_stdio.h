/* SPDX-License-Identifier: MIT */
/* transport_stdio.h -- newline-delimited JSON-RPC over stdin/stdout.
 *
 * stdin and stdout may each be a pipe, a terminal, a socket or a regular
 * file.  The protocol writer uses a private duplicate of fd 1, and fd 1
 * itself is pointed at stderr, so a plugin that prints cannot corrupt the
 * stream.  Writes are queued with uv_write, coalesced while one is in
 * flight, and reading pauses while too much output waits (backpressure).
 *
 * The transport knows bytes, not MCP: it hands whole messages up through
 * the callbacks its owner gave it, and takes whole messages down through
 * stdio_transport_write(). */
#ifndef MCPD_TRANSPORT_STDIO_H
#define MCPD_TRANSPORT_STDIO_H

#include <stddef.h>

#include <json-c/json.h>
#include <uv.h>

typedef struct stdio_transport stdio_transport;

/* Events, on the loop thread. */
#define STDIO_READ_FAILED "reading stdin failed"

typedef struct stdio_transport_cb {
  /* One message, NUL-terminated, valid during the call. */
  void (*message)(void *arg, const char *line, size_t len);
  /* A message longer than the limit was skipped. */
  void (*oversize)(void *arg, size_t max);
  /* Input ended (EOF or a read error) or output failed; `why` says which
   * (STDIO_READ_FAILED for a read error).  Reading has stopped. */
  void (*end)(void *arg, const char *why);
  void *arg;
} stdio_transport_cb;

/* Moves stdout out of plugins' reach: returns a private close-on-exec
 * copy of fd 1 (or -1 with errno set) and points fd 1 at stderr, so stray
 * printf()s from plugins land in the log.  stdio_transport_new() does it;
 * --list and --call, which print for a person, use it too. */
int stdio_take_stdout(void);

/* Takes over fds 0 and 1.  Returns NULL after logging why. */
stdio_transport *stdio_transport_new(uv_loop_t *loop, size_t max_message,
                                     const stdio_transport_cb *cb);
/* Starts reading. */
int stdio_transport_start(stdio_transport *t);
void stdio_transport_stop_reading(stdio_transport *t);
/* Queues one message (a session_write_fn; `ctx` is the transport).  Every
 * message written while a read is being handled goes out in one write. */
void stdio_transport_write(void *ctx, json_object *related, int answer,
                           int code, const char *const *parts,
                           const size_t *lens, int n);
/* Flushes what is queued (unless `force`), closes the handles and frees
 * the transport; `done` (may be NULL) runs afterwards with `arg`. */
void stdio_transport_close(stdio_transport *t, void (*done)(void *arg),
                           void *arg, int force);

/* The protocol's private input descriptor (owned by the transport). */
int stdio_transport_input_fd(const stdio_transport *t);
/* And its output descriptor: a worker's first words to its host go there
 * before the loop writes anything (worker_hello.h). */
int stdio_transport_output_fd(const stdio_transport *t);

#endif
