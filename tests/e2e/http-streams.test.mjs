// SPDX-License-Identifier: MIT
// mcpd --transport http as a client sees its streams: the legacy HTTP+SSE
// transport with the SDK's SSEClientTransport, resumption with Last-Event-ID
// (the SDK's transparent reconnect, then the same on the raw wire), the
// standalone GET stream, the command-line options that shape the endpoint,
// and an orderly SIGTERM with a call in flight.
//
// Raw tests read SSE with a small parser of their own (SseReader) so they
// can assert on what the SDK hides: event ids, priming events, where a
// stream ended.  Waits are event-driven: a test waits for the event it
// needs, under a generous timeout, rather than sleeping and hoping.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  INIT,
  JSON_HEADERS,
  configFile,
  makeTempDir,
  post,
  rawSession,
  runMcpd,
  sleep,
  startHttp,
  stop,
  withTimeout,
} from './lib.mjs';

const WATCHED = 'test://watched-resource';
/* The watched resource reports a change this often once subscribed. */
const FAST_WATCH = { plugins: { everything: { watch_interval_ms: 100 } } };

/* ------------------------------------------------------------------------ */
/* A raw SSE reader.                                                         */

/**
 * Reads an SSE response body as it arrives.  `events` holds every event
 * ({id, event, data, retry, json}) in order, `comments` counts comment-only
 * blocks (keep-alives); `ended` resolves to 'end' when the server ended the
 * body and 'error' when the connection broke or was aborted.
 */
class SseReader {
  constructor(res, controller) {
    this.res = res;
    this.controller = controller;
    this.events = [];
    this.comments = 0;
    this.raw = '';
    this.done = false;
    this.waiters = new Set();
    this.ended = this.#pump();
  }

  async #pump() {
    const decoder = new TextDecoder();
    let buf = '';
    let how = 'end';
    try {
      for await (const chunk of this.res.body) {
        const text = decoder.decode(chunk, { stream: true });
        this.raw += text;
        buf += text;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          this.#onBlock(buf.slice(0, i));
          buf = buf.slice(i + 2);
        }
      }
    } catch {
      how = 'error';
    }
    this.done = true;
    this.#wake();
    return how;
  }

  #onBlock(block) {
    const ev = {};
    let fields = 0;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      ev[name] = name === 'data' && 'data' in ev ? `${ev.data}\n${value}` : value;
      fields++;
    }
    if (fields === 0) {
      this.comments++;
      return;
    }
    // The legacy endpoint event's data is a path; messages are JSON.
    if (ev.data && (ev.event ?? 'message') === 'message') ev.json = JSON.parse(ev.data);
    this.events.push(ev);
    this.#wake();
  }

  #wake() {
    for (const w of [...this.waiters]) w();
  }

  /** Messages (parsed data) of the events so far. */
  get messages() {
    return this.events.filter((e) => e.json).map((e) => e.json);
  }

  /**
   * Resolves with cond()'s first truthy value, re-evaluated after every
   * event; rejects after `ms`, or when the stream ends first.
   */
  until(cond, what, ms = 5000) {
    let check;
    const found = new Promise((resolve, reject) => {
      check = () => {
        const v = cond(this);
        if (v) resolve(v);
        else if (this.done) reject(new Error(`the stream ended before ${what}; it carried:\n${this.raw}`));
      };
      this.waiters.add(check);
      check();
    });
    return withTimeout(found, ms, `${what}; the stream carried:\n${this.raw}`).finally(() =>
      this.waiters.delete(check),
    );
  }

  /** The first event whose message matches `pred`, once it came. */
  message(pred, what, ms) {
    return this.until((r) => r.events.find((e) => e.json && pred(e.json)), what, ms);
  }

  /** Resolves how the stream ended ('end' or 'error'), within `ms`. */
  end(ms = 5000) {
    return withTimeout(this.ended, ms, 'the stream to end');
  }

  /** Drops the connection from the client side. */
  abort() {
    this.controller.abort();
    return this.ended;
  }
}

/** GET /mcp as an SSE stream; resolves {res, sse} (sse unless not 200). */
async function getStream(url, sid, headers = {}) {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', 'mcp-session-id': sid, ...headers },
    signal: controller.signal,
  });
  return { res, sse: res.status === 200 ? new SseReader(res, controller) : undefined };
}

/** POSTs a request that may be answered as a stream; resolves {res, sse}. */
async function postStream(url, sid, body, headers = {}) {
  const controller = new AbortController();
  const res = await post(url, body, { 'mcp-session-id': sid, ...headers }, { signal: controller.signal });
  const type = res.headers.get('content-type') ?? '';
  return { res, sse: type.startsWith('text/event-stream') ? new SseReader(res, controller) : undefined };
}

/** Splits one of our event ids, "<channel>-<seq>". */
function eventId(id) {
  const m = /^(\d+)-(\d+)$/.exec(id ?? '');
  assert.ok(m, `event id ${JSON.stringify(id)} is <channel>-<seq>`);
  return { channel: Number(m[1]), seq: Number(m[2]) };
}

let nextId = 100;
const call = (name, args = {}, meta) => ({
  jsonrpc: '2.0',
  id: nextId++,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});

/** A JSON-RPC request over HTTP; resolves the parsed JSON answer. */
async function rpc(url, sid, method, params) {
  const res = await post(url, { jsonrpc: '2.0', id: nextId++, method, params }, { 'mcp-session-id': sid });
  assert.equal(res.status, 200, `${method}: HTTP ${res.status}`);
  assert.match(res.headers.get('content-type'), /application\/json/);
  return res.json();
}

/**
 * One request with node:http, which (unlike fetch) lets a test set Host
 * and reach a unix socket.  Resolves {status, headers, body}.
 */
function rawHttp({ url, socketPath, agent, method = 'POST', path: p, headers = {}, body }) {
  const target = url ? new URL(url) : undefined;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        ...(socketPath ? { socketPath } : { host: target.hostname, port: target.port }),
        path: p ?? (target ? target.pathname + target.search : '/mcp'),
        method,
        agent,
        headers,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body));
  });
}

/** Polls `fn` every 100 ms until it resolves truthy; rejects after `ms`. */
async function eventually(fn, what, ms = 5000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
    await sleep(100);
  }
}

/** Resolves once mcpd's stderr matches `re`; rejects after `ms`. */
function waitStderr(server, re, what, ms = 8000) {
  let onData;
  const seen = new Promise((resolve) => {
    onData = () => {
      if (re.test(server.stderr())) resolve();
    };
    server.child.stderr.on('data', onData);
    onData();
  });
  return withTimeout(seen, ms, what).finally(() => server.child.stderr.off('data', onData));
}

/** mcpd's debug line for the end of an idle session. */
const expiredLine = (sid) => new RegExp(`HTTP session ${sid.slice(0, 8)} expired`);

/** A ping on session `sid`; resolves the HTTP status. */
async function pingStatus(url, sid) {
  const res = await post(url, { jsonrpc: '2.0', id: nextId++, method: 'ping' }, { 'mcp-session-id': sid });
  await res.text();
  return res.status;
}

/* ------------------------------------------------------------------------ */

describe('HTTP+SSE (2024-11-05) with the SDK’s SSEClientTransport', () => {
  let server;
  before(async () => {
    server = await startHttp(['echo', 'everything']);
  });
  after(async () => {
    assert.equal(await stop(server.child), 0, server.stderr());
  });

  async function legacyClient(name) {
    const client = new Client({ name, version: '1.0.0' });
    const transport = new SSEClientTransport(new URL(`${server.base}/sse`));
    await withTimeout(client.connect(transport), 10000, `${name} to connect over /sse`);
    return client;
  }

  test('connect, list tools, call test_simple_text', async () => {
    const client = await legacyClient('legacy');
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'test_simple_text'));
      assert.ok(tools.some((t) => t.name === 'echo'));
      const r = await withTimeout(client.callTool({ name: 'test_simple_text', arguments: {} }), 10000, 'test_simple_text');
      assert.equal(r.content[0].type, 'text');
      assert.ok(r.content[0].text.length > 0);
      assert.notEqual(r.isError, true);
    } finally {
      await client.close();
    }
  });

  test('progress notifications arrive before the result, in order', async () => {
    const client = await legacyClient('legacy-progress');
    try {
      const seen = [];
      const r = await withTimeout(
        client.callTool({ name: 'test_tool_with_progress', arguments: {} }, CallToolResultSchema, {
          onprogress: (p) => seen.push(p.progress),
        }),
        10000,
        'test_tool_with_progress',
      );
      assert.ok(seen.length >= 1, 'progress notifications were received');
      assert.deepEqual(seen, [...seen].sort((a, b) => a - b), 'progress only grows');
      assert.equal(new Set(seen).size, seen.length, 'no progress is repeated');
      assert.ok(Array.isArray(r.content));
    } finally {
      await client.close();
    }
  });

  test('two legacy clients at once: separate sessions, each gets its own answers', async () => {
    const a = await legacyClient('legacy-a');
    const b = await legacyClient('legacy-b');
    try {
      const [ra, rb] = await withTimeout(
        Promise.all([
          a.callTool({ name: 'echo', arguments: { text: 'from a' } }),
          b.callTool({ name: 'echo', arguments: { text: 'from b' } }),
        ]),
        10000,
        'two concurrent calls',
      );
      assert.deepEqual(ra.content, [{ type: 'text', text: 'from a' }]);
      assert.deepEqual(rb.content, [{ type: 'text', text: 'from b' }]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe('HTTP+SSE on the wire', () => {
  let server;
  before(async () => {
    server = await startHttp(['echo']);
  });
  after(async () => {
    assert.equal(await stop(server.child), 0, server.stderr());
  });

  /** Opens /sse; resolves {sse, endpoint} once the endpoint event came. */
  async function openLegacy() {
    const controller = new AbortController();
    const res = await fetch(`${server.base}/sse`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /text\/event-stream/);
    const sse = new SseReader(res, controller);
    const ev = await sse.until((r) => r.events[0], 'the endpoint event');
    assert.equal(ev.event, 'endpoint');
    assert.match(ev.data, /^\/messages\?sessionId=[\x21-\x7e]+$/);
    return { sse, endpoint: `${server.base}${ev.data}` };
  }

  test('POST /messages gets 202 "Accepted"; the answer comes on /sse, without an id', async () => {
    const { sse, endpoint } = await openLegacy();
    try {
      const res = await post(endpoint, INIT);
      assert.equal(res.status, 202);
      assert.equal(await res.text(), 'Accepted');
      const ev = await sse.message((m) => m.id === INIT.id, 'the initialize result');
      assert.equal(ev.event, 'message');
      assert.equal(ev.id, undefined, 'legacy events carry no id');
      assert.ok(ev.json.result.protocolVersion);
    } finally {
      await sse.abort();
    }
  });

  test('unknown sessionId: 404; bad JSON: 400', async () => {
    const unknown = await post(`${server.base}/messages?sessionId=nope`, INIT);
    assert.equal(unknown.status, 404);
    await unknown.text();
    const { sse, endpoint } = await openLegacy();
    try {
      const bad = await post(endpoint, '{not json');
      assert.equal(bad.status, 400);
      assert.equal((await bad.json()).error.code, -32700);
    } finally {
      await sse.abort();
    }
  });

  test(
    'an answer made while its POST is handled is written on /sse at once',
    async () => {
      // A keep-alive agent holds the POST's connection open, so no unrelated
      // socket event comes to hide a lost wake-up.
      const agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 60000 });
      const { sse, endpoint } = await openLegacy();
      try {
        const res = await rawHttp({ url: endpoint, agent, headers: { 'content-type': 'application/json' }, body: INIT });
        assert.equal(res.status, 202);
        await sse.message((m) => m.id === INIT.id, 'the initialize result on /sse', 2000);
      } finally {
        agent.destroy();
        await sse.abort();
      }
    },
  );

  test(
    'closing /sse ends the session: a POST afterwards gets 404',
    async () => {
      const { sse, endpoint } = await openLegacy();
      await sse.abort();
      // Notifications only: mcpd writes nothing on the stream, so it must
      // notice the closed socket by itself.
      await eventually(
        async () => {
          const res = await post(endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' });
          await res.text();
          return res.status === 404;
        },
        'a POST to the closed session to get 404',
        2000,
      );
    },
  );
});

describe('resumption with --sse-poll 50', () => {
  let server;
  before(async () => {
    server = await startHttp(['echo', 'everything'], ['--sse-poll', '50']);
  });
  after(async () => {
    assert.equal(await stop(server.child), 0, server.stderr());
  });

  /** An SDK client whose fetches are recorded as {method, lastEventId, status}. */
  async function recordingClient(name) {
    const requests = [];
    const recordingFetch = async (input, init = {}) => {
      const headers = new Headers(init.headers);
      const res = await fetch(input, init);
      requests.push({ method: init.method ?? 'GET', lastEventId: headers.get('last-event-id'), status: res.status });
      return res;
    };
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { fetch: recordingFetch }));
    return { client, requests };
  }

  test('SDK: test_reconnection succeeds across the poll, resumed with Last-Event-ID', async () => {
    const { client, requests } = await recordingClient('poll-reconnect');
    try {
      const r = await withTimeout(client.callTool({ name: 'test_reconnection', arguments: {} }), 5000, 'test_reconnection');
      assert.notEqual(r.isError, true);
      assert.ok(r.content.length >= 1);
      const resumes = requests.filter((q) => q.method === 'GET' && q.lastEventId);
      assert.ok(resumes.length >= 1, `the client resumed: ${JSON.stringify(requests)}`);
      assert.ok(resumes.every((q) => q.status === 200), JSON.stringify(resumes));
    } finally {
      await client.close();
    }
  });

  test('SDK: test_tool_with_progress across the poll: every progress once, in order', async () => {
    const { client } = await recordingClient('poll-progress');
    try {
      const seen = [];
      const r = await withTimeout(
        client.callTool({ name: 'test_tool_with_progress', arguments: {} }, CallToolResultSchema, {
          onprogress: (p) => seen.push(p.progress),
        }),
        5000,
        'test_tool_with_progress',
      );
      assert.ok(Array.isArray(r.content));
      assert.ok(seen.length >= 1, 'progress notifications were received');
      assert.deepEqual(seen, [...seen].sort((a, b) => a - b), `progress only grows: ${seen}`);
      assert.equal(new Set(seen).size, seen.length, `no progress is replayed twice: ${seen}`);
    } finally {
      await client.close();
    }
  });

  test('raw: the POST stream closes without the response; GET with Last-Event-ID gets it', async () => {
    const sid = await rawSession(server.url);
    const req = call('test_reconnection');
    const { res, sse } = await postStream(server.url, sid, req);
    assert.equal(res.status, 200);
    assert.ok(sse, 'a 2025-11-25 session gets a stream for a slow call');
    assert.equal(await sse.end(), 'end', 'the server ended the POST’s body');
    assert.ok(sse.events.length >= 1, sse.raw);
    const prime = sse.events[0];
    assert.equal(prime.data, '');
    assert.equal(prime.retry, '50', 'retry advises the poll interval');
    const { channel } = eventId(prime.id);
    assert.ok(!sse.messages.some((m) => m.id === req.id), `no response on the polled POST:\n${sse.raw}`);

    const last = sse.events.at(-1).id;
    const resumed = await getStream(server.url, sid, { 'last-event-id': last });
    assert.equal(resumed.res.status, 200);
    const ev = await resumed.sse.message((m) => m.id === req.id, 'the response on the resumed stream');
    assert.equal(eventId(ev.id).channel, channel, 'the response keeps its channel');
    assert.ok(eventId(ev.id).seq > eventId(last).seq);
    assert.ok(!('error' in ev.json), JSON.stringify(ev.json));
    assert.equal(await resumed.sse.end(), 'end', 'the resumed stream ends after the response');
    assert.equal(resumed.sse.messages.filter((m) => m.id === req.id).length, 1);
  });

  test('raw: a Last-Event-ID naming no channel gets 404', async () => {
    const sid = await rawSession(server.url);
    const { res } = await getStream(server.url, sid, { 'last-event-id': '999-0' });
    assert.equal(res.status, 404);
    await res.text();
  });
});

describe('the standalone GET stream', () => {
  let server;
  before(async () => {
    const config = await configFile(FAST_WATCH);
    server = await startHttp(['everything'], ['--config', config]);
  });
  after(async () => {
    assert.equal(await stop(server.child), 0, server.stderr());
  });

  const isUpdate = (m) => m.method === 'notifications/resources/updated' && m.params?.uri === WATCHED;

  async function subscribe(sid) {
    const r = await rpc(server.url, sid, 'resources/subscribe', { uri: WATCHED });
    assert.deepEqual(r.result, {}, JSON.stringify(r));
    return async () => {
      await rpc(server.url, sid, 'resources/unsubscribe', { uri: WATCHED });
    };
  }

  test('reconnecting with Last-Event-ID 0-<seq> replays only what came after, in order', async () => {
    const sid = await rawSession(server.url);
    const first = await getStream(server.url, sid);
    assert.equal(first.res.status, 200);
    const unsubscribe = await subscribe(sid);
    try {
      const updates = (r) => r.events.filter((e) => e.json && isUpdate(e.json));
      await first.sse.until((r) => updates(r).length >= 2, 'two resource updates');
      const [a, b] = updates(first.sse);
      assert.equal(eventId(a.id).channel, 0);
      assert.equal(eventId(b.id).seq, eventId(a.id).seq + 1, 'standalone ids count up by one');
      await first.sse.abort();

      // Updates keep coming while nobody listens; the next GET resumes after
      // `a`, so `b` (which went out before the drop) comes again, then the
      // ones said meanwhile.
      const from = eventId(a.id).seq;
      const second = await getStream(server.url, sid, { 'last-event-id': a.id });
      assert.equal(second.res.status, 200);
      await second.sse.until((r) => r.events.length >= 4, 'four events after the resume');
      const seqs = second.sse.events.map((e) => eventId(e.id).seq);
      assert.equal(seqs[0], from + 1, `replay starts right after ${a.id}: ${seqs}`);
      for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], seqs[i - 1] + 1, `in order, no gaps or repeats: ${seqs}`);
      assert.ok(second.sse.events.every((e) => eventId(e.id).channel === 0));
      assert.ok(second.sse.events.every((e) => e.json && isUpdate(e.json)), second.sse.raw);
      await second.sse.abort();
    } finally {
      await unsubscribe();
    }
  });

  test('a second GET replaces the first: the second gets what follows, the first nothing', async () => {
    const sid = await rawSession(server.url);
    const first = await getStream(server.url, sid);
    assert.equal(first.res.status, 200);
    const second = await getStream(server.url, sid);
    assert.equal(second.res.status, 200);
    const unsubscribe = await subscribe(sid);
    try {
      await second.sse.until((r) => r.messages.filter(isUpdate).length >= 2, 'updates on the second GET');
      assert.equal(first.sse.messages.length, 0, 'nothing went to the replaced stream');
    } finally {
      await unsubscribe();
      await Promise.all([first.sse.abort(), second.sse.abort()]);
    }
  });

  test(
    'a second GET replaces the first: the first ends at once',
    async () => {
      const sid = await rawSession(server.url);
      const first = await getStream(server.url, sid);
      const second = await getStream(server.url, sid);
      assert.equal(second.res.status, 200);
      try {
        assert.equal(await first.sse.end(2000), 'end', 'the first GET was ended by the server');
      } finally {
        await Promise.all([first.sse.abort(), second.sse.abort()]);
      }
    },
  );

  test('messages said while no GET was open come when one opens', async () => {
    const sid = await rawSession(server.url);
    const unsubscribe = await subscribe(sid);
    // The watcher reports every 100 ms; after this there is something owed.
    await sleep(350);
    await unsubscribe();
    const { res, sse } = await getStream(server.url, sid);
    assert.equal(res.status, 200);
    try {
      await sse.message(isUpdate, 'an update said before the GET');
      const seqs = sse.events.map((e) => eventId(e.id).seq);
      assert.equal(seqs[0], 1, `from the first event on: ${seqs}`);
    } finally {
      await sse.abort();
    }
  });
});

describe('Streamable HTTP on the wire', () => {
  let server;
  before(async () => {
    server = await startHttp(['echo', 'everything']);
  });
  after(async () => {
    assert.equal(await stop(server.child), 0, server.stderr());
  });

  test('POST: 406 unless Accept lists both types, 415 unless the body is application/json', async () => {
    for (const accept of ['application/json', 'text/event-stream', 'text/html']) {
      const res = await post(server.url, INIT, { accept });
      assert.equal(res.status, 406, `Accept: ${accept}`);
      await res.text();
    }
    const any = await post(server.url, INIT, { accept: '*/*' });
    assert.equal(any.status, 200, 'Accept: */* takes both');
    await any.text();
    for (const type of ['text/plain', 'application/jsonx', 'application/x-www-form-urlencoded']) {
      const res = await post(server.url, INIT, { 'content-type': type });
      assert.equal(res.status, 415, `Content-Type: ${type}`);
      await res.text();
    }
    const charset = await post(server.url, INIT, { 'content-type': 'application/json; charset=utf-8' });
    assert.equal(charset.status, 200);
    await charset.text();
  });

  test('a slow call at 2025-11-25 opens a stream with a priming event first', async () => {
    const sid = await rawSession(server.url, '2025-11-25');
    const req = call('test_reconnection');
    const { res, sse } = await postStream(server.url, sid, req);
    assert.equal(res.status, 200);
    assert.ok(sse, `a stream, not ${res.headers.get('content-type')}`);
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.equal(res.headers.get('x-accel-buffering'), 'no');
    await sse.end();
    assert.match(sse.raw, /^id: \d+-0\nretry: \d+\ndata: \n\n/, 'the priming event comes first');
    const last = sse.events.at(-1);
    assert.equal(last.json?.id, req.id, 'the response ends the stream');
    assert.equal(sse.messages.length, 1);
  });

  test('a slow call at 2025-06-18 stays JSON; with progress it turns into a stream without priming', async () => {
    const sid = await rawSession(server.url, '2025-06-18');
    const plain = await postStream(server.url, sid, call('test_reconnection'), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(plain.res.status, 200);
    assert.equal(plain.sse, undefined, `JSON, not ${plain.res.headers.get('content-type')}`);
    assert.ok((await plain.res.json()).result);

    const req = call('test_tool_with_progress', {}, { progressToken: 'p1' });
    const progress = await postStream(server.url, sid, req, { 'mcp-protocol-version': '2025-06-18' });
    assert.ok(progress.sse, 'progress before the answer makes it a stream');
    await progress.sse.end();
    assert.ok(progress.sse.events[0].data, `no empty priming event: ${progress.sse.raw}`);
    assert.equal(progress.sse.events[0].json.method, 'notifications/progress');
    assert.equal(progress.sse.events.at(-1).json.id, req.id);
  });

  test('event ids count up per channel; concurrent calls have channels of their own', async () => {
    const sid = await rawSession(server.url);
    const reqs = [0, 1].map((i) => call('test_tool_with_progress', {}, { progressToken: `t${i}` }));
    const streams = await Promise.all(reqs.map((r) => postStream(server.url, sid, r)));
    const channels = [];
    for (const [i, { sse }] of streams.entries()) {
      assert.ok(sse);
      await sse.end();
      const ids = sse.events.map((e) => eventId(e.id));
      assert.ok(ids.length >= 3, sse.raw);
      assert.ok(ids.every((x) => x.channel === ids[0].channel), `one channel per stream: ${sse.raw}`);
      assert.deepEqual(ids.map((x) => x.seq), ids.map((_, k) => k), `seq 0, 1, 2, ...: ${sse.raw}`);
      assert.equal(sse.events.at(-1).json.id, reqs[i].id);
      channels.push(ids[0].channel);
    }
    assert.notEqual(channels[0], channels[1]);
  });

  test('404 for another path; 405 with Allow for the wrong method', async () => {
    const other = await post(`${server.base}/other`, INIT);
    assert.equal(other.status, 404);
    await other.text();
    for (const [method, p, allow] of [
      ['PUT', '/mcp', /^GET, POST, DELETE$/],
      ['GET', '/messages', /^POST$/],
      ['POST', '/sse', /^GET$/],
    ]) {
      const res = await fetch(`${server.base}${p}`, {
        method,
        headers: JSON_HEADERS,
        body: method === 'GET' ? undefined : '{}',
      });
      assert.equal(res.status, 405, `${method} ${p}`);
      assert.match(res.headers.get('allow') ?? '', allow, `${method} ${p}`);
      await res.text();
    }
  });
});

describe('command-line options that shape the endpoint', () => {
  test('--session-timeout 1: an idle session ends; one with an open GET stream does not', async () => {
    // Any request would keep a session alive, so the test waits for mcpd's
    // own debug line rather than polling, then checks with one request.
    const server = await startHttp(['echo'], ['--session-timeout', '1', '--log-level', 'debug']);
    try {
      const watched = await rawSession(server.url);
      const { res, sse } = await getStream(server.url, watched);
      assert.equal(res.status, 200);
      const idle = await rawSession(server.url);
      const t0 = Date.now();
      await waitStderr(server, expiredLine(idle), 'the idle session to expire');
      // Expiry is checked once a second: never before the timeout.
      assert.ok(Date.now() - t0 >= 800, `expired after ${Date.now() - t0} ms`);
      assert.equal(await pingStatus(server.url, idle), 404, 'requests to the ended session get 404');
      assert.doesNotMatch(server.stderr(), expiredLine(watched));
      assert.equal(await pingStatus(server.url, watched), 200, 'the session with a GET stream lives');
      assert.equal(sse.done, false, 'its stream is still open');
      await sse.abort();
    } finally {
      assert.equal(await stop(server.child), 0, server.stderr());
    }
  });

  test(
    '--session-timeout 1: a session whose GET the client dropped ends too',
    async () => {
      const server = await startHttp(['echo'], ['--session-timeout', '1', '--log-level', 'debug']);
      try {
        const sid = await rawSession(server.url);
        const { sse } = await getStream(server.url, sid);
        await sse.abort();
        await waitStderr(server, expiredLine(sid), 'the session to expire once its GET closed', 3000);
        assert.equal(await pingStatus(server.url, sid), 404);
      } finally {
        assert.equal(await stop(server.child), 0, server.stderr());
      }
    },
  );

  test('--allow-host example.test: that name is accepted in Host and Origin, others still 403', async () => {
    const server = await startHttp(['echo'], ['--allow-host', 'example.test']);
    try {
      const ask = (headers) => rawHttp({ url: server.url, headers: { ...JSON_HEADERS, ...headers }, body: INIT });
      assert.equal((await ask({ host: 'example.test' })).status, 200);
      assert.equal((await ask({ host: 'example.test:8080' })).status, 200);
      assert.equal((await ask({ host: 'example.test', origin: 'https://example.test' })).status, 200);
      assert.equal((await ask({ host: 'evil.test' })).status, 403);
      assert.equal((await ask({ host: 'example.test.evil.test' })).status, 403);
      assert.equal((await ask({ host: 'example.test', origin: 'http://evil.test' })).status, 403);
    } finally {
      assert.equal(await stop(server.child), 0, server.stderr());
    }
  });

  test('--listen 0.0.0.0:0 needs --allow-remote', async () => {
    const dir = await makeTempDir();
    const refused = await runMcpd(['--transport', 'http', '--listen', '0.0.0.0:0', '--plugins', dir, '--no-watch']);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /--allow-remote/);
    assert.equal(refused.stdout, '');

    const server = await startHttp(['echo'], ['--allow-remote'], { listen: '0.0.0.0:0' });
    try {
      const port = new URL(server.url).port;
      const sid = await rawSession(`http://127.0.0.1:${port}/mcp`);
      assert.ok(sid);
    } finally {
      assert.equal(await stop(server.child), 0, server.stderr());
    }
  });

  test('--session-prefix a.: every session id starts with it', async () => {
    const server = await startHttp(['echo'], ['--session-prefix', 'a.']);
    try {
      const sid = await rawSession(server.url);
      assert.match(sid, /^a\.[\x21-\x7e]{32,}$/);
      const controller = new AbortController();
      const res = await fetch(`${server.base}/sse`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
      const sse = new SseReader(res, controller);
      const ev = await sse.until((r) => r.events[0], 'the endpoint event');
      assert.match(ev.data, /sessionId=a\./);
      await sse.abort();
    } finally {
      assert.equal(await stop(server.child), 0, server.stderr());
    }
  });

  test('--listen unix:PATH serves on the socket and removes it at SIGTERM', async () => {
    const dir = await makeTempDir('mcpd-sock-');
    const socketPath = path.join(dir, 'mcpd.sock');
    const server = await startHttp(['echo'], [], { listen: `unix:${socketPath}` });
    assert.equal(server.url, `unix:${socketPath}`);
    assert.ok(fs.statSync(socketPath).isSocket());
    const res = await rawHttp({ socketPath, path: '/mcp', headers: JSON_HEADERS, body: INIT });
    assert.equal(res.status, 200, res.body);
    assert.ok(res.headers['mcp-session-id']);
    assert.ok(JSON.parse(res.body).result.protocolVersion);
    assert.equal(await stop(server.child), 0, server.stderr());
    assert.equal(fs.existsSync(socketPath), false, 'the socket file is gone');
  });
});

describe('shutdown', () => {
  test('SIGTERM with a call in flight: the client gets its response, mcpd exits 0 quickly', async () => {
    const server = await startHttp(['everything']);
    const sid = await rawSession(server.url);
    const req = call('test_tool_with_progress', {}, { progressToken: 'bye' });
    const { sse } = await postStream(server.url, sid, req);
    assert.ok(sse);
    // The call is running once its first progress came.
    await sse.message((m) => m.method === 'notifications/progress', 'the first progress');
    const exited = new Promise((resolve) => server.child.once('exit', (code) => resolve(code)));
    const t0 = Date.now();
    server.child.kill('SIGTERM');
    const response = await sse.message((m) => m.id === req.id, 'the response after SIGTERM');
    assert.ok(response.json.result, JSON.stringify(response.json));
    assert.equal(await withTimeout(exited, 3000, 'mcpd to exit after SIGTERM'), 0, server.stderr());
    assert.ok(Date.now() - t0 < 3000);
    assert.equal(server.stdout(), '', 'stdout stays empty in HTTP mode');
  });

  test(
    'SIGTERM right after "listening on" still exits 0',
    async () => {
      // A supervisor may stop mcpd as soon as it announced itself.  The
      // window is short, so a few tries.
      for (let i = 0; i < 25; i++) {
        const server = await startHttp([]);
        const exited = new Promise((resolve) => server.child.once('exit', (code, signal) => resolve({ code, signal })));
        server.child.kill('SIGTERM');
        assert.deepEqual(await withTimeout(exited, 3000, 'mcpd to exit'), { code: 0, signal: null }, `run ${i}`);
      }
    },
  );
});
