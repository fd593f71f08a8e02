/* SPDX-License-Identifier: MIT */
/* metrics.h -- what an operator scrapes (Prometheus text format): the
 * counters and histograms mcpd's modules feed as things happen, written
 * out by metrics_render().  Gauges (calls in flight, sessions, tasks,
 * memory) are read when the page is made, by whoever owns them.
 *
 * Nothing is counted until metrics_enable(): a server that serves no page
 * pays one branch per event.  Label values are bounded: method names
 * mcpd knows ("other" for the rest), JSON-RPC codes and HTTP statuses
 * mcpd itself answers with, and the plugins and tools loaded -- never a
 * session, a token or an argument. */
#ifndef MCPD_METRICS_H
#define MCPD_METRICS_H

#include <stdatomic.h>
#include <stdint.h>

#include "strbuf.h"

/* Whether metrics are kept (read it before doing any work for them). */
extern int metrics_on;
void metrics_enable(void);

typedef enum metrics_counter {
  METRICS_LOAD_FAILURES,   /* a plugin file refused */
  METRICS_WORKER_RESTARTS, /* a crashed worker restarted */
  METRICS_WORKER_PARKS,    /* a worker that crashed too often, parked */
  METRICS_COUNTERS
} metrics_counter;

/* Any thread. */
void metrics_count(metrics_counter which);

/* The loop thread: a request answered with JSON-RPC error `code`, or 0
 * for a result; an HTTP response's status. */
void metrics_request(const char *method, int code);
void metrics_http_status(unsigned status);

/* A tool's latency series, found (or made) once per registry entry and
 * kept by it: NULL when out of memory or past the bound on series.  Loop
 * thread. */
struct metrics_series;
struct metrics_series *metrics_tool_series(const char *plugin,
                                           const char *tool);
void metrics_observe(struct metrics_series *s, uint64_t nanoseconds);

/* Appends the families kept here to `out`. */
void metrics_render(strbuf *out);

/* Helpers for the owners of gauges: "# HELP" and "# TYPE" lines, and a
 * label value escaped as the format wants. */
void metrics_family(strbuf *out, const char *name, const char *type,
                    const char *help);
void metrics_label(strbuf *out, const char *value);

/* Frees the series (at exit, for leak checkers). */
void metrics_free(void);

#endif
