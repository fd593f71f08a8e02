/* SPDX-License-Identifier: MIT */
/* asker.c -- the fixture that asks the client (ABI 1.1), for
 * tests/e2e/client.test.mjs: each tool is a thin wrapper around one host
 * function, so a test decides what is sent and sees what came back.
 *
 *   ask {method, params}          POOL; client_request_wait(); the result
 *                                 as JSON text, or an isError result with
 *                                 the error ("<message> (<code>)")
 *   ask_async {method, params, count}
 *                                 ASYNC; `count` client_request()s at once,
 *                                 completed when all were answered: one
 *                                 text block per request, in the order
 *                                 they were sent
 *   url_elicit {url, id, message?}
 *                                 POOL; elicitation/create in url mode,
 *                                 then elicitation_complete(id) on accept
 *   roots                         call_roots() as JSON text
 *   meta, meta_pool               the request's _meta as JSON text, or
 *                                 null (INLINE and POOL)
 *   roots_changes                 how often on_roots_changed ran
 *
 * It starts no threads of its own: the POOL tools wait on the host's pool
 * and the ASYNC one is finished by the host's callbacks, on the loop.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <mcpd.h>

struct asker {
  /* Written by the roots callback on the loop, read by any call. */
  atomic_ulong roots_changes;
};

static const char *compact(json_object *value) {
  return json_object_to_json_string_ext(
      value, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

static const char *string_argument(const mcpd_request *req, const char *name) {
  json_object *v;

  if (!json_object_object_get_ex(req->arguments, name, &v) ||
      !json_object_is_type(v, json_type_string))
    return NULL;
  return json_object_get_string(v);
}

/* A private copy of the "params" argument (the host consumes what it is
 * given), or NULL when there is none. */
static json_object *params_copy(const mcpd_request *req) {
  json_object *params, *copy = NULL;

  if (!json_object_object_get_ex(req->arguments, "params", &params) ||
      params == NULL)
    return NULL;
  if (json_object_deep_copy(params, &copy, NULL) != 0)
    return NULL;
  return copy;
}

/* --- ask -------------------------------------------------------------- */

static int tool_ask(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  json_object *result = NULL;
  char *error = NULL;
  int rc;

  json_object *key = NULL;

  /* With "key", the ABI 1.2 form that names the question. */
  if (json_object_object_get_ex(req->arguments, "key", &key)
          ? host->client_request_wait_keyed(call, json_object_get_string(key),
                                            string_argument(req, "method"),
                                            params_copy(req), &result,
                                            &error) != MCPD_OK
          : host->client_request_wait(call, string_argument(req, "method"),
                                      params_copy(req), &result,
                                      &error) != MCPD_OK) {
    rc = host->result_error(call, "%s",
                            error != NULL ? error : host->last_error());
    host->free(error);
    return rc;
  }
  rc = host->result_text(call, compact(result));
  json_object_put(result);
  return rc;
}

/* --- ask_async -------------------------------------------------------- */

/* One ask_async call.  It starts on the loop thread and its answers
 * arrive there too, one callback each, so nothing here needs a lock; the
 * last answer completes the call. */
struct job {
  mcpd_call *call;
  const mcpd_host *host;
  size_t count;
  size_t pending; /* answers still due, plus one while requests go out */
  struct answer {
    struct job *job;
    char *text; /* from host->mprintf() */
  } answers[];
};

static void job_release(struct job *job) {
  const mcpd_host *host = job->host;
  int rc = MCPD_OK;

  if (--job->pending > 0)
    return;
  for (size_t i = 0; i < job->count; i++) {
    const char *text = job->answers[i].text;

    if (rc == MCPD_OK)
      rc = host->result_text(job->call, text != NULL ? text : "out of memory");
    host->free(job->answers[i].text);
  }
  host->complete(job->call, rc);
  free(job);
}

static void job_answer(void *arg, json_object *result, int code,
                       const char *message) {
  struct answer *a = arg;
  const mcpd_host *host = a->job->host;

  if (result != NULL)
    a->text = host->mprintf("%s", compact(result));
  else
    a->text = host->mprintf("error %d: %s", code, message);
  job_release(a->job);
}

static int tool_ask_async(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  const char *method = string_argument(req, "method");
  json_object *v;
  int64_t count = 1;
  struct job *job;

  if (json_object_object_get_ex(req->arguments, "count", &v))
    count = json_object_get_int64(v);
  job = calloc(1, sizeof(*job) + (size_t)count * sizeof(job->answers[0]));
  if (job == NULL)
    return MCPD_ERROR;
  job->call = call;
  job->host = host;
  job->count = (size_t)count;
  job->pending = job->count + 1;
  for (size_t i = 0; i < job->count; i++) {
    struct answer *a = &job->answers[i];

    a->job = job;
    if (host->client_request(call, method, params_copy(req), job_answer, a) !=
        MCPD_OK) {
      /* Refused: its callback will not run. */
      a->text = host->mprintf("refused: %s", host->last_error());
      job->pending--;
    }
  }
  job_release(job);
  return MCPD_OK;
}

/* --- url_elicit ------------------------------------------------------- */

static int tool_url_elicit(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  const char *id = string_argument(req, "id");
  const char *message = string_argument(req, "message");
  json_object *params, *result = NULL, *action;
  char *error = NULL;
  int rc;

  params = json_object_new_object();
  json_object_object_add(params, "mode", json_object_new_string("url"));
  json_object_object_add(
      params, "message",
      json_object_new_string(message ? message : "Please open the link"));
  json_object_object_add(params, "url",
                         json_object_new_string(string_argument(req, "url")));
  json_object_object_add(params, "elicitationId", json_object_new_string(id));
  if (host->client_request_wait(call, "elicitation/create", params, &result,
                                &error) != MCPD_OK) {
    rc = host->result_error(call, "%s",
                            error != NULL ? error : host->last_error());
    host->free(error);
    return rc;
  }
  /* A real plugin would wait for its web page to report back; the
   * fixture reports completion as soon as the user accepted. */
  if (json_object_object_get_ex(result, "action", &action) &&
      strcmp(json_object_get_string(action), "accept") == 0 &&
      host->elicitation_complete(call, id) != MCPD_OK) {
    rc = host->result_error(call, "elicitation_complete: %s",
                            host->last_error());
    json_object_put(result);
    return rc;
  }
  rc = host->result_text(call, compact(result));
  json_object_put(result);
  return rc;
}

/* --- roots ------------------------------------------------------------ */

static int tool_roots(mcpd_call *call, const mcpd_request *req) {
  const mcpd_host *host = req->host;
  json_object *roots = host->call_roots(call);
  int rc;

  if (roots == NULL)
    return host->result_error(call, "no roots: %s", host->last_error());
  rc = host->result_text(call, compact(roots));
  json_object_put(roots);
  return rc;
}

static int tool_meta(mcpd_call *call, const mcpd_request *req) {
  if (req->meta == NULL)
    return req->host->result_text(call, "null");
  return req->host->result_text(call, compact(req->meta));
}

static int tool_roots_changes(mcpd_call *call, const mcpd_request *req) {
  struct asker *a = req->state;

  return req->host->result_textf(call, "%lu",
                                 (unsigned long)atomic_load(&a->roots_changes));
}

static void roots_changed(void *arg) {
  struct asker *a = arg;

  atomic_fetch_add(&a->roots_changes, 1);
}

/* --- tables and life cycle -------------------------------------------- */

static const mcpd_tool tools[] = {
    {
        .name = "ask",
        .description = "Sends the client one request and returns its result.",
        .input_schema =
            "{\"type\":\"object\",\"properties\":{"
            "\"method\":{\"type\":\"string\"},\"params\":{\"type\":\"object\"},"
            "\"key\":{\"type\":\"string\"}"
            "},\"required\":[\"method\"]}",
        .call = tool_ask,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "ask_async",
        .description = "Sends the client `count` requests at once and "
                       "returns their answers in the order they were sent.",
        .input_schema =
            "{\"type\":\"object\",\"properties\":{"
            "\"method\":{\"type\":\"string\"},\"params\":{\"type\":\"object\"},"
            "\"count\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100}"
            "},\"required\":[\"method\"]}",
        .call = tool_ask_async,
        .exec = MCPD_EXEC_ASYNC,
    },
    {
        .name = "url_elicit",
        .description = "Asks the user to open a URL, then reports the "
                       "elicitation complete.",
        .input_schema =
            "{\"type\":\"object\",\"properties\":{"
            "\"url\":{\"type\":\"string\"},\"id\":{\"type\":\"string\"},"
            "\"message\":{\"type\":\"string\"}},\"required\":[\"url\",\"id\"]}",
        .call = tool_url_elicit,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "roots",
        .description = "The client's roots as the call sees them.",
        .call = tool_roots,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "meta",
        .description = "The request's _meta as the plugin sees it.",
        .call = tool_meta,
        .exec = MCPD_EXEC_INLINE,
    },
    {
        .name = "meta_pool",
        .description = "The request's _meta as a POOL callback sees it.",
        .call = tool_meta,
        .exec = MCPD_EXEC_POOL,
    },
    {
        .name = "roots_changes",
        .description = "How many times the client's roots changed.",
        .call = tool_roots_changes,
        .exec = MCPD_EXEC_INLINE,
    },
    MCPD_TOOL_END,
};

static int asker_init(const mcpd_host *host, mcpd_self *self,
                      json_object *config, void **state, char **errmsg) {
  struct asker *a;

  (void)config;
  a = calloc(1, sizeof(*a));
  if (a == NULL) {
    *errmsg = host->mprintf("out of memory");
    return MCPD_ERROR;
  }
  atomic_init(&a->roots_changes, 0);
  *state = a;
  if (host->on_roots_changed(self, roots_changed, a) != MCPD_OK) {
    *errmsg = host->mprintf("on_roots_changed: %s", host->last_error());
    return MCPD_ERROR;
  }
  return MCPD_OK;
}

/* The host stops the roots callback when the plugin unloads; there are
 * no threads to join. */
static void asker_fini(void *state) {
  free(state);
}

MCPD_PLUGIN_DEFINE(.name = "asker", .version = "1.0",
                   .description = "Asks the client: sampling, elicitation "
                                  "and roots, for the e2e tests.",
                   .init = asker_init, .fini = asker_fini, .tools = tools);
