/* SPDX-License-Identifier: MIT */
/* rpc_peer.h -- the outgoing side of a JSON-RPC peer: the requests this
 * side sent and still waits for, and the bytes it writes to a stream.
 *
 * Both of mcpd's peers use it: a session for the requests it sends its
 * client (ids "mcpd-<n>"), and the worker link for what it forwards to a
 * worker process (numeric ids).  It knows nothing of MCP methods.
 *
 * An outgoing request is an `rpc_entry` that the user allocates, usually
 * inside a struct of its own, and hands to rpc_peer_add().  The peer gives
 * it an id and finds it again by that id in O(1) (a hash table keyed by
 * the id's number).  Its callback runs exactly once: with the answer that
 * carries its id, or with an error of this side's own when the user gives
 * up on it (rpc_peer_cancel) or the connection ends (rpc_peer_fail_all).
 * The peer forgets the entry before the callback runs, so the callback may
 * free it, and may add or cancel other entries.
 *
 * All of it runs on the loop thread. */
#ifndef MCPD_RPC_PEER_H
#define MCPD_RPC_PEER_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>
#include <uv.h>

#include "strbuf.h"

struct rpc_peer;
struct rpc_entry;
struct rpc_timer;

/* What an entry's callback gets, all borrowed for the call.  An answer
 * from the peer has `result`, `error`, or neither, as the message held
 * them (`error` unchecked: the user judges a malformed one).  `text` is
 * the result as the peer wrote it (`len` bytes, not NUL-terminated) when
 * rpc_peer_line() or rpc_peer_response() could cut it from the line:
 * JSON that passed jsonrpc_skip_value() and UTF-8 checks.  `local` is
 * nonzero when no answer came and the error is this side's own. */
typedef struct rpc_reply {
  json_object *result;
  const char *text;
  size_t len;
  json_object *error;
  int local;
} rpc_reply;

typedef void (*rpc_reply_cb)(struct rpc_entry *e, const rpc_reply *r);
/* An entry's timeout passed; it is still pending. */
typedef void (*rpc_timeout_cb)(struct rpc_entry *e);

typedef struct rpc_entry {
  /* The user's, set before rpc_peer_add(): nonzero when a result passed
   * on as text alone (no tree) will do, which rpc_peer_line() needs. */
  int text_ok;
  /* Set by the peer; read-only for the user. */
  uint64_t n;            /* the id's number */
  char id[32];           /* the id as sent: "<prefix><n>", or "<n>" */
  struct rpc_peer *peer; /* NULL once the entry left the table */
  /* Private. */
  rpc_reply_cb cb;
  struct rpc_timer *timer;
  struct rpc_entry *older, *newer;
} rpc_entry;

typedef struct rpc_peer {
  /* Private; see rpc_peer_init(). */
  uv_loop_t *loop;
  const char *prefix; /* NULL for numeric ids */
  uint64_t next;
  rpc_entry **slots; /* open addressing, by n; a power of two of them */
  size_t cap, count;
  rpc_entry *oldest, *newest;
  /* The write queue: messages wait in `out` for the end of the loop
   * turn, or until `write_early` bytes wait. */
  uv_stream_t *stream;
  strbuf out;
  uv_idle_t *flush;
  int writing; /* a uv_write is in flight */
  size_t write_early;
  char oom_message[160];
} rpc_peer;

/* Sets up an empty peer.  `prefix` (static, or outliving the peer) makes
 * ids strings "<prefix><n>"; NULL makes them numbers.  `loop` may be NULL
 * for a peer that writes elsewhere and sets no timeouts.  Returns 0, or -1
 * when memory ran out. */
int rpc_peer_init(rpc_peer *p, uv_loop_t *loop, const char *prefix);
/* Frees what the peer holds.  Entries still pending are forgotten without
 * their callbacks: call rpc_peer_fail_all() first.  The write queue's
 * idle handle is closed (and freed by its own close callback).  A closed
 * peer takes no more entries; closing it again does nothing. */
void rpc_peer_close(rpc_peer *p);

/* Ids start again at 1 (a new connection).  Only while none is pending. */
void rpc_peer_restart_ids(rpc_peer *p);

/* Gives `e` the next id and makes it pending, with `cb` for its answer.
 * Returns 0, or -1 (memory) with `e` untouched by the peer. */
int rpc_peer_add(rpc_peer *p, rpc_entry *e, rpc_reply_cb cb);
/* The pending entry with id number `n`, an id as text, or a JSON id;
 * NULL when none is.  O(1). */
rpc_entry *rpc_peer_find(const rpc_peer *p, uint64_t n);
rpc_entry *rpc_peer_find_text(const rpc_peer *p, const char *id);
rpc_entry *rpc_peer_find_json(const rpc_peer *p, json_object *id);
/* The entry's id as JSON (a new reference): a string or a number. */
json_object *rpc_peer_id_json(const rpc_peer *p, const rpc_entry *e);
/* How many entries are pending. */
size_t rpc_peer_pending(const rpc_peer *p);

/* Forgets `e` without running its callback. */
void rpc_peer_forget(rpc_peer *p, rpc_entry *e);
/* Gives up on `e`: its callback runs now with {"code": code, "message":
 * message}, local. */
void rpc_peer_cancel(rpc_peer *p, rpc_entry *e, int code, const char *message);
/* The connection ended: every pending entry's callback runs once, oldest
 * first, with {"code", "message", "data"} (`data` borrowed; each error
 * gets a reference; NULL for none), local.  Entries added by those
 * callbacks fail too. */
void rpc_peer_fail_all(rpc_peer *p, int code, const char *message,
                       json_object *data);

/* Arms a timeout of `ms` for pending `e`: `cb` runs once if `e` is still
 * pending then (the entry stays pending; the callback decides).  The
 * first timeout armed for an entry stands.  Returns 0, or -1 (no loop,
 * memory). */
int rpc_peer_set_timeout(rpc_peer *p, rpc_entry *e, uint64_t ms,
                         rpc_timeout_cb cb);

/* A parsed response (borrowed) from the peer: runs its entry's callback
 * with what it carries.  `line`, `len` is the message's text, or NULL:
 * then a result has no text.  Returns 0, or -1 when no entry has its id
 * (late, duplicated or never asked: JSON-RPC says to drop it). */
int rpc_peer_response(rpc_peer *p, json_object *msg, const char *line,
                      size_t len);
/* The fast path for answers written as mcpd writes them,
 * {"jsonrpc":"2.0","id":N,"result":{...}}: when `line` is one, for a
 * pending entry with text_ok, its callback runs with the result as text
 * and no tree, and this returns 1.  Anything else returns 0, untouched:
 * parse it and use rpc_peer_response(). */
int rpc_peer_line(rpc_peer *p, const char *line, size_t len);

/* The write queue, for a peer on a stream.  Messages are written with
 * uv_try_write, the rest with one uv_write of a copy, once per loop turn
 * or as soon as `early` bytes wait (0: only at the end of the turn), so
 * that the other side starts on the first messages of a burst while this
 * side still queues the rest.  `oom` is what the log says when memory for
 * the queue runs out.  Needs a loop. */
int rpc_peer_set_writer(rpc_peer *p, size_t early, const char *oom);
/* Where messages go from now on, or NULL: then what is queued, and what
 * is sent until another stream is set, is dropped. */
void rpc_peer_set_stream(rpc_peer *p, uv_stream_t *stream);
/* Queues one message (taken over). */
void rpc_peer_send(rpc_peer *p, json_object *msg);
/* Makes `e` pending and queues {"jsonrpc":"2.0","id":..,"method":..,
 * "params":..} with `params` a JSON tree (taken over, may be NULL).
 * Returns 0, or -1 (memory; then `e` is not pending). */
int rpc_peer_request(rpc_peer *p, rpc_entry *e, rpc_reply_cb cb,
                     const char *method, json_object *params);
/* The same with `params` as JSON text (`len` bytes, copied): no tree is
 * built.  -1 also when the message could not be queued whole. */
int rpc_peer_request_text(rpc_peer *p, rpc_entry *e, rpc_reply_cb cb,
                          const char *method, const char *params, size_t len);

#endif
