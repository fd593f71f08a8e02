/* SPDX-License-Identifier: MIT */
/* statement.c -- the "sqlite" plugin's query and execute tools: one
 * statement, its values bound.  query runs only a statement that
 * sqlite3_stmt_readonly() calls read-only, whatever the database; execute
 * exists only when some database is writable, and asks the user first
 * when the client can. */
#include <stdint.h>
#include <string.h>

#include "sqlite.h"

/* --- query --------------------------------------------------------------- */

int sq_run_query(struct sq_job *j) {
  const struct sq_state *st = j->st;
  const mcpd_host *host = st->host;
  const char *sql = sq_arg_string(j->arguments, "sql");
  json_object *params = json_object_object_get(j->arguments, "params");
  json_object *out, *columns, *rows;
  struct printbuf *text;
  sqlite3_stmt *stmt = NULL;
  char *error = NULL;
  size_t n_rows = 0;
  int n_cols, rc, truncated = 0, cut = 0;

  if (!sq_job_open(j))
    return MCPD_OK;
  if (sq_prepare_one(&j->conn, sql, &stmt, &error) != SQLITE_OK)
    return sq_job_error(j, error);
  if (!sqlite3_stmt_readonly(stmt)) {
    sqlite3_finalize(stmt);
    return sq_job_error(
        j, sqlite3_mprintf("query runs only statements that read (SELECT, "
                           "WITH ... SELECT, read-only PRAGMAs, EXPLAIN); "
                           "this one would change the database%s",
                           j->conn.database->write ? ": use execute"
                                                   : ", which is read-only"));
  }
  if (sq_bind_params(stmt, params, &error) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return sq_job_error(j, error);
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
      json_object_array_add(row, sq_cell_json(st, stmt, i, text, &cut));
    }
    sprintbuf(text, "\n");
    json_object_array_add(rows, row);
    n_rows++;
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    error = sq_conn_error(&j->conn);
    sqlite3_finalize(stmt);
    json_object_put(out);
    json_object_put(columns);
    json_object_put(rows);
    printbuf_free(text);
    return sq_job_error(j, error);
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

/* --- execute ------------------------------------------------------------- */

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

int sq_run_execute(struct sq_job *j) {
  const mcpd_host *host = j->st->host;
  const char *sql = sq_arg_string(j->arguments, "sql");
  json_object *params = json_object_object_get(j->arguments, "params");
  json_object *out;
  sqlite3_stmt *stmt = NULL;
  char *error = NULL;
  int rc, asked = ASK_YES, changes = 0;
  sqlite3_int64 rowid = 0;

  if (!sq_job_open(j))
    return MCPD_OK;
  if (sq_prepare_one(&j->conn, sql, &stmt, &error) != SQLITE_OK ||
      sq_bind_params(stmt, params, &error) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return sq_job_error(j, error);
  }
  if (!sqlite3_stmt_readonly(stmt)) {
    asked = ask_user(j, sql, params, &error);
    if (asked == ASK_FAILED || asked == ASK_NO) {
      sqlite3_finalize(stmt);
      if (asked == ASK_FAILED)
        return sq_job_error(
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
    sq_conn_restart_clock(&j->conn);
  }
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
    continue; /* rows of RETURNING and the like are not reported */
  if (rc != SQLITE_DONE) {
    error = sq_conn_error(&j->conn);
    sqlite3_finalize(stmt);
    return sq_job_error(j, error);
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
