/* call.h -- one tool call in flight: where its callback runs, the result it
 * builds, progress, cancellation and completion.
 *
 * A call holds a reference on its tool and its plugin, so neither goes away
 * while the callback runs.  Whatever thread the callback runs on, the
 * response is written from the loop thread. */
#ifndef MCPD_CALL_H
#define MCPD_CALL_H

#include <stdatomic.h>

#include <json-c/json.h>
#include <uv.h>

#include "mcpd.h"
#include "registry.h"
#include "strbuf.h"

struct server;
struct request;
struct plugin;

struct mcpd_call {
  struct server *srv;
  struct request *req; /* NULL once the client cancelled */
  reg_tool *tool;
  struct plugin *plugin;
  json_object *args;
  strbuf content; /* content blocks as JSON text, comma-joined */
  size_t n_blocks;
  json_object *structured;  /* structuredContent */
  json_object *replacement; /* result_json() */
  int is_error;
  int bad_result; /* a builder was misused */
  json_object *progress_token;
  double last_progress;
  int status;
  atomic_int cancelled;
  atomic_int completed;
  uv_work_t work;
};

/* Starts `tool` for request `r` with validated `args` (a new reference is
 * taken).  The request is answered when the call ends. */
void call_start(struct request *r, reg_tool *tool, json_object *args);
/* The client cancelled: the callback sees cancelled() and the response is
 * dropped. */
void call_cancel(struct mcpd_call *call);
/* Finishes a call on the loop thread (used by the host queue). */
void call_finish(struct mcpd_call *call, int status);
/* Sets the cancelled flag of every call of every session at shutdown. */

extern const mcpd_host call_host_api;

#endif
