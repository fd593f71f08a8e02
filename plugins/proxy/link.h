/* SPDX-License-Identifier: MIT */
/* link.h -- one connection to an upstream MCP server, whatever carries it:
 * a child process's stdio (stdio_link.c) or Streamable HTTP with a legacy
 * SSE fallback (http_link.c).
 *
 * Every link lives on the proxy thread and is driven by its loop
 * (proxy.c): the loop asks each link which descriptors it wants polled
 * and when it next wants a tick, waits in curl_multi_poll() (so libcurl's
 * own sockets are waited on in the same call), then hands the link the
 * results.  Nothing here is touched from another thread.
 *
 * A link moves whole JSON-RPC messages and knows nothing of MCP beyond
 * what its transport needs (HTTP's session id and protocol-version
 * headers).  It reports what arrives through its callbacks, which run on
 * the proxy thread from inside ready(), tick() or easy_done(). */
#ifndef MCPD_PROXY_LINK_H
#define MCPD_PROXY_LINK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <curl/curl.h>
#include <json-c/json.h>

typedef struct px_link px_link;

/* How deeply an upstream's message may nest: mcpd's own limit
 * (JSONRPC_MAX_DEPTH).  json-c's default of 32 would drop a deep but
 * valid answer, and with it the call or the listing it answers. */
#define PX_MAX_DEPTH 512

typedef struct px_link_events {
  /* One JSON-RPC message from the upstream (a batch arrives as its
   * elements, one call each).  `msg` is borrowed: take a reference to keep
   * it.  `via` is the id of the request whose HTTP response stream carried
   * the message, or NULL (stdio, or the standalone GET stream); it tells
   * which call a server-to-client request belongs to. */
  void (*message)(void *arg, json_object *msg, json_object *via);
  /* The link is gone for good: the process exited, the server refused the
   * session, the stream cannot be reopened.  `why` is one line for the
   * log.  Called at most once; afterwards the owner closes the link (from
   * its own code, not from inside this callback) and no other callback
   * runs. */
  void (*closed)(void *arg, const char *why);
  /* A line the upstream wrote to its stderr (stdio only), without its
   * newline; for the log. */
  void (*stderr_line)(void *arg, const char *line);
  void *arg;
} px_link_events;

typedef struct px_link_ops {
  /* Queues one message (borrowed: the link serialises it before
   * returning).  0, or -1 when the link is closed or out of memory. */
  int (*send)(px_link *l, json_object *msg);
  /* Appends the descriptors the link wants polled (CURL_WAIT_POLLIN,
   * CURL_WAIT_POLLOUT) to `fds`, at most `room` of them; returns how many. */
  size_t (*want)(px_link *l, struct curl_waitfd *fds, size_t room);
  /* After the wait: the same descriptors, with revents filled in. */
  void (*ready)(px_link *l, const struct curl_waitfd *fds, size_t n);
  /* The monotonic time (ms, px_now_ms()) at which the link next wants
   * tick(), or -1 for never. */
  int64_t (*deadline)(px_link *l);
  void (*tick)(px_link *l, int64_t now);
  /* Ends the connection and frees the link (a stdio child's process
   * group is killed; an HTTP session is DELETEd, best effort).  No
   * callback runs during or after it. */
  void (*close)(px_link *l);
} px_link_ops;

struct px_link {
  const px_link_ops *ops;
  px_link_events ev;
};

/* A transfer a link added to the proxy's CURLM.  Its CURLOPT_PRIVATE
 * points at this struct (usually the first member of the link's own
 * transfer struct); when curl_multi_info_read() reports the transfer
 * done, the loop calls done() and the link removes and cleans up the
 * easy handle itself. */
typedef struct px_easy {
  void (*done)(struct px_easy *e, CURLcode result);
} px_easy;

/* Monotonic milliseconds. */
static inline int64_t px_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A child process: argv[0] is looked up in $PATH (so "npx" and "node"
 * work) when it holds no '/'.  `envp` is the complete environment (NULL:
 * mcpd's own), `cwd` may be NULL.  The child runs in its own process
 * group, with stdin and stdout as the message stream (one JSON message a
 * line) and stderr reported line by line.  NULL with `err` set when it
 * cannot start. */
px_link *stdio_link_open(char *const argv[], char *const envp[],
                         const char *cwd, const px_link_events *ev, char *err,
                         size_t errlen);

/* A Streamable HTTP server at `url` (http or https).  `headers` is an
 * object of strings sent with every request (Authorization, say), or NULL.
 * Transfers go on `multi`, the proxy loop's.  When the server turns out
 * to speak only the legacy HTTP+SSE transport (its answer to the first
 * POST is 400, 404 or 405), the link switches to it without its owner
 * noticing: it opens the SSE stream, waits for the "endpoint" event and
 * posts the held message there.  NULL with `err` set when the URL or the
 * headers are unusable. */
px_link *http_link_open(CURLM *multi, const char *url, json_object *headers,
                        const px_link_events *ev, char *err, size_t errlen);

#endif
