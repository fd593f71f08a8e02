/* SPDX-License-Identifier: MIT */
/* load.c -- mcpd-load, the load driver for the mcpd benchmarks.
 *
 * mcpd-load spawns an MCP server, initializes it, and drives N requests
 * keeping W of them in flight, timing each one from the write that carries
 * it to the read that returns its response.  Given a second server after
 * --vs, it drives both in alternating turns, so that whatever else the
 * machine is doing falls on both alike; bench/run.sh compares mcpd with the
 * floor that way.  It prints one line of key=value pairs per server.  With
 * --startup R it instead measures how long R fresh servers take from spawn
 * to an answered initialize.  Each server speaks stdio (load_stdio.c) or
 * Streamable HTTP (load_http.c), chosen by --transport and --transport-vs,
 * so one run can also compare a server with itself over the two.  In the
 * same way --era and --era-vs choose the protocol era: legacy (initialize,
 * then plain requests; over HTTP in a session) or modern (2026-07-28: no
 * handshake, server/discover first, every request with its _meta envelope
 * and, over HTTP, no session and the MCP-Protocol-Version, Mcp-Method and
 * Mcp-Name headers).
 *
 * On a shared two-core machine the driver competes with the server for CPU,
 * so it is kept lean: a hand-rolled scan of each response for its top-level
 * "id", "error" and "result" instead of a full parse, and no allocation per
 * message.  Only the initialize response, read once, goes through json-c.
 */

/* memmem() is a GNU extension; the benchmarks run on Linux. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "load.h"

#define LOAD_MAX_REPORTED 5

load_options load_opt;

static volatile sig_atomic_t alarm_ticks;

uint64_t load_now_ns(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

void load_fatal(const char *what) {
  fprintf(stderr, "mcpd-load: %s: %s\n", what, strerror(errno));
  exit(2);
}

void load_buf_reserve(load_buf *b, size_t extra) {
  size_t cap;

  if (b->len + extra <= b->cap)
    return;
  cap = b->cap ? b->cap : LOAD_READ_CHUNK;
  while (cap < b->len + extra)
    cap *= 2;
  b->base = realloc(b->base, cap);
  if (b->base == NULL)
    load_fatal("realloc");
  b->cap = cap;
}

void load_buf_add(load_buf *b, const char *s, size_t n) {
  load_buf_reserve(b, n);
  memcpy(b->base + b->len, s, n);
  b->len += n;
}

void load_buf_adds(load_buf *b, const char *s) {
  load_buf_add(b, s, strlen(s));
}

/* Appends a non-negative integer without going through printf, which would
 * cost more than everything else the driver does per request. */
void load_buf_add_id(load_buf *b, int64_t id) {
  char tmp[24];
  char *p;

  p = tmp + sizeof(tmp);
  do {
    *--p = '0' + id % 10;
    id /= 10;
  } while (id > 0);
  load_buf_add(b, p, tmp + sizeof(tmp) - p);
}

const char *load_run_name(const load_run *r) {
  return r->argv[0];
}

/* Counts an error and shows the first few; a run with thousands of errors
 * should not flood stderr. */
void load_report(load_run *r, const char *why, const char *line, size_t len) {
  r->errors++;
  if (r->reported++ >= LOAD_MAX_REPORTED)
    return;
  if (len > 300)
    len = 300;
  fprintf(stderr, "mcpd-load: %s: %s: %.*s\n", load_run_name(r), why, (int)len,
          line);
}

/* A minimal scanner for the top level of one JSON-RPC message.  It skips
 * nested values structurally (strings with escapes, brackets) and never
 * builds anything. */
typedef struct {
  const char *p;
  const char *end;
} load_scan;

static void scan_ws(load_scan *s) {
  while (s->p < s->end &&
         (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
    s->p++;
}

static int scan_string(load_scan *s, const char **start, size_t *len) {
  const char *q;

  if (s->p >= s->end || *s->p != '"')
    return -1;
  q = ++s->p;
  while (s->p < s->end && *s->p != '"') {
    if (*s->p == '\\')
      s->p++;
    s->p++;
  }
  if (s->p >= s->end)
    return -1;
  if (start != NULL) {
    *start = q;
    *len = s->p - q;
  }
  s->p++;
  return 0;
}

static int scan_value(load_scan *s) {
  int depth;

  if (s->p >= s->end)
    return -1;
  if (*s->p == '"')
    return scan_string(s, NULL, NULL);
  if (*s->p != '{' && *s->p != '[') {
    while (s->p < s->end && *s->p != ',' && *s->p != '}' && *s->p != ']' &&
           *s->p != ' ' && *s->p != '\t' && *s->p != '\r' && *s->p != '\n')
      s->p++;
    return 0;
  }
  depth = 0;
  while (s->p < s->end) {
    if (*s->p == '"') {
      if (scan_string(s, NULL, NULL))
        return -1;
      continue;
    }
    if (*s->p == '{' || *s->p == '[')
      depth++;
    else if (*s->p == '}' || *s->p == ']')
      depth--;
    s->p++;
    if (depth == 0)
      return 0;
  }
  return -1;
}

static int key_is(const char *k, size_t klen, const char *want) {
  return klen == strlen(want) && memcmp(k, want, klen) == 0;
}

/* Reads the members of an object, calling `member` for each with the scanner
 * positioned on the value.  `member` must consume the value. */
static int scan_object(load_scan *s,
                       int (*member)(load_scan *, const char *, size_t, void *),
                       void *arg) {
  const char *k;
  size_t klen;

  scan_ws(s);
  if (s->p >= s->end || *s->p != '{')
    return -1;
  s->p++;
  scan_ws(s);
  if (s->p < s->end && *s->p == '}') {
    s->p++;
    return 0;
  }
  for (;;) {
    scan_ws(s);
    if (scan_string(s, &k, &klen))
      return -1;
    scan_ws(s);
    if (s->p >= s->end || *s->p != ':')
      return -1;
    s->p++;
    scan_ws(s);
    if (member(s, k, klen, arg))
      return -1;
    scan_ws(s);
    if (s->p >= s->end)
      return -1;
    if (*s->p == '}') {
      s->p++;
      return 0;
    }
    if (*s->p != ',')
      return -1;
    s->p++;
  }
}

static int result_member(load_scan *s, const char *k, size_t klen, void *arg) {
  load_message *m;

  m = arg;
  if (key_is(k, klen, "isError") && s->end - s->p >= 4 &&
      memcmp(s->p, "true", 4) == 0)
    m->is_error = 1;
  if (key_is(k, klen, "resultType") && s->end - s->p >= 10 &&
      memcmp(s->p, "\"complete\"", 10) == 0)
    m->complete = 1;
  return scan_value(s);
}

static int message_member(load_scan *s, const char *k, size_t klen, void *arg) {
  load_message *m;
  const char *start;

  m = arg;
  start = s->p;
  if (key_is(k, klen, "result") && s->p < s->end && *s->p == '{') {
    m->has_result = 1;
    if (scan_object(s, result_member, m))
      return -1;
    m->result = start;
    m->result_len = s->p - start;
    return 0;
  }
  if (scan_value(s))
    return -1;
  if (key_is(k, klen, "id")) {
    m->id = start;
    m->id_len = s->p - start;
  } else if (key_is(k, klen, "method")) {
    m->has_method = 1;
    m->method = start;
    m->method_len = s->p - start;
  } else if (key_is(k, klen, "error")) {
    m->has_error = 1;
  } else if (key_is(k, klen, "result")) {
    m->has_result = 1;
    m->result = start;
    m->result_len = s->p - start;
  }
  return 0;
}

/* Parses a plain decimal id; anything else is an id this driver never
 * sent. */
static int64_t parse_id(const char *p, size_t len) {
  int64_t v;
  size_t i;

  if (len == 0 || len > 18)
    return -1;
  v = 0;
  for (i = 0; i < len; i++) {
    if (p[i] < '0' || p[i] > '9')
      return -1;
    v = v * 10 + (p[i] - '0');
  }
  return v;
}

/* Whether a server/discover result offers the modern revision. */
static int offers_modern(json_object *result) {
  json_object *versions;
  size_t i;

  if (!json_object_object_get_ex(result, "supportedVersions", &versions) ||
      !json_object_is_type(versions, json_type_array))
    return 0;
  for (i = 0; i < json_object_array_length(versions); i++) {
    json_object *v = json_object_array_get_idx(versions, i);
    if (json_object_is_type(v, json_type_string) &&
        strcmp(json_object_get_string(v), LOAD_MODERN_VERSION) == 0)
      return 1;
  }
  return 0;
}

/* Checks the answer to request 0: initialize, or in the modern era
 * server/discover. */
static void handle_init_response(load_run *r, const char *line, size_t len,
                                 uint64_t now) {
  json_tokener *tok;
  json_object *msg;
  json_object *result;
  json_object *version;
  int ok;

  tok = json_tokener_new();
  if (tok == NULL)
    load_fatal("json_tokener_new");
  msg = json_tokener_parse_ex(tok, line, (int)len);
  ok = msg != NULL && json_object_object_get_ex(msg, "result", &result);
  if (ok && r->modern)
    ok = offers_modern(result);
  else if (ok)
    ok = json_object_object_get_ex(result, "protocolVersion", &version) &&
         json_object_is_type(version, json_type_string);
  if (!ok) {
    load_report(r,
                r->modern ? "bad server/discover response"
                          : "bad initialize response",
                line, len);
    r->broken = 1;
  }
  json_object_put(msg);
  json_tokener_free(tok);
  r->init_done = 1;
  r->init_answered_at = now;
  r->t_send[0] = 0;
}

/* Counts request `id` as answered at `now` and, while recording, times
 * it. */
static void answered(load_run *r, int64_t id, uint64_t now) {
  if (r->recording && id >= r->first_measured_id)
    r->lat[r->nlat++] = now - r->t_send[id];
  r->t_send[id] = 0;
  r->outstanding--;
  r->answered++;
  r->last_recv = now;
}

int64_t load_handle_message(load_run *r, const char *text, size_t len,
                            uint64_t now) {
  load_message m;
  load_scan s;
  int64_t id;

  if (len > 0 && text[len - 1] == '\r')
    len--;
  if (len == 0)
    return -1;

  memset(&m, 0, sizeof(m));
  s.p = text;
  s.end = text + len;
  if (scan_object(&s, message_member, &m)) {
    load_report(r, "malformed message", text, len);
    return -1;
  }

  if (m.has_method) {
    if (m.id == NULL)
      return -1;
    if (r->tp->answer != NULL)
      r->tp->answer(r, &m);
    else
      load_report(r, "a request from the server this transport cannot answer",
                  text, len);
    return -1;
  }

  id = m.id ? parse_id(m.id, m.id_len) : -1;
  if (id < 0 || id >= r->next_id || r->t_send[id] == 0) {
    load_report(r, "response with an unexpected id", text, len);
    return -1;
  }
  if (id == 0) {
    if (m.has_error)
      r->broken = 1;
    handle_init_response(r, text, len, now);
    return 0;
  }

  answered(r, id, now);
  if (m.has_error)
    load_report(r, "error response", text, len);
  else if (!m.has_result)
    load_report(r, "response without result", text, len);
  else if (m.is_error)
    load_report(r, "tool result with isError", text, len);
  else if (r->modern && !m.complete)
    load_report(r, "modern result without \"resultType\":\"complete\"", text,
                len);
  else if (load_opt.expect != NULL &&
           memmem(m.result, m.result_len, load_opt.expect,
                  strlen(load_opt.expect)) == NULL)
    load_report(r, "result without the expected text", text, len);
  return id;
}

void load_fail_request(load_run *r, int64_t id, uint64_t now, const char *why,
                       const char *text, size_t len) {
  load_report(r, why, text, len);
  if (id == 0) {
    /* Without a session there is nothing more to drive. */
    r->broken = 1;
    r->t_send[0] = 0;
    return;
  }
  answered(r, id, now);
}

void load_check_timeout(load_run *r) {
  if (load_now_ns() - r->last_progress <
      (uint64_t)load_opt.timeout_s * 1000000000u)
    return;
  fprintf(stderr, "mcpd-load: %s: no response for %d s\n", load_run_name(r),
          load_opt.timeout_s);
  r->broken = 1;
}

static void run_phase(load_run *r, int64_t count, int recording) {
  r->phase_total = count;
  r->issued = 0;
  r->answered = 0;
  r->recording = recording;
  if (recording)
    r->first_measured_id = r->next_id;
  r->tp->pump(r);
}

/* A once-a-second tick interrupts blocking reads (no SA_RESTART) so a
 * server that hangs is noticed without a poll() per response.  It is off
 * while stdio runs, which does not retry after EINTR. */
void load_set_tick(int on) {
  struct itimerval it;

  it.it_interval.tv_sec = on;
  it.it_interval.tv_usec = 0;
  it.it_value = it.it_interval;
  setitimer(ITIMER_REAL, &it, NULL);
}

/* Peak resident set of a live process, in KiB, or -1. */
static long read_vmhwm(pid_t pid) {
  char path[64];
  char line[256];
  FILE *f;
  long kib;

  snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
  f = fopen(path, "r");
  if (f == NULL)
    return -1;
  kib = -1;
  while (fgets(line, sizeof(line), f) != NULL)
    if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
      break;
  fclose(f);
  return kib;
}

/* The parent of process `name` (a /proc entry), or -1. */
static pid_t read_ppid(const char *name) {
  char path[300];
  char line[512];
  const char *p;
  FILE *f;
  long ppid;

  snprintf(path, sizeof(path), "/proc/%s/stat", name);
  f = fopen(path, "r");
  if (f == NULL)
    return -1;
  ppid = -1;
  /* The command name, in parentheses, may itself hold spaces and
   * parentheses, so the fields after it are found from the last ')'. */
  if (fgets(line, sizeof(line), f) != NULL &&
      (p = strrchr(line, ')')) != NULL && sscanf(p + 1, " %*c %ld", &ppid) != 1)
    ppid = -1;
  fclose(f);
  return (pid_t)ppid;
}

/* Pss and private (Private_Clean + Private_Dirty) resident memory of a
 * live process, in KiB, from smaps_rollup (Linux 4.14); -1 when unknown. */
static void read_rollup(pid_t pid, long *pss, long *priv) {
  char path[64];
  char line[256];
  FILE *f;
  long kib, clean = -1, dirty = -1;

  *pss = *priv = -1;
  snprintf(path, sizeof(path), "/proc/%ld/smaps_rollup", (long)pid);
  f = fopen(path, "r");
  if (f == NULL)
    return;
  while (fgets(line, sizeof(line), f) != NULL) {
    if (sscanf(line, "Pss: %ld kB", &kib) == 1)
      *pss = kib;
    else if (sscanf(line, "Private_Clean: %ld kB", &kib) == 1)
      clean = kib;
    else if (sscanf(line, "Private_Dirty: %ld kB", &kib) == 1)
      dirty = kib;
  }
  fclose(f);
  if (clean >= 0 && dirty >= 0)
    *priv = clean + dirty;
}

/* The largest peak resident set among the live server's children, in KiB,
 * or -1 if it has none, with that child's Pss and private memory.  For
 * mcpd --isolate the children are its plugin workers.
 * /proc/PID/task/TID/children needs CONFIG_PROC_CHILDREN, which not every
 * kernel has, so this looks at every process's parent instead. */
static void read_children_memory(pid_t pid, long *hwm, long *pss, long *priv) {
  struct dirent *e;
  DIR *d;
  long kib;
  pid_t child;

  *hwm = *pss = *priv = -1;
  d = opendir("/proc");
  if (d == NULL)
    return;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9' || read_ppid(e->d_name) != pid)
      continue;
    child = (pid_t)strtol(e->d_name, NULL, 10);
    kib = read_vmhwm(child);
    if (kib > *hwm) {
      *hwm = kib;
      read_rollup(child, pss, priv);
    }
  }
  closedir(d);
}

long load_reap(load_run *r) {
  struct rusage ru;
  int status;
  pid_t got;

  memset(&ru, 0, sizeof(ru));
  do
    got = wait4(r->pid, &status, 0, &ru);
  while (got < 0 && errno == EINTR);
  if (got < 0)
    load_fatal("wait4");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "mcpd-load: %s: server %s %d\n", load_run_name(r),
            WIFEXITED(status) ? "exited with status" : "killed by signal",
            WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    r->errors++;
  }
  return ru.ru_maxrss;
}
/* Forgets everything about the previous spawn, keeping the buffers. */
static void run_reset(load_run *r) {
  memset(&r->pid, 0, sizeof(*r) - offsetof(load_run, pid));
  r->t_send = r->t_send_base;
  r->lat = r->lat_base;
  r->in = r->in_base;
  r->out = r->out_base;
  r->in.len = 0;
  r->out.len = 0;
  r->last_progress = load_now_ns();
}

/* Hands the buffers, which may have grown, back for the next spawn. */
static void run_keep(load_run *r) {
  r->in_base = r->in;
  r->out_base = r->out;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x;
  uint64_t y;

  x = *(const uint64_t *)a;
  y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array, in microseconds. */
static double pct_us(const uint64_t *v, size_t n, double p) {
  size_t i;

  if (n == 0)
    return 0;
  i = (size_t)(p * n + 0.999999);
  if (i > 0)
    i--;
  if (i >= n)
    i = n - 1;
  return v[i] / 1000.0;
}

/* Runs `count` measured requests against one server, adding the time from
 * its first write to its last response to the server's busy time. */
static void run_chunk(load_run *r, int64_t count) {
  uint64_t busy;

  r->first_send = 0;
  run_phase(r, count, 1);
  if (r->first_send == 0 || r->last_recv <= r->first_send)
    return;
  busy = r->last_recv - r->first_send;
  r->busy_ns += busy;
  r->chunk_rate[r->nchunks++] = count / (busy / 1e9);
}

static int cmp_double(const void *a, const void *b) {
  double x;
  double y;

  x = *(const double *)a;
  y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median rate over chunks shrugs off a stall that hit one chunk; the
 * overall rate does not. */
static double median_chunk_rate(load_run *r) {
  if (r->nchunks == 0)
    return 0;
  qsort(r->chunk_rate, r->nchunks, sizeof(*r->chunk_rate), cmp_double);
  if (r->nchunks % 2)
    return r->chunk_rate[r->nchunks / 2];
  return (r->chunk_rate[r->nchunks / 2 - 1] + r->chunk_rate[r->nchunks / 2]) /
         2;
}

/* Counts what a broken server still owed, then reaps it. */
static void close_server(load_run *r) {
  int64_t missing;

  missing = r->outstanding + (r->init_done ? 0 : 1);
  if (r->broken && missing > 0) {
    fprintf(stderr, "mcpd-load: %s: %" PRId64 " responses missing\n",
            load_run_name(r), missing);
    r->errors += missing;
  }
  if (r->broken && r->errors == 0)
    r->errors = 1;
  /* The tick must not cut these reads short. */
  load_set_tick(0);
  r->hwm_kib = read_vmhwm(r->pid);
  read_children_memory(r->pid, &r->worker_hwm_kib, &r->worker_pss_kib,
                       &r->worker_private_kib);
  load_set_tick(1);
  r->maxrss_kib = r->tp->finish(r);
  run_keep(r);
}

/* With two servers the measured requests go out in chunks, alternating
 * A B B A A B ..., so that whatever else the machine is doing falls on both
 * alike and neither always goes first. */
int load_run_servers(load_run *servers, int count) {
  load_run *r;
  int64_t done;
  int64_t c;
  int64_t errors;
  int broken;
  int k;
  int i;

  broken = 0;
  for (i = 0; i < count && !broken; i++) {
    r = &servers[i];
    r->t_send_base =
        calloc(1 + load_opt.warmup + load_opt.n, sizeof(*r->t_send));
    r->lat_base = calloc(load_opt.n, sizeof(*r->lat));
    r->chunk_rate =
        calloc(load_opt.n / load_opt.chunk + 1, sizeof(*r->chunk_rate));
    if (r->t_send_base == NULL || r->lat_base == NULL || r->chunk_rate == NULL)
      load_fatal("calloc");
    run_reset(r);
    r->tp->spawn(r);
    r->tp->initialize(r);
    if (!r->broken && load_opt.warmup > 0)
      run_phase(r, load_opt.warmup, 0);
    broken = r->broken;
  }

  for (done = 0, k = 0; done < load_opt.n && !broken; done += c, k++) {
    c = load_opt.n - done < load_opt.chunk ? load_opt.n - done : load_opt.chunk;
    for (i = 0; i < count && !broken; i++) {
      r = &servers[k % 2 == 0 ? i : count - 1 - i];
      run_chunk(r, c);
      broken = r->broken;
    }
  }

  for (i = 0; i < count; i++)
    if (servers[i].pid != 0)
      close_server(&servers[i]);
  load_set_tick(0);

  errors = 0;
  for (i = 0; i < count; i++) {
    r = &servers[i];
    qsort(r->lat, r->nlat, sizeof(*r->lat), cmp_u64);
    printf("label=%s server=%d transport=%s era=%s method=%s n=%" PRId64
           " w=%" PRId64 " calls_per_s=%.1f median_chunk_per_s=%.1f p50_us=%.1f"
           " p99_us=%.1f max_us=%.1f rss_kib=%ld maxrss_kib=%ld"
           " worker_rss_kib=%ld worker_pss_kib=%ld worker_private_kib=%ld"
           " errors=%" PRId64 "\n",
           load_opt.label ? load_opt.label : "-", r->index, r->tp->name,
           r->modern ? "modern" : "legacy", load_opt.method, load_opt.n,
           load_opt.window, r->busy_ns > 0 ? r->nlat / (r->busy_ns / 1e9) : 0.0,
           median_chunk_rate(r), pct_us(r->lat, r->nlat, 0.50),
           pct_us(r->lat, r->nlat, 0.99), pct_us(r->lat, r->nlat, 1.0),
           r->hwm_kib, r->maxrss_kib, r->worker_hwm_kib, r->worker_pss_kib,
           r->worker_private_kib, r->errors);
    errors += r->errors;
    free(r->t_send_base);
    free(r->lat_base);
    free(r->chunk_rate);
    free(r->in.base);
    free(r->out.base);
    free(r->req_suffix);
  }
  fflush(stdout);
  return errors ? 1 : 0;
}

/* Spawns each server R times, alternating as load_run_servers() does, and times
 * spawn to initialize answered. */
int load_run_startup(load_run *servers, int count) {
  uint64_t *times[2];
  int64_t errors[2];
  int64_t total;
  load_run *r;
  uint64_t t0;
  int i;
  int j;

  for (i = 0; i < count; i++) {
    times[i] = calloc(load_opt.startup, sizeof(*times[i]));
    servers[i].t_send_base = calloc(1, sizeof(*servers[i].t_send_base));
    if (times[i] == NULL || servers[i].t_send_base == NULL)
      load_fatal("calloc");
    errors[i] = 0;
  }

  for (i = 0; i < load_opt.startup; i++) {
    for (j = 0; j < count; j++) {
      r = &servers[i % 2 == 0 ? j : count - 1 - j];
      run_reset(r);
      t0 = load_now_ns();
      r->tp->spawn(r);
      r->tp->initialize(r);
      if (r->broken || !r->init_done) {
        fprintf(stderr, "mcpd-load: %s: initialize not answered\n",
                load_run_name(r));
        r->errors++;
      }
      times[r->index - 1][i] = r->init_done ? r->init_answered_at - t0 : 0;
      r->tp->finish(r);
      run_keep(r);
      errors[r->index - 1] += r->errors;
    }
  }
  load_set_tick(0);

  total = 0;
  for (i = 0; i < count; i++) {
    qsort(times[i], load_opt.startup, sizeof(*times[i]), cmp_u64);
    printf("label=%s server=%d startup_runs=%d startup_p50_us=%.1f"
           " startup_max_us=%.1f errors=%" PRId64 "\n",
           load_opt.label ? load_opt.label : "-", i + 1, load_opt.startup,
           pct_us(times[i], load_opt.startup, 0.50),
           pct_us(times[i], load_opt.startup, 1.0), errors[i]);
    total += errors[i];
    free(times[i]);
    free(servers[i].t_send_base);
    free(servers[i].in.base);
    free(servers[i].out.base);
    free(servers[i].req_suffix);
  }
  fflush(stdout);
  return total ? 1 : 0;
}

/* Builds the part of every request that follows the id, checking --args;
 * in the modern era with the envelope in params._meta. */
void load_build_request(load_run *r, const char *tool, const char *args) {
  json_object *a;
  json_object *name;
  load_buf b;

  r->tool = tool;
  memset(&b, 0, sizeof(b));
  load_buf_adds(&b, ",\"method\":");
  name = json_object_new_string(load_opt.method);
  load_buf_adds(&b,
                json_object_to_json_string_ext(name, JSON_C_TO_STRING_PLAIN));
  json_object_put(name);
  if (strcmp(load_opt.method, "tools/call") == 0) {
    a = json_tokener_parse(args);
    if (a == NULL || !json_object_is_type(a, json_type_object)) {
      fprintf(stderr, "mcpd-load: --args is not a JSON object: %s\n", args);
      exit(2);
    }
    name = json_object_new_string(tool);
    load_buf_adds(&b, ",\"params\":{\"name\":");
    load_buf_adds(&b,
                  json_object_to_json_string_ext(name, JSON_C_TO_STRING_PLAIN));
    load_buf_adds(&b, ",\"arguments\":");
    load_buf_adds(
        &b, json_object_to_json_string_ext(
                a, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    if (r->modern)
      load_buf_adds(&b, ",\"_meta\":{" LOAD_MODERN_META "}");
    load_buf_adds(&b, "}");
    json_object_put(name);
    json_object_put(a);
  } else if (r->modern) {
    load_buf_adds(&b, ",\"params\":{\"_meta\":{" LOAD_MODERN_META "}}");
  }
  load_buf_adds(&b, "}\n");
  r->req_suffix = b.base;
  r->req_suffix_len = b.len;
}

static void on_alarm(int sig) {
  (void)sig;
  alarm_ticks++;
}

void load_start(void) {
  struct sigaction sa;

  /* A dead server must show up as EPIPE, not kill the driver. */
  signal(SIGPIPE, SIG_IGN);

  /* No SA_RESTART: the tick must interrupt a blocking read. */
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_alarm;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, NULL);
  load_set_tick(1);
}
