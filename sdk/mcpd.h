/* SPDX-License-Identifier: MIT */
/* mcpd.h -- the plugin SDK for mcpd, the MCP server host.
 *
 * A plugin is a shared object that exports exactly one symbol, `mcpd_plugin`,
 * a const mcpd_plugin_descriptor filled with MCPD_PLUGIN_DEFINE().  The host
 * reads the descriptor, checks its ABI numbers and size, validates its tables
 * and only then calls init().  Everything the plugin offers -- tools,
 * resources, resource templates, prompts -- is described by static const
 * tables, each closed by a zeroed sentinel, so the host can list them without
 * running plugin code.
 *
 * This header is self-contained: it needs the C standard headers and json-c.
 * Arguments arrive as json-c objects and results are built through the host
 * API table (struct mcpd_host) handed to init().  A plugin links against
 * nothing but json-c; the host binary exports no symbols.
 *
 * ABI STABILITY POLICY
 *
 *   MCPD_ABI_MAJOR changes only when an existing field or function changes
 *   meaning or position.  The host refuses a plugin whose major differs.
 *   MCPD_ABI_MINOR grows when fields are appended to a struct (tables,
 *   mcpd_request) or functions to the host table; nothing is ever removed,
 *   reordered or given a new meaning within a major.  These numbers are
 *   independent of the package version.
 *
 *   ABI 1.0 IS FROZEN.  A copy of this header as it was frozen, and plugins
 *   built against it, live in mcpd's tests/abi/; every later host must
 *   load them.  From here on a change is an append within the rules below,
 *   and bumps MCPD_ABI_MINOR.
 *
 *   The rules that make appending safe:
 *   - The host loads a plugin only when the plugin's minor is <= its own.
 *     So a plugin may use every host function and every mcpd_request field
 *     of the header it was built with, without testing anything.
 *   - MCPD_PLUGIN_DEFINE records the plugin's sizeof of the descriptor and
 *     of every table element.  The host steps through each table by the
 *     plugin's element size and reads a field only when that size covers
 *     it, so a plugin built against an older header keeps loading after
 *     fields are appended.  Fields the plugin's size does not cover read as
 *     zero.
 *   - Reserved fields MUST be zero; the host refuses a plugin that sets one,
 *     in every table, so they can be given meaning later.
 *
 * OWNERSHIP, in one paragraph
 *
 *   Every `const char *` and table in a descriptor is owned by the plugin and
 *   MUST stay valid while the plugin is loaded (string literals and static
 *   tables are the intended use).  `json_object *` arguments passed to a
 *   callback are borrowed: valid until the callback returns (for asynchronous
 *   tools, until mcpd_host.complete()), and the plugin takes a reference with
 *   json_object_get() if it needs them longer.  A `json_object *` handed TO the
 *   host is always consumed by the host, also on error.  Error text written to
 *   `*errmsg` MUST come from mcpd_host.mprintf(); the host frees it.  Memory
 *   the plugin allocates with malloc() is never freed by the host.
 *
 * THREADS, callback by callback
 *
 *   init() and fini()            the loop thread.
 *   MCPD_EXEC_INLINE tools       the loop thread; MUST NOT block.
 *   MCPD_EXEC_POOL tools         a worker of mcpd's pool (--threads, default
 *                                8), which runs plugin code only.
 *   MCPD_EXEC_ASYNC tools        start on the loop thread; complete() and the
 *                                result builders may then run on any thread.
 *   resource reads, prompt gets  where the entry's `exec` says, as for tools
 *   and completions              (POOL by default).
 *   subscribe callbacks          the loop thread; MUST NOT block.
 *   on_cancel callbacks          the loop thread (see on_cancel()).
 *   Host functions may be called from any thread.  Everything they hand to
 *   clients (responses, progress, logs, list changes) is written by the loop
 *   in the order it was handed over, so progress always precedes the
 *   response.  POOL and ASYNC callbacks receive arguments of their own: no
 *   other thread touches those json-c objects.
 *
 * A FINISHED CALL
 *
 *   An `mcpd_call *` is a handle, not a pointer into the host.  Once the
 *   call has been answered (the callback returned, or complete() ran), every
 *   result_*, progress() and complete() on it returns MCPD_ERROR and logs
 *   one line naming the plugin; cancelled() returns nonzero.  Nothing
 *   crashes, but it is a bug in the plugin.  A callback MUST return MCPD_OK
 *   or MCPD_ERROR; any other value is answered with an internal error and
 *   logged.
 *
 * RELOAD, in order
 *
 *   When a plugin file is replaced, the new image is loaded beside the old
 *   one and its init() runs while calls into the old instance may still be
 *   in flight; the two instances share no state.  If init() succeeds, the
 *   old instance's tools leave the registry and the new one's arrive in the
 *   same loop turn (a client never sees neither), and the log names the
 *   instance that was unloaded.  Calls already running finish on the old
 *   code; the old instance's fini() runs after the last of them, and only
 *   then is its image unmapped.  If init() fails, the old instance stays.
 *
 * RESULTS THAT BREAK THE TOOL'S OUTPUT SCHEMA
 *
 *   A tool that declares an output schema MUST return structuredContent
 *   that matches it.  When it does not, the client gets JSON-RPC -32603
 *   (internal error) naming the tool and the mismatch, and the log gets the
 *   same line: the fault is the plugin's, not the model's, so it is not
 *   dressed up as a tool result the model would try to act on.
 */
#ifndef MCPD_H
#define MCPD_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* A callback whose signature is not the one declared here (a plugin
 * written before ABI 1.0, say) would load and answer garbage, and gcc 12
 * only warns about the assignment: from here on in the plugin's source it
 * is a compile error, whatever the build line.  (C++ refuses it anyway.) */
#if defined(__GNUC__) && !defined(__cplusplus)
#pragma GCC diagnostic error "-Wincompatible-pointer-types"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* In C++ every field of the tables and of the descriptor defaults to
 * zero, so that a designated initializer naming some of them is complete,
 * as it is in C (g++ -Wextra would warn of the others).  Name the fields
 * in the order they are declared here: C++ requires it.  The layout is
 * the same in both languages. */
#ifdef __cplusplus
#define MCPD_DEFAULT                                                           \
  {}
#else
#define MCPD_DEFAULT
#endif

#define MCPD_ABI_MAJOR 1
#define MCPD_ABI_MINOR 3

/* The name of the one symbol a plugin exports. */
#define MCPD_PLUGIN_SYMBOL "mcpd_plugin"

/* How the descriptor is exported: a DLL exports what is marked so;
 * elsewhere the default visibility survives -fvisibility=hidden. */
#if defined(_WIN32)
#define MCPD_EXPORT __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define MCPD_EXPORT __attribute__((visibility("default")))
#else
#define MCPD_EXPORT
#endif
/* The host formats with C99 printf everywhere, mingw's on Windows. */
#if defined(__MINGW32__)
#define MCPD_PRINTF(f, a) __attribute__((format(gnu_printf, f, a)))
#elif defined(__GNUC__) || defined(__clang__)
#define MCPD_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MCPD_PRINTF(f, a)
#endif

/* Return codes of plugin callbacks and host functions. */
#define MCPD_OK 0
#define MCPD_ERROR (-1)

/* JSON-RPC error codes a callback may answer with mcpd_host.fail(). */
#define MCPD_ERR_NOT_FOUND (-32002)      /* resource not found */
#define MCPD_ERR_INVALID_PARAMS (-32602) /* bad arguments */
#define MCPD_ERR_INTERNAL (-32603)       /* the plugin failed */

/* Opaque handles owned by the host.
 *
 * mcpd_self  -- one loaded instance of a plugin; given to init() and valid
 *               until fini() returns.
 * mcpd_call  -- one tool call, resource read, prompt get or completion in
 *               flight; valid from the callback's start until the call
 *               completes (the callback returns, or mcpd_host.complete()
 *               for MCPD_EXEC_ASYNC entries).  See A FINISHED CALL. */
typedef struct mcpd_self mcpd_self;
typedef struct mcpd_call mcpd_call;
typedef struct mcpd_host mcpd_host;

/* What every callback receives besides its call: who it is, what it was
 * asked, and the host.  Owned by the host; valid until the call completes
 * (for MCPD_EXEC_ASYNC tools, until complete()).  Fields are appended in
 * later minors; a plugin reads only those of the header it was built
 * with. */
typedef struct mcpd_request {
  /* sizeof(mcpd_request) in the host. */
  size_t size;
  const mcpd_host *host;
  mcpd_self *self;
  /* What init() stored in *state. */
  void *state;
  /* The `data` of the table entry (or run-time entry) being served, so one
   * callback can serve many entries without comparing names. */
  void *data;
  /* The tool or prompt name the call was made under; the resource URI
   * for a read. */
  const char *name;
  /* Tools: the validated "arguments" object (never NULL: an absent one
   * arrives as {}).  Prompts: the arguments, an object of strings.  Reads:
   * NULL.  Borrowed. */
  json_object *arguments;
  /* Resource-template reads: the variables the URI matched, an object of
   * strings ({"path": "a/b"} for file:///{path}).  NULL otherwise. */
  json_object *variables;
  /* The request's params._meta object as the client sent it (its
   * progressToken, say), or NULL.  Borrowed, like `arguments`. */
  json_object *meta;
} mcpd_request;

/* Where a tool's callback runs. */
typedef enum mcpd_exec {
  /* On a libuv thread-pool worker (the default): a slow tool never delays
   * other requests.  The callback MUST be thread-safe with respect to the
   * plugin's own state. */
  MCPD_EXEC_POOL = 0,
  /* On the event loop thread.  For tools that finish in microseconds (echo,
   * arithmetic): no thread hop.  MUST NOT block. */
  MCPD_EXEC_INLINE = 1,
  /* The callback starts work (on the loop thread) and returns at once; the
   * plugin later calls mcpd_host.complete() from any thread. */
  MCPD_EXEC_ASYNC = 2
} mcpd_exec;

/* Tri-state tool hints: zero means "not stated". */
#define MCPD_HINT_UNSET 0
#define MCPD_HINT_TRUE 1
#define MCPD_HINT_FALSE (-1)

/* Log levels, RFC 5424 order as MCP uses them. */
typedef enum mcpd_log_level {
  MCPD_LOG_DEBUG = 0,
  MCPD_LOG_INFO,
  MCPD_LOG_NOTICE,
  MCPD_LOG_WARNING,
  MCPD_LOG_ERROR,
  MCPD_LOG_CRITICAL,
  MCPD_LOG_ALERT,
  MCPD_LOG_EMERGENCY
} mcpd_log_level;

/* A tool callback.  `req->arguments` is the validated "arguments" object.
 * Build the result on `call` with the host's result_* functions, then
 * return MCPD_OK.  Returning MCPD_ERROR without having built anything yields
 * a JSON-RPC internal error; a callback that returns MCPD_OK but built
 * nothing also gets one.  Tool failures the model should see are results:
 * use mcpd_host.result_error().  For MCPD_EXEC_ASYNC tools the return value
 * only says whether the work started (MCPD_ERROR: it did not, and
 * complete() MUST NOT be called). */
typedef int (*mcpd_tool_cb)(mcpd_call *call, const mcpd_request *req);

/* Every callback below runs where its entry's `exec` says, exactly like a
 * tool's (POOL by default; ASYNC ones finish with complete()), and answers
 * through the same call functions.  A callback that cannot serve the
 * request answers a JSON-RPC error with mcpd_host.fail(). */

/* Reads a resource.  `req->name` is the URI asked for; for a template,
 * `req->variables` holds what matched.  Add one or more contents with
 * result_resource_text() / result_resource_blob() (a NULL uri means the
 * URI asked for, a NULL mime type the entry's), or result_text() for one
 * text content of the URI asked for.  A read that returns MCPD_ERROR, or
 * MCPD_OK with no content, is answered -32603 (internal error) whatever
 * it built; a missing file or row is fail(call, MCPD_ERR_NOT_FOUND, ...),
 * answered -32002 with the URI in the error's data. */
typedef int (*mcpd_read_cb)(mcpd_call *call, const mcpd_request *req);

/* Renders a prompt.  `req->arguments` is an object of strings whose
 * required members the host has checked.  Each content block added
 * (result_text, result_image, result_audio, result_resource_link,
 * result_resource_text/blob) becomes one message, with the role last set
 * by prompt_role() ("user" until then).  The prompt's description is
 * added by the host.  Returning MCPD_ERROR answers -32603. */
typedef int (*mcpd_prompt_cb)(mcpd_call *call, const mcpd_request *req);

/* Completes the value of an argument: a prompt argument, or a template
 * variable.  `argument` is its name, `value` what the user typed so far
 * (maybe ""), `context` the other arguments already chosen (an object of
 * strings, never NULL: {} when the client sent none).  Add candidates with
 * completion_value(), best first.  The host sends at most 100, always
 * with `total` (the number added, or completion_total()'s if larger) and
 * `hasMore` (true when more were added than sent, or when
 * completion_total() said so).  Adding nothing answers no candidates;
 * returning MCPD_ERROR answers -32603.  The host answers -32602 itself,
 * without calling, for an argument the prompt or template does not
 * declare. */
typedef int (*mcpd_complete_cb)(mcpd_call *call, const mcpd_request *req,
                                const char *argument, const char *value,
                                json_object *context);

/* A client subscribed to a resource (`subscribed` nonzero: the first
 * session did) or the last subscriber left (zero: unsubscribe, or its
 * session ended).  `req->name` is the URI, `req->variables` what it
 * matched for a template, `req->data` the entry's data; there is no
 * call.  Runs on the loop thread and MUST NOT block: typically it starts
 * or stops watching the thing behind the URI, and later reports changes
 * with mcpd_host.resource_updated().  After a reload the new instance is
 * told of every subscription that is still open. */
typedef void (*mcpd_subscribe_cb)(const mcpd_request *req, int subscribed);

typedef struct mcpd_tool {
  /* REQUIRED.  1..64 characters of [A-Za-z0-9_.-], unique across all
   * plugins the host has loaded. */
  const char *name MCPD_DEFAULT;
  /* OPTIONAL human-readable name. */
  const char *title MCPD_DEFAULT;
  /* SHOULD be set: what the tool does, for the model. */
  const char *description MCPD_DEFAULT;
  /* OPTIONAL JSON Schema text for "arguments"; its root MUST be an object
   * schema ("type": "object").  NULL means {"type":"object"}.  The host
   * parses it at load and validates every call's arguments against it
   * before the callback runs. */
  const char *input_schema MCPD_DEFAULT;
  /* OPTIONAL JSON Schema text for structuredContent (root "type":"object").
   * A tool that declares it MUST return structured content. */
  const char *output_schema MCPD_DEFAULT;
  /* REQUIRED. */
  mcpd_tool_cb call MCPD_DEFAULT;
  /* mcpd_exec; zero is MCPD_EXEC_POOL. */
  int exec MCPD_DEFAULT;
  /* MCPD_HINT_* values for the MCP tool annotations. */
  signed char read_only_hint MCPD_DEFAULT;
  signed char destructive_hint MCPD_DEFAULT;
  signed char idempotent_hint MCPD_DEFAULT;
  signed char open_world_hint MCPD_DEFAULT;
  /* OPTIONAL, handed to the callback as req->data. */
  void *data MCPD_DEFAULT;
  /* Reserved for growth; MUST be zero. */
  void *reserved[3] MCPD_DEFAULT;
  /* --- ABI 1.3 ---------------------------------------------------------- */
  /* Whether a call may run as a task (mcpd_task_support; zero is
   * MCPD_TASK_FORBIDDEN), and when it becomes one (mcpd_task_start; zero
   * is MCPD_TASK_AT_START).  See TASKS below. */
  int task_support MCPD_DEFAULT;
  int task_start MCPD_DEFAULT;
} mcpd_tool;

/* TASKS (ABI 1.3)
 *
 * A call that outlives its request runs as a task: the client gets a task
 * id at once, polls it, cancels it, and fetches the result later, also
 * from a new connection of the same identity.  Any tool can run as one:
 * nothing in its callback changes (a POOL or ASYNC tool is the natural
 * fit, since a task is long work).  mcpd keeps the task, its status and
 * its result; the tool only declares what it allows. */
typedef enum mcpd_task_support {
  /* Never a task (the default); a client asking for one gets an error. */
  MCPD_TASK_FORBIDDEN = 0,
  /* A task when the client can take one, a plain call otherwise. */
  MCPD_TASK_OPTIONAL = 1,
  /* Only as a task: a client that cannot take one is refused. */
  MCPD_TASK_REQUIRED = 2
} mcpd_task_support;

typedef enum mcpd_task_start {
  /* The call is a task from its start, whenever it can be one. */
  MCPD_TASK_AT_START = 0,
  /* Over 2026-07-28 the call starts as a plain call -- it may gather
   * input with input_required rounds first -- and becomes a task when the
   * callback calls mcpd_host.task_begin().  A 2025-11-25 client that asks
   * for a task still gets one at the start. */
  MCPD_TASK_ON_REQUEST = 1
} mcpd_task_start;

typedef struct mcpd_resource {
  /* REQUIRED, an absolute RFC 3986 URI ("scheme:..."), unique across all
   * plugins. */
  const char *uri MCPD_DEFAULT;
  const char *name MCPD_DEFAULT;            /* REQUIRED */
  const char *title MCPD_DEFAULT;           /* OPTIONAL */
  const char *description MCPD_DEFAULT;     /* OPTIONAL */
  const char *mime_type MCPD_DEFAULT;       /* OPTIONAL */
  mcpd_read_cb read MCPD_DEFAULT;           /* REQUIRED */
  mcpd_subscribe_cb subscribe MCPD_DEFAULT; /* OPTIONAL */
  int exec MCPD_DEFAULT;   /* mcpd_exec of read; zero is MCPD_EXEC_POOL */
  void *data MCPD_DEFAULT; /* OPTIONAL, req->data */
  void *reserved[3] MCPD_DEFAULT; /* MUST be zero */
} mcpd_resource;

/* A family of resources, listed by resources/templates/list and read by
 * URIs that match it.  The host matches RFC 6570 templates built from
 * literal text and these expressions:
 *   {var}        one value without '/', '?', '#' or ',' (percent-decoded)
 *   {+var}       reserved expansion: any characters, '/' included
 *   {#var}       the same, after a literal '#'
 *   {/var}       one path segment after a '/'
 *   {.var}       one label after a '.'
 * Query forms ({?x}, {&x}) and several variables in one expression are
 * refused at load.  A variable ends at the earliest occurrence of the
 * literal text that follows it that lets the rest of the URI match.
 * Templates are tried in listing order
 * after the exact resource URIs; the first match serves the read. */
typedef struct mcpd_resource_template {
  const char *uri_template
      MCPD_DEFAULT;               /* REQUIRED, unique across all plugins */
  const char *name MCPD_DEFAULT;  /* REQUIRED */
  const char *title MCPD_DEFAULT; /* OPTIONAL */
  const char *description MCPD_DEFAULT; /* OPTIONAL */
  const char *mime_type MCPD_DEFAULT;   /* OPTIONAL */
  mcpd_read_cb read MCPD_DEFAULT;       /* REQUIRED */
  /* OPTIONAL: completes the template's variables (completion/complete
   * with ref/resource naming this template). */
  mcpd_complete_cb complete MCPD_DEFAULT;
  mcpd_subscribe_cb subscribe MCPD_DEFAULT; /* OPTIONAL */
  int exec MCPD_DEFAULT;                    /* mcpd_exec of read and complete */
  void *data MCPD_DEFAULT;                  /* OPTIONAL, req->data */
  void *reserved[3] MCPD_DEFAULT;           /* MUST be zero */
} mcpd_resource_template;

typedef struct mcpd_prompt_argument {
  const char *name MCPD_DEFAULT;        /* REQUIRED */
  const char *title MCPD_DEFAULT;       /* OPTIONAL */
  const char *description MCPD_DEFAULT; /* OPTIONAL */
  int required MCPD_DEFAULT;            /* nonzero: the client must supply it */
  void *reserved[2] MCPD_DEFAULT;       /* MUST be zero */
} mcpd_prompt_argument;

typedef struct mcpd_prompt {
  const char *name MCPD_DEFAULT;        /* REQUIRED, same rules as tool names */
  const char *title MCPD_DEFAULT;       /* OPTIONAL */
  const char *description MCPD_DEFAULT; /* OPTIONAL */
  /* OPTIONAL array closed by a zeroed sentinel. */
  const mcpd_prompt_argument *arguments MCPD_DEFAULT;
  mcpd_prompt_cb get MCPD_DEFAULT;        /* REQUIRED */
  mcpd_complete_cb complete MCPD_DEFAULT; /* OPTIONAL */
  int exec MCPD_DEFAULT;                  /* mcpd_exec of get and complete */
  void *data MCPD_DEFAULT;                /* OPTIONAL, req->data */
  void *reserved[3] MCPD_DEFAULT;         /* MUST be zero */
} mcpd_prompt;

#ifdef __cplusplus
#define MCPD_END_ENTRY                                                         \
  {}
#else
#define MCPD_END_ENTRY                                                         \
  { 0 }
#endif
/* Sentinels that close each table.  An entry ends its table only when it is
 * all zero where it matters: a tool whose name AND call are both NULL, a
 * resource whose uri, name and read are NULL, a prompt whose name and get
 * are NULL.  An entry with just one of them missing is an error the host
 * reports, not an early end. */
#define MCPD_TOOL_END MCPD_END_ENTRY
#define MCPD_RESOURCE_END MCPD_END_ENTRY
#define MCPD_RESOURCE_TEMPLATE_END MCPD_END_ENTRY
#define MCPD_PROMPT_END MCPD_END_ENTRY
#define MCPD_PROMPT_ARGUMENT_END MCPD_END_ENTRY

/* The host services, an append-only table given to init() and reachable
 * from every callback as req->host.  Every function
 * may be called from any thread unless its comment says otherwise.  The
 * `call` functions may only be used while that call is in flight.
 *
 * The `host` pointer init() receives (the same as every req->host) stays
 * valid until fini() returns: a plugin may keep it in its state and use it
 * from threads it starts, since the host functions are thread-safe.  Those
 * threads end before fini() returns (fini() joins them), so no thread of
 * the plugin uses `host` or its `self` after that. */
struct mcpd_host {
  /* sizeof(struct mcpd_host) in the host.  No test is needed before using
   * a member: the host refuses plugins built for a newer minor. */
  size_t size;
  unsigned abi_major;
  unsigned abi_minor;

  /* --- memory ----------------------------------------------------------- */
  /* printf into host-allocated memory; NULL when out of memory.  Use it for
   * init()'s *errmsg. */
  char *(*mprintf)(const char *fmt, ...)MCPD_PRINTF(1, 2);
  /* Frees what mprintf returned. */
  void (*free)(void *ptr);

  /* --- logging ---------------------------------------------------------- */
  /* One line to mcpd's stderr log, prefixed with the plugin name, always.
   * It also goes to clients as notifications/message, to those that asked
   * for `level` or a more severe one (logging/setLevel; a 2026-07-28
   * request's logLevel), at most 200 lines a second per plugin (more are
   * dropped and counted):
   *   - logged from inside a callback (on the thread running it, before
   *     it returns): to that call's session alone, related to its request
   *     (over HTTP, on the request's stream);
   *   - logged so once the client cancelled that call: to the same session
   *     alone, as an unrelated message (over HTTP, on the session's
   *     standalone GET stream); a 2026-07-28 request has no session, so
   *     its cancelled call's lines reach stderr only;
   *   - logged anywhere else (init(), fini(), a plugin's own thread, an
   *     ASYNC tool's thread, after complete()): the plugin's own line, to
   *     every session that asked for the level.
   * A call's line never reaches another session, and none reaches a
   * session that is gone. */
  void (*log)(mcpd_self *self, mcpd_log_level level, const char *fmt, ...)
      MCPD_PRINTF(3, 4);

  /* --- results (tools, resources, prompts) ------------------------------ */
  /* Each appends one content block to the call's result.  Strings are
   * copied.  `data` for image/audio and `blob` are base64 text.  Return
   * MCPD_OK or MCPD_ERROR (bad arguments, call already completed).  A
   * builder that the kind of call cannot carry (result_image on a read,
   * result_structured on a prompt, any of them on a completion) returns
   * MCPD_ERROR and fails the call: the client gets -32603. */
  int (*result_text)(mcpd_call *call, const char *text);
  int (*result_text_len)(mcpd_call *call, const char *text, size_t len);
  int (*result_image)(mcpd_call *call, const char *data, const char *mime_type);
  int (*result_audio)(mcpd_call *call, const char *data, const char *mime_type);
  /* `description` and `mime_type` may be NULL. */
  int (*result_resource_link)(mcpd_call *call, const char *uri,
                              const char *name, const char *description,
                              const char *mime_type);
  /* An embedded resource (tools, prompts) or one item of resources/read. */
  int (*result_resource_text)(mcpd_call *call, const char *uri,
                              const char *mime_type, const char *text);
  int (*result_resource_blob)(mcpd_call *call, const char *uri,
                              const char *mime_type, const char *blob);
  /* Sets structuredContent (an object); consumes `value`.  The host also
   * adds its JSON text as a text block when the tool added no content. */
  int (*result_structured)(mcpd_call *call, json_object *value);
  /* Marks the result isError:true and appends the formatted text.  This is
   * how a tool reports a failure the model should read. */
  int (*result_error)(mcpd_call *call, const char *fmt, ...) MCPD_PRINTF(2, 3);
  /* Replaces the whole result with `result` (consumed); the host checks its
   * shape and answers an internal error when it is not a valid result. */
  int (*result_json)(mcpd_call *call, json_object *result);

  /* --- call context ----------------------------------------------------- */
  /* Nonzero once the client cancelled the call (or the host is shutting
   * down).  A cancelled call SHOULD finish early.  When the client
   * cancelled, its result is dropped; at shutdown, what it built is still
   * sent. */
  int (*cancelled)(mcpd_call *call);
  /* notifications/progress for the call when the client asked for it (a
   * no-op otherwise).  `progress` MUST increase; `total` <= 0 means unknown;
   * `message` may be NULL. */
  int (*progress)(mcpd_call *call, double progress, double total,
                  const char *message);
  /* Completes an MCPD_EXEC_ASYNC call, from any thread, exactly once.
   * `status` MCPD_ERROR with no result built answers an internal error. */
  int (*complete)(mcpd_call *call, int status);
  /* The loaded instance the call belongs to, or NULL (and a log line) once
   * the call has finished.  In a callback, use req->self: the same
   * pointer, without a lookup.  call_self() is for code that holds only
   * the call handle, such as an ASYNC tool's thread. */
  mcpd_self *(*call_self)(mcpd_call *call);

  /* --- run-time registry ------------------------------------------------ */
  /* Adds a tool at run time; the host copies every field (so the struct
   * may be on the stack) and validates it like a table entry.  The tool
   * lives until remove_tool() or until the plugin is unloaded.  Clients are
   * told with notifications/tools/list_changed.
   *
   * On the loop thread (init(), INLINE tools) the tool is registered before
   * add_tool returns, and MCPD_ERROR means it was not: last_error() says
   * why.  On any other thread the entry is validated at once (MCPD_ERROR
   * and last_error() for a bad entry), then registered by the loop on its
   * next turn; a name another plugin already offers is refused there, with
   * a log line, after add_tool returned MCPD_OK. */
  int (*add_tool)(mcpd_self *self, const mcpd_tool *tool);
  /* Removes a tool this plugin added or declared. */
  int (*remove_tool)(mcpd_self *self, const char *name);

  /* --- conveniences ----------------------------------------------------- */
  /* printf into one text content block. */
  int (*result_textf)(mcpd_call *call, const char *fmt, ...) MCPD_PRINTF(2, 3);
  /* The name the call was made under, so tools added at run time can share
   * one callback.  Valid while the call is in flight; NULL once it has
   * finished.  It is the same string as req->name (the URI for a read):
   * use req->name in a callback, and call_tool_name() where only the call
   * handle is at hand. */
  const char *(*call_tool_name)(mcpd_call *call);
  /* Why the last host function that failed on this thread failed, or "".
   * Valid until the next host call on the same thread. */
  const char *(*last_error)(void);
  /* Runs cb(arg) once when the call is cancelled -- by the client, or
   * because mcpd is shutting down -- on the loop thread, so it MUST NOT
   * block; typically it wakes the thread doing the work.  If the call is
   * already cancelled, cb runs before on_cancel returns (on the calling
   * thread).  It never runs after the call completed.  One callback per
   * call; a second replaces the first. */
  int (*on_cancel)(mcpd_call *call, void (*cb)(void *arg), void *arg);

  /* --- resources, prompts and completion at run time ----------------------
   * Like add_tool()/remove_tool(), with the same thread rules: the host
   * copies every field (and a prompt's argument table), validates the
   * entry like a table entry, and tells clients with the matching
   * notifications/.../list_changed.  Removal takes the key the entry was
   * added under: the URI, the URI template, the prompt name. */
  int (*add_resource)(mcpd_self *self, const mcpd_resource *resource);
  int (*remove_resource)(mcpd_self *self, const char *uri);
  int (*add_resource_template)(mcpd_self *self,
                               const mcpd_resource_template *tmpl);
  int (*remove_resource_template)(mcpd_self *self, const char *uri_template);
  int (*add_prompt)(mcpd_self *self, const mcpd_prompt *prompt);
  int (*remove_prompt)(mcpd_self *self, const char *name);
  /* The resource at `uri` changed: every session subscribed to exactly
   * that URI gets notifications/resources/updated.  Any thread; a no-op
   * when nobody is subscribed. */
  int (*resource_updated)(mcpd_self *self, const char *uri);

  /* --- builders for prompts and completion -------------------------------- */
  /* Prompt calls: the role ("user" or "assistant") of the messages the
   * content blocks added after this call make. */
  int (*prompt_role)(mcpd_call *call, const char *role);
  /* Completion calls: appends one candidate value (copied). */
  int (*completion_value)(mcpd_call *call, const char *value);
  /* Completion calls: the number of candidates in all, when larger than
   * what was added, and whether more exist than were sent. */
  int (*completion_total)(mcpd_call *call, size_t total, int has_more);

  /* --- errors ------------------------------------------------------------- */
  /* Answers the call with a JSON-RPC error instead of a result: `code` is
   * one of MCPD_ERR_*, the message is formatted.  Whatever was built is
   * dropped.  For tools, prefer result_error(): a failure the model should
   * read is a result, not a protocol error.  MCPD_ERR_NOT_FOUND on a read
   * carries the URI as the error's data, as MCP asks.  result_error() on a
   * read, prompt or completion call is fail(MCPD_ERR_INTERNAL, ...).  The
   * last fail() (or such result_error()) decides the answer. */
  int (*fail)(mcpd_call *call, int code, const char *fmt, ...)
      MCPD_PRINTF(3, 4);

  /* --- asking the client (ABI 1.1) ----------------------------------------
   * A call may send its client a request and use the answer: sampling
   * ("sampling/createMessage": the client's model), elicitation
   * ("elicitation/create": a form, or a URL, for the user) and
   * "roots/list".  The request goes to the session that made the call.
   *
   * client_request() sends `method` with `params` (an object; consumed,
   * also on error) and returns at once.  MCPD_ERROR means nothing was
   * sent and `cb` will not run: the method is not one of the three, the
   * client did not declare the capability it needs (sampling; sampling
   * with "tools" needs sampling.tools; elicitation in form or url mode;
   * roots; for a 2026-07-28 call, as declared in its request), or the
   * call has finished.  last_error() says which.  A 2026-07-28 call's
   * request is not sent: mcpd answers it from the client's retry, and
   * until then `cb` gets -32603 "input required" and the call's result
   * becomes input_required (doc/plugin-guide.md).
   * Otherwise `cb` runs exactly once, on the loop thread (it MUST NOT
   * block): with the client's `result` (borrowed, valid during cb; take a
   * json_object_deep_copy() to use it on another thread), or with
   * `result` NULL, a JSON-RPC `code` and a `message`: the client's error,
   * -32001 when no answer came within --request-timeout (the client is
   * then sent notifications/cancelled), -32000 when the session ended,
   * the call was cancelled or it finished first.  Any thread may call it
   * while the call is in flight.
   *
   * client_request_wait() is the same, blocking until the answer: for
   * POOL callbacks and the plugin's own threads, never the loop thread
   * (MCPD_ERROR).  On MCPD_OK *result is the client's result, owned by
   * the caller (json_object_put()); on MCPD_ERROR *result is NULL and, if
   * `error` is not NULL, *error says why (host->free() it). */
  int (*client_request)(mcpd_call *call, const char *method,
                        json_object *params,
                        void (*cb)(void *arg, json_object *result, int code,
                                   const char *message),
                        void *arg);
  int (*client_request_wait)(mcpd_call *call, const char *method,
                             json_object *params, json_object **result,
                             char **error);
  /* Tells the client that the URL-mode elicitation `elicitation_id` was
   * completed out of band (notifications/elicitation/complete).  Needs a
   * client that declared elicitation.url. */
  int (*elicitation_complete)(mcpd_call *call, const char *elicitation_id);
  /* The roots the call's client declared (roots/list, fetched after
   * initialization and again on notifications/roots/list_changed), as a
   * new array of {"uri", "name"?} objects owned by the caller; NULL when
   * the client offers none.  Any thread. */
  json_object *(*call_roots)(mcpd_call *call);
  /* Runs cb(arg) on the loop thread each time a client's roots change,
   * until the plugin is unloaded; it MUST NOT block.  A second call
   * replaces the first; a NULL cb stops it.  Call it on the loop thread
   * (init(), INLINE callbacks); elsewhere it returns MCPD_ERROR. */
  int (*on_roots_changed)(mcpd_self *self, void (*cb)(void *arg), void *arg);

  /* --- naming what a call asks (ABI 1.2) ----------------------------------
   * client_request() and client_request_wait() with a `key`: the name of
   * the request in a 2026-07-28 input_required result ("inputRequests":
   * {"<key>": {...}}), under which the client's retry answers it.  Without
   * a key mcpd derives one from the method and params, which is right
   * for most tools; name a request when a client or a test expects a
   * particular key.  A key is 1 to 47 characters of A-Z a-z 0-9 and
   * "_.:-"; anything else is MCPD_ERROR.  One key names one question: a
   * run that asks with the same key twice gets the same answer twice.
   * In the older eras the key is not sent: these are then exactly
   * client_request() and client_request_wait(). */
  int (*client_request_keyed)(mcpd_call *call, const char *key,
                              const char *method, json_object *params,
                              void (*cb)(void *arg, json_object *result,
                                         int code, const char *message),
                              void *arg);
  int (*client_request_wait_keyed)(mcpd_call *call, const char *key,
                                   const char *method, json_object *params,
                                   json_object **result, char **error);

  /* --- tasks (ABI 1.3) ------------------------------------------------------
   * task_status() sets the status message a client sees when it polls the
   * call's task ("indexed 40 of 100 files"); the message is formatted and
   * copied.  For a call that is not a task it does nothing and returns
   * MCPD_OK, so a tool need not know how it was called.  Any thread, while
   * the call is in flight.
   *
   * task_begin() turns the call into a task now, for a tool declared
   * MCPD_TASK_ON_REQUEST: the client gets the task at once and the call's
   * result becomes the task's.  MCPD_OK when the call is a task (or was
   * already); MCPD_ERROR when it cannot be one (the tool forbids tasks, or
   * the client's request did not negotiate them): the call then simply
   * goes on as a plain call.  Any thread, while the call is in flight. */
  int (*task_status)(mcpd_call *call, const char *fmt, ...) MCPD_PRINTF(2, 3);
  int (*task_begin)(mcpd_call *call);
  /* Appends go here; never reorder what is above. */
};

/* init() is called once after the descriptor and tables were accepted, on
 * the loop thread.  `config` is this plugin's object from the --config file
 * ("plugins": {"<name>": {...}}), or NULL; borrowed for the duration of the
 * call.  Store anything in *state; it is passed to every callback and to
 * fini().  On failure return MCPD_ERROR and set *errmsg (host->mprintf); the
 * host then calls fini(*state) and unloads the plugin. */
typedef int (*mcpd_init_cb)(const mcpd_host *host, mcpd_self *self,
                            json_object *config, void **state, char **errmsg);
/* fini() is called exactly once, after the last call into the plugin ended,
 * also when init() failed.  `state` may be NULL.  The host unloads the
 * image as soon as fini() returns, so fini() MUST join every thread the
 * plugin started (for example the workers of MCPD_EXEC_ASYNC tools) and
 * MUST NOT leave callbacks registered anywhere. */
typedef void (*mcpd_fini_cb)(void *state);

typedef struct mcpd_plugin_descriptor {
  /* Filled by MCPD_PLUGIN_DEFINE; never set by hand. */
  uint16_t abi_major MCPD_DEFAULT;
  uint16_t abi_minor MCPD_DEFAULT;
  uint32_t size MCPD_DEFAULT;
  /* The plugin's sizeof of each table element, also filled by the macro:
   * the host steps through the tables by these. */
  uint16_t tool_size MCPD_DEFAULT;
  uint16_t resource_size MCPD_DEFAULT;
  uint16_t resource_template_size MCPD_DEFAULT;
  uint16_t prompt_size MCPD_DEFAULT;
  uint16_t prompt_argument_size MCPD_DEFAULT;
  uint16_t reserved_size[3] MCPD_DEFAULT; /* MUST be zero */
  /* REQUIRED, same character rules as tool names; unique per host. */
  const char *name MCPD_DEFAULT;
  /* REQUIRED, free-form ("1.2.0"). */
  const char *version MCPD_DEFAULT;
  /* OPTIONAL. */
  const char *description MCPD_DEFAULT;
  mcpd_init_cb init MCPD_DEFAULT; /* OPTIONAL */
  mcpd_fini_cb fini MCPD_DEFAULT; /* OPTIONAL */
  /* OPTIONAL tables, each closed by its *_END sentinel. */
  const mcpd_tool *tools MCPD_DEFAULT;
  const mcpd_resource *resources MCPD_DEFAULT;
  const mcpd_resource_template *resource_templates MCPD_DEFAULT;
  const mcpd_prompt *prompts MCPD_DEFAULT;
  /* Reserved; MUST be zero. */
  uint32_t flags MCPD_DEFAULT;
  void *reserved[8] MCPD_DEFAULT;
} mcpd_plugin_descriptor;

/* Defines the exported descriptor.  Use designated initializers:
 *
 *   MCPD_PLUGIN_DEFINE(.name = "hello", .version = "1.0", .tools = tools);
 */
#ifdef __cplusplus
/* C++: the symbol keeps its C name, and needs no "extern" to be seen. */
#define MCPD_DESCRIPTOR_LINKAGE extern "C" MCPD_EXPORT
#else
#define MCPD_DESCRIPTOR_LINKAGE MCPD_EXPORT extern
#endif
#define MCPD_PLUGIN_DEFINE(...)                                                \
  MCPD_DESCRIPTOR_LINKAGE const mcpd_plugin_descriptor mcpd_plugin;            \
  const mcpd_plugin_descriptor mcpd_plugin = {                                 \
      .abi_major = MCPD_ABI_MAJOR,                                             \
      .abi_minor = MCPD_ABI_MINOR,                                             \
      .size = (uint32_t)sizeof(mcpd_plugin_descriptor),                        \
      .tool_size = (uint16_t)sizeof(mcpd_tool),                                \
      .resource_size = (uint16_t)sizeof(mcpd_resource),                        \
      .resource_template_size = (uint16_t)sizeof(mcpd_resource_template),      \
      .prompt_size = (uint16_t)sizeof(mcpd_prompt),                            \
      .prompt_argument_size = (uint16_t)sizeof(mcpd_prompt_argument),          \
      __VA_ARGS__}

#ifdef __cplusplus
}
#endif

#endif /* MCPD_H */
