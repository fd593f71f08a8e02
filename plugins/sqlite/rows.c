/* SPDX-License-Identifier: MIT */
/* rows.c -- sqlite://{database}/table/{table}/rows: a table's first rows
 * as JSON, with its row count, for clients that read (and subscribe to)
 * data rather than run queries. */
#include <string.h>

#include "sqlite.h"

/* Whether `table` names a table or view a user made (sq_tables_sql):
 * only such a name goes into the statement, quoted. */
static int known_table(struct sq_conn *c, const char *table) {
  sqlite3_stmt *stmt = NULL;
  int found = 0;

  if (sqlite3_prepare_v2(c->db, sq_tables_sql, -1, &stmt, NULL) != SQLITE_OK)
    return 0;
  while (!found && sqlite3_step(stmt) == SQLITE_ROW)
    found = strcmp((const char *)sqlite3_column_text(stmt, 0), table) == 0;
  sqlite3_finalize(stmt);
  return found;
}

int sq_read_table_rows(mcpd_call *call, const mcpd_request *req) {
  const struct sq_state *st = req->state;
  const char *table = sq_arg_string(req->variables, "table");
  json_object *result, *rows;
  struct printbuf *text;
  sqlite3_stmt *stmt = NULL;
  struct sq_conn c;
  char *error = NULL, *sql;
  long long total = 0;
  int rc, cut = 0;
  const struct sq_database *d = sq_open_named(call, req, &c, &rc);

  if (d == NULL)
    return rc;
  if (table == NULL || !known_table(&c, table)) {
    sq_pool_close(&c);
    return req->host->fail(call, MCPD_ERR_NOT_FOUND,
                           "no table or view named %s in database %s",
                           table ? table : "", d->name);
  }
  sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\"", table);
  if (sql != NULL &&
      sqlite3_prepare_v2(c.db, sql, -1, &stmt, NULL) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW)
    total = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_free(sql);
  stmt = NULL;
  result = json_object_new_object();
  rows = json_object_new_array();
  text = printbuf_new();
  sql = sqlite3_mprintf("SELECT * FROM \"%w\" LIMIT %lld", table,
                        (long long)st->max_rows);
  rc = sql != NULL ? sqlite3_prepare_v2(c.db, sql, -1, &stmt, NULL)
                   : SQLITE_NOMEM;
  while (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    json_object *row = json_object_new_object();
    for (int i = 0; i < sqlite3_column_count(stmt); i++)
      json_object_object_add(row, sqlite3_column_name(stmt, i),
                             sq_cell_json(st, stmt, i, text, &cut));
    json_object_array_add(rows, row);
    rc = SQLITE_OK;
  }
  sqlite3_free(sql);
  if (rc != SQLITE_DONE) {
    error = sq_conn_error(&c);
    rc = req->host->fail(call, MCPD_ERR_INTERNAL, "%s", error);
    sqlite3_free(error);
    json_object_put(rows);
    json_object_put(result);
  } else {
    json_object_object_add(result, "database", json_object_new_string(d->name));
    json_object_object_add(result, "table", json_object_new_string(table));
    json_object_object_add(result, "totalRows", json_object_new_int64(total));
    json_object_object_add(result, "rows", rows);
    json_object_object_add(
        result, "truncated",
        json_object_new_boolean((long long)json_object_array_length(rows) <
                                total));
    rc = req->host->result_text(
        call, json_object_to_json_string_ext(result, JSON_C_TO_STRING_PLAIN));
    json_object_put(result);
  }
  sqlite3_finalize(stmt);
  printbuf_free(text);
  sq_pool_close(&c);
  return rc;
}
