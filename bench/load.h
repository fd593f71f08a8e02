/* SPDX-License-Identifier: MIT */
/* load.h -- what the parts of mcpd-load share.
 *
 * load.c holds the driver: options, the alternation of two servers, the
 * figures it prints, and the checks every response goes through.  How
 * requests reach a server and responses come back is a transport:
 * load_stdio.c (newline-delimited JSON over the server's stdin and stdout)
 * or load_http.c (Streamable HTTP over keep-alive connections).  A
 * transport frames and unframes; every JSON-RPC message it receives goes
 * through load_handle_message().
 */
#ifndef MCPD_BENCH_LOAD_H
#define MCPD_BENCH_LOAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define LOAD_READ_CHUNK 65536
#define LOAD_PROTOCOL_VERSION "2025-11-25"
/* The stateless revision (--era modern): no initialize, every request
 * carries the envelope below in params._meta. */
#define LOAD_MODERN_VERSION "2026-07-28"

/* The params and client info of the one initialize request, shared by
 * both transports. */
#define LOAD_INITIALIZE_PARAMS                                                 \
  "\"params\":{\"protocolVersion\":\"" LOAD_PROTOCOL_VERSION "\","             \
  "\"capabilities\":{},"                                                       \
  "\"clientInfo\":{\"name\":\"mcpd-load\",\"version\":\"0.1\"}}"

/* The per-request envelope of the modern era: the members of
 * params._meta a client such as the TypeScript SDK 2.x sends with every
 * request (version, capabilities, client info), without the braces. */
#define LOAD_MODERN_META                                                       \
  "\"io.modelcontextprotocol/protocolVersion\":\"" LOAD_MODERN_VERSION "\","   \
  "\"io.modelcontextprotocol/clientCapabilities\":{},"                         \
  "\"io.modelcontextprotocol/clientInfo\":"                                    \
  "{\"name\":\"mcpd-load\",\"version\":\"0.1\"}"

/* The first request of a modern run, in place of initialize. */
#define LOAD_DISCOVER_REQUEST                                                  \
  "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"server/discover\","              \
  "\"params\":{\"_meta\":{" LOAD_MODERN_META "}}}"

typedef struct load_buf {
  char *base;
  size_t len;
  size_t cap;
} load_buf;

typedef struct load_run load_run;
typedef struct load_http load_http;

/* The top level of one JSON-RPC message, as load_handle_message() saw it.
 * Pointers point into the message text. */
typedef struct load_message {
  const char *id;
  size_t id_len;
  int has_method;
  const char *method;
  size_t method_len;
  int has_error;
  int has_result;
  int is_error;
  /* The result has "resultType":"complete" (the modern era's). */
  int complete;
  const char *result;
  size_t result_len;
} load_message;

typedef struct load_transport {
  const char *name;
  /* Starts r->argv and sets r->pid.  Exits the driver if it cannot. */
  void (*spawn)(load_run *r);
  /* Sends initialize (id 0) and then notifications/initialized, running
   * until both are done or the run broke.  In the modern era, where there
   * is no handshake, it sends server/discover (id 0) instead, as a client
   * in the SDKs' auto mode does first. */
  void (*initialize)(load_run *r);
  /* Tops the window up and handles responses until the current phase is
   * answered (r->answered >= r->phase_total) or the run broke. */
  void (*pump)(load_run *r);
  /* Answers a request the server sent (m->has_method, m->id set), or NULL
   * when the transport cannot; then the request counts as an error. */
  void (*answer)(load_run *r, const load_message *m);
  /* Asks the server to leave, waits for it (killing it after the timeout)
   * and reaps it.  Returns its ru_maxrss in KiB. */
  long (*finish)(load_run *r);
} load_transport;

extern const load_transport load_stdio_transport;
extern const load_transport load_http_transport;

/* One server under test.  The fields up to `pid` last for the whole run;
 * the rest is reset for every spawn. */
struct load_run {
  char **argv;
  int index;
  const load_transport *tp;
  /* Whether this server is driven in the modern era (--era modern). */
  int modern;
  /* The tool of tools/call, which HTTP also names in Mcp-Name. */
  const char *tool;
  /* The request text after the id, which names the method and tool. */
  char *req_suffix;
  size_t req_suffix_len;
  uint64_t *t_send_base;
  uint64_t *lat_base;
  load_buf in_base;
  load_buf out_base;
  uint64_t busy_ns;
  double *chunk_rate;
  size_t nchunks;
  long hwm_kib;
  /* The largest VmHWM among the server's children (its plugin workers),
   * and that child's proportional and private resident memory (Pss and
   * Private_* of /proc/PID/smaps_rollup) when the run ended: the part of
   * its RSS that is its own rather than pages of libc, json-c and mcpd
   * shared with every other process. */
  long worker_hwm_kib;
  long worker_pss_kib;
  long worker_private_kib;
  long maxrss_kib;

  pid_t pid;
  /* stdio: the server's stdin and stdout. */
  int to_fd;
  int from_fd;
  load_buf in;
  size_t in_scanned;
  load_buf out;
  size_t out_off;
  /* http: connections and session, owned by load_http.c. */
  load_http *http;

  /* Send time of each request id still awaiting its response, 0 once
   * answered.  Id 0 is initialize; ids 1.. are the driven requests. */
  uint64_t *t_send;
  int64_t next_id;
  int64_t first_measured_id;

  int init_done;
  uint64_t init_answered_at;
  int64_t phase_total;
  int64_t issued;
  int64_t answered;
  int64_t outstanding;
  int recording;

  uint64_t *lat;
  size_t nlat;
  uint64_t first_send;
  uint64_t last_recv;
  uint64_t last_progress;

  int eof;
  int broken;
  int64_t errors;
  int reported;
};

/* Command line settings, shared by every spawn. */
typedef struct load_options {
  int64_t n;
  int64_t window;
  int64_t warmup;
  int64_t chunk;
  int startup;
  int timeout_s;
  int quiet;
  const char *label;
  const char *method;
  const char *expect;
} load_options;

extern load_options load_opt;

uint64_t load_now_ns(void);
void load_fatal(const char *what);

void load_buf_reserve(load_buf *b, size_t extra);
void load_buf_add(load_buf *b, const char *s, size_t n);
void load_buf_adds(load_buf *b, const char *s);
void load_buf_add_id(load_buf *b, int64_t id);

const char *load_run_name(const load_run *r);
/* Counts an error and shows the first few. */
void load_report(load_run *r, const char *why, const char *text, size_t len);
/* Marks the run broken if nothing has arrived for the timeout. */
void load_check_timeout(load_run *r);
/* Waits for the server to exit and counts an error unless it exited with
 * status 0.  Returns its ru_maxrss in KiB. */
long load_reap(load_run *r);
/* Turns the once-a-second SIGALRM tick on or off. */
void load_set_tick(int on);
/* Ignores SIGPIPE and starts the tick; once, before the runs. */
void load_start(void);
/* Writes the request text for r's method, `tool` and `args`. */
void load_build_request(load_run *r, const char *tool, const char *args);
/* Drives the servers (one, or two in turns) and prints a line for each;
 * returns the driver's exit status. */
int load_run_servers(load_run *servers, int count);
/* Times spawn to initialize answered, load_opt.startup times each. */
int load_run_startup(load_run *servers, int count);

/* Handles one JSON-RPC message from the server, received at `now`: a
 * response is checked, timed and counted; a request is handed to the
 * transport's `answer`.  Returns the id of the request it answered, or -1
 * for anything else (including a response the driver did not expect). */
int64_t load_handle_message(load_run *r, const char *text, size_t len,
                            uint64_t now);
/* Counts a request as answered with an error, for a response the
 * transport could not deliver (a bad status, a body without it). */
void load_fail_request(load_run *r, int64_t id, uint64_t now, const char *why,
                       const char *text, size_t len);

#endif
