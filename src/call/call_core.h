/* SPDX-License-Identifier: MIT */
/* call_core.h -- the bottom of the call room: struct mcpd_call, the
 * events a call queues for the loop, and a call's life (start, finish,
 * cancel).  The modules above (sched, result, ask, remote) hear of that
 * life through the hooks host_api.c registers (struct call_hooks); the
 * core never calls them by name.
 *
 * A call holds a reference on its entry and its plugin, so neither goes
 * away while the callback runs.  Whatever thread the callback runs on, the
 * response is written from the loop thread: work other threads hand back
 * goes through the executor's host queue, in order, so progress a tool
 * reported always precedes its response. */
#ifndef MCPD_CALL_CORE_H
#define MCPD_CALL_CORE_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>

#include <json-c/json.h>

#include "ask_part.h"
#include "call.h"
#include "hostq.h"
#include "mcpd.h"
#include "remote_part.h"
#include "result_part.h"
#include "schedule_part.h"
#include "session.h"

/* What a client declared it can do, as CLIENT_* bits, so that any thread
 * can check a request to it without touching the session. */
#define CLIENT_SAMPLING 0x1u
#define CLIENT_SAMPLING_TOOLS 0x2u
#define CLIENT_ELICIT_FORM 0x4u
#define CLIENT_ELICIT_URL 0x8u
#define CLIENT_ROOTS 0x10u
/* The CLIENT_* bits of a capabilities object (NULL: none). */
unsigned call_client_caps(json_object *caps);

/* The plugin never sees this struct: its `mcpd_call *` is a handle (see
 * handles.h) that the host table resolves, so a call used after it
 * finished is refused, not dereferenced.  The core's fields come first;
 * each part after them belongs to the module that declares it. */
struct mcpd_call {
  call_exec *exec;
  uintptr_t handle;
  request *req; /* answered when the call ends */
  call_kind kind;
  struct reg_entry *entry;
  struct plugin *plugin;
  char *name;             /* call_args.name, owned */
  json_object *args;      /* arguments (completion: context), owned */
  json_object *variables; /* owned, may be NULL */
  json_object *meta;      /* params._meta, owned, may be NULL */
  char *argument;         /* completion */
  char *value;            /* completion */
  mcpd_request request;   /* what the callback receives */
  /* What the client declared (CLIENT_* bits) and its roots as JSON text,
   * copied at the start so any thread may read them. */
  unsigned client_caps;
  char *roots;
  /* A 2026-07-28 request: the capabilities above are its envelope's, it
   * has no roots, and the call may not ask its client anything. */
  int modern;
  /* A modern retry's answers (call_args.answers): a private copy,
   * read-only while the call runs, that ask.c answers requests from. */
  json_object *answers;
  /* mcpd_host.on_cancel(); written and read with the handle's slot
   * locked, run on the loop thread. */
  void (*cancel_cb)(void *arg);
  void *cancel_arg;
  atomic_int cancel_running; /* the loop is inside cancel_cb */
  atomic_int cancelled;
  atomic_int completed;
  /* CALL_TASK_*: whether the call is a task's run, or may turn into one
   * (mcpd_host.task_begin()); any thread reads it. */
  atomic_int task;

  /* --log-format json: the request id (JSON text) and session tag its
   * plugin's log lines carry, copied at the start so any thread may read
   * them; NULL and "" otherwise. */
  char *log_request;
  char log_session[9];
  /* When the call started (uv_hrtime), for its latency; 0 without
   * metrics. */
  uint64_t started;

  call_sched sched;   /* schedule.c */
  call_result result; /* result.c */
  call_ask ask;       /* ask.c */
  call_remote remote; /* remote.c */
};

/* mcpd_call.task.  In worker mode the host says which in the request's
 * _meta["io.mcpd/client"]["task"] ("is", "may"). */
#define CALL_TASK_NONE 0
#define CALL_TASK_MAY 1 /* a tool that may become a task, on request */
#define CALL_TASK_IS 2  /* a task's run */

/* How many hooks each event of struct call_hooks may have. */
#define CALL_HOOKS_MAX 4

typedef void (*call_hook)(mcpd_call *c);

/* Who hears what happens to a call, each list run in its order up to its
 * first NULL (loop thread).  Registered by the owner (host_api.c), so
 * that the core calls up only through these pointers. */
typedef struct call_hooks {
  /* A new call, not yet running: each part sets up its fields. */
  call_hook setup[CALL_HOOKS_MAX];
  /* The call starts; a hook that returns 1 took over running it (the
   * core runs INLINE and ASYNC calls that none took). */
  int (*start[CALL_HOOKS_MAX])(mcpd_call *c);
  /* The call was cancelled, after the plugin's on_cancel callback. */
  call_hook cancel[CALL_HOOKS_MAX];
  /* The call ends: its handle is stale, its answer not yet sent. */
  call_hook end[CALL_HOOKS_MAX];
  /* The call is freed: each part lets go of what it owns. */
  call_hook free[CALL_HOOKS_MAX];
  /* Answers the call's request when it ends. */
  void (*answer)(mcpd_call *c, request *r, int status);
} call_hooks;

/* One event type for everything the call room hands to the loop. */
typedef struct call_event {
  hostq_event base;
  call_exec *exec;
  mcpd_call *call;         /* completion, progress */
  struct plugin *plugin;   /* run-time tools; holds a reference */
  json_object *msg;        /* progress params */
  struct reg_entry *entry; /* add_*: the entry to register */
  struct client_ask *ask;  /* client_request */
  int kind;                /* remove_*: the reg_kind */
  char *name; /* remove_*: the key; log: the logger; updated: uri */
  char *text; /* log */
  int value;  /* completion status, log level; answer: code */
  /* answer: the plugin's client_request callback, run with `msg` (the
   * answer) or with `value` and `text` (an error). */
  void (*reply_cb)(void *arg, json_object *result, int code,
                   const char *message);
  void *reply_arg;
} call_event;

call_event *call_event_new(call_exec *e, hostq_run_cb run);
void call_event_free(call_event *ev);

/* The reason behind the last host function that failed on this thread,
 * for mcpd_host.last_error(). */
void call_set_error(const char *fmt, ...) MCPD_PRINTF(1, 2);
const char *call_last_error(void);

/* printf into a new malloc'd string, or NULL. */
char *call_vmprintf(const char *fmt, va_list ap);
char *call_mprintf(const char *fmt, ...) MCPD_PRINTF(1, 2);

/* What the call serves, for messages: "tool", "read of", ... */
const char *call_what(const mcpd_call *c);
/* The call's progress token, a string or an integer, or NULL. */
json_object *call_progress_token(const mcpd_call *c);
/* The call whose callback runs on this thread, if any. */
mcpd_call *call_running(void);

/* Runs the plugin's callback for the call; returns what it returned. */
int call_invoke(mcpd_call *c);
/* Marks the call completed (see call_core.c); returns whether it already
 * was. */
int call_mark_completed(mcpd_call *c);
/* Waits for an on_cancel callback of `c` another thread runs. */
void call_wait_cancel_cb(mcpd_call *c);
/* Whether results may still be built on the call (not once it completed);
 * sets last_error when not. */
int call_usable(mcpd_call *c);

/* Finishes a call whose callback is done (loop thread), behind what it
 * queued before. */
void call_done(mcpd_call *c, int status);
/* Finishes `c` on a later loop turn; -1 when out of memory. */
int call_finish_queued(mcpd_call *c, int status);
/* Answers the call's request now with error `code` and `msg` (and
 * `data`, taken over), and detaches it: the call goes on without it. */
void call_answer_early(mcpd_call *c, int code, const char *msg,
                       json_object *data);

/* complete() of an ASYNC call: claims its completion, or returns 0 when
 * the call is not asynchronous or was completed already. */
int call_claim_completion(mcpd_call *c);
/* on_cancel(): stores the callback, or returns 1 when the call was
 * cancelled already and the caller must run it now itself. */
int call_set_cancel_cb(mcpd_call *c, void (*cb)(void *arg), void *arg);

#endif
