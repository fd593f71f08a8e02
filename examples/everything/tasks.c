/* SPDX-License-Identifier: MIT */
/* tasks.c -- the everything fixture's tools for tasks (ABI 1.3), as the
 * conformance suite's tasks-* scenarios call them.  Each is an ordinary
 * tool: mcpd makes a task of it when the tool allows one and the client
 * can take one.  The long ones sleep in short steps and stop as soon as
 * the call is cancelled (tasks/cancel), and report where they are with
 * task_status(). */
/* nanosleep. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <mcpd.h>

#include "tasks.h"

#define STEP_MS 50

/* Sleeps `ms` in steps; returns nonzero when the call was cancelled. */
static int nap(mcpd_call *call, const mcpd_request *req, long ms) {
  for (long slept = 0; slept < ms; slept += STEP_MS) {
    struct timespec ts = {0, STEP_MS * 1000000L};
    if (req->host->cancelled(call))
      return 1;
    nanosleep(&ts, NULL);
  }
  return req->host->cancelled(call);
}

/* A member of the arguments, or `fallback`. */
static double number_arg(const mcpd_request *req, const char *key,
                         double fallback) {
  json_object *v;
  return json_object_object_get_ex(req->arguments, key, &v)
             ? json_object_get_double(v)
             : fallback;
}

static const char *string_arg(const mcpd_request *req, const char *key,
                              const char *fallback) {
  json_object *v;
  return json_object_object_get_ex(req->arguments, key, &v) &&
                 json_object_is_type(v, json_type_string)
             ? json_object_get_string(v)
             : fallback;
}

/* A string field of an accepted elicitation's content, or NULL. */
static const char *accepted(json_object *answer, const char *field) {
  json_object *v, *content;
  if (!json_object_object_get_ex(answer, "action", &v) ||
      !json_object_is_type(v, json_type_string) ||
      strcmp(json_object_get_string(v), "accept") != 0 ||
      !json_object_object_get_ex(answer, "content", &content) ||
      !json_object_object_get_ex(content, field, &v))
    return NULL;
  return json_object_is_type(v, json_type_boolean)
             ? (json_object_get_boolean(v) ? "true" : "false")
             : json_object_get_string(v);
}

static json_object *form(const char *message, const char *schema) {
  json_object *params = json_object_new_object();
  json_object_object_add(params, "message", json_object_new_string(message));
  json_object_object_add(params, "requestedSchema", json_tokener_parse(schema));
  return params;
}

/* Asks the client under `key`; NULL when there is no answer (yet: in the
 * 2026-07-28 era the task then waits for tasks/update). */
static json_object *ask(mcpd_call *call, const mcpd_request *req,
                        const char *key, json_object *params) {
  json_object *answer = NULL;
  char *why = NULL;
  if (req->host->client_request_wait_keyed(call, key, "elicitation/create",
                                           params, &answer, &why) != MCPD_OK)
    answer = NULL;
  req->host->free(why);
  return answer;
}

int tasks_greet(mcpd_call *call, const mcpd_request *req) {
  return req->host->result_textf(call, "Hello, %s!",
                                 string_arg(req, "name", "World"));
}

int tasks_slow_compute(mcpd_call *call, const mcpd_request *req) {
  double seconds = number_arg(req, "seconds", 1);
  const char *label = string_arg(req, "label", "job");
  long total = seconds > 0 ? (long)(seconds * 1000) : 0;

  for (long done = 0; done < total; done += 250) {
    req->host->task_status(call, "%s: %ld of %ld ms", label, done, total);
    req->host->progress(call, (double)done, (double)total, NULL);
    if (nap(call, req, total - done < 250 ? total - done : 250))
      return req->host->result_error(call, "%s was cancelled", label);
  }
  return req->host->result_textf(call, "%s: computed in %g s", label,
                                 seconds > 0 ? seconds : 0);
}

int tasks_failing_job(mcpd_call *call, const mcpd_request *req) {
  if (nap(call, req, 1000))
    return req->host->result_error(call, "failing_job was cancelled");
  return req->host->result_error(call, "failing_job failed, as it always does");
}

int tasks_protocol_error_job(mcpd_call *call, const mcpd_request *req) {
  nap(call, req, 200);
  return req->host->fail(call, MCPD_ERR_INTERNAL,
                         "protocol_error_job: an internal failure");
}

int tasks_confirm_delete(mcpd_call *call, const mcpd_request *req) {
  const char *file = string_arg(req, "filename", "the file");
  json_object *answer =
      ask(call, req, "confirm_delete",
          form("Delete this file?",
               "{\"type\":\"object\",\"properties\":{\"confirm\":"
               "{\"type\":\"boolean\"}},\"required\":[\"confirm\"]}"));
  const char *yes = accepted(answer, "confirm");
  int rc;

  if (answer == NULL)
    return req->host->result_error(call, "no confirmation for %s", file);
  rc = yes != NULL && strcmp(yes, "true") == 0
           ? req->host->result_textf(call, "Deleted %s", file)
           : req->host->result_textf(call, "Kept %s", file);
  json_object_put(answer);
  return rc;
}

int tasks_multi_input(mcpd_call *call, const mcpd_request *req) {
  static const char schema[] =
      "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
      "\"confirm\":{\"type\":\"boolean\"}}}";
  /* Both asked before either is answered: two inputs pending at once. */
  json_object *first = ask(call, req, "first", form("First input", schema));
  json_object *second = ask(call, req, "second", form("Second input", schema));
  int rc;

  if (first == NULL || second == NULL)
    rc = req->host->result_error(call, "an input is missing");
  else
    rc = req->host->result_textf(
        call, "Got %s and %s",
        accepted(first, "name") ? accepted(first, "name") : "?",
        accepted(second, "name") ? accepted(second, "name") : "?");
  json_object_put(first);
  json_object_put(second);
  return rc;
}

int tasks_tool_with_task(mcpd_call *call, const mcpd_request *req) {
  json_object *answer =
      ask(call, req, "user_name",
          form("What is your name?",
               "{\"type\":\"object\",\"properties\":{\"name\":"
               "{\"type\":\"string\"}},\"required\":[\"name\"]}"));
  const char *name = accepted(answer, "name");
  char who[128];
  int rc;

  if (name == NULL) {
    json_object_put(answer);
    return req->host->result_error(call, "no name was given");
  }
  snprintf(who, sizeof(who), "%s", name);
  json_object_put(answer);
  /* The input is in: the rest is long work, so the call becomes a task
   * (a plain call goes on when the client cannot take one). */
  req->host->task_begin(call);
  req->host->task_status(call, "greeting %s", who);
  if (nap(call, req, 300))
    return req->host->result_error(call, "cancelled");
  rc = req->host->result_textf(call, "Hello, %s! (finished as a task)", who);
  return rc;
}
