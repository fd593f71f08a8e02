// SPDX-License-Identifier: MIT
// mcpd driven by the official MCP TypeScript SDK client (the same code most
// MCP hosts are built on), over its stdio transport.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  LATEST_PROTOCOL_VERSION,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { makePluginDir, MCPD, resultText, sleep, until, withTimeout } from './lib.mjs';

/** Connects an SDK client to a fresh mcpd serving `plugins`. */
async function connect(t, plugins = ['echo'], args = []) {
  const dir = await makePluginDir(plugins);
  const transport = new StdioClientTransport({
    command: MCPD,
    args: ['--plugins', dir, '--no-watch', ...args],
    env: process.env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d;
  });
  const client = new Client({ name: 'mcpd-e2e-sdk', version: '0.0.0' });
  t.after(async () => {
    await client.close().catch(() => {});
  });
  await withTimeout(client.connect(transport), 10000, 'SDK client connect');
  return { client, transport, stderr: () => stderr };
}

describe('official SDK client', () => {
  test('connects, negotiates the latest revision, pings', async (t) => {
    const { client } = await connect(t);
    assert.equal(client.getServerVersion()?.name, 'mcpd');
    assert.equal(client.getServerCapabilities()?.tools?.listChanged, true);
    assert.deepEqual(await client.ping(), {});
    // The SDK only accepts a version it supports; mcpd answered its latest.
    assert.equal(LATEST_PROTOCOL_VERSION, '2025-11-25');
  });

  test('listTools shows echo with its input schema', async (t) => {
    const { client } = await connect(t);
    const { tools } = await client.listTools();
    const echo = tools.find((x) => x.name === 'echo');
    assert.ok(echo, `echo not listed: ${JSON.stringify(tools)}`);
    assert.equal(echo.inputSchema.type, 'object');
    assert.equal(echo.inputSchema.properties?.text?.type, 'string');
    assert.ok(echo.inputSchema.required?.includes('text'));
    assert.equal(typeof echo.description, 'string');
  });

  describe('echo round-trips text exactly', () => {
    const controls = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join('');
    const cases = {
      'empty string': '',
      'plain ASCII': 'hello, world',
      emoji: '😀 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈',
      CJK: '漢字 かな カナ 한국어 中文',
      'combining marks': 'e\u0301 a\u0308 n\u0303 Z\u0351\u0362\u034e',
      'right-to-left': 'שלום مرحبا',
      'astral plane': '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𐍈 🀄',
      quotes: `"double" 'single' \`back\``,
      backslashes: 'C:\\path\\to \\\\server \\n not-a-newline \\u0041',
      newlines: 'line1\nline2\r\nline3\rline4\n\n',
      tabs: '\tcol1\tcol2\t',
      'control characters': controls,
      'DEL, BOM, line/paragraph separators': '\u007f \ufeff \u2028 \u2029 \u0085',
      'slashes and JSON-looking text': 'https://example.com/a/b?c=d </script> {"id":1,"method":"ping"}',
      'a long line': 'x'.repeat(100000),
    };
    for (const [name, text] of Object.entries(cases)) {
      test(name, async (t) => {
        const { client } = await connect(t);
        const res = await client.callTool({ name: 'echo', arguments: { text } });
        assert.notEqual(res.isError, true, JSON.stringify(res));
        assert.equal(res.content.length, 1);
        assert.equal(res.content[0].type, 'text');
        assert.equal(res.content[0].text, text);
      });
    }
    test('embedded NUL character (\\u0000)', async (t) => {
      const { client } = await connect(t);
      const text = 'before\u0000after';
      const res = await client.callTool({ name: 'echo', arguments: { text } });
      assert.equal(resultText(res), text);
    });
  });

  test('invalid arguments -> isError result that mentions `text`', async (t) => {
    const { client } = await connect(t);
    for (const args of [{}, { text: 5 }, { text: null }, { text: ['a'] }]) {
      const res = await client.callTool({ name: 'echo', arguments: args });
      assert.equal(res.isError, true, `${JSON.stringify(args)} -> ${JSON.stringify(res)}`);
      assert.match(resultText(res), /\btext\b/);
    }
  });

  test('unknown tool -> McpError -32602', async (t) => {
    const { client } = await connect(t);
    await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), (err) => {
      assert.ok(err instanceof McpError, `not an McpError: ${err}`);
      assert.equal(err.code, -32602);
      return true;
    });
    assert.deepEqual(await client.ping(), {});
  });

  test('calc: calculate "2*(3+4)" -> 14', async (t) => {
    const { client } = await connect(t, ['calc']);
    const res = await client.callTool({ name: 'calculate', arguments: { expression: '2*(3+4)' } });
    assert.notEqual(res.isError, true, JSON.stringify(res));
    assert.equal(resultText(res).trim(), '14');
  });

  test('structured output passes the SDK output-schema check', async (t) => {
    const { client } = await connect(t, ['good']);
    await client.listTools(); // lets the SDK cache output schemas
    const res = await client.callTool({ name: 'add', arguments: { a: 20, b: 22 } });
    assert.deepEqual(res.structuredContent, { sum: 42 });
    assert.equal(resultText(res).trim(), '42');
  });

  test('good.so tools carry outputSchema and annotations', async (t) => {
    const { client } = await connect(t, ['good']);
    const { tools } = await client.listTools();
    const add = tools.find((x) => x.name === 'add');
    assert.equal(add.outputSchema?.type, 'object', JSON.stringify(add));
    assert.equal(add.annotations?.readOnlyHint, true, JSON.stringify(add));
    // A tool declared without a schema still gets an object inputSchema.
    const log = tools.find((x) => x.name === 'log');
    assert.equal(log.inputSchema?.type, 'object', JSON.stringify(log));
  });

  test('aborting a call (AbortSignal) cancels it; the session goes on', { timeout: 30000 }, async (t) => {
    const { client } = await connect(t, ['good']);
    const controller = new AbortController();
    const pending = client.callTool({ name: 'slow', arguments: { ms: 5000 } }, undefined, { signal: controller.signal });
    await sleep(200);
    controller.abort('test');
    await assert.rejects(pending);
    const started = Date.now();
    const res = await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } });
    assert.equal(resultText(res).trim(), '2');
    assert.deepEqual(await client.ping(), {});
    assert.ok(Date.now() - started < 4000, 'the session waited for the cancelled call');
  });

  test('20 concurrent slow calls do not delay ping', { timeout: 120000 }, async (t) => {
    const { client } = await connect(t, ['good']);
    const start = Date.now();
    let firstSlowDone = Infinity;
    let slowDone = 0;
    const slow = Array.from({ length: 20 }, (_, i) =>
      client.callTool({ name: 'slow', arguments: { ms: 500 } }).then((res) => {
        firstSlowDone = Math.min(firstSlowDone, Date.now());
        slowDone++;
        return { i, res };
      }),
    );
    const pings = [];
    while (slowDone < 20) {
      const sent = Date.now();
      await client.ping();
      pings.push({ sent, took: Date.now() - sent, done: Date.now() });
      await sleep(25);
    }
    const results = await Promise.all(slow);
    const allDone = Date.now() - start;
    for (const { i, res } of results) assert.notEqual(res.isError, true, `slow #${i}: ${JSON.stringify(res)}`);
    assert.ok(pings.length >= 2, `only ${pings.length} pings fit into ${allDone} ms`);
    // The first ping went out right after the 20 calls: it must not have
    // waited for any of them.
    assert.ok(
      pings[0].done < firstSlowDone,
      `first ping answered ${pings[0].done - start} ms after start, after the first slow call (${firstSlowDone - start} ms)`,
    );
    // Every ping sent while slow calls were running returned in a small
    // fraction of the time those calls took.
    const slowest = Math.max(...pings.map((p) => p.took));
    assert.ok(slowest < allDone / 2, `slowest ping took ${slowest} ms while the slow calls took ${allDone} ms`);
  });

  test('progress notifications reach onprogress', async (t) => {
    const { client } = await connect(t, ['good']);
    const events = [];
    const res = await client.callTool({ name: 'progress', arguments: { steps: 5 } }, undefined, {
      onprogress: (p) => events.push(p),
    });
    assert.notEqual(res.isError, true, JSON.stringify(res));
    assert.ok(events.length >= 1, 'no progress notification received');
    assert.ok(events.length <= 5, `more progress notifications than steps: ${events.length}`);
    for (let i = 1; i < events.length; i++) {
      assert.ok(events[i].progress > events[i - 1].progress, `progress did not increase: ${JSON.stringify(events)}`);
    }
  });

  test('tools/list_changed after dyn_add; the tool is listed, callable, and gone after dyn_remove', async (t) => {
    const { client } = await connect(t, ['good']);
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
    });
    const before = (await client.listTools()).tools.map((x) => x.name);
    assert.ok(!before.includes('dyn_e2e'));

    await client.callTool({ name: 'dyn_add', arguments: { name: 'dyn_e2e' } });
    await until(() => changes >= 1, 5000, 'notifications/tools/list_changed after dyn_add', 20);
    const during = (await client.listTools()).tools.map((x) => x.name);
    assert.ok(during.includes('dyn_e2e'), `dyn_e2e not listed: ${during}`);
    const called = await client.callTool({ name: 'dyn_e2e', arguments: {} });
    assert.equal(resultText(called), 'dynamic dyn_e2e');

    const seen = changes;
    await client.callTool({ name: 'dyn_remove', arguments: { name: 'dyn_e2e' } });
    await until(() => changes > seen, 5000, 'notifications/tools/list_changed after dyn_remove', 20);
    const after = (await client.listTools()).tools.map((x) => x.name);
    assert.ok(!after.includes('dyn_e2e'), `dyn_e2e still listed: ${after}`);
    await assert.rejects(client.callTool({ name: 'dyn_e2e', arguments: {} }), (err) => err instanceof McpError && err.code === -32602);
  });

  test('closing the client ends mcpd on EOF, without SIGTERM', async (t) => {
    const { client, transport } = await connect(t);
    // The SDK closes stdin, waits 2 s, then escalates to SIGTERM.
    const child = transport._process;
    assert.ok(child, 'SDK internals changed: no _process on the transport');
    const start = Date.now();
    await client.close();
    const elapsed = Date.now() - start;
    assert.equal(child.signalCode, null);
    assert.equal(child.exitCode, 0);
    assert.ok(elapsed < 2000, `mcpd did not exit on EOF; the SDK had to send SIGTERM (${elapsed} ms)`);
  });
});
