// SPDX-License-Identifier: MIT
// plugins/exec: configured programs as tools -- arguments checked and
// passed as argv entries or JSON on stdin (never through a shell), stdout
// as text or structuredContent, a failure with stderr's tail, output cut
// at its limit, only the configured environment, and a timeout or a
// cancellation that kills the whole process group.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { configFile, makeTempDir, resultText, session, sleep } from './lib.mjs';

async function withTools(t, tools) {
  const config = await configFile({ plugins: { exec: { tools } } });
  return session(t, { plugins: ['exec'], args: ['--config', config] });
}

const call = (mcpd, name, args = {}) => mcpd.callTool(name, args);

describe('exec', () => {
  test('argv entries are appended as they are, never through a shell', async (t) => {
    const mcpd = await withTools(t, {
      say: {
        command: ['/bin/echo', 'said:'],
        argv: ['words', 'count'],
        inputSchema: {
          type: 'object',
          properties: { words: { type: 'array', items: { type: 'string' } }, count: { type: 'integer' } },
          required: ['words'],
        },
      },
    });
    const { tools } = (await mcpd.request('tools/list', {})).result;
    assert.deepEqual(tools.map((x) => x.name), ['say']);
    const r = await call(mcpd, 'say', { words: ['$(touch /tmp/nope)', ';', 'a b'], count: 2 });
    assert.equal(resultText(r), 'said: $(touch /tmp/nope) ; a b 2\n');
    // The schema is mcpd's to check: a bad argument never starts the program.
    const bad = await call(mcpd, 'say', { words: 'not an array' });
    assert.equal(bad.isError, true);
  });

  test('JSON on stdin, and stdout as structuredContent with an outputSchema', async (t) => {
    const mcpd = await withTools(t, {
      cat: {
        command: ['/bin/cat'],
        stdin: 'json',
        inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
        outputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      },
      notjson: { command: ['/bin/echo', 'plain'], outputSchema: { type: 'object' } },
    });
    const r = await call(mcpd, 'cat', { n: 7 });
    assert.deepEqual(r.structuredContent, { n: 7 });
    const n = await call(mcpd, 'notjson');
    assert.equal(n.isError, true);
    assert.match(resultText(n), /not a JSON object, which its outputSchema requires/);
  });

  test('a non-zero exit is an error with the tail of stderr; the environment is only the configured one', async (t) => {
    const mcpd = await withTools(t, {
      fail: { command: ['/bin/sh', '-c', 'echo working; echo "it broke" >&2; exit 3'] },
      env: { command: ['/usr/bin/env'], env: { ONLY: 'this' } },
      missing: { command: ['/nonexistent/program'] },
    });
    const f = await call(mcpd, 'fail');
    assert.equal(f.isError, true);
    assert.equal(resultText(f), 'fail: exited with status 3; stderr: it broke');
    assert.equal(resultText(await call(mcpd, 'env')), 'ONLY=this\n');
    const m = await call(mcpd, 'missing');
    assert.equal(m.isError, true);
    assert.match(resultText(m), /cannot run \/nonexistent\/program: No such file or directory/);
  });

  test('output beyond maxOutputBytes is cut, says so, and stops the program', async (t) => {
    const mcpd = await withTools(t, { yes: { command: ['/usr/bin/yes'], maxOutputBytes: 2000, timeoutMs: 20000 } });
    const started = Date.now();
    const r = await call(mcpd, 'yes');
    assert.ok(Date.now() - started < 10000, 'stopped at the limit, not at the timeout');
    assert.equal(r.content[0].text.length, 2000);
    assert.match(r.content[1].text, /output cut at 2000 bytes/);
  });

  test('a timeout and a cancellation kill the whole process group', async (t) => {
    const dir = await makeTempDir();
    const pidfile = path.join(dir, 'child.pid');
    // A shell that starts a child of its own, then waits: both must go.
    const script = `sleep 60 & echo $! > ${pidfile}; wait`;
    const mcpd = await withTools(t, {
      slow: { command: ['/bin/sh', '-c', script], timeoutMs: 500 },
      slower: { command: ['/bin/sh', '-c', script], timeoutMs: 60000 },
    });
    // Running, not a zombie nobody reaped (a container's init may not).
    const alive = (pid) => {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
      } catch {
        return false;
      }
    };
    const r = await call(mcpd, 'slow');
    assert.equal(r.isError, true);
    assert.match(resultText(r), /timed out after 500 ms; its processes were killed/);
    const pid1 = Number(fs.readFileSync(pidfile, 'utf8'));
    for (let i = 0; i < 50 && alive(pid1); i++) await sleep(20);
    assert.equal(alive(pid1), false, 'the program\u2019s own child is gone too');

    fs.rmSync(pidfile);
    await mcpd.write({ jsonrpc: '2.0', id: 'c1', method: 'tools/call', params: { name: 'slower', arguments: {} } });
    for (let i = 0; i < 100 && !fs.existsSync(pidfile); i++) await sleep(20);
    const pid2 = Number(fs.readFileSync(pidfile, 'utf8'));
    assert.ok(alive(pid2));
    mcpd.notify('notifications/cancelled', { requestId: 'c1', reason: 'test' });
    for (let i = 0; i < 100 && alive(pid2); i++) await sleep(20);
    assert.equal(alive(pid2), false, 'cancelled: the process group was killed');
    // A cancelled request gets no answer; the server goes on.
    assert.deepEqual((await mcpd.request('ping', {})).result, {});
  });

  test('a bad config is refused with a reason; no config means no tools', async (t) => {
    const mcpd = await session(t, { plugins: ['exec'] });
    assert.deepEqual((await mcpd.request('tools/list', {})).result.tools, []);
    const config = await configFile({ plugins: { exec: { tools: { x: { command: ['relative/prog'] } } } } });
    const bad = await session(t, { plugins: ['exec'], args: ['--config', config] });
    await sleep(100);
    assert.match(bad.stderr, /tools\.x\.command must be a non-empty array of strings starting with an absolute path/);
  });
});
