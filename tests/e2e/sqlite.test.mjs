// SPDX-License-Identifier: MIT
// The bundled sqlite plugin driven by the official MCP TypeScript SDK client
// against a real SQLite file the test creates: through the plugin itself,
// with a writable config and the execute tool, then read through a second,
// read-only config of the same file.  Covers the tools (bound parameters,
// structured output, the row limit), the refusals (a write through query,
// execute on a read-only database, several statements, an unknown
// database), a query cancelled mid-run and one stopped by timeoutMs,
// elicitation before a write, the schema resources, the template with its
// completion, the prompt, and init refusals seen through --list.

import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import {
  MCPD,
  configFile,
  makePluginDir,
  makeTempDir,
  pluginPath,
  resultText,
  runMcpd,
  sleep,
  withTimeout,
} from './lib.mjs';

const built = fs.existsSync(pluginPath('sqlite'));
const skip = built ? false : 'the sqlite plugin is not built (no libsqlite3 at configure time)';

/** A statement that never ends on its own: counts an endless sequence. */
const FOREVER = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';

/**
 * An SDK client on a fresh mcpd serving the sqlite plugin with `config`.
 * `elicit` (a function of the request's params) makes the client declare
 * elicitation and answer with what it returns.
 */
async function connect(t, config, { elicit } = {}) {
  const dir = await makePluginDir(['sqlite']);
  const args = ['--plugins', dir, '--no-watch', '--config', await configFile({ plugins: { sqlite: config } })];
  const transport = new StdioClientTransport({ command: MCPD, args, env: process.env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d;
  });
  const client = new Client(
    { name: 'mcpd-e2e-sqlite', version: '0.0.0' },
    elicit ? { capabilities: { elicitation: { form: {} } } } : undefined,
  );
  if (elicit) client.setRequestHandler(ElicitRequestSchema, async (req) => elicit(req.params));
  t.after(async () => {
    await client.close().catch(() => {});
    assert.doesNotMatch(stderr, /Sanitizer|runtime error:/, `mcpd stderr:\n${stderr}`);
  });
  await withTimeout(client.connect(transport), 10000, 'SDK client connect');
  return { client, stderr: () => stderr };
}

async function call(client, name, args, options) {
  return withTimeout(client.callTool({ name, arguments: args }, undefined, options), 15000, `tools/call ${name}`);
}

function assertToolError(result, pattern) {
  assert.equal(result.isError, true, `expected an error, got ${JSON.stringify(result)}`);
  assert.match(resultText(result), pattern);
}

async function rejectsWith(promise, code) {
  let caught;
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof McpError, `not an McpError: ${err}`);
    assert.equal(err.code, code, err.message);
    caught = err;
    return true;
  });
  return caught;
}

let dbPath;
/** Read-only and writable configs of the one database file. */
const ro = (extra = {}) => ({ databases: { shop: { path: dbPath } }, ...extra });
const rw = (extra = {}) => ({ databases: { shop: { path: dbPath, write: true } }, ...extra });

describe('sqlite', { skip }, () => {
  before(async () => {
    // The file does not exist yet: a writable database is created at init,
    // and filled through execute by a client that cannot elicit, so each
    // statement runs without confirmation.
    dbPath = path.join(await makeTempDir('mcpd-sqlite-'), 'shop.db');
    const t = { after: (fn) => after.push(fn) };
    const after = [];
    const { client } = await connect(t, rw());
    const statements = [
      [`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL,
          email TEXT UNIQUE, status TEXT NOT NULL DEFAULT 'active')`],
      [`CREATE TABLE orders (id INTEGER PRIMARY KEY,
          user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          total REAL, note BLOB)`],
      ['CREATE INDEX orders_user ON orders(user_id)'],
      ['CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 100'],
      ['INSERT INTO users (name, email) VALUES (?, ?), (?, ?)', ['alice', 'alice@example.com', 'bob', 'bob@example.com']],
      ['INSERT INTO users (name, email, status) VALUES (?, ?, ?)', ['carol', null, 'gone']],
      [
        `INSERT INTO orders (user_id, total, note)
          WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)
          SELECT 1 + i % 3, i * 10.5, x'00ff' FROM n`,
      ],
    ];
    let last;
    for (const [sql, params] of statements) {
      last = await call(client, 'execute', { database: 'shop', sql, ...(params ? { params } : {}) });
      assert.notEqual(last.isError, true, `${sql}: ${resultText(last)}`);
    }
    assert.deepEqual(last.structuredContent, { executed: true, changes: 30, lastInsertRowid: 30 });
    assert.match(resultText(last), /ran without confirmation/);
    for (const fn of after) await fn();
  });

  describe('tools', () => {
    test('a read-only config offers no execute; list_tables lists tables and views', async (t) => {
      const { client } = await connect(t, ro());
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((x) => x.name).sort(), ['describe_table', 'list_tables', 'query']);
      const query = tools.find((x) => x.name === 'query');
      assert.equal(query.outputSchema.type, 'object');
      assert.equal(query.annotations.readOnlyHint, true);

      const res = await call(client, 'list_tables', { database: 'shop' });
      assert.deepEqual(res.structuredContent, {
        database: 'shop',
        tables: [
          { name: 'big_orders', type: 'view' },
          { name: 'orders', type: 'table' },
          { name: 'users', type: 'table' },
        ],
      });
      assert.match(resultText(res), /^orders \(table\)$/m);
      // Without a database it says which exist.
      const all = await call(client, 'list_tables', {});
      assert.deepEqual(all.structuredContent, { databases: [{ name: 'shop', writable: false }] });
    });

    test('describe_table: columns, keys, defaults, indexes and foreign keys', async (t) => {
      const { client } = await connect(t, ro());
      const res = await call(client, 'describe_table', { database: 'shop', table: 'ORDERS' });
      assert.notEqual(res.isError, true, resultText(res));
      const d = res.structuredContent;
      assert.equal(d.table, 'orders');
      assert.equal(d.type, 'table');
      assert.deepEqual(
        d.columns.map((c) => [c.name, c.type, c.notNull, c.primaryKey]),
        [
          ['id', 'INTEGER', false, 1],
          ['user_id', 'INTEGER', true, 0],
          ['total', 'REAL', false, 0],
          ['note', 'BLOB', false, 0],
        ],
      );
      assert.deepEqual(d.indexes, [
        { name: 'orders_user', unique: false, origin: 'c', partial: false, columns: ['user_id'] },
      ]);
      assert.deepEqual(d.foreignKeys, [
        { table: 'users', from: ['user_id'], to: ['id'], onUpdate: 'NO ACTION', onDelete: 'CASCADE' },
      ]);
      assert.match(d.sql, /^CREATE TABLE orders/);
      assert.match(resultText(res), /user_id INTEGER NOT NULL/);

      const users = (await call(client, 'describe_table', { database: 'shop', table: 'users' })).structuredContent;
      assert.equal(users.columns.find((c) => c.name === 'status').default, "'active'");
      assert.ok(users.indexes.some((i) => i.unique && i.origin === 'u' && i.columns[0] === 'email'));

      assertToolError(
        await call(client, 'describe_table', { database: 'shop', table: 'nope' }),
        /no table or view named "nope" in database "shop"/,
      );
    });

    test('query binds parameters and returns rows as structured content and text', async (t) => {
      const { client } = await connect(t, ro());
      const res = await call(client, 'query', {
        database: 'shop',
        sql: 'SELECT id, name, email, 1.5 AS f, x\'00ff\' AS b FROM users WHERE status = ? AND id >= ? ORDER BY id',
        params: ['active', 1],
      });
      assert.notEqual(res.isError, true, resultText(res));
      assert.deepEqual(res.structuredContent, {
        columns: ['id', 'name', 'email', 'f', 'b'],
        rows: [
          [1, 'alice', 'alice@example.com', 1.5, { base64: 'AP8=', bytes: 2 }],
          [2, 'bob', 'bob@example.com', 1.5, { base64: 'AP8=', bytes: 2 }],
        ],
        truncated: false,
      });
      assert.equal(
        resultText(res),
        'id | name | email | f | b\n' +
          '1 | alice | alice@example.com | 1.5 | <blob, 2 bytes>\n' +
          '2 | bob | bob@example.com | 1.5 | <blob, 2 bytes>\n' +
          '(2 rows)\n',
      );
      // null and named parameters bind by position too.
      const carol = await call(client, 'query', {
        database: 'shop',
        sql: 'SELECT name FROM users WHERE email IS :email',
        params: [null],
      });
      assert.deepEqual(carol.structuredContent.rows, [['carol']]);
      assertToolError(
        await call(client, 'query', { database: 'shop', sql: 'SELECT ?, ?', params: [1] }),
        /the statement has 2 parameters, and 1 value given/,
      );
    });

    test('maxRows cuts the rows and says truncated; maxCellBytes cuts long values', async (t) => {
      const { client } = await connect(t, ro({ maxRows: 5, maxCellBytes: 16 }));
      const res = await call(client, 'query', { database: 'shop', sql: 'SELECT id FROM orders ORDER BY id' });
      assert.equal(res.structuredContent.truncated, true);
      assert.deepEqual(res.structuredContent.rows, [[1], [2], [3], [4], [5]]);
      assert.match(resultText(res), /the first 5 rows; more were left out at maxRows/);
      const exact = await call(client, 'query', { database: 'shop', sql: 'SELECT id FROM orders LIMIT 5' });
      assert.equal(exact.structuredContent.truncated, false);
      const long = await call(client, 'query', { database: 'shop', sql: "SELECT printf('%040d', 7) AS s" });
      assert.deepEqual(long.structuredContent.rows, [['0000000000000000']]);
      assert.equal(long.structuredContent.cellsCut, 1);
    });

    test('refusals: writes through query, several statements, execute on a read-only database', async (t) => {
      const { client } = await connect(t, {
        databases: { shop: { path: dbPath }, scratch: { path: path.join(path.dirname(dbPath), 'scratch.db'), write: true } },
      });
      for (const sql of ["DELETE FROM users", "UPDATE users SET name = 'x'", 'DROP TABLE orders', 'CREATE TABLE t (a)'])
        assertToolError(await call(client, 'query', { database: 'shop', sql }), /query runs only statements that read.*read-only/);
      // Also on a writable database, query only reads.
      assertToolError(await call(client, 'query', { database: 'scratch', sql: 'CREATE TABLE t (a)' }), /use execute/);
      assertToolError(
        await call(client, 'query', { database: 'shop', sql: 'SELECT 1; SELECT 2' }),
        /only one statement per call/,
      );
      assertToolError(
        await call(client, 'query', { database: 'shop', sql: 'SELECT 1; DELETE FROM users' }),
        /only one statement per call/,
      );
      // A trailing semicolon and comment are one statement.
      const one = await call(client, 'query', { database: 'shop', sql: 'SELECT 1; -- done\n' });
      assert.notEqual(one.isError, true, resultText(one));
      assertToolError(
        await call(client, 'execute', { database: 'shop', sql: 'DELETE FROM users' }),
        /database "shop" is read-only/,
      );
      // No statement reaches a file the config did not name.
      assertToolError(
        await call(client, 'execute', { database: 'scratch', sql: `ATTACH '${dbPath}' AS other` }),
        /too many attached databases/,
      );
      // SQLite's own message for a bad statement.
      assertToolError(await call(client, 'query', { database: 'shop', sql: 'SELECT nope FROM users' }), /no such column: nope/);
      const count = await call(client, 'query', { database: 'shop', sql: 'SELECT count(*) FROM users' });
      assert.deepEqual(count.structuredContent.rows, [[3]]);
    });

    test('an unknown database is invalid params', async (t) => {
      const { client } = await connect(t, ro());
      const err = await rejectsWith(call(client, 'query', { database: 'other', sql: 'SELECT 1' }), -32602);
      assert.match(err.message, /unknown database "other"; this server has: shop/);
      await rejectsWith(call(client, 'describe_table', { database: 'other', table: 'users' }), -32602);
    });
  });

  describe('limits and cancellation', () => {
    test('a query cancelled mid-run is interrupted at once', async (t) => {
      const { client } = await connect(t, ro({ timeoutMs: 60000 }));
      await client.setLoggingLevel('debug');
      const logs = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(String(n.params.data)));
      const ac = new AbortController();
      const started = Date.now();
      const running = call(client, 'query', { database: 'shop', sql: FOREVER }, { signal: ac.signal });
      await sleep(300);
      ac.abort('changed my mind');
      await assert.rejects(running);
      const deadline = Date.now() + 5000;
      while (!logs.some((l) => /statement interrupted \(cancelled\)/.test(l)) && Date.now() < deadline) await sleep(20);
      assert.ok(
        logs.some((l) => /statement interrupted \(cancelled\)/.test(l)),
        `no interruption logged: ${JSON.stringify(logs)}`,
      );
      assert.ok(Date.now() - started < 5000, 'the query was not interrupted promptly');
      // The server goes on serving.
      const res = await call(client, 'query', { database: 'shop', sql: 'SELECT 42' });
      assert.deepEqual(res.structuredContent.rows, [[42]]);
    });

    test('timeoutMs interrupts a query that runs too long', async (t) => {
      const { client } = await connect(t, ro({ timeoutMs: 300 }));
      const started = Date.now();
      const res = await call(client, 'query', { database: 'shop', sql: FOREVER });
      const took = Date.now() - started;
      assertToolError(res, /interrupted: the statement ran longer than timeoutMs \(300 ms\)/);
      assert.ok(took >= 250 && took < 5000, `took ${took} ms`);
    });
  });

  describe('elicitation before a write', () => {
    test('accepted, the statement runs; declined or unchecked, it does not', async (t) => {
      const asked = [];
      let answer;
      const { client } = await connect(t, rw(), {
        elicit: (params) => {
          asked.push(params);
          return answer;
        },
      });
      const insert = { database: 'shop', sql: 'INSERT INTO users (name) VALUES (?)', params: ['dave'] };

      answer = { action: 'accept', content: { confirm: true } };
      const yes = await call(client, 'execute', insert);
      assert.notEqual(yes.isError, true, resultText(yes));
      assert.deepEqual(yes.structuredContent, { executed: true, changes: 1, lastInsertRowid: 4 });
      assert.equal(asked.length, 1);
      assert.match(asked[0].message, /database "shop"/);
      assert.match(asked[0].message, /INSERT INTO users \(name\) VALUES \(\?\)/);
      assert.match(asked[0].message, /\["dave"\]/);
      assert.equal(asked[0].requestedSchema.properties.confirm.type, 'boolean');

      for (const a of [{ action: 'decline' }, { action: 'accept', content: { confirm: false } }, { action: 'cancel' }]) {
        answer = a;
        const no = await call(client, 'execute', { ...insert, params: ['eve'] });
        assert.notEqual(no.isError, true);
        assert.deepEqual(no.structuredContent, { executed: false, changes: 0, lastInsertRowid: null });
        assert.match(resultText(no), /Not run: the user did not confirm it/);
      }
      assert.equal(asked.length, 4);

      // A statement that only reads needs no confirmation.
      const read = await call(client, 'execute', { database: 'shop', sql: 'SELECT 1' });
      assert.equal(read.structuredContent.executed, true);
      assert.equal(asked.length, 4);

      const names = await call(client, 'query', { database: 'shop', sql: 'SELECT name FROM users ORDER BY id' });
      assert.deepEqual(names.structuredContent.rows, [['alice'], ['bob'], ['carol'], ['dave']]);
      await call(client, 'execute', { database: 'shop', sql: "DELETE FROM users WHERE name = 'dave'" }).then((r) =>
        assert.equal(r.structuredContent.changes, 0, 'ran although the last answer was cancel'),
      );
    });
  });

  describe('resources, template, completion and prompt', () => {
    test('sqlite://NAME/schema holds the CREATE statements', async (t) => {
      const { client } = await connect(t, ro());
      const { resources } = await client.listResources();
      assert.deepEqual(resources.map((r) => r.uri), ['sqlite://shop/schema']);
      assert.equal(resources[0].mimeType, 'application/sql');
      const { contents } = await client.readResource({ uri: 'sqlite://shop/schema' });
      assert.equal(contents.length, 1);
      const text = contents[0].text;
      assert.match(text, /^CREATE TABLE users/);
      assert.match(text, /CREATE INDEX orders_user ON orders\(user_id\);/);
      assert.match(text, /CREATE VIEW big_orders/);
      assert.ok(text.indexOf('CREATE TABLE users') < text.indexOf('CREATE TABLE orders'), 'not in creation order');
    });

    test('the table template reads one table; unknown ones are not found', async (t) => {
      const { client } = await connect(t, ro());
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.deepEqual(resourceTemplates.map((r) => r.uriTemplate), ['sqlite://{database}/table/{table}/schema', 'sqlite://{database}/table/{table}/rows']);
      const { contents } = await client.readResource({ uri: 'sqlite://shop/table/orders/schema' });
      assert.match(contents[0].text, /^CREATE TABLE orders/);
      assert.match(contents[0].text, /CREATE INDEX orders_user/);
      assert.doesNotMatch(contents[0].text, /CREATE TABLE users/);
      await rejectsWith(client.readResource({ uri: 'sqlite://shop/table/nope/schema' }), -32002);
      await rejectsWith(client.readResource({ uri: 'sqlite://other/table/users/schema' }), -32002);
    });

    test('completion offers database names, then the chosen database\'s tables', async (t) => {
      const { client } = await connect(t, ro());
      const ref = { type: 'ref/resource', uri: 'sqlite://{database}/table/{table}/schema' };
      const values = async (argument, context) =>
        (await client.complete({ ref, argument, ...(context ? { context: { arguments: context } } : {}) })).completion
          .values;
      assert.deepEqual(await values({ name: 'database', value: '' }), ['shop']);
      assert.deepEqual(await values({ name: 'database', value: 'x' }), []);
      assert.deepEqual(await values({ name: 'table', value: '' }, { database: 'shop' }), ['big_orders', 'orders', 'users']);
      assert.deepEqual(await values({ name: 'table', value: 'o' }, { database: 'shop' }), ['orders']);
      // No database chosen yet: nothing to offer.
      assert.deepEqual(await values({ name: 'table', value: '' }), []);
      // The prompt's argument completes too.
      const prompt = await client.complete({
        ref: { type: 'ref/prompt', name: 'explore_database' },
        argument: { name: 'database', value: 'sh' },
      });
      assert.deepEqual(prompt.completion.values, ['shop']);
    });

    test('explore_database guides a model through the database', async (t) => {
      const { client } = await connect(t, ro({ maxRows: 50 }));
      const { prompts } = await client.listPrompts();
      assert.deepEqual(prompts.map((p) => p.name), ['explore_database']);
      assert.deepEqual(prompts[0].arguments.map((a) => [a.name, a.required]), [['database', true]]);
      const { messages } = await client.getPrompt({ name: 'explore_database', arguments: { database: 'shop' } });
      assert.equal(messages.length, 1);
      assert.equal(messages[0].role, 'user');
      const text = messages[0].content.text;
      assert.match(text, /Its tables and views: big_orders \(view\), orders \(table\), users \(table\)\./);
      assert.match(text, /describe_table/);
      assert.match(text, /LIMIT/);
      assert.match(text, /limited to 50 rows/);
      assert.match(text, /read-only/);
      await rejectsWith(client.getPrompt({ name: 'explore_database', arguments: { database: 'x' } }), -32602);
    });
  });

  describe('configuration (--list)', () => {
    const list = async (config) => {
      const dir = await makePluginDir(['sqlite']);
      const args = ['--plugins', dir, '--no-watch', '--list'];
      if (config !== undefined) args.push('--config', await configFile({ plugins: { sqlite: config } }));
      return runMcpd(args);
    };
    const loadError = async (config) => {
      const r = await list(config);
      assert.equal(r.code, 1, `--list should fail when sqlite does not load: ${r.stderr}`);
      const line = r.stderr.split('\n').find((l) => l.includes('sqlite.so') && l.includes('init failed'));
      assert.ok(line, `no load error line in:\n${r.stderr}`);
      return line;
    };

    test('--list shows what it offers; execute only with a writable database', async () => {
      const r = await list(ro());
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^sqlite\s+1\.0\s+/m);
      for (const tool of ['list_tables', 'describe_table', 'query'])
        assert.match(r.stdout, new RegExp(`^\\s+tool\\s+${tool}\\b`, 'm'), r.stdout);
      assert.doesNotMatch(r.stdout, /\bexecute\b/);
      assert.match(r.stdout, /^\s+resource\s+sqlite:\/\/shop\/schema/m);
      assert.match(r.stdout, /^\s+template\s+sqlite:\/\/\{database\}\/table\/\{table\}\/schema/m);
      assert.match(r.stdout, /^\s+prompt\s+explore_database/m);
      assert.match(r.stderr, new RegExp(`database shop: ${dbPath} \\(read-only\\)`));
      const w = await list(rw());
      assert.match(w.stdout, /^\s+tool\s+execute\b/m, w.stdout);
    });

    test('unconfigured, it loads and says how to configure it', async () => {
      const r = await list(undefined);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /no databases configured; add them under plugins\.sqlite\.databases/);
    });

    test('bad configs are refused with a line that names the problem', async () => {
      const missing = path.join(path.dirname(dbPath), 'missing.db');
      assert.match(await loadError(ro({ maxrows: 5 })), /config: unknown key "maxrows" \(known: databases, maxRows/);
      assert.match(await loadError(ro({ maxRows: 0 })), /"maxRows" must be an integer from 1/);
      assert.match(await loadError(ro({ timeoutMs: 'soon' })), /"timeoutMs" must be an integer/);
      assert.match(await loadError({ databases: {} }), /"databases" must be a non-empty object/);
      assert.match(
        await loadError({ databases: { shop: { path: dbPath, writable: true } } }),
        /databases\.shop: unknown key "writable" \(known: path, write\)/,
      );
      assert.match(await loadError({ databases: { shop: { path: dbPath, write: 'yes' } } }), /databases\.shop\.write must be true or false/);
      assert.match(await loadError({ databases: { shop: {} } }), /databases\.shop needs a "path"/);
      assert.match(await loadError({ databases: { 'a/b': { path: dbPath } } }), /"a\/b" is not a usable name/);
      // A read-only database must exist (it is never created).
      assert.match(await loadError({ databases: { gone: { path: missing } } }), /databases\.gone: cannot open database "gone"/);
      assert.equal(fs.existsSync(missing), false);
      // A file that is not a database.
      const junk = path.join(path.dirname(dbPath), 'junk.db');
      fs.writeFileSync(junk, 'this is not a database, just some text that is long enough'.repeat(20));
      assert.match(await loadError({ databases: { junk: { path: junk } } }), /file is not a database/);
    });
  });
});
