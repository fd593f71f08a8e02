// SPDX-License-Identifier: MIT
// Scale-out: real nginx in front of two mcpd processes, routing every
// request of a session to the process that created it
// (examples/nginx/mcpd.conf).
//
// The nginx config under test is the example file itself, with only its
// socket paths and listen port replaced, so the routing logic tested is the
// one users copy.  Each mcpd has its own --session-prefix and its own
// --config, whose instructions and whose config for the `good` fixture name
// the process ("a" or "b"): every tools/call of `config` therefore says
// which process answered it, and the test compares that with the prefix of
// the session id the call belonged to.  nginx's access log records the
// upstream each request went to, which is compared the same way.
//
// Without an nginx binary the tests are skipped, unless MCPD_REQUIRE_E2E=1.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  LATEST,
  MCPD,
  SRCDIR,
  makePluginDir,
  makeTempDir,
  resultText,
  sleep,
  track,
  withTimeout,
  writeFile,
} from './lib.mjs';

const EXAMPLE = path.join(SRCDIR, 'examples', 'nginx', 'mcpd.conf');
const NODES = ['a', 'b'];
const PUBLIC_NAME = 'mcp.example.com';
const SESSIONS = 40;
const CONCURRENCY = 8;

/** The nginx binary: $NGINX, else nginx on PATH, else /usr/sbin/nginx. */
function findNginx() {
  const candidates = [process.env.NGINX, 'nginx', '/usr/sbin/nginx', '/usr/local/nginx/sbin/nginx'];
  for (const c of candidates) {
    if (!c) continue;
    const r = spawnSync(c, ['-v'], { encoding: 'utf8' });
    const m = /nginx\/(\d+)\.(\d+)\.(\d+)/.exec(`${r.stderr ?? ''}`);
    if (r.status === 0 && m) return { bin: c, version: m.slice(1).map(Number) };
  }
  return null;
}

const NGINX = findNginx();
const REQUIRED = process.env.MCPD_REQUIRE_E2E === '1';
const SKIP = NGINX || REQUIRED ? false : 'nginx is not installed (apt-get install nginx)';

/** A TCP port that was free a moment ago. */
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

/** Resolves once `child` wrote a line matching `re` to stderr. */
function waitStderr(child, re, what, ms = 5000) {
  let err = '';
  return withTimeout(
    new Promise((resolve, reject) => {
      child.stderr.on('data', (d) => {
        err += d;
        if (re.test(err)) resolve();
      });
      child.once('exit', (code) => reject(new Error(`${what} exited ${code}: ${err}`)));
    }),
    ms,
    what,
  );
}

/** Starts one mcpd listening on unix:DIR/NODE.sock; resolves its record. */
async function startMcpd(dir, pluginDir, node) {
  const config = await writeFile(
    dir,
    `${node}.json`,
    JSON.stringify({ instructions: `served by ${node}`, plugins: { good: { node } } }),
  );
  const socket = path.join(dir, `${node}.sock`);
  const args = [
    '--transport', 'http',
    '--listen', `unix:${socket}`,
    '--session-prefix', `${node}.`,
    '--allow-host', PUBLIC_NAME,
    '--config', config,
    '--plugins', pluginDir,
    '--no-watch',
  ];
  const child = track(spawn(MCPD, args, { stdio: ['ignore', 'ignore', 'pipe'] }));
  const rec = { node, socket, child, err: '' };
  child.stderr.on('data', (d) => {
    rec.err += d;
  });
  await waitStderr(child, /listening on unix:/, `mcpd ${node} to listen`);
  // As root, nginx's workers run as nobody, and must be able to connect.
  if (process.getuid?.() === 0) await fsp.chmod(socket, 0o666);
  return rec;
}

/** Replaces `from` in `text`, asserting it was there `count` times. */
function replaceExactly(text, from, to, count) {
  const n = text.split(from).length - 1;
  if (n !== count) throw new Error(`${EXAMPLE}: expected ${count} × ${JSON.stringify(from)}, found ${n}`);
  return text.split(from).join(to);
}

/** nginx.conf for DIR: the example, included into a private http block. */
async function writeNginxConf(dir, port) {
  let site = await fsp.readFile(EXAMPLE, 'utf8');
  for (const node of NODES) {
    const sock = path.join(dir, `${node}.sock`);
    site = replaceExactly(site, `server unix:/run/mcpd/${node}/mcpd.sock;`, `server unix:${sock};`, 2);
  }
  site = replaceExactly(site, '    listen 80;\n    listen [::]:80;\n', `    listen 127.0.0.1:${port};\n`, 1);
  await writeFile(dir, 'mcpd.conf', site);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((k) => `    ${k}_temp_path ${path.join(dir, `${k}_temp`)};`)
    .join('\n');
  return writeFile(
    dir,
    'nginx.conf',
    `# Written by tests/e2e/nginx.test.mjs; everything stays in ${dir}.
worker_processes 2;
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'error.log')} info;
events { worker_connections 512; }
http {
    log_format route '$request_method $uri sid=$http_mcp_session_id arg=$arg_sessionId up=$upstream_addr status=$status';
    access_log ${path.join(dir, 'access.log')} route;
${temp}
    include ${path.join(dir, 'mcpd.conf')};
}
`,
  );
}

/** Starts nginx in the foreground on 127.0.0.1:port; resolves the child. */
async function startNginx(dir, port) {
  const conf = await writeNginxConf(dir, port);
  const args = ['-p', `${dir}/`, '-c', conf, '-g', 'daemon off;'];
  // -e (1.19.5) keeps even the first error log, before nginx.conf is
  // read, out of /var/log/nginx.
  const [maj, min, pat] = NGINX.version;
  if (maj > 1 || (maj === 1 && (min > 19 || (min === 19 && pat >= 5)))) {
    args.unshift('-e', path.join(dir, 'error.log'));
  }
  const child = track(spawn(NGINX.bin, args, { stdio: ['ignore', 'ignore', 'pipe'] }));
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
  });
  const deadline = Date.now() + 5000;
  for (;;) {
    if (child.exitCode !== null) {
      const log = fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : '';
      throw new Error(`nginx exited ${child.exitCode}: ${err}\n${log}`);
    }
    try {
      const res = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'GET' });
      await res.arrayBuffer();
      return child;
    } catch {
      if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port}: ${err}`);
      await sleep(50);
    }
  }
}

/** Sends SIGTERM (or `signal`) and resolves the exit code. */
async function stop(child, signal = 'SIGTERM') {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill(signal);
  return withTimeout(exited, 5000, `pid ${child.pid} to exit`);
}

/**
 * One raw HTTP request, to nginx ({port}) or straight to an mcpd
 * ({socketPath}); resolves {status, headers, body}.
 */
function request({ port, socketPath, method = 'POST', headers = {}, body, path: p = '/mcp' }) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        socketPath,
        path: p,
        method,
        agent: false,
        headers: {
          host: port ? `127.0.0.1:${port}` : 'localhost',
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const ping = (sid, id = 1) => ({
  body: { jsonrpc: '2.0', id, method: 'ping' },
  headers: { 'mcp-session-id': sid, 'mcp-protocol-version': LATEST },
});

/** Runs `worker` over 0..n-1 with at most `limit` at once, in order. */
async function pool(n, limit, worker) {
  const out = new Array(n);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, n) }, async () => {
    while (next < n) {
      const i = next++;
      out[i] = await worker(i);
    }
  });
  await Promise.all(lanes);
  return out;
}

/** The node ("a" or "b") a session id belongs to, by its prefix. */
function owner(sid) {
  const m = /^([ab])\.[0-9a-f]{32}$/.exec(sid ?? '');
  assert.ok(m, `session id ${JSON.stringify(sid)} has a node prefix and 128 bits`);
  return m[1];
}

describe('nginx in front of two mcpd processes', { skip: SKIP }, () => {
  let dir;
  let nginx;
  let port;
  let url;
  const mcpd = {};
  /** Every Streamable HTTP session: {sid, node, deleted}. */
  let sessions = [];

  before(async () => {
    if (!NGINX) throw new Error('nginx is not installed, and MCPD_REQUIRE_E2E=1 makes that a failure');
    dir = await makeTempDir('mcpd-nginx-');
    // As root, nginx's workers switch to nobody, who must reach the
    // sockets and temp directories in here (but not list them).
    if (process.getuid?.() === 0) await fsp.chmod(dir, 0o711);
    // One plugin directory for both processes, as in a deployment.
    const plugins = await makePluginDir(['echo', 'good', 'everything']);
    for (const node of NODES) mcpd[node] = await startMcpd(dir, plugins, node);
    for (let attempt = 0; ; attempt++) {
      port = await freePort();
      try {
        nginx = await startNginx(dir, port);
        break;
      } catch (e) {
        // Another process may have taken the port in between.
        if (attempt >= 2 || !/Address already in use/.test(e.message)) throw e;
      }
    }
    url = `http://127.0.0.1:${port}/mcp`;
  });

  after(async () => {
    // SIGTERM, not the graceful SIGQUIT: that waits for connections the
    // client's pool opened and never used until the client closes them.
    if (nginx) await stop(nginx).catch(() => stop(nginx, 'SIGKILL'));
    for (const node of NODES) {
      if (!mcpd[node]) continue;
      assert.equal(await stop(mcpd[node].child), 0, `mcpd ${node}:\n${mcpd[node].err}`);
    }
  });

  test(`${SESSIONS} SDK sessions, ${CONCURRENCY} at a time, each answered by its own process`, async () => {
    sessions = await pool(SESSIONS, CONCURRENCY, (i) =>
      withTimeout(
        (async () => {
          const client = new Client({ name: `nginx-${i}`, version: '1.0.0' });
          const transport = new StreamableHTTPClientTransport(new URL(url));
          await client.connect(transport);
          const sid = transport.sessionId;
          const node = owner(sid);
          // initialize: the process that issued the id also answered.
          assert.equal(client.getInstructions(), `served by ${node}`);
          const { tools } = await client.listTools();
          for (const name of ['echo', 'add', 'config']) {
            assert.ok(tools.some((t) => t.name === name), `tools/list of ${sid} has ${name}`);
          }
          for (let k = 0; k < 3; k++) {
            const text = `session ${i} call ${k}`;
            const echoed = await client.callTool({ name: 'echo', arguments: { text } });
            assert.equal(resultText(echoed), text);
            const sum = await client.callTool({ name: 'add', arguments: { a: i, b: k } });
            // The fixture writes the shortest %g text that reads back as
            // the sum (10 is "1e+01"): compare numbers.
            assert.equal(Number(resultText(sum)), i + k);
            // Every later request: the process that answered is the owner.
            const who = await client.callTool({ name: 'config', arguments: {} });
            assert.deepEqual(JSON.parse(resultText(who)), { node }, `call ${k} of ${sid}`);
          }
          // Half end their session with DELETE; the others just go away,
          // leaving the session open on its process.
          const deleted = i % 2 === 0;
          if (deleted) await transport.terminateSession();
          await client.close();
          return { sid, node, deleted };
        })(),
        20000,
        `session ${i}`,
      ),
    );

    assert.equal(new Set(sessions.map((s) => s.sid)).size, SESSIONS, 'every session id is new');
    const count = { a: 0, b: 0 };
    for (const s of sessions) count[s.node]++;
    // Round robin per nginx worker: close to half each, never all on one.
    for (const node of NODES) {
      assert.ok(count[node] >= SESSIONS / 4, `process ${node} got ${count[node]} of ${SESSIONS} sessions`);
    }
  });

  test('DELETE reached the owner; the sessions left open still answer, through nginx only', async () => {
    assert.equal(sessions.length, SESSIONS, 'the sessions of the test before');
    for (const s of sessions) {
      const viaNginx = await request({ port, ...ping(s.sid) });
      assert.equal(viaNginx.status, s.deleted ? 404 : 200, `${s.sid} via nginx: ${viaNginx.body}`);
      if (s.deleted) continue;
      // Routing is what makes this work: the other process does not know
      // the session, its owner does.
      const other = s.node === 'a' ? 'b' : 'a';
      const wrong = await request({ socketPath: mcpd[other].socket, ...ping(s.sid) });
      assert.equal(wrong.status, 404, `${s.sid} sent to ${other}`);
      const right = await request({ socketPath: mcpd[s.node].socket, ...ping(s.sid) });
      assert.equal(right.status, 200, `${s.sid} sent to ${s.node}`);
    }
  });

  test('a modern client’s tasks: made round robin, each polled on its own process (Mcp-Name)', async () => {
    const K = 'io.modelcontextprotocol/';
    const meta = {
      [`${K}protocolVersion`]: '2026-07-28',
      [`${K}clientCapabilities`]: { extensions: { [`${K}tasks`]: {} } },
      [`${K}clientInfo`]: { name: 'nginx-tasks', version: '0.0.0' },
    };
    const send = async (method, params, name) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': method,
          'mcp-name': name,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }),
      });
      return res.json();
    };
    const owners = new Set();
    for (let i = 0; i < 4; i++) {
      const created = await send('tools/call', { name: 'slow_compute', arguments: { seconds: 0.1 } }, 'slow_compute');
      const id = created.result?.taskId;
      assert.match(id ?? '', /^[ab]\.task-/, JSON.stringify(created));
      owners.add(id[0]);
      let status;
      for (let k = 0; k < 40 && status !== 'completed'; k++) {
        const got = await send('tasks/get', { taskId: id }, id);
        assert.ok(got.result, `tasks/get ${k} of ${id}: ${JSON.stringify(got)}`);
        status = got.result.status;
        if (status !== 'completed') await sleep(50);
      }
      assert.equal(status, 'completed');
    }
    assert.equal(owners.size, 2, 'tasks were made on both processes');
  });

  test('readiness and health through nginx: the processes answer ready', async () => {
    // Round robin is per nginx worker, so which process answers each probe
    // is nginx's choice; every answer must say ready.
    for (let i = 0; i < 4; i++) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      assert.equal(ready.status, 200);
      assert.equal(await ready.text(), 'ready\n');
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      assert.equal(health.status, 200);
      assert.equal(await health.text(), 'ok\n');
    }
    const log = await fsp.readFile(path.join(dir, 'access.log'), 'utf8');
    const probes = log.split('\n').filter((l) => / \/readyz .*up=unix:/.test(l));
    assert.ok(probes.length >= 4, `nginx passed /readyz to an mcpd socket:\n${log.slice(-500)}`);
  });

  test('HTTP+SSE (2024-11-05): /sse on any process, /messages?sessionId= to its owner', async () => {
    const seen = new Set();
    for (let i = 0; i < 10 && seen.size < NODES.length; i++) {
      let sid;
      const transport = new SSEClientTransport(new URL(`http://127.0.0.1:${port}/sse`), {
        fetch: (u, init) => {
          sid = new URL(String(u)).searchParams.get('sessionId') ?? sid;
          return fetch(u, init);
        },
      });
      const client = new Client({ name: `legacy-${i}`, version: '1.0.0' });
      await withTimeout(client.connect(transport), 10000, `legacy session ${i} to connect`);
      const node = owner(sid);
      assert.equal(client.getInstructions(), `served by ${node}`);
      const who = await client.callTool({ name: 'config', arguments: {} });
      assert.deepEqual(JSON.parse(resultText(who)), { node });
      const echoed = await client.callTool({ name: 'echo', arguments: { text: `legacy ${i}` } });
      assert.equal(resultText(echoed), `legacy ${i}`);
      seen.add(node);
      await client.close();
    }
    assert.deepEqual([...seen].sort(), NODES, 'legacy sessions were opened on both processes');
  });

  test('a call’s stream cut by the client resumes through nginx with Last-Event-ID', async () => {
    const client = new Client({ name: 'resume', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(url));
    await client.connect(transport);
    const sid = transport.sessionId;
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sid,
      'mcp-protocol-version': LATEST,
    };
    // The call's answer is an SSE stream whose priming event carries an id.
    const cut = new AbortController();
    const res = await fetch(url, {
      method: 'POST',
      headers,
      signal: cut.signal,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'slow-1',
        method: 'tools/call',
        params: { name: 'slow', arguments: { ms: 300 } },
      }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /text\/event-stream/);
    const reader = res.body.getReader();
    let text = '';
    let eventId;
    while (!(eventId = /^id: ?(\S+)$/m.exec(text)?.[1])) {
      const { value, done } = await withTimeout(reader.read(), 5000, 'the priming event');
      assert.ok(!done, `the stream ended before an event id: ${text}`);
      text += new TextDecoder().decode(value);
    }
    cut.abort();
    // nginx closes its connection to mcpd too; the answer waits in mcpd.
    const again = await fetch(url, { headers: { ...headers, accept: 'text/event-stream', 'last-event-id': eventId } });
    assert.equal(again.status, 200);
    const rest = await withTimeout(again.text(), 5000, 'the resumed stream to end');
    assert.match(rest, /"id":"slow-1"/);
    assert.match(rest, /slept 300/);
    await transport.terminateSession();
    await client.close();
  });

  test('nginx passes the client’s Host on, so mcpd still refuses foreign names', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: 'host', version: '1' } },
    };
    const evil = await request({ port, headers: { host: 'evil.example' }, body: init });
    assert.equal(evil.status, 403, evil.body);
    const named = await request({ port, headers: { host: PUBLIC_NAME }, body: init });
    assert.equal(named.status, 200, named.body);
    owner(named.headers['mcp-session-id']);
  });

  test('the logs: every request naming a session went to its owner’s socket, none failed', async () => {
    // A line is written when its request ends; the last DELETEs and
    // closed GET streams may take a moment.
    await sleep(200);
    const lines = (await fsp.readFile(path.join(dir, 'access.log'), 'utf8')).trim().split('\n');
    let routed = 0;
    for (const line of lines) {
      const m = /sid=(\S*) arg=(\S*) up=(\S*) status=(\d+)/.exec(line);
      assert.ok(m, `access log line: ${line}`);
      const sid = m[1] !== '-' ? m[1] : m[2] !== '-' ? m[2] : null;
      if (!sid || !/^[ab]\./.test(sid)) continue;
      // Only the requests this test sent straight to one process (above)
      // bypassed nginx; every other one is here.
      assert.equal(m[3], `unix:${mcpd[sid[0]].socket}`, line);
      routed++;
    }
    // At least initialized, tools/list and 9 calls per session.
    assert.ok(routed >= SESSIONS * 11, `${routed} routed requests logged`);
    // Nothing mcpd did upset nginx: no upstream closing early, no bad
    // header, no timeout (clients going away are logged at [info]).
    const errors = (await fsp.readFile(path.join(dir, 'error.log'), 'utf8'))
      .split('\n')
      .filter((l) => /\[(warn|error|crit|alert|emerg)\]/.test(l));
    assert.deepEqual(errors, [], 'nginx error.log');
  });

  test('when a process is gone, its sessions get 404 and new ones start on the other', async () => {
    const survivor = sessions.find((s) => !s.deleted && s.node === 'a');
    const orphan = sessions.find((s) => !s.deleted && s.node === 'b');
    assert.ok(survivor && orphan, 'open sessions on both processes');
    assert.equal(await stop(mcpd.b.child), 0, mcpd.b.err);
    delete mcpd.b;

    const post = await request({ port, ...ping(orphan.sid) });
    assert.equal(post.status, 404, 'a POST for the lost session');
    assert.equal(JSON.parse(post.body).error.code, -32600);
    const get = await request({
      port,
      method: 'GET',
      headers: { 'mcp-session-id': orphan.sid, accept: 'text/event-stream' },
    });
    assert.equal(get.status, 404, 'a GET for the lost session');

    assert.equal((await request({ port, ...ping(survivor.sid) })).status, 200, 'a’s sessions live on');
    for (let i = 0; i < 4; i++) {
      const client = new Client({ name: `after-${i}`, version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(url));
      await withTimeout(client.connect(transport), 10000, `session ${i} after b stopped`);
      assert.equal(owner(transport.sessionId), 'a');
      const who = await client.callTool({ name: 'config', arguments: {} });
      assert.deepEqual(JSON.parse(resultText(who)), { node: 'a' });
      await transport.terminateSession();
      await client.close();
    }
  });
});
