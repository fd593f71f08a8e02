// SPDX-License-Identifier: MIT
// ABI 1.0 stays loadable: tests/abi/abi10.c, built against the frozen
// tests/abi/1.0/mcpd.h, is loaded into the current mcpd and driven by the
// official SDK client.  Every answer below is what that plugin was built
// to give; a later host that changes one has broken the frozen ABI.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { BUILDDIR, configFile, makeTempDir, MCPD, resultText, runMcpd, sleep, until, withTimeout } from './lib.mjs';

const ABI10 = path.join(BUILDDIR, 'tests', 'abi', '.libs', 'abi10.so');

/** A private plugin directory (0700) holding a copy of abi10.so (0644). */
async function pluginDir() {
  if (!fs.existsSync(ABI10)) throw new Error(`${ABI10} is not built (run make check)`);
  const dir = await makeTempDir('mcpd-abi-');
  const dest = path.join(dir, 'abi10.so');
  await fsp.copyFile(ABI10, dest);
  await fsp.chmod(dest, 0o644);
  return dir;
}

/**
 * Connects an SDK client to a fresh mcpd serving only abi10.  `received`
 * keeps every message as it came off the wire: the SDK drops fields its
 * schemas do not know, and hands a notification to its handler only after
 * a response read in the same chunk was handled.
 */
async function connect(t, args = []) {
  const dir = await pluginDir();
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
  const client = new Client({ name: 'mcpd-e2e-abi', version: '0.0.0' });
  t.after(async () => {
    await client.close().catch(() => {});
  });
  await withTimeout(client.connect(transport), 10000, 'SDK client connect');
  const received = [];
  const onmessage = transport.onmessage;
  transport.onmessage = (m, extra) => {
    received.push(m);
    onmessage?.(m, extra);
  };
  return { client, received, stderr: () => stderr };
}

/** Asserts that `promise` rejects with McpError `code`; returns the error. */
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

const text = async (client, name, args = {}) => resultText(await client.callTool({ name, arguments: args }));
const stats = (client) => text(client, 'abi10_stats');

const TOOLS = [
  'abi10_async',
  'abi10_blocks',
  'abi10_data_a',
  'abi10_data_b',
  'abi10_dynamic',
  'abi10_error',
  'abi10_fail',
  'abi10_host',
  'abi10_init_tool',
  'abi10_json',
  'abi10_log',
  'abi10_request',
  'abi10_stats',
  'abi10_touch',
];

describe('ABI 1.0 plugin in the current host', () => {
  test('loads: --list shows it, nothing refused', async () => {
    const dir = await pluginDir();
    const res = await runMcpd(['--plugins', dir, '--list']);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.match(res.stdout, /^abi10\s+1\.0\.0\s/m);
    assert.doesNotMatch(res.stdout, /NOT LOADED/);
  });

  test('capabilities cover tools, resources, prompts, completion, logging', async (t) => {
    const { client } = await connect(t);
    const caps = client.getServerCapabilities();
    assert.equal(caps?.tools?.listChanged, true);
    assert.equal(caps?.resources?.subscribe, true);
    assert.equal(caps?.resources?.listChanged, true);
    assert.equal(caps?.prompts?.listChanged, true);
    assert.ok(caps?.completions, JSON.stringify(caps));
    assert.ok(caps?.logging, JSON.stringify(caps));
  });

  describe('tools', () => {
    test('listed with titles, annotations and schemas; init() added one', async (t) => {
      const { client } = await connect(t);
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((x) => x.name).sort(), TOOLS);
      const req = tools.find((x) => x.name === 'abi10_request');
      assert.equal(req.title, 'Request echo');
      assert.equal(req.description, 'Reports what the request carried.');
      assert.deepEqual(req.inputSchema, {
        type: 'object',
        properties: { n: { type: 'integer', minimum: 0 } },
      });
      assert.deepEqual(req.outputSchema, { type: 'object' });
      const { readOnlyHint, destructiveHint, idempotentHint, openWorldHint } = req.annotations;
      assert.deepEqual(
        { readOnlyHint, destructiveHint, idempotentHint, openWorldHint },
        { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      );
      // A NULL input schema is listed as a plain object schema.
      assert.deepEqual(tools.find((x) => x.name === 'abi10_host').inputSchema, { type: 'object' });
      assert.equal(await text(client, 'abi10_init_tool'), 'run-time tool init');
    });

    test('INLINE: the request carries name, data, arguments and _meta', async (t) => {
      const { client } = await connect(t);
      const res = await client.callTool({ name: 'abi10_request', arguments: { n: 3 }, _meta: { hint: 'x' } });
      assert.deepEqual(res.structuredContent, {
        name: 'abi10_request',
        data: 'request-data',
        toolName: 'abi10_request',
        sizeOk: true,
        selfOk: true,
        variablesNull: true,
        arguments: { n: 3 },
        meta: { hint: 'x' },
      });
      const none = await client.callTool({ name: 'abi10_request' });
      assert.deepEqual(none.structuredContent.arguments, {});
      assert.equal(none.structuredContent.meta, null);
      const bad = await client.callTool({ name: 'abi10_request', arguments: { n: -1 } });
      assert.equal(bad.isError, true);
      assert.match(resultText(bad), /\bn\b/);
    });

    test('the host table is the 1.0 one or longer; config reaches init()', async (t) => {
      const { client } = await connect(t);
      assert.equal(await text(client, 'abi10_host'), 'abi 1, table ok, label abi10');
      const cfg = await configFile({ plugins: { abi10: { label: 'from-config' } } });
      const other = await connect(t, ['--config', cfg]);
      assert.equal(await text(other.client, 'abi10_host'), 'abi 1, table ok, label from-config');
    });

    test('a bad config value fails init() with its message', async () => {
      const dir = await pluginDir();
      const cfg = await configFile({ plugins: { abi10: { label: 5 } } });
      const res = await runMcpd(['--plugins', dir, '--config', cfg, '--list']);
      assert.equal(res.code, 1);
      assert.match(res.stdout + res.stderr, /config: label must be a string/);
    });

    test('POOL: entries that share a callback are told apart by data', async (t) => {
      const { client } = await connect(t);
      assert.equal(await text(client, 'abi10_data_a'), 'data A');
      assert.equal(await text(client, 'abi10_data_b'), 'data B');
    });

    test('POOL: one content block of every kind', async (t) => {
      const { client } = await connect(t);
      const res = await client.callTool({ name: 'abi10_blocks' });
      assert.notEqual(res.isError, true);
      assert.deepEqual(res.content, [
        { type: 'text', text: 'text' },
        { type: 'text', text: 'a\u0000b' },
        { type: 'text', text: 'mprintf 10' },
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
        { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
        {
          type: 'resource_link',
          uri: 'abi10://static',
          name: 'static',
          description: 'The static resource.',
          mimeType: 'text/plain',
        },
        { type: 'resource_link', uri: 'abi10://multi', name: 'multi' },
        { type: 'resource', resource: { uri: 'abi10://embedded', mimeType: 'text/plain', text: 'embedded' } },
        {
          type: 'resource',
          resource: { uri: 'abi10://blob', mimeType: 'application/octet-stream', blob: 'AAEC' },
        },
      ]);
    });

    test('ASYNC: progress from its thread precedes the result', async (t) => {
      const { client, received } = await connect(t);
      const res = await client.callTool({ name: 'abi10_async', arguments: { steps: 3 } }, undefined, {
        onprogress: () => {},
      });
      assert.equal(resultText(res), 'async done after 3 steps');
      const progress = received.filter((m) => m.method === 'notifications/progress');
      const token = progress[0]?.params.progressToken;
      assert.deepEqual(
        progress.map((m) => m.params),
        [1, 2, 3].map((n) => ({ progressToken: token, progress: n, total: 3, message: 'step' })),
      );
      const answered = received.findIndex((m) => 'result' in m && m.result.content?.[0]?.text === res.content[0].text);
      assert.ok(received.indexOf(progress[2]) < answered, 'progress came after the result');
    });

    test('ASYNC: cancellation runs on_cancel, which wakes the thread', async (t) => {
      const { client } = await connect(t);
      const ac = new AbortController();
      const call = client.callTool({ name: 'abi10_async', arguments: { wait: true } }, undefined, {
        signal: ac.signal,
      });
      await sleep(100);
      ac.abort('test');
      await assert.rejects(call);
      await until(async () => (await stats(client)) === 'subscribed 0, cancels 1, seen 1', 5000, 'on_cancel to run', 20);
      // The plugin still serves, and the thread finished (another call completes).
      assert.equal(await text(client, 'abi10_async', { steps: 1 }), 'async done after 1 steps');
    });

    test('result_error is an isError result; fail is -32602; result_json replaces', async (t) => {
      const { client } = await connect(t);
      const res = await client.callTool({ name: 'abi10_error' });
      assert.equal(res.isError, true);
      assert.equal(resultText(res), 'abi10 failed on purpose');
      const err = await rejectsWith(client.callTool({ name: 'abi10_fail' }), -32602);
      assert.match(err.message, /abi10 rejects this call/);
      const whole = await client.callTool({ name: 'abi10_json' });
      assert.deepEqual(whole.content, [{ type: 'text', text: 'whole' }]);
      assert.notEqual(whole.isError, true);
    });

    test('log reaches a client that asked for its level', async (t) => {
      const { client } = await connect(t);
      const lines = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => lines.push(n.params));
      await client.setLoggingLevel('info');
      assert.equal(await text(client, 'abi10_log'), 'logged');
      await until(() => lines.length > 0, 5000, 'the log notification', 20);
      assert.deepEqual(lines[0], { level: 'info', logger: 'abi10', data: 'abi10 log 42' });
    });
  });

  describe('resources', () => {
    test('listed with their fields', async (t) => {
      const { client } = await connect(t);
      const { resources } = await client.listResources();
      assert.deepEqual(
        resources.map((r) => r.uri).sort(),
        ['abi10://broken', 'abi10://missing', 'abi10://multi', 'abi10://slow', 'abi10://static'],
      );
      const stat = resources.find((r) => r.uri === 'abi10://static');
      assert.equal(stat.name, 'static');
      assert.equal(stat.title, 'Static');
      assert.equal(stat.description, 'Always the same text.');
      assert.equal(stat.mimeType, 'text/plain');
    });

    test('reads: INLINE, POOL with several contents, ASYNC', async (t) => {
      const { client } = await connect(t);
      assert.deepEqual((await client.readResource({ uri: 'abi10://static' })).contents, [
        { uri: 'abi10://static', mimeType: 'text/plain', text: 'static v1' },
      ]);
      assert.deepEqual((await client.readResource({ uri: 'abi10://multi' })).contents, [
        { uri: 'abi10://multi', mimeType: 'text/plain', text: 'part one' },
        { uri: 'abi10://multi', mimeType: 'application/octet-stream', blob: 'AAEC' },
        { uri: 'abi10://multi#2', mimeType: 'text/markdown', text: '# part two' },
      ]);
      assert.deepEqual((await client.readResource({ uri: 'abi10://slow' })).contents, [
        { uri: 'abi10://slow', mimeType: 'text/plain', text: 'slow v1' },
      ]);
    });

    test('fail(NOT_FOUND) is -32002 with the URI; result_error on a read is -32603', async (t) => {
      const { client } = await connect(t);
      const err = await rejectsWith(client.readResource({ uri: 'abi10://missing' }), -32002);
      assert.deepEqual(err.data, { uri: 'abi10://missing' });
      assert.match(err.message, /abi10 has no abi10:\/\/missing/);
      await rejectsWith(client.readResource({ uri: 'abi10://broken' }), -32603);
    });

    test('templates: listed, matched, variables decoded, NOT_FOUND', async (t) => {
      const { client } = await connect(t);
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.deepEqual(resourceTemplates.map((x) => x.uriTemplate).sort(), [
        'abi10://files/{+path}',
        'abi10://items/{id}',
      ]);
      const item = resourceTemplates.find((x) => x.name === 'item');
      assert.equal(item.title, 'Item');
      assert.equal(item.description, 'An item by id.');
      assert.equal(item.mimeType, 'text/plain');
      assert.deepEqual((await client.readResource({ uri: 'abi10://items/bravo' })).contents, [
        { uri: 'abi10://items/bravo', mimeType: 'text/plain', text: 'item bravo of abi10://items/bravo' },
      ]);
      const spaced = await client.readResource({ uri: 'abi10://items/x%20y' });
      assert.equal(spaced.contents[0].text, 'item x y of abi10://items/x%20y');
      const file = await client.readResource({ uri: 'abi10://files/a/b/c.txt' });
      assert.equal(file.contents[0].text, 'path a/b/c.txt');
      const err = await rejectsWith(client.readResource({ uri: 'abi10://items/none' }), -32002);
      assert.deepEqual(err.data, { uri: 'abi10://items/none' });
    });

    test('subscribe callbacks, resource_updated and unsubscribe', async (t) => {
      const { client } = await connect(t);
      const updated = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated.push(n.params.uri));
      await client.subscribeResource({ uri: 'abi10://static' });
      await until(async () => (await stats(client)) === 'subscribed 1, cancels 0, seen 0', 5000, 'subscribe(1)', 20);
      assert.equal(await text(client, 'abi10_touch'), 'touched');
      await until(() => updated.length > 0, 5000, 'notifications/resources/updated', 20);
      assert.deepEqual(updated, ['abi10://static']);
      await client.subscribeResource({ uri: 'abi10://items/alpha' });
      await until(async () => (await stats(client)) === 'subscribed 2, cancels 0, seen 0', 5000, 'template subscribe(1)', 20);
      await client.unsubscribeResource({ uri: 'abi10://static' });
      await client.unsubscribeResource({ uri: 'abi10://items/alpha' });
      await until(async () => (await stats(client)) === 'subscribed 0, cancels 0, seen 0', 5000, 'subscribe(0)', 20);
    });
  });

  describe('prompts and completion', () => {
    test('listed with their arguments', async (t) => {
      const { client, received } = await connect(t);
      const { prompts } = await client.listPrompts();
      assert.deepEqual(prompts.map((p) => p.name).sort(), ['abi10_plain', 'abi10_refuse', 'abi10_write']);
      const write = prompts.find((p) => p.name === 'abi10_write');
      assert.equal(write.title, 'Write');
      assert.equal(write.description, 'Asks for a text.');
      assert.equal(write.arguments.length, 2);
      // The SDK's schema has no argument title; the wire has.
      const wire = received.find((m) => m.result?.prompts).result.prompts.find((p) => p.name === 'abi10_write');
      assert.deepEqual(wire.arguments[0], {
        name: 'topic',
        title: 'Topic',
        description: 'What to write about.',
        required: true,
      });
      assert.equal(write.arguments[1].name, 'tone');
      assert.equal(write.arguments[1].description, 'How it should sound.');
      assert.equal(Boolean(write.arguments[1].required), false);
    });

    test('get: messages with roles, optional argument, embedded resource', async (t) => {
      const { client } = await connect(t);
      const res = await client.getPrompt({ name: 'abi10_write', arguments: { topic: 'cats', tone: 'funny' } });
      assert.equal(res.description, 'Asks for a text.');
      assert.deepEqual(res.messages, [
        { role: 'user', content: { type: 'text', text: 'Write about cats in a tone that is funny.' } },
        { role: 'assistant', content: { type: 'text', text: 'Gladly.' } },
        {
          role: 'user',
          content: { type: 'resource', resource: { uri: 'abi10://static', mimeType: 'text/plain', text: 'static v1' } },
        },
      ]);
      const plain = await client.getPrompt({ name: 'abi10_write', arguments: { topic: 'cats' } });
      assert.equal(plain.messages[0].content.text, 'Write about cats.');
      const none = await client.getPrompt({ name: 'abi10_plain' });
      assert.deepEqual(none.messages, [{ role: 'user', content: { type: 'text', text: 'no arguments' } }]);
    });

    test('a missing required argument and fail() are -32602', async (t) => {
      const { client } = await connect(t);
      await rejectsWith(client.getPrompt({ name: 'abi10_write', arguments: { tone: 'funny' } }), -32602);
      const err = await rejectsWith(client.getPrompt({ name: 'abi10_refuse' }), -32602);
      assert.match(err.message, /abi10 refuses abi10_refuse/);
    });

    test('prompt argument completion sees the context', async (t) => {
      const { client } = await connect(t);
      const ref = { type: 'ref/prompt', name: 'abi10_write' };
      const values = async (argument, context) =>
        (await client.complete({ ref, argument, ...(context ? { context: { arguments: context } } : {}) }))
          .completion;
      assert.deepEqual((await values({ name: 'tone', value: '' })).values, ['formal', 'friendly', 'funny']);
      assert.deepEqual((await values({ name: 'tone', value: 'fu' })).values, ['funny']);
      assert.deepEqual((await values({ name: 'tone', value: '' }, { topic: 'cats' })).values, [
        'purring',
        'formal',
        'friendly',
        'funny',
      ]);
      assert.deepEqual((await values({ name: 'tone', value: 'x' })).values, []);
    });

    test('more than 100 candidates: 100 sent, hasMore', async (t) => {
      const { client } = await connect(t);
      const { completion } = await client.complete({
        ref: { type: 'ref/prompt', name: 'abi10_write' },
        argument: { name: 'topic', value: '' },
      });
      assert.equal(completion.values.length, 100);
      assert.equal(completion.values[0], 't000');
      assert.equal(completion.values[99], 't099');
      assert.equal(completion.hasMore, true);
    });

    test('template variable completion with a total', async (t) => {
      const { client } = await connect(t);
      const ref = { type: 'ref/resource', uri: 'abi10://items/{id}' };
      const all = (await client.complete({ ref, argument: { name: 'id', value: '' } })).completion;
      assert.deepEqual(all.values, ['alpha', 'bravo', 'charlie', 'delta', 'echo']);
      assert.equal(all.total, 12);
      assert.equal(all.hasMore, true);
      const some = (await client.complete({ ref, argument: { name: 'id', value: 'b' } })).completion;
      assert.deepEqual(some.values, ['bravo']);
      assert.equal(Boolean(some.hasMore), false);
    });
  });

  test('run-time entries of every kind come and go, with list_changed', async (t) => {
    const { client } = await connect(t);
    const changed = { tools: 0, resources: 0, prompts: 0 };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed.tools++);
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => changed.resources++);
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => changed.prompts++);

    assert.equal(await text(client, 'abi10_dynamic', { op: 'add' }), 'added; bad name refused with a reason');
    await until(() => changed.tools && changed.resources && changed.prompts, 5000, 'list_changed', 20);
    assert.ok((await client.listTools()).tools.some((x) => x.name === 'abi10_dyn_tool'));
    assert.ok((await client.listResources()).resources.some((x) => x.uri === 'abi10://dyn'));
    assert.ok(
      (await client.listResourceTemplates()).resourceTemplates.some((x) => x.uriTemplate === 'abi10://dyn/{x}'),
    );
    assert.ok((await client.listPrompts()).prompts.some((x) => x.name === 'abi10_dyn_prompt'));
    assert.equal(await text(client, 'abi10_dyn_tool'), 'run-time tool dyn');
    assert.equal((await client.readResource({ uri: 'abi10://dyn' })).contents[0].text, 'run-time resource');
    assert.equal((await client.readResource({ uri: 'abi10://dyn/q' })).contents[0].text, 'run-time template');
    const prompt = await client.getPrompt({ name: 'abi10_dyn_prompt', arguments: { x: '1' } });
    assert.equal(prompt.messages[0].content.text, 'run-time prompt prompt');
    // The prompt's argument table was copied: its required argument holds.
    await rejectsWith(client.getPrompt({ name: 'abi10_dyn_prompt' }), -32602);

    assert.equal(await text(client, 'abi10_dynamic', { op: 'remove' }), 'removed');
    assert.ok(!(await client.listTools()).tools.some((x) => x.name === 'abi10_dyn_tool'));
    assert.ok(!(await client.listResources()).resources.some((x) => x.uri === 'abi10://dyn'));
    assert.ok(
      !(await client.listResourceTemplates()).resourceTemplates.some((x) => x.uriTemplate === 'abi10://dyn/{x}'),
    );
    assert.ok(!(await client.listPrompts()).prompts.some((x) => x.name === 'abi10_dyn_prompt'));
    await rejectsWith(client.callTool({ name: 'abi10_dyn_tool' }), -32602);
  });
});
