// SPDX-License-Identifier: MIT
// Faults in plugins (issues 13 and 22): the `fault` fixture misbehaves on
// purpose, one tool per fault and execution mode (segv_inline, hang_pool,
// ...).  With default options every plugin runs in a worker process of its
// own, and whatever fault, in whatever mode, mcpd must go on; with
// --in-process it must contain what it can contain in its own process.
// Over stdio and over HTTP with two sessions, after every fault:
//   - every request with an id got exactly one response,
//   - a call to another plugin (echo) and a ping are answered, and so is
//     the fault plugin's own `ok` tool, once its worker is back when the
//     fault cost it its worker,
//   - stdout carried nothing but JSON-RPC (over HTTP: nothing at all),
//   - mcpd exits 0 within 3 s of EOF (stdio) or SIGTERM (HTTP).
//
// Crashes (segv, abort, exit, overflow) end the worker: the call in
// flight gets one error naming the plugin and the signal or status, and
// the worker is restarted.  Hangs that ignore cancellation are answered
// by their deadline; in a worker the worker is killed and restarted; in
// mcpd the pool and the plugin's own threads survive them (POOL, ASYNC),
// the watchdog outlives them (INLINE), and eight of them cannot starve
// another plugin's POOL call.  Crashes are not survivable in-process and
// are tested with default options only.  Each test starts its own mcpd,
// so one fault never explains another test's failure.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertCleanStdout,
  configFile,
  makePluginDir,
  McpdProcess,
  post,
  rawSession,
  resultText,
  responses,
  startHttp,
  withTimeout,
  PLATFORM,
  PLUGIN_MODE,
} from './lib.mjs';

/** Tests of mcpd's default placement skip when the suite runs with
 * MCPD_TEST_PLUGIN_MODE=in-process, which overrides it. */
const DEFAULT_OVERRIDDEN = PLUGIN_MODE === 'in-process' && 'this run puts plugins in-process by default';

const MODES = ['inline', 'pool', 'async'];
const PLUGINS = ['fault', 'echo', 'good'];
const EXIT_MS = 3000;
const DEADLINE_MS = 300;

/** Runs every plugin inside mcpd; without it each runs in a worker. */
const IN_PROCESS = ['--in-process'];
const LIST_CHANGED = 'notifications/tools/list_changed';

/** Host settings for the fault plugin: short deadlines for the hangs that
 * the pool and the plugin's own threads can survive. */
const DEADLINES = {
  plugins: {
    fault: {
      mcpd: {
        tools: {
          hang_pool: { deadlineMs: DEADLINE_MS },
          hang_async: { deadlineMs: DEADLINE_MS },
          slow_ok: { deadlineMs: 1000 },
        },
      },
    },
  },
};

/** The same, with a deadline for hang_inline too: in a worker, its loop
 * is stuck, not mcpd's, and the deadline answers the call. */
const WORKER_DEADLINES = {
  plugins: {
    fault: {
      mcpd: {
        tools: {
          hang_inline: { deadlineMs: DEADLINE_MS },
          ...DEADLINES.plugins.fault.mcpd.tools,
        },
      },
    },
  },
};

/** What mcpd logs when it kills a worker whose call ignored the
 * cancellation its deadline sent. */
const KILLED_FOR_HANG = /plugin "fault": a call ignored its cancellation; killing the worker/;

/* ------------------------------------------------------------------------ */
/* What each fault that in-process mode contains must look like.            */

/** The stderr lines that give away a forged message: both the raw write(2)
 * and printf() text must land there, never on stdout. */
const FORGED = ['{"forged":"write"}', '{"forged":"printf"}'];

/**
 * For each containable fault, checks the one response the faulty call got
 * and says which stderr line must name the plugin.  The answers are the
 * ones src/call/ gives: complete() on a call that is not ASYNC, or a
 * second one, is refused and logged while the first result stands
 * (host_api.c); a return value other than MCPD_OK/MCPD_ERROR is -32603,
 * logged (result.c).
 */
const CONTAINED = {
  stdout: {
    check(msg) {
      assert.ok('result' in msg, JSON.stringify(msg));
      assert.equal(resultText(msg.result), 'wrote to stdout');
    },
    stderr: () => FORGED.map((f) => new RegExp(escape(f))),
  },
  twice: {
    check(msg) {
      assert.ok('result' in msg, JSON.stringify(msg));
      assert.equal(resultText(msg.result), 'completed once');
      assert.notEqual(msg.result.isError, true);
    },
    // The ASYNC thread's second complete() may find the call still being
    // finished ("refused") or gone ("already finished"); both are one line.
    stderr: () => [/plugin "fault": complete\(\) (refused|on a call that has already finished)/],
  },
  bogus: {
    check(msg, tool) {
      assert.ok('error' in msg, JSON.stringify(msg));
      assert.equal(msg.error.code, -32603);
      assert.equal(msg.error.message, `tool ${tool} returned 12345, which is neither MCPD_OK nor MCPD_ERROR`);
    },
    stderr: (tool) => [new RegExp(`plugin "fault": tool ${tool} returned 12345`)],
  },
};

function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The deadline's answer: -32001 (the code MCP clients use for a request
 * that timed out) naming the plugin, the tool and the deadline, which the
 * error's data repeats. */
function assertDeadlineError(msg, tool) {
  assert.ok('error' in msg, `expected a deadline error, got ${JSON.stringify(msg)}`);
  assert.equal(msg.error.code, -32001);
  assert.match(msg.error.message, /plugin "fault"/);
  assert.match(msg.error.message, new RegExp(`"${tool}"`));
  assert.match(msg.error.message, new RegExp(`${DEADLINE_MS} ms`));
  assert.deepEqual(msg.error.data, { plugin: 'fault', deadlineMs: DEADLINE_MS });
}

/** Resolves once `text()` matches every regexp, listening to `stream`;
 * rejects after `ms`. */
function waitText(stream, text, res, ms = 5000, what = 'stderr') {
  const done = () => res.every((re) => re.test(text()));
  if (done()) return Promise.resolve();
  let onData;
  return withTimeout(
    new Promise((resolve) => {
      onData = () => {
        if (done()) resolve();
      };
      stream.on('data', onData);
    }),
    ms,
    `${what} to match ${res.join(', ')}\n${what} so far:\n${text().slice(-2000)}`,
  ).finally(() => stream.off('data', onData));
}

/** A stderr line that names both the plugin and the tool. */
function namesPluginAndTool(stderr, tool) {
  return stderr.split('\n').some((l) => /\bfault\b/.test(l) && l.includes(tool));
}

/* ------------------------------------------------------------------------ */
/* What a crash looks like: it ends the worker, never mcpd.                  */

const CRASHES = {
  segv: /SIGSEGV|signal 11|segmentation/i,
  abort: /SIGABRT|signal 6|abort/i,
  exit: /exit(ed)?( with)?( status| code)? 3\b/i,
  overflow: /SIGSEGV|signal 11|segmentation|stack/i,
};

/** What the error's data says of each crash. */
const CRASH_DATA = {
  segv: { signal: 11 },
  abort: { signal: 6 },
  exit: { exitStatus: 3 },
  overflow: { signal: 11 },
};

/** The text a crash was reported with: a JSON-RPC error's message, or an
 * isError result's text. */
function crashReport(msg) {
  if ('error' in msg) return msg.error.message;
  assert.equal(msg.result.isError, true, JSON.stringify(msg));
  return resultText(msg.result);
}

/** How `tool` ends its worker.  exit() from a pool thread keeps its status
 * only where the platform layer can stop the process's destructors
 * (platform_exit_fast: glibc's on_exit, the Linux build); elsewhere
 * libuv's own destructor, joining the pool from inside it, aborts. */
function crashOf(tool, fault) {
  return tool === 'exit_pool' && PLATFORM !== 'linux' ? 'abort' : fault;
}

/** The one answer a call gets when its worker dies under it: -32603,
 * naming the plugin and the signal or exit status, which the data
 * repeats. */
function assertCrashError(msg, fault) {
  const report = crashReport(msg);
  assert.match(report, /fault/);
  assert.match(report, CRASHES[fault]);
  assert.ok('error' in msg, `expected a JSON-RPC error, got ${JSON.stringify(msg)}`);
  assert.equal(msg.error.code, -32603);
  assert.match(msg.error.message, /plugin "fault"/);
  assert.deepEqual(msg.error.data, { plugin: 'fault', ...CRASH_DATA[fault] });
}

/* ------------------------------------------------------------------------ */
/* stdio.                                                                    */

let nextId = 1;
const id = (what) => `${what}-${nextId++}`;

/** mcpd over stdio with the fault, echo and good plugins, initialized.
 * Always killed when the test ends, whatever happened. */
async function stdio(t, { config, args = [] } = {}) {
  const dir = await makePluginDir(PLUGINS);
  const extra = [...args];
  if (config) extra.push('--config', await configFile(config));
  const mcpd = new McpdProcess(extra, { plugins: dir });
  t.after(() => mcpd.close(500));
  await mcpd.initialize();
  return mcpd;
}

/** Echo and ping still answered, then the checks every fault shares. */
async function stdioStillServes(mcpd) {
  const echo = await mcpd.callTool('echo', { text: 'still here' }, { id: id('echo') });
  assert.equal(resultText(echo), 'still here');
  assert.deepEqual(await mcpd.ping({ id: id('ping') }), {});
}

/** Every response has an id no other response has, stdout is clean, and
 * no forged message got through. */
function assertCleanStdoutUnforged(mcpd) {
  assertCleanStdout(mcpd);
  for (const line of mcpd.rawLines) {
    for (const f of FORGED) assert.ok(!line.includes(f), `a forged message reached stdout: ${line}`);
  }
}

/** EOF, then exit status 0 within EXIT_MS. */
async function assertExitsOnEof(mcpd) {
  const t0 = Date.now();
  mcpd.endInput();
  const { code, signal } = await mcpd.waitExit(EXIT_MS);
  assert.equal(signal, null, mcpd.stderr);
  assert.equal(code, 0, mcpd.stderr);
  assert.ok(Date.now() - t0 <= EXIT_MS);
}

/** After the fault plugin's worker was lost: its tools left and came back
 * (two list_changed), and its `ok` tool answers again. */
async function stdioWorkerBack(mcpd) {
  await mcpd.notification(LIST_CHANGED, { timeout: 10000 });
  await mcpd.notification(LIST_CHANGED, { timeout: 10000 });
  const { tools } = await mcpd.call('tools/list', {}, { id: id('list') });
  assert.ok(tools.some((x) => x.name === 'ok'), `fault's tools are not back: ${tools.map((x) => x.name)}`);
  assert.equal(resultText(await mcpd.callTool('ok', {}, { id: id('ok') })), 'ok');
}

/** How many list_changed notifications came: none while the fault plugin
 * kept its worker. */
function listChangedCount(mcpd) {
  return mcpd.notifications.filter((m) => m.method === LIST_CHANGED).length;
}

describe('faults over stdio, default options: each plugin in a worker', { skip: DEFAULT_OVERRIDDEN }, () => {
  for (const fault of Object.keys(CRASHES)) {
    for (const mode of MODES) {
      const tool = `${fault}_${mode}`;
      test(`${tool}: one error naming fault and how its worker ended; echo, ping, and ok once the worker is back; clean stdout, exit 0 on EOF`, { timeout: 20000 }, async (t) => {
        const mcpd = await stdio(t);
        const callId = id(tool);
        assertCrashError(await mcpd.request('tools/call', { name: tool }, { id: callId, timeout: 5000 }), crashOf(tool, fault));
        await stdioStillServes(mcpd);
        await stdioWorkerBack(mcpd);
        await stdioStillServes(mcpd);
        assertCleanStdoutUnforged(mcpd);
        assert.equal(responses(mcpd).filter((m) => m.id === callId).length, 1);
        await assertExitsOnEof(mcpd);
        assertCleanStdoutUnforged(mcpd);
      });
    }
  }

  for (const [fault, expect] of Object.entries(CONTAINED)) {
    for (const mode of MODES) {
      const tool = `${fault}_${mode}`;
      test(`${tool}: one response, echo, ping and ok answered by the same worker, clean stdout, exit 0 on EOF`, async (t) => {
        const mcpd = await stdio(t);
        const callId = id(tool);
        const msg = await mcpd.request('tools/call', { name: tool }, { id: callId });
        expect.check(msg, tool);
        await stdioStillServes(mcpd);
        assert.equal(resultText(await mcpd.callTool('ok', {}, { id: id('ok') })), 'ok');
        await waitText(mcpd.child.stderr, () => mcpd.stderr, expect.stderr(tool));
        assert.equal(listChangedCount(mcpd), 0, 'the fault plugin’s tools left: its worker was lost');
        assertCleanStdoutUnforged(mcpd);
        assert.equal(responses(mcpd).filter((m) => m.id === callId).length, 1);
        await assertExitsOnEof(mcpd);
        assertCleanStdoutUnforged(mcpd);
      });
    }
  }

  for (const mode of MODES) {
    const tool = `hang_${mode}`;
    test(`${tool} past its deadline: -32001 at once, the rest keeps working, the worker is killed and back, exit 0 on EOF`, { timeout: 20000 }, async (t) => {
      const mcpd = await stdio(t, { config: WORKER_DEADLINES });
      const callId = id(tool);
      const t0 = Date.now();
      const msg = await mcpd.request('tools/call', { name: tool }, { id: callId, timeout: 3000 });
      const took = Date.now() - t0;
      assertDeadlineError(msg, tool);
      assert.ok(took >= DEADLINE_MS - 50 && took < 3000, `answered after ${took} ms`);
      await stdioStillServes(mcpd);
      // Only an INLINE hang holds the worker's loop: the others leave the
      // rest of the plugin working until the worker is killed.
      if (mode !== 'inline') assert.equal(resultText(await mcpd.callTool('ok', {}, { id: id('ok') })), 'ok');
      await waitText(mcpd.child.stderr, () => mcpd.stderr, [KILLED_FOR_HANG], 10000);
      await stdioWorkerBack(mcpd);
      await stdioStillServes(mcpd);
      assertCleanStdoutUnforged(mcpd);
      assert.equal(responses(mcpd).filter((m) => m.id === callId).length, 1);
      await assertExitsOnEof(mcpd);
      assertCleanStdoutUnforged(mcpd);
    });
  }

  // Without a deadline of its own, a hung call is still running when the
  // client hangs up: mcpd answers it, ends its worker and leaves.
  for (const mode of MODES) {
    const tool = `hang_${mode}`;
    test(`${tool} still running at EOF: answered once, the log names it, exit 0 within 3 s`, { timeout: 15000 }, async (t) => {
      const mcpd = await stdio(t);
      const callId = id(tool);
      await mcpd.write({ jsonrpc: '2.0', id: callId, method: 'tools/call', params: { name: tool } });
      await stdioStillServes(mcpd);
      await assertExitsOnEof(mcpd);
      assertCleanStdoutUnforged(mcpd);
      assert.equal(responses(mcpd).filter((m) => m.id === callId).length, 1, 'the hung call was never answered');
      assert.ok(namesPluginAndTool(mcpd.stderr, tool), `no stderr line names fault and ${tool}:\n${mcpd.stderr}`);
    });
  }

  test('eight hung POOL calls with --threads 8 starve neither another plugin’s POOL call nor echo', { timeout: 15000 }, eightHungPoolCalls([]));

  test('hang_inline: SIGTERM still ends mcpd, with status 0 and a line naming the tool', { timeout: 15000 }, hangInlineSigterm([]));
});

/** Eight hung POOL calls of the fault plugin with --threads 8, besides
 * `args`: another plugin's POOL call and echo are still served, and the
 * fault plugin's own POOL call is answered once. */
function eightHungPoolCalls(args) {
  return async (t) => {
    const mcpd = await stdio(t, { config: DEADLINES, args: [...args, '--threads', '8'] });
    const hangIds = Array.from({ length: 8 }, () => id('hang_pool'));
    const hangs = hangIds.map((i) => mcpd.request('tools/call', { name: 'hang_pool' }, { id: i, timeout: 3000 }));
    // Awaited below; a failure before then must not go unhandled.
    for (const p of hangs) p.catch(() => {});
    // good's `slow` is another plugin's POOL tool: the fault plugin may
    // hold at most half of the pool, so it must get a thread.
    const slow = await mcpd.callTool('slow', { ms: 50 }, { id: id('slow'), timeout: 5000 });
    assert.equal(resultText(slow), 'slept 50');
    await stdioStillServes(mcpd);
    for (const msg of await Promise.all(hangs)) assertDeadlineError(msg, 'hang_pool');
    // The fault plugin's own slow_ok waits behind its stuck threads: it is
    // answered exactly once, by a result or by its 1 s deadline.
    const own = await mcpd.request('tools/call', { name: 'slow_ok', arguments: { ms: 10 } }, { id: id('slow_ok'), timeout: 5000 });
    if ('error' in own) assert.equal(own.error.code, -32001);
    else assert.equal(resultText(own.result), 'slept after 10 ms');
    assertCleanStdoutUnforged(mcpd);
    await assertExitsOnEof(mcpd);
  };
}

/** SIGTERM while hang_inline runs, besides `args`: exit 0 within EXIT_MS,
 * and a stderr line names the tool. */
function hangInlineSigterm(args) {
  return async (t) => {
    const mcpd = await stdio(t, { args });
    await mcpd.write({ jsonrpc: '2.0', id: id('hang_inline'), method: 'tools/call', params: { name: 'hang_inline' } });
    await withTimeout(new Promise((r) => setTimeout(r, 200)), 1000, 'a pause');
    const t0 = Date.now();
    mcpd.child.kill('SIGTERM');
    const { code, signal } = await mcpd.waitExit(EXIT_MS);
    assert.equal(signal, null, mcpd.stderr);
    assert.equal(code, 0, mcpd.stderr);
    assert.ok(Date.now() - t0 <= EXIT_MS);
    assert.ok(namesPluginAndTool(mcpd.stderr, 'hang_inline'), `no stderr line names fault and hang_inline:\n${mcpd.stderr}`);
    assertCleanStdoutUnforged(mcpd);
  };
}

describe('faults over stdio, in-process', () => {
  for (const [fault, expect] of Object.entries(CONTAINED)) {
    for (const mode of MODES) {
      const tool = `${fault}_${mode}`;
      test(`${tool}: one response, echo and ping answered, clean stdout, exit 0 on EOF`, async (t) => {
        const mcpd = await stdio(t, { args: IN_PROCESS });
        const callId = id(tool);
        const msg = await mcpd.request('tools/call', { name: tool }, { id: callId });
        expect.check(msg, tool);
        await stdioStillServes(mcpd);
        await waitText(mcpd.child.stderr, () => mcpd.stderr, expect.stderr(tool));
        assertCleanStdoutUnforged(mcpd);
        assert.equal(responses(mcpd).filter((m) => m.id === callId).length, 1);
        await assertExitsOnEof(mcpd);
        assertCleanStdoutUnforged(mcpd);
      });
    }
  }

  for (const mode of ['pool', 'async']) {
    const tool = `hang_${mode}`;
    test(`${tool} past its deadline: -32001 at once, the rest keeps working, exit 0 on EOF`, { timeout: 15000 }, async (t) => {
      const mcpd = await stdio(t, { config: DEADLINES, args: IN_PROCESS });
      const callId = id(tool);
      const t0 = Date.now();
      const msg = await mcpd.request('tools/call', { name: tool }, { id: callId, timeout: 3000 });
      const took = Date.now() - t0;
      assertDeadlineError(msg, tool);
      assert.ok(took >= DEADLINE_MS - 50 && took < 3000, `answered after ${took} ms`);
      assert.equal(resultText(await mcpd.callTool('ok', {}, { id: id('ok') })), 'ok');
      await stdioStillServes(mcpd);
      assertCleanStdoutUnforged(mcpd);
      await assertExitsOnEof(mcpd);
      assertCleanStdoutUnforged(mcpd);
    });
  }

  // Without a deadline of its own, a hung call is still running when the
  // client hangs up: mcpd gives it up and leaves anyway.
  for (const mode of ['pool', 'async']) {
    const tool = `hang_${mode}`;
    test(`${tool} still running at EOF: exit 0 within 3 s`, async (t) => {
      const mcpd = await stdio(t, { args: IN_PROCESS });
      await mcpd.write({ jsonrpc: '2.0', id: id(tool), method: 'tools/call', params: { name: tool } });
      await stdioStillServes(mcpd);
      await assertExitsOnEof(mcpd);
      assertCleanStdoutUnforged(mcpd);
    });

    test(`${tool} still running at EOF: answered once before exit, and the log names it`, async (t) => {
      const mcpd = await stdio(t, { args: IN_PROCESS });
      const callId = id(tool);
      await mcpd.write({ jsonrpc: '2.0', id: callId, method: 'tools/call', params: { name: tool } });
      await stdioStillServes(mcpd);
      await assertExitsOnEof(mcpd);
      assertCleanStdoutUnforged(mcpd);
      assert.equal(responses(mcpd).filter((m) => m.id === callId).length, 1, 'the hung call was never answered');
      assert.ok(namesPluginAndTool(mcpd.stderr, tool), `no stderr line names fault and ${tool}:\n${mcpd.stderr}`);
    });
  }

  test('eight hung POOL calls with --threads 8 starve neither another plugin’s POOL call nor echo', { timeout: 15000 }, eightHungPoolCalls(IN_PROCESS));

  test('hang_inline: EOF still ends mcpd, with status 0 and a line naming the tool', { timeout: 15000 }, async (t) => {
    const mcpd = await stdio(t, { args: IN_PROCESS });
    await mcpd.write({ jsonrpc: '2.0', id: id('hang_inline'), method: 'tools/call', params: { name: 'hang_inline' } });
    // The loop is blocked from here on: nothing can answer this ping.
    await mcpd.write({ jsonrpc: '2.0', id: id('ping'), method: 'ping' });
    await withTimeout(new Promise((r) => setTimeout(r, 200)), 1000, 'a pause');
    await assertExitsOnEof(mcpd);
    assert.ok(namesPluginAndTool(mcpd.stderr, 'hang_inline'), `no stderr line names fault and hang_inline:\n${mcpd.stderr}`);
    assertCleanStdoutUnforged(mcpd);
  });

  test('hang_inline: SIGTERM still ends mcpd, with status 0 and a line naming the tool', { timeout: 15000 }, hangInlineSigterm(IN_PROCESS));
});

/* ------------------------------------------------------------------------ */
/* HTTP, two sessions.                                                       */

/** The JSON-RPC messages of a POST's answer, a JSON body or an SSE
 * stream (read to its end). */
async function messagesOf(res) {
  const type = res.headers.get('content-type') ?? '';
  const body = await res.text();
  if (type.includes('application/json')) return [].concat(JSON.parse(body));
  if (!type.includes('text/event-stream')) return [];
  const out = [];
  for (const event of body.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data !== '') out.push(JSON.parse(data));
  }
  return out;
}

/** An mcpd --transport http with the fault, echo and good plugins and two
 * sessions.  rpc(sid, method, params) POSTs a request and resolves the one
 * response to it, asserting that the answer holds exactly one. */
async function http(t, { config, args = [] } = {}) {
  const extra = [...args];
  if (config) extra.push('--config', await configFile(config));
  const server = await startHttp(PLUGINS, extra);
  t.after(() => {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  });
  const sessions = [await rawSession(server.url), await rawSession(server.url)];
  let n = 1;
  const rpc = async (sid, method, params, { timeout = 10000 } = {}) => {
    const rid = n++;
    const res = await post(
      server.url,
      { jsonrpc: '2.0', id: rid, method, ...(params ? { params } : {}) },
      { 'mcp-session-id': sid },
      { signal: AbortSignal.timeout(timeout) },
    );
    assert.equal(res.status, 200, `${method}: HTTP ${res.status}`);
    const answers = (await messagesOf(res)).filter((m) => 'id' in m && !('method' in m));
    assert.equal(answers.length, 1, `${method}: ${answers.length} responses: ${JSON.stringify(answers)}`);
    assert.equal(answers[0].id, rid);
    return answers[0];
  };
  return { server, sessions, rpc };
}

/** Echo and ping answered in both sessions. */
async function httpStillServes({ sessions, rpc }) {
  for (const sid of sessions) {
    const echo = await rpc(sid, 'tools/call', { name: 'echo', arguments: { text: 'still here' } });
    assert.equal(resultText(echo.result), 'still here');
    assert.deepEqual((await rpc(sid, 'ping')).result, {});
  }
}

/** SIGTERM, then status 0 within EXIT_MS, and not one byte on stdout. */
async function assertHttpStops({ server }) {
  const t0 = Date.now();
  const exited = new Promise((resolve) => server.child.once('exit', (code, signal) => resolve({ code, signal })));
  server.child.kill('SIGTERM');
  const { code, signal } = await withTimeout(exited, EXIT_MS, 'mcpd to exit after SIGTERM');
  assert.equal(signal, null, server.stderr());
  assert.equal(code, 0, server.stderr());
  assert.ok(Date.now() - t0 <= EXIT_MS);
  assert.equal(server.stdout(), '');
}

/** A session's GET stream, counting the list_changed notifications it
 * carries; waitCount(n) resolves once n came. */
class ListChangedStream {
  constructor(url, sid) {
    this.count = 0;
    this.waiters = [];
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
        if (data !== '' && JSON.parse(data).method === LIST_CHANGED) {
          this.count++;
          for (const w of this.waiters.filter((x) => this.count >= x.n)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve();
          }
        }
      }
    }
  }

  waitCount(n, ms = 10000) {
    if (this.count >= n) return Promise.resolve();
    return withTimeout(new Promise((resolve) => this.waiters.push({ n, resolve })), ms, `list_changed number ${n} on a GET stream`);
  }

  close() {
    this.controller.abort();
  }
}

/** An http() whose two sessions each have a GET stream open. */
async function httpWithStreams(t, opts) {
  const h = await http(t, opts);
  h.streams = h.sessions.map((sid) => new ListChangedStream(h.server.url, sid));
  t.after(() => h.streams.forEach((s) => s.close()));
  await Promise.all(h.streams.map((s) => s.opened));
  return h;
}

/** `ok` answered in both sessions. */
async function httpOkAnswers({ sessions, rpc }) {
  for (const sid of sessions) assert.equal(resultText((await rpc(sid, 'tools/call', { name: 'ok' })).result), 'ok');
}

/** After the fault plugin's worker was lost: both sessions heard its tools
 * leave and come back, and `ok` answers in both. */
async function httpWorkerBack(h) {
  await Promise.all(h.streams.map((s) => s.waitCount(2)));
  await httpOkAnswers(h);
}

describe('faults over HTTP, two sessions, default options: each plugin in a worker', { skip: DEFAULT_OVERRIDDEN }, () => {
  for (const fault of Object.keys(CRASHES)) {
    for (const mode of MODES) {
      const tool = `${fault}_${mode}`;
      test(`${tool}: one error naming fault and how its worker ended; both sessions served, and ok once the worker is back; stdout empty, exit 0 on SIGTERM`, { timeout: 20000 }, async (t) => {
        const h = await httpWithStreams(t);
        assertCrashError(await h.rpc(h.sessions[0], 'tools/call', { name: tool }, { timeout: 5000 }), crashOf(tool, fault));
        await httpStillServes(h);
        await httpWorkerBack(h);
        await httpStillServes(h);
        assert.equal(h.server.stdout(), '');
        await assertHttpStops(h);
      });
    }
  }

  for (const [fault, expect] of Object.entries(CONTAINED)) {
    for (const mode of MODES) {
      const tool = `${fault}_${mode}`;
      test(`${tool}: one response, both sessions still served, ok answered by the same worker, stdout empty, exit 0 on SIGTERM`, async (t) => {
        const h = await httpWithStreams(t);
        expect.check(await h.rpc(h.sessions[0], 'tools/call', { name: tool }), tool);
        await httpStillServes(h);
        await httpOkAnswers(h);
        await waitText(h.server.child.stderr, h.server.stderr, expect.stderr(tool));
        assert.deepEqual(h.streams.map((s) => s.count), [0, 0], 'the fault plugin’s tools left: its worker was lost');
        assert.equal(h.server.stdout(), '');
        await assertHttpStops(h);
      });
    }
  }

  for (const mode of MODES) {
    const tool = `hang_${mode}`;
    test(`${tool} past its deadline: -32001 at once, both sessions still served, the worker is killed and back, exit 0 on SIGTERM`, { timeout: 20000 }, async (t) => {
      const h = await httpWithStreams(t, { config: WORKER_DEADLINES });
      const t0 = Date.now();
      const msg = await h.rpc(h.sessions[0], 'tools/call', { name: tool }, { timeout: 3000 });
      const took = Date.now() - t0;
      assertDeadlineError(msg, tool);
      assert.ok(took >= DEADLINE_MS - 50 && took < 3000, `answered after ${took} ms`);
      await httpStillServes(h);
      if (mode !== 'inline') await httpOkAnswers(h);
      await waitText(h.server.child.stderr, h.server.stderr, [KILLED_FOR_HANG], 10000);
      await httpWorkerBack(h);
      await httpStillServes(h);
      assert.equal(h.server.stdout(), '');
      await assertHttpStops(h);
    });
  }
});

describe('faults over HTTP, two sessions, in-process', () => {
  for (const [fault, expect] of Object.entries(CONTAINED)) {
    for (const mode of MODES) {
      const tool = `${fault}_${mode}`;
      test(`${tool}: one response, both sessions still served, stdout empty, exit 0 on SIGTERM`, async (t) => {
        const h = await http(t, { args: IN_PROCESS });
        expect.check(await h.rpc(h.sessions[0], 'tools/call', { name: tool }), tool);
        await httpStillServes(h);
        await waitText(h.server.child.stderr, h.server.stderr, expect.stderr(tool));
        assert.equal(h.server.stdout(), '');
        await assertHttpStops(h);
      });
    }
  }

  for (const mode of ['pool', 'async']) {
    const tool = `hang_${mode}`;
    test(`${tool} past its deadline: -32001 at once, both sessions still served, exit 0 on SIGTERM`, { timeout: 15000 }, async (t) => {
      const h = await http(t, { config: DEADLINES, args: IN_PROCESS });
      const t0 = Date.now();
      const msg = await h.rpc(h.sessions[0], 'tools/call', { name: tool }, { timeout: 3000 });
      const took = Date.now() - t0;
      assertDeadlineError(msg, tool);
      assert.ok(took >= DEADLINE_MS - 50 && took < 3000, `answered after ${took} ms`);
      await httpStillServes(h);
      await assertHttpStops(h);
    });
  }

  test('eight hung POOL calls with --threads 8 starve neither another plugin’s POOL call nor echo', { timeout: 15000 }, async (t) => {
    const h = await http(t, { config: DEADLINES, args: [...IN_PROCESS, '--threads', '8'] });
    const hangs = Array.from({ length: 8 }, (_, i) =>
      h.rpc(h.sessions[i % 2], 'tools/call', { name: 'hang_pool' }, { timeout: 3000 }),
    );
    for (const p of hangs) p.catch(() => {});
    const slow = await h.rpc(h.sessions[1], 'tools/call', { name: 'slow', arguments: { ms: 50 } }, { timeout: 3000 });
    assert.equal(resultText(slow.result), 'slept 50');
    await httpStillServes(h);
    for (const msg of await Promise.all(hangs)) assertDeadlineError(msg, 'hang_pool');
    await assertHttpStops(h);
  });

  test('hang_inline: SIGTERM still ends mcpd, with status 0 and a line naming the tool', { timeout: 15000 }, async (t) => {
    const h = await http(t, { args: IN_PROCESS });
    // Never answered: the loop is blocked.  The request fails when mcpd
    // goes away, or is aborted.
    const hung = h.rpc(h.sessions[0], 'tools/call', { name: 'hang_inline' }, { timeout: 8000 }).catch(() => {});
    await withTimeout(new Promise((r) => setTimeout(r, 300)), 1000, 'a pause');
    await assertHttpStops(h);
    assert.ok(namesPluginAndTool(h.server.stderr(), 'hang_inline'), `no stderr line names fault and hang_inline:\n${h.server.stderr()}`);
    await hung;
  });
});
