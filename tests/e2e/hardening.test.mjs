// SPDX-License-Identifier: MIT
// Launch conditions and the end of the stream: what a plugin's child
// inherits, closed standard descriptors, and every owed reply flushed at
// EOF.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MCPD, SANITIZED, makePluginDir, makeTempDir, resultText, runMcpd, session, track } from './lib.mjs';

const INIT =
  '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",' +
  '"capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}\n';

describe('what a plugin child inherits', () => {
  test('its stdin is /dev/null, not the client stream', async (t) => {
    const mcpd = await session(t, { plugins: ['good'] });
    // The child runs `cat` on its stdin: on the client's stream it would
    // swallow the ping below and never finish.
    const pending = mcpd.callTool('child', {});
    mcpd.write('{"jsonrpc":"2.0","id":"after","method":"ping"}\n');
    const text = resultText(await pending);
    assert.match(text, /^SigIgn:/, `child output: ${JSON.stringify(text)}`);
    const pong = await mcpd.response('after');
    assert.deepEqual(pong.result, {});
  });

  test('SIGPIPE has its default disposition', async (t) => {
    const mcpd = await session(t, { plugins: ['good'] });
    const text = resultText(await mcpd.callTool('child', {}));
    const mask = BigInt('0x' + text.trim().split(/\s+/)[1]);
    assert.equal(mask & (1n << 12n), 0n, `SIGPIPE ignored in child: ${text}`);
  });
});

describe('launched with standard descriptors closed', () => {
  for (const fd of [0, 1, 2]) {
    test(`fd ${fd} closed: mcpd runs and exits cleanly`, async () => {
      const dir = await makePluginDir(['echo']);
      const stdio = ['pipe', 'pipe', 'pipe'];
      stdio[fd] = 'ignore';
      // 'ignore' opens /dev/null; close it in a shell to really start closed.
      const child = track(
        spawn('/bin/sh', ['-c', `exec "$0" --plugins "$1" --no-watch ${fd}<&-`, MCPD, dir], {
          stdio,
        }),
      );
      const out = [];
      const err = [];
      child.stdout?.on('data', (d) => out.push(d));
      child.stderr?.on('data', (d) => err.push(d));
      if (child.stdin) {
        child.stdin.on('error', () => {});
        child.stdin.end(INIT + '{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
      }
      const code = await new Promise((resolve) => child.on('close', (c) => resolve(c)));
      const stderr = Buffer.concat(err).toString();
      assert.doesNotMatch(stderr, /Assertion|abort|uv_loop_close/i, stderr);
      assert.equal(code, 0, stderr);
      if (fd !== 1 && fd !== 0) {
        const lines = Buffer.concat(out).toString().trim().split('\n');
        assert.equal(lines.length, 2, lines.join('\n'));
        assert.equal(JSON.parse(lines[1]).id, 1);
      }
    });
  }
});

describe('end of the stream', () => {
  test('20001 pipelined requests then EOF: every reply, whole', async () => {
    const dir = await makePluginDir(['echo']);
    // Under a sanitizer the worker answers some ten times slower: the
    // calls still queued when mcpd's shutdown grace ends would be refused,
    // which is not what this test is about.
    const n = SANITIZED ? 2000 : 20000;
    let input = INIT;
    for (let i = 1; i <= n; i++)
      input += `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"echo","arguments":{"text":"${'x'.repeat(100)}"}}}\n`;
    // All of them may be in flight at once (echo runs in a worker, so
    // calls are answered as they come back): the limit is not what this
    // test is about.
    const res = await runMcpd(['--plugins', dir, '--no-watch', '--max-in-flight', '20001'], { input, timeout: 30000 });
    assert.equal(res.timedOut, false);
    assert.equal(res.code, 0, res.stderr);
    const lines = res.stdout.split('\n');
    assert.equal(lines.pop(), '', 'output ends with a newline');
    assert.equal(lines.length, n + 1);
    const seen = new Set();
    for (const line of lines.slice(1)) {
      const msg = JSON.parse(line);
      assert.ok(!seen.has(msg.id), `id ${msg.id} answered twice`);
      seen.add(msg.id);
      assert.equal(msg.result?.content[0].text.length, 100, line);
    }
    assert.equal(seen.size, n);
  });

  test('fini() runs at shutdown', async () => {
    const dir = await makePluginDir(['good']);
    const res = await runMcpd(['--plugins', dir, '--no-watch', '--log-level', 'debug'], {
      input: INIT,
    });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /plugin "good": fini: releasing state/);
  });
});

describe('cancellation reaches the plugin', () => {
  test('cancelled 60 s calls free their pool threads at once', { timeout: 30000 }, async (t) => {
    // Two pool threads, both taken by calls that would run a minute unless
    // the tool sees cancelled(): a third pool call can only be answered
    // quickly if the cancellation really reached the plugin.
    const mcpd = await session(t, { plugins: ['good'], args: ['--threads', '2'] });
    for (const id of ['long-1', 'long-2'])
      mcpd.write({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow', arguments: { ms: 60000 } } });
    await new Promise((r) => setTimeout(r, 200));
    for (const id of ['long-1', 'long-2'])
      await mcpd.notify('notifications/cancelled', { requestId: id, reason: 'test' });
    const started = Date.now();
    mcpd.write({ jsonrpc: '2.0', id: 'next', method: 'tools/call', params: { name: 'slow', arguments: { ms: 10 } } });
    const next = await mcpd.response('next', { timeout: 10000 });
    assert.equal(next.result.content[0].text, 'slept 10');
    assert.ok(Date.now() - started < 5000, `the pool stayed blocked for ${Date.now() - started} ms`);
    assert.ok(!mcpd.messages.some((m) => m.id === 'long-1' || m.id === 'long-2'),
      'a cancelled request was answered');
  });
});

describe('an on_cancel callback that completes its own call', () => {
  test('does not hang the loop: the next request is answered', { timeout: 30000 }, async (t) => {
    const mcpd = await session(t, { plugins: ['good'] });
    mcpd.write({ jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'complete_on_cancel', arguments: {} } });
    await new Promise((r) => setTimeout(r, 100));
    await mcpd.notify('notifications/cancelled', { requestId: 'c', reason: 'test' });
    await mcpd.ping({ timeout: 5000 });
    assert.ok(!mcpd.messages.some((m) => m.id === 'c'), 'a cancelled request was answered');
  });
});

describe('the client goes away mid-answer', () => {
  test('last line without newline, stdout already closed: clean exit', async () => {
    const dir = await makePluginDir(['echo']);
    for (let i = 0; i < 5; i++) {
      const child = track(spawn(MCPD, ['--plugins', dir, '--no-watch'], { stdio: ['pipe', 'pipe', 'pipe'] }));
      const err = [];
      child.stderr.on('data', (d) => err.push(d));
      child.stdout.destroy();
      child.stdin.on('error', () => {});
      child.stdin.end('{"jsonrpc":"2.0","id":1,"method":"ping"}');
      const [code, signal] = await new Promise((resolve) => child.on('close', (c, s) => resolve([c, s])));
      const stderr = Buffer.concat(err).toString();
      assert.equal(signal, null, stderr);
      assert.doesNotMatch(stderr, /AddressSanitizer|runtime error/, stderr);
      assert.equal(code, 0, stderr);
    }
  });

  test('--call of an inline tool exits cleanly', async () => {
    const dir = await makePluginDir(['echo']);
    const res = await runMcpd(['--plugins', dir, '--no-watch', '--call', 'echo', '--args', '{"text":"x"}']);
    assert.equal(res.signal, null, res.stderr);
    assert.doesNotMatch(res.stderr, /AddressSanitizer|runtime error/, res.stderr);
    assert.equal(res.code, 0, res.stderr);
  });
});

describe('no plugin can starve the loop', () => {
  test('a plugin thread logging flat out: ping is answered, logs are rate-limited, EOF ends mcpd', { timeout: 30000 }, async (t) => {
    const mcpd = await session(t, { plugins: ['good'] });
    await mcpd.call('logging/setLevel', { level: 'debug' });
    mcpd.write({ jsonrpc: '2.0', id: 'storm', method: 'tools/call', params: { name: 'log_storm', arguments: { ms: 1500 } } });
    await mcpd.notification('notifications/message', { timeout: 5000 });
    const sent = Date.now();
    mcpd.write({ jsonrpc: '2.0', id: 'during', method: 'ping' });
    await mcpd.response('during', { timeout: 10000 });
    const waited = Date.now() - sent;
    assert.ok(waited < 1000, `ping waited ${waited} ms behind the log storm`);
    const storm = await mcpd.response('storm', { timeout: 10000 });
    const logged = Number(storm.result.content[0].text.replace('logged ', ''));
    // At most 200 lines a second reach the client; the rest are counted
    // and reported.
    const lines = mcpd.messages.filter((m) => m.method === 'notifications/message');
    const storm_lines = lines.filter((m) => /^storm /.test(m.params.data));
    assert.ok(logged > 1000, `the plugin logged only ${logged} lines`);
    assert.ok(storm_lines.length <= 600, `${storm_lines.length} of ${logged} lines reached the client`);
    assert.ok(lines.some((m) => m.params.level === 'warning' && /log messages dropped/.test(m.params.data)),
      'no report of dropped log messages');
    mcpd.endInput();
    const { code } = await mcpd.waitExit(5000);
    assert.equal(code, 0, mcpd.stderr.slice(-2000));
  });

  test('every pool thread stuck, stdin a regular file: mcpd still reads EOF and exits', { timeout: 30000 }, async () => {
    const dir = await makePluginDir(['good']);
    const tmp = await makeTempDir();
    const input = path.join(tmp, 'input.jsonl');
    fs.writeFileSync(input, INIT +
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stuck","arguments":{"ms":60000}}}\n' +
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stuck","arguments":{"ms":60000}}}\n' +
      '{"jsonrpc":"2.0","id":3,"method":"ping"}\n');
    const fd = fs.openSync(input, 'r');
    const started = Date.now();
    const child = track(spawn(MCPD, ['--plugins', dir, '--no-watch', '--threads', '2'], { stdio: [fd, 'pipe', 'pipe'] }));
    fs.closeSync(fd);
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    const code = await new Promise((resolve) => child.on('close', (c) => resolve(c)));
    const elapsed = Date.now() - started;
    const lines = Buffer.concat(out).toString().trim().split('\n').map((l) => JSON.parse(l));
    assert.ok(lines.some((m) => m.id === 3 && 'result' in m), 'the ping was not answered');
    assert.ok(elapsed < 10000, `took ${elapsed} ms to exit`);
    assert.equal(code, 0, Buffer.concat(err).toString());
  });
});
