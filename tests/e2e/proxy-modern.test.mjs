// SPDX-License-Identifier: MIT
// plugins/proxy in front of an upstream that speaks only 2026-07-28
// (modern-upstream.mjs: no initialize, server/discover, envelopes,
// input_required rounds, subscriptions/listen).  A 2025-11-25 client (SDK
// 1.x) reaches it through mcpd: its calls, progress, an elicitation the
// upstream asks as an input_required round (mcpd asks the client a plain
// request and sends the upstream's call again with the answer), a
// resource subscription and a tool the upstream adds later -- over stdio
// and over Streamable HTTP.  The SDK 2.x
// client (2026-07-28 itself) answers the same question through mcpd's own
// input_required round.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ElicitRequestSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { configFile, makePluginDir, MCPD, resultText, session, sleep, SRCDIR, track, until, withTimeout } from './lib.mjs';

const UPSTREAM = path.join(SRCDIR, 'tests', 'e2e', 'modern-upstream.mjs');

const STDIO = { command: [process.execPath, UPSTREAM] };

async function mcpdArgs(server = STDIO) {
  const dir = await makePluginDir(['proxy']);
  const config = await configFile({ plugins: { proxy: { servers: { m: server } } } });
  return ['--plugins', dir, '--config', config, '--no-watch'];
}

/** The upstream over Streamable HTTP on an ephemeral port: its config. */
async function httpUpstream(t) {
  const child = track(spawn(process.execPath, [UPSTREAM, 'http', '0'], { stdio: ['ignore', 'ignore', 'pipe'] }));
  t.after(() => child.kill('SIGKILL'));
  let err = '';
  const port = await withTimeout(
    new Promise((resolve, reject) => {
      child.stderr.on('data', (d) => {
        err += d;
        const m = /listening on port (\d+)/.exec(err);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`modern-upstream exited ${code}: ${err}`)));
    }),
    10000,
    'modern-upstream to listen',
  );
  return { url: `http://127.0.0.1:${port}/mcp` };
}

/** Connects `client` to mcpd over stdio; closes both after the test. */
async function connect(t, client, Transport, server = STDIO) {
  const transport = new Transport({ command: MCPD, args: await mcpdArgs(server), env: process.env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d;
  });
  t.after(() => client.close().catch(() => {}));
  await withTimeout(client.connect(transport), 20000, 'connect');
  return () => stderr;
}

/** What a 2025-11-25 client does through mcpd with the upstream at
 * `server` (its proxy config). */
async function legacyClientScenario(t, server) {
  {
    const client = new LegacyClient({ name: 'legacy', version: '1' }, { capabilities: { elicitation: {} } });
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      return { action: 'accept', content: { sure: true } };
    });
    const updated = [];
    let changed = 0;
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated.push(n.params.uri));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed++);
    const stderr = await connect(t, client, LegacyStdioTransport, server);

    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((x) => x.name).sort(), ['m_add_tool', 'm_confirm', 'm_greet']);
    assert.match(stderr(), /m: connected to modern-upstream 1\.0 \(protocol 2026-07-28\)/);

    const progress = [];
    const greet = await client.callTool({ name: 'm_greet', arguments: { name: 'Ann' } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    assert.deepEqual(greet.content, [{ type: 'text', text: 'hello Ann' }]);
    assert.equal(greet.resultType, undefined, 'the upstream era does not leak into a legacy result');
    assert.deepEqual(progress, [1, 2], stderr());

    // The upstream's input_required round is a plain elicitation here.
    const done = await client.callTool({ name: 'm_confirm', arguments: { action: 'delete' } });
    assert.deepEqual(asked, ['Really delete?']);
    assert.equal(resultText(done), 'done: delete');

    const read = await client.readResource({ uri: 'note://hello' });
    assert.equal(read.contents[0].text, 'hello');
    // The upstream's not-found (-32602 with data.uri) is this era's -32002.
    await assert.rejects(client.readResource({ uri: 'note://missing' }), (e) => {
      assert.equal(e.code, -32002, String(e));
      return true;
    });
    const { completion } = await client.complete({
      ref: { type: 'ref/prompt', name: 'm_hi' },
      argument: { name: 'who', value: 'wi' },
    });
    assert.deepEqual(completion.values, ['wide']);
    const prompt = await client.getPrompt({ name: 'm_hi', arguments: { who: 'Bo' } });
    assert.equal(prompt.messages[0].content.text, 'say hi to Bo');

    // Subscribing opens the upstream's listen stream for the URI; a tool
    // added upstream arrives as list_changed and can be called.
    await client.subscribeResource({ uri: 'note://hello' });
    await sleep(200);
    await client.callTool({ name: 'm_add_tool', arguments: {} });
    await until(() => updated.includes('note://hello'), 5000, 'resources/updated', 20);
    await until(() => changed > 0, 5000, 'tools/list_changed', 20);
    let names = [];
    const deadline = Date.now() + 5000;
    while (!names.includes('m_late') && Date.now() < deadline) {
      names = (await client.listTools()).tools.map((x) => x.name);
      if (!names.includes('m_late')) await sleep(50);
    }
    assert.ok(names.includes('m_late'), names.join(' '));
    assert.equal(resultText(await client.callTool({ name: 'm_late', arguments: {} })), 'late tool ran');
    assert.equal((await client.readResource({ uri: 'note://hello' })).contents[0].text, 'hello again');
  }
}

describe('proxy: an upstream that speaks only 2026-07-28', () => {
  test('a 2025-11-25 client calls it over stdio, answers its questions and hears its changes', async (t) => {
    await legacyClientScenario(t, STDIO);
  });

  test('the same with the upstream over Streamable HTTP', async (t) => {
    await legacyClientScenario(t, await httpUpstream(t));
  });

  test('the SDK 2.x client answers the upstream through its own input_required round', async (t) => {
    const client = new Client(
      { name: 'modern', version: '1' },
      { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: {} } },
    );
    const asked = [];
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params.message);
      return { action: 'accept', content: { sure: true } };
    });
    await connect(t, client, StdioClientTransport);
    assert.equal(client.getProtocolEra(), 'modern');
    const { tools } = await client.listTools();
    assert.ok(tools.some((x) => x.name === 'm_confirm'), JSON.stringify(tools));
    const res = await client.callTool({ name: 'm_confirm', arguments: { action: 'ship' } });
    assert.equal(resultText(res), 'done: ship');
    assert.ok(asked.length >= 1 && asked.every((m) => m === 'Really ship?'), JSON.stringify(asked));
    assert.equal(resultText(await client.callTool({ name: 'm_greet', arguments: { name: 'Cy' } })), 'hello Cy');
  });

  test('two servers offering the same URI: one holds it, the other one is skipped with a line naming the holder', async (t) => {
    const config = await configFile({
      plugins: { proxy: { servers: { m1: STDIO, m2: { ...STDIO, prefix: 'two_' } } } },
    });
    const mcpd = await session(t, { plugins: ['proxy'], args: ['--config', config, '--no-watch'] });
    const names = (await mcpd.request('tools/list', {})).result.tools.map((x) => x.name);
    assert.ok(names.includes('m1_greet') && names.includes('two_greet'), names.join(' '));
    const { resources } = (await mcpd.request('resources/list', {})).result;
    assert.deepEqual(resources.map((r) => r.uri), ['note://hello']);
    assert.match(mcpd.stderr, /resource "note:\/\/hello" skipped: server "m[12]" offers it already/);
    const read = await mcpd.request('resources/read', { uri: 'note://hello' });
    assert.equal(read.result.contents[0].text, 'hello');
  });
});
