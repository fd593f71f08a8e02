/* SPDX-License-Identifier: MIT */
/* metrics.c -- the counters and histograms of metrics.h, and their page. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

/* Bounds: what a label may take, so that no input grows the page. */
#define MAX_OUTCOMES 24  /* distinct JSON-RPC codes per method */
#define MAX_STATUSES 24  /* distinct HTTP statuses */
#define MAX_SERIES 10000 /* (plugin, tool) latency series */

int metrics_on;

/* The requests mcpd serves, by name; anything else counts as "other". */
static const char *const methods[] = {"completion/complete",
                                      "initialize",
                                      "logging/setLevel",
                                      "ping",
                                      "prompts/get",
                                      "prompts/list",
                                      "resources/list",
                                      "resources/read",
                                      "resources/subscribe",
                                      "resources/templates/list",
                                      "resources/unsubscribe",
                                      "server/discover",
                                      "subscriptions/listen",
                                      "tasks/cancel",
                                      "tasks/get",
                                      "tasks/list",
                                      "tasks/result",
                                      "tasks/update",
                                      "tools/call",
                                      "tools/list",
                                      "other"};
#define N_METHODS (sizeof(methods) / sizeof(methods[0]))

typedef struct outcome {
  int code; /* 0: a result */
  uint64_t count;
} outcome;

static struct {
  outcome outcomes[MAX_OUTCOMES];
  size_t n;
} requests[N_METHODS];

static struct {
  unsigned status;
  uint64_t count;
} statuses[MAX_STATUSES];
static size_t n_statuses;

static atomic_uint_fast64_t counters[METRICS_COUNTERS];

/* Upper bounds of the latency buckets, in seconds; +Inf is implied. */
static const double bounds[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                1,     2.5,   5,    10,    30,   60,  300};
#define N_BOUNDS (sizeof(bounds) / sizeof(bounds[0]))

struct metrics_series {
  char *plugin, *tool;
  uint64_t buckets[N_BOUNDS + 1]; /* the last is +Inf */
  uint64_t count;
  double sum;
  struct metrics_series *next;
};

static struct metrics_series *series, **series_tail = &series;
static size_t n_series;

void metrics_enable(void) {
  metrics_on = 1;
}

void metrics_count(metrics_counter which) {
  if (metrics_on)
    atomic_fetch_add(&counters[which], 1);
}

static size_t method_index(const char *method) {
  size_t lo = 0, hi = N_METHODS - 1; /* "other" is not searched */

  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int cmp = strcmp(method, methods[mid]);
    if (cmp == 0)
      return mid;
    if (cmp < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return N_METHODS - 1;
}

void metrics_request(const char *method, int code) {
  size_t m;

  if (!metrics_on || method == NULL)
    return;
  m = method_index(method);
  for (size_t i = 0; i < requests[m].n; i++)
    if (requests[m].outcomes[i].code == code) {
      requests[m].outcomes[i].count++;
      return;
    }
  if (requests[m].n < MAX_OUTCOMES) {
    requests[m].outcomes[requests[m].n].code = code;
    requests[m].outcomes[requests[m].n++].count = 1;
  }
}

void metrics_http_status(unsigned status) {
  if (!metrics_on)
    return;
  for (size_t i = 0; i < n_statuses; i++)
    if (statuses[i].status == status) {
      statuses[i].count++;
      return;
    }
  if (n_statuses < MAX_STATUSES) {
    statuses[n_statuses].status = status;
    statuses[n_statuses++].count = 1;
  }
}

struct metrics_series *metrics_tool_series(const char *plugin,
                                           const char *tool) {
  struct metrics_series *s;

  if (!metrics_on || n_series >= MAX_SERIES)
    return NULL;
  for (s = series; s; s = s->next)
    if (strcmp(s->plugin, plugin) == 0 && strcmp(s->tool, tool) == 0)
      return s;
  if ((s = calloc(1, sizeof(*s))) == NULL ||
      (s->plugin = strdup(plugin)) == NULL ||
      (s->tool = strdup(tool)) == NULL) {
    if (s != NULL)
      free(s->plugin);
    free(s);
    return NULL;
  }
  *series_tail = s;
  series_tail = &s->next;
  n_series++;
  return s;
}

void metrics_observe(struct metrics_series *s, uint64_t nanoseconds) {
  double seconds = (double)nanoseconds / 1e9;
  size_t i = 0;

  if (s == NULL)
    return;
  while (i < N_BOUNDS && seconds > bounds[i])
    i++;
  s->buckets[i]++;
  s->count++;
  s->sum += seconds;
}

void metrics_family(strbuf *out, const char *name, const char *type,
                    const char *help) {
  strbuf_puts(out, "# HELP ");
  strbuf_puts(out, name);
  strbuf_puts(out, " ");
  strbuf_puts(out, help);
  strbuf_puts(out, "\n# TYPE ");
  strbuf_puts(out, name);
  strbuf_puts(out, " ");
  strbuf_puts(out, type);
  strbuf_puts(out, "\n");
}

void metrics_label(strbuf *out, const char *value) {
  strbuf_puts(out, "\"");
  for (const char *p = value; *p; p++) {
    if (*p == '\\')
      strbuf_puts(out, "\\\\");
    else if (*p == '"')
      strbuf_puts(out, "\\\"");
    else if (*p == '\n')
      strbuf_puts(out, "\\n");
    else
      strbuf_append(out, p, 1);
  }
  strbuf_puts(out, "\"");
}

static void put_u64(strbuf *out, uint64_t v) {
  char text[24];
  snprintf(text, sizeof(text), "%" PRIu64, v);
  strbuf_puts(out, text);
}

static void render_series(strbuf *out, const struct metrics_series *s) {
  uint64_t cumulative = 0;
  char text[64];

  for (size_t i = 0; i <= N_BOUNDS; i++) {
    cumulative += s->buckets[i];
    strbuf_puts(out, "mcpd_tool_call_duration_seconds_bucket{plugin=");
    metrics_label(out, s->plugin);
    strbuf_puts(out, ",tool=");
    metrics_label(out, s->tool);
    if (i < N_BOUNDS)
      snprintf(text, sizeof(text), ",le=\"%g\"} ", bounds[i]);
    else
      snprintf(text, sizeof(text), ",le=\"+Inf\"} ");
    strbuf_puts(out, text);
    put_u64(out, cumulative);
    strbuf_puts(out, "\n");
  }
  strbuf_puts(out, "mcpd_tool_call_duration_seconds_sum{plugin=");
  metrics_label(out, s->plugin);
  strbuf_puts(out, ",tool=");
  metrics_label(out, s->tool);
  snprintf(text, sizeof(text), "} %.9g\n", s->sum);
  strbuf_puts(out, text);
  strbuf_puts(out, "mcpd_tool_call_duration_seconds_count{plugin=");
  metrics_label(out, s->plugin);
  strbuf_puts(out, ",tool=");
  metrics_label(out, s->tool);
  strbuf_puts(out, "} ");
  put_u64(out, s->count);
  strbuf_puts(out, "\n");
}

static void render_counter(strbuf *out, const char *name, const char *help,
                           metrics_counter which) {
  metrics_family(out, name, "counter", help);
  strbuf_puts(out, name);
  strbuf_puts(out, " ");
  put_u64(out, atomic_load(&counters[which]));
  strbuf_puts(out, "\n");
}

void metrics_render(strbuf *out) {
  char text[32];

  metrics_family(out, "mcpd_requests_total", "counter",
                 "Requests answered, by method and outcome (result, or the "
                 "JSON-RPC error code).");
  for (size_t m = 0; m < N_METHODS; m++)
    for (size_t i = 0; i < requests[m].n; i++) {
      const outcome *o = &requests[m].outcomes[i];
      strbuf_puts(out, "mcpd_requests_total{method=");
      metrics_label(out, methods[m]);
      if (o->code == 0) {
        strbuf_puts(out, ",outcome=\"result\"} ");
      } else {
        snprintf(text, sizeof(text), ",outcome=\"%d\"} ", o->code);
        strbuf_puts(out, text);
      }
      put_u64(out, o->count);
      strbuf_puts(out, "\n");
    }
  metrics_family(out, "mcpd_http_responses_total", "counter",
                 "HTTP responses, by status.");
  for (size_t i = 0; i < n_statuses; i++) {
    snprintf(text, sizeof(text), "{status=\"%u\"} ", statuses[i].status);
    strbuf_puts(out, "mcpd_http_responses_total");
    strbuf_puts(out, text);
    put_u64(out, statuses[i].count);
    strbuf_puts(out, "\n");
  }
  metrics_family(out, "mcpd_tool_call_duration_seconds", "histogram",
                 "How long tool calls took, from start to answer, by plugin "
                 "and tool.");
  for (const struct metrics_series *s = series; s; s = s->next)
    render_series(out, s);
  render_counter(out, "mcpd_plugin_load_failures_total",
                 "Plugin files refused (a bad file, a failed init, a worker "
                 "that never became ready).",
                 METRICS_LOAD_FAILURES);
  render_counter(out, "mcpd_worker_restarts_total",
                 "Worker processes restarted after they died.",
                 METRICS_WORKER_RESTARTS);
  render_counter(out, "mcpd_worker_parks_total",
                 "Workers parked after dying too often, until their file "
                 "changes.",
                 METRICS_WORKER_PARKS);
}

void metrics_free(void) {
  while (series != NULL) {
    struct metrics_series *s = series;
    series = s->next;
    free(s->plugin);
    free(s->tool);
    free(s);
  }
  series_tail = &series;
  n_series = 0;
}
