// SPDX-License-Identifier: MIT
// --log-format json: every stderr line is one JSON object, whatever logs
// it (mcpd, a worker, a plugin's threads logging as fast as they can,
// many calls at once), with the call's plugin, tool, request id and a
// session tag that is not the session's id -- and never a token or an
// argument.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { INIT, PLUGIN_MODE, makeTempDir, post, session, startHttp, stop, writeFile } from './lib.mjs';

/** Every line of `text`, parsed; fails on one that is not a JSON object. */
function jsonLines(text) {
  const lines = text.split('\n').filter((l) => l.length > 0);
  return lines.map((l) => {
    let v;
    assert.doesNotThrow(() => {
      v = JSON.parse(l);
    }, `not JSON: ${l}`);
    assert.equal(typeof v, 'object', l);
    assert.match(v.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, l);
    assert.ok(['error', 'warn', 'info', 'debug'].includes(v.level), l);
    assert.equal(typeof v.message, 'string', l);
    assert.equal(typeof v.source, 'string', l);
    return v;
  });
}

describe('--log-format json', () => {
  test('plugin lines from many calls and a log storm: each line JSON, with its call', async (t) => {
    const mcpd = await session(t, { plugins: ['good'], args: ['--log-format', 'json', '--log-level', 'debug'] });
    const calls = [];
    for (let i = 0; i < 20; i++) calls.push(mcpd.callTool('log', {}));
    calls.push(mcpd.callTool('log_storm', { ms: 300 }));
    const results = await Promise.all(calls);
    for (const r of results) assert.ok(Array.isArray(r.content), JSON.stringify(r));
    await mcpd.close();
    const lines = jsonLines(mcpd.stderr);
    const plugin = lines.filter((l) => l.plugin === 'good');
    assert.ok(plugin.filter((l) => /^storm \d+$/.test(l.message)).length > 100, 'the storm was logged');
    const inCall = plugin.filter((l) => l.message === 'an error message');
    assert.equal(inCall.length, 20);
    for (const l of inCall) {
      assert.equal(l.level, 'error');
      assert.equal(l.tool, 'log');
      if (PLUGIN_MODE === 'in-process') {
        // The request ids the client sent, each once; the session's tag.
        assert.equal(typeof l.request, 'number');
        assert.match(l.session, /^[0-9a-f]{8}$/);
      }
    }
    if (PLUGIN_MODE === 'in-process') {
      assert.equal(new Set(inCall.map((l) => l.request)).size, 20);
      assert.equal(new Set(inCall.map((l) => l.session)).size, 1);
    } else {
      // The worker logs for itself: its lines name it.
      assert.ok(inCall.every((l) => /^mcpd\[good\.so\]$/.test(l.source)), JSON.stringify(inCall[0]));
    }
  });

  test('what is said of the command line and the config file is JSON too', async (t) => {
    const mcpd = await session(t, { plugins: ['good'], args: ['--log-format', 'json', '--config', '/nonexistent/x.json'], init: false });
    await mcpd.waitExit(5000).catch(() => {});
    const lines = jsonLines(mcpd.stderr);
    assert.ok(lines.some((l) => l.level === 'error' && /nonexistent/.test(l.message)), mcpd.stderr);
  });

  test('over HTTP with a token: no line carries the token, the session id or the arguments', async (t) => {
    const dir = await makeTempDir();
    const token = 'log-secret-token-0123456789abcdef';
    const file = await writeFile(dir, 'tokens', `${token}\n`, 0o600);
    const server = await startHttp(['good'], ['--auth-token-file', file, '--log-format', 'json', '--log-level', 'debug']);
    t.after(() => stop(server.child));
    const auth = { authorization: `Bearer ${token}` };
    const init = await post(server.url, INIT, auth);
    const sid = init.headers.get('mcp-session-id');
    assert.ok(sid);
    await post(server.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { ...auth, 'mcp-session-id': sid });
    const secret = 'argument-value-that-must-not-be-logged';
    const r = await post(
      server.url,
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'log', arguments: { note: secret } } },
      { ...auth, 'mcp-session-id': sid },
    );
    assert.equal(r.status, 200);
    await post(server.url, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'log', arguments: {} } }, { authorization: 'Bearer wrong' });
    await stop(server.child);
    const text = server.stderr();
    const lines = jsonLines(text);
    assert.ok(lines.length > 3);
    assert.ok(!text.includes(token), 'the token is never logged');
    assert.ok(!text.includes(sid), 'the session id is never logged');
    assert.ok(!text.includes(secret), 'arguments are never logged');
  });
});
