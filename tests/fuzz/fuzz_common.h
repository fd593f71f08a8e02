/* SPDX-License-Identifier: MIT */
/* fuzz_common.h -- what the libFuzzer harnesses share: a private plugin
 * directory holding the bundled plugins, a server on the in-memory transport,
 * and independent checks of every message mcpd writes.
 *
 * The checks here deliberately do not use mcpd's own JSON or UTF-8 code:
 * json-c's strict tokener and a UTF-8 decoder written from RFC 3629 judge
 * what the code under test produced. */
#ifndef MCPD_FUZZ_COMMON_H
#define MCPD_FUZZ_COMMON_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>
#include <uv.h>

#include "server.h"
#include "session.h"
#include "settings.h"
#include "transport_memory.h"

/* Prints the message and the offending text, then aborts, which libFuzzer
 * reports as a crash and saves the input. */
#define FUZZ_CHECK(cond, ...)                                                  \
  do {                                                                         \
    if (!(cond))                                                               \
      fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                       \
  } while (0)

void fuzz_fail(const char *file, int line, const char *cond, const char *fmt,
               ...) __attribute__((noreturn, format(printf, 4, 5)));

/* The one server of a fuzzer process, set up by fuzz_server_init(). */
typedef struct fuzz_server {
  char dir[PATH_MAX];
  settings opts;
  uv_loop_t loop;
  server srv;
} fuzz_server;

/* Copies `plugins` (file names, NULL-terminated; found beside the fuzzer
 * binary, or in $MCPD_FUZZ_PLUGIN_DIR) into a fresh private directory,
 * parses a command line of --plugins DIR --no-watch plus `extra`
 * (NULL-terminated, may be NULL), starts the server with serve = 0 and
 * checks that every name in `tools` is registered.  The directory is
 * removed again once the plugins are loaded (mcpd keeps private memfd
 * copies and nothing rescans), so a crash leaves nothing behind.  Logs go
 * to /dev/null unless MCPD_FUZZ_LOG is set. */
void fuzz_server_init(fuzz_server *fs, const char *const *plugins,
                      const char *const *tools, const char *const *extra);
/* Runs the loop without blocking a few times. */
void fuzz_server_turn(fuzz_server *fs);

/* Whether text[0..n) is well-formed UTF-8 (RFC 3629: no overlongs, no
 * surrogates, nothing past U+10FFFF). */
int fuzz_utf8_valid(const char *text, size_t n);
/* The length of the longest well-formed prefix of text[0..n). */
size_t fuzz_utf8_prefix(const char *text, size_t n);

/* Parses text[0..n) as exactly one strict JSON value (json-c with
 * JSON_TOKENER_STRICT, the whole text consumed).  Returns the value, or
 * NULL with *why set.  `null` parses to NULL with *why NULL. */
json_object *fuzz_parse_strict(const char *text, size_t n, const char **why);

/* Checks one message mcpd wrote: no NUL, no raw CR/LF, valid UTF-8, one
 * strict JSON value that is a JSON-RPC 2.0 message (a response or a
 * notification) or a non-empty array of responses.  Returns the parsed
 * message (the caller puts it); aborts on any violation. */
json_object *fuzz_check_message(const char *text, size_t len);

/* A request id as mcpd must echo it, for comparisons: its JSON text. */
const char *fuzz_id_text(json_object *id);

#endif
