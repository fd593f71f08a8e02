// SPDX-License-Identifier: MIT
// Plugins asking the client (ABI 1.1): sampling, elicitation in form and
// URL mode, and roots, driven by the official MCP TypeScript SDK client
// over stdio against the fixture plugin tests/plugins/asker.c.
//
// Every request a tool sends must reach the client with the payload the
// tool built, and the client's answer -- a result, an error, or silence --
// must reach the tool.  A client that lacks a capability is never sent the
// request that needs it.  Each test taps the transport, so it can assert on
// the JSON-RPC messages exactly as they crossed the pipe.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ElicitationCompleteNotificationSchema,
  ListRootsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { isResponse, makePluginDir, MCPD, sleep, until, withTimeout } from './lib.mjs';

/** Generous: the machine running the tests may be slow and busy. */
const WAIT = 20000;

/**
 * Connects an SDK client declaring `capabilities` to a fresh mcpd serving
 * the asker plugin.  `received` and `sent` record every JSON-RPC message
 * in wire order.  mcpd must exit 0 on EOF, with no sanitizer report.
 */
async function connect(t, { capabilities = {}, args = [], setup } = {}) {
  const dir = await makePluginDir(['asker']);
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
  const received = [];
  const sent = [];
  const errors = [];
  // Protocol.connect() chains to a handler already set, so this one sees
  // every message before the SDK parses it.
  transport.onmessage = (message) => received.push(message);
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    sent.push(message);
    return send(message, options);
  };
  const client = new Client({ name: 'mcpd-e2e-client', version: '0.0.0' }, { capabilities });
  client.onerror = (err) => errors.push(err);
  // Handlers go in before connect: mcpd asks for roots right after
  // notifications/initialized.
  if (setup) setup(client);
  let child;
  t.after(async () => {
    await client.close().catch(() => {});
    if (child) assert.equal(child.exitCode, 0, `mcpd exited with ${child.exitCode}/${child.signalCode}:\n${stderr}`);
    assert.doesNotMatch(stderr, /Sanitizer|runtime error:/, stderr);
  });
  await withTimeout(client.connect(transport), WAIT, 'SDK client connect');
  child = transport._process;
  assert.ok(child, 'SDK internals changed: no _process on the transport');
  return { client, child, received, sent, errors, stderr: () => stderr };
}

/** The requests mcpd sent the client with `method`, in order. */
function requestsOf(conn, method) {
  return conn.received.filter((m) => m.method === method && 'id' in m);
}

function notificationsOf(conn, method) {
  return conn.received.filter((m) => m.method === method && !('id' in m));
}

/** The client's response to mcpd's request `id`, or undefined. */
function answerTo(conn, id) {
  return conn.sent.find((m) => isResponse(m) && m.id === id);
}

/** The single text block of a tool result. */
function textOf(res) {
  assert.equal(res.content?.length, 1, JSON.stringify(res));
  assert.equal(res.content[0].type, 'text', JSON.stringify(res));
  return res.content[0].text;
}

/** A promise and the function that resolves it. */
function deferred() {
  let resolve;
  const promise = new Promise((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A handler's wait for mcpd to cancel its request. */
function untilAborted(signal) {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

const SAMPLING_PARAMS = {
  messages: [{ role: 'user', content: { type: 'text', text: 'What is 2+2? Answer "4/four".' } }],
  systemPrompt: 'Be brief.',
  maxTokens: 50,
  temperature: 0.5,
};

const SAMPLING_RESULT = {
  role: 'assistant',
  content: { type: 'text', text: '4/four ✓' },
  model: 'test-model',
  stopReason: 'endTurn',
};

/* ------------------------------------------------------------------------ */

describe('asking the client (SDK client, asker plugin)', () => {
  test('sampling: the request reaches the client as built, its answer reaches the tool', async (t) => {
    const asked = [];
    const conn = await connect(t, {
      capabilities: { sampling: {} },
      setup: (client) =>
        client.setRequestHandler(CreateMessageRequestSchema, (request) => {
          asked.push(request.params);
          return SAMPLING_RESULT;
        }),
    });
    const res = await conn.client.callTool({
      name: 'ask',
      arguments: { method: 'sampling/createMessage', params: SAMPLING_PARAMS },
    });
    assert.notEqual(res.isError, true, JSON.stringify(res));
    assert.deepEqual(JSON.parse(textOf(res)), SAMPLING_RESULT);
    assert.equal(asked.length, 1);
    const [request] = requestsOf(conn, 'sampling/createMessage');
    assert.deepEqual(request.params, SAMPLING_PARAMS);
    // mcpd's ids cannot collide with the client's integers.
    assert.equal(typeof request.id, 'string');
    assert.deepEqual(answerTo(conn, request.id).result, SAMPLING_RESULT);
  });

  test('elicitation, form mode: payload out, answer back', async (t) => {
    const params = {
      message: 'Delete "/tmp/x"?',
      requestedSchema: {
        type: 'object',
        properties: {
          confirm: { type: 'boolean', title: 'Confirm', default: false },
          reason: { type: 'string', maxLength: 20 },
        },
        required: ['confirm'],
      },
    };
    const answer = { action: 'accept', content: { confirm: true, reason: 'done/over' } };
    const conn = await connect(t, {
      capabilities: { elicitation: {} },
      setup: (client) => client.setRequestHandler(ElicitRequestSchema, () => answer),
    });
    const res = await conn.client.callTool({ name: 'ask', arguments: { method: 'elicitation/create', params } });
    assert.notEqual(res.isError, true, JSON.stringify(res));
    assert.deepEqual(JSON.parse(textOf(res)), answer);
    const [request] = requestsOf(conn, 'elicitation/create');
    assert.deepEqual(request.params, params);
  });

  test('elicitation, URL mode: the request, then notifications/elicitation/complete for its id', async (t) => {
    const completed = [];
    const conn = await connect(t, {
      capabilities: { elicitation: { url: {} } },
      setup: (client) => {
        client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept' }));
        client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => completed.push(n.params));
      },
    });
    const res = await conn.client.callTool({
      name: 'url_elicit',
      arguments: { url: 'https://example.com/authorize?state=a/b', id: 'elicit-42', message: 'Sign in' },
    });
    assert.notEqual(res.isError, true, JSON.stringify(res));
    assert.deepEqual(JSON.parse(textOf(res)), { action: 'accept' });
    const [request] = requestsOf(conn, 'elicitation/create');
    assert.deepEqual(request.params, {
      mode: 'url',
      message: 'Sign in',
      url: 'https://example.com/authorize?state=a/b',
      elicitationId: 'elicit-42',
    });
    const notes = notificationsOf(conn, 'notifications/elicitation/complete');
    assert.deepEqual(
      notes.map((n) => n.params),
      [{ elicitationId: 'elicit-42' }],
    );
    assert.deepEqual(completed, [{ elicitationId: 'elicit-42' }]);
    // It went out before the call's response.
    const call = conn.sent.findLast((m) => m.method === 'tools/call');
    const responseAt = conn.received.findIndex((m) => isResponse(m) && m.id === call.id);
    assert.ok(conn.received.indexOf(notes[0]) < responseAt, 'the completion came after the response');
  });

  test('elicitation, URL mode, declined: no completion notification', async (t) => {
    const conn = await connect(t, {
      capabilities: { elicitation: { url: {} } },
      setup: (client) => client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'decline' })),
    });
    const res = await conn.client.callTool({
      name: 'url_elicit',
      arguments: { url: 'https://example.com/pay', id: 'elicit-7' },
    });
    assert.deepEqual(JSON.parse(textOf(res)), { action: 'decline' });
    assert.deepEqual(await conn.client.ping(), {});
    assert.deepEqual(notificationsOf(conn, 'notifications/elicitation/complete'), []);
  });

  test('roots/list: fetched after initialization, and on request', async (t) => {
    const roots = [
      { uri: 'file:///home/user/project', name: 'Project' },
      { uri: 'file:///tmp/scratch%20dir' },
    ];
    const conn = await connect(t, {
      capabilities: { roots: {} },
      setup: (client) => client.setRequestHandler(ListRootsRequestSchema, () => ({ roots })),
    });
    // mcpd asked by itself once the session was initialized.
    await until(
      () => requestsOf(conn, 'roots/list').some((r) => answerTo(conn, r.id)),
      WAIT,
      'the answer to mcpd\u2019s own roots/list', 10);
    const seen = await conn.client.callTool({ name: 'roots', arguments: {} });
    assert.notEqual(seen.isError, true, JSON.stringify(seen));
    assert.deepEqual(JSON.parse(textOf(seen)), roots);

    const asked = await conn.client.callTool({ name: 'ask', arguments: { method: 'roots/list' } });
    assert.notEqual(asked.isError, true, JSON.stringify(asked));
    assert.deepEqual(JSON.parse(textOf(asked)), { roots });
    const requests = requestsOf(conn, 'roots/list');
    assert.equal(requests.length, 2, JSON.stringify(requests));
    assert.equal(requests[1].params, undefined, 'the tool sent no params, nor should mcpd');
  });

  test('a client without the capability: the tool fails at once, nothing is sent', async (t) => {
    const conn = await connect(t, { capabilities: { sampling: {}, elicitation: {} } });
    const cases = [
      ['sampling/createMessage', { ...SAMPLING_PARAMS, tools: [{ name: 'x', inputSchema: { type: 'object' } }] }, /sampling\.tools/],
      ['elicitation/create', { mode: 'url', message: 'm', url: 'https://example.com/', elicitationId: 'e' }, /elicitation\.url/],
      ['roots/list', undefined, /roots/],
      ['tools/list', {}, /not sampling\/createMessage/],
    ];
    for (const [method, params, why] of cases) {
      const res = await conn.client.callTool({ name: 'ask', arguments: params ? { method, params } : { method } });
      assert.equal(res.isError, true, `${method}: ${JSON.stringify(res)}`);
      assert.match(textOf(res), why, method);
    }
    const bare = await connect(t);
    for (const [method, params, why] of [
      ['sampling/createMessage', SAMPLING_PARAMS, /did not declare the sampling capability/],
      ['elicitation/create', { message: 'm', requestedSchema: { type: 'object', properties: {} } }, /elicitation/],
    ]) {
      const res = await bare.client.callTool({ name: 'ask', arguments: { method, params } });
      assert.equal(res.isError, true, `${method}: ${JSON.stringify(res)}`);
      assert.match(textOf(res), why, method);
    }
    // The ASYNC path is refused the same way, before anything is sent.
    const res = await bare.client.callTool({
      name: 'ask_async',
      arguments: { method: 'sampling/createMessage', params: SAMPLING_PARAMS, count: 2 },
    });
    assert.deepEqual(
      res.content.map((c) => c.text.replace(/:.*/, '')),
      ['refused', 'refused'],
    );
    const roots = await bare.client.callTool({ name: 'roots', arguments: {} });
    assert.equal(roots.isError, true, JSON.stringify(roots));
    for (const c of [conn, bare]) {
      assert.deepEqual(
        c.received.filter((m) => 'id' in m && 'method' in m),
        [],
        'mcpd sent the client a request anyway',
      );
    }
  });

  test('a client that never answers: notifications/cancelled after --request-timeout, -32001, the session goes on', async (t) => {
    let silent = true;
    const aborted = [];
    const conn = await connect(t, {
      capabilities: { sampling: {} },
      args: ['--request-timeout', '300'],
      setup: (client) =>
        client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
          if (!silent) return SAMPLING_RESULT;
          await untilAborted(extra.signal);
          aborted.push(extra.requestId);
          return SAMPLING_RESULT; // dropped by the SDK: the request was cancelled
        }),
    });
    const res = await withTimeout(
      conn.client.callTool({ name: 'ask', arguments: { method: 'sampling/createMessage', params: SAMPLING_PARAMS } }),
      WAIT,
      'the tool after the timeout',
    );
    assert.equal(res.isError, true, JSON.stringify(res));
    assert.match(textOf(res), /\(-32001\)$/);
    const [request] = requestsOf(conn, 'sampling/createMessage');
    const cancels = notificationsOf(conn, 'notifications/cancelled');
    assert.deepEqual(
      cancels.map((n) => n.params.requestId),
      [request.id],
    );
    await until(() => aborted.length === 1, WAIT, 'the SDK handler to see the cancellation', 10);
    assert.deepEqual(aborted, [request.id]);
    assert.equal(answerTo(conn, request.id), undefined, 'the client answered a cancelled request');

    silent = false;
    assert.deepEqual(await conn.client.ping(), {});
    const again = await conn.client.callTool({
      name: 'ask',
      arguments: { method: 'sampling/createMessage', params: SAMPLING_PARAMS },
    });
    assert.deepEqual(JSON.parse(textOf(again)), SAMPLING_RESULT);
  });

  test('a client answering with an error: the tool sees its code and message', async (t) => {
    const conn = await connect(t, {
      capabilities: { elicitation: {} },
      setup: (client) =>
        client.setRequestHandler(ElicitRequestSchema, () => {
          throw new McpError(-32050, 'the user is away');
        }),
    });
    const res = await conn.client.callTool({
      name: 'ask',
      arguments: { method: 'elicitation/create', params: { message: 'm', requestedSchema: { type: 'object', properties: {} } } },
    });
    assert.equal(res.isError, true, JSON.stringify(res));
    const [request] = requestsOf(conn, 'elicitation/create');
    const { error } = answerTo(conn, request.id);
    assert.equal(error.code, -32050);
    assert.match(error.message, /the user is away/);
    assert.equal(textOf(res), `${error.message} (${error.code})`);
  });

  test('cancelling the call while its request to the client is pending cancels that request', async (t) => {
    const invoked = deferred();
    const aborted = [];
    const conn = await connect(t, {
      capabilities: { elicitation: {} },
      setup: (client) =>
        client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
          invoked.resolve();
          await untilAborted(extra.signal);
          aborted.push(extra.requestId);
          return { action: 'cancel' };
        }),
    });
    const controller = new AbortController();
    const pending = conn.client.callTool(
      {
        name: 'ask',
        arguments: { method: 'elicitation/create', params: { message: 'm', requestedSchema: { type: 'object', properties: {} } } },
      },
      undefined,
      { signal: controller.signal },
    );
    await withTimeout(invoked.promise, WAIT, 'the elicitation to reach the client');
    controller.abort('the test cancels');
    await assert.rejects(pending);
    const call = conn.sent.findLast((m) => m.method === 'tools/call');
    assert.equal(conn.sent.findLast((m) => m.method === 'notifications/cancelled')?.params?.requestId, call.id);

    const [request] = requestsOf(conn, 'elicitation/create');
    await until(
      () => notificationsOf(conn, 'notifications/cancelled').some((n) => n.params.requestId === request.id),
      WAIT,
      'notifications/cancelled for the elicitation', 10);
    await until(() => aborted.length === 1, WAIT, 'the SDK handler to see the cancellation', 10);
    assert.deepEqual(await conn.client.ping(), {});
    // Time for a response that must not come.
    await sleep(300);
    assert.equal(
      conn.received.findIndex((m) => isResponse(m) && m.id === call.id),
      -1,
      'a response arrived for the cancelled call',
    );
    assert.equal(answerTo(conn, request.id), undefined);
    assert.ok(
      !conn.errors.some((e) => /unknown message ID/.test(String(e))),
      `late response: ${conn.errors.join('; ')}`,
    );
  });

  test('roots change mid-session: on_roots_changed runs, call_roots sees the new list', async (t) => {
    let roots = [{ uri: 'file:///one', name: 'one' }];
    const conn = await connect(t, {
      capabilities: { roots: { listChanged: true } },
      setup: (client) => client.setRequestHandler(ListRootsRequestSchema, () => ({ roots })),
    });
    const changes = async () => Number(textOf(await conn.client.callTool({ name: 'roots_changes', arguments: {} })));
    const current = async () => JSON.parse(textOf(await conn.client.callTool({ name: 'roots', arguments: {} })));

    await until(
      () => requestsOf(conn, 'roots/list').some((r) => answerTo(conn, r.id)),
      WAIT,
      'the first roots/list', 10);
    assert.deepEqual(await current(), roots);
    const before = await changes();

    roots = [
      { uri: 'file:///two', name: 'two' },
      { uri: 'file:///three' },
    ];
    await conn.client.sendRootsListChanged();
    const deadline = Date.now() + WAIT;
    while ((await changes()) <= before) {
      assert.ok(Date.now() < deadline, 'on_roots_changed never ran');
      await sleep(20);
    }
    assert.deepEqual(await current(), roots);
    assert.equal(requestsOf(conn, 'roots/list').length, 2);
  });

  test('two requests in flight from one ASYNC call, answered out of order', async (t) => {
    const ids = [];
    const conn = await connect(t, {
      capabilities: { sampling: {} },
      setup: (client) =>
        client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
          const n = ids.push(extra.requestId) - 1;
          // The first waits until the second has been answered.
          if (n === 0) await until(() => ids.length === 2 && answerTo(conn, ids[1]), WAIT, 'the second answer', 10);
          return { ...SAMPLING_RESULT, content: { type: 'text', text: `answer ${n}` } };
        }),
    });
    const res = await conn.client.callTool({
      name: 'ask_async',
      arguments: { method: 'sampling/createMessage', params: SAMPLING_PARAMS, count: 2 },
    });
    assert.notEqual(res.isError, true, JSON.stringify(res));
    const requests = requestsOf(conn, 'sampling/createMessage');
    assert.deepEqual(
      requests.map((r) => r.id),
      ids,
    );
    for (const r of requests) assert.deepEqual(r.params, SAMPLING_PARAMS);
    // The client answered the second first...
    const answered = conn.sent.filter((m) => isResponse(m) && ids.includes(m.id)).map((m) => m.id);
    assert.deepEqual(answered, [ids[1], ids[0]]);
    // ...and each answer reached the tool as the answer to its request.
    assert.deepEqual(
      res.content.map((c) => JSON.parse(c.text).content.text),
      ['answer 0', 'answer 1'],
    );
  });
});
