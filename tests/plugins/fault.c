/* SPDX-License-Identifier: MIT */
/* fault.c -- a plugin that misbehaves on purpose, for the crash-isolation
 * tests (issue 13).  Every fault comes in the three execution modes, as
 * FAULT_inline, FAULT_pool and FAULT_async:
 *
 *   segv      writes through a NULL pointer
 *   abort     abort()
 *   exit      exit(3)
 *   overflow  unbounded recursion with a large frame (stack overflow)
 *   hang      sleeps forever and never looks at cancelled()
 *   stdout    write(1, ...) and printf() + fflush(stdout) of forged
 *             JSON-RPC responses, then an honest result
 *   twice     completes twice: ASYNC calls complete() twice; INLINE and
 *             POOL build a result and call complete() anyway
 *   bogus     returns 12345 from the callback
 *
 * The ASYNC forms fault on a thread of their own, after the callback has
 * returned, as a real asynchronous plugin would; `bogus_async` is the
 * exception, since its fault is the callback's return value.
 *
 * Two tools behave: `ok` (INLINE, returns "ok") and `slow_ok` (POOL, sleeps
 * `ms` milliseconds, stopping early when cancelled), so the tests can tell
 * that the rest of the plugin, and the pool, still work.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mcpd.h>

enum fault {
  FAULT_SEGV,
  FAULT_ABORT,
  FAULT_EXIT,
  FAULT_OVERFLOW,
  FAULT_HANG,
  FAULT_STDOUT,
  FAULT_TWICE,
  FAULT_BOGUS
};

/* What the stdout fault forges: a response to id 1, the id clients are
 * most likely to have in flight. */
#define FORGED_WRITE                                                           \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"forged\":\"write\"}}\n"
#define FORGED_PRINTF                                                          \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"forged\":\"printf\"}}\n"

/* An ASYNC call's work, on its own thread.  Threads that finish are joined
 * by fini(), which must not return while one still runs plugin code. */
struct job {
  const mcpd_host *host;
  mcpd_call *call;
  enum fault fault;
  pthread_t thread;
  struct job *next;
};

static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct job *jobs;

/* Opaque to the compiler, so neither the NULL store nor the recursion can
 * be proven undefined and optimized into something else. */
static int *volatile null_pointer;
static volatile unsigned long overflow_limit = ULONG_MAX;

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    continue;
}

/* Each frame holds 4 KiB the compiler must keep, and the frame is used
 * after the recursive call returns, so it cannot become a tail call. */
__attribute__((noinline)) static unsigned long recurse(unsigned long depth) {
  volatile char frame[4096];

  frame[depth % sizeof(frame)] = (char)depth;
  if (depth == overflow_limit)
    return depth;
  return recurse(depth + 1) + (unsigned long)frame[(depth * 7) % sizeof(frame)];
}

static void hang(void) {
  for (;;)
    sleep_ms(1000);
}

static void write_stdout(void) {
  ssize_t n = write(1, FORGED_WRITE, sizeof(FORGED_WRITE) - 1);

  (void)n;
  printf("%s", FORGED_PRINTF);
  fflush(stdout);
}

/* The faults that never return.  Built under UndefinedBehaviorSanitizer,
 * the store through NULL would end the process as UBSan's report instead
 * of the SIGSEGV it is meant to be. */
#if defined(__GNUC__) && __GNUC__ >= 8
__attribute__((no_sanitize("undefined")))
#endif
static void
crash(enum fault fault) {
  switch (fault) {
  case FAULT_SEGV:
    *null_pointer = 1;
    break;
  case FAULT_ABORT:
    abort();
  case FAULT_EXIT:
    exit(3);
  case FAULT_OVERFLOW:
    recurse(0);
    break;
  case FAULT_HANG:
    hang();
    break;
  default:
    break;
  }
}

static enum fault fault_of(const mcpd_request *req) {
  return (enum fault)(uintptr_t)req->data;
}

/* INLINE and POOL: the fault happens in the callback itself. */
static int fault_sync(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  enum fault fault = fault_of(req);

  switch (fault) {
  case FAULT_STDOUT:
    write_stdout();
    return host->result_text(call, "wrote to stdout");
  case FAULT_TWICE:
    /* Not an ASYNC call: complete() is refused, and the result stands. */
    host->result_text(call, "completed once");
    host->complete(call, MCPD_OK);
    return MCPD_OK;
  case FAULT_BOGUS:
    host->result_text(call, "bogus");
    return 12345;
  default:
    crash(fault);
    return MCPD_ERROR;
  }
}

static void *run_job(void *arg) {
  struct job *j = arg;
  const mcpd_host *host = j->host;

  switch (j->fault) {
  case FAULT_STDOUT:
    write_stdout();
    host->result_text(j->call, "wrote to stdout");
    host->complete(j->call, MCPD_OK);
    break;
  case FAULT_TWICE:
    host->result_text(j->call, "completed once");
    host->complete(j->call, MCPD_OK);
    host->complete(j->call, MCPD_OK);
    break;
  default:
    crash(j->fault);
    break;
  }
  return NULL;
}

/* A hang thread is never joined: it never ends.  It blocks every signal,
 * so that mcpd's signal handlers never run on it. */
static void *run_hang(void *arg) {
  (void)arg;
#ifndef _WIN32 /* where signals are not delivered to threads */
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
#endif
  hang();
  return NULL;
}

/* ASYNC: start a thread that faults, and report the start as a success. */
static int fault_async(mcpd_call *call, const mcpd_request *req) {
  enum fault fault = fault_of(req);
  struct job *j;
  pthread_t thread;

  if (fault == FAULT_BOGUS)
    return 12345;
  if (fault == FAULT_HANG) {
    if (pthread_create(&thread, NULL, run_hang, NULL) != 0)
      return MCPD_ERROR;
    pthread_detach(thread);
    return MCPD_OK;
  }
  if ((j = calloc(1, sizeof(*j))) == NULL)
    return MCPD_ERROR;
  j->host = req->host;
  j->call = call;
  j->fault = fault;
  pthread_mutex_lock(&jobs_lock);
  if (pthread_create(&j->thread, NULL, run_job, j) != 0) {
    pthread_mutex_unlock(&jobs_lock);
    free(j);
    return MCPD_ERROR; /* not started: no complete() */
  }
  j->next = jobs;
  jobs = j;
  pthread_mutex_unlock(&jobs_lock);
  return MCPD_OK;
}

static int ok(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_text(call, "ok");
}

static int slow_ok(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  json_object *v;
  long ms = 0, slept = 0;

  if (json_object_object_get_ex(req->arguments, "ms", &v))
    ms = (long)json_object_get_int64(v);
  while (slept < ms && !host->cancelled(call)) {
    long step = ms - slept < 10 ? ms - slept : 10;
    sleep_ms(step);
    slept += step;
  }
  return host->result_textf(call, "%s after %ld ms",
                            slept < ms ? "cancelled" : "slept", slept);
}

static void fini(void *state) {
  struct job *j;

  (void)state;
  pthread_mutex_lock(&jobs_lock);
  while ((j = jobs) != NULL) {
    jobs = j->next;
    pthread_join(j->thread, NULL);
    free(j);
  }
  pthread_mutex_unlock(&jobs_lock);
}

#define FAULT_DATA(fault) ((void *)(uintptr_t)(fault))

#define FAULT_TOOLS(base, fault, what)                                         \
  {.name = base "_inline",                                                     \
   .description = what " on the loop thread.",                                 \
   .call = fault_sync,                                                         \
   .exec = MCPD_EXEC_INLINE,                                                   \
   .data = FAULT_DATA(fault)},                                                 \
      {.name = base "_pool",                                                   \
       .description = what " on a pool worker.",                               \
       .call = fault_sync,                                                     \
       .exec = MCPD_EXEC_POOL,                                                 \
       .data = FAULT_DATA(fault)},                                             \
  {                                                                            \
    .name = base "_async",                                                     \
    .description = what " on a thread of the plugin's own.",                   \
    .call = fault_async, .exec = MCPD_EXEC_ASYNC, .data = FAULT_DATA(fault)    \
  }

static const mcpd_tool tools[] = {
    FAULT_TOOLS("segv", FAULT_SEGV, "Writes through a NULL pointer"),
    FAULT_TOOLS("abort", FAULT_ABORT, "Calls abort()"),
    FAULT_TOOLS("exit", FAULT_EXIT, "Calls exit(3)"),
    FAULT_TOOLS("overflow", FAULT_OVERFLOW, "Overflows the stack"),
    FAULT_TOOLS("hang", FAULT_HANG, "Sleeps forever, ignoring cancellation"),
    FAULT_TOOLS("stdout", FAULT_STDOUT, "Writes forged JSON-RPC to fd 1"),
    FAULT_TOOLS("twice", FAULT_TWICE, "Completes the call twice"),
    FAULT_TOOLS("bogus", FAULT_BOGUS, "Returns 12345"),
    {.name = "ok",
     .description = "Returns \"ok\".",
     .call = ok,
     .exec = MCPD_EXEC_INLINE},
    {.name = "slow_ok",
     .description = "Sleeps `ms` milliseconds, or until cancelled.",
     .input_schema = "{\"type\":\"object\",\"properties\":"
                     "{\"ms\":{\"type\":\"integer\",\"minimum\":0}}}",
     .call = slow_ok,
     .exec = MCPD_EXEC_POOL},
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "fault", .version = "1.0",
                   .description = "Misbehaves on purpose, one tool per fault.",
                   .fini = fini, .tools = tools);
