/* SPDX-License-Identifier: MIT */
/* prompt.c -- the "sqlite" plugin's explore_database prompt: a plan for
 * a model to learn an unknown database with the tools. */
#include <stddef.h>

#include "sqlite.h"

/* Tables the explore_database prompt names. */
#define SQ_PROMPT_TABLES 50

int sq_get_explore(mcpd_call *call, const mcpd_request *req) {
  const struct sq_state *st = req->state;
  const mcpd_host *host = req->host;
  const char *name = sq_arg_string(req->arguments, "database");
  const struct sq_database *d = sq_find_database(st, name);
  sqlite3_stmt *stmt = NULL;
  struct printbuf *pb;
  struct sq_conn c;
  char *error = NULL;
  int rc, n = 0;

  if (d == NULL)
    return sq_fail_unknown(call, st, name);
  if (!sq_pool_open(&c, st, d, call, 0, &error)) {
    rc = host->fail(call, MCPD_ERR_INTERNAL, "%s", error);
    sqlite3_free(error);
    return rc;
  }
  pb = printbuf_new();
  sprintbuf(pb,
            "Explore the SQLite database \"%s\" through this server's tools "
            "and tell me what it holds.\n\n",
            d->name);
  if (sqlite3_prepare_v2(c.db, sq_tables_sql, -1, &stmt, NULL) == SQLITE_OK) {
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      if (n < SQ_PROMPT_TABLES)
        sprintbuf(pb, "%s %s (%s)", n ? "," : "Its tables and views:",
                  sqlite3_column_text(stmt, 0), sqlite3_column_text(stmt, 1));
      n++;
    }
  }
  sqlite3_finalize(stmt);
  sq_pool_close(&c);
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
