// SPDX-License-Identifier: MIT
// mcpd's worker mode, as the host that starts a worker sees it.
//
// The host runs `mcpd --worker PLUGIN --log-level L --threads N` and speaks
// to it over its stdin and stdout, one JSON-RPC message a line
// (src/isolation/worker_hello.h):
//
//   worker -> host  io.mcpd/hello {name, version, description}
//                   once the file is open and its descriptor and tables
//                   checked, before init() and before anything is read;
//   host -> worker  io.mcpd/config {config: {...} | null, limits:
//                   {addressSpaceMiB, cpuSeconds, openFiles}}
//                   one line, read up to its newline only (what follows is
//                   MCP); EOF instead: exit 0 without a word, init() never
//                   ran; a malformed line: io.mcpd/refused and exit 3;
//   worker -> host  io.mcpd/refused {reason} and exit 3 whenever the plugin
//                   cannot be served (the file, dlopen, its descriptor, its
//                   limits, init()); a plugin refused before its hello sends
//                   no hello.
//
// The worker sets the limits, soft and hard, runs init() with the config,
// and then serves MCP: it names the plugin in the initialize result's
// _meta, tags what it sends about a request with params._meta
// ["io.mcpd/related"], takes the real client's capabilities and roots per
// call from params._meta["io.mcpd/client"], and exits 0 on EOF.  It dies
// with its host (PR_SET_PDEATHSIG), and refuses the options it no longer
// has (--worker-config-fd, --rlimit-*).
//
// These tests drive the worker directly with raw JSON-RPC lines, as the host
// does, and check that stdout carries nothing but JSON-RPC.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { spawn } from 'node:child_process';
import {
  LATEST,
  MCPD,
  McpdProcess,
  makePluginDir,
  makeTempDir,
  pidAlive,
  pluginPath,
  protocolProblems,
  resultText,
  runMcpd,
  sleep,
  waitPidGone,
  withTimeout,
  SANITIZED,
} from './lib.mjs';

const HELLO = 'io.mcpd/hello';
const CONFIG = 'io.mcpd/config';
const REFUSED = 'io.mcpd/refused';
const RELATED = 'io.mcpd/related';
const CLIENT = 'io.mcpd/client';

const ECHO_INFO = {
  name: 'echo',
  version: '1.0',
  description: 'Echoes text back; a smoke test and benchmark target.',
};

/** The host's config line: `config` and `limits` as given. */
function configLine(config = null, limits = {}) {
  return `${JSON.stringify({ jsonrpc: '2.0', method: CONFIG, params: { config, limits } })}\n`;
}

/** An initialize request as one line. */
function initializeLine(id = 1) {
  return `${JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: 'mcpd-e2e', version: '0.0.0' } },
  })}\n`;
}

/**
 * Starts `mcpd --worker PLUGIN --log-level debug ARGS` and sends nothing.
 * Closed (EOF, then SIGKILL) when the test ends.
 */
function spawnWorker(t, plugin, { args = [] } = {}) {
  const worker = new McpdProcess(['--worker', pluginPath(plugin), '--log-level', 'debug', ...args]);
  t.after(() => worker.close());
  return worker;
}

/** Waits for the worker's hello; resolves its params. */
async function hello(worker) {
  return (await worker.notification(HELLO, { timeout: 5000 })).params;
}

/**
 * A worker past the handshake: its hello taken, `config` and `limits` sent.
 * It is ready for initialize.
 */
async function startWorker(t, plugin, { config = null, limits = {}, args = [] } = {}) {
  const worker = spawnWorker(t, plugin, { args });
  worker.hello = await hello(worker);
  await worker.write(configLine(config, limits));
  return worker;
}

/** Resolves the refusal a worker sent and its exit, which must be 3. */
async function refusal(worker, what) {
  const { code, signal } = await worker.waitExit(5000);
  assert.deepEqual({ code, signal }, { code: 3, signal: null }, `${what}: ${worker.stderr}`);
  const refused = worker.messages.filter((m) => m.method === REFUSED);
  assert.equal(refused.length, 1, `${what}: ${JSON.stringify(worker.messages)}`);
  assert.equal(typeof refused[0].params.reason, 'string');
  assert.ok(refused[0].params.reason.length > 0);
  // The refusal is the worker's last word, and it answers nothing.
  assert.equal(worker.messages.at(-1), refused[0]);
  assert.ok(!worker.messages.some((m) => 'id' in m), JSON.stringify(worker.messages));
  assertClean(worker);
  return refused[0].params.reason;
}

function assertClean(worker) {
  assert.deepEqual(protocolProblems(worker), [], 'stdout carried something other than JSON-RPC');
}

/** What a host writes into a call's _meta to describe its client. */
function clientMeta(capabilities, roots) {
  const client = { capabilities };
  if (roots !== undefined) client.roots = roots;
  return { [CLIENT]: client };
}

/** The soft and hard values of one row of /proc/PID/limits. */
async function limitRow(pid, name) {
  const limits = await fsp.readFile(`/proc/${pid}/limits`, 'utf8');
  return limits
    .split('\n')
    .find((l) => l.startsWith(name))
    .split(/\s{2,}/)
    .slice(1, 3);
}

describe('the handshake', () => {
  test('the hello comes first, unasked, with the plugin\'s name, version and description', async (t) => {
    const worker = spawnWorker(t, 'echo');
    assert.deepEqual(await hello(worker), ECHO_INFO);
    // It is the first line, and the worker then waits for its config.
    assert.equal(worker.rawLines.length, 1);
    assert.equal(worker.messages[0].jsonrpc, '2.0');
    assert.equal('id' in worker.messages[0], false);
    await sleep(300);
    assert.equal(worker.rawLines.length, 1, JSON.stringify(worker.messages));
    assert.ok(pidAlive(worker.pid));

    // A plugin without a description says none.
    const bare = spawnWorker(t, 'printf_init');
    assert.deepEqual(await hello(bare), { name: 'printf_init', version: '1.0' });
  });

  test('the config line, then initialize: initialize names the plugin in _meta', async (t) => {
    const worker = await startWorker(t, 'echo');
    const init = await worker.initialize();
    assert.deepEqual(init._meta['io.mcpd/plugin'], ECHO_INFO);
    assert.deepEqual(worker.hello, ECHO_INFO);
    assert.deepEqual(await worker.close(), { code: 0, signal: null });
    assertClean(worker);
  });

  test('the worker reads only up to the newline: config and initialize in one write', async (t) => {
    // After the hello...
    const worker = spawnWorker(t, 'echo');
    await hello(worker);
    await worker.write(configLine() + initializeLine(1));
    const res = await worker.response(1);
    assert.deepEqual(res.result._meta['io.mcpd/plugin'], ECHO_INFO);
    await worker.notify('notifications/initialized');
    assert.equal(resultText(await worker.callTool('echo', { text: 'same write' })), 'same write');

    // ... and before it: a host that writes at once loses nothing either.
    const eager = spawnWorker(t, 'echo');
    await eager.write(configLine() + initializeLine(2));
    assert.deepEqual(await hello(eager), ECHO_INFO);
    assert.deepEqual((await eager.response(2)).result._meta['io.mcpd/plugin'], ECHO_INFO);
    // The hello still came first.
    assert.equal(eager.messages[0].method, HELLO);
    assertClean(worker);
    assertClean(eager);
  });

  test('nothing of MCP is answered before the config: initialize in its place is refused', async (t) => {
    const worker = spawnWorker(t, 'echo');
    await hello(worker);
    await worker.write(initializeLine(1));
    assert.match(await refusal(worker, 'initialize first'), /not an io\.mcpd\/config message/);
  });

  test('init() runs after the config, not before, and its stdout stays off the protocol', async (t) => {
    const worker = spawnWorker(t, 'printf_init');
    await hello(worker);
    await sleep(300);
    assert.doesNotMatch(worker.stderr, /hello from init/);
    await worker.write(configLine());
    await worker.initialize();
    assert.equal(resultText(await worker.callTool('printf_init', {})), 'ok');
    assert.match(worker.stderr, /printf_init: hello from init/);
    assert.match(worker.stderr, /printf_init: raw write from init/);
    assert.ok(!worker.rawLines.some((l) => l.includes('from init')));
    assert.deepEqual(await worker.close(), { code: 0, signal: null });
    assertClean(worker);
  });

  test('EOF instead of the config: exit 0 without a word, init() never ran', async (t) => {
    // After the hello was read...
    const worker = spawnWorker(t, 'printf_init');
    await hello(worker);
    worker.endInput();
    assert.deepEqual(await worker.waitExit(5000), { code: 0, signal: null });
    // ... and before it was: the hello goes out, then the worker ends.
    const early = spawnWorker(t, 'printf_init');
    early.endInput();
    assert.deepEqual(await early.waitExit(5000), { code: 0, signal: null });
    // A plugin whose init() would fail is not refused: it never runs.
    const failing = spawnWorker(t, 'init_fails');
    await hello(failing);
    failing.endInput();
    assert.deepEqual(await failing.waitExit(5000), { code: 0, signal: null });

    for (const w of [worker, early, failing]) {
      assert.deepEqual(
        w.messages.map((m) => m.method),
        [HELLO],
        JSON.stringify(w.messages),
      );
      // Not a line on stderr, even at --log-level debug: init() did not
      // print, and no error was logged.
      assert.equal(w.stderr, '');
      assertClean(w);
    }
  });

  test('a malformed config line: io.mcpd/refused with the reason, exit 3, init() never ran', async (t) => {
    const config = (params) => `${JSON.stringify({ jsonrpc: '2.0', method: CONFIG, params })}\n`;
    for (const [line, reason] of [
      ['not json\n', /the host's config: /],
      ['\n', /the host's config: /],
      [`${configLine().trimEnd()} x\n`, /the host's config: /],
      ['[1]\n', /not an io\.mcpd\/config message/],
      ['"s"\n', /not an io\.mcpd\/config message/],
      [`${JSON.stringify({ jsonrpc: '2.0', method: HELLO, params: {} })}\n`, /not an io\.mcpd\/config message/],
      [`${JSON.stringify({ jsonrpc: '2.0', method: CONFIG })}\n`, /not an io\.mcpd\/config message/],
      [config([1]), /not an io\.mcpd\/config message/],
      [config({ config: [1] }), /its config is not an object/],
      [config({ config: 's' }), /its config is not an object/],
      [config({ config: 3 }), /its config is not an object/],
      // A line cut short by EOF is no config either.
      [configLine().trimEnd(), /ended without a newline/],
    ]) {
      const worker = spawnWorker(t, 'printf_init');
      await hello(worker);
      await worker.write(line);
      if (!line.endsWith('\n')) worker.endInput();
      const why = await refusal(worker, JSON.stringify(line));
      assert.match(why, reason, JSON.stringify(line));
      assert.doesNotMatch(worker.stderr, /from init/, JSON.stringify(line));
    }
  });

  test('the config reaches init(): an object, null, or none at all', async (t) => {
    const config = { greeting: 'hello', n: [1, 2] };
    const given = await startWorker(t, 'good', { config });
    await given.initialize();
    assert.deepEqual(JSON.parse(resultText(await given.callTool('config', {}))), config);

    const none = await startWorker(t, 'good');
    await none.initialize();
    assert.equal(resultText(await none.callTool('config', {})), 'null');

    // params without config or limits is a config of null, without limits.
    const bare = spawnWorker(t, 'good');
    await hello(bare);
    await bare.write(`${JSON.stringify({ jsonrpc: '2.0', method: CONFIG, params: {} })}\n`);
    await bare.initialize();
    assert.equal(resultText(await bare.callTool('config', {})), 'null');
    for (const w of [given, none, bare]) assertClean(w);
  });

  test('a plugin that cannot be loaded: io.mcpd/refused naming the reason, exit 3', async (t) => {
    // Refused before its name is known: no hello.
    for (const [plugin, reason] of [
      ['no_symbol', /does not export the symbol "mcpd_plugin"/],
      ['abi_major', /ABI 99\.0, host supports/],
      ['no-such-plugin', /cannot stat/],
    ]) {
      const worker = spawnWorker(t, plugin);
      assert.match(await refusal(worker, plugin), reason, plugin);
      assert.equal(worker.messages.length, 1, `${plugin}: ${JSON.stringify(worker.messages)}`);
    }
    // init() fails: the hello, the config, then the refusal with init()'s
    // message.
    const failing = spawnWorker(t, 'init_fails');
    assert.deepEqual(await hello(failing), { name: 'init_fails', version: '1.0' });
    await failing.write(configLine() + initializeLine(1));
    assert.match(await refusal(failing, 'init_fails'), /init failed: database unreachable at db\.example/);
    assert.deepEqual(
      failing.messages.map((m) => m.method),
      [HELLO, REFUSED],
    );
  });
});

describe('limits', () => {
  test('openFiles, addressSpaceMiB and cpuSeconds are in effect, soft and hard', async (t) => {
    const limits = { openFiles: 16, cpuSeconds: 600 };
    if (!SANITIZED) limits.addressSpaceMiB = 4096;
    const worker = await startWorker(t, 'echo', { limits });
    await worker.initialize();
    assert.deepEqual(await limitRow(worker.pid, 'Max open files'), ['16', '16']);
    if (!SANITIZED)
      assert.deepEqual(await limitRow(worker.pid, 'Max address space'), [
        String(4096 * 1048576),
        String(4096 * 1048576),
      ]);
    assert.deepEqual(await limitRow(worker.pid, 'Max cpu time'), ['600', '600']);
    assert.equal(resultText(await worker.callTool('echo', { text: 'ok' })), 'ok');
    assert.deepEqual(await worker.close(), { code: 0, signal: null });
    assertClean(worker);
  });

  test('the limits are not set before the config says them', async (t) => {
    const worker = spawnWorker(t, 'echo');
    await hello(worker);
    const before = await limitRow(worker.pid, 'Max open files');
    assert.notDeepEqual(before, ['16', '16']);
    await worker.write(configLine(null, { openFiles: 16 }));
    await worker.initialize();
    assert.deepEqual(await limitRow(worker.pid, 'Max open files'), ['16', '16']);
  });

  test('addressSpaceMiB binds the plugin, not mcpd: pool threads still start', { skip: SANITIZED && 'a sanitizer needs more address space than any limit' }, async (t) => {
    // libuv aborts when it cannot start its pool threads; the worker starts
    // them before the limit, so a POOL call works under a limit far below
    // what eight thread stacks would need later.
    const worker = await startWorker(t, 'everything', { limits: { addressSpaceMiB: 160 }, args: ['--threads', '8'] });
    await worker.initialize();
    const res = await worker.callTool('test_tool_with_progress', {});
    assert.equal(res.isError, undefined, JSON.stringify(res));
    assert.deepEqual(await worker.close(), { code: 0, signal: null });
    assertClean(worker);
  });

  test(
    'an addressSpaceMiB the worker cannot serve under is a failure, not a clean exit',
    {
      skip: SANITIZED && 'a sanitizer needs more address space than any limit',
    },
    async (t) => {
      // The plugin is mapped before its name (and so its limits) is known;
      // a limit below what is mapped already leaves nothing for mcpd to
      // read or answer with.  Status 0 would tell the host "not wanted";
      // a read that fails is status 3.
      const tight = await startWorker(t, 'everything', { limits: { addressSpaceMiB: 16 } });
      await tight.write(initializeLine(1));
      const { code, signal } = await tight.waitExit(5000);
      assert.deepEqual({ code, signal }, { code: 3, signal: null }, tight.stderr);
      assertClean(tight);
    },
  );

  test('a limit that cannot be set: io.mcpd/refused, a stderr line, exit 3', async (t) => {
    // Raising a hard limit needs privilege, lowering never does; and not
    // even root may open more files than fs.nr_open allows.
    const nrOpen = Number(await fsp.readFile('/proc/sys/fs/nr_open', 'utf8'));
    const [, hard] = await limitRow('self', 'Max open files');
    const over = process.getuid() === 0 ? nrOpen + 1 : Number(hard) + 1;
    if (!Number.isSafeInteger(over)) return t.skip('no limit to exceed');
    const worker = await startWorker(t, 'printf_init', { limits: { openFiles: over } });
    assert.match(await refusal(worker, 'openFiles'), /its limits could not be set/);
    assert.match(worker.stderr, new RegExp(`limits\\.openFiles ${over}: setrlimit failed`));
    assert.doesNotMatch(worker.stderr, /from init/);
  });
});

describe('serving', () => {
  test('echo: tools/list and tools/call work', async (t) => {
    const worker = await startWorker(t, 'echo');
    await worker.initialize();
    const { tools } = await worker.call('tools/list', {});
    assert.deepEqual(tools.map((x) => x.name), ['echo']);
    const res = await worker.callTool('echo', { text: 'hi there' });
    assert.equal(resultText(res), 'hi there');
    // A response is no related message: it stays as it was.
    assert.equal(res._meta, undefined);
    assert.deepEqual(await worker.close(), { code: 0, signal: null });
    assertClean(worker);
  });

  test('everything: the same tools as in-process, and a call', async (t) => {
    const worker = await startWorker(t, 'everything');
    const init = await worker.initialize();
    assert.equal(init._meta['io.mcpd/plugin'].name, 'everything');
    // The same list the server gives for the same plugin.
    const direct = new McpdProcess([], { plugins: await makePluginDir(['everything']) });
    t.after(() => direct.close());
    await direct.initialize();
    const expected = await direct.call('tools/list', {});
    assert.deepEqual(await worker.call('tools/list', {}), expected);
    const res = await worker.callTool('test_simple_text', {});
    assert.equal(res.isError, undefined);
    assert.ok(resultText(res).length > 0);
    assertClean(worker);
  });

  test('progress of a call carries the id of its request', async (t) => {
    const worker = await startWorker(t, 'everything');
    await worker.initialize();
    const res = await worker.request(
      'tools/call',
      { name: 'test_tool_with_progress', arguments: {} },
      { id: 'req-7', meta: { progressToken: 'tok' } },
    );
    assert.equal(resultText(res.result), 'tok');
    const progress = worker.notifications.filter((m) => m.method === 'notifications/progress');
    assert.equal(progress.length, 3, JSON.stringify(progress));
    for (const p of progress) {
      assert.equal(p.params.progressToken, 'tok');
      assert.deepEqual(p.params._meta, { [RELATED]: 'req-7' });
    }
    assertClean(worker);
  });

  test('sampling: the client facts of the call decide, and the request is tagged', async (t) => {
    const worker = await startWorker(t, 'everything');
    // The host's own initialize declares nothing; the real client's
    // capabilities arrive with each call.
    await worker.initialize(undefined, { capabilities: {} });
    await worker.write({
      jsonrpc: '2.0',
      id: 41,
      method: 'tools/call',
      params: {
        name: 'test_sampling',
        arguments: { prompt: 'Say hi' },
        _meta: clientMeta({ sampling: {} }),
      },
    });
    const ask = await worker.take((m) => m.method === 'sampling/createMessage' && 'id' in m, {
      what: 'sampling/createMessage',
    });
    assert.equal(ask.params._meta[RELATED], 41);
    assert.equal(ask.params.messages[0].content.text, 'Say hi');
    await worker.write({
      jsonrpc: '2.0',
      id: ask.id,
      result: { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm', stopReason: 'endTurn' },
    });
    const res = await worker.response(41);
    assert.equal(res.result.isError, undefined, JSON.stringify(res));
    assert.match(resultText(res.result), /hi/);

    // Without the capability in the call's facts, the call fails the way
    // mcpd fails any call that asks for what its client did not declare.
    const bare = await worker.callTool('test_sampling', { prompt: 'x' });
    assert.equal(bare.isError, true, JSON.stringify(bare));
    assert.match(resultText(bare), /did not declare the sampling capability/);
    const refused = await worker.call(
      'tools/call',
      { name: 'test_sampling', arguments: { prompt: 'x' } },
      { meta: clientMeta({}) },
    );
    assert.equal(refused.isError, true, JSON.stringify(refused));
    assert.equal(worker.messages.filter((m) => m.method === 'sampling/createMessage').length, 1);
    assertClean(worker);
  });

  test('io.mcpd/client is honoured over the session, and the plugin never sees it', async (t) => {
    const worker = await startWorker(t, 'asker');
    // The session's own initialize claims sampling and roots; each call's
    // facts are what count.
    await worker.initialize(undefined, { capabilities: { sampling: {}, roots: {} } });
    const roots = [{ uri: 'file:///tmp/a', name: 'a' }];
    const facts = clientMeta({ roots: {} }, roots);
    assert.deepEqual(JSON.parse(resultText(await worker.call('tools/call', { name: 'roots' }, { meta: facts }))), roots);
    const none = await worker.call('tools/call', { name: 'roots' }, { meta: clientMeta({}) });
    assert.equal(none.isError, true, JSON.stringify(none));
    const sampling = await worker.call(
      'tools/call',
      { name: 'ask', arguments: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } } },
      { meta: facts },
    );
    assert.equal(sampling.isError, true, JSON.stringify(sampling));
    assert.match(resultText(sampling), /did not declare the sampling capability/);

    // The host's keys are taken out of the _meta the plugin sees, on the
    // loop and on the pool alike; the rest stays.
    for (const name of ['meta', 'meta_pool']) {
      const meta = { ...facts, [RELATED]: 'x', progressToken: 3, keep: { a: 1 } };
      const seen = await worker.call('tools/call', { name }, { meta });
      assert.deepEqual(JSON.parse(resultText(seen)), { progressToken: 3, keep: { a: 1 } }, name);
      // A _meta left empty is none, as an empty one is in-process.
      const only = await worker.call('tools/call', { name }, { meta: facts });
      assert.equal(JSON.parse(resultText(only)), null, name);
    }
    // The session's own roots/list, sent on notifications/initialized for
    // no request, is the only request sent, and it carries no tag.
    const asked = worker.messages.filter((m) => 'method' in m && 'id' in m);
    assert.deepEqual(asked.map((m) => [m.method, m.params?._meta]), [['roots/list', undefined]]);
    assertClean(worker);
  });

  test('a log line written by a call carries the id of its request', async (t) => {
    const worker = await startWorker(t, 'everything');
    await worker.initialize();
    await worker.call('logging/setLevel', { level: 'debug' });
    await worker.request('tools/call', { name: 'test_tool_with_logging', arguments: {} }, { id: 'log-1' });
    const lines = worker.notifications.filter(
      (m) => m.method === 'notifications/message' && m.params.logger === 'everything',
    );
    assert.ok(lines.length >= 3, JSON.stringify(worker.notifications));
    for (const l of lines) assert.equal(l.params._meta[RELATED], 'log-1', JSON.stringify(l));
    assertClean(worker);
  });

  test('EOF ends the worker with status 0, also with a call in flight', async (t) => {
    const worker = await startWorker(t, 'everything');
    await worker.initialize();
    await worker.write({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'test_tool_with_progress', arguments: {} },
    });
    worker.endInput();
    assert.deepEqual(await worker.waitExit(5000), { code: 0, signal: null });
    assertClean(worker);
  });
});

describe('the worker dies with its host, though its stdin stays open', () => {
  // A stand-in host: starts a worker on the stdin, stdout and stderr it
  // inherited from us (we keep its stdin open, so the worker never reads
  // EOF), prints the worker's pid, and is then killed.
  async function standIn(t) {
    const dir = await makeTempDir();
    const script = path.join(dir, 'host.mjs');
    await fsp.writeFile(
      script,
      `import { spawn } from 'node:child_process';
       const worker = spawn(process.argv[2], process.argv.slice(3), { stdio: 'inherit' });
       console.log(JSON.stringify({ pid: worker.pid }));
       setInterval(() => {}, 1000);\n`,
    );
    const host = spawn(process.execPath, [script, MCPD, '--worker', pluginPath('echo'), '--log-level', 'debug'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    t.after(() => host.kill('SIGKILL'));
    const messages = [];
    let rest = '';
    let stderr = '';
    const waiters = [];
    host.stderr.on('data', (d) => {
      stderr += d;
    });
    host.stdout.on('data', (d) => {
      const lines = (rest + d).split('\n');
      rest = lines.pop();
      for (const l of lines) messages.push(JSON.parse(l));
      for (const w of waiters.splice(0)) w();
    });
    const until = (pred, what) =>
      withTimeout(
        (async () => {
          for (;;) {
            const m = messages.find(pred);
            if (m) return m;
            await new Promise((resolve) => waiters.push(resolve));
          }
        })(),
        5000,
        what,
      );
    const { pid } = await until((m) => 'pid' in m, 'the worker pid');
    await until((m) => m.method === HELLO, 'the hello');
    return { host, pid, until, stderr: () => stderr };
  }

  test('while it waits for its config', async (t) => {
    const { host, pid, stderr } = await standIn(t);
    await sleep(300);
    assert.ok(pidAlive(pid), 'the worker should wait while its host lives');
    host.kill('SIGKILL');
    assert.ok(await waitPidGone(pid, 3000), 'the worker outlived its host');
    assert.doesNotMatch(stderr(), / error: /);
  });

  test('while it serves: SIGKILL, nothing runs after its host is gone', async (t) => {
    const { host, pid, until, stderr } = await standIn(t);
    host.stdin.write(configLine() + initializeLine(1));
    await until((m) => m.id === 1, 'the initialize result');
    await sleep(300);
    assert.ok(pidAlive(pid), 'the worker should serve while its host lives');
    host.kill('SIGKILL');
    assert.ok(await waitPidGone(pid, 3000), 'the worker outlived its host');
    await sleep(100);
    // Not the shutdown of a worker that noticed its parent went: no
    // "shutting down", no unload.
    assert.doesNotMatch(stderr(), /shutting down|unloaded plugin/);
  });
});

test('--worker goes alone: refused with the options of a server of its own', async () => {
  const echo = pluginPath('echo');
  for (const extra of [
    ['--transport', 'http'],
    ['--listen', '127.0.0.1:0'],
    ['--plugins', '/tmp'],
    ['--list'],
    ['--call', 'echo'],
    ['--config', '/dev/null'],
  ]) {
    const r = await runMcpd(['--worker', echo, ...extra]);
    assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /--worker cannot go with|goes with|stdio listens/, extra.join(' '));
    assert.equal(r.stdout, '');
  }
  const help = await runMcpd(['--help']);
  assert.doesNotMatch(help.stdout, /--worker|--rlimit/);
});

test('the options of the old protocol are gone: unknown options, exit 2, no hello', async () => {
  const echo = pluginPath('echo');
  for (const extra of [
    ['--worker-config-fd', '3'],
    ['--rlimit-as', '4096'],
    ['--rlimit-cpu', '600'],
    ['--rlimit-nofile', '16'],
  ]) {
    for (const argv of [['--worker', echo, ...extra], extra]) {
      const r = await runMcpd(argv, { input: configLine() });
      assert.equal(r.code, 2, `${argv.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`unknown option "${extra[0]}"`), argv.join(' '));
      assert.equal(r.stdout, '', argv.join(' '));
    }
  }
});
