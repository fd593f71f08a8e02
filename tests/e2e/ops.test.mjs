// SPDX-License-Identifier: MIT
// What an operator sees: /healthz and /readyz (no token, nothing said of
// anyone), /metrics in the Prometheus text exposition format (checked by
// a strict parser below, with counters that move with real traffic and
// labels that never carry a session, a token or an argument), beside /mcp
// with its auth or on a loopback listener of its own, also for stdio.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { INIT, MCPD, answerOf, makePluginDir, makeTempDir, post, startHttp, stop, track, withTimeout, writeFile } from './lib.mjs';

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Parses a label set `{a="x",b="y"}` strictly; returns [labels, rest]. */
function parseLabels(text, line) {
  const labels = {};
  let i = 1;
  while (text[i] !== '}') {
    const eq = text.indexOf('=', i);
    assert.ok(eq > i, `label name in: ${line}`);
    const name = text.slice(i, eq);
    assert.match(name, LABEL, `label name "${name}" in: ${line}`);
    assert.equal(text[eq + 1], '"', `quoted label value in: ${line}`);
    let j = eq + 2;
    let value = '';
    for (;;) {
      assert.ok(j < text.length, `unterminated label value in: ${line}`);
      if (text[j] === '\\') {
        const e = text[j + 1];
        assert.ok(['\\', '"', 'n'].includes(e), `bad escape in: ${line}`);
        value += e === 'n' ? '\n' : e;
        j += 2;
      } else if (text[j] === '"') {
        j++;
        break;
      } else {
        value += text[j++];
      }
    }
    assert.ok(!(name in labels), `label ${name} twice in: ${line}`);
    labels[name] = value;
    if (text[j] === ',') j++;
    else assert.equal(text[j], '}', `label separator in: ${line}`);
    i = j;
  }
  return [labels, text.slice(i + 1)];
}

/**
 * The text exposition format, strictly: HELP and TYPE once per family and
 * before its samples, valid names, labels and values, no duplicate series,
 * counters named *_total, histograms with cumulative buckets ending in
 * +Inf that equals _count.  Returns {families: {name: type}, samples:
 * [{name, labels, value}]}.
 */
function parseExposition(text) {
  assert.ok(text.endsWith('\n'), 'the page ends with a newline');
  const families = {};
  const helped = new Set();
  const samples = [];
  const seen = new Set();
  for (const line of text.slice(0, -1).split('\n')) {
    assert.notEqual(line, '', 'no blank lines');
    if (line.startsWith('# ')) {
      const m = /^# (HELP|TYPE) (\S+) (.+)$/.exec(line);
      assert.ok(m, `comment: ${line}`);
      assert.match(m[2], NAME, line);
      if (m[1] === 'HELP') {
        assert.ok(!helped.has(m[2]), `HELP twice: ${line}`);
        helped.add(m[2]);
      } else {
        assert.ok(!(m[2] in families), `TYPE twice: ${line}`);
        assert.ok(['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(m[3]), line);
        families[m[2]] = m[3];
      }
      continue;
    }
    const nameEnd = line.search(/[{ ]/);
    const name = line.slice(0, nameEnd);
    assert.match(name, NAME, `sample name: ${line}`);
    let rest = line.slice(nameEnd);
    let labels = {};
    if (rest.startsWith('{')) [labels, rest] = parseLabels(rest, line);
    const fields = rest.trim().split(' ');
    assert.ok(fields.length === 1 || fields.length === 2, `value [timestamp]: ${line}`);
    const value = fields[0] === '+Inf' ? Infinity : fields[0] === '-Inf' ? -Infinity : Number(fields[0]);
    assert.ok(fields[0] === 'NaN' || !Number.isNaN(value), `value: ${line}`);
    const family = Object.keys(families).find(
      (f) => name === f || (families[f] === 'histogram' && [`${f}_bucket`, `${f}_sum`, `${f}_count`].includes(name)),
    );
    assert.ok(family, `a sample before its TYPE: ${line}`);
    if (families[family] === 'counter') assert.match(name, /_total$/, `counter name: ${line}`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    assert.ok(!seen.has(key), `duplicate series: ${line}`);
    seen.add(key);
    samples.push({ name, family, labels, value });
  }
  for (const [f, type] of Object.entries(families)) {
    assert.ok(helped.has(f), `${f} has no HELP`);
    if (type !== 'histogram') continue;
    const series = new Map();
    for (const s of samples.filter((x) => x.family === f)) {
      const { le, ...rest } = s.labels;
      const k = JSON.stringify(Object.entries(rest).sort());
      if (!series.has(k)) series.set(k, { buckets: [], count: undefined });
      const e = series.get(k);
      if (s.name.endsWith('_bucket')) e.buckets.push([le === '+Inf' ? Infinity : Number(le), s.value]);
      if (s.name.endsWith('_count')) e.count = s.value;
    }
    for (const [k, e] of series) {
      assert.ok(e.buckets.length > 0, `${f}${k} has buckets`);
      for (let i = 1; i < e.buckets.length; i++) {
        assert.ok(e.buckets[i][0] > e.buckets[i - 1][0], `${f}${k}: le increases`);
        assert.ok(e.buckets[i][1] >= e.buckets[i - 1][1], `${f}${k}: buckets are cumulative`);
      }
      assert.equal(e.buckets.at(-1)[0], Infinity, `${f}${k} ends with +Inf`);
      assert.equal(e.buckets.at(-1)[1], e.count, `${f}${k}: +Inf equals _count`);
    }
  }
  return { families, samples };
}

/** The value of the one sample `name` with `labels` (a subset). */
function valueOf(page, name, labels = {}) {
  const found = page.samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return found.reduce((sum, s) => sum + s.value, 0);
}

async function scrape(url, headers = {}) {
  const res = await fetch(url, { headers });
  assert.equal(res.status, 200, `${url}: ${res.status}`);
  assert.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

describe('/healthz, /readyz and /metrics beside /mcp', () => {
  test('health needs no token; metrics take /mcp auth; counters move with traffic', async (t) => {
    const dir = await makeTempDir();
    const token = 'ops-token-0123456789abcdef';
    const file = await writeFile(dir, 'tokens', `${token}\n`, 0o600);
    const server = await startHttp(['echo'], ['--auth-token-file', file, '--metrics']);
    t.after(() => stop(server.child));
    const base = server.base;
    const auth = { authorization: `Bearer ${token}` };

    const health = await fetch(`${base}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(await health.text(), 'ok\n');
    const ready = await fetch(`${base}/readyz`);
    assert.equal(ready.status, 200);
    assert.equal(await ready.text(), 'ready\n');
    assert.equal((await fetch(`${base}/metrics`)).status, 401);
    assert.equal((await fetch(`${base}/healthz`, { method: 'POST' })).status, 405);

    const before = await scrape(`${base}/metrics`, auth);
    const init = await post(server.url, INIT, auth);
    const sid = init.headers.get('mcp-session-id');
    await init.text();
    const h = { ...auth, 'mcp-session-id': sid };
    await (await post(server.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, h)).text();
    const secret = 'an-argument-no-label-may-carry';
    for (let i = 0; i < 3; i++) {
      const r = await answerOf(
        await post(server.url, { jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name: 'echo', arguments: { text: secret } } }, h),
      );
      assert.equal(r.result.content[0].text, secret);
    }
    await answerOf(await post(server.url, { jsonrpc: '2.0', id: 20, method: 'no/such/method' }, h));
    const after = await scrape(`${base}/metrics`, auth);

    const calls = (p) => valueOf(p, 'mcpd_requests_total', { method: 'tools/call', outcome: 'result' });
    assert.equal(calls(after) - calls(before), 3);
    assert.equal(valueOf(after, 'mcpd_requests_total', { method: 'other', outcome: '-32601' }), 1);
    assert.equal(valueOf(after, 'mcpd_requests_total', { method: 'initialize', outcome: 'result' }), 1);
    assert.equal(valueOf(after, 'mcpd_tool_call_duration_seconds_count', { plugin: 'echo', tool: 'echo' }), 3);
    assert.ok(valueOf(after, 'mcpd_tool_call_duration_seconds_sum', { plugin: 'echo', tool: 'echo' }) > 0);
    assert.equal(valueOf(after, 'mcpd_sessions', { era: '2025-11-25', identity: 'token' }), 1);
    assert.equal(valueOf(after, 'mcpd_plugins_loaded'), 1);
    assert.equal(valueOf(after, 'mcpd_calls_in_flight'), 0);
    assert.ok(valueOf(after, 'mcpd_http_responses_total', { status: '401' }) >= 1);
    assert.ok(valueOf(after, 'process_resident_memory_bytes') > 1024 * 1024);
    assert.ok(valueOf(after, 'process_open_fds') > 3);
    for (const s of after.samples)
      for (const v of Object.values(s.labels)) {
        assert.ok(!v.includes(sid), 'no session id in a label');
        assert.ok(!v.includes(token) && !v.includes(secret), 'no token or argument in a label');
      }
  });

  test('/readyz says 503 at the session limit, and ready again below it', async (t) => {
    const server = await startHttp(['echo'], ['--max-sessions', '1']);
    t.after(() => stop(server.child));
    const init = await post(server.url, INIT);
    const sid = init.headers.get('mcp-session-id');
    await init.text();
    const full = await fetch(`${server.base}/readyz`);
    assert.equal(full.status, 503);
    assert.match(await full.text(), /^not ready: at the session limit/);
    assert.equal((await fetch(`${server.base}/healthz`)).status, 200, 'alive all the same');
    assert.equal((await fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': sid } })).status, 200);
    assert.equal((await fetch(`${server.base}/readyz`)).status, 200);
    // Without --metrics there is no page beside /mcp.
    assert.equal((await fetch(`${server.base}/metrics`)).status, 404);
  });
});

describe('--metrics-listen', () => {
  test('a stdio server serves the page on a loopback listener of its own', async (t) => {
    const dir = await makePluginDir(['echo']);
    const child = track(
      spawn(MCPD, ['--plugins', dir, '--no-watch', '--metrics-listen', '127.0.0.1:0'], { stdio: ['pipe', 'pipe', 'pipe'] }),
    );
    t.after(() => child.kill('SIGKILL'));
    let err = '';
    const url = await withTimeout(
      new Promise((resolve, reject) => {
        child.stderr.on('data', (d) => {
          err += d;
          const m = /metrics on (http:\/\/[^\s"/]+)/.exec(err);
          if (m) resolve(m[1]);
        });
        child.once('exit', (code) => reject(new Error(`mcpd exited ${code}: ${err}`)));
      }),
      5000,
      'the metrics listener',
    );
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stdin.write(`${JSON.stringify(INIT)}\n`);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } })}\n`);
    for (let i = 0; i < 100 && !out.includes('"id":2'); i++) await new Promise((r) => setTimeout(r, 20));
    const page = await scrape(`${url}/metrics`);
    assert.equal(valueOf(page, 'mcpd_requests_total', { method: 'tools/call', outcome: 'result' }), 1);
    assert.equal(valueOf(page, 'mcpd_sessions', { era: '2025-11-25', identity: 'anonymous' }), 1);
    assert.equal((await fetch(`${url}/readyz`)).status, 200);
    assert.equal((await fetch(`${url}/mcp`)).status, 404, 'only the operator endpoints');
    // stdout stays the protocol's: two answers, nothing else.
    child.stdin.end();
    const code = await new Promise((resolve) => child.once('exit', resolve));
    assert.equal(code, 0, err);
    assert.deepEqual(out.trim().split('\n').map((l) => JSON.parse(l).id), [INIT.id, 2]);
  });

  test('refuses an address that is not loopback', async () => {
    const child = track(spawn(MCPD, ['--metrics-listen', '0.0.0.0:0', '--no-watch'], { stdio: ['pipe', 'ignore', 'pipe'] }));
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
    });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    assert.notEqual(code, 0);
    assert.match(err, /--metrics-listen 0\.0\.0\.0:0: only a loopback address/);
  });
});
