/* transport_stdio.h -- newline-delimited JSON-RPC over stdin/stdout.
 *
 * stdin and stdout may each be a pipe, a terminal, a socket or a regular
 * file.  The protocol writer uses a private duplicate of fd 1, and fd 1
 * itself is pointed at stderr, so a plugin that prints cannot corrupt the
 * stream.  Writes are queued with uv_write, coalesced while one is in
 * flight, and reading pauses while too much output waits (backpressure). */
#ifndef MCPD_TRANSPORT_STDIO_H
#define MCPD_TRANSPORT_STDIO_H

#include <stddef.h>

struct server;
struct session;

typedef struct stdio_transport stdio_transport;

/* Takes over fds 0 and 1.  Returns NULL after logging why. */
stdio_transport *stdio_transport_new(struct server *srv);
/* Creates the session and starts reading. */
int stdio_transport_start(stdio_transport *t);
void stdio_transport_stop_reading(stdio_transport *t);
/* Flushes what is queued (unless `force`), closes the handles and frees
 * the transport and its session; `done` (may be NULL) runs afterwards. */
void stdio_transport_close(stdio_transport *t, void (*done)(struct server *srv),
                           int force);

#endif
