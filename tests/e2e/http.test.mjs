// SPDX-License-Identifier: MIT
// mcpd --transport http: the official SDK client over Streamable HTTP, and
// raw fetch() for each status code the transport answers with.
//
// Each test starts its own mcpd on 127.0.0.1 with port 0 and reads the
// address it bound from its stderr ("listening on http://...").

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { INIT, JSON_HEADERS, answerOf, post, rawSession, startHttp, stop, withTimeout } from './lib.mjs';

describe('HTTP with the SDK client', () => {
  let server;
  before(async () => {
    server = await startHttp(['echo', 'everything']);
  });
  after(async () => {
    assert.equal(await stop(server.child), 0, server.stderr());
  });

  test('tools list and call, two clients at once', async () => {
    const clients = [];
    for (let i = 0; i < 2; i++) {
      const client = new Client({ name: `http-${i}`, version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      clients.push(client);
    }
    assert.notEqual(clients[0].transport.sessionId, clients[1].transport.sessionId);
    for (const [i, client] of clients.entries()) {
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'echo'));
      const r = await client.callTool({ name: 'echo', arguments: { text: `hello ${i}` } });
      assert.deepEqual(r.content, [{ type: 'text', text: `hello ${i}` }]);
    }
    await Promise.all(clients.map((c) => c.transport.terminateSession()));
    await Promise.all(clients.map((c) => c.close()));
  });

  test('progress arrives on the call’s own stream, before the result', async () => {
    const client = new Client({ name: 'progress', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const seen = [];
    const r = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, CallToolResultSchema, {
      onprogress: (p) => seen.push(p.progress),
    });
    assert.ok(seen.length >= 1, 'progress notifications were received');
    assert.ok(Array.isArray(r.content));
    await client.close();
  });

  test('sampling: the tool’s request to the client goes on its POST stream', async () => {
    const client = new Client({ name: 'sampler', version: '1.0.0' }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'sampled!' },
      model: 'test-model',
      stopReason: 'endTurn',
    }));
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const r = await withTimeout(
      client.callTool({ name: 'test_sampling', arguments: { prompt: 'hi' } }),
      5000,
      'test_sampling',
    );
    assert.match(JSON.stringify(r.content), /sampled!/);
    await client.close();
  });

  test('logging/setLevel, then a tool’s log lines reach the client', async () => {
    const client = new Client({ name: 'logs', version: '1.0.0' });
    const logs = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    assert.deepEqual(await client.setLoggingLevel('debug'), {});
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    // Logs relate to no request today: they go on the GET stream.
    for (let i = 0; i < 50 && logs.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(logs.length >= 1, 'log notifications were received');
    await client.close();
  });
});

describe('HTTP status codes', () => {
  let server;
  before(async () => {
    server = await startHttp(['echo']);
  });
  after(async () => {
    assert.equal(await stop(server.child), 0, server.stderr());
  });

  test('initialize creates a session with a random visible-ASCII id', async () => {
    const a = await rawSession(server.url);
    const b = await rawSession(server.url);
    assert.match(a, /^[\x21-\x7e]{32,}$/);
    assert.notEqual(a, b);
  });

  test('a request gets one application/json response', async () => {
    const sid = await rawSession(server.url);
    const res = await post(server.url, { jsonrpc: '2.0', id: 7, method: 'ping' }, { 'mcp-session-id': sid });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /application\/json/);
    assert.deepEqual(await res.json(), { jsonrpc: '2.0', id: 7, result: {} });
  });

  test('valid JSON json-c alone refuses is served, under its own id', async () => {
    const sid = await rawSession(server.url);
    const big = await post(
      server.url,
      '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\\ud800"},"_meta":{"n":100000000000000000000}}}',
      { 'mcp-session-id': sid },
    );
    assert.equal(big.status, 200);
    const body = await answerOf(big);
    assert.equal(body.id, 8, JSON.stringify(body));
    assert.equal(body.result.content[0].text, '\ufffd');
    const nul = await post(
      server.url,
      '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo\\u0000evil","arguments":{"text":"x"}}}',
      { 'mcp-session-id': sid },
    );
    const refused = await answerOf(nul);
    assert.equal(refused.id, 9, JSON.stringify(refused));
    assert.equal(refused.error.code, -32602, JSON.stringify(refused));
    const huge = await post(server.url, '{"jsonrpc":"2.0","id":10,"method":"ping","params":{"x":1e400}}', {
      'mcp-session-id': sid,
    });
    const hugeBody = await huge.json();
    assert.equal(hugeBody.id, 10, JSON.stringify(hugeBody));
    assert.equal(hugeBody.error.code, -32602, JSON.stringify(hugeBody));
    const note = await post(server.url, '{"jsonrpc":"2.0","method":"ping\\u0000x"}', { 'mcp-session-id': sid });
    assert.equal(note.status, 202);
    assert.equal(await note.text(), '');
  });

  test('notifications and responses get 202 with no body', async () => {
    const sid = await rawSession(server.url);
    const n = await post(server.url, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }, { 'mcp-session-id': sid });
    assert.equal(n.status, 202);
    assert.equal(await n.text(), '');
    const r = await post(server.url, { jsonrpc: '2.0', id: 'nobody', result: {} }, { 'mcp-session-id': sid });
    assert.equal(r.status, 202);
  });

  test('400 without a session id, 404 for an unknown one', async () => {
    const none = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.equal(none.status, 400);
    const unknown = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-session-id': 'no-such-session' });
    assert.equal(unknown.status, 404);
  });

  test('MCP-Protocol-Version: supported ones accepted, absent accepted, invalid 400', async () => {
    const sid = await rawSession(server.url);
    for (const v of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', undefined]) {
      const headers = { 'mcp-session-id': sid };
      if (v) headers['mcp-protocol-version'] = v;
      const res = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, headers);
      assert.equal(res.status, 200, `version ${v}`);
      await res.text();
    }
    const bad = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, {
      'mcp-session-id': sid,
      'mcp-protocol-version': '1999-01-01',
    });
    assert.equal(bad.status, 400);
  });

  test('DELETE ends a session; it is 404 afterwards', async () => {
    const sid = await rawSession(server.url);
    const del = await fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    assert.equal(del.status, 200);
    const after = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-session-id': sid });
    assert.equal(after.status, 404);
    const again = await fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    assert.equal(again.status, 404);
  });

  test('Host and Origin must name localhost: 403 otherwise', async () => {
    // fetch() will not let us set Host; the raw http module will.
    const http = await import('node:http');
    const u = new URL(server.url);
    const status = (headers) =>
      new Promise((resolve, reject) => {
        const req = http.request(
          { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { ...JSON_HEADERS, ...headers } },
          (res) => {
            res.resume();
            resolve(res.statusCode);
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(INIT));
      });
    assert.equal(await status({ host: 'evil.example' }), 403);
    assert.equal(await status({ origin: 'http://evil.example' }), 403);
    assert.equal(await status({ host: `localhost:${u.port}`, origin: `http://localhost:${u.port}` }), 200);
    assert.equal(await status({ host: `[::1]:${u.port}` }), 200);
  });

  test('a body over --max-message-size gets 413', async () => {
    const small = await startHttp(['echo'], ['--max-message-size', '1024']);
    try {
      const res = await post(small.url, { ...INIT, padding: 'x'.repeat(4096) });
      assert.equal(res.status, 413);
    } finally {
      await stop(small.child);
    }
  });

  test('GET opens the session’s SSE stream; 406 without Accept: text/event-stream', async () => {
    const sid = await rawSession(server.url);
    const res = await fetch(server.url, {
      headers: { accept: 'text/event-stream', 'mcp-session-id': sid },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /text\/event-stream/);
    await res.body.cancel();
    const noAccept = await fetch(server.url, { headers: { accept: 'application/json', 'mcp-session-id': sid } });
    assert.equal(noAccept.status, 406);
  });

  test('405 for other methods, 404 for other paths', async () => {
    const put = await fetch(server.url, { method: 'PUT', body: '{}' });
    assert.equal(put.status, 405);
    const other = await post(server.url.replace(/\/mcp$/, '/other'), INIT);
    assert.equal(other.status, 404);
  });

  test('bad JSON gets 400 with a parse error', async () => {
    const res = await post(server.url, '{not json');
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error.code, -32700);
  });
});
