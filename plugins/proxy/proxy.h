/* SPDX-License-Identifier: MIT */
/* proxy.h -- the proxy plugin's shared types.
 *
 * Two kinds of thread touch the plugin.  mcpd's threads run its callbacks
 * (tools, reads, prompts, completion, subscribe; all ASYNC or on the
 * loop), which only copy what they were given into a command and post it.
 * The proxy thread (proxy.c) owns everything else: the upstreams, their
 * links and every table, and it alone talks to them.  The only state both
 * see is the command queue and the start-up count, under `lock`. */
#ifndef MCPD_PROXY_H
#define MCPD_PROXY_H

#include <pthread.h>

#include <mcpd.h>

#include "link.h"

typedef struct px px;
typedef struct px_upstream px_upstream;

/* What a forwarded call asks its upstream. */
typedef enum px_call_kind {
  PX_TOOL,
  PX_READ,
  PX_PROMPT,
  PX_COMPLETE_PROMPT,
  PX_COMPLETE_TEMPLATE
} px_call_kind;

typedef enum px_cmd_kind {
  PX_CMD_CALL,      /* a call to forward */
  PX_CMD_CANCEL,    /* the client cancelled `call` */
  PX_CMD_SUBSCRIBE, /* `flag`: first subscriber of `name` came, or last left */
  PX_CMD_ANSWER,    /* the client answered an upstream's request */
  PX_CMD_INPUT      /* ...or one of a 2026-07-28 upstream's inputRequests */
} px_cmd_kind;

typedef struct px_cmd {
  struct px_cmd *next;
  px_cmd_kind kind;
  px_upstream *up;
  px_call_kind call_kind;
  mcpd_call *call;
  /* The tool or prompt name as mcpd knows it, the URI, or the template. */
  char *name;
  /* Owned deep copies.  CALL: the arguments (completion: the context's
   * arguments); ANSWER: the client's result, or an error object. */
  json_object *params;
  /* CALL: true when the client asked for progress (the token stays
   * mcpd's), or NULL.  Completion: the argument's name and value, as
   * {"name","value"}. */
  json_object *extra;
  /* SUBSCRIBE: on or off.  ANSWER: 1 for a result, 0 for an error. */
  int flag;
  /* ANSWER: which life of the upstream asked, and the id it asked with;
   * INPUT: the id of the call's request that answered input_required, and
   * `name` is the input's key. */
  unsigned gen;
  json_object *id;
} px_cmd;

struct px {
  const mcpd_host *host;
  mcpd_self *self;
  CURLM *multi;
  pthread_t thread;
  int thread_started;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  /* Under `lock`. */
  px_cmd *head, *tail;
  int stopping;
  size_t starting; /* upstreams yet to finish their first listing */
  /* Set at init, then read-only. */
  px_upstream **ups;
  size_t n_ups;
  char *log_level; /* what upstreams are asked to log (logging/setLevel) */
  int64_t start_timeout_ms;
  int64_t list_timeout_ms; /* a listing not answered by then has failed */
  px *next_instance;       /* proxy.c's list of live instances */
};

/* cmdq.c */
/* Queues a command for the proxy thread and wakes it.  Any thread. */
void px_post(px *p, px_cmd *cmd);
void px_cmd_free(px_cmd *cmd);
/* One upstream finished starting (its first listing arrived or it failed
 * to start): init() stops waiting once all have. */
void px_started(px *p);

/* config.c -- servers.NAME of the config, into `u`; MCPD_ERROR with
 * *errmsg set (host->mprintf).  up_config_free() frees what it read. */
int up_read_config(px_upstream *u, json_object *def, char **errmsg);
void up_config_free(px_upstream *u);

/* The index of an MCP log level name ("debug" 0 ... "emergency" 7, as
 * mcpd_log_level), or -1 (cmdq.c). */
int px_log_level(const char *name);

/* upstream.c -- one upstream server, on the proxy thread except
 * up_new()/up_free(). */
/* Reads servers.NAME of the config; NULL with *errmsg set (host->mprintf). */
px_upstream *up_new(px *p, const char *name, json_object *def, char **errmsg);
void up_free(px_upstream *u);
void up_start(px_upstream *u);
/* Ends the upstream for good (fini): its link closed, pending calls
 * failed. */
void up_stop(px_upstream *u);
void up_command(px_upstream *u, px_cmd *cmd);
size_t up_want(px_upstream *u, struct curl_waitfd *fds, size_t room);
void up_ready(px_upstream *u, const struct curl_waitfd *fds, size_t n);
int64_t up_deadline(px_upstream *u);
void up_tick(px_upstream *u, int64_t now);

/* entries.c -- what an upstream offers, registered with mcpd under
 * mapped names, and the way back from those names. */
typedef enum px_kind {
  PX_TOOLS,
  PX_RESOURCES,
  PX_TEMPLATES,
  PX_PROMPTS,
  PX_KINDS
} px_kind;

/* One entry an upstream listed: `key` is what mcpd knows it by (the
 * mapped tool or prompt name, the URI, the template), `upname` the
 * upstream's own name, `text` the listing's JSON text (a change of it is
 * a change of the entry). */
typedef struct px_entry {
  char *key;
  char *upname;
  char *text;
  int task_support; /* tools: mcpd_task_support */
  int added;        /* mcpd accepted it (else it was skipped, and logged) */
  /* The listing's object, borrowed while ent_apply() runs, NULL after. */
  json_object *item;
} px_entry;

typedef struct px_entries {
  px_entry *v;
  size_t n, cap;
} px_entries;

/* Replaces what `u` offers of `kind` with `items` (the listing's array),
 * telling mcpd what left, what came and what changed. */
void ent_apply(px_upstream *u, px_kind kind, json_object *items);
/* Everything `u` offers leaves (it went down). */
void ent_clear(px_upstream *u);
/* Frees what `u` offers without telling mcpd (the plugin is going). */
void ent_forget(px_upstream *u);
/* Whether `c` may stand in a tool or prompt name every client accepts
 * (^[A-Za-z0-9_-]$). */
int ent_name_char(char c);
/* The entry mcpd knows as `key`, or NULL. */
const px_entry *ent_find(const px_upstream *u, px_kind kind, const char *key);
/* The result key of a listing ("tools", ...) and its method. */
const char *ent_list_key(px_kind kind);
const char *ent_list_method(px_kind kind);

/* The callbacks of every forwarded entry (callbacks.c), and the list of
 * live instances a cancellation is told to. */
void px_instance_add(px *p);
void px_instance_remove(px *p);
int px_tool_cb(mcpd_call *call, const mcpd_request *req);
int px_read_cb(mcpd_call *call, const mcpd_request *req);
int px_prompt_cb(mcpd_call *call, const mcpd_request *req);
int px_complete_prompt_cb(mcpd_call *call, const mcpd_request *req,
                          const char *argument, const char *value,
                          json_object *context);
int px_complete_template_cb(mcpd_call *call, const mcpd_request *req,
                            const char *argument, const char *value,
                            json_object *context);
void px_subscribe_cb(const mcpd_request *req, int subscribed);

/* A request sent upstream, waiting for its answer. */
typedef struct px_pending px_pending;

typedef enum px_up_state { UP_DOWN, UP_INIT, UP_READY } px_up_state;

struct px_upstream {
  px *px;
  char *name;   /* the config's key */
  char *prefix; /* of tool and prompt names */
  /* How to reach it: a command, or a URL. */
  char **argv;
  char **envp;
  char *cwd;
  char *url;
  json_object *headers;

  px_link *link;
  px_up_state state;
  int modern;         /* it speaks 2026-07-28: no session, envelopes */
  int64_t listen_id;  /* modern: the subscriptions/listen open, or 0 */
  int link_gone;      /* the link reported `closed`; close it and retry */
  char gone_why[256]; /* ...and why */
  unsigned gen;       /* one more at each (re)start */
  int64_t next_id;    /* of requests sent upstream */
  px_pending *pending;
  json_object *caps;     /* the server's capabilities */
  int listing[PX_KINDS]; /* a list request of that kind is out */
  int relist[PX_KINDS];  /* ...and another is due when it answers */
  int first_listing;     /* kinds still to answer the first time */
  int started;           /* px_started() was called */
  int64_t init_deadline; /* initialize must answer by then */
  int64_t restart_at;    /* when down: when to try again, or 0 */
  int64_t backoff_ms;
  int64_t up_since;
  px_entries entries[PX_KINDS];
  /* URIs subscribed through mcpd, renewed after each restart. */
  char **subs;
  size_t n_subs;
  /* The roots last given to this upstream (JSON text), and calls held
   * until it has fetched new ones. */
  char *roots;
  int64_t hold_until;
  px_pending *held;
};

#endif
