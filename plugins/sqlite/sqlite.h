/* SPDX-License-Identifier: MIT */
/* sqlite.h -- what the files of the "sqlite" plugin share.
 *
 * config.c     the config: databases, limits; finding a database by name.
 * conn.c       one connection for one call: opening it read-only or not,
 *              the time limit and cancellation, preparing and binding one
 *              statement.
 * cell.c       a column of a result row as JSON and as text.
 * jobs.c       the thread each tool call runs on, and its cancellation.
 * schema.c     what a database holds, read on the pool: the schema
 *              resources and completion of database and table names.
 * catalog.c    the list_tables and describe_table tools.
 * statement.c  the query and execute tools.
 * prompt.c     the explore_database prompt.
 * sqlite.c     the plugin's tables, init and fini.
 *
 * Calls go down that list, never up: a file uses only files listed above
 * it (schema.c, catalog.c and prompt.c share sq_tables_sql).
 *
 * Everything in struct sq_state except the list of jobs (behind `lock`) is
 * written by init() only and then read by any thread without locks.
 */
#ifndef MCPD_PLUGIN_SQLITE_H
#define MCPD_PLUGIN_SQLITE_H

#include <pthread.h>
#include <stddef.h>

#include <json-c/printbuf.h>
#include <sqlite3.h>

#include <mcpd.h>

struct sq_job;

struct sq_database {
  char *name;
  char *path; /* absolute */
  int write;
};

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
  /* Subscriptions (watch.c), or NULL. */
  struct sq_watch *watch;
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

/* The string `key` of a JSON object, or NULL. */
static inline const char *sq_arg_string(json_object *args, const char *key) {
  json_object *v;

  return json_object_object_get_ex(args, key, &v) &&
                 json_object_is_type(v, json_type_string)
             ? json_object_get_string(v)
             : NULL;
}

/* --- config.c ------------------------------------------------------------ */

/* Fills st->dbs and the limits from the plugin's config (NULL: none). */
int sq_parse_config(struct sq_state *st, json_object *config, char **errmsg);
/* The configured database named `name` (NULL: none), or NULL. */
const struct sq_database *sq_find_database(const struct sq_state *st,
                                           const char *name);
/* Answers -32602 for a database name the config does not know. */
int sq_fail_unknown(mcpd_call *call, const struct sq_state *st,
                    const char *name);

/* --- conn.c -------------------------------------------------------------- */

/* Opens c->database for one call into *c (whose lock is initialised).
 * Returns SQLITE_OK or a code with *error from sqlite3_mprintf. */
int sq_conn_open(struct sq_conn *c, char **error);
void sq_conn_close(struct sq_conn *c);
/* on_cancel, on the loop thread (`arg` is the struct sq_conn): interrupts
 * what the connection runs. */
void sq_conn_cancel_cb(void *arg);
/* Why a statement failed, for the model (sqlite3_mprintf). */
char *sq_conn_error(struct sq_conn *c);
/* Starts the connection's time limit again from now. */
void sq_conn_restart_clock(struct sq_conn *c);
/* Prepares the one statement in `sql`; more than one, or none, is
 * refused. */
int sq_prepare_one(struct sq_conn *c, const char *sql, sqlite3_stmt **out,
                   char **error);
/* Binds `params` (an array, or NULL) to the statement's parameters in
 * order. */
int sq_bind_params(sqlite3_stmt *stmt, json_object *params, char **error);
/* Opens a connection off a job thread (a read, a prompt, a completion, or
 * with no call and `create`, the check at init); nonzero when open. */
int sq_pool_open(struct sq_conn *c, const struct sq_state *st,
                 const struct sq_database *d, mcpd_call *call, int create,
                 char **error);
void sq_pool_close(struct sq_conn *c);

/* --- cell.c -------------------------------------------------------------- */

/* Column `i` of the current row as JSON; text and blobs longer than
 * max_cell_bytes are cut (*cut counts them).  Its text goes to `text`. */
json_object *sq_cell_json(const struct sq_state *st, sqlite3_stmt *stmt, int i,
                          struct printbuf *text, int *cut);

/* --- jobs.c -------------------------------------------------------------- */

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

/* Every tool's callback, on the loop thread: checks the database name and
 * starts a thread that runs the tool's kind. */
int sq_tool_start(mcpd_call *call, const mcpd_request *req);
/* Joins the finished jobs' threads, or all of them. */
void sq_reap(struct sq_state *st, int all);
/* Opens the job's database, or builds an error result; nonzero when
 * open. */
int sq_job_open(struct sq_job *j);
/* Ends a tool with `error` (sqlite3_mprintf, freed) as an isError
 * result. */
int sq_job_error(struct sq_job *j, char *error);

/* --- schema.c ------------------------------------------------------------ */

/* Selects the name and type of the tables and views a user made. */
extern const char sq_tables_sql[];
/* For a read of a template: the database its "database" variable names,
 * opened into *c (close it with sq_pool_close()); NULL after answering the
 * call (*rc its answer): no such database, or it cannot be opened. */
const struct sq_database *sq_open_named(mcpd_call *call,
                                        const mcpd_request *req,
                                        struct sq_conn *c, int *rc);
/* The read callbacks of sqlite://NAME/schema and of the template
 * sqlite://{database}/table/{table}/schema. */
int sq_read_schema(mcpd_call *call, const mcpd_request *req);
int sq_read_table_schema(mcpd_call *call, const mcpd_request *req);
/* Completes the arguments "database" and "table". */
int sq_complete_cb(mcpd_call *call, const mcpd_request *req,
                   const char *argument, const char *value,
                   json_object *context);

/* The read callback of the template sqlite://{database}/table/{table}/rows:
 * the first max_rows rows as JSON, with the table's row count. */
int sq_read_table_rows(mcpd_call *call, const mcpd_request *req);

/* --- watch.c -------------------------------------------------------------- */

/* Starts the thread that reports changes to subscribed resources; -1 when
 * it cannot (then nothing is reported, and reads still work). */
int sq_watch_start(struct sq_state *st);
void sq_watch_stop(struct sq_state *st);
/* The subscribe callback of every sqlite resource and template. */
void sq_subscribe_cb(const mcpd_request *req, int subscribed);

/* --- catalog.c, statement.c ---------------------------------------------- */

/* The tools' kinds run these on the job's thread. */
int sq_run_list_tables(struct sq_job *j);
int sq_run_describe_table(struct sq_job *j);
int sq_run_query(struct sq_job *j);
int sq_run_execute(struct sq_job *j);

/* --- prompt.c ------------------------------------------------------------ */

int sq_get_explore(mcpd_call *call, const mcpd_request *req);

#endif
