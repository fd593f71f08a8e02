// SPDX-License-Identifier: MIT
// The 2026-07-28 ("modern") revision over Streamable HTTP, with raw
// fetch(): era selection per POST, the header rules and the HTTP status of
// each error, JSON or SSE answers, cancellation by hanging up, legacy SDK
// sessions on the same server at the same time, and stateless scale-out:
// two mcpd processes behind nginx with plain round robin
// (examples/nginx/mcpd-stateless.conf) serving one modern client whose
// requests alternate between them.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  JSON_HEADERS,
  MCPD,
  SRCDIR,
  makePluginDir,
  makeTempDir,
  sleep,
  startHttp,
  stop,
  track,
  withTimeout,
  writeFile,
} from './lib.mjs';

const MODERN = '2026-07-28';
const K = 'io.modelcontextprotocol/';

function envelope(extra = {}, capabilities = {}) {
  return {
    [`${K}protocolVersion`]: MODERN,
    [`${K}clientCapabilities`]: capabilities,
    [`${K}clientInfo`]: { name: 'mcpd-e2e', version: '0.0.0' },
    ...extra,
  };
}

/** The standard headers of a modern request, as a client derives them. */
function standardHeaders(method, params) {
  const h = { 'mcp-protocol-version': MODERN, 'mcp-method': method };
  if (method === 'tools/call' || method === 'prompts/get') h['mcp-name'] = params.name;
  if (method === 'resources/read') h['mcp-name'] = params.uri;
  return h;
}

/** Splits an SSE body into its events' JSON messages; notes any "id:". */
function parseSse(text) {
  const messages = [];
  let ids = 0;
  for (const event of text.split('\n\n')) {
    const data = [];
    for (const line of event.split('\n')) {
      if (line.startsWith('data: ')) data.push(line.slice(6));
      if (line.startsWith('id:')) ids++;
    }
    if (data.length) messages.push(JSON.parse(data.join('\n')));
  }
  return { messages, ids };
}

let nextId = 1;

/**
 * POSTs one modern request.  `headers` override the standard ones
 * (names case-insensitively); a null value removes that header, a null
 * `meta` the envelope.  Resolves {status, type, res, messages,
 * answer, eventIds, sid}.
 */
async function send(url, method, params = {}, { headers = {}, meta = envelope(), id = nextId++, body } = {}) {
  const p = meta === null ? params : { ...params, _meta: meta };
  const all = { ...JSON_HEADERS, ...standardHeaders(method, p) };
  for (const [k, v] of Object.entries(headers)) {
    for (const old of Object.keys(all)) if (old.toLowerCase() === k.toLowerCase()) delete all[old];
    if (v !== null) all[k] = v;
  }
  const res = await fetch(url, {
    method: 'POST',
    headers: all,
    body: body ?? JSON.stringify({ jsonrpc: '2.0', id, method, params: p }),
  });
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  let messages = [];
  let eventIds = 0;
  if (type.startsWith('text/event-stream')) ({ messages, ids: eventIds } = parseSse(text));
  else if (text) messages = [JSON.parse(text)];
  const answer = messages.find((m) => 'result' in m || 'error' in m);
  return { status: res.status, type, messages, answer, eventIds, sid: res.headers.get('mcp-session-id'), id };
}

function assertFails(r, status, code, what) {
  assert.equal(r.status, status, `${what}: HTTP ${r.status} ${JSON.stringify(r.answer)}`);
  assert.equal(r.answer?.error?.code, code, `${what}: ${JSON.stringify(r.answer)}`);
  assert.deepEqual(r.answer.id, r.id, `${what}: the error carries the request's id`);
}

function assertResult(r, what) {
  assert.equal(r.status, 200, `${what}: HTTP ${r.status} ${JSON.stringify(r.answer)}`);
  assert.ok(r.answer && 'result' in r.answer, `${what}: ${JSON.stringify(r.answer)}`);
  assert.equal(r.answer.result.resultType, 'complete', what);
}

describe('the modern era over HTTP', () => {
  let server;
  before(async () => {
    server = await startHttp(['echo', 'everything', 'good'], ['--log-level', 'debug']);
  });
  after(async () => {
    assert.equal(await stop(server.child), 0, server.stderr());
  });

  test('server/discover: no session, no handshake', async () => {
    const r = await send(server.url, 'server/discover');
    assertResult(r, 'discover');
    assert.equal(r.type, 'application/json');
    assert.equal(r.sid, null, 'no Mcp-Session-Id in the modern era');
    assert.ok(r.answer.result.supportedVersions.includes(MODERN));
    assert.equal(r.answer.result.cacheScope, 'public');
    assert.equal(r.answer.result._meta[`${K}serverInfo`].name, 'mcpd');
  });

  test('x-mcp-header arguments are checked against their Mcp-Param-* headers', async () => {
    const list = await send(server.url, 'tools/list');
    const tool = list.answer.result.tools.find((t) => t.name === 'test_param_headers');
    assert.equal(tool.inputSchema.properties.region['x-mcp-header'], 'Region', 'listed as the plugin wrote it');
    const call = (args, headers) => send(server.url, 'tools/call', { name: 'test_param_headers', arguments: args }, { headers });
    const b64 = (s) => `=?base64?${Buffer.from(s).toString('base64')}?=`;
    // Accepted: plain, trimmed, Base64, numbers by value, absent with its argument.
    for (const [what, args, headers] of [
      ['plain', { region: 'us-west1', priority: 42 }, { 'Mcp-Param-Region': 'us-west1', 'Mcp-Param-Priority': '42' }],
      ['spaces around', { region: 'eu' }, { 'mcp-param-region': '  eu\t' }],
      ['base64', { region: 'Hello, 世界' }, { 'Mcp-Param-Region': b64('Hello, 世界') }],
      ['no wrapper: literal', { region: 'SGVsbG8=' }, { 'Mcp-Param-Region': 'SGVsbG8=' }],
      ['no suffix: literal', { region: '=?base64?SGVsbG8=' }, { 'Mcp-Param-Region': '=?base64?SGVsbG8=' }],
      ['integer by value', { region: 'x', priority: 7 }, { 'Mcp-Param-Region': 'x', 'Mcp-Param-Priority': '7.0' }],
      ['absent argument, no header', { region: 'x' }, { 'Mcp-Param-Region': 'x' }],
    ]) {
      const r = await call(args, headers);
      assertResult(r, what);
      assert.equal(r.answer.result.isError, undefined, `${what}: ${JSON.stringify(r.answer)}`);
    }
    // A null argument needs no header (clients omit it); the schema, not
    // the header check, then refuses the null.
    const nul = await call({ region: 'x', priority: null }, { 'Mcp-Param-Region': 'x' });
    assertResult(nul, 'null argument');
    assert.match(nul.answer.result.content[0].text, /expected an integer, got null/);
    const ok = await call({ region: 'us-west1', priority: 42 }, { 'Mcp-Param-Region': 'us-west1', 'Mcp-Param-Priority': '42' });
    assert.deepEqual(ok.answer.result.content, [{ type: 'text', text: 'region=us-west1 priority=42' }]);
    // Refused with 400 / -32020 before the tool runs.
    for (const [what, args, headers, why] of [
      ['missing header', { region: 'us-west1' }, {}, /Mcp-Param-Region header is required/],
      ['different value', { region: 'us-west1' }, { 'Mcp-Param-Region': 'us-east1' }, /does not match/],
      ['bad padding', { region: 'Hello' }, { 'Mcp-Param-Region': '=?base64?SGVsbG8?=' }, /not valid/],
      ['bad characters', { region: 'Hello' }, { 'Mcp-Param-Region': '=?base64?SGVs!!!bG8=?=' }, /not valid/],
      ['number differs', { region: 'x', priority: 1 }, { 'Mcp-Param-Region': 'x', 'Mcp-Param-Priority': '2' }, /Priority header does not match/],
      ['header without argument', { region: 'x' }, { 'Mcp-Param-Region': 'x', 'Mcp-Param-Priority': '1' }, /no argument/],
      ['hex is not a JSON number', { region: 'x', priority: 16 }, { 'Mcp-Param-Region': 'x', 'Mcp-Param-Priority': '0x10' }, /does not match/],
      ['a plus sign neither', { region: 'x', priority: 16 }, { 'Mcp-Param-Region': 'x', 'Mcp-Param-Priority': '+16' }, /does not match/],
      ['a NUL in the decoded value', { region: 'x', priority: 16 }, { 'Mcp-Param-Region': 'x', 'Mcp-Param-Priority': b64('16\0junk') }, /does not match/],
      ['past 2^53 a double is not exact', { region: 'x', priority: 9007199254740992 }, { 'Mcp-Param-Region': 'x', 'Mcp-Param-Priority': '9007199254740993.0' }, /does not match/],
    ]) {
      const r = await call(args, headers);
      assertFails(r, 400, -32020, what);
      assert.match(r.answer.error.message, why, what);
    }
  });

  test('tools/call echo, then every other method, each POST on its own', async () => {
    const r = await send(server.url, 'tools/call', { name: 'echo', arguments: { text: 'hi' } });
    assertResult(r, 'echo');
    assert.deepEqual(r.answer.result.content, [{ type: 'text', text: 'hi' }]);
    const list = await send(server.url, 'tools/list');
    assertResult(list, 'tools/list');
    assert.ok(list.answer.result.tools.some((t) => t.name === 'echo'));
    const read = await send(server.url, 'resources/read', { uri: 'test://static-text' });
    assertResult(read, 'resources/read');
    const prompt = await send(server.url, 'prompts/get', { name: 'test_simple_prompt' });
    assertResult(prompt, 'prompts/get');
  });

  test('era selection per POST (reference section 1)', async () => {
    // A claim-less request that names 2026-07-28 lacks its envelope.
    let r = await send(server.url, 'tools/list', {}, { meta: null });
    assertFails(r, 400, -32602, 'no claim, modern header');
    // A claim-less initialize with the modern header.
    r = await send(
      server.url,
      'initialize',
      { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      { meta: null },
    );
    assertFails(r, 400, -32020, 'claim-less initialize, modern header');
    // A claimed initialize is a modern call to a method that does not exist.
    r = await send(server.url, 'initialize', {});
    assertFails(r, 404, -32601, 'claimed initialize');
    // Without the modern header and the claim: the legacy path, which
    // wants a session.
    r = await send(server.url, 'tools/list', {}, { meta: null, headers: { 'mcp-protocol-version': null } });
    assert.equal(r.status, 400);
    assert.match(r.answer.error.message, /Mcp-Session-Id/);
  });

  test('envelope and version errors, in the order of reference section 3', async () => {
    let r = await send(server.url, 'server/discover', {}, { meta: { [`${K}protocolVersion`]: MODERN } });
    assertFails(r, 400, -32602, 'no clientCapabilities');
    // Header and body disagree: -32020 before -32022.
    r = await send(server.url, 'server/discover', {}, { meta: envelope({ [`${K}protocolVersion`]: 'v999' }) });
    assertFails(r, 400, -32020, 'header ≠ body version');
    r = await send(server.url, 'server/discover', {}, {
      meta: envelope({ [`${K}protocolVersion`]: 'v999' }),
      headers: { 'mcp-protocol-version': 'v999' },
    });
    assertFails(r, 400, -32022, 'unsupported version');
    assert.deepEqual(r.answer.error.data, { supported: [MODERN], requested: 'v999' });
    // A bad envelope is reported before a missing Mcp-Method.
    r = await send(server.url, 'tools/list', {}, {
      meta: { [`${K}protocolVersion`]: MODERN },
      headers: { 'mcp-method': null },
    });
    assertFails(r, 400, -32602, 'envelope before header presence');
    // The version header itself missing (the claim routes it here).
    r = await send(server.url, 'tools/list', {}, { headers: { 'mcp-protocol-version': null } });
    assertFails(r, 400, -32020, 'no MCP-Protocol-Version');
    // Not one JSON-RPC request.
    r = await send(server.url, 'tools/list', {}, {
      id: 7,
      body: JSON.stringify({ jsonrpc: '1.0', id: 7, method: 'tools/list', params: { _meta: envelope() } }),
    });
    assertFails(r, 400, -32600, 'jsonrpc 1.0');
  });

  test('Mcp-Method and Mcp-Name: missing, different, trimmed, base64, case', async () => {
    const echo = { name: 'echo', arguments: { text: 'x' } };
    assertFails(await send(server.url, 'tools/list', {}, { headers: { 'mcp-method': null } }), 400, -32020, 'no Mcp-Method');
    assertFails(
      await send(server.url, 'tools/list', {}, { headers: { 'mcp-method': 'prompts/list' } }),
      400,
      -32020,
      'other Mcp-Method',
    );
    assertFails(
      await send(server.url, 'tools/list', {}, { headers: { 'mcp-method': 'TOOLS/LIST' } }),
      400,
      -32020,
      'values are case-sensitive',
    );
    assertResult(await send(server.url, 'tools/list', {}, { headers: { 'MCP-METHOD': 'tools/list' } }), 'names are not');
    assertFails(await send(server.url, 'tools/call', echo, { headers: { 'mcp-name': null } }), 400, -32020, 'no Mcp-Name');
    assertFails(await send(server.url, 'tools/call', echo, { headers: { 'mcp-name': 'add' } }), 400, -32020, 'other name');
    assertResult(await send(server.url, 'tools/call', echo, { headers: { 'mcp-name': ' \techo  ' } }), 'trimmed');
    const b64 = Buffer.from('echo').toString('base64');
    assertResult(await send(server.url, 'tools/call', echo, { headers: { 'mcp-name': `=?base64?${b64}?=` } }), 'base64');
    assertFails(
      await send(server.url, 'tools/call', echo, { headers: { 'mcp-name': '=?base64?ZWNo!G8=?=' } }),
      400,
      -32020,
      'bad base64',
    );
    assertFails(
      await send(server.url, 'resources/read', { uri: 'test://static-text' }, { headers: { 'mcp-name': 'test://other' } }),
      400,
      -32020,
      'resources/read names its uri',
    );
    // A URI with bytes a header cannot carry travels base64-encoded.
    const uri = 'test://static-text';
    assertResult(
      await send(server.url, 'resources/read', { uri }, {
        headers: { 'mcp-name': `=?base64?${Buffer.from(uri).toString('base64')}?=` },
      }),
      'base64 uri',
    );
  });

  test('HTTP status by error code; notifications get 202', async () => {
    assertFails(await send(server.url, 'ping'), 404, -32601, 'ping is removed');
    assertFails(await send(server.url, 'logging/setLevel', { level: 'info' }), 404, -32601, 'setLevel is removed');
    assertFails(await send(server.url, 'no/such/method'), 404, -32601, 'unknown method');
    assertFails(await send(server.url, 'tools/call', { name: 'nope', arguments: {} }), 400, -32602, 'unknown tool');
    const r = await send(server.url, 'tools/call', { name: 'test_sampling', arguments: { prompt: 'hi' } });
    assertFails(r, 400, -32021, 'sampling not declared');
    assert.deepEqual(r.answer.error.data.requiredCapabilities, { sampling: {} });
    // A tool error is a result.
    const err = await send(server.url, 'tools/call', { name: 'test_error_handling', arguments: {} });
    assertResult(err, 'tool error');
    assert.equal(err.answer.result.isError, true);

    const res = await fetch(server.url, {
      method: 'POST',
      headers: { ...JSON_HEADERS, ...standardHeaders('notifications/cancelled', {}) },
      body: JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 1, _meta: envelope() },
      }),
    });
    assert.equal(res.status, 202);
    assert.equal(await res.text(), '');
  });

  test('progress turns the answer into an SSE stream of that request only', async () => {
    const r = await send(server.url, 'tools/call', {
      name: 'test_tool_with_progress',
      arguments: {},
    }, { meta: envelope({ progressToken: 'p1' }) });
    assert.equal(r.status, 200);
    assert.equal(r.type, 'text/event-stream');
    assert.equal(r.eventIds, 0, 'no event ids: nothing to resume');
    const progress = r.messages.filter((m) => m.method === 'notifications/progress');
    assert.ok(progress.length >= 1);
    for (const p of progress) assert.equal(p.params.progressToken, 'p1');
    assert.equal(r.messages.at(-1), r.answer, 'the response comes last');
    assert.equal(r.answer.result.resultType, 'complete');
    // Without a progress token the same call answers with JSON.
    const plain = await send(server.url, 'tools/call', { name: 'test_tool_with_progress', arguments: {} });
    assert.equal(plain.type, 'application/json');
    assertResult(plain, 'no token');
  });

  test('log lines only at the request’s own logLevel', async () => {
    const quiet = await send(server.url, 'tools/call', { name: 'test_tool_with_logging', arguments: {} });
    assertResult(quiet, 'no logLevel');
    assert.equal(quiet.type, 'application/json');
    const loud = await send(server.url, 'tools/call', { name: 'test_tool_with_logging', arguments: {} }, {
      meta: envelope({ [`${K}logLevel`]: 'info' }),
    });
    assert.equal(loud.type, 'text/event-stream');
    assert.ok(loud.messages.filter((m) => m.method === 'notifications/message').length >= 1);
    assert.equal(loud.answer.result.resultType, 'complete');
  });

  test('a client that hangs up cancels its request', async () => {
    const ac = new AbortController();
    const id = nextId++;
    const pending = fetch(server.url, {
      method: 'POST',
      headers: { ...JSON_HEADERS, ...standardHeaders('tools/call', { name: 'wait_cancel' }) },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'wait_cancel', arguments: {}, _meta: envelope() },
      }),
      signal: ac.signal,
    }).catch((e) => e);
    await sleep(200);
    ac.abort();
    assert.ok((await pending) instanceof Error);
    await withTimeout(
      (async () => {
        while (!new RegExp(`request ${id} cancelled by the client`).test(server.stderr())) await sleep(20);
      })(),
      3000,
      'the cancellation',
    );
    assertResult(await send(server.url, 'tools/list'), 'the server goes on');
  });

  test('a legacy SDK session works at the same time, unchanged', async () => {
    const client = new Client({ name: 'legacy', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    assert.ok(client.transport.sessionId, 'the legacy era has sessions');
    const both = await Promise.all([
      client.callTool({ name: 'echo', arguments: { text: 'old' } }),
      send(server.url, 'tools/call', { name: 'echo', arguments: { text: 'new' } }),
      client.listTools(),
      send(server.url, 'tools/list'),
    ]);
    assert.deepEqual(both[0].content, [{ type: 'text', text: 'old' }]);
    assert.equal(both[0].resultType, undefined, 'no modern members on legacy results');
    assertResult(both[1], 'modern echo');
    assert.equal(both[2].ttlMs, undefined);
    assertResult(both[3], 'modern list');
    // A modern claim inside the legacy session is the session's business,
    // not the modern path's.
    assert.deepEqual(await client.ping(), {});
    await client.transport.terminateSession();
    await client.close();
  });
});

/* --- stateless scale-out behind nginx ---------------------------------- */

const EXAMPLE = path.join(SRCDIR, 'examples', 'nginx', 'mcpd-stateless.conf');
const NODES = ['a', 'b'];

function findNginx() {
  for (const c of [process.env.NGINX, 'nginx', '/usr/sbin/nginx', '/usr/local/nginx/sbin/nginx']) {
    if (!c) continue;
    const r = spawnSync(c, ['-v'], { encoding: 'utf8' });
    if (r.status === 0 && /nginx\/\d+\.\d+\.\d+/.test(`${r.stderr ?? ''}`)) return c;
  }
  return null;
}

const NGINX = findNginx();
const REQUIRED = process.env.MCPD_REQUIRE_E2E === '1';
const SKIP = NGINX || REQUIRED ? false : 'nginx is not installed (apt-get install nginx)';

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** One mcpd on unix:DIR/NODE.sock whose `good` config names it. */
async function startNode(dir, plugins, node) {
  const config = await writeFile(dir, `${node}.json`, JSON.stringify({ plugins: { good: { node } } }));
  const socket = path.join(dir, `${node}.sock`);
  const child = track(
    spawn(
      MCPD,
      [
        '--transport', 'http',
        '--listen', `unix:${socket}`,
        '--session-prefix', `${node}.`,
        '--config', config,
        '--plugins', plugins,
        '--no-watch',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    ),
  );
  const rec = { child, err: '' };
  await withTimeout(
    new Promise((resolve, reject) => {
      child.stderr.on('data', (d) => {
        rec.err += d;
        if (/listening on unix:/.test(rec.err)) resolve();
      });
      child.once('exit', (code) => reject(new Error(`mcpd ${node} exited ${code}: ${rec.err}`)));
    }),
    5000,
    `mcpd ${node} to listen`,
  );
  if (process.getuid?.() === 0) await fsp.chmod(socket, 0o666);
  return rec;
}

/** The example config with only its sockets and port replaced. */
async function startNginx(dir, port) {
  let site = await fsp.readFile(EXAMPLE, 'utf8');
  for (const node of NODES) {
    // In the round-robin upstream, and in the process's own (tasks).
    const from = `server unix:/run/mcpd/${node}/mcpd.sock;`;
    assert.equal(site.split(from).length - 1, 2, `${EXAMPLE} names ${from} twice`);
    site = site.split(from).join(`server unix:${path.join(dir, `${node}.sock`)};`);
  }
  const listen = '    listen 80;\n    listen [::]:80;\n';
  assert.ok(site.includes(listen), `${EXAMPLE} listens on port 80`);
  site = site.replace(listen, `    listen 127.0.0.1:${port};\n`);
  await writeFile(dir, 'site.conf', site);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((k) => `    ${k}_temp_path ${path.join(dir, `${k}_temp`)};`)
    .join('\n');
  // One worker: round robin is per worker, and the test counts on strict
  // alternation.
  const conf = await writeFile(
    dir,
    'nginx.conf',
    `worker_processes 1;
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'error.log')} info;
events { worker_connections 256; }
http {
    log_format route '$request_method $uri up=$upstream_addr status=$status';
    access_log ${path.join(dir, 'access.log')} route;
${temp}
    include ${path.join(dir, 'site.conf')};
}
`,
  );
  const child = track(
    spawn(NGINX, ['-e', path.join(dir, 'error.log'), '-p', `${dir}/`, '-c', conf, '-g', 'daemon off;'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  );
  const deadline = Date.now() + 5000;
  for (;;) {
    if (child.exitCode !== null) {
      const log = fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : '';
      throw new Error(`nginx exited ${child.exitCode}: ${log}`);
    }
    try {
      await (await fetch(`http://127.0.0.1:${port}/`)).arrayBuffer();
      return child;
    } catch {
      if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port}`);
      await sleep(50);
    }
  }
}

async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return withTimeout(exited, 5000, `pid ${child.pid} to exit`);
}

describe('stateless scale-out: two mcpd behind round-robin nginx', { skip: SKIP }, () => {
  let dir;
  let nginx;
  let url;
  const nodes = {};

  before(async () => {
    if (!NGINX) throw new Error('nginx is not installed, and MCPD_REQUIRE_E2E=1 makes that a failure');
    dir = await makeTempDir('mcpd-stateless-');
    if (process.getuid?.() === 0) await fsp.chmod(dir, 0o711);
    const plugins = await makePluginDir(['echo', 'everything', 'good']);
    for (const node of NODES) nodes[node] = await startNode(dir, plugins, node);
    const port = await freePort();
    nginx = await startNginx(dir, port);
    url = `http://127.0.0.1:${port}/mcp`;
  });

  after(async () => {
    if (nginx) await stopChild(nginx).catch(() => stopChild(nginx));
    for (const node of NODES) {
      if (nodes[node]) assert.equal(await stopChild(nodes[node].child), 0, nodes[node].err);
    }
  });

  test('one modern client, its requests alternating between the processes', async () => {
    const discover = await send(url, 'server/discover');
    assertResult(discover, 'discover through nginx');
    const served = [];
    for (let i = 0; i < 10; i++) {
      const r = await send(url, 'tools/call', { name: 'config', arguments: {} });
      assertResult(r, `call ${i}`);
      served.push(JSON.parse(r.answer.result.content[0].text).node);
    }
    for (let i = 1; i < served.length; i++)
      assert.notEqual(served[i], served[i - 1], `no affinity, round robin: ${served.join('')}`);
    assert.deepEqual(new Set(served), new Set(NODES));
    const log = await fsp.readFile(path.join(dir, 'access.log'), 'utf8');
    const ups = log
      .split('\n')
      .filter((l) => l.startsWith('POST /mcp'))
      .map((l) => /up=(\S+)/.exec(l)[1]);
    assert.equal(new Set(ups).size, 2, 'nginx used both upstreams');
  });

  test('an SSE answer (progress) passes through nginx unbuffered, whole', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await send(url, 'tools/call', { name: 'test_tool_with_progress', arguments: {} }, {
        meta: envelope({ progressToken: i }),
      });
      assert.equal(r.type, 'text/event-stream');
      assert.ok(r.messages.some((m) => m.method === 'notifications/progress'));
      assertResult(r, `progress ${i}`);
    }
  });

  test('tasks/get, tasks/update and tasks/cancel reach the process that holds the task', async () => {
    const ext = envelope({}, { elicitation: {}, extensions: { [`${K}tasks`]: {} } });
    const made = { a: 0, b: 0 };
    for (let i = 0; i < 4; i++) {
      // Round robin: the tasks are made on both processes.
      const created = await send(url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.2 } }, { meta: ext });
      assert.equal(created.answer?.result?.resultType, 'task', JSON.stringify(created.answer));
      const id = created.answer.result.taskId;
      assert.match(id, /^[ab]\.task-[0-9a-f]{32}$/);
      made[id[0]]++;
      // Each poll would find the task on one process in two without the
      // map; through it, every one does.
      let status;
      for (let k = 0; k < 40 && status !== 'completed'; k++) {
        const got = await send(url, 'tasks/get', { taskId: id }, { meta: ext, headers: { 'mcp-name': id } });
        assertResult(got, `tasks/get ${k} of ${id}`);
        status = got.answer.result.status;
        if (status !== 'completed') await sleep(50);
      }
      assert.equal(status, 'completed');
    }
    assert.ok(made.a > 0 && made.b > 0, `tasks on both processes: ${JSON.stringify(made)}`);
    // tasks/update and tasks/cancel too.
    const asking = await send(url, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'n' } }, { meta: ext });
    const id = asking.answer.result.taskId;
    let task;
    for (let k = 0; k < 40; k++) {
      task = (await send(url, 'tasks/get', { taskId: id }, { meta: ext, headers: { 'mcp-name': id } })).answer.result;
      if (task.status === 'input_required') break;
      await sleep(50);
    }
    assert.equal(task.status, 'input_required');
    const update = await send(url, 'tasks/update', { taskId: id, inputResponses: { confirm_delete: { action: 'decline' } } }, {
      meta: ext,
      headers: { 'mcp-name': id },
    });
    assertResult(update, 'tasks/update');
    const long = await send(url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 30 } }, { meta: ext });
    const longId = long.answer.result.taskId;
    for (let k = 0; k < 2; k++) {
      const cancel = await send(url, 'tasks/cancel', { taskId: longId }, { meta: ext, headers: { 'mcp-name': longId } });
      assertResult(cancel, `tasks/cancel ${k}`);
    }
    const log = await fsp.readFile(path.join(dir, 'access.log'), 'utf8');
    assert.ok(!/status=5\d\d/.test(log), 'no request failed in nginx');
  });

  test('errors keep their status through nginx', async () => {
    assertFails(await send(url, 'ping'), 404, -32601, 'removed method');
    assertFails(await send(url, 'tools/list', {}, { headers: { 'mcp-method': null } }), 400, -32020, 'no Mcp-Method');
  });
});
