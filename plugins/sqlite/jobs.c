/* SPDX-License-Identifier: MIT */
/* jobs.c -- the threads the "sqlite" plugin's tools run on.
 *
 * Tools are ASYNC: each call runs on a thread of its own that ends the
 * call with complete(), which waits for an on_cancel callback that may be
 * interrupting the query at that moment; only then is the job freed.
 * Finished threads are joined on the loop thread, at the next call or at
 * fini.
 */
#include <pthread.h>
#include <stdlib.h>

#include "sqlite.h"

/* Tool calls running at once; more are refused rather than queued, since
 * each holds a thread. */
#define SQ_MAX_JOBS 64

static void *job_main(void *arg) {
  struct sq_job *j = arg;
  struct sq_state *st = j->st;
  int rc;

  rc = j->kind->run(j);
  sq_conn_close(&j->conn);
  /* Waits for a sq_conn_cancel_cb that may be running, so `j` outlives it. */
  st->host->complete(j->conn.call, rc);
  pthread_mutex_lock(&st->lock);
  j->done = 1;
  pthread_mutex_unlock(&st->lock);
  return NULL;
}

static void job_free(struct sq_job *j) {
  pthread_mutex_destroy(&j->conn.lock);
  free(j);
}

/* Joins the finished jobs' threads, or all of them. */
void sq_reap(struct sq_state *st, int all) {
  struct sq_job **link, *j, *finished = NULL;

  pthread_mutex_lock(&st->lock);
  link = &st->jobs;
  while ((j = *link) != NULL) {
    if (all || j->done) {
      *link = j->next;
      j->next = finished;
      finished = j;
      st->n_jobs--;
    } else {
      link = &j->next;
    }
  }
  pthread_mutex_unlock(&st->lock);
  while ((j = finished) != NULL) {
    finished = j->next;
    pthread_join(j->thread, NULL);
    job_free(j);
  }
}

/* Every tool's callback, on the loop thread: checks the database name and
 * starts a thread for the work. */
int sq_tool_start(mcpd_call *call, const mcpd_request *req) {
  struct sq_state *st = req->state;
  const mcpd_host *host = req->host;
  const struct sq_tool_kind *kind = req->data;
  const char *name = sq_arg_string(req->arguments, "database");
  const struct sq_database *d = sq_find_database(st, name);
  struct sq_job *j;
  size_t running;

  sq_reap(st, 0);
  if (d == NULL && !(name == NULL && kind->database_optional)) {
    sq_fail_unknown(call, st, name);
    return host->complete(call, MCPD_OK) == MCPD_OK ? MCPD_OK : MCPD_ERROR;
  }
  if (d != NULL && kind->writes && !d->write) {
    host->result_error(call,
                       "database \"%s\" is read-only: execute needs \"write\": "
                       "true in its config; use query to read it",
                       d->name);
    return host->complete(call, MCPD_OK) == MCPD_OK ? MCPD_OK : MCPD_ERROR;
  }
  pthread_mutex_lock(&st->lock);
  running = st->n_jobs;
  pthread_mutex_unlock(&st->lock);
  if (running >= SQ_MAX_JOBS) {
    host->result_error(call,
                       "%zu statements are running already; try again "
                       "when one has finished",
                       running);
    return host->complete(call, MCPD_OK) == MCPD_OK ? MCPD_OK : MCPD_ERROR;
  }
  if ((j = calloc(1, sizeof(*j))) == NULL)
    return MCPD_ERROR;
  j->st = st;
  j->kind = kind;
  j->arguments = req->arguments;
  j->conn.st = st;
  j->conn.database = d;
  j->conn.host = host;
  j->conn.call = call;
  pthread_mutex_init(&j->conn.lock, NULL);
  /* Before the thread starts: it may complete the call at once. */
  host->on_cancel(call, sq_conn_cancel_cb, &j->conn);
  if (pthread_create(&j->thread, NULL, job_main, j) != 0) {
    host->on_cancel(call, NULL, NULL);
    job_free(j);
    return MCPD_ERROR; /* not started: no complete() */
  }
  pthread_mutex_lock(&st->lock);
  j->next = st->jobs;
  st->jobs = j;
  st->n_jobs++;
  pthread_mutex_unlock(&st->lock);
  return MCPD_OK;
}

/* Opens the job's database, or builds an error result; returns nonzero
 * when it is open. */
int sq_job_open(struct sq_job *j) {
  char *error = NULL;

  if (sq_conn_open(&j->conn, &error) == SQLITE_OK)
    return 1;
  j->st->host->result_error(j->conn.call, "%s", error ? error : "no memory");
  sqlite3_free(error);
  return 0;
}

/* Ends a tool with SQLite's (or our) message as an isError result. */
int sq_job_error(struct sq_job *j, char *error) {
  j->st->host->result_error(j->conn.call, "%s",
                            error ? error : "out of memory");
  sqlite3_free(error);
  return MCPD_OK;
}
