// SPDX-License-Identifier: MIT
// Where a plugin's log() line goes once its call was cancelled (issue 24,
// section 4): to the caller's own session, which asked for the level, as
// a message unrelated to the cancelled request -- never to another
// session.  Over stdio, in process and through an isolated worker; over
// HTTP, on that session's standalone GET stream.  The fixture's tool
// (tests/plugins/late_log.c) waits to be cancelled, then logs.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { post, rawSession, session, sleep, startHttp, stop, withTimeout } from './lib.mjs';

const LINE = 'logged after the cancel';
const isLine = (m) => m.method === 'notifications/message' && m.params?.data === LINE;

describe('a cancelled call logs to its own session', () => {
  for (const args of [['--in-process'], ['--isolate', 'late_log']]) {
    test(`stdio${args[0] === '--isolate' ? ' (isolated)' : ' (in-process)'}: the line arrives, and no response`, async (t) => {
      const mcpd = await session(t, { plugins: ['late_log'], args });
      await mcpd.call('logging/setLevel', { level: 'warning' });
      await mcpd.write({ jsonrpc: '2.0', id: 'late', method: 'tools/call', params: { name: 'log_after_cancel' } });
      await sleep(200);
      await mcpd.notify('notifications/cancelled', { requestId: 'late', reason: 'test' });
      const msg = await mcpd.take(isLine, { what: 'the line logged after the cancel', timeout: 10000 });
      assert.equal(msg.params.level, 'warning');
      assert.equal(msg.params.logger, 'late_log');
      // The cancelled request is not answered (MCP), and mcpd still serves.
      await mcpd.call('ping');
      assert.equal(mcpd.messages.filter((m) => m.id === 'late').length, 0);
    });
  }

  test('HTTP: on the session standalone stream, and not on another session', async () => {
    const server = await startHttp(['late_log']);
    try {
      const setLevel = async (sid) => {
        const res = await post(server.url, { jsonrpc: '2.0', id: 'lvl', method: 'logging/setLevel', params: { level: 'warning' } },
          { 'mcp-session-id': sid });
        assert.equal(res.status, 200);
        await res.text();
      };
      const [mine, other] = [await rawSession(server.url), await rawSession(server.url)];
      await setLevel(mine);
      await setLevel(other);

      // Both standalone streams, read as text.
      const streams = [mine, other].map((sid) => {
        const controller = new AbortController();
        const s = { text: '', controller };
        s.done = fetch(server.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sid }, signal: controller.signal })
          .then(async (res) => {
            assert.equal(res.status, 200);
            const decoder = new TextDecoder();
            for await (const chunk of res.body) s.text += decoder.decode(chunk, { stream: true });
          })
          .catch(() => {});
        return s;
      });
      await sleep(200);

      const call = new AbortController();
      const answer = post(server.url, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'log_after_cancel' } },
        { 'mcp-session-id': mine }, { signal: call.signal }).then((res) => res.text()).catch(() => '');
      await sleep(300);
      const cancel = await post(server.url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } },
        { 'mcp-session-id': mine });
      assert.equal(cancel.status, 202);

      await withTimeout((async () => {
        while (!streams[0].text.includes(LINE)) await sleep(20);
      })(), 10000, `the line on the standalone stream; it carried: ${streams[0].text}`);
      // Give a wrongly routed copy the time to arrive, then look.
      await sleep(300);
      assert.ok(!streams[1].text.includes(LINE), `another session heard it: ${streams[1].text}`);
      call.abort();
      await answer;
      for (const s of streams) s.controller.abort();
      await Promise.all(streams.map((s) => s.done));
    } finally {
      assert.equal(await stop(server.child), 0, server.stderr());
    }
  });
});
