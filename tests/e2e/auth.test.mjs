// SPDX-License-Identifier: MIT
// mcpd --transport http with a token source: the OAuth resource-server role
// as a client sees it.  Static tokens and JWTs signed by a key the test
// makes; 401 with WWW-Authenticate and the RFC 9728 metadata; sessions
// bound to the identity that opened them; tokens never in the log.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { INIT, makeTempDir, post, rawSession, startHttp, stop, writeFile } from './lib.mjs';

const TOKEN_A = 'token-a-0123456789abcdef';
const TOKEN_B = 'token-b-fedcba9876543210';
const ISS = 'https://issuer.test';
const AUD = 'https://mcp.test/mcp';

const b64url = (data) => Buffer.from(data).toString('base64url');

/** An RS256 JWT with `claims`, signed by `key`, header kid "k1". */
function jwt(key, claims) {
  const head = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: 'k1' }));
  const body = b64url(JSON.stringify(claims));
  const sig = crypto.sign('sha256', Buffer.from(`${head}.${body}`), key);
  return `${head}.${body}.${b64url(sig)}`;
}

const bearer = (token) => ({ authorization: `Bearer ${token}` });

describe('a static token file', () => {
  let server;

  before(async () => {
    const dir = await makeTempDir();
    const file = await writeFile(dir, 'tokens', `# two clients\n${TOKEN_A}\n${TOKEN_B}\n`, 0o600);
    server = await startHttp(['echo'], ['--auth-token-file', file, '--log-level', 'debug']);
  });
  after(async () => {
    assert.equal(await stop(server.child), 0);
    // No token, right or wrong, ever reaches the log.
    for (const t of [TOKEN_A, TOKEN_B, 'wrong-token-00000000']) assert.ok(!server.stderr().includes(t), t);
    assert.equal(server.stdout(), '');
  });

  test('no token: 401 naming the metadata, which is served without one', async () => {
    const res = await post(server.url, INIT);
    assert.equal(res.status, 401);
    const challenge = res.headers.get('www-authenticate');
    const m = /^Bearer resource_metadata="([^"]+)"$/.exec(challenge);
    assert.ok(m, challenge);
    assert.match((await res.json()).error.message, /missing bearer token/);
    const meta = await fetch(m[1]);
    assert.equal(meta.status, 200);
    const doc = await meta.json();
    assert.equal(doc.resource, server.url);
    assert.deepEqual(doc.bearer_methods_supported, ['header']);
    // The path-less form too (RFC 9728 §3).
    assert.equal((await fetch(`${server.base}/.well-known/oauth-protected-resource`)).status, 200);
  });

  test('a wrong token: 401 with error="invalid_token"', async () => {
    const res = await post(server.url, INIT, bearer('wrong-token-00000000'));
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate'), /error="invalid_token"/);
    assert.equal((await post(server.url, INIT, { authorization: `Basic ${b64url('a:b')}` })).status, 401);
  });

  test('the SDK client with a token: tools work', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: bearer(TOKEN_A) },
    });
    const client = new Client({ name: 'auth-test', version: '1' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'echo'));
    const res = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    assert.equal(res.content[0].text, 'hi');
    await transport.terminateSession();
    await client.close();
  });

  test('a session belongs to the token that opened it', async () => {
    const res = await post(server.url, INIT, bearer(TOKEN_A));
    const sid = res.headers.get('mcp-session-id');
    await res.text();
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const asB = await post(server.url, ping, { ...bearer(TOKEN_B), 'mcp-session-id': sid });
    assert.equal(asB.status, 404);
    await asB.text();
    const asA = await post(server.url, ping, { ...bearer(TOKEN_A), 'mcp-session-id': sid });
    assert.equal(asA.status, 200);
    assert.deepEqual((await asA.json()).result, {});
    // GET and DELETE need the token too.
    const get = await fetch(server.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sid } });
    assert.equal(get.status, 401);
    const del = await fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    assert.equal(del.status, 401);
    const delB = await fetch(server.url, { method: 'DELETE', headers: { ...bearer(TOKEN_B), 'mcp-session-id': sid } });
    assert.equal(delB.status, 404);
    const delA = await fetch(server.url, { method: 'DELETE', headers: { ...bearer(TOKEN_A), 'mcp-session-id': sid } });
    assert.equal(delA.status, 200);
  });

  test('HTTP+SSE needs the token as well', async () => {
    const sse = await fetch(`${server.base}/sse`, { headers: { accept: 'text/event-stream' } });
    assert.equal(sse.status, 401);
    await sse.text();
  });
});

describe('JWT access tokens', () => {
  let server;
  let key;
  let other;
  const now = () => Math.floor(Date.now() / 1000);
  const claims = (extra = {}) => ({ iss: ISS, aud: AUD, exp: now() + 600, sub: 'alice', ...extra });

  before(async () => {
    ({ privateKey: key, publicKey: other } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }));
    const jwk = { ...other.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' };
    other = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const dir = await makeTempDir();
    const jwks = await writeFile(dir, 'jwks.json', JSON.stringify({ keys: [jwk] }));
    server = await startHttp(
      ['echo'],
      [
        '--auth-jwt-issuer', ISS,
        '--auth-jwt-audience', AUD,
        '--auth-jwks', jwks,
        '--resource-url', AUD,
      ],
      // A token source makes a non-loopback address acceptable.
      { listen: '0.0.0.0:0' },
    );
  });
  after(async () => {
    assert.equal(await stop(server.child), 0);
  });

  const url = () => server.url.replace('0.0.0.0', '127.0.0.1');

  test('a valid token opens a session; the metadata names the issuer', async () => {
    const res = await post(url(), INIT, bearer(jwt(key, claims())));
    assert.equal(res.status, 200);
    await res.text();
    const fail = await post(url(), INIT);
    const m = /resource_metadata="([^"]+)"/.exec(fail.headers.get('www-authenticate'));
    // --resource-url names the endpoint as clients see it, behind a proxy.
    assert.equal(m[1], 'https://mcp.test/.well-known/oauth-protected-resource/mcp');
    const doc = await (await fetch(`${new URL(url()).origin}/.well-known/oauth-protected-resource/mcp`)).json();
    assert.equal(doc.resource, AUD);
    assert.deepEqual(doc.authorization_servers, [ISS]);
  });

  test('expired, for another audience, another issuer, signed by another key, alg none: 401', async () => {
    const bad = [
      jwt(key, claims({ exp: now() - 3600 })),
      jwt(key, claims({ aud: 'https://elsewhere.test' })),
      jwt(key, claims({ iss: 'https://evil.test' })),
      jwt(other, claims()),
      `${b64url(JSON.stringify({ alg: 'none' }))}.${b64url(JSON.stringify(claims()))}.`,
    ];
    for (const token of bad) {
      const res = await post(url(), INIT, bearer(token));
      assert.equal(res.status, 401, token);
      assert.match(res.headers.get('www-authenticate'), /error="invalid_token"/);
      await res.text();
    }
  });

  test('a refreshed token of the same subject keeps the session; another subject cannot use it', async () => {
    const first = await post(url(), INIT, bearer(jwt(key, claims({ jti: '1' }))));
    const sid = first.headers.get('mcp-session-id');
    await first.text();
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    const refreshed = await post(url(), ping, { ...bearer(jwt(key, claims({ jti: '2' }))), 'mcp-session-id': sid });
    assert.equal(refreshed.status, 200);
    await refreshed.text();
    const bob = await post(url(), ping, { ...bearer(jwt(key, claims({ sub: 'bob' }))), 'mcp-session-id': sid });
    assert.equal(bob.status, 404);
    await bob.text();
  });
});

test('without a token source a session needs none (rawSession works as before)', async () => {
  const server = await startHttp(['echo']);
  try {
    const sid = await rawSession(server.url);
    const res = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-session-id': sid });
    assert.equal(res.status, 200);
    await res.text();
    assert.equal((await fetch(`${server.base}/.well-known/oauth-protected-resource`)).status, 404);
  } finally {
    await stop(server.child);
  }
});
