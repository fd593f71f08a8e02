/* SPDX-License-Identifier: MIT */
/* conn.c -- one SQLite connection for one call of the "sqlite" plugin.
 *
 * Every call opens its own connection and closes it before it ends, so no
 * connection is ever shared between threads and a stuck query holds up
 * nobody else.  Every statement runs under a progress handler that stops
 * it past timeoutMs or once the call is cancelled; on_cancel interrupts it
 * at once (sqlite3_interrupt).
 *
 * A database opens read-only (SQLITE_OPEN_READONLY and query_only) unless
 * its config says "write": true.  ATTACH is disabled on every connection
 * (SQLITE_LIMIT_ATTACHED 0), so no statement reaches a file the config did
 * not name.
 */
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "sqlite.h"

/* How many VM steps run between two looks at the clock and at the call's
 * cancellation: cheap, and well under a millisecond apart. */
#define SQ_PROGRESS_STEPS 1000

static long long now_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Runs every SQ_PROGRESS_STEPS VM steps of the connection's statements;
 * nonzero interrupts the statement. */
static int progress_cb(void *arg) {
  struct sq_conn *c = arg;

  if (now_ms() >= c->deadline_ms) {
    c->timed_out = 1;
    return 1;
  }
  return c->call != NULL && c->host->cancelled(c->call);
}

/* on_cancel, on the loop thread: interrupts what the connection runs. */
void sq_conn_cancel_cb(void *arg) {
  struct sq_conn *c = arg;

  pthread_mutex_lock(&c->lock);
  c->cancelled = 1;
  if (c->db != NULL)
    sqlite3_interrupt(c->db);
  pthread_mutex_unlock(&c->lock);
}

/* Opens `database` for one call into *c (whose lock is initialised).
 * Returns SQLITE_OK or a code with *error from sqlite3_mprintf. */
int sq_conn_open(struct sq_conn *c, char **error) {
  const struct sq_database *d = c->database;
  /* NOMUTEX: the connection never leaves this call's thread;
   * sqlite3_interrupt() is safe from another thread regardless. */
  int flags = (d->write ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) |
              (d->write && c->create ? SQLITE_OPEN_CREATE : 0) |
              SQLITE_OPEN_NOMUTEX;
  sqlite3 *db = NULL;
  int rc;

  rc = sqlite3_open_v2(d->path, &db, flags, NULL);
  if (rc != SQLITE_OK) {
    *error =
        sqlite3_mprintf("cannot open database \"%s\" (%s): %s", d->name,
                        d->path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return rc;
  }
  sqlite3_extended_result_codes(db, 1);
  /* No statement may reach another file (ATTACH, or VACUUM INTO's
   * implicit attach), nor run code a schema planted. */
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
  /* A lock held by another writer is waited for, within the time limit. */
  sqlite3_busy_timeout(
      db, c->st->timeout_ms > INT_MAX ? INT_MAX : (int)c->st->timeout_ms);
  if (!d->write && (rc = sqlite3_exec(db, "PRAGMA query_only=1", NULL, NULL,
                                      NULL)) != SQLITE_OK) {
    *error =
        sqlite3_mprintf("database \"%s\": %s", d->name, sqlite3_errmsg(db));
    sqlite3_close(db);
    return rc;
  }
  c->deadline_ms = now_ms() + c->st->timeout_ms;
  sqlite3_progress_handler(db, SQ_PROGRESS_STEPS, progress_cb, c);
  pthread_mutex_lock(&c->lock);
  c->db = db;
  if (c->cancelled)
    sqlite3_interrupt(db);
  pthread_mutex_unlock(&c->lock);
  return SQLITE_OK;
}

void sq_conn_close(struct sq_conn *c) {
  sqlite3 *db;

  pthread_mutex_lock(&c->lock);
  db = c->db;
  c->db = NULL;
  pthread_mutex_unlock(&c->lock);
  sqlite3_close_v2(db);
}

/* Why a statement failed, for the model: the time limit, the client's
 * cancellation, or SQLite's own message. */
char *sq_conn_error(struct sq_conn *c) {
  int cancelled;

  pthread_mutex_lock(&c->lock);
  cancelled = c->cancelled;
  pthread_mutex_unlock(&c->lock);
  /* Said in the log too, so an operator sees what stopped a query. */
  if (c->timed_out || cancelled ||
      (c->call != NULL && c->host->cancelled(c->call)))
    c->host->log(c->st->self, MCPD_LOG_DEBUG,
                 "database %s: statement interrupted (%s)", c->database->name,
                 c->timed_out ? "timeoutMs" : "cancelled");
  if (c->timed_out)
    return sqlite3_mprintf("interrupted: the statement ran longer than "
                           "timeoutMs (%lld ms); narrow it with WHERE or "
                           "LIMIT",
                           c->st->timeout_ms);
  if (cancelled || (c->call != NULL && c->host->cancelled(c->call)))
    return sqlite3_mprintf("interrupted: the call was cancelled");
  return sqlite3_mprintf("%s", sqlite3_errmsg(c->db));
}

/* Prepares the one statement in `sql`.  More than one, or none, is
 * refused: the tail may hold only blanks and comments. */
int sq_prepare_one(struct sq_conn *c, const char *sql, sqlite3_stmt **out,
                   char **error) {
  sqlite3_stmt *stmt = NULL, *next = NULL;
  const char *tail = NULL;
  int rc;

  *out = NULL;
  rc = sqlite3_prepare_v2(c->db, sql, -1, &stmt, &tail);
  if (rc != SQLITE_OK) {
    *error = sq_conn_error(c);
    return rc;
  }
  if (stmt == NULL) {
    *error = sqlite3_mprintf("no SQL statement in \"sql\"");
    return SQLITE_MISUSE;
  }
  if (tail != NULL && *tail != '\0') {
    rc = sqlite3_prepare_v2(c->db, tail, -1, &next, NULL);
    sqlite3_finalize(next);
    if (rc != SQLITE_OK || next != NULL) {
      sqlite3_finalize(stmt);
      *error = sqlite3_mprintf("only one statement per call: \"sql\" holds "
                               "more than one; send them one call at a "
                               "time");
      return SQLITE_MISUSE;
    }
  }
  *out = stmt;
  return SQLITE_OK;
}

/* Binds `params` (an array, or NULL) to the statement's parameters in
 * order: ?, ?NNN, :name, @name and $name alike, by index. */
int sq_bind_params(sqlite3_stmt *stmt, json_object *params, char **error) {
  size_t n = params ? json_object_array_length(params) : 0;
  int want = sqlite3_bind_parameter_count(stmt);

  if ((size_t)want != n) {
    *error = sqlite3_mprintf("the statement has %d parameter%s, and %llu "
                             "value%s given in \"params\"",
                             want, want == 1 ? "" : "s", (unsigned long long)n,
                             n == 1 ? "" : "s");
    return SQLITE_RANGE;
  }
  for (size_t i = 0; i < n; i++) {
    json_object *v = json_object_array_get_idx(params, i);
    int k = (int)i + 1, rc;

    switch (json_object_get_type(v)) {
    case json_type_null:
      rc = sqlite3_bind_null(stmt, k);
      break;
    case json_type_boolean:
      rc = sqlite3_bind_int(stmt, k, json_object_get_boolean(v));
      break;
    case json_type_int:
      rc = sqlite3_bind_int64(stmt, k, json_object_get_int64(v));
      break;
    case json_type_double:
      rc = sqlite3_bind_double(stmt, k, json_object_get_double(v));
      break;
    case json_type_string:
      rc = sqlite3_bind_text(stmt, k, json_object_get_string(v),
                             json_object_get_string_len(v), SQLITE_TRANSIENT);
      break;
    default:
      *error = sqlite3_mprintf("params[%llu]: only strings, numbers, booleans "
                               "and null can be bound",
                               (unsigned long long)i);
      return SQLITE_MISMATCH;
    }
    if (rc != SQLITE_OK) {
      *error = sqlite3_mprintf("params[%llu]: %s", (unsigned long long)i,
                               sqlite3_errstr(rc));
      return rc;
    }
  }
  return SQLITE_OK;
}

/* Opens a connection for a read, a prompt or a completion (on the pool; no
 * on_cancel, the progress handler looks at cancelled()), or, with no call
 * and `create`, for the check at init. */
int sq_pool_open(struct sq_conn *c, const struct sq_state *st,
                 const struct sq_database *d, mcpd_call *call, int create,
                 char **error) {
  memset(c, 0, sizeof(*c));
  c->create = create;
  c->st = st;
  c->database = d;
  c->host = st->host;
  c->call = call;
  pthread_mutex_init(&c->lock, NULL);
  if (sq_conn_open(c, error) == SQLITE_OK)
    return 1;
  pthread_mutex_destroy(&c->lock);
  return 0;
}

void sq_pool_close(struct sq_conn *c) {
  sq_conn_close(c);
  pthread_mutex_destroy(&c->lock);
}

void sq_conn_restart_clock(struct sq_conn *c) {
  c->deadline_ms = now_ms() + c->st->timeout_ms;
}
