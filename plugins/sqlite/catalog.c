/* SPDX-License-Identifier: MIT */
/* catalog.c -- the "sqlite" plugin's list_tables and describe_table
 * tools: the databases, their tables and views, and one table's columns,
 * indexes and foreign keys. */
#include <stddef.h>

#include "sqlite.h"

/* --- list_tables --------------------------------------------------------- */

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

int sq_run_list_tables(struct sq_job *j) {
  const mcpd_host *host = j->st->host;
  sqlite3_stmt *stmt = NULL;
  json_object *out, *tables;
  struct printbuf *pb;
  int rc, n = 0;

  if (j->conn.database == NULL)
    return list_databases(j);
  if (!sq_job_open(j))
    return MCPD_OK;
  if (sqlite3_prepare_v2(j->conn.db, sq_tables_sql, -1, &stmt, NULL) !=
      SQLITE_OK)
    return sq_job_error(j, sq_conn_error(&j->conn));
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
    return sq_job_error(j, sq_conn_error(&j->conn));
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

/* --- describe_table ------------------------------------------------------ */

/* Runs `sql` with `arg` bound to ?1 and hands each row to `row`.  Returns
 * SQLITE_OK or an error (sq_conn_error() says which). */
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

int sq_run_describe_table(struct sq_job *j) {
  const mcpd_host *host = j->st->host;
  const char *asked = sq_arg_string(j->arguments, "table");
  struct describe d = {.conn = &j->conn};
  sqlite3_stmt *stmt = NULL;
  json_object *out = NULL;
  char *name = NULL, *type = NULL, *sql = NULL;
  int rc;

  if (!sq_job_open(j))
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
    sq_job_error(j, sq_conn_error(&j->conn));
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
    sq_job_error(j, sq_conn_error(&j->conn));
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
