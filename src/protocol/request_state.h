/* SPDX-License-Identifier: MIT */
/* request_state.h -- what a 2026-07-28 input_required result hands the
 * client and gets back on the retry: the opaque `requestState`, and the
 * keys of `inputRequests`.
 *
 * mcpd answers input_required by running the call again with the answers
 * (doc/architecture.md, "Input required").  The state carries what the
 * next run needs and nothing else: the answers of earlier rounds, which
 * request it belongs to, and when it expires.  It is sealed with
 * HMAC-SHA256 under the server's state key, so any mcpd process that has
 * the same key can take the retry, and none accepts a state it did not
 * seal.  It is signed, not encrypted: it holds only what the client sent. */
#ifndef MCPD_REQUEST_STATE_H
#define MCPD_REQUEST_STATE_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define REQUEST_STATE_KEY_SIZE 32
/* An input request's key: "<what>-<16 hex digits>[-<n>]". */
#define REQUEST_STATE_INPUT_KEY_MAX 48

/* Fills `key` from `path` (a file of at least 16 bytes, whose SHA-256 is
 * the key) or, with `path` NULL, with random bytes.  Returns 0, or -1
 * with `why` set. */
int request_state_key(unsigned char key[REQUEST_STATE_KEY_SIZE],
                      const char *path, char *why, size_t why_len);

/* Seals `answers` (an object: input key -> the client's response; may be
 * NULL) for the request `method` of `name` (tool or prompt name, URI)
 * with `arguments` (may be NULL), valid until `expires_ms` (Unix time in
 * ms).  Returns a malloc'ed string, or NULL when out of memory. */
char *request_state_seal(const unsigned char key[REQUEST_STATE_KEY_SIZE],
                         const char *method, const char *name,
                         json_object *arguments, json_object *answers,
                         uint64_t expires_ms);

/* Checks `state` against the request it comes back with: sealed under
 * `key`, for the same method, name and arguments, not expired at
 * `now_ms`.  Returns 0 and the answers it carries in *answers (a new
 * object), or -1 with the reason in `why`. */
int request_state_open(const unsigned char key[REQUEST_STATE_KEY_SIZE],
                       const char *state, const char *method, const char *name,
                       json_object *arguments, uint64_t now_ms,
                       json_object **answers, char *why, size_t why_len);

/* The key of a plugin's request `method` with `params` (may be NULL) that
 * is the `nth` (from 1) identical one of its run: a function of what is
 * asked, so that a plugin that asks the same again on the next run finds
 * its answer under the same key, on whichever process runs it. */
void request_state_input_key(const char *method, json_object *params,
                             unsigned nth,
                             char out[REQUEST_STATE_INPUT_KEY_MAX]);

/* The Unix time in milliseconds (the clock states expire by: processes
 * behind one load balancer share it). */
uint64_t request_state_now_ms(void);

#endif
