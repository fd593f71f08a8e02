// SPDX-License-Identifier: MIT
// How many HTTP sessions may be open (issue 24): --max-sessions for the
// server, and a share of it per authenticated identity
// (--max-sessions-per-identity, a quarter by default), so that one
// identity can never lock the others out.  A refusal is 503 (the server's
// limit) or 429 (the identity's), with Retry-After and a JSON-RPC error
// under the initialize request's own id; a session ended with DELETE
// makes room at once.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { INIT, makeTempDir, post, startHttp, stop, writeFile } from './lib.mjs';

const TOKEN_A = 'limits-token-a-0123456789';
const TOKEN_B = 'limits-token-b-9876543210';
const bearer = (token) => (token ? { authorization: `Bearer ${token}` } : {});

/** Opens a session; resolves the response (its body read). */
async function initialize(url, token, id = 7) {
  const res = await post(url, { ...INIT, id }, bearer(token));
  const body = await res.json();
  return { status: res.status, sid: res.headers.get('mcp-session-id'), retry: res.headers.get('retry-after'), body };
}

function assertRefused(r, status, id) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.match(r.retry ?? '', /^[1-9][0-9]*$/, `Retry-After: ${r.retry}`);
  assert.equal(r.body.id, id, JSON.stringify(r.body));
  assert.equal(r.body.error.code, -32000, JSON.stringify(r.body));
  assert.equal(r.sid, null, 'a refused initialize names no session');
}

describe('--max-sessions', () => {
  let server;
  before(async () => {
    server = await startHttp(['echo'], ['--max-sessions', '3']);
  });
  after(() => stop(server.child));

  test('the fourth session gets 503 with Retry-After under its own id; a DELETE makes room', async () => {
    const open = [];
    for (let i = 0; i < 3; i++) {
      const r = await initialize(server.url, null, i);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      open.push(r.sid);
    }
    assertRefused(await initialize(server.url, null, 41), 503, 41);
    const del = await fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': open[0] } });
    assert.equal(del.status, 200);
    const again = await initialize(server.url, null, 42);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.id, 42);
  });
});

describe('a share per identity', () => {
  let server;
  before(async () => {
    const dir = await makeTempDir();
    const file = await writeFile(dir, 'tokens', `${TOKEN_A}\n${TOKEN_B}\n`, 0o600);
    // A quarter of 8 each: 2.
    server = await startHttp(['echo'], ['--auth-token-file', file, '--max-sessions', '8']);
  });
  after(() => stop(server.child));

  test('one identity past its share gets 429; another still gets in', async () => {
    for (let i = 0; i < 2; i++) assert.equal((await initialize(server.url, TOKEN_A, i)).status, 200);
    assertRefused(await initialize(server.url, TOKEN_A, 51), 429, 51);
    assertRefused(await initialize(server.url, TOKEN_A, 52), 429, 52);
    for (let i = 0; i < 2; i++) {
      const r = await initialize(server.url, TOKEN_B, 60 + i);
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    assertRefused(await initialize(server.url, TOKEN_B, 62), 429, 62);
  });
});

describe('--max-sessions-per-identity', () => {
  let server;
  before(async () => {
    const dir = await makeTempDir();
    const file = await writeFile(dir, 'tokens', `${TOKEN_A}\n`, 0o600);
    server = await startHttp(['echo'], ['--auth-token-file', file, '--max-sessions', '100', '--max-sessions-per-identity', '1']);
  });
  after(() => stop(server.child));

  test('sets the share', async () => {
    assert.equal((await initialize(server.url, TOKEN_A, 1)).status, 200);
    assertRefused(await initialize(server.url, TOKEN_A, 2), 429, 2);
  });
});
