/* SPDX-License-Identifier: MIT */
/* sqlite.c -- the "sqlite" plugin: lets a client look into, query and
 * (where the config allows) change the SQLite databases named in mcpd's
 * config.  This file holds its tables (tools, the resource template, the
 * prompt), init and fini; sqlite.h says where the rest is.
 *
 * Tools run on threads of their own (jobs.c), each with its own connection
 * (conn.c).  Reads, the prompt and completion are short and run on mcpd's
 * pool.
 */
#include <stdlib.h>

#include "../common/plugin_config.h"
#include "sqlite.h"

#define SQ_DEFAULT_MAX_ROWS 1000
#define SQ_DEFAULT_TIMEOUT_MS 10000
#define SQ_DEFAULT_MAX_CELL_BYTES 65536

/* --- tables --------------------------------------------------------------- */

static const struct sq_tool_kind list_tables_kind = {.run = sq_run_list_tables,
                                                     .database_optional = 1};
static const struct sq_tool_kind describe_kind = {.run = sq_run_describe_table};
static const struct sq_tool_kind query_kind = {.run = sq_run_query};
static const struct sq_tool_kind execute_kind = {.run = sq_run_execute,
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
     .call = sq_tool_start,
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
     .call = sq_tool_start,
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
     .call = sq_tool_start,
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
    .call = sq_tool_start,
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
     .read = sq_read_table_schema,
     .complete = sq_complete_cb,
     .subscribe = sq_subscribe_cb,
     .exec = MCPD_EXEC_POOL},
    {.uri_template = "sqlite://{database}/table/{table}/rows",
     .name = "table-rows",
     .title = "Rows of one table",
     .description = "The first rows of a table or view as JSON (at most "
                    "maxRows), with its row count.  Subscribe to hear of "
                    "every change, whoever makes it.  Names complete.",
     .mime_type = "application/json",
     .read = sq_read_table_rows,
     .complete = sq_complete_cb,
     .subscribe = sq_subscribe_cb,
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
     .get = sq_get_explore,
     .complete = sq_complete_cb,
     .exec = MCPD_EXEC_POOL},
    MCPD_PROMPT_END,
};

/* Opens each database once at start, so a wrong path or a file that is not
 * a database fails the load rather than every call.  A writable one that
 * does not exist yet is created. */
static int check_database(struct sq_state *st, const struct sq_database *d,
                          char **errmsg) {
  struct sq_conn c;
  char *error = NULL;
  int rc;

  if (!sq_pool_open(&c, st, d, NULL, 1, &error)) {
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
  sq_pool_close(&c);
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
      .read = sq_read_schema,
      .subscribe = sq_subscribe_cb,
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
  sq_watch_stop(st);
  sq_reap(st, 1);
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
  if (sq_parse_config(st, config, errmsg) != MCPD_OK)
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
  if (sq_watch_start(st) != 0)
    host->log(self, MCPD_LOG_WARNING,
              "cannot watch the databases (inotify): subscriptions will "
              "hear of no change");
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
