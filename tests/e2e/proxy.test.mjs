// SPDX-License-Identifier: MIT
// plugins/proxy: other MCP servers ("upstreams") served through mcpd, with
// the official reference server (@modelcontextprotocol/server-everything)
// as the upstream over stdio, Streamable HTTP and legacy HTTP+SSE.  What a
// client of mcpd sees: the upstream's tools and prompts under a prefix, its
// resources and templates unchanged; results exactly as the upstream gave
// them; progress, cancellation, logging, subscriptions and the upstream's
// own requests (sampling, elicitation, roots) carried both ways; tasks for
// tools that require them; a killed stdio upstream restarted, its entries
// leaving and coming back with list_changed -- driven by the SDK 1.x client
// over stdio and HTTP and by the SDK 2.x client in the 2026-07-28 era.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as Client2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as Stdio2Transport } from '@modelcontextprotocol/client/stdio';
import { BUILDDIR, configFile, makeTempDir, MCPD, pidAlive, resultText, runMcpd, sleep, SRCDIR, startHttp, stop, track, until, waitPidGone, withTimeout } from './lib.mjs';

const EVERYTHING_DIR = path.join(SRCDIR, 'tests', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist');
const EVERYTHING = path.join(EVERYTHING_DIR, 'index.js');
const PROXY_SO = path.join(BUILDDIR, 'plugins', '.libs', 'proxy.so');
/** The PNG get-tiny-image returns, from the server's own source. */
const { MCP_TINY_IMAGE } = await import(pathToFileURL(path.join(EVERYTHING_DIR, 'tools', 'get-tiny-image.js')).href);

const ROOT = { uri: 'file:///tmp/proxy-root', name: 'proxy-root' };
const STATIC_URI = 'demo://resource/static/document/features.md';
const TEXT_TEMPLATE = 'demo://resource/dynamic/text/{resourceId}';
const BLOB_TEMPLATE = 'demo://resource/dynamic/blob/{resourceId}';
/** What server-everything registers for any client, and what it adds for
 * one that declares sampling, elicitation (form and url) and roots. */
const UPSTREAM_TOOLS = [
  'echo',
  'get-annotated-message',
  'get-env',
  'get-resource-links',
  'get-resource-reference',
  'get-structured-content',
  'get-sum',
  'get-tiny-image',
  'gzip-file-as-resource',
  'toggle-simulated-logging',
  'toggle-subscriber-updates',
  'trigger-long-running-operation',
  'get-roots-list',
  'trigger-elicitation-request',
  'trigger-sampling-request',
  'simulate-research-query',
  'trigger-url-elicitation',
];
/** What it adds only for a client that also declares task-augmented
 * sampling and elicitation requests (tasks.requests.sampling.createMessage,
 * tasks.requests.elicitation.create). */
const UPSTREAM_TOOLS_EXTRA = [
  'trigger-sampling-request-async',
  'trigger-elicitation-request-async',
];
const UPSTREAM_PROMPTS = ['simple-prompt', 'args-prompt', 'completable-prompt', 'resource-prompt'];

/* ------------------------------------------------------------------------ */
/* Setup helpers.                                                            */

/** A private plugin directory holding the built proxy.so (mode 0644). */
async function proxyPluginDir() {
  if (!fs.existsSync(PROXY_SO)) throw new Error(`plugin proxy is not built: ${PROXY_SO} is missing`);
  const dir = await makeTempDir('mcpd-plugins-');
  const dest = path.join(dir, 'proxy.so');
  await fsp.copyFile(PROXY_SO, dest);
  await fsp.chmod(dest, 0o644);
  return dir;
}

/** An mcpd config file serving `servers` through the proxy. */
function proxyConfig(servers) {
  return configFile({ plugins: { proxy: { startTimeoutMs: 15000, servers } } });
}

/** A free loopback port (listen on 0, close, reuse the number). */
async function freePort() {
  const srv = net.createServer();
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** server-everything in `mode` (streamableHttp or sse) on a free port;
 * resolves once it said it listens. */
async function startEverythingHttp(mode, port = 0) {
  port ||= await freePort();
  const child = track(
    spawn(process.execPath, [EVERYTHING, mode], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let err = '';
  child.stdout.on('data', () => {});
  await withTimeout(
    new Promise((resolve, reject) => {
      child.stderr.on('data', (d) => {
        err += d;
        if (/listening on port|running on port/i.test(err)) resolve();
      });
      child.once('exit', (code) => reject(new Error(`server-everything ${mode} exited ${code}: ${err}`)));
    }),
    15000,
    `server-everything ${mode} to listen`,
  );
  return {
    port,
    stderr: () => err,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    },
  };
}

/** The last `n` characters of a stderr, for assertion messages. */
const tail = (s, n = 3000) => (s.length > n ? `...${s.slice(-n)}` : s);

/**
 * An SDK 1.x client connected over stdio to a new mcpd that serves the
 * proxy with config `cfg`.  It declares sampling, elicitation (form) and
 * roots, answers them, and records what it was asked and every
 * notification without a handler of its own (logs, resources/updated,
 * list_changed).
 */
async function connect1(cfg, { env = {} } = {}) {
  const dir = await proxyPluginDir();
  const transport = new StdioClientTransport({
    command: MCPD,
    args: ['--plugins', dir, '--no-watch', '--config', cfg],
    env: { ...process.env, ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d;
  });
  const client = new Client(
    { name: 'mcpd-e2e-proxy', version: '0.0.0' },
    { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
  );
  const seen = { sampling: [], elicitation: [], roots: 0, notes: [] };
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    seen.sampling.push(req.params);
    return {
      role: 'assistant',
      content: { type: 'text', text: `sampled: ${req.params.messages.at(-1).content.text}` },
      model: 'proxy-test-model',
      stopReason: 'endTurn',
    };
  });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    seen.elicitation.push(req.params);
    return {
      action: 'accept',
      content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com', integer: 7 },
    };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    seen.roots++;
    return { roots: [ROOT] };
  });
  client.fallbackNotificationHandler = async (n) => {
    seen.notes.push({ at: Date.now(), ...n });
  };
  await withTimeout(client.connect(transport), 20000, 'SDK client connect to mcpd with the proxy');
  return {
    client,
    seen,
    transport,
    stderr: () => stderr,
    close: () => client.close().catch(() => {}),
  };
}

/* ------------------------------------------------------------------------ */
/* Checks shared by the stdio and HTTP upstreams (`p` is the prefix).       */

async function checkEcho(client, p) {
  const res = await client.callTool({ name: `${p}echo`, arguments: { message: 'héllo "proxy" \\ 😀' } });
  assert.deepEqual(res.content, [{ type: 'text', text: 'Echo: héllo "proxy" \\ 😀' }]);
  assert.notEqual(res.isError, true);
}

async function checkProgress(client, p) {
  const events = [];
  const res = await client.callTool(
    { name: `${p}trigger-long-running-operation`, arguments: { duration: 1, steps: 4 } },
    undefined,
    { onprogress: (e) => events.push(e) },
  );
  assert.equal(resultText(res), 'Long running operation completed. Duration: 1 seconds, Steps: 4.');
  // The upstream sends 1..4 of 4, the last right before the result; the
  // SDK drops a notification it handles after the response, so the last
  // one may be missing -- the first three never are.
  assert.ok(events.length >= 3, `progress events: ${JSON.stringify(events)}`);
  assert.deepEqual(
    events.map((e) => [e.progress, e.total]),
    [
      [1, 4],
      [2, 4],
      [3, 4],
      [4, 4],
    ].slice(0, events.length),
  );
}

async function checkSampling(ctx, p) {
  const before = ctx.seen.sampling.length;
  const res = await ctx.client.callTool({
    name: `${p}trigger-sampling-request`,
    arguments: { prompt: 'what is a proxy?', maxTokens: 42 },
  });
  assert.notEqual(res.isError, true, JSON.stringify(res));
  assert.equal(ctx.seen.sampling.length, before + 1, 'the client was asked once');
  const asked = ctx.seen.sampling.at(-1);
  assert.equal(asked.messages[0].content.text, 'Resource trigger-sampling-request context: what is a proxy?');
  assert.equal(asked.systemPrompt, 'You are a helpful test server.');
  assert.equal(asked.maxTokens, 42);
  const text = resultText(res);
  assert.match(text, /^LLM sampling result: /);
  const answer = JSON.parse(text.slice(text.indexOf('{')));
  assert.equal(answer.model, 'proxy-test-model');
  assert.deepEqual(answer.content, { type: 'text', text: 'sampled: Resource trigger-sampling-request context: what is a proxy?' });
}

async function checkElicitation(ctx, p) {
  const before = ctx.seen.elicitation.length;
  const res = await ctx.client.callTool({ name: `${p}trigger-elicitation-request`, arguments: {} });
  assert.notEqual(res.isError, true, JSON.stringify(res));
  assert.equal(ctx.seen.elicitation.length, before + 1, 'the client was asked once');
  const asked = ctx.seen.elicitation.at(-1);
  assert.equal(asked.message, 'Please provide inputs for the following fields:');
  assert.deepEqual(asked.requestedSchema.required, ['name']);
  const text = resultText(res);
  assert.match(text, /User provided the requested information!/);
  assert.match(text, /- Name: Ada Lovelace\n- Agreed to terms: true\n- Email: ada@example.com\n- Favorite Integer: 7/);
}

async function checkResourceRead(client) {
  const { resources } = await client.listResources();
  const doc = resources.find((r) => r.uri === STATIC_URI);
  assert.ok(doc, `${STATIC_URI} not listed: ${JSON.stringify(resources.map((r) => r.uri))}`);
  assert.equal(doc.mimeType, 'text/markdown');
  const read = await client.readResource({ uri: STATIC_URI });
  assert.equal(read.contents.length, 1);
  assert.equal(read.contents[0].uri, STATIC_URI);
  assert.equal(read.contents[0].mimeType, 'text/markdown');
  assert.equal(read.contents[0].text, fs.readFileSync(path.join(EVERYTHING_DIR, 'docs', 'features.md'), 'utf8'));
}

async function checkPromptGet(client, p) {
  const simple = await client.getPrompt({ name: `${p}simple-prompt` });
  assert.deepEqual(simple.messages, [
    { role: 'user', content: { type: 'text', text: 'This is a simple prompt without arguments.' } },
  ]);
  const args = await client.getPrompt({ name: `${p}args-prompt`, arguments: { city: 'Paris', state: 'Texas' } });
  assert.deepEqual(args.messages, [{ role: 'user', content: { type: 'text', text: "What's weather in Paris, Texas?" } }]);
}

/** Subscribes to the static document, turns the upstream's simulated
 * updates on, waits for notifications/resources/updated, turns them off. */
async function checkSubscription(ctx, p) {
  const since = Date.now();
  await ctx.client.subscribeResource({ uri: STATIC_URI });
  const on = await ctx.client.callTool({ name: `${p}toggle-subscriber-updates`, arguments: {} });
  assert.match(resultText(on), /^Started simulated resource updated notifications/);
  try {
    await until(
      () =>
        ctx.seen.notes.some(
          (n) => n.at >= since && n.method === 'notifications/resources/updated' && n.params?.uri === STATIC_URI,
        ),
      15000,
      `notifications/resources/updated for ${STATIC_URI}; got ${JSON.stringify(ctx.seen.notes.filter((n) => n.at >= since))}\nmcpd stderr:\n${tail(ctx.stderr())}`,
    );
  } finally {
    await ctx.client.callTool({ name: `${p}toggle-subscriber-updates`, arguments: {} }).catch(() => {});
  }
}

/* ------------------------------------------------------------------------ */

describe('proxy: a stdio upstream, SDK 1.x client over stdio', () => {
  let ctx;
  /** Every line mcpd's proxy wrote to the upstream's stdin (tee'd). */
  let upstreamInput;
  const upstreamSaw = () =>
    fs
      .readFileSync(upstreamInput, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));

  before(async () => {
    const dir = await makeTempDir('mcpd-proxy-');
    upstreamInput = path.join(dir, 'upstream-stdin.jsonl');
    const cfg = await proxyConfig({
      everything: {
        // The upstream reads its stdin through tee, so the test sees what
        // the proxy sent it; its argv[0] is found on $PATH.
        command: ['/bin/sh', '-c', 'tee -a "$0" | exec node "$1" stdio', upstreamInput, EVERYTHING],
        env: { K: 'V' },
        cwd: '/tmp',
        prefix: 'ev_',
      },
    });
    ctx = await connect1(cfg, { env: { PROXY_E2E_INHERITED: 'from-mcpd' } });
  });
  after(() => ctx?.close());

  test('the first tools/list has every upstream tool, prefixed, with its schema and task support', async () => {
    const { tools } = await ctx.client.listTools();
    const names = tools.map((x) => x.name);
    assert.ok(names.every((n) => n.startsWith('ev_')), JSON.stringify(names));
    for (const n of UPSTREAM_TOOLS) assert.ok(names.includes(`ev_${n}`), `ev_${n} not listed: ${JSON.stringify(names)}\n${tail(ctx.stderr())}`);
    const echo = tools.find((x) => x.name === 'ev_echo');
    assert.equal(echo.description, 'Echoes back the input string');
    assert.equal(echo.inputSchema.type, 'object');
    assert.equal(echo.inputSchema.properties?.message?.type, 'string');
    assert.deepEqual(echo.inputSchema.required, ['message']);
    assert.equal(echo.annotations?.readOnlyHint, true);
    const structured = tools.find((x) => x.name === 'ev_get-structured-content');
    assert.deepEqual(structured.outputSchema?.required?.sort(), ['conditions', 'humidity', 'temperature']);
    const research = tools.find((x) => x.name === 'ev_simulate-research-query');
    assert.equal(research.execution?.taskSupport, 'required');
    assert.equal(tools.find((x) => x.name === 'ev_echo').execution?.taskSupport ?? 'forbidden', 'forbidden');
    // The upstream's stderr goes to mcpd's log.
    assert.match(ctx.stderr(), /Starting default \(STDIO\) server\.\.\./);
  });

  test('tools that need task-augmented requests to the client are not offered', async () => {
    // mcpd cannot hand its clients a task-augmented sampling or elicitation
    // request, so the proxy does not declare tasks.requests.* upstream, and
    // server-everything leaves these two out (the README says so).
    const names = (await ctx.client.listTools()).tools.map((x) => x.name);
    const offered = UPSTREAM_TOOLS_EXTRA.map((n) => `ev_${n}`).filter((n) => names.includes(n));
    assert.deepEqual(offered, []);
  });

  test('ev_echo and ev_get-sum', async () => {
    await checkEcho(ctx.client, 'ev_');
    const sum = await ctx.client.callTool({ name: 'ev_get-sum', arguments: { a: 2, b: 40.5 } });
    assert.deepEqual(sum.content, [{ type: 'text', text: 'The sum of 2 and 40.5 is 42.5.' }]);
  });

  test('ev_get-tiny-image: the image block as the upstream gave it', async () => {
    const res = await ctx.client.callTool({ name: 'ev_get-tiny-image', arguments: {} });
    assert.deepEqual(res.content, [
      { type: 'text', text: "Here's the image you requested:" },
      { type: 'image', data: MCP_TINY_IMAGE, mimeType: 'image/png' },
      { type: 'text', text: 'The image above is the MCP logo.' },
    ]);
  });

  test('ev_get-annotated-message: content annotations survive', async () => {
    const res = await ctx.client.callTool({
      name: 'ev_get-annotated-message',
      arguments: { messageType: 'error', includeImage: true },
    });
    assert.deepEqual(res.content, [
      { type: 'text', text: 'Error: Operation failed', annotations: { priority: 1, audience: ['user', 'assistant'] } },
      { type: 'image', data: MCP_TINY_IMAGE, mimeType: 'image/png', annotations: { priority: 0.5, audience: ['user'] } },
    ]);
  });

  test('ev_get-structured-content: structuredContent', async () => {
    const res = await ctx.client.callTool({ name: 'ev_get-structured-content', arguments: { location: 'Chicago' } });
    const weather = { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 };
    assert.deepEqual(res.structuredContent, weather);
    assert.deepEqual(res.content, [{ type: 'text', text: JSON.stringify(weather) }]);
  });

  test('ev_get-resource-links and ev_get-resource-reference: links and an embedded resource', async () => {
    const links = await ctx.client.callTool({ name: 'ev_get-resource-links', arguments: { count: 2 } });
    assert.deepEqual(links.content, [
      { type: 'text', text: 'Here are 2 resource links to resources available in this server:' },
      {
        type: 'resource_link',
        uri: 'demo://resource/dynamic/blob/1',
        name: 'Blob Resource 1',
        description: 'Resource 1: plaintext resource',
        mimeType: 'text/plain',
      },
      {
        type: 'resource_link',
        uri: 'demo://resource/dynamic/text/2',
        name: 'Text Resource 2',
        description: 'Resource 2: plaintext resource',
        mimeType: 'text/plain',
      },
    ]);
    const ref = await ctx.client.callTool({
      name: 'ev_get-resource-reference',
      arguments: { resourceType: 'Text', resourceId: 3 },
    });
    assert.equal(ref.content.length, 3, JSON.stringify(ref));
    assert.equal(ref.content[1].type, 'resource');
    assert.equal(ref.content[1].resource.uri, 'demo://resource/dynamic/text/3');
    assert.equal(ref.content[1].resource.mimeType, 'text/plain');
    assert.match(ref.content[1].resource.text, /^Resource 3: This is a plaintext resource created at /);
    assert.equal(ref.content[2].text, 'You can access this resource using the URI: demo://resource/dynamic/text/3');
  });

  test("ev_get-env: mcpd's environment plus the configured env", async () => {
    const res = await ctx.client.callTool({ name: 'ev_get-env', arguments: {} });
    const env = JSON.parse(resultText(res));
    assert.equal(env.K, 'V');
    assert.equal(env.PROXY_E2E_INHERITED, 'from-mcpd');
  });

  test('ev_trigger-long-running-operation: progress notifications, then the result', async () => {
    await checkProgress(ctx.client, 'ev_');
  });

  test("ev_trigger-sampling-request: the client's sampling handler answers", async () => {
    await checkSampling(ctx, 'ev_');
  });

  test("ev_trigger-elicitation-request: the client's elicitation handler answers", async () => {
    await checkElicitation(ctx, 'ev_');
  });

  test("ev_get-roots-list: the client's root", async () => {
    const res = await ctx.client.callTool({ name: 'ev_get-roots-list', arguments: {} });
    const text = resultText(res);
    assert.match(text, /^Current MCP Roots \(1 total\):/, text);
    assert.match(text, /1\. proxy-root\n {3}URI: file:\/\/\/tmp\/proxy-root/);
  });

  test('ev_simulate-research-query (taskSupport required): a task through mcpd', { timeout: 30000 }, async () => {
    const types = [];
    let result;
    for await (const message of ctx.client.experimental.tasks.callToolStream(
      { name: 'ev_simulate-research-query', arguments: { topic: 'proxies' } },
      CallToolResultSchema,
      { task: { ttl: 60000 } },
    )) {
      types.push(message.type);
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    assert.equal(types[0], 'taskCreated', JSON.stringify(types));
    assert.match(resultText(result), /^# Research Report: proxies\n/);
    assert.match(resultText(result), /- Stage 4: Generating report ✓/);
  });

  test('resources: list, read, templates, template reads (text and blob)', async () => {
    await checkResourceRead(ctx.client);
    const { resourceTemplates } = await ctx.client.listResourceTemplates();
    const templates = resourceTemplates.map((x) => x.uriTemplate);
    assert.ok(templates.includes(TEXT_TEMPLATE) && templates.includes(BLOB_TEMPLATE), JSON.stringify(templates));
    const text = await ctx.client.readResource({ uri: 'demo://resource/dynamic/text/5' });
    assert.equal(text.contents[0].uri, 'demo://resource/dynamic/text/5');
    assert.match(text.contents[0].text, /^Resource 5: This is a plaintext resource created at /);
    const blob = await ctx.client.readResource({ uri: 'demo://resource/dynamic/blob/6' });
    assert.equal(blob.contents[0].uri, 'demo://resource/dynamic/blob/6');
    assert.equal(blob.contents[0].text, undefined);
    assert.match(Buffer.from(blob.contents[0].blob, 'base64').toString(), /^Resource 6: This is a base64 blob created at /);
  });

  test('completion/complete: a template variable and prompt arguments (with context)', async () => {
    const tmpl = await ctx.client.complete({
      ref: { type: 'ref/resource', uri: TEXT_TEMPLATE },
      argument: { name: 'resourceId', value: '17' },
    });
    assert.deepEqual(tmpl.completion.values, ['17']);
    const dept = await ctx.client.complete({
      ref: { type: 'ref/prompt', name: 'ev_completable-prompt' },
      argument: { name: 'department', value: 'S' },
    });
    assert.deepEqual(dept.completion.values, ['Sales', 'Support']);
    const who = await ctx.client.complete({
      ref: { type: 'ref/prompt', name: 'ev_completable-prompt' },
      argument: { name: 'name', value: '' },
      context: { arguments: { department: 'Engineering' } },
    });
    assert.deepEqual(who.completion.values, ['Alice', 'Bob', 'Charlie']);
  });

  test('prompts: list and get (simple, with arguments, with an embedded resource)', async () => {
    const { prompts } = await ctx.client.listPrompts();
    assert.deepEqual(prompts.map((x) => x.name).sort(), UPSTREAM_PROMPTS.map((n) => `ev_${n}`).sort());
    const args = prompts.find((x) => x.name === 'ev_args-prompt');
    assert.deepEqual(
      args.arguments.map((a) => [a.name, a.required ?? false]),
      [
        ['city', true],
        ['state', false],
      ],
    );
    await checkPromptGet(ctx.client, 'ev_');
    const res = await ctx.client.getPrompt({ name: 'ev_resource-prompt', arguments: { resourceType: 'Blob', resourceId: '2' } });
    assert.equal(res.messages.length, 2);
    assert.equal(res.messages[0].content.text, 'This prompt includes the Blob resource with id: 2. Please analyze the following resource:');
    assert.equal(res.messages[1].content.type, 'resource');
    assert.equal(res.messages[1].content.resource.uri, 'demo://resource/dynamic/blob/2');
    assert.match(Buffer.from(res.messages[1].content.resource.blob, 'base64').toString(), /^Resource 2: This is a base64 blob/);
  });

  test('upstream logs reach the client as notifications/message at its level', { timeout: 25000 }, async () => {
    await ctx.client.setLoggingLevel('debug');
    const since = Date.now();
    const on = await ctx.client.callTool({ name: 'ev_toggle-simulated-logging', arguments: {} });
    assert.match(resultText(on), /^Started simulated, random-leveled logging/);
    try {
      // The upstream sends one at once, then one every 5 s, each at a
      // random level (a debug one is below the level the proxy asks for).
      await until(
        () =>
          ctx.seen.notes.some(
            (n) => n.at >= since && n.method === 'notifications/message' && /level.message/i.test(JSON.stringify(n.params?.data)),
          ),
        16000,
        `a simulated log message; got ${JSON.stringify(ctx.seen.notes.filter((n) => n.at >= since))}\nmcpd stderr:\n${tail(ctx.stderr())}`,
      );
    } finally {
      await ctx.client.callTool({ name: 'ev_toggle-simulated-logging', arguments: {} }).catch(() => {});
    }
  });

  test('resources/subscribe: notifications/resources/updated; the upstream log reaches stderr and the client', { timeout: 30000 }, async () => {
    const since = Date.now();
    await checkSubscription(ctx, 'ev_');
    // The upstream answers a subscribe with an info log line.
    const line = `Received Subscribe Resource request for URI: ${STATIC_URI}`;
    await until(() => ctx.stderr().includes(line), 5000, `"${line}" in mcpd's stderr:\n${tail(ctx.stderr())}`);
    assert.ok(
      ctx.seen.notes.some((n) => n.at >= since && n.method === 'notifications/message' && JSON.stringify(n.params).includes(line)),
      `no notifications/message with "${line}": ${JSON.stringify(ctx.seen.notes.filter((n) => n.at >= since))}`,
    );
  });

  test('cancellation: the aborted call rejects, notifications/cancelled goes upstream, mcpd keeps answering', { timeout: 20000 }, async () => {
    const controller = new AbortController();
    const pending = ctx.client.callTool(
      { name: 'ev_trigger-long-running-operation', arguments: { duration: 30, steps: 30 } },
      undefined,
      { signal: controller.signal },
    );
    // Wait until the call reached the upstream, then abort.
    let upstreamId;
    await until(
      () => {
        const call = upstreamSaw().find(
          (m) => m.method === 'tools/call' && m.params?.name === 'trigger-long-running-operation' && m.params?.arguments?.duration === 30,
        );
        upstreamId = call?.id;
        return call !== undefined;
      },
      5000,
      'the tools/call to reach the upstream (un-prefixed)',
    );
    controller.abort('test cancels');
    await assert.rejects(pending);
    await until(
      () => upstreamSaw().some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === upstreamId),
      5000,
      `notifications/cancelled for upstream id ${JSON.stringify(upstreamId)}; upstream saw ${JSON.stringify(upstreamSaw().slice(-5))}`,
    );
    const started = Date.now();
    await checkEcho(ctx.client, 'ev_');
    assert.ok(Date.now() - started < 3000, 'mcpd was slow to answer after the cancellation');
  });
});

describe('proxy: a stdio upstream that dies is restarted', () => {
  test('SIGKILL: list_changed without ev_ tools, then list_changed with them and a new process', { timeout: 30000 }, async (t) => {
    const dir = await makeTempDir('mcpd-proxy-restart-');
    const pidFile = path.join(dir, 'pid');
    const cwdFile = path.join(dir, 'cwd');
    const workDir = path.join(dir, 'work');
    await fsp.mkdir(workDir);
    const cfg = await proxyConfig({
      // No prefix: it defaults to "ev_".
      ev: {
        command: ['/bin/sh', '-c', 'echo $$ > "$0"; pwd > "$1"; exec node "$2" stdio', pidFile, cwdFile, EVERYTHING],
        cwd: workDir,
      },
    });
    const ctx = await connect1(cfg);
    t.after(() => ctx.close());
    const evTools = async () => (await ctx.client.listTools()).tools.map((x) => x.name).filter((n) => n.startsWith('ev_'));
    const listChangedSince = (since) =>
      ctx.seen.notes.filter((n) => n.at >= since && n.method === 'notifications/tools/list_changed').length;

    assert.ok((await evTools()).includes('ev_echo'), tail(ctx.stderr()));
    assert.equal(fs.readFileSync(cwdFile, 'utf8').trim(), fs.realpathSync(workDir), 'the configured cwd');
    const pid1 = Number(fs.readFileSync(pidFile, 'utf8'));
    assert.ok(pid1 > 0 && pidAlive(pid1), `upstream pid ${pid1}`);

    const killedAt = Date.now();
    process.kill(pid1, 'SIGKILL');
    await until(() => listChangedSince(killedAt) >= 1, 5000, `tools/list_changed after the kill\n${tail(ctx.stderr())}`);
    assert.deepEqual(await evTools(), [], 'the dead upstream still has tools listed');
    const gone = listChangedSince(killedAt);

    await until(() => listChangedSince(killedAt) > gone, 10000, `another tools/list_changed (restart)\n${tail(ctx.stderr())}`);
    const back = await evTools();
    assert.ok(back.includes('ev_echo'), `after the restart: ${JSON.stringify(back)}`);
    const pid2 = Number(fs.readFileSync(pidFile, 'utf8'));
    assert.notEqual(pid2, pid1);
    assert.ok(pidAlive(pid2), `new upstream pid ${pid2}`);
    await checkEcho(ctx.client, 'ev_');

    // mcpd leaves no upstream behind when it ends.
    await ctx.close();
    assert.ok(await waitPidGone(pid2, 5000), `upstream ${pid2} outlived mcpd`);
  });
});

describe('proxy: a Streamable HTTP upstream', () => {
  let upstream;
  let ctx;
  before(async () => {
    upstream = await startEverythingHttp('streamableHttp');
    const cfg = await proxyConfig({
      web: { url: `http://127.0.0.1:${upstream.port}/mcp`, headers: { Authorization: 'Bearer x' } },
    });
    ctx = await connect1(cfg);
  });
  after(async () => {
    await ctx?.close();
    await upstream?.stop();
  });

  test('tools listed under web_; echo', async () => {
    const { tools } = await ctx.client.listTools();
    const names = tools.map((x) => x.name);
    assert.ok(names.every((n) => n.startsWith('web_')), JSON.stringify(names));
    for (const n of UPSTREAM_TOOLS) assert.ok(names.includes(`web_${n}`), `web_${n} not listed: ${JSON.stringify(names)}\n${tail(ctx.stderr())}`);
    await checkEcho(ctx.client, 'web_');
  });

  test('progress on the long-running tool', async () => {
    await checkProgress(ctx.client, 'web_');
  });

  test('sampling and elicitation reach the client', async () => {
    await checkSampling(ctx, 'web_');
    await checkElicitation(ctx, 'web_');
  });

  test('a resource reads; a prompt gets', async () => {
    await checkResourceRead(ctx.client);
    await checkPromptGet(ctx.client, 'web_');
  });

  test('a subscription gets notifications/resources/updated', { timeout: 30000 }, async () => {
    await checkSubscription(ctx, 'web_');
  });
});

describe('proxy: a Streamable HTTP upstream that restarts', () => {
  test('its session is gone: entries leave, a new session brings them back', { timeout: 40000 }, async (t) => {
    let upstream = await startEverythingHttp('streamableHttp');
    const port = upstream.port;
    t.after(() => upstream.stop());
    const cfg = await proxyConfig({ web: { url: `http://127.0.0.1:${port}/mcp` } });
    const ctx = await connect1(cfg);
    t.after(() => ctx.close());
    await checkEcho(ctx.client, 'web_');
    const listChangedSince = (since) =>
      ctx.seen.notes.filter((n) => n.at >= since && n.method === 'notifications/tools/list_changed').length;

    const restartedAt = Date.now();
    await upstream.stop();
    upstream = await startEverythingHttp('streamableHttp', port);
    // The new process knows no session: mcpd notices, withdraws the
    // entries, starts a new session and lists them again.
    await until(() => listChangedSince(restartedAt) >= 2, 20000, `two tools/list_changed\n${tail(ctx.stderr())}`);
    let names = [];
    const deadline = Date.now() + 5000;
    while (!names.includes('web_echo') && Date.now() < deadline) {
      names = (await ctx.client.listTools()).tools.map((x) => x.name);
      if (!names.includes('web_echo')) await sleep(100);
    }
    assert.ok(names.includes('web_echo'), `${JSON.stringify(names)}\n${tail(ctx.stderr())}`);
    assert.match(ctx.stderr(), /web: session expired \(HTTP (400|404)\); starting it again/);
    await checkEcho(ctx.client, 'web_');
  });
});

describe('proxy: a legacy HTTP+SSE upstream', () => {
  let upstream;
  let ctx;
  before(async () => {
    upstream = await startEverythingHttp('sse');
    const cfg = await proxyConfig({ old: { url: `http://127.0.0.1:${upstream.port}/sse` } });
    ctx = await connect1(cfg);
  });
  after(async () => {
    await ctx?.close();
    await upstream?.stop();
  });

  test('tools listed under old_; echo; a resource reads', async () => {
    const { tools } = await ctx.client.listTools();
    const names = tools.map((x) => x.name);
    for (const want of ['old_echo', 'old_get-sum', 'old_trigger-sampling-request']) {
      assert.ok(names.includes(want), `${want} not listed: ${JSON.stringify(names)}\n${tail(ctx.stderr())}`);
    }
    await checkEcho(ctx.client, 'old_');
    await checkResourceRead(ctx.client);
  });
});

describe('proxy: the SDK 2.x client in the 2026-07-28 era', () => {
  let client;
  let stderr = '';
  const asked = { elicitation: [], sampling: [] };
  before(async () => {
    const cfg = await proxyConfig({ ev: { command: ['node', EVERYTHING, 'stdio'] } });
    const dir = await proxyPluginDir();
    client = new Client2(
      { name: 'mcpd-e2e-proxy-sdk2', version: '0.0.0' },
      { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: {}, sampling: {} } },
    );
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.elicitation.push(req.params);
      return { action: 'accept', content: { name: 'Grace Hopper', check: false } };
    });
    client.setRequestHandler('sampling/createMessage', async (req) => {
      asked.sampling.push(req.params);
      return {
        role: 'assistant',
        content: { type: 'text', text: `modern answer to ${req.params.messages.at(-1).content.text}` },
        model: 'modern-model',
      };
    });
    const transport = new Stdio2Transport({
      command: MCPD,
      args: ['--plugins', dir, '--no-watch', '--config', cfg],
      env: process.env,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d) => {
      stderr += d;
    });
    await withTimeout(client.connect(transport), 30000, 'SDK 2.x connect over stdio');
  });
  after(() => client?.close().catch(() => {}));

  test('modern era; tools/list has the ev_ tools; echo', async () => {
    assert.equal(client.getProtocolEra(), 'modern');
    const { tools } = await client.listTools();
    const names = tools.map((x) => x.name);
    for (const want of ['ev_echo', 'ev_trigger-elicitation-request', 'ev_trigger-sampling-request']) {
      assert.ok(names.includes(want), `${want} not listed: ${JSON.stringify(names)}\n${tail(stderr)}`);
    }
    const res = await client.callTool({ name: 'ev_echo', arguments: { message: 'modern' } });
    assert.deepEqual(res.content, [{ type: 'text', text: 'Echo: modern' }]);
  });

  test("elicitation: an input_required round answered by the client's handler", async () => {
    const res = await client.callTool({ name: 'ev_trigger-elicitation-request', arguments: {} });
    assert.notEqual(res.isError, true, `${JSON.stringify(res)}\n${tail(stderr)}`);
    assert.equal(asked.elicitation.length, 1);
    assert.equal(asked.elicitation[0].message, 'Please provide inputs for the following fields:');
    assert.match(resultText(res), /- Name: Grace Hopper\n- Agreed to terms: false/);
  });

  test("sampling: an input_required round answered by the client's handler", async () => {
    const res = await client.callTool({ name: 'ev_trigger-sampling-request', arguments: { prompt: 'modern?' } });
    assert.notEqual(res.isError, true, `${JSON.stringify(res)}\n${tail(stderr)}`);
    assert.equal(asked.sampling.length, 1);
    assert.match(resultText(res), /modern answer to Resource trigger-sampling-request context: modern\?/);
    assert.match(resultText(res), /"model": "modern-model"/);
  });

  test('a resource reads, a prompt gets, a completion completes', async () => {
    const read = await client.readResource({ uri: 'demo://resource/dynamic/text/9' });
    assert.match(read.contents[0].text, /^Resource 9: This is a plaintext resource/);
    const prompt = await client.getPrompt({ name: 'ev_args-prompt', arguments: { city: 'Oslo' } });
    assert.deepEqual(prompt.messages, [{ role: 'user', content: { type: 'text', text: "What's weather in Oslo?" } }]);
    const done = await client.complete({
      ref: { type: 'ref/prompt', name: 'ev_completable-prompt' },
      argument: { name: 'department', value: 'Ma' },
    });
    assert.deepEqual(done.completion.values, ['Marketing']);
  });
});

describe('proxy: mcpd over HTTP in front of a stdio upstream', () => {
  let server;
  let client;
  before(async () => {
    const cfg = await proxyConfig({ ev: { command: ['node', EVERYTHING, 'stdio'] } });
    const dir = await proxyPluginDir();
    server = await startHttp([], ['--plugins', dir, '--config', cfg]);
    client = new Client({ name: 'mcpd-e2e-proxy-http', version: '0.0.0' });
    await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(server.url))), 20000, 'HTTP connect');
  });
  after(async () => {
    await client?.close().catch(() => {});
    if (server) assert.equal(await stop(server.child), 0, server.stderr());
  });

  test('echo and progress', async () => {
    await checkEcho(client, 'ev_');
    await checkProgress(client, 'ev_');
  });
});

describe('proxy: mcpd --list', () => {
  test('shows the proxy plugin and its upstream tools', { timeout: 30000 }, async () => {
    const dir = await proxyPluginDir();
    const cfg = await proxyConfig({ ev: { command: ['node', EVERYTHING, 'stdio'] } });
    const r = await runMcpd(['--plugins', dir, '--no-watch', '--config', cfg, '--list'], { timeout: 25000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^proxy\s+\S+\s+\S*proxy\.so$/m, r.stdout);
    assert.doesNotMatch(r.stdout, /NOT LOADED/);
    assert.match(r.stdout, /^\s+tool\s+ev_echo\s+Echoes back the input string$/m, r.stdout);
  });
});
