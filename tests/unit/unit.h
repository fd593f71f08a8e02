/* SPDX-License-Identifier: MIT */
/* unit.h -- the suites of tests/unit/unit_tests and the harness they share.
 *
 * The harness is a real server on the in-memory transport: settings parsed
 * from a command line, a libuv loop, server_init(), a plugin directory of
 * its own, log lines captured in a file, and sessions opened on the server
 * whose every message is kept as serialized JSON, in order. */
#ifndef MCPD_UNIT_H
#define MCPD_UNIT_H

#include <limits.h>
#include <stddef.h>

#include <check.h>
#include <json-c/json.h>
#include <uv.h>

#include "server.h"
#include "session.h"
#include "settings.h"
#include "transport_memory.h"

#ifndef MCPD_FIXTURES_DIR
#error "MCPD_FIXTURES_DIR must name the directory of the fixture plugins"
#endif
#ifndef MCPD_ECHO_SO
#error "MCPD_ECHO_SO must name the built echo plugin"
#endif

Suite *framer_suite(void);
Suite *request_state_suite(void);
Suite *jsonrpc_suite(void);
Suite *rpc_peer_suite(void);
Suite *handles_suite(void);
Suite *negotiation_suite(void);
Suite *session_suite(void);
Suite *schema_suite(void);
Suite *uritpl_suite(void);
Suite *id_table_suite(void);
Suite *log_suite(void);
Suite *registry_suite(void);
Suite *loader_suite(void);
Suite *crash_suite(void);
Suite *tools_suite(void);
Suite *content_suite(void);
Suite *server_suite(void);
Suite *watch_suite(void);
Suite *auth_suite(void);
Suite *settings_suite(void);
Suite *era_suite(void);
Suite *streamable_modern_suite(void);
Suite *calls_suite(void);
Suite *subscribe_suite(void);
Suite *worker_suite(void);
Suite *call_suite(void);
Suite *schedule_suite(void);
Suite *result_suite(void);
Suite *ask_suite(void);
Suite *remote_suite(void);
Suite *plugin_api_suite(void);
Suite *host_api_suite(void);

/* Nonzero when MCPD_UNIT_KNOWN_BUGS is set (to anything but "" or "0"):
 * the suites then also add a "known_bugs" tcase of tests that assert the
 * right behaviour and fail on the current host.  They are off by default so
 * that `make check` stays green while the fixes are pending; remove the
 * switch for each one once its bug is fixed. */
int unit_known_bugs(void);
/* Everything in the file open as `fd` (malloc'd, NUL-terminated), read
 * without moving its offset: what a test logged there so far. */
char *unit_fd_text(int fd);

typedef struct harness {
  char dir[PATH_MAX];      /* the private plugin directory (0700) */
  char log_path[PATH_MAX]; /* where log lines go */
  int log_fd;
  settings opts;
  uv_loop_t loop;
  server srv;
  uv_timer_t deadline; /* bounds harness_wait() */
  int timed_out;
  session *session;     /* the first session, see harness_session() */
  memory_transport cap; /* what it sent: cap.msgs[0 .. cap.n) */
} harness;

/* Sets up a server whose only plugin directory is a fresh private one,
 * with --no-watch and any `extra` arguments (NULL-terminated, may be NULL).
 * Log output goes to a file read by harness_log(). */
void harness_init(harness *h, const char *const *extra);
/* Opens the session h->session, whose messages land in h->cap. */
void harness_session(harness *h);
/* Opens another session on the same server, whose messages land in `mt`
 * (initialized here; free it after harness_free()). */
session *harness_open(harness *h, memory_transport *mt);
/* Closes everything and asserts that the loop closes cleanly. */
void harness_free(harness *h);

/* Copies fixture `fixture` (a file name in MCPD_FIXTURES_DIR, or an absolute
 * path) into the plugin directory as `name`, mode 0644. */
void harness_copy(harness *h, const char *fixture, const char *name);
/* Writes `len` bytes to `name` in the plugin directory, mode 0644. */
void harness_write(harness *h, const char *name, const char *data, size_t len);
/* The full path of `name` in the plugin directory (static buffer). */
const char *harness_path(harness *h, const char *name);

/* Everything logged so far (malloc'd, NUL-terminated). */
char *harness_log(harness *h);
/* Log lines at level error ("mcpd: error: ..."), counted and, when `out`
 * is not NULL, the first of them copied out (malloc'd). */
size_t harness_error_lines(harness *h, char **out);

/* Feeds one message to the session. */
void harness_line(harness *h, const char *line);
/* Runs the loop until at least `n` messages were captured (or 3 seconds
 * passed, which fails the test). */
void harness_wait(harness *h, size_t n);
/* Runs the loop until done(h, arg) is true (or 3 seconds passed, which
 * fails the test). */
void harness_run_until(harness *h, int (*done)(harness *h, void *arg),
                       void *arg);
/* Runs the loop once without blocking (timers due now fire). */
void harness_turn(harness *h);
/* Captured message `i`, parsed (the caller puts it). */
json_object *harness_msg(harness *h, size_t i);
/* Index of the captured response (result or error) with integer id `id`,
 * or -1. */
long harness_response_index(harness *h, int id);
/* Runs the loop until the response with integer id `id` came (or 3 seconds
 * passed, which fails the test); returns it parsed (the caller puts it). */
json_object *harness_response(harness *h, int id);
/* Sends tools/call `name` with `args` (JSON text, or NULL for none) as
 * request `id`, without waiting for its answer. */
void harness_send_tool(harness *h, int id, const char *name, const char *args);
/* harness_send_tool(), then returns the response, as harness_response(). */
json_object *harness_tool(harness *h, int id, const char *name,
                          const char *args);
/* Drops every captured message. */
void harness_clear(harness *h);
/* A harness_run_until() condition: no call is in flight. */
int harness_calls_done(harness *h, void *arg);
/* How many messages captured in `out` contain `needle`. */
size_t harness_count(const memory_transport *out, const char *needle);
/* Sends initialize for `version` and checks the answer. */
void harness_initialize(harness *h, const char *version);
/* harness_init() and harness_session(), with good.so loaded, the startup
 * announcement flushed and a 2025-11-25 session initialized: the setup of
 * the suites that drive one plugin's calls. */
void harness_start_good(harness *h);
/* good.so's own mcpd_self, as its callbacks get it. */
mcpd_self *harness_good_self(harness *h);

/* Parses `text` (must be valid JSON). */
json_object *parse_json(const char *text);
/* Looks up a dotted path ("error.code", "result.content") in `obj`. */
json_object *json_path(json_object *obj, const char *path);
/* The error code of a response, or 0 when it has none. */
int response_error_code(json_object *msg);
/* The serialization mcpd uses (plain, no escaped slashes). */
const char *plain(json_object *obj);

#endif
