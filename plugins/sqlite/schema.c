/* SPDX-License-Identifier: MIT */
/* schema.c -- what a database of the "sqlite" plugin holds, read on mcpd's
 * pool: the schema resources, and the completion of database and table
 * names. */
#include <string.h>

#include "sqlite.h"

/* completion/complete sends at most 100 values (MCP's limit). */
#define SQ_COMPLETE_MAX 100

const char sq_tables_sql[] = "SELECT name, type FROM sqlite_schema "
                             "WHERE type IN ('table', 'view') AND name NOT "
                             "LIKE 'sqlite\\_%' ESCAPE '\\' "
                             "ORDER BY name";

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
int sq_read_schema(mcpd_call *call, const mcpd_request *req) {
  const struct sq_state *st = req->state;
  const struct sq_database *d = req->data;
  struct printbuf *pb;
  struct sq_conn c;
  char *error = NULL;
  int rc, n = 0;

  if (!sq_pool_open(&c, st, d, call, 0, &error)) {
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
    error = sq_conn_error(&c);
    rc = req->host->fail(call, MCPD_ERR_INTERNAL, "%s", error);
    sqlite3_free(error);
  } else {
    if (n == 0)
      sprintbuf(pb, "-- database \"%s\" has no tables yet\n", d->name);
    rc = req->host->result_text(call, pb->buf);
  }
  printbuf_free(pb);
  sq_pool_close(&c);
  return rc;
}

/* sqlite://{database}/table/{table}/schema: the table's CREATE statement,
 * then those of its indexes and triggers. */
const struct sq_database *sq_open_named(mcpd_call *call,
                                        const mcpd_request *req,
                                        struct sq_conn *c, int *rc) {
  const struct sq_state *st = req->state;
  const char *name = sq_arg_string(req->variables, "database");
  const struct sq_database *d = sq_find_database(st, name);
  char *error = NULL;

  if (d == NULL) {
    *rc = req->host->fail(call, MCPD_ERR_NOT_FOUND, "no database named %s",
                          name ? name : "");
    return NULL;
  }
  if (!sq_pool_open(c, st, d, call, 0, &error)) {
    *rc = req->host->fail(call, MCPD_ERR_INTERNAL, "%s", error);
    sqlite3_free(error);
    return NULL;
  }
  return d;
}

int sq_read_table_schema(mcpd_call *call, const mcpd_request *req) {
  const char *table = sq_arg_string(req->variables, "table");
  struct printbuf *pb;
  struct sq_conn c;
  char *error = NULL;
  int rc, n = 0;
  const struct sq_database *d = sq_open_named(call, req, &c, &rc);

  if (d == NULL)
    return rc;
  pb = printbuf_new();
  rc = append_schema(&c,
                     "SELECT sql, type IN ('table', 'view') FROM sqlite_schema "
                     "WHERE tbl_name = ?1 COLLATE NOCASE AND sql IS NOT NULL "
                     "ORDER BY type NOT IN ('table', 'view'), rowid",
                     table, pb, &n);
  if (rc != SQLITE_OK) {
    error = sq_conn_error(&c);
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
  sq_pool_close(&c);
  return rc;
}

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
      sq_find_database(st, sq_arg_string(context, "database"));
  sqlite3_stmt *stmt = NULL;
  struct sq_conn c;
  char *error = NULL;
  size_t total = 0;

  if (d == NULL || !sq_pool_open(&c, st, d, call, 0, &error)) {
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
  sq_pool_close(&c);
}

int sq_complete_cb(mcpd_call *call, const mcpd_request *req,
                   const char *argument, const char *value,
                   json_object *context) {
  if (strcmp(argument, "database") == 0)
    complete_databases(call, req->state, value);
  else if (strcmp(argument, "table") == 0)
    complete_tables(call, req->state, context, value);
  return MCPD_OK;
}
