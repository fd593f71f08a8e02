/* SPDX-License-Identifier: MIT */
/* good.c -- the fixture that does everything right, with one tool for each
 * host service and execution mode the tests exercise.
 *
 * Tools: add (inline, structured output), slow and progress (pool, honour
 * cancellation), async_echo (async, completes from its own thread), nothing
 * and garbage (malformed results), fail (isError), crash (SIGSEGV),
 * stdout_writer (writes to fd 1), dyn_add and dyn_remove (run-time
 * registry), log, env and config.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mcpd.h>

/* Dynamic tools cannot learn their own name from the call, so each slot of
 * this table has its own callback; the slot maps back to the name. */
#define DYN_SLOTS 8

struct good {
  const mcpd_host *host;
  mcpd_self *self;
  json_object *config;
  char *dyn_names[DYN_SLOTS];
  pthread_mutex_t lock;
  struct async_job *jobs;
  char misuse[128]; /* what late host calls returned; guarded by lock */
};

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

  while (nanosleep(&ts, &ts) != 0)
    continue;
}

static const char *arg_string(json_object *arguments, const char *key) {
  json_object *v;

  return json_object_object_get_ex(arguments, key, &v)
             ? json_object_get_string(v)
             : "";
}

static int good_add(mcpd_call *call, const mcpd_request *req) {
  json_object *arguments = req->arguments;
  void *state = req->state;
  struct good *g = state;
  json_object *out;
  char text[32];
  double sum;
  int prec;

  sum = json_object_get_double(json_object_object_get(arguments, "a")) +
        json_object_get_double(json_object_object_get(arguments, "b"));
  /* The shortest text that reads back as the same double: 42, not 42.0. */
  for (prec = 1; prec <= 17; prec++) {
    snprintf(text, sizeof(text), "%.*g", prec, sum);
    if (strtod(text, NULL) == sum)
      break;
  }
  if (g->host->result_text(call, text) != MCPD_OK)
    return MCPD_ERROR;
  out = json_object_new_object();
  json_object_object_add(out, "sum", json_object_new_double_s(sum, text));
  return g->host->result_structured(call, out);
}

/* Pool tools run on worker threads; they touch only read-only state. */
static int good_slow(mcpd_call *call, const mcpd_request *req) {
  json_object *arguments = req->arguments;
  void *state = req->state;
  struct good *g = state;
  json_object *v;
  char text[32];
  long ms = 0, left;

  if (json_object_object_get_ex(arguments, "ms", &v))
    ms = (long)json_object_get_int64(v);
  for (left = ms; left > 0; left -= 5) {
    if (g->host->cancelled(call))
      return g->host->result_text(call, "cancelled");
    sleep_ms(left < 5 ? left : 5);
  }
  snprintf(text, sizeof(text), "slept %ld", ms);
  return g->host->result_text(call, text);
}

/* async_echo runs each call on its own thread.  The threads are joinable
 * and fini() joins them: after complete() a thread still executes a few
 * instructions of this image, and the host may unload it once fini()
 * returns. */
struct async_job {
  struct good *g;
  mcpd_call *call;
  char *text;
  pthread_t thread;
  int mode; /* 0: echo; 1: complete twice; 2: complete after failing;
               3: log storm, `text` the duration in ms */
  int done; /* Guarded by g->lock. */
  struct async_job *next;
};

static void *async_thread(void *arg) {
  struct async_job *job = arg;
  struct good *g = job->g;

  if (job->mode == 3) {
    /* Logs as fast as it can: the loop must keep serving meanwhile. */
    struct timespec start, now;
    long ms = atol(job->text), n = 0;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
      for (int i = 0; i < 100; i++)
        g->host->log(g->self, MCPD_LOG_DEBUG, "storm %ld", n++);
      clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000 +
                 (now.tv_nsec - start.tv_nsec) / 1000000 <
             ms);
    g->host->result_textf(job->call, "logged %ld", n);
    g->host->complete(job->call, MCPD_OK);
    goto done;
  }
  sleep_ms(10);
  if (job->mode != 2) {
    g->host->result_text(job->call, job->text);
    g->host->complete(job->call, MCPD_OK);
  }
  if (job->mode != 0) {
    /* Plugin bugs: every use of a finished call must be refused. */
    int rc1, rc2, rc3, cancelled;
    sleep_ms(50);
    rc1 = g->host->complete(job->call, MCPD_OK);
    rc2 = g->host->result_text(job->call, "late");
    rc3 = g->host->progress(job->call, 1, 2, "late");
    cancelled = g->host->cancelled(job->call);
    pthread_mutex_lock(&g->lock);
    snprintf(g->misuse, sizeof(g->misuse), "%d %d %d %d", rc1, rc2, rc3,
             cancelled);
    pthread_mutex_unlock(&g->lock);
  }
done:
  pthread_mutex_lock(&g->lock);
  job->done = 1;
  pthread_mutex_unlock(&g->lock);
  return NULL;
}

/* Joins the finished threads, or all of them. */
static void reap_jobs(struct good *g, int all) {
  struct async_job **link, *job, *finished = NULL;

  pthread_mutex_lock(&g->lock);
  for (link = &g->jobs; (job = *link) != NULL;) {
    if (all || job->done) {
      *link = job->next;
      job->next = finished;
      finished = job;
    } else {
      link = &job->next;
    }
  }
  pthread_mutex_unlock(&g->lock);
  while ((job = finished) != NULL) {
    finished = job->next;
    pthread_join(job->thread, NULL);
    free(job->text);
    free(job);
  }
}

static int start_job(struct good *g, mcpd_call *call, const char *text,
                     int mode);

static int good_async_echo(mcpd_call *call, const mcpd_request *req) {
  json_object *arguments = req->arguments;
  void *state = req->state;
  return start_job(state, call, arg_string(arguments, "text"), 0);
}

static int good_complete_twice(mcpd_call *call, const mcpd_request *req) {
  void *state = req->state;
  return start_job(state, call, "once", 1);
}

/* Returns MCPD_ERROR, and its thread still calls complete() later. */
static int good_fail_then_complete(mcpd_call *call, const mcpd_request *req) {
  void *state = req->state;
  return start_job(state, call, "", 2) == MCPD_OK ? MCPD_ERROR : MCPD_ERROR;
}

static int good_log_storm(mcpd_call *call, const mcpd_request *req) {
  json_object *v;
  char ms[32];
  snprintf(ms, sizeof(ms), "%d",
           json_object_object_get_ex(req->arguments, "ms", &v)
               ? json_object_get_int(v)
               : 1000);
  return start_job(req->state, call, ms, 3);
}

/* Sleeps `ms` and ignores cancellation: a pool thread held hostage. */
static int good_stuck(mcpd_call *call, const mcpd_request *req) {
  json_object *v;
  long ms = json_object_object_get_ex(req->arguments, "ms", &v)
                ? (long)json_object_get_int64(v)
                : 60000;
  sleep_ms(ms);
  return req->host->result_text(call, "unstuck");
}

/* A json-c serializer that tries to start a second message on the
 * client's stream. */
static int forge(json_object *jso, struct printbuf *pb, int level, int flags) {
  (void)jso, (void)level, (void)flags;
  return printbuf_strappend(pb, "{}}\n{\"jsonrpc\":\"2.0\",\"id\":99,"
                                "\"result\":{\"forged\":true}}");
}

static int good_serializer(mcpd_call *call, const mcpd_request *req) {
  json_object *value = json_object_new_object();
  json_object *evil = json_object_new_object();
  json_object_set_serializer(evil, forge, NULL, NULL);
  json_object_object_add(value, "x", evil);
  return req->host->result_structured(call, value);
}

static int good_misuse_report(mcpd_call *call, const mcpd_request *req) {
  void *state = req->state;
  struct good *g = state;
  char text[128];
  pthread_mutex_lock(&g->lock);
  snprintf(text, sizeof(text), "%s", g->misuse);
  pthread_mutex_unlock(&g->lock);
  return g->host->result_text(call, text);
}

static int start_job(struct good *g, mcpd_call *call, const char *text,
                     int mode) {
  struct async_job *job;

  reap_jobs(g, 0);
  job = calloc(1, sizeof(*job));
  if (job == NULL)
    return MCPD_ERROR;
  job->g = g;
  job->call = call;
  job->mode = mode;
  /* The arguments stay valid until complete(), but a copy keeps the thread
   * independent of that rule. */
  job->text = strdup(text);
  if (job->text == NULL ||
      pthread_create(&job->thread, NULL, async_thread, job) != 0) {
    free(job->text);
    free(job);
    return MCPD_ERROR;
  }
  pthread_mutex_lock(&g->lock);
  job->next = g->jobs;
  g->jobs = job;
  pthread_mutex_unlock(&g->lock);
  return MCPD_OK;
}

static int good_progress(mcpd_call *call, const mcpd_request *req) {
  json_object *arguments = req->arguments;
  void *state = req->state;
  struct good *g = state;
  json_object *v;
  char message[32];
  int steps = 3, i;

  if (json_object_object_get_ex(arguments, "steps", &v))
    steps = json_object_get_int(v);
  for (i = 1; i <= steps && !g->host->cancelled(call); i++) {
    snprintf(message, sizeof(message), "step %d", i);
    g->host->progress(call, i, steps, message);
    sleep_ms(2);
  }
  /* Progress MUST increase: a repeat or a step back is refused, and no
   * notification goes out for it. */
  if (g->host->progress(call, i - 1, steps, "again") != MCPD_ERROR ||
      g->host->progress(call, 0, steps, "back") != MCPD_ERROR)
    return g->host->result_text(call, "non-increasing progress accepted");
  return g->host->result_text(call, "done");
}

static int good_nothing(mcpd_call *call, const mcpd_request *req) {
  (void)req;
  (void)call;
  return MCPD_OK;
}

static int good_garbage(mcpd_call *call, const mcpd_request *req) {
  void *state = req->state;
  struct good *g = state;

  return g->host->result_json(call, json_object_new_string("not a result"));
}

static int good_fail(mcpd_call *call, const mcpd_request *req) {
  void *state = req->state;
  struct good *g = state;

  return g->host->result_error(call, "it failed on purpose");
}

static int good_crash(mcpd_call *call, const mcpd_request *req) {
  void *state = req->state;
  struct good *g = state;

  raise(SIGSEGV);
  /* Reached only if the host caught and returned from the signal. */
  return g->host->result_error(call, "survived SIGSEGV");
}

static int good_stdout_writer(mcpd_call *call, const mcpd_request *req) {
  void *state = req->state;
  struct good *g = state;
  ssize_t n;

  /* Both the stdio buffer and a raw write(2) must miss the protocol. */
  printf("GARBAGE ON STDOUT\n");
  fflush(stdout);
  n = write(1, "MORE GARBAGE\n", 13);
  (void)n;
  return g->host->result_text(call, "wrote");
}

/* Inline tools all run on the loop thread, so dyn_names needs no lock. */
static int dyn_call(mcpd_call *call, void *state, int slot) {
  struct good *g = state;
  char text[80];

  snprintf(text, sizeof(text), "dynamic %s",
           g->dyn_names[slot] != NULL ? g->dyn_names[slot] : "?");
  return g->host->result_text(call, text);
}

#define DYN_CB(i)                                                              \
  static int dyn_cb_##i(mcpd_call *call, const mcpd_request *req) {            \
    return dyn_call(call, req->state, i);                                      \
  }
DYN_CB(0)
DYN_CB(1)
DYN_CB(2)
DYN_CB(3)
DYN_CB(4)
DYN_CB(5)
DYN_CB(6)
DYN_CB(7)

static const mcpd_tool_cb dyn_cbs[DYN_SLOTS] = {
    dyn_cb_0, dyn_cb_1, dyn_cb_2, dyn_cb_3,
    dyn_cb_4, dyn_cb_5, dyn_cb_6, dyn_cb_7,
};

static int good_dyn_add(mcpd_call *call, const mcpd_request *req) {
  json_object *arguments = req->arguments;
  void *state = req->state;
  struct good *g = state;
  const char *name = arg_string(arguments, "name");
  mcpd_tool tool = {0};
  int slot;

  for (slot = 0; slot < DYN_SLOTS && g->dyn_names[slot] != NULL; slot++)
    continue;
  if (slot == DYN_SLOTS)
    return g->host->result_error(call, "all %d dynamic slots in use",
                                 DYN_SLOTS);
  tool.name = name;
  tool.description = "dynamic tool";
  tool.call = dyn_cbs[slot];
  tool.exec = MCPD_EXEC_INLINE;
  /* Claim the slot first: the host may list or even call the tool before
   * add_tool() returns. */
  g->dyn_names[slot] = strdup(name);
  if (g->dyn_names[slot] == NULL)
    return MCPD_ERROR;
  if (g->host->add_tool(g->self, &tool) != MCPD_OK) {
    free(g->dyn_names[slot]);
    g->dyn_names[slot] = NULL;
    return g->host->result_error(call, "add_tool(\"%s\") failed: %s", name,
                                 g->host->last_error());
  }
  return g->host->result_text(call, "ok");
}

static int good_dyn_remove(mcpd_call *call, const mcpd_request *req) {
  json_object *arguments = req->arguments;
  void *state = req->state;
  struct good *g = state;
  const char *name = arg_string(arguments, "name");
  int slot;

  if (g->host->remove_tool(g->self, name) != MCPD_OK)
    return g->host->result_error(call, "remove_tool(\"%s\") failed", name);
  for (slot = 0; slot < DYN_SLOTS; slot++) {
    if (g->dyn_names[slot] != NULL && strcmp(g->dyn_names[slot], name) == 0) {
      free(g->dyn_names[slot]);
      g->dyn_names[slot] = NULL;
    }
  }
  return g->host->result_text(call, "ok");
}

static int good_log(mcpd_call *call, const mcpd_request *req) {
  void *state = req->state;
  struct good *g = state;

  g->host->log(g->self, MCPD_LOG_DEBUG, "a %s message", "debug");
  g->host->log(g->self, MCPD_LOG_INFO, "an %s message", "info");
  g->host->log(g->self, MCPD_LOG_WARNING, "a %s message", "warning");
  g->host->log(g->self, MCPD_LOG_ERROR, "an %s message", "error");
  return g->host->result_text(call, "logged");
}

static int good_env(mcpd_call *call, const mcpd_request *req) {
  json_object *arguments = req->arguments;
  void *state = req->state;
  struct good *g = state;
  const char *value = getenv(arg_string(arguments, "name"));

  return g->host->result_text(call, value != NULL ? value : "");
}

/* Returns the entry's data: one callback could serve many entries. */
static int good_data_echo(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_textf(call, "%s %s", req->name,
                                 (const char *)req->data);
}

/* Async; its on_cancel callback completes the call itself, on the
 * thread that cancels it (the loop, for notifications/cancelled). */
struct cancel_completes {
  const mcpd_host *host;
  mcpd_call *call;
};

static void complete_now(void *arg) {
  struct cancel_completes *cc = arg;
  cc->host->result_text(cc->call, "completed by on_cancel");
  cc->host->complete(cc->call, MCPD_OK);
  free(cc);
}

static int good_complete_on_cancel(mcpd_call *call, const mcpd_request *req) {
  struct cancel_completes *cc = malloc(sizeof(*cc));

  if (cc == NULL)
    return MCPD_ERROR;
  cc->host = req->host;
  cc->call = call;
  return req->host->on_cancel(call, complete_now, cc);
}

/* Sleeps until cancelled, woken by on_cancel() instead of polling. */
struct waiter {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int woken;
};

static void wake(void *arg) {
  struct waiter *w = arg;
  pthread_mutex_lock(&w->lock);
  w->woken = 1;
  pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->lock);
}

static int good_wait_cancel(mcpd_call *call, const mcpd_request *req) {
  struct waiter w = {.woken = 0};
  struct timespec until;
  int woken;

  pthread_mutex_init(&w.lock, NULL);
  pthread_cond_init(&w.cond, NULL);
  req->host->on_cancel(call, wake, &w);
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 30;
  pthread_mutex_lock(&w.lock);
  while (!w.woken && pthread_cond_timedwait(&w.cond, &w.lock, &until) == 0)
    continue;
  woken = w.woken;
  pthread_mutex_unlock(&w.lock);
  /* After the call ends the host never runs `wake`, so `w` may go. */
  pthread_cond_destroy(&w.cond);
  pthread_mutex_destroy(&w.lock);
  return req->host->result_text(call, woken ? "woken" : "timed out");
}

/* One block from every builder, in a known order. */
static int good_builders(mcpd_call *call, const mcpd_request *req) {
  void *state = req->state;
  struct good *g = state;
  const mcpd_host *h = g->host;
  if (h->result_text(call, "text") != MCPD_OK ||
      h->result_text_len(call, "len\0gth", 6) != MCPD_OK ||
      h->result_textf(call, "%s-%d", "textf", 7) != MCPD_OK ||
      h->result_image(call, "aW1n", "image/png") != MCPD_OK ||
      h->result_audio(call, "YXVk", "audio/wav") != MCPD_OK ||
      h->result_resource_link(call, "file:///a", "a", "the a", "text/plain") !=
          MCPD_OK ||
      h->result_resource_link(call, "file:///b", "b", NULL, NULL) != MCPD_OK ||
      h->result_resource_text(call, "mem://t", "text/plain", "hi") != MCPD_OK ||
      h->result_resource_blob(call, "mem://b", NULL, "Ymxi") != MCPD_OK)
    return MCPD_ERROR;
  /* Misuse is refused without spoiling what was built. */
  if (h->result_text(call, NULL) != MCPD_ERROR ||
      h->result_image(call, NULL, "image/png") != MCPD_ERROR ||
      h->result_resource_link(call, "file:///c", NULL, NULL, NULL) !=
          MCPD_ERROR)
    return h->result_error(call, "a misuse was accepted");
  return MCPD_OK;
}

/* A whole result handed over as json-c. */
static int good_json_result(mcpd_call *call, const mcpd_request *req) {
  void *state = req->state;
  struct good *g = state;
  json_object *result = json_object_new_object();
  json_object *content = json_object_new_array();
  json_object *block = json_object_new_object();
  json_object_object_add(block, "type", json_object_new_string("text"));
  json_object_object_add(block, "text", json_object_new_string("whole"));
  json_object_array_add(content, block);
  json_object_object_add(result, "content", content);
  json_object_object_add(result, "isError", json_object_new_boolean(0));
  return g->host->result_json(call, result);
}

/* Builds a result, then returns a code that is neither OK nor ERROR. */
static int good_bogus(mcpd_call *call, const mcpd_request *req) {
  void *state = req->state;
  struct good *g = state;
  g->host->result_text(call, "looks fine");
  return 7;
}

/* Starts a child that reads its stdin to the end and prints its ignored
 * signals: what a program a plugin runs inherits from mcpd. */
static int good_child(mcpd_call *call, const mcpd_request *req) {
  void *state = req->state;
  struct good *g = state;
  char out[4096];
  size_t n;
  FILE *f;

  f = popen("cat; grep '^SigIgn' /proc/self/status", "r");
  if (f == NULL)
    return g->host->result_error(call, "popen failed");
  n = fread(out, 1, sizeof(out) - 1, f);
  out[n] = '\0';
  pclose(f);
  return g->host->result_text(call, out);
}

static int good_config(mcpd_call *call, const mcpd_request *req) {
  void *state = req->state;
  struct good *g = state;

  if (g->config == NULL)
    return g->host->result_text(call, "null");
  return g->host->result_text(
      call, json_object_to_json_string_ext(g->config, JSON_C_TO_STRING_PLAIN));
}

static int good_init(const mcpd_host *host, mcpd_self *self,
                     json_object *config, void **state, char **errmsg) {
  struct good *g;

  g = calloc(1, sizeof(*g));
  if (g == NULL) {
    *errmsg = host->mprintf("out of memory");
    return MCPD_ERROR;
  }
  g->host = host;
  g->self = self;
  pthread_mutex_init(&g->lock, NULL);
  /* The config is borrowed for init() only; keep a reference. */
  g->config = json_object_get(config);
  *state = g;
  return MCPD_OK;
}

static void good_fini(void *state) {
  struct good *g = state;
  int slot;

  if (g == NULL)
    return;
  /* Tests look for this line to see that fini() ran. */
  g->host->log(g->self, MCPD_LOG_INFO, "fini: releasing state");
  reap_jobs(g, 1);
  pthread_mutex_destroy(&g->lock);
  for (slot = 0; slot < DYN_SLOTS; slot++)
    free(g->dyn_names[slot]);
  json_object_put(g->config);
  free(g);
}

/* Schema text for an object with the given properties, all optional, or
 * with a "required" list. */
#define OBJECT(props) "{\"type\":\"object\",\"properties\":{" props "}}"
#define OBJECT_REQUIRED(props, required)                                       \
  "{\"type\":\"object\",\"properties\":{" props "},\"required\":[" required "]}"
#define STRING_ARG(name) "\"" name "\":{\"type\":\"string\"}"

static const mcpd_tool tools[] = {
    {
        .name = "add",
        .description = "Adds two numbers.",
        .input_schema = "{\"type\":\"object\",\"properties\":{"
                        "\"a\":{\"type\":\"number\"},"
                        "\"b\":{\"type\":\"number\"}},"
                        "\"required\":[\"a\",\"b\"],"
                        "\"additionalProperties\":false}",
        .output_schema =
            OBJECT_REQUIRED("\"sum\":{\"type\":\"number\"}", "\"sum\""),
        .call = good_add,
        .exec = MCPD_EXEC_INLINE,
        .read_only_hint = MCPD_HINT_TRUE,
    },
    {
        .name = "slow",
        .description = "Sleeps `ms` milliseconds on a worker thread.",
        .input_schema = OBJECT_REQUIRED(
            "\"ms\":{\"type\":\"integer\",\"minimum\":0}", "\"ms\""),
        .call = good_slow,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "async_echo",
        .description = "Echoes `text` from another thread 10 ms later.",
        .input_schema = OBJECT_REQUIRED(STRING_ARG("text"), "\"text\""),
        .call = good_async_echo,
        .exec = MCPD_EXEC_ASYNC,
    },
    {
        .name = "progress",
        .description = "Reports `steps` (default 3) progress notifications.",
        .input_schema = OBJECT("\"steps\":{\"type\":\"integer\"}"),
        .call = good_progress,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "nothing",
        .description = "Returns success without building a result.",
        .call = good_nothing,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "garbage",
        .description = "Replaces its result with a JSON string.",
        .call = good_garbage,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "fail",
        .description = "Returns an isError result.",
        .call = good_fail,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "crash",
        .description = "Raises SIGSEGV.",
        .call = good_crash,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "stdout_writer",
        .description = "Writes garbage to stdout, then returns \"wrote\".",
        .call = good_stdout_writer,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "dyn_add",
        .description = "Adds an inline tool `name` that returns \"dynamic "
                       "<name>\".",
        .input_schema = OBJECT_REQUIRED(STRING_ARG("name"), "\"name\""),
        .call = good_dyn_add,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "dyn_remove",
        .description = "Removes tool `name`.",
        .input_schema = OBJECT_REQUIRED(STRING_ARG("name"), "\"name\""),
        .call = good_dyn_remove,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "log",
        .description = "Logs once at debug, info, warning and error.",
        .call = good_log,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "env",
        .description = "Returns environment variable `name`, or \"\".",
        .input_schema = OBJECT_REQUIRED(STRING_ARG("name"), "\"name\""),
        .call = good_env,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "data_echo",
        .description = "Returns its name and its table entry's data.",
        .call = good_data_echo,
        .exec = MCPD_EXEC_INLINE,
        .data = (void *)"entry-data",
    },
    {
        .name = "wait_cancel",
        .description = "Waits (up to 30 s) until on_cancel() wakes it.",
        .call = good_wait_cancel,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "builders",
        .description = "One content block from every result builder.",
        .call = good_builders,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "json_result",
        .description = "A whole result built with json-c.",
        .call = good_json_result,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "complete_twice",
        .description = "Async; completes, then misuses the finished call.",
        .call = good_complete_twice,
        .exec = MCPD_EXEC_ASYNC,
    },
    {
        .name = "fail_then_complete",
        .description = "Async; fails at once, completes from a thread later.",
        .call = good_fail_then_complete,
        .exec = MCPD_EXEC_ASYNC,
    },
    {
        .name = "complete_on_cancel",
        .description = "Async; waits for cancellation, then its on_cancel "
                       "callback completes the call.",
        .call = good_complete_on_cancel,
        .exec = MCPD_EXEC_ASYNC,
    },
    {
        .name = "log_storm",
        .description = "Async; logs at debug as fast as it can for ms.",
        .call = good_log_storm,
        .exec = MCPD_EXEC_ASYNC,
    },
    {
        .name = "stuck",
        .description = "Sleeps ms (default 60000), ignoring cancellation.",
        .call = good_stuck,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "serializer",
        .description = "Structured content with a forging json-c serializer.",
        .call = good_serializer,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "misuse_report",
        .description = "What the late host calls of the last misuse returned.",
        .call = good_misuse_report,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "bogus",
        .description = "Returns 7 from its callback: a plugin bug.",
        .call = good_bogus,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "child",
        .description = "Runs a child that reads stdin; returns its output.",
        .call = good_child,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "config",
        .description = "Returns the config object init() received, or null.",
        .call = good_config,
        .exec = MCPD_EXEC_INLINE,
    },
    MCPD_TOOL_END,
};

MCPD_PLUGIN_DEFINE(.name = "good", .version = "1.0",
                   .description = "The well-behaved test fixture.",
                   .init = good_init, .fini = good_fini, .tools = tools);
