// SPDX-License-Identifier: MIT
// Isolated plugins (issue 13) as a client sees them, with real processes:
// `mcpd --isolate` runs each chosen plugin in a worker process of its own
// (`mcpd --worker PATH`, a child of mcpd), and
//   - the official SDK client gets the same answers through a worker as
//     from an in-process plugin: tools, progress, logs, sampling,
//     elicitation, resources (and updates of a subscription), prompts,
//     completion;
//   - a worker that crashes fails the calls in flight with one error that
//     names the plugin and the signal, its tools leave and come back with
//     list_changed, and a worker that keeps crashing is parked;
//   - other plugins and other sessions (over HTTP) never stop answering;
//   - a call past its deadline is answered with -32001, and a worker that
//     ignores the cancellation is killed and restarted; a cancelled call
//     that stops gets no response, ends (its place under --max-in-flight
//     is free again) and keeps its worker;
//   - the config's limits are the worker's rlimits;
//   - deleting the plugin's file ends its worker, putting it back starts one;
//   - stdout carries nothing but JSON-RPC, and mcpd exits 0 within 3 s of
//     EOF without leaving a worker behind.
//
// Waits are event-driven (a message, a stderr line, a pid going away) with
// generous limits, so a slow machine makes the file slower, not red.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { assertCleanStdout, configFile, isResponse, makePluginDir, MCPD, McpdProcess, pluginPath, post, rawSession, responses, resultText, SANITIZED, sleep, startHttp, until, waitPidGone, withTimeout, workerProcesses } from './lib.mjs';

const EXIT_MS = 3000;
const LIST_CHANGED = 'notifications/tools/list_changed';
const WATCHED = 'test://watched-resource';

/* ------------------------------------------------------------------------ */
/* Worker processes, found through /proc.                                    */


/** The pid of the worker of mcpd `pid` serving plugin `name`, or undefined. */
function workerOf(pid, name) {
  for (const [wpid, file] of workerProcesses(pid)) if (path.basename(file) === `${name}.so`) return wpid;
  return undefined;
}

/** Resolves once `text()` matches `re`, re-checked on every chunk of
 * `stream`; rejects after `ms`. */
function waitText(stream, text, re, ms = 5000) {
  if (re.test(text())) return Promise.resolve();
  let onData;
  return withTimeout(
    new Promise((resolve) => {
      onData = () => {
        if (re.test(text())) resolve();
      };
      stream.on('data', onData);
    }),
    ms,
    `stderr to match ${re}\nstderr so far:\n${text().slice(-2000)}`,
  ).finally(() => stream.off('data', onData));
}

/* ------------------------------------------------------------------------ */
/* stdio with raw JSON-RPC lines.                                            */

/**
 * mcpd over stdio with `plugins` in a private directory, `args`, and
 * `config` as its --config; initialized, and logging at debug so that
 * worker deaths are reported to this session.  Killed when the test ends.
 */
async function stdio(t, { plugins = ['fault', 'echo'], args = ['--in-process', '--isolate', 'fault'], config, watch } = {}) {
  const dir = await makePluginDir(plugins);
  const extra = [...args];
  if (config) extra.push('--config', await configFile(config));
  const mcpd = new McpdProcess(extra, { plugins: dir, watch });
  mcpd.pluginDir = dir;
  t.after(() => mcpd.close(500));
  await mcpd.initialize();
  await mcpd.call('logging/setLevel', { level: 'debug' });
  return mcpd;
}

let nextId = 1;
const id = (what) => `${what}-${nextId++}`;

/** Names of the tools mcpd lists now. */
async function toolNames(mcpd) {
  const { tools } = await mcpd.call('tools/list', {}, { id: id('list') });
  return tools.map((x) => x.name);
}

/** Index in mcpd.messages of the n-th (1-based) list_changed, or -1. */
function nthListChanged(mcpd, n) {
  let seen = 0;
  return mcpd.messages.findIndex((m) => m.method === LIST_CHANGED && ++seen === n);
}

/** Resolves once at least `n` list_changed notifications came. */
function listChanged(mcpd, n, ms = 5000) {
  return until(() => nthListChanged(mcpd, n) >= 0, ms, `list_changed number ${n}`);
}

/**
 * Keeps calling echo (one call in flight at a time) until stop() is
 * called; stop() resolves how many were answered, and throws if one was
 * not answered with its own text within 2 s.
 */
function keepEchoing(mcpd) {
  let running = true;
  let answered = 0;
  const loop = (async () => {
    while (running) {
      const text = `echo ${answered}`;
      const res = await mcpd.callTool('echo', { text }, { id: id('echo'), timeout: 2000 });
      assert.equal(resultText(res), text);
      answered++;
    }
  })();
  loop.catch(() => {});
  return async () => {
    running = false;
    await loop;
    return answered;
  };
}


/** EOF with the workers running: exit 0 within EXIT_MS, workers gone. */
async function assertExitsOnEof(mcpd) {
  const pids = [...workerProcesses(mcpd.pid).keys()];
  const t0 = Date.now();
  mcpd.endInput();
  const { code, signal } = await mcpd.waitExit(EXIT_MS);
  assert.deepEqual({ code, signal }, { code: 0, signal: null }, mcpd.stderr);
  assert.ok(Date.now() - t0 <= EXIT_MS, `took ${Date.now() - t0} ms`);
  for (const pid of pids) assert.ok(await waitPidGone(pid, 1000), `worker ${pid} outlived mcpd`);
  assertCleanStdout(mcpd);
}

/** Asserts the JSON-RPC error a worker death gives the calls in flight. */
function assertCrashError(msg, detail) {
  assert.ok('error' in msg, `expected an error, got ${JSON.stringify(msg)}`);
  assert.equal(msg.error.code, -32603);
  assert.match(msg.error.message, /plugin "fault"/);
  assert.deepEqual(msg.error.data, { plugin: 'fault', ...detail });
}

/* ------------------------------------------------------------------------ */
/* 1. The official SDK client, through workers and in-process.               */

const SAMPLED = {
  role: 'assistant',
  content: { type: 'text', text: 'This is a test response from the client' },
  model: 'test-model',
  stopReason: 'endTurn',
};
const ELICITED = { action: 'accept', content: { username: 'testuser', email: 'test@example.com' } };

/**
 * Connects an SDK client (declaring sampling and elicitation, and
 * answering both) to an mcpd serving everything and echo, isolated or not.
 * `received` holds every message in wire order; `stdout()` the raw bytes.
 */
async function sdkConnect(t, isolate) {
  const dir = await makePluginDir(['everything', 'echo']);
  const config = await configFile({ plugins: { everything: { watch_interval_ms: 100 } } });
  const args = ['--plugins', dir, '--no-watch', '--config', config];
  args.push(isolate ? '--isolate' : '--in-process');
  const transport = new StdioClientTransport({ command: MCPD, args, env: process.env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d;
  });
  const received = [];
  // Protocol.connect() chains to a handler already set: this one sees
  // every message as it came, before the SDK's schemas strip anything.
  transport.onmessage = (message) => received.push(message);
  const client = new Client(
    { name: 'mcpd-e2e-isolation', version: '0.0.0' },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, () => SAMPLED);
  client.setRequestHandler(ElicitRequestSchema, () => ELICITED);
  t.after(() => client.close().catch(() => {}));
  await withTimeout(client.connect(transport), 10000, 'SDK client connect');
  const child = transport._process;
  assert.ok(child, 'SDK internals changed: no _process on the transport');
  let stdout = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  return { client, child, received, stderr: () => stderr, stdout: () => stdout };
}

/**
 * The same conversation with either server; resolves what the client saw,
 * with nothing in it that may differ between two runs.
 */
async function converse(conn) {
  const { client, received } = conn;
  const seen = {};
  // Isolated plugins list their tools when their worker is ready, so the
  // order across plugins follows the workers, not the file names.
  seen.tools = (await client.listTools()).tools.sort((a, b) => a.name.localeCompare(b.name));
  seen.simple = await client.callTool({ name: 'test_simple_text' });
  seen.echo = await client.callTool({ name: 'echo', arguments: { text: 'through the worker' } });

  const progress = [];
  seen.progressResult = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
    onprogress: (p) => progress.push(p),
  });
  // The SDK may drop the last one (see everything.test.mjs); the wire has all.
  assert.ok(progress.length >= 2, `onprogress got ${progress.length} of 3`);
  seen.progress = received
    .filter((m) => m.method === 'notifications/progress')
    .map(({ params: { progressToken, ...rest } }) => ({ token: typeof progressToken, ...rest }));

  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await client.setLoggingLevel('debug');
  seen.loggingResult = await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
  seen.logs = logs.map(({ level, logger, data }) => ({ level, logger, data }));

  seen.sampling = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Test prompt for sampling' } });
  seen.samplingAsked = received.filter((m) => m.method === 'sampling/createMessage').map((m) => m.params);
  seen.elicitation = await client.callTool({
    name: 'test_elicitation',
    arguments: { message: 'Please provide your information' },
  });
  seen.elicitationAsked = received.filter((m) => m.method === 'elicitation/create').map((m) => m.params);

  seen.resources = (await client.listResources()).resources;
  seen.templates = (await client.listResourceTemplates()).resourceTemplates;
  seen.staticText = await client.readResource({ uri: 'test://static-text' });
  seen.template = await client.readResource({ uri: 'test://template/42/data' });
  seen.subscribe = await client.subscribeResource({ uri: WATCHED });
  seen.unsubscribe = await client.unsubscribeResource({ uri: WATCHED });

  seen.prompts = (await client.listPrompts()).prompts;
  seen.prompt = await client.getPrompt({
    name: 'test_prompt_with_arguments',
    arguments: { arg1: 'testValue1', arg2: 'testValue2' },
  });
  seen.completion = await client.complete({
    ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
    argument: { name: 'arg1', value: 'test' },
  });
  seen.templateCompletion = await client.complete({
    ref: { type: 'ref/resource', uri: 'test://template/{id}/data' },
    argument: { name: 'id', value: '4' },
  });
  seen.ping = await client.ping();
  return seen;
}

/** Stdout held JSON-RPC lines only, each ended by '\n'. */
function assertCleanSdkStdout(text) {
  assert.ok(text.endsWith('\n'), 'stdout ends inside a line');
  for (const line of text.split('\n').slice(0, -1)) {
    let msg;
    assert.doesNotThrow(() => {
      msg = JSON.parse(line);
    }, `not JSON on stdout: ${line.slice(0, 200)}`);
    assert.equal(msg.jsonrpc, '2.0', line.slice(0, 200));
  }
}

/** EOF on the SDK's pipe: exit 0 within EXIT_MS, no worker left. */
async function assertSdkExits(conn) {
  const { child } = conn;
  const pids = [...workerProcesses(child.pid).keys()];
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.stdin.end();
  assert.deepEqual(await withTimeout(exited, EXIT_MS, 'mcpd to exit on EOF'), { code: 0, signal: null }, conn.stderr());
  for (const pid of pids) assert.ok(await waitPidGone(pid, 1000), `worker ${pid} outlived mcpd`);
}

describe('the official SDK client through workers', () => {
  test('every feature of the everything fixture answers as it does in-process', { timeout: 30000 }, async (t) => {
    const isolated = await sdkConnect(t, true);
    const inProcess = await sdkConnect(t, false);
    const running = workerProcesses(isolated.child.pid);
    assert.deepEqual(
      [...running.values()].map((f) => path.basename(f)).sort(),
      ['echo.so', 'everything.so'],
      'one worker per plugin',
    );
    assert.equal(workerProcesses(inProcess.child.pid).size, 0, 'no worker with --in-process');

    const [got, want] = await Promise.all([converse(isolated), converse(inProcess)]);
    assert.deepEqual(got, want);
    // And the answers are the right ones, not the same wrong ones.
    assert.equal(resultText(got.simple), 'This is a simple text response for testing.');
    assert.equal(resultText(got.echo), 'through the worker');
    assert.deepEqual(
      got.progress.map((p) => p.progress),
      [0, 50, 100],
    );
    assert.deepEqual(
      got.logs.map((l) => l.data),
      ['Tool execution started', 'Tool processing data', 'Tool execution completed'],
    );
    assert.equal(resultText(got.sampling), 'LLM response: This is a test response from the client');
    assert.equal(got.samplingAsked.length, 1);
    assert.equal(
      resultText(got.elicitation),
      'User response: action=accept, content={"username":"testuser","email":"test@example.com"}',
    );
    assert.equal(got.staticText.contents[0].text, 'This is the content of the static text resource.');
    assert.equal(got.prompt.messages[0].content.text, "Prompt with arguments: arg1='testValue1', arg2='testValue2'");
    assert.deepEqual(got.completion.completion.values, ['testValue1', 'testOther1']);
    assert.deepEqual(got.templateCompletion.completion.values, ['42']);

    // Still the same workers: nothing crashed on the way.
    assert.deepEqual(workerProcesses(isolated.child.pid), running);
    for (const conn of [isolated, inProcess]) {
      assertCleanSdkStdout(conn.stdout());
      await assertSdkExits(conn);
    }
  });

  // The plugin sees the client's own token; the worker's progress finds
  // its way back by the related id.
  test('a tool sees the client’s own progress token through the worker', async (t) => {
    for (const args of [['--in-process'], ['--isolate']]) {
      const mcpd = await stdio(t, { plugins: ['everything'], args });
      const res = await mcpd.request(
        'tools/call',
        { name: 'test_tool_with_progress', arguments: {} },
        { id: id('progress'), meta: { progressToken: 'progress-test-1' } },
      );
      const tokens = mcpd.notifications.filter((m) => m.method === 'notifications/progress');
      assert.deepEqual(
        tokens.map((m) => m.params.progressToken),
        ['progress-test-1', 'progress-test-1', 'progress-test-1'],
      );
      assert.equal(resultText(res.result), 'progress-test-1', args.join(' ') || 'in-process');
      await assertExitsOnEof(mcpd);
    }
  });

  // The worker reports updates of a subscribed resource; mcpd passes them
  // to the subscribed sessions as it would its own.
  test('a subscription to the watched resource is updated through the worker', {
    timeout: 15000,
  }, async (t) => {
    for (const isolate of [false, true]) {
      const conn = await sdkConnect(t, isolate);
      const updates = [];
      conn.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params));
      assert.deepEqual(await conn.client.subscribeResource({ uri: WATCHED }), {});
      await until(() => updates.length >= 2, 3000, `two updates (${isolate ? 'isolated' : 'in-process'})`);
      assert.deepEqual(updates[0], { uri: WATCHED });
      assert.deepEqual(await conn.client.unsubscribeResource({ uri: WATCHED }), {});
      assertCleanSdkStdout(conn.stdout());
      await assertSdkExits(conn);
    }
  });
});

/* ------------------------------------------------------------------------ */
/* 2, 3. Crashes over stdio.                                                 */

describe('a crashing worker over stdio', () => {
  test('segv_pool: one error naming fault and signal 11; tools leave and come back; echo never stops', { timeout: 15000 }, async (t) => {
    const mcpd = await stdio(t);
    const before = workerOf(mcpd.pid, 'fault');
    assert.ok(before, 'no worker for fault');
    // echo is in-process: the worker that told its name ends at once.
    await until(() => workerOf(mcpd.pid, 'echo') === undefined, 5000, 'echo in-process, its name worker gone');
    const stopEcho = keepEchoing(mcpd);

    const callId = id('segv_pool');
    const msg = await mcpd.request('tools/call', { name: 'segv_pool' }, { id: callId, timeout: 5000 });
    assertCrashError(msg, { signal: 11 });
    assert.match(msg.error.message, /signal 11|SIGSEGV|Segmentation/);

    // Gone: the first list_changed.  Whatever tools/list says right after,
    // the tools are absent unless the second list_changed came first.
    await listChanged(mcpd, 1);
    const listId = id('list');
    const names = (await mcpd.call('tools/list', {}, { id: listId })).tools.map((x) => x.name);
    const answeredAt = mcpd.messages.findIndex((m) => isResponse(m) && m.id === listId);
    const second = nthListChanged(mcpd, 2);
    if (second < 0 || second > answeredAt) {
      assert.deepEqual(names, ['echo'], 'the crashed worker’s tools are still listed');
    }
    // Back: the second list_changed, a new worker, and its tools work.
    await listChanged(mcpd, 2);
    assert.ok((await toolNames(mcpd)).includes('segv_pool'));
    const after = workerOf(mcpd.pid, 'fault');
    assert.ok(after && after !== before, `the worker was not replaced (${before} -> ${after})`);
    assert.ok(await waitPidGone(before, 1000), 'the crashed worker is still there');
    assert.equal(resultText(await mcpd.callTool('ok', {}, { id: id('ok') })), 'ok');

    const echoed = await stopEcho();
    assert.ok(echoed > 0, 'echo was not called while the worker was down');
    assert.equal(responses(mcpd).filter((m) => m.id === callId).length, 1);
    // Reported once: on stderr and to this session, which asked for logs.
    const lines = mcpd.stderr.split('\n').filter((l) => /worker process was killed by signal 11/.test(l));
    assert.equal(lines.length, 1, mcpd.stderr);
    assert.match(lines[0], /plugin "fault"/);
    const reports = mcpd.notifications.filter((m) => m.method === 'notifications/message' && m.params.level === 'error');
    assert.equal(reports.length, 1, JSON.stringify(reports));
    assert.equal(reports[0].params.logger, 'fault');
    assert.match(JSON.stringify(reports[0].params.data), /signal 11/);
    assert.equal(nthListChanged(mcpd, 3), -1, 'more list_changed than the crash explains');
    await assertExitsOnEof(mcpd);
  });

  test('five crashes in a row park the plugin: its tools stay gone, echo works, exit 0 on EOF', { timeout: 20000 }, async (t) => {
    const mcpd = await stdio(t);
    for (let crash = 1; crash <= 5; crash++) {
      const msg = await mcpd.request('tools/call', { name: 'segv_pool' }, { id: id('segv'), timeout: 5000 });
      assertCrashError(msg, { signal: 11 });
      // Each crash takes the tools away; all but the last bring them back.
      await listChanged(mcpd, 2 * crash - 1);
      if (crash < 5) await listChanged(mcpd, 2 * crash, 8000);
    }
    await waitText(mcpd.child.stderr, () => mcpd.stderr, /plugin "fault".*parked/);
    assert.equal(mcpd.stderr.split('\n').filter((l) => /parked/.test(l)).length, 1, mcpd.stderr);
    // Longer than the next backoff would have been: nothing comes back.
    await sleep(2000);
    assert.equal(workerOf(mcpd.pid, 'fault'), undefined, 'a parked plugin has a worker');
    assert.deepEqual(await toolNames(mcpd), ['echo']);
    assert.equal(nthListChanged(mcpd, 10), -1, 'the tools came back');
    const gone = await mcpd.request('tools/call', { name: 'ok' }, { id: id('ok') });
    assert.ok('error' in gone || gone.result?.isError, JSON.stringify(gone));
    assert.equal(resultText(await mcpd.callTool('echo', { text: 'alive' }, { id: id('echo') })), 'alive');
    assert.deepEqual(await mcpd.ping({ id: id('ping') }), {});
    await assertExitsOnEof(mcpd);
  });
});

/* ------------------------------------------------------------------------ */
/* 4. HTTP with two sessions.                                                */

/** A GET /mcp stream of one session, read as it comes. */
class EventStream {
  constructor(url, sid) {
    this.messages = [];
    this.controller = new AbortController();
    this.opened = fetch(url, {
      headers: { accept: 'text/event-stream', 'mcp-session-id': sid },
      signal: this.controller.signal,
    }).then((res) => {
      assert.equal(res.status, 200, `GET stream: HTTP ${res.status}`);
      this.#read(res).catch(() => {});
    });
  }

  async #read(res) {
    const decoder = new TextDecoder();
    let buf = '';
    for await (const chunk of res.body) {
      buf += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, '\n');
      let end;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const data = buf
          .slice(0, end)
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).replace(/^ /, ''))
          .join('\n');
        buf = buf.slice(end + 2);
        if (data !== '') this.messages.push(JSON.parse(data));
      }
    }
  }

  count(method) {
    return this.messages.filter((m) => m.method === method).length;
  }

  close() {
    this.controller.abort();
  }
}

/** The JSON-RPC messages of a POST's answer: a JSON body or an SSE stream. */
async function answerOf(res) {
  const type = res.headers.get('content-type') ?? '';
  const body = await res.text();
  if (type.includes('application/json')) return [].concat(JSON.parse(body));
  return body
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n'),
    )
    .filter((data) => data !== '')
    .map((data) => JSON.parse(data));
}

test('over HTTP, session A crashes the worker: one error for A, B keeps working, both hear list_changed', { timeout: 15000 }, async (t) => {
  const server = await startHttp(['fault', 'echo'], ['--in-process', '--isolate', 'fault']);
  t.after(() => {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  });
  const [a, b] = [await rawSession(server.url), await rawSession(server.url)];
  const streams = [new EventStream(server.url, a), new EventStream(server.url, b)];
  t.after(() => streams.forEach((s) => s.close()));
  await Promise.all(streams.map((s) => s.opened));
  const before = workerOf(server.child.pid, 'fault');
  assert.ok(before, 'no worker for fault');

  let n = 1;
  const rpc = async (sid, method, params) => {
    const rid = n++;
    const res = await post(
      server.url,
      { jsonrpc: '2.0', id: rid, method, ...(params ? { params } : {}) },
      { 'mcp-session-id': sid },
      { signal: AbortSignal.timeout(5000) },
    );
    assert.equal(res.status, 200, `${method}: HTTP ${res.status}`);
    const answers = (await answerOf(res)).filter((m) => 'id' in m && !('method' in m));
    assert.equal(answers.length, 1, `${method}: ${JSON.stringify(answers)}`);
    assert.equal(answers[0].id, rid);
    return answers[0];
  };

  // B calls echo and pings, one after the other, all along.
  let running = true;
  let served = 0;
  const bLoop = (async () => {
    while (running) {
      const echo = await rpc(b, 'tools/call', { name: 'echo', arguments: { text: `b ${served}` } });
      assert.equal(resultText(echo.result), `b ${served}`);
      assert.deepEqual((await rpc(b, 'ping')).result, {});
      served++;
    }
  })();
  bLoop.catch(() => {});

  const crash = await rpc(a, 'tools/call', { name: 'abort_inline' });
  assertCrashError(crash, { signal: 6 });
  assert.match(crash.error.message, /signal 6|SIGABRT|Abort/);

  // Both sessions hear the tools leave and come back.
  await until(() => streams.every((s) => s.count(LIST_CHANGED) >= 2), 5000, 'two list_changed on both GET streams');
  assert.equal(resultText((await rpc(a, 'tools/call', { name: 'ok' })).result), 'ok');
  running = false;
  await bLoop;
  assert.ok(served > 0, 'session B was not served while the worker was down');
  assert.deepEqual((await rpc(a, 'ping')).result, {});
  assert.notEqual(workerOf(server.child.pid, 'fault'), before);
  // The crash's one answer went with A's POST, not to a GET stream.
  for (const s of streams) assert.deepEqual(s.messages.filter((m) => 'id' in m && !('method' in m)), []);

  const pids = [...workerProcesses(server.child.pid).keys()];
  const exited = new Promise((resolve) => server.child.once('exit', (code, signal) => resolve({ code, signal })));
  server.child.kill('SIGTERM');
  assert.deepEqual(await withTimeout(exited, EXIT_MS, 'mcpd to exit on SIGTERM'), { code: 0, signal: null }, server.stderr());
  for (const pid of pids) assert.ok(await waitPidGone(pid, 1000), `worker ${pid} outlived mcpd`);
  assert.equal(server.stdout(), '');
});

/* ------------------------------------------------------------------------ */
/* 5. Deadlines.                                                             */

test('hang_pool past a 300 ms deadline: -32001 at once, the worker killed 2 s later and restarted', { timeout: 15000 }, async (t) => {
  const config = { plugins: { fault: { mcpd: { tools: { hang_pool: { deadlineMs: 300 } } } } } };
  const mcpd = await stdio(t, { config });
  const before = workerOf(mcpd.pid, 'fault');
  const stopEcho = keepEchoing(mcpd);

  const callId = id('hang_pool');
  const t0 = Date.now();
  const msg = await mcpd.request('tools/call', { name: 'hang_pool' }, { id: callId, timeout: 3000 });
  const answered = Date.now() - t0;
  assert.ok('error' in msg, JSON.stringify(msg));
  assert.equal(msg.error.code, -32001);
  assert.deepEqual(msg.error.data, { plugin: 'fault', deadlineMs: 300 });
  assert.ok(answered >= 250 && answered < 1300, `answered after ${answered} ms`);

  await waitText(mcpd.child.stderr, () => mcpd.stderr, /plugin "fault": a call ignored its cancellation; killing the worker/);
  const killed = Date.now() - t0;
  assert.ok(killed >= answered + 1500 && killed < answered + 4000, `killed ${killed - answered} ms after the answer`);
  assert.ok(await waitPidGone(before, 2000), 'the worker was not killed');
  await listChanged(mcpd, 2, 5000);
  const after = workerOf(mcpd.pid, 'fault');
  assert.ok(after && after !== before, 'no new worker');
  assert.equal(resultText(await mcpd.callTool('ok', {}, { id: id('ok') })), 'ok');
  assert.ok((await stopEcho()) > 0);
  // The hung call was answered once, by its deadline, not again at the kill.
  await mcpd.ping({ id: id('ping') });
  assert.equal(responses(mcpd).filter((m) => m.id === callId).length, 1);
  await assertExitsOnEof(mcpd);
});

// A call that stops when cancelled ends on the host too, though its
// client hears nothing more of it: the worker answers the host, which
// drops the answer.  Neither the client's in-flight limit nor the worker
// pays for it.
test('cancelled slow_ok calls get no response, free their place under --max-in-flight 2, and keep the worker', { timeout: 20000 }, async (t) => {
  const mcpd = await stdio(t, { args: ['--isolate', 'fault', '--max-in-flight', '2'] });
  const before = workerOf(mcpd.pid, 'fault');
  const cancelled = [];
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 2; i++) {
      const callId = id('slow_ok');
      cancelled.push(callId);
      await mcpd.write({ jsonrpc: '2.0', id: callId, method: 'tools/call', params: { name: 'slow_ok', arguments: { ms: 20000 } } });
      await mcpd.notify('notifications/cancelled', { requestId: callId, reason: 'test' });
    }
    // Until both ended, a request beyond the limit is refused as busy.
    // Two calls that overlap are served only when neither cancelled call
    // still holds a place; one alone could slip in beside the last.
    await until(
      async () => {
        const msgs = await Promise.all([0, 1].map(() =>
          mcpd.request('tools/call', { name: 'slow_ok', arguments: { ms: 100 } }, { id: id('slow'), timeout: 3000 })));
        for (const msg of msgs)
          if ('error' in msg) assert.equal(msg.error.code, -32000, JSON.stringify(msg));
        return msgs.every((msg) => 'result' in msg && resultText(msg.result) === 'slept after 100 ms');
      },
      5000,
      `two calls served at once after round ${round + 1} of cancels`,
    );
  }
  await mcpd.ping({ id: id('ping') });
  assert.deepEqual(
    responses(mcpd).filter((m) => cancelled.includes(m.id)),
    [],
    'a cancelled request got a response',
  );
  assert.equal(workerOf(mcpd.pid, 'fault'), before, 'the worker was replaced');
  assert.doesNotMatch(mcpd.stderr, /killing the worker/);
  await assertExitsOnEof(mcpd);
});

test('slow_ok past a 300 ms deadline stops when cancelled: -32001, and its worker is not killed', { timeout: 15000 }, async (t) => {
  const config = { plugins: { fault: { mcpd: { tools: { slow_ok: { deadlineMs: 300 } } } } } };
  const mcpd = await stdio(t, { config });
  const before = workerOf(mcpd.pid, 'fault');
  const callId = id('slow_ok');
  const msg = await mcpd.request('tools/call', { name: 'slow_ok', arguments: { ms: 20000 } }, { id: callId, timeout: 3000 });
  assert.ok('error' in msg, JSON.stringify(msg));
  assert.equal(msg.error.code, -32001);
  // Past the 2 s grace period a call that ignored its cancellation costs
  // its worker; this one stopped.
  await sleep(2600);
  assert.doesNotMatch(mcpd.stderr, /killing the worker/);
  assert.equal(workerOf(mcpd.pid, 'fault'), before, 'the worker was replaced');
  assert.equal(resultText(await mcpd.callTool('ok', {}, { id: id('ok') })), 'ok');
  assert.equal(responses(mcpd).filter((m) => m.id === callId).length, 1);
  await assertExitsOnEof(mcpd);
});

/* ------------------------------------------------------------------------ */
/* 6. Limits.                                                                */

test('the config’s limits are the worker’s rlimits, and only the worker’s', async (t) => {
  const limits = { openFiles: 32, cpuSeconds: 600, ...(SANITIZED ? {} : { addressSpaceMiB: 4096 }) };
  const mcpd = await stdio(t, { config: { plugins: { fault: { mcpd: { limits } } } } });
  const worker = workerOf(mcpd.pid, 'fault');
  assert.ok(worker, 'no worker for fault');
  const row = (pid, name) => {
    const text = fs.readFileSync(`/proc/${pid}/limits`, 'utf8');
    return text.split('\n').find((l) => l.startsWith(name)).split(/\s{2,}/).slice(1, 3);
  };
  assert.deepEqual(row(worker, 'Max open files'), ['32', '32']);
  if (!SANITIZED) assert.deepEqual(row(worker, 'Max address space'), [String(4096 * 1048576), String(4096 * 1048576)]);
  assert.deepEqual(row(worker, 'Max cpu time'), ['600', '600']);
  assert.notDeepEqual(row(mcpd.pid, 'Max open files'), ['32', '32'], 'mcpd itself got the limit');
  assert.equal(resultText(await mcpd.callTool('ok', {}, { id: id('ok') })), 'ok');
  await assertExitsOnEof(mcpd);
});

/* ------------------------------------------------------------------------ */
/* 7. Unload and reload through the plugin directory.                        */

test('deleting fault.so ends its worker, putting it back starts a new one', { timeout: 15000 }, async (t) => {
  const mcpd = await stdio(t, { watch: true });
  const first = workerOf(mcpd.pid, 'fault');
  assert.ok(first, 'no worker for fault');
  const file = path.join(mcpd.pluginDir, 'fault.so');

  fs.unlinkSync(file);
  assert.ok(await waitPidGone(first, 5000), 'the worker outlived its plugin');
  await listChanged(mcpd, 1);
  assert.deepEqual(await toolNames(mcpd), ['echo']);

  // Written under a hidden name the watcher ignores, then renamed in.
  const tmp = path.join(mcpd.pluginDir, '.fault.so.tmp');
  fs.copyFileSync(pluginPath('fault'), tmp);
  fs.chmodSync(tmp, 0o644);
  fs.renameSync(tmp, file);
  await listChanged(mcpd, 2);
  const second = await until(() => workerOf(mcpd.pid, 'fault'), 5000, 'a new worker');
  assert.notEqual(second, first);
  assert.ok((await toolNames(mcpd)).includes('ok'));
  assert.equal(resultText(await mcpd.callTool('ok', {}, { id: id('ok') })), 'ok');
  assert.equal(resultText(await mcpd.callTool('echo', { text: 'x' }, { id: id('echo') })), 'x');
  await assertExitsOnEof(mcpd);
});

/* ------------------------------------------------------------------------ */
/* 8. EOF with every plugin isolated and a call in flight.                   */

test('EOF with two workers and a hung call in flight: exit 0 within 3 s, no worker left', { timeout: 10000 }, async (t) => {
  const mcpd = await stdio(t, { args: ['--isolate'] });
  assert.deepEqual(
    [...workerProcesses(mcpd.pid).values()].map((f) => path.basename(f)).sort(),
    ['echo.so', 'fault.so'],
  );
  await mcpd.write({ jsonrpc: '2.0', id: id('hang_pool'), method: 'tools/call', params: { name: 'hang_pool' } });
  assert.equal(resultText(await mcpd.callTool('echo', { text: 'y' }, { id: id('echo') })), 'y');
  await assertExitsOnEof(mcpd);
});
