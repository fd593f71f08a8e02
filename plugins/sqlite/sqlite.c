/* sqlite.c -- the "sqlite" plugin: lets a client look into, query and
 * (where the config allows) change the SQLite databases named in mcpd's
 * config.
 *
 * Every call opens its own connection and closes it before it ends, so no
 * connection is ever shared between threads and a stuck query holds up
 * nobody else.  Tools are ASYNC: each runs on a thread of its own that
 * ends the call with complete(), which waits for an on_cancel callback
 * that may be interrupting the query (sqlite3_interrupt) at that moment;
 * only then is the job freed.  Reads, the prompt and completion are short
 * and run on mcpd's pool.  Every statement also runs under a progress
 * handler that stops it past timeoutMs or once the call is cancelled.
 *
 * A database opens read-only (SQLITE_OPEN_READONLY and query_only) unless
 * its config says "write": true.  query runs exactly one statement that
 * sqlite3_stmt_readonly() calls read-only, whatever the database; execute
 * exists only when some database is writable.  ATTACH is disabled on every
 * connection (SQLITE_LIMIT_ATTACHED 0), so no statement reaches a file the
 * config did not name.
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/printbuf.h>
#include <sqlite3.h>

#include <mcpd.h>

#include "../common/base64.h"
#include "../common/plugin_config.h"
#include "../common/utf8.h"

#define SQ_DEFAULT_MAX_ROWS 1000
#define SQ_DEFAULT_TIMEOUT_MS 10000
#define SQ_DEFAULT_MAX_CELL_BYTES 65536
/* completion/complete sends at most 100 values (MCP's limit). */
#define SQ_COMPLETE_MAX 100
/* How many VM steps run between two looks at the clock and at the call's
 * cancellation: cheap, and well under a millisecond apart. */
#define SQ_PROGRESS_STEPS 1000
/* Tool calls running at once; more are refused rather than queued, since
 * each holds a thread. */
#define SQ_MAX_JOBS 64
/* Tables the explore_database prompt names. */
#define SQ_PROMPT_TABLES 50

struct sq_database {
  char *name;
  char *path; /* absolute */
  int write;
};

struct sq_job;

struct sq_state {
  const mcpd_host *host;
  mcpd_self *self;
  struct sq_database *dbs;
  size_t n_dbs;
  size_t max_rows;
  long long timeout_ms;
  size_t max_cell_bytes;
  /* Guards `jobs` and `n_jobs`. */
  pthread_mutex_t lock;
  struct sq_job *jobs;
  size_t n_jobs;
};

/* One connection, for one call.  `lock` guards `db` and `cancelled`
 * against on_cancel, which runs on the loop thread. */
struct sq_conn {
  const struct sq_state *st;
  const struct sq_database *database;
  const mcpd_host *host;
  mcpd_call *call;
  pthread_mutex_t lock;
  sqlite3 *db;
  int cancelled;
  long long deadline_ms; /* monotonic; the progress handler stops past it */
  int timed_out;
  int create; /* at init only: a writable database may be created */
};

/* sqlite3_mprintf() is SQLite's printf: its %z frees a string, so sizes
 * are passed to it as unsigned long long, never with %zu. */

/* --- small helpers ------------------------------------------------------- */

static long long now_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *arg_string(json_object *args, const char *key) {
  json_object *v;

  return json_object_object_get_ex(args, key, &v) &&
                 json_object_is_type(v, json_type_string)
             ? json_object_get_string(v)
             : NULL;
}

static const struct sq_database *find_database(const struct sq_state *st,
                                               const char *name) {
  for (size_t i = 0; name != NULL && i < st->n_dbs; i++)
    if (strcmp(st->dbs[i].name, name) == 0)
      return &st->dbs[i];
  return NULL;
}

/* "main, logs" into a printbuf, for messages that say what exists. */
static void append_names(struct printbuf *pb, const struct sq_state *st) {
  for (size_t i = 0; i < st->n_dbs; i++)
    sprintbuf(pb, "%s%s", i ? ", " : "", st->dbs[i].name);
  if (st->n_dbs == 0)
    sprintbuf(pb, "none (configure plugins.sqlite.databases)");
}

/* Answers -32602 for a database name the config does not know. */
static int fail_unknown(mcpd_call *call, const struct sq_state *st,
                        const char *name) {
  struct printbuf *pb = printbuf_new();
  int rc;

  if (pb != NULL)
    append_names(pb, st);
  rc = st->host->fail(call, MCPD_ERR_INVALID_PARAMS,
                      "unknown database \"%s\"; this server has: %s",
                      name ? name : "", pb ? pb->buf : "?");
  printbuf_free(pb);
  return rc;
}

/* --- connections --------------------------------------------------------- */

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
static void cancel_cb(void *arg) {
  struct sq_conn *c = arg;

  pthread_mutex_lock(&c->lock);
  c->cancelled = 1;
  if (c->db != NULL)
    sqlite3_interrupt(c->db);
  pthread_mutex_unlock(&c->lock);
}

/* Opens `database` for one call into *c (whose lock is initialised).
 * Returns SQLITE_OK or a code with *error from sqlite3_mprintf. */
static int conn_open(struct sq_conn *c, char **error) {
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

static void conn_close(struct sq_conn *c) {
  sqlite3 *db;

  pthread_mutex_lock(&c->lock);
  db = c->db;
  c->db = NULL;
  pthread_mutex_unlock(&c->lock);
  sqlite3_close_v2(db);
}

/* Why a statement failed, for the model: the time limit, the client's
 * cancellation, or SQLite's own message. */
static char *conn_error(struct sq_conn *c) {
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
static int prepare_one(struct sq_conn *c, const char *sql, sqlite3_stmt **out,
                       char **error) {
  sqlite3_stmt *stmt = NULL, *next = NULL;
  const char *tail = NULL;
  int rc;

  *out = NULL;
  rc = sqlite3_prepare_v2(c->db, sql, -1, &stmt, &tail);
  if (rc != SQLITE_OK) {
    *error = conn_error(c);
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
static int bind_params(sqlite3_stmt *stmt, json_object *params, char **error) {
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

/* Column `i` of the current row as JSON; text and blobs longer than
 * max_cell_bytes are cut (*cut set).  Text goes to `text` as well. */
static json_object *cell_json(const struct sq_state *st, sqlite3_stmt *stmt,
                              int i, struct printbuf *text, int *cut) {
  switch (sqlite3_column_type(stmt, i)) {
  case SQLITE_INTEGER: {
    sqlite3_int64 v = sqlite3_column_int64(stmt, i);
    sprintbuf(text, "%lld", (long long)v);
    return json_object_new_int64(v);
  }
  case SQLITE_FLOAT: {
    double v = sqlite3_column_double(stmt, i);
    /* JSON has no infinities: say them as text. */
    if (!isfinite(v)) {
      const char *s = v > 0 ? "Infinity" : "-Infinity";
      sprintbuf(text, "%s", s);
      return json_object_new_string(s);
    }
    {
      char num[32];
      snprintf(num, sizeof(num), "%.15g", v);
      if (strtod(num, NULL) != v)
        snprintf(num, sizeof(num), "%.17g", v);
      sprintbuf(text, "%s", num);
    }
    return json_object_new_double(v);
  }
  case SQLITE_TEXT: {
    const unsigned char *s = sqlite3_column_text(stmt, i);
    size_t n = (size_t)sqlite3_column_bytes(stmt, i);
    if (n > st->max_cell_bytes) {
      n = pc_utf8_cut_loose((const char *)s, st->max_cell_bytes);
      (*cut)++;
    }
    printbuf_memappend(text, (const char *)s, (int)n);
    return json_object_new_string_len((const char *)s, (int)n);
  }
  case SQLITE_BLOB: {
    const unsigned char *p = sqlite3_column_blob(stmt, i);
    size_t n = (size_t)sqlite3_column_bytes(stmt, i), shown = n;
    json_object *o = json_object_new_object();
    char *b64;
    if (shown > st->max_cell_bytes) {
      shown = st->max_cell_bytes;
      (*cut)++;
    }
    b64 = pc_base64_encode(p ? p : (const unsigned char *)"", shown);
    json_object_object_add(o, "base64", json_object_new_string(b64 ? b64 : ""));
    json_object_object_add(o, "bytes", json_object_new_int64((int64_t)n));
    free(b64);
    sprintbuf(text, "<blob, %zu bytes>", n);
    return o;
  }
  default:
    sprintbuf(text, "NULL");
    return NULL;
  }
}

/* --- the jobs tools run in ----------------------------------------------- */

struct sq_job;
typedef int (*sq_tool_run)(struct sq_job *j);

/* What a tool entry's `data` points at. */
struct sq_tool_kind {
  sq_tool_run run;
  int writes;            /* execute: the database must be writable */
  int database_optional; /* list_tables: none lists the databases */
};

struct sq_job {
  struct sq_state *st;
  const struct sq_tool_kind *kind;
  json_object *arguments; /* the call's own copy, valid until complete() */
  struct sq_conn conn;
  pthread_t thread;
  int done; /* guarded by st->lock */
  struct sq_job *next;
};

static void *job_main(void *arg) {
  struct sq_job *j = arg;
  struct sq_state *st = j->st;
  int rc;

  rc = j->kind->run(j);
  conn_close(&j->conn);
  /* Waits for a cancel_cb that may be running, so `j` outlives it. */
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
static void reap(struct sq_state *st, int all) {
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
static int tool_start(mcpd_call *call, const mcpd_request *req) {
  struct sq_state *st = req->state;
  const mcpd_host *host = req->host;
  const struct sq_tool_kind *kind = req->data;
  const char *name = arg_string(req->arguments, "database");
  const struct sq_database *d = find_database(st, name);
  struct sq_job *j;
  size_t running;

  reap(st, 0);
  if (d == NULL && !(name == NULL && kind->database_optional)) {
    fail_unknown(call, st, name);
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
  host->on_cancel(call, cancel_cb, &j->conn);
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
static int job_open(struct sq_job *j) {
  char *error = NULL;

  if (conn_open(&j->conn, &error) == SQLITE_OK)
    return 1;
  j->st->host->result_error(j->conn.call, "%s", error ? error : "no memory");
  sqlite3_free(error);
  return 0;
}

/* Ends a tool with SQLite's (or our) message as an isError result. */
static int job_error(struct sq_job *j, char *error) {
  j->st->host->result_error(j->conn.call, "%s",
                            error ? error : "out of memory");
  sqlite3_free(error);
  return MCPD_OK;
}

/* --- list_tables ---------------------------------------------------------- */

static const char tables_sql[] = "SELECT name, type FROM sqlite_schema "
                                 "WHERE type IN ('table', 'view') AND name NOT "
                                 "LIKE 'sqlite\\_%' ESCAPE '\\' "
                                 "ORDER BY name";

/* Without a database: the configured databases, so a model can find
 * them. */
static int list_databases(struct sq_job *j) {
  const struct sq_state *st = j->st;
  json_object *out = json_object_new_object(), *arr = json_object_new_array();
  struct printbuf *pb = printbuf_new();
  int rc;

  for (size_t i = 0; i < st->n_dbs; i++) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(st->dbs[i].name));
    json_object_object_add(o, "writable",
                           json_object_new_boolean(st->dbs[i].write));
    json_object_array_add(arr, o);
    sprintbuf(pb, "%s (%s)\n", st->dbs[i].name,
              st->dbs[i].write ? "writable" : "read-only");
  }
  if (st->n_dbs == 0)
    sprintbuf(pb, "No databases are configured: add them under "
                  "plugins.sqlite.databases in mcpd's --config file.\n");
  json_object_object_add(out, "databases", arr);
  st->host->result_text(j->conn.call, pb->buf);
  printbuf_free(pb);
  rc = st->host->result_structured(j->conn.call, out);
  return rc;
}

static int run_list_tables(struct sq_job *j) {
  const mcpd_host *host = j->st->host;
  sqlite3_stmt *stmt = NULL;
  json_object *out, *tables;
  struct printbuf *pb;
  int rc, n = 0;

  if (j->conn.database == NULL)
    return list_databases(j);
  if (!job_open(j))
    return MCPD_OK;
  if (sqlite3_prepare_v2(j->conn.db, tables_sql, -1, &stmt, NULL) != SQLITE_OK)
    return job_error(j, conn_error(&j->conn));
  out = json_object_new_object();
  tables = json_object_new_array();
  pb = printbuf_new();
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    json_object *t = json_object_new_object();
    const char *name = (const char *)sqlite3_column_text(stmt, 0);
    const char *type = (const char *)sqlite3_column_text(stmt, 1);

    json_object_object_add(t, "name", json_object_new_string(name));
    json_object_object_add(t, "type", json_object_new_string(type));
    json_object_array_add(tables, t);
    sprintbuf(pb, "%s (%s)\n", name, type);
    n++;
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) {
    json_object_put(out);
    json_object_put(tables);
    printbuf_free(pb);
    return job_error(j, conn_error(&j->conn));
  }
  if (n == 0)
    sprintbuf(pb, "Database \"%s\" has no tables or views.\n",
              j->conn.database->name);
  json_object_object_add(out, "database",
                         json_object_new_string(j->conn.database->name));
  json_object_object_add(out, "tables", tables);
  host->result_text(j->conn.call, pb->buf);
  printbuf_free(pb);
  return host->result_structured(j->conn.call, out);
}

/* --- describe_table ------------------------------------------------------- */

/* Runs `sql` with `arg` bound to ?1 and hands each row to `row`.  Returns
 * SQLITE_OK or an error (conn_error() says which). */
static int each_row(struct sq_conn *c, const char *sql, const char *arg,
                    void (*row)(sqlite3_stmt *stmt, void *ctx), void *ctx) {
  sqlite3_stmt *stmt = NULL;
  int rc;

  if ((rc = sqlite3_prepare_v2(c->db, sql, -1, &stmt, NULL)) != SQLITE_OK)
    return rc;
  sqlite3_bind_text(stmt, 1, arg, -1, SQLITE_TRANSIENT);
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
    row(stmt, ctx);
  sqlite3_finalize(stmt);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static json_object *column_string(sqlite3_stmt *stmt, int i) {
  const char *s = (const char *)sqlite3_column_text(stmt, i);
  return s ? json_object_new_string(s) : NULL;
}

struct describe {
  json_object *columns, *indexes, *foreign_keys;
  struct printbuf *text;
  struct sq_conn *conn;
  int fk_id; /* the id of the foreign key the last row belonged to */
};

static void column_row(sqlite3_stmt *stmt, void *ctx) {
  struct describe *d = ctx;
  json_object *o = json_object_new_object();
  const char *name = (const char *)sqlite3_column_text(stmt, 0);
  const char *type = (const char *)sqlite3_column_text(stmt, 1);
  const char *dflt = (const char *)sqlite3_column_text(stmt, 3);
  int not_null = sqlite3_column_int(stmt, 2), pk = sqlite3_column_int(stmt, 4);

  json_object_object_add(o, "name", json_object_new_string(name));
  json_object_object_add(o, "type", json_object_new_string(type ? type : ""));
  json_object_object_add(o, "notNull", json_object_new_boolean(not_null));
  json_object_object_add(o, "default", column_string(stmt, 3));
  json_object_object_add(o, "primaryKey", json_object_new_int(pk));
  json_object_array_add(d->columns, o);
  sprintbuf(d->text, "  %s %s%s%s%s%s\n", name, type && *type ? type : "(any)",
            pk ? " PRIMARY KEY" : "", not_null ? " NOT NULL" : "",
            dflt ? " DEFAULT " : "", dflt ? dflt : "");
}

static void index_column_row(sqlite3_stmt *stmt, void *ctx) {
  json_object *cols = ctx;
  const char *name = (const char *)sqlite3_column_text(stmt, 0);

  /* NULL: an expression, or the rowid. */
  json_object_array_add(cols, json_object_new_string(name ? name : "<expr>"));
}

static void index_row(sqlite3_stmt *stmt, void *ctx) {
  struct describe *d = ctx;
  json_object *o = json_object_new_object(), *cols = json_object_new_array();
  const char *name = (const char *)sqlite3_column_text(stmt, 0);
  const char *origin = (const char *)sqlite3_column_text(stmt, 2);
  int unique = sqlite3_column_int(stmt, 1);

  each_row(d->conn, "SELECT name FROM pragma_index_info(?1) ORDER BY seqno",
           name, index_column_row, cols);
  json_object_object_add(o, "name", json_object_new_string(name));
  json_object_object_add(o, "unique", json_object_new_boolean(unique));
  /* c: CREATE INDEX, u: UNIQUE, pk: PRIMARY KEY. */
  json_object_object_add(o, "origin", json_object_new_string(origin));
  json_object_object_add(o, "partial",
                         json_object_new_boolean(sqlite3_column_int(stmt, 3)));
  json_object_object_add(o, "columns", cols);
  json_object_array_add(d->indexes, o);
}

static void indexes_text(struct describe *d) {
  for (size_t i = 0; i < json_object_array_length(d->indexes); i++) {
    json_object *o = json_object_array_get_idx(d->indexes, i);
    json_object *cols = json_object_object_get(o, "columns");

    sprintbuf(d->text, "  %s%s (",
              json_object_get_string(json_object_object_get(o, "name")),
              json_object_get_boolean(json_object_object_get(o, "unique"))
                  ? " UNIQUE"
                  : "");
    for (size_t k = 0; k < json_object_array_length(cols); k++)
      sprintbuf(d->text, "%s%s", k ? ", " : "",
                json_object_get_string(json_object_array_get_idx(cols, k)));
    sprintbuf(d->text, ")\n");
  }
}

/* pragma_foreign_key_list has a row per column; rows of one key share
 * its id and come together. */
static void foreign_key_row(sqlite3_stmt *stmt, void *ctx) {
  struct describe *d = ctx;
  int id = sqlite3_column_int(stmt, 0);
  size_t n = json_object_array_length(d->foreign_keys);
  json_object *o, *from, *to;

  if (n == 0 || id != d->fk_id) {
    o = json_object_new_object();
    json_object_object_add(o, "table", column_string(stmt, 1));
    json_object_object_add(o, "from", json_object_new_array());
    json_object_object_add(o, "to", json_object_new_array());
    json_object_object_add(o, "onUpdate", column_string(stmt, 4));
    json_object_object_add(o, "onDelete", column_string(stmt, 5));
    json_object_array_add(d->foreign_keys, o);
    d->fk_id = id;
  } else {
    o = json_object_array_get_idx(d->foreign_keys, n - 1);
  }
  from = json_object_object_get(o, "from");
  to = json_object_object_get(o, "to");
  json_object_array_add(from, column_string(stmt, 2));
  /* NULL `to`: the referenced table's primary key. */
  json_object_array_add(to, column_string(stmt, 3));
}

static void foreign_keys_text(struct describe *d) {
  for (size_t i = 0; i < json_object_array_length(d->foreign_keys); i++) {
    json_object *o = json_object_array_get_idx(d->foreign_keys, i);
    json_object *from = json_object_object_get(o, "from");
    json_object *to = json_object_object_get(o, "to");

    sprintbuf(d->text, "  (");
    for (size_t k = 0; k < json_object_array_length(from); k++)
      sprintbuf(d->text, "%s%s", k ? ", " : "",
                json_object_get_string(json_object_array_get_idx(from, k)));
    sprintbuf(d->text, ") REFERENCES %s (",
              json_object_get_string(json_object_object_get(o, "table")));
    for (size_t k = 0; k < json_object_array_length(to); k++) {
      json_object *t = json_object_array_get_idx(to, k);
      sprintbuf(d->text, "%s%s", k ? ", " : "",
                t ? json_object_get_string(t) : "<primary key>");
    }
    sprintbuf(d->text, ") ON UPDATE %s ON DELETE %s\n",
              json_object_get_string(json_object_object_get(o, "onUpdate")),
              json_object_get_string(json_object_object_get(o, "onDelete")));
  }
}

static int run_describe_table(struct sq_job *j) {
  const mcpd_host *host = j->st->host;
  const char *asked = arg_string(j->arguments, "table");
  struct describe d = {.conn = &j->conn};
  sqlite3_stmt *stmt = NULL;
  json_object *out = NULL;
  char *name = NULL, *type = NULL, *sql = NULL;
  int rc;

  if (!job_open(j))
    return MCPD_OK;
  /* Names are case-insensitive in SQL: find the stored spelling. */
  rc = sqlite3_prepare_v2(j->conn.db,
                          "SELECT name, type, sql FROM sqlite_schema "
                          "WHERE type IN ('table', 'view') "
                          "AND name = ?1 COLLATE NOCASE",
                          -1, &stmt, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(stmt, 1, asked, -1, SQLITE_STATIC);
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
      name = sqlite3_mprintf("%s", sqlite3_column_text(stmt, 0));
      type = sqlite3_mprintf("%s", sqlite3_column_text(stmt, 1));
      sql = sqlite3_mprintf("%s", sqlite3_column_text(stmt, 2));
      rc = SQLITE_OK;
    }
  }
  sqlite3_finalize(stmt);
  if (rc == SQLITE_DONE) {
    host->result_error(j->conn.call,
                       "no table or view named \"%s\" in database \"%s\"; "
                       "list_tables shows them",
                       asked, j->conn.database->name);
    goto out;
  }
  if (rc != SQLITE_OK) {
    job_error(j, conn_error(&j->conn));
    goto out;
  }
  d.columns = json_object_new_array();
  d.indexes = json_object_new_array();
  d.foreign_keys = json_object_new_array();
  d.text = printbuf_new();
  sprintbuf(d.text, "%s %s (database %s)\ncolumns:\n", type, name,
            j->conn.database->name);
  rc = each_row(&j->conn,
                "SELECT name, type, \"notnull\", dflt_value, pk "
                "FROM pragma_table_info(?1) ORDER BY cid",
                name, column_row, &d);
  if (rc == SQLITE_OK)
    rc = each_row(&j->conn,
                  "SELECT name, \"unique\", origin, partial "
                  "FROM pragma_index_list(?1) ORDER BY name",
                  name, index_row, &d);
  if (rc == SQLITE_OK)
    rc = each_row(&j->conn,
                  "SELECT id, \"table\", \"from\", \"to\", on_update, "
                  "on_delete FROM pragma_foreign_key_list(?1) "
                  "ORDER BY id, seq",
                  name, foreign_key_row, &d);
  if (rc != SQLITE_OK) {
    json_object_put(d.columns);
    json_object_put(d.indexes);
    json_object_put(d.foreign_keys);
    job_error(j, conn_error(&j->conn));
    goto out;
  }
  if (json_object_array_length(d.indexes) > 0) {
    sprintbuf(d.text, "indexes:\n");
    indexes_text(&d);
  }
  if (json_object_array_length(d.foreign_keys) > 0) {
    sprintbuf(d.text, "foreign keys:\n");
    foreign_keys_text(&d);
  }
  sprintbuf(d.text, "sql:\n%s\n", sql);
  out = json_object_new_object();
  json_object_object_add(out, "database",
                         json_object_new_string(j->conn.database->name));
  json_object_object_add(out, "table", json_object_new_string(name));
  json_object_object_add(out, "type", json_object_new_string(type));
  json_object_object_add(out, "columns", d.columns);
  json_object_object_add(out, "indexes", d.indexes);
  json_object_object_add(out, "foreignKeys", d.foreign_keys);
  json_object_object_add(out, "sql", json_object_new_string(sql));
  host->result_text(j->conn.call, d.text->buf);
  host->result_structured(j->conn.call, out);
out:
  printbuf_free(d.text);
  sqlite3_free(name);
  sqlite3_free(type);
  sqlite3_free(sql);
  return MCPD_OK;
}

/* --- query ---------------------------------------------------------------- */

static int run_query(struct sq_job *j) {
  const struct sq_state *st = j->st;
  const mcpd_host *host = st->host;
  const char *sql = arg_string(j->arguments, "sql");
  json_object *params = json_object_object_get(j->arguments, "params");
  json_object *out, *columns, *rows;
  struct printbuf *text;
  sqlite3_stmt *stmt = NULL;
  char *error = NULL;
  size_t n_rows = 0;
  int n_cols, rc, truncated = 0, cut = 0;

  if (!job_open(j))
    return MCPD_OK;
  if (prepare_one(&j->conn, sql, &stmt, &error) != SQLITE_OK)
    return job_error(j, error);
  if (!sqlite3_stmt_readonly(stmt)) {
    sqlite3_finalize(stmt);
    return job_error(
        j, sqlite3_mprintf("query runs only statements that read (SELECT, "
                           "WITH ... SELECT, read-only PRAGMAs, EXPLAIN); "
                           "this one would change the database%s",
                           j->conn.database->write ? ": use execute"
                                                   : ", which is read-only"));
  }
  if (bind_params(stmt, params, &error) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return job_error(j, error);
  }
  out = json_object_new_object();
  columns = json_object_new_array();
  rows = json_object_new_array();
  text = printbuf_new();
  n_cols = sqlite3_column_count(stmt);
  for (int i = 0; i < n_cols; i++) {
    const char *name = sqlite3_column_name(stmt, i);
    json_object_array_add(columns, json_object_new_string(name ? name : ""));
    sprintbuf(text, "%s%s", i ? " | " : "", name ? name : "");
  }
  sprintbuf(text, "\n");
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    json_object *row;

    if (n_rows == st->max_rows) {
      truncated = 1;
      break;
    }
    row = json_object_new_array_ext(n_cols);
    for (int i = 0; i < n_cols; i++) {
      if (i)
        sprintbuf(text, " | ");
      json_object_array_add(row, cell_json(st, stmt, i, text, &cut));
    }
    sprintbuf(text, "\n");
    json_object_array_add(rows, row);
    n_rows++;
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    error = conn_error(&j->conn);
    sqlite3_finalize(stmt);
    json_object_put(out);
    json_object_put(columns);
    json_object_put(rows);
    printbuf_free(text);
    return job_error(j, error);
  }
  sqlite3_finalize(stmt);
  if (truncated)
    sprintbuf(text,
              "(the first %zu rows; more were left out at maxRows: narrow "
              "the query or add LIMIT/OFFSET)\n",
              n_rows);
  else
    sprintbuf(text, "(%zu row%s)\n", n_rows, n_rows == 1 ? "" : "s");
  if (cut)
    sprintbuf(text, "(%d value%s cut at maxCellBytes, %zu bytes)\n", cut,
              cut == 1 ? "" : "s", st->max_cell_bytes);
  json_object_object_add(out, "columns", columns);
  json_object_object_add(out, "rows", rows);
  json_object_object_add(out, "truncated", json_object_new_boolean(truncated));
  if (cut)
    json_object_object_add(out, "cellsCut", json_object_new_int(cut));
  host->result_text(j->conn.call, text->buf);
  printbuf_free(text);
  return host->result_structured(j->conn.call, out);
}

/* --- execute -------------------------------------------------------------- */

static const char confirm_schema[] =
    "{\"type\":\"object\",\"properties\":{\"confirm\":{\"type\":\"boolean\","
    "\"title\":\"Run this statement\"}},\"required\":[\"confirm\"]}";

/* The most of a statement the confirmation shows. */
#define SQ_CONFIRM_SQL_MAX 2000

enum { ASK_YES, ASK_NO, ASK_CANNOT, ASK_FAILED };

/* Asks the user to confirm a change through elicitation.  ASK_CANNOT when
 * the client declared no elicitation; ASK_FAILED (with *why) when asking
 * failed otherwise (an error, no answer in time, the call cancelled). */
static int ask_user(struct sq_job *j, const char *sql, json_object *params,
                    char **why) {
  const mcpd_host *host = j->st->host;
  const struct sq_database *d = j->conn.database;
  json_object *request = json_object_new_object(), *answer = NULL, *v;
  json_object *content;
  char *message, *error = NULL;
  size_t len = strlen(sql);
  int rc;

  message = host->mprintf(
      "Run this statement on the SQLite database \"%s\" (%s)?\n\n%.*s%s%s%s",
      d->name, d->path,
      (int)(len > SQ_CONFIRM_SQL_MAX ? SQ_CONFIRM_SQL_MAX : len), sql,
      len > SQ_CONFIRM_SQL_MAX ? " [...]" : "",
      params ? "\n\nwith the values " : "",
      params ? json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN)
             : "");
  json_object_object_add(request, "message",
                         json_object_new_string(message ? message : sql));
  json_object_object_add(request, "requestedSchema",
                         json_tokener_parse(confirm_schema));
  host->free(message);
  if (host->client_request_wait(j->conn.call, "elicitation/create", request,
                                &answer, &error) != MCPD_OK) {
    /* Refused at once, nothing sent: the client cannot elicit. */
    rc = error && strstr(error, "did not declare") ? ASK_CANNOT : ASK_FAILED;
    if (rc == ASK_FAILED)
      *why = sqlite3_mprintf("%s", error ? error : host->last_error());
    host->free(error);
    return rc;
  }
  rc = json_object_object_get_ex(answer, "action", &v) &&
               strcmp(json_object_get_string(v), "accept") == 0 &&
               json_object_object_get_ex(answer, "content", &content) &&
               json_object_object_get_ex(content, "confirm", &v) &&
               json_object_is_type(v, json_type_boolean) &&
               json_object_get_boolean(v)
           ? ASK_YES
           : ASK_NO;
  json_object_put(answer);
  return rc;
}

static int run_execute(struct sq_job *j) {
  const mcpd_host *host = j->st->host;
  const char *sql = arg_string(j->arguments, "sql");
  json_object *params = json_object_object_get(j->arguments, "params");
  json_object *out;
  sqlite3_stmt *stmt = NULL;
  char *error = NULL;
  int rc, asked = ASK_YES, changes = 0;
  sqlite3_int64 rowid = 0;

  if (!job_open(j))
    return MCPD_OK;
  if (prepare_one(&j->conn, sql, &stmt, &error) != SQLITE_OK ||
      bind_params(stmt, params, &error) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return job_error(j, error);
  }
  if (!sqlite3_stmt_readonly(stmt)) {
    asked = ask_user(j, sql, params, &error);
    if (asked == ASK_FAILED || asked == ASK_NO) {
      sqlite3_finalize(stmt);
      if (asked == ASK_FAILED)
        return job_error(
            j, sqlite3_mprintf("not run: asking the user to confirm failed: "
                               "%s",
                               error ? error : "?"));
      out = json_object_new_object();
      json_object_object_add(out, "executed", json_object_new_boolean(0));
      json_object_object_add(out, "changes", json_object_new_int(0));
      json_object_object_add(out, "lastInsertRowid", NULL);
      host->result_text(j->conn.call, "Not run: the user did not confirm it.");
      return host->result_structured(j->conn.call, out);
    }
    /* The user's time to answer does not count against the statement. */
    j->conn.deadline_ms = now_ms() + j->st->timeout_ms;
  }
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
    continue; /* rows of RETURNING and the like are not reported */
  if (rc != SQLITE_DONE) {
    error = conn_error(&j->conn);
    sqlite3_finalize(stmt);
    return job_error(j, error);
  }
  sqlite3_finalize(stmt);
  changes = sqlite3_changes(j->conn.db);
  rowid = sqlite3_last_insert_rowid(j->conn.db);
  out = json_object_new_object();
  json_object_object_add(out, "executed", json_object_new_boolean(1));
  json_object_object_add(out, "changes", json_object_new_int(changes));
  json_object_object_add(out, "lastInsertRowid",
                         json_object_new_int64((int64_t)rowid));
  host->result_textf(j->conn.call,
                     "Done: %d row%s changed; last insert rowid "
                     "%lld.%s",
                     changes, changes == 1 ? "" : "s", (long long)rowid,
                     asked == ASK_CANNOT
                         ? " (The client cannot ask its user, so the "
                           "statement ran without confirmation.)"
                         : "");
  return host->result_structured(j->conn.call, out);
}

/* --- resources ------------------------------------------------------------ */

/* Opens a connection for a read, a prompt or a completion (on the pool; no
 * on_cancel, the progress handler looks at cancelled()), or, with no call
 * and `create`, for the check at init. */
static int pool_open(struct sq_conn *c, const struct sq_state *st,
                     const struct sq_database *d, mcpd_call *call, int create,
                     char **error) {
  memset(c, 0, sizeof(*c));
  c->create = create;
  c->st = st;
  c->database = d;
  c->host = st->host;
  c->call = call;
  pthread_mutex_init(&c->lock, NULL);
  if (conn_open(c, error) == SQLITE_OK)
    return 1;
  pthread_mutex_destroy(&c->lock);
  return 0;
}

static void pool_close(struct sq_conn *c) {
  conn_close(c);
  pthread_mutex_destroy(&c->lock);
}

/* Appends the CREATE statements `sql` selects (with ?1 bound to `arg`,
 * when given) to `pb`, each ending in ";".  *main counts the rows whose
 * second column is 1. */
static int append_schema(struct sq_conn *c, const char *sql, const char *arg,
                         struct printbuf *pb, int *main) {
  sqlite3_stmt *stmt = NULL;
  int rc;

  if ((rc = sqlite3_prepare_v2(c->db, sql, -1, &stmt, NULL)) != SQLITE_OK)
    return rc;
  if (arg != NULL)
    sqlite3_bind_text(stmt, 1, arg, -1, SQLITE_TRANSIENT);
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    sprintbuf(pb, "%s;\n", sqlite3_column_text(stmt, 0));
    *main += sqlite3_column_int(stmt, 1);
  }
  sqlite3_finalize(stmt);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* sqlite://NAME/schema: every CREATE statement, in creation order (which
 * is an order they can run in). */
static int read_schema(mcpd_call *call, const mcpd_request *req) {
  const struct sq_state *st = req->state;
  const struct sq_database *d = req->data;
  struct printbuf *pb;
  struct sq_conn c;
  char *error = NULL;
  int rc, n = 0;

  if (!pool_open(&c, st, d, call, 0, &error)) {
    rc = req->host->fail(call, MCPD_ERR_INTERNAL, "%s", error);
    sqlite3_free(error);
    return rc;
  }
  pb = printbuf_new();
  rc =
      append_schema(&c,
                    "SELECT sql, 1 FROM sqlite_schema WHERE sql IS NOT NULL "
                    "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid",
                    NULL, pb, &n);
  if (rc != SQLITE_OK) {
    error = conn_error(&c);
    rc = req->host->fail(call, MCPD_ERR_INTERNAL, "%s", error);
    sqlite3_free(error);
  } else {
    if (n == 0)
      sprintbuf(pb, "-- database \"%s\" has no tables yet\n", d->name);
    rc = req->host->result_text(call, pb->buf);
  }
  printbuf_free(pb);
  pool_close(&c);
  return rc;
}

/* sqlite://{database}/table/{table}/schema: the table's CREATE statement,
 * then those of its indexes and triggers. */
static int read_table_schema(mcpd_call *call, const mcpd_request *req) {
  const struct sq_state *st = req->state;
  const char *name = arg_string(req->variables, "database");
  const char *table = arg_string(req->variables, "table");
  const struct sq_database *d = find_database(st, name);
  struct printbuf *pb;
  struct sq_conn c;
  char *error = NULL;
  int rc, n = 0;

  if (d == NULL)
    return req->host->fail(call, MCPD_ERR_NOT_FOUND, "no database named %s",
                           name ? name : "");
  if (!pool_open(&c, st, d, call, 0, &error)) {
    rc = req->host->fail(call, MCPD_ERR_INTERNAL, "%s", error);
    sqlite3_free(error);
    return rc;
  }
  pb = printbuf_new();
  rc = append_schema(&c,
                     "SELECT sql, type IN ('table', 'view') FROM sqlite_schema "
                     "WHERE tbl_name = ?1 COLLATE NOCASE AND sql IS NOT NULL "
                     "ORDER BY type NOT IN ('table', 'view'), rowid",
                     table, pb, &n);
  if (rc != SQLITE_OK) {
    error = conn_error(&c);
    rc = req->host->fail(call, MCPD_ERR_INTERNAL, "%s", error);
    sqlite3_free(error);
  } else if (n == 0) {
    rc = req->host->fail(call, MCPD_ERR_NOT_FOUND,
                         "no table or view named %s in database %s", table,
                         d->name);
  } else {
    rc = req->host->result_text(call, pb->buf);
  }
  printbuf_free(pb);
  pool_close(&c);
  return rc;
}

/* --- completion ----------------------------------------------------------- */

static void complete_databases(mcpd_call *call, const struct sq_state *st,
                               const char *value) {
  size_t len = strlen(value);

  for (size_t i = 0; i < st->n_dbs; i++)
    if (strncmp(st->dbs[i].name, value, len) == 0)
      st->host->completion_value(call, st->dbs[i].name);
}

/* Table and view names of the database chosen in `context` that begin
 * with `value`, best first: in name order. */
static void complete_tables(mcpd_call *call, const struct sq_state *st,
                            json_object *context, const char *value) {
  const struct sq_database *d =
      find_database(st, arg_string(context, "database"));
  sqlite3_stmt *stmt = NULL;
  struct sq_conn c;
  char *error = NULL;
  size_t total = 0;

  if (d == NULL || !pool_open(&c, st, d, call, 0, &error)) {
    sqlite3_free(error);
    return; /* no database chosen (yet): nothing to offer */
  }
  if (sqlite3_prepare_v2(c.db,
                         "SELECT name FROM sqlite_schema "
                         "WHERE type IN ('table', 'view') "
                         "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                         "AND substr(name, 1, length(?1)) = ?1 ORDER BY name",
                         -1, &stmt, NULL) == SQLITE_OK) {
    sqlite3_bind_text(stmt, 1, value, -1, SQLITE_STATIC);
    while (sqlite3_step(stmt) == SQLITE_ROW)
      if (total++ < SQ_COMPLETE_MAX)
        st->host->completion_value(call,
                                   (const char *)sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  if (total > SQ_COMPLETE_MAX)
    st->host->completion_total(call, total, 1);
  pool_close(&c);
}

static int complete_cb(mcpd_call *call, const mcpd_request *req,
                       const char *argument, const char *value,
                       json_object *context) {
  if (strcmp(argument, "database") == 0)
    complete_databases(call, req->state, value);
  else if (strcmp(argument, "table") == 0)
    complete_tables(call, req->state, context, value);
  return MCPD_OK;
}

/* --- the explore_database prompt ------------------------------------------ */

static int get_explore(mcpd_call *call, const mcpd_request *req) {
  const struct sq_state *st = req->state;
  const mcpd_host *host = req->host;
  const char *name = arg_string(req->arguments, "database");
  const struct sq_database *d = find_database(st, name);
  sqlite3_stmt *stmt = NULL;
  struct printbuf *pb;
  struct sq_conn c;
  char *error = NULL;
  int rc, n = 0;

  if (d == NULL)
    return fail_unknown(call, st, name);
  if (!pool_open(&c, st, d, call, 0, &error)) {
    rc = host->fail(call, MCPD_ERR_INTERNAL, "%s", error);
    sqlite3_free(error);
    return rc;
  }
  pb = printbuf_new();
  sprintbuf(pb,
            "Explore the SQLite database \"%s\" through this server's tools "
            "and tell me what it holds.\n\n",
            d->name);
  if (sqlite3_prepare_v2(c.db, tables_sql, -1, &stmt, NULL) == SQLITE_OK) {
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      if (n < SQ_PROMPT_TABLES)
        sprintbuf(pb, "%s %s (%s)", n ? "," : "Its tables and views:",
                  sqlite3_column_text(stmt, 0), sqlite3_column_text(stmt, 1));
      n++;
    }
  }
  sqlite3_finalize(stmt);
  pool_close(&c);
  if (n > SQ_PROMPT_TABLES)
    sprintbuf(pb, ", and %d more (list_tables shows them all)",
              n - SQ_PROMPT_TABLES);
  sprintbuf(pb, n ? ".\n\n" : "It has no tables yet.\n\n");
  sprintbuf(
      pb,
      "1. Call list_tables {\"database\": \"%s\"} if you need the full list.\n"
      "2. Call describe_table for the tables that look central: note the "
      "primary keys, the foreign keys that link tables, and the indexes.\n"
      "3. Sample each interesting table with query, always with a LIMIT, "
      "e.g. SELECT * FROM \"t\" LIMIT 5, and count rows with SELECT count(*) "
      "before you read a large table.\n"
      "4. Put values in \"params\" (? placeholders), never into the SQL "
      "text.\n"
      "5. Follow the foreign keys with JOINs to see how the tables relate.\n"
      "Queries are limited to %zu rows and %lld ms each; query runs one "
      "read-only statement per call.%s\n\n"
      "Finish with a short summary: what the database is for, its main "
      "entities and how they relate, and anything surprising in the data.",
      d->name, st->max_rows, st->timeout_ms,
      d->write ? " The database is writable through execute, which asks the "
                 "user first; do not change anything unless asked to."
               : " The database is read-only.");
  rc = host->result_text(call, pb->buf);
  printbuf_free(pb);
  return rc;
}

/* --- tables --------------------------------------------------------------- */

static const struct sq_tool_kind list_tables_kind = {.run = run_list_tables,
                                                     .database_optional = 1};
static const struct sq_tool_kind describe_kind = {.run = run_describe_table};
static const struct sq_tool_kind query_kind = {.run = run_query};
static const struct sq_tool_kind execute_kind = {.run = run_execute,
                                                 .writes = 1};

#define SQ_DATABASE_ARG                                                        \
  "\"database\":{\"type\":\"string\",\"description\":\"A database name "       \
  "from this server's config; list_tables without it lists them.\"}"
#define SQ_PARAMS_ARG                                                          \
  "\"params\":{\"type\":\"array\",\"description\":\"Values for the "           \
  "statement's parameters (?, ?NNN, :name, @name, $name), in order.\","        \
  "\"items\":{\"type\":[\"string\",\"number\",\"integer\",\"boolean\","        \
  "\"null\"]}}"

static const mcpd_tool tools[] = {
    {.name = "list_tables",
     .title = "List tables",
     .description = "Lists the tables and views of a SQLite database.  Without "
                    "\"database\", lists the databases this server serves.",
     .input_schema =
         "{\"type\":\"object\",\"properties\":{" SQ_DATABASE_ARG "}}",
     .output_schema =
         "{\"type\":\"object\",\"properties\":{\"database\":{\"type\":"
         "\"string\"},\"tables\":{\"type\":\"array\",\"items\":{\"type\":"
         "\"object\",\"required\":[\"name\",\"type\"],\"properties\":{"
         "\"name\":{\"type\":\"string\"},\"type\":{\"type\":\"string\"}}}},"
         "\"databases\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
         "\"required\":[\"name\",\"writable\"],\"properties\":{\"name\":{"
         "\"type\":\"string\"},\"writable\":{\"type\":\"boolean\"}}}}}}",
     .call = tool_start,
     .exec = MCPD_EXEC_ASYNC,
     .read_only_hint = MCPD_HINT_TRUE,
     .open_world_hint = MCPD_HINT_FALSE,
     .data = (void *)&list_tables_kind},
    {.name = "describe_table",
     .title = "Describe a table",
     .description =
         "Describes a table or view: its columns (type, primary key, NOT "
         "NULL, default), indexes, foreign keys and CREATE statement.",
     .input_schema =
         "{\"type\":\"object\",\"required\":[\"database\",\"table\"],"
         "\"properties\":{" SQ_DATABASE_ARG
         ",\"table\":{\"type\":\"string\"}}}",
     .output_schema =
         "{\"type\":\"object\",\"required\":[\"database\",\"table\",\"type\","
         "\"columns\",\"indexes\",\"foreignKeys\",\"sql\"],\"properties\":{"
         "\"database\":{\"type\":\"string\"},\"table\":{\"type\":\"string\"},"
         "\"type\":{\"type\":\"string\"},\"columns\":{\"type\":\"array\","
         "\"items\":{\"type\":\"object\",\"required\":[\"name\",\"type\","
         "\"notNull\",\"primaryKey\"],\"properties\":{\"name\":{\"type\":"
         "\"string\"},\"type\":{\"type\":\"string\"},\"notNull\":{\"type\":"
         "\"boolean\"},\"default\":{\"type\":[\"string\",\"null\"]},"
         "\"primaryKey\":{\"type\":\"integer\"}}}},\"indexes\":{\"type\":"
         "\"array\"},\"foreignKeys\":{\"type\":\"array\"},\"sql\":{\"type\":"
         "\"string\"}}}",
     .call = tool_start,
     .exec = MCPD_EXEC_ASYNC,
     .read_only_hint = MCPD_HINT_TRUE,
     .open_world_hint = MCPD_HINT_FALSE,
     .data = (void *)&describe_kind},
    {.name = "query",
     .title = "Run a read-only query",
     .description =
         "Runs one read-only SQL statement (SELECT, WITH, read-only PRAGMA, "
         "EXPLAIN) with bound parameters and returns its rows, at most "
         "maxRows of them (\"truncated\": true when more exist).",
     .input_schema =
         "{\"type\":\"object\",\"required\":[\"database\",\"sql\"],"
         "\"properties\":{" SQ_DATABASE_ARG ",\"sql\":{\"type\":\"string\","
         "\"description\":\"One statement; use ? for values.\"}," SQ_PARAMS_ARG
         "}}",
     .output_schema =
         "{\"type\":\"object\",\"required\":[\"columns\",\"rows\","
         "\"truncated\"],\"properties\":{\"columns\":{\"type\":\"array\","
         "\"items\":{\"type\":\"string\"}},\"rows\":{\"type\":\"array\","
         "\"items\":{\"type\":\"array\"}},\"truncated\":{\"type\":"
         "\"boolean\"},\"cellsCut\":{\"type\":\"integer\"}}}",
     .call = tool_start,
     .exec = MCPD_EXEC_ASYNC,
     .read_only_hint = MCPD_HINT_TRUE,
     .open_world_hint = MCPD_HINT_FALSE,
     .data = (void *)&query_kind},
    MCPD_TOOL_END,
};

/* Offered by init() only when some database is writable. */
static const mcpd_tool execute_tool = {
    .name = "execute",
    .title = "Change a database",
    .description =
        "Runs one SQL statement that may change a writable database "
        "(INSERT, UPDATE, DELETE, CREATE, ...) with bound parameters, "
        "after the user confirms when the client can ask; returns the "
        "number of rows changed and the last inserted rowid.",
    .input_schema = "{\"type\":\"object\",\"required\":[\"database\",\"sql\"],"
                    "\"properties\":{" SQ_DATABASE_ARG
                    ",\"sql\":{\"type\":\"string\"}," SQ_PARAMS_ARG "}}",
    .output_schema =
        "{\"type\":\"object\",\"required\":[\"executed\",\"changes\","
        "\"lastInsertRowid\"],\"properties\":{\"executed\":{\"type\":"
        "\"boolean\"},\"changes\":{\"type\":\"integer\"},\"lastInsertRowid\":"
        "{\"type\":[\"integer\",\"null\"]}}}",
    .call = tool_start,
    .exec = MCPD_EXEC_ASYNC,
    .destructive_hint = MCPD_HINT_TRUE,
    .open_world_hint = MCPD_HINT_FALSE,
    .data = (void *)&execute_kind,
};

static const mcpd_resource_template templates[] = {
    {.uri_template = "sqlite://{database}/table/{table}/schema",
     .name = "table-schema",
     .title = "Schema of one table",
     .description = "The CREATE statements of a table or view, its indexes "
                    "and triggers.  Database and table names complete.",
     .mime_type = "application/sql",
     .read = read_table_schema,
     .complete = complete_cb,
     .exec = MCPD_EXEC_POOL},
    MCPD_RESOURCE_TEMPLATE_END,
};

static const mcpd_prompt_argument explore_args[] = {
    {.name = "database",
     .description = "The database to explore (completes).",
     .required = 1},
    MCPD_PROMPT_ARGUMENT_END,
};

static const mcpd_prompt prompts[] = {
    {.name = "explore_database",
     .title = "Explore a database",
     .description = "Guides the model through an unknown SQLite database: "
                    "its tables, their structure, samples of their rows.",
     .arguments = explore_args,
     .get = get_explore,
     .complete = complete_cb,
     .exec = MCPD_EXEC_POOL},
    MCPD_PROMPT_END,
};

/* --- configuration -------------------------------------------------------- */

static int valid_name(const char *s) {
  size_t n = strlen(s);

  if (n == 0 || n > 64)
    return 0;
  for (; *s != '\0'; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.'))
      return 0;
  return 1;
}

/* The absolute path of a configured one: "~" is $HOME, relative paths are
 * relative to mcpd's working directory.  malloc'ed. */
static char *absolute_path(const char *given) {
  const char *home = getenv("HOME");
  char cwd[PATH_MAX];
  size_t n;
  char *p;

  if (given[0] == '~' && (given[1] == '\0' || given[1] == '/')) {
    if (home == NULL || home[0] != '/')
      return NULL;
    n = strlen(home) + strlen(given);
    if ((p = malloc(n)) != NULL)
      snprintf(p, n, "%s%s", home, given + 1);
    return p;
  }
  if (given[0] == '/')
    return strdup(given);
  if (getcwd(cwd, sizeof(cwd)) == NULL)
    return NULL;
  n = strlen(cwd) + strlen(given) + 2;
  if ((p = malloc(n)) != NULL)
    snprintf(p, n, "%s/%s", cwd, given);
  return p;
}

static int parse_database(struct sq_state *st, char **errmsg, const char *name,
                          json_object *v) {
  const mcpd_host *host = st->host;
  struct sq_database *d = &st->dbs[st->n_dbs];
  const char *path = NULL;

  if (!valid_name(name))
    return config_error(host, errmsg,
                        "databases: \"%s\" is not a usable name: 1 to 64 of "
                        "A-Z a-z 0-9 _ . -",
                        name);
  if (!json_object_is_type(v, json_type_object))
    return config_error(host, errmsg,
                        "databases.%s must be an object such as {\"path\": "
                        "\"/srv/app.db\", \"write\": false}",
                        name);
  json_object_object_foreach(v, key, value) {
    if (strcmp(key, "path") == 0) {
      if (!json_object_is_type(value, json_type_string) ||
          json_object_get_string_len(value) == 0)
        return config_error(
            host, errmsg, "databases.%s.path must be a non-empty string", name);
      path = json_object_get_string(value);
    } else if (strcmp(key, "write") == 0) {
      if (!json_object_is_type(value, json_type_boolean))
        return config_error(host, errmsg,
                            "databases.%s.write must be true or false", name);
      d->write = json_object_get_boolean(value);
    } else {
      return config_error(host, errmsg,
                          "databases.%s: unknown key \"%s\" (known: path, "
                          "write)",
                          name, key);
    }
  }
  if (path == NULL)
    return config_error(host, errmsg, "databases.%s needs a \"path\"", name);
  d->name = strdup(name);
  d->path = absolute_path(path);
  if (d->name == NULL || d->path == NULL) {
    free(d->name);
    free(d->path);
    return config_error(host, errmsg,
                        "databases.%s: cannot make \"%s\" "
                        "absolute ($HOME unset, or no memory)",
                        name, path);
  }
  st->n_dbs++;
  return MCPD_OK;
}

static int parse_config(struct sq_state *st, json_object *config,
                        char **errmsg) {
  const mcpd_host *host = st->host;
  json_object *databases = NULL;
  int64_t n = 0;
  int rc;

  if (config == NULL)
    return MCPD_OK; /* sq_init() says how to configure it */
  if (!json_object_is_type(config, json_type_object))
    return config_error(host, errmsg,
                        "the config must be an object, e.g. {\"plugins\": "
                        "{\"sqlite\": {\"databases\": {\"app\": {\"path\": "
                        "\"/srv/app.db\"}}}}}");
  json_object_object_foreach(config, key, v) {
    if (strcmp(key, "databases") == 0) {
      databases = v;
      rc = MCPD_OK;
    } else if (strcmp(key, "maxRows") == 0) {
      if ((rc = config_int(host, errmsg, key, v, 1, 1000000, &n)) == MCPD_OK)
        st->max_rows = (size_t)n;
    } else if (strcmp(key, "timeoutMs") == 0) {
      if ((rc = config_int(host, errmsg, key, v, 1, 3600000, &n)) == MCPD_OK)
        st->timeout_ms = n;
    } else if (strcmp(key, "maxCellBytes") == 0) {
      if ((rc = config_int(host, errmsg, key, v, 16, 16 << 20, &n)) == MCPD_OK)
        st->max_cell_bytes = (size_t)n;
    } else {
      rc = config_error(host, errmsg,
                        "unknown key \"%s\" (known: databases, maxRows, "
                        "timeoutMs, maxCellBytes)",
                        key);
    }
    if (rc != MCPD_OK)
      return rc;
  }
  if (databases == NULL)
    return MCPD_OK;
  if (!json_object_is_type(databases, json_type_object) ||
      json_object_object_length(databases) == 0)
    return config_error(host, errmsg,
                        "\"databases\" must be a non-empty object of name: "
                        "{\"path\": ..., \"write\": false}");
  st->dbs =
      calloc((size_t)json_object_object_length(databases), sizeof(*st->dbs));
  if (st->dbs == NULL)
    return config_error(host, errmsg, "out of memory");
  json_object_object_foreach(databases, name, entry) {
    if (parse_database(st, errmsg, name, entry) != MCPD_OK)
      return MCPD_ERROR;
  }
  return MCPD_OK;
}

/* Opens each database once at start, so a wrong path or a file that is not
 * a database fails the load rather than every call.  A writable one that
 * does not exist yet is created. */
static int check_database(struct sq_state *st, const struct sq_database *d,
                          char **errmsg) {
  struct sq_conn c;
  char *error = NULL;
  int rc;

  if (!pool_open(&c, st, d, NULL, 1, &error)) {
    rc = config_error(st->host, errmsg, "databases.%s: %s", d->name,
                      error ? error : "out of memory");
    sqlite3_free(error);
    return rc;
  }
  rc = sqlite3_exec(c.db, "SELECT count(*) FROM sqlite_schema", NULL, NULL,
                    NULL);
  if (rc != SQLITE_OK)
    rc = config_error(st->host, errmsg, "databases.%s \"%s\": %s", d->name,
                      d->path, sqlite3_errmsg(c.db));
  else
    rc = MCPD_OK;
  pool_close(&c);
  return rc;
}

static int add_schema_resource(struct sq_state *st, const struct sq_database *d,
                               char **errmsg) {
  char *uri = st->host->mprintf("sqlite://%s/schema", d->name);
  char *name = st->host->mprintf("%s schema", d->name);
  char *description =
      st->host->mprintf("The CREATE statements of the SQLite database %s "
                        "(%s, %s).",
                        d->path, d->name, d->write ? "writable" : "read-only");
  mcpd_resource r = {
      .uri = uri,
      .name = name,
      .title = name,
      .description = description,
      .mime_type = "application/sql",
      .read = read_schema,
      .exec = MCPD_EXEC_POOL,
      .data = (void *)d,
  };
  int rc = MCPD_OK;

  if (uri == NULL || name == NULL || description == NULL ||
      st->host->add_resource(st->self, &r) != MCPD_OK)
    rc =
        config_error(st->host, errmsg, "databases.%s: cannot offer %s: %s",
                     d->name, uri ? uri : "its schema", st->host->last_error());
  st->host->free(uri);
  st->host->free(name);
  st->host->free(description);
  return rc;
}

/* --- init and fini -------------------------------------------------------- */

static void sq_fini(void *state) {
  struct sq_state *st = state;

  if (st == NULL)
    return;
  reap(st, 1);
  for (size_t i = 0; i < st->n_dbs; i++) {
    free(st->dbs[i].name);
    free(st->dbs[i].path);
  }
  free(st->dbs);
  pthread_mutex_destroy(&st->lock);
  free(st);
}

static int sq_init(const mcpd_host *host, mcpd_self *self, json_object *config,
                   void **state, char **errmsg) {
  struct sq_state *st = calloc(1, sizeof(*st));
  int any_write = 0;

  if (st == NULL || pthread_mutex_init(&st->lock, NULL) != 0) {
    free(st);
    *errmsg = host->mprintf("out of memory");
    return MCPD_ERROR;
  }
  *state = st; /* fini() frees it, also when init fails */
  st->host = host;
  st->self = self;
  st->max_rows = SQ_DEFAULT_MAX_ROWS;
  st->timeout_ms = SQ_DEFAULT_TIMEOUT_MS;
  st->max_cell_bytes = SQ_DEFAULT_MAX_CELL_BYTES;
  if (parse_config(st, config, errmsg) != MCPD_OK)
    return MCPD_ERROR;
  if (st->n_dbs == 0) {
    host->log(self, MCPD_LOG_INFO,
              "no databases configured; add them under plugins.sqlite."
              "databases in mcpd's --config file, e.g. {\"app\": {\"path\": "
              "\"/srv/app.db\"}}");
    return MCPD_OK;
  }
  for (size_t i = 0; i < st->n_dbs; i++) {
    if (check_database(st, &st->dbs[i], errmsg) != MCPD_OK ||
        add_schema_resource(st, &st->dbs[i], errmsg) != MCPD_OK)
      return MCPD_ERROR;
    any_write |= st->dbs[i].write;
    host->log(self, MCPD_LOG_INFO, "database %s: %s (%s)", st->dbs[i].name,
              st->dbs[i].path, st->dbs[i].write ? "writable" : "read-only");
  }
  if (any_write && host->add_tool(self, &execute_tool) != MCPD_OK) {
    *errmsg = host->mprintf("cannot offer execute: %s", host->last_error());
    return MCPD_ERROR;
  }
  return MCPD_OK;
}

MCPD_PLUGIN_DEFINE(.name = "sqlite", .version = "1.0",
                   .description = "Lists, describes and queries the SQLite "
                                  "databases named in the config; changes "
                                  "them only where allowed.",
                   .init = sq_init, .fini = sq_fini, .tools = tools,
                   .resource_templates = templates, .prompts = prompts);
