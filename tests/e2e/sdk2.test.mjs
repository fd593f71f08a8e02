// SPDX-License-Identifier: MIT
// mcpd driven by the official TypeScript SDK 2.x client
// (@modelcontextprotocol/client) in its "auto" version negotiation: it
// probes with server/discover, takes the 2026-07-28 revision when the
// server offers it and falls back to initialize otherwise.  Over stdio and
// over Streamable HTTP it must end up in the modern era and do everything
// a client does there (lists, calls, reads, prompts, tool errors,
// input_required rounds answered by its own elicitation and sampling
// handlers, progress, cancellation, list_changed through the listen it
// opens by itself), while an SDK 1.x client (legacy era) works against the
// same server at the same time.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Client,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ResourceNotFoundError,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { makePluginDir, MCPD, resultText, sleep, startHttp, stop, until, withTimeout } from './lib.mjs';

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
/** echo and calc (bundled), everything (resources, prompts, MRTR tools),
 * good (progress, slow, structured output, dyn_add). */
const PLUGINS = ['echo', 'calc', 'everything', 'good'];

/** An SDK 2.x client in auto mode that answers elicitation and sampling
 * (unless `options.capabilities` says otherwise); `options` are merged
 * into the ClientOptions. */
function modernClient(options = {}) {
  const capabilities = options.capabilities ?? { elicitation: {}, sampling: {} };
  const client = new Client(
    { name: 'mcpd-e2e-sdk2', version: '0.0.0' },
    { versionNegotiation: { mode: 'auto' }, ...options, capabilities },
  );
  if (capabilities.elicitation) {
    client.setRequestHandler('elicitation/create', async (req) => ({
      action: 'accept',
      content: { username: `ada (${req.params.message})`, email: 'ada@example.com' },
    }));
  }
  if (capabilities.sampling) {
    client.setRequestHandler('sampling/createMessage', async (req) => ({
      role: 'assistant',
      content: { type: 'text', text: `forty-two to ${req.params.messages.at(-1).content.text}` },
      model: 'm',
    }));
  }
  return client;
}

/** A modern result: the SDK keeps _meta, where mcpd names itself. */
function assertModernResult(res, what) {
  assert.equal(res._meta?.['io.modelcontextprotocol/serverInfo']?.name, 'mcpd', `${what}: ${JSON.stringify(res)}`);
}

/** What every transport must get right, on a connected auto-mode client. */
const scenarios = {
  async 'settles on 2026-07-28 through server/discover'(client) {
    assert.equal(client.getProtocolEra(), 'modern');
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
    assert.ok(client.getDiscoverResult()?.supportedVersions.includes(MODERN));
    assert.equal(client.getServerVersion()?.name, 'mcpd');
    assert.equal(client.getServerCapabilities()?.tools?.listChanged, true);
  },

  async 'lists tools, calls echo and calc'(client) {
    const { tools } = await client.listTools();
    const names = tools.map((x) => x.name);
    for (const want of ['echo', 'calculate', 'test_elicitation', 'add']) {
      assert.ok(names.includes(want), `${want} not listed: ${names}`);
    }
    const echo = tools.find((x) => x.name === 'echo');
    assert.equal(echo.inputSchema.properties?.text?.type, 'string');

    const text = 'héllo 😀 "quoted" \\ \n';
    const res = await client.callTool({ name: 'echo', arguments: { text } });
    assertModernResult(res, 'echo');
    assert.notEqual(res.isError, true, JSON.stringify(res));
    assert.deepEqual(res.content, [{ type: 'text', text }]);

    const calc = await client.callTool({ name: 'calculate', arguments: { expression: '2*(3+4)' } });
    assert.notEqual(calc.isError, true, JSON.stringify(calc));
    assert.equal(resultText(calc).trim(), '14');
  },

  async 'structured output passes the output-schema check'(client) {
    await client.listTools(); // the SDK validates against the cached schema
    const res = await client.callTool({ name: 'add', arguments: { a: 20, b: 22 } });
    assert.deepEqual(res.structuredContent, { sum: 42 });
  },

  async 'reads a resource, gets a prompt, lists both'(client) {
    const { resources } = await client.listResources();
    assert.ok(resources.some((r) => r.uri === 'test://static-text'), JSON.stringify(resources));
    const read = await client.readResource({ uri: 'test://static-text' });
    assertModernResult(read, 'resources/read');
    assert.equal(read.contents[0].uri, 'test://static-text');
    assert.match(read.contents[0].text, /static text resource/);

    const { prompts } = await client.listPrompts();
    assert.ok(prompts.some((p) => p.name === 'test_simple_prompt'), JSON.stringify(prompts));
    const prompt = await client.getPrompt({ name: 'test_simple_prompt' });
    assertModernResult(prompt, 'prompts/get');
    assert.equal(prompt.messages[0].role, 'user');
    assert.match(prompt.messages[0].content.text, /simple prompt/);

    await assert.rejects(client.readResource({ uri: 'test://no-such-resource' }), (err) => {
      assert.ok(err instanceof ResourceNotFoundError, `${err}`);
      assert.equal(err.code, -32602);
      return true;
    });
  },

  async 'tool errors: isError for bad arguments, -32602 for an unknown tool'(client) {
    const bad = await client.callTool({ name: 'echo', arguments: { text: 5 } });
    assert.equal(bad.isError, true, JSON.stringify(bad));
    assert.match(resultText(bad), /\btext\b/);
    const failing = await client.callTool({ name: 'test_error_handling', arguments: {} });
    assert.equal(failing.isError, true, JSON.stringify(failing));

    await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), (err) => {
      assert.ok(err instanceof ProtocolError, `not a ProtocolError: ${err}`);
      assert.equal(err.code, -32602);
      return true;
    });
    // The client goes on after both.
    const res = await client.callTool({ name: 'echo', arguments: { text: 'still here' } });
    assert.equal(resultText(res), 'still here');
  },

  async 'input_required: elicitation and sampling answered by its handlers'(client) {
    const elicited = await client.callTool({ name: 'test_elicitation', arguments: { message: 'who?' } });
    assert.notEqual(elicited.isError, true, JSON.stringify(elicited));
    assert.match(resultText(elicited), /action=accept/);
    assert.match(resultText(elicited), /ada \(who\?\)/);

    const sampled = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'meaning?' } });
    assert.notEqual(sampled.isError, true, JSON.stringify(sampled));
    assert.match(resultText(sampled), /forty-two to meaning\?/);
  },

  async 'progress reaches onprogress, increasing, before the result'(client) {
    const events = [];
    const res = await client.callTool({ name: 'progress', arguments: { steps: 3 } }, { onprogress: (p) => events.push(p) });
    assert.notEqual(res.isError, true, JSON.stringify(res));
    assert.ok(events.length >= 1 && events.length <= 3, JSON.stringify(events));
    for (let i = 1; i < events.length; i++) assert.ok(events[i].progress > events[i - 1].progress, JSON.stringify(events));
  },

  async 'aborting a call cancels it; the next call is not held up'(client) {
    const controller = new AbortController();
    const pending = client.callTool({ name: 'slow', arguments: { ms: 5000 } }, { signal: controller.signal });
    await sleep(200);
    controller.abort('test');
    await assert.rejects(pending);
    const started = Date.now();
    const res = await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } });
    assert.equal(resultText(res).trim(), '2');
    assert.ok(Date.now() - started < 4000, 'the next call waited for the cancelled one');
  },

  async 'ping is not a method of the modern era: the SDK refuses it locally'(client) {
    await assert.rejects(client.ping(), /not supported by the negotiated protocol version/);
  },
};

/** A capability the client does not declare is never asked for. */
async function missingCapability(client) {
  await assert.rejects(client.callTool({ name: 'test_sampling', arguments: { prompt: 'q' } }), (err) => {
    assert.ok(err instanceof MissingRequiredClientCapabilityError, `${err}`);
    assert.equal(err.code, -32021);
    return true;
  });
}

/** list_changed through the subscriptions/listen the client opens itself
 * when given `listChanged` handlers. */
async function listChanged(connect) {
  let seen = null;
  const client = modernClient({
    listChanged: {
      tools: {
        onChanged: (err, tools) => {
          if (!err) seen = tools.map((x) => x.name);
        },
      },
    },
  });
  await connect(client);
  assert.equal(client.getProtocolEra(), 'modern');
  await client.callTool({ name: 'dyn_add', arguments: { name: 'dyn_sdk2' } });
  await until(() => seen?.includes('dyn_sdk2'), 5000, 'onChanged with dyn_sdk2', 20);
  const called = await client.callTool({ name: 'dyn_sdk2', arguments: {} });
  assert.equal(resultText(called), 'dynamic dyn_sdk2');
}

/** An SDK 1.x client's calls, for running next to a modern one. */
async function legacyWork(legacy, tag) {
  assert.equal(legacy.getServerVersion()?.name, 'mcpd');
  assert.deepEqual(await legacy.ping(), {});
  for (let i = 0; i < 5; i++) {
    const res = await legacy.callTool({ name: 'echo', arguments: { text: `${tag} ${i}` } });
    assert.equal(res._meta, undefined, 'a legacy result carries no modern members');
    assert.deepEqual(res.content, [{ type: 'text', text: `${tag} ${i}` }]);
  }
  const calc = await legacy.callTool({ name: 'calculate', arguments: { expression: '6*7' } });
  assert.equal(resultText(calc).trim(), '42');
}

async function modernWork(client, tag) {
  for (let i = 0; i < 5; i++) {
    const res = await client.callTool({ name: 'echo', arguments: { text: `${tag} ${i}` } });
    assertModernResult(res, 'echo');
    assert.deepEqual(res.content, [{ type: 'text', text: `${tag} ${i}` }]);
  }
  const elicited = await client.callTool({ name: 'test_elicitation', arguments: { message: tag } });
  assert.match(resultText(elicited), /action=accept/);
}

describe('SDK 2.x client in auto mode over stdio', () => {
  /** Spawns mcpd through the SDK's stdio transport and connects. */
  async function connectStdio(t, client, plugins = PLUGINS) {
    const dir = await makePluginDir(plugins);
    const transport = new StdioClientTransport({
      command: MCPD,
      args: ['--plugins', dir, '--no-watch'],
      env: process.env,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d) => {
      stderr += d;
    });
    t.after(async () => {
      const child = transport._process;
      await client.close().catch(() => {});
      // A clean exit on EOF, which under the sanitizers also means no
      // leak and no error report.
      if (child) assert.equal(child.exitCode, 0, `mcpd exit ${child.exitCode} ${child.signalCode}: ${stderr}`);
    });
    // The probe runs on a sibling mcpd that gets server/discover, then
    // EOF: it has to leave at once for connect to be quick.
    await withTimeout(client.connect(transport), 10000, 'SDK 2.x connect over stdio');
    return { transport, stderr: () => stderr };
  }

  for (const [name, run] of Object.entries(scenarios)) {
    test(name, { timeout: 30000 }, async (t) => {
      const client = modernClient();
      await connectStdio(t, client);
      await run(client);
    });
  }

  test('a capability the client does not declare: -32021, typed', async (t) => {
    const client = modernClient({ capabilities: {} });
    await connectStdio(t, client);
    await missingCapability(client);
  });

  test('list_changed through the listen the client opens', { timeout: 20000 }, async (t) => {
    await listChanged((client) => connectStdio(t, client));
  });

  test('an SDK 1.x client on another mcpd at the same time stays legacy', { timeout: 30000 }, async (t) => {
    const client = modernClient();
    await connectStdio(t, client);
    const dir = await makePluginDir(PLUGINS);
    const legacy = new LegacyClient({ name: 'mcpd-e2e-sdk1', version: '0.0.0' });
    t.after(() => legacy.close().catch(() => {}));
    await legacy.connect(
      new LegacyStdioTransport({ command: MCPD, args: ['--plugins', dir, '--no-watch'], env: process.env, stderr: 'pipe' }),
    );
    await Promise.all([modernWork(client, 'modern'), legacyWork(legacy, 'legacy')]);
    assert.equal(client.getProtocolEra(), 'modern');
  });

  test('without versionNegotiation the 2.x client stays on the legacy handshake', async (t) => {
    const client = new Client({ name: 'mcpd-e2e-sdk2-legacy', version: '0.0.0' });
    await connectStdio(t, client);
    assert.equal(client.getProtocolEra(), 'legacy');
    assert.equal(client.getNegotiatedProtocolVersion(), LEGACY);
    assert.deepEqual(await client.ping(), {});
    const res = await client.callTool({ name: 'echo', arguments: { text: 'old way' } });
    assert.equal(res._meta, undefined);
    assert.equal(resultText(res), 'old way');
  });

  test('closing the client ends mcpd on EOF, exit 0', async (t) => {
    const client = modernClient();
    const { transport } = await connectStdio(t, client);
    const child = transport._process;
    assert.ok(child, 'SDK internals changed: no _process on the transport');
    const start = Date.now();
    await client.close();
    assert.equal(child.signalCode, null);
    assert.equal(child.exitCode, 0);
    assert.ok(Date.now() - start < 2000, 'mcpd did not exit on EOF; the SDK had to send SIGTERM');
  });
});

describe('SDK 2.x client in auto mode over HTTP', () => {
  let server;
  before(async () => {
    server = await startHttp(PLUGINS);
  });
  after(async () => {
    assert.equal(await stop(server.child), 0, server.stderr());
    // mcpd warns about nothing the official client sent.
    const warnings = server
      .stderr()
      .split('\n')
      .filter((l) => /: (warn|error): /.test(l));
    assert.deepEqual(warnings, []);
  });

  /** Connects `client` to the shared server, recording each POST's
   * standard headers and status. */
  async function connectHttp(t, client) {
    const posts = [];
    const recordingFetch = async (url, init) => {
      const res = await fetch(url, init);
      const h = new Headers(init?.headers);
      posts.push({
        method: init?.method,
        status: res.status,
        sessionId: h.get('mcp-session-id'),
        version: h.get('mcp-protocol-version'),
        mcpMethod: h.get('mcp-method'),
        mcpName: h.get('mcp-name'),
      });
      return res;
    };
    const transport = new StreamableHTTPClientTransport(new URL(server.url), { fetch: recordingFetch });
    t.after(async () => {
      await client.close().catch(() => {});
    });
    await withTimeout(client.connect(transport), 10000, 'SDK 2.x connect over HTTP');
    return { transport, posts };
  }

  for (const [name, run] of Object.entries(scenarios)) {
    test(name, { timeout: 30000 }, async (t) => {
      const client = modernClient();
      await connectHttp(t, client);
      await run(client);
    });
  }

  test('no session; every POST names its version, method and name', async (t) => {
    const client = modernClient();
    const { transport, posts } = await connectHttp(t, client);
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    await client.readResource({ uri: 'test://static-text' });
    assert.equal(transport.sessionId, undefined);
    assert.equal(posts[0].mcpMethod, 'server/discover', JSON.stringify(posts));
    for (const p of posts) {
      assert.equal(p.method, 'POST');
      assert.equal(p.status, 200, JSON.stringify(p));
      assert.equal(p.sessionId, null);
      assert.equal(p.version, MODERN);
    }
    assert.ok(posts.some((p) => p.mcpMethod === 'tools/call' && p.mcpName === 'echo'), JSON.stringify(posts));
    assert.ok(posts.some((p) => p.mcpMethod === 'resources/read' && p.mcpName === 'test://static-text'), JSON.stringify(posts));
  });

  test('a capability the client does not declare: -32021, typed', async (t) => {
    const client = modernClient({ capabilities: {} });
    await connectHttp(t, client);
    await missingCapability(client);
  });

  test('list_changed through the listen the client opens', { timeout: 20000 }, async (t) => {
    await listChanged((client) => connectHttp(t, client));
  });

  test('an SDK 1.x session on the same mcpd at the same time stays legacy', { timeout: 30000 }, async (t) => {
    const client = modernClient();
    await connectHttp(t, client);
    const legacyTransport = new LegacyHttpTransport(new URL(server.url));
    const legacy = new LegacyClient({ name: 'mcpd-e2e-sdk1', version: '0.0.0' });
    t.after(() => legacy.close().catch(() => {}));
    await legacy.connect(legacyTransport);
    assert.ok(legacyTransport.sessionId, 'the legacy client has a session');
    // Two of each, interleaved on the one server.
    const other = modernClient();
    await connectHttp(t, other);
    const legacy2 = new LegacyClient({ name: 'mcpd-e2e-sdk1', version: '0.0.0' });
    t.after(() => legacy2.close().catch(() => {}));
    await legacy2.connect(new LegacyHttpTransport(new URL(server.url)));
    await Promise.all([
      modernWork(client, 'modern a'),
      legacyWork(legacy, 'legacy a'),
      modernWork(other, 'modern b'),
      legacyWork(legacy2, 'legacy b'),
    ]);
    assert.equal(client.getProtocolEra(), 'modern');
  });
});
