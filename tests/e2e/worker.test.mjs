// mcpd's worker mode, as the host that starts a worker sees it:
// `mcpd --worker PLUGIN --worker-config-fd 3 ...` serves that one plugin over
// its stdin and stdout, takes the plugin's config from fd 3, names the plugin
// in the initialize result's _meta, tags what it sends about a request with
// params._meta["io.mcpd/related"], takes the real client's capabilities and
// roots per call from params._meta["io.mcpd/client"], applies the resource
// limits it was given, and exits 3 when the plugin cannot be loaded.
//
// These tests drive the worker directly with raw JSON-RPC lines, as the host
// does, and check that stdout carries nothing but JSON-RPC.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { spawn } from 'node:child_process';
import {
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
  SANITIZED,
} from './lib.mjs';

const RELATED = 'io.mcpd/related';
const CLIENT = 'io.mcpd/client';

/**
 * Starts a worker for `plugin` whose fd 3 is a pipe carrying `config` (JSON
 * text), unless `configFd` gives another stdio entry for fd 3.  Closed (EOF,
 * then SIGKILL) when the test ends.
 */
function startWorker(t, plugin, { config = 'null', configFd, args = [] } = {}) {
  const argv = ['--worker', pluginPath(plugin), '--worker-config-fd', '3', '--log-level', 'debug', ...args];
  const worker = new McpdProcess(argv, { extraStdio: [configFd ?? 'pipe'] });
  if (configFd === undefined) worker.child.stdio[3].end(config);
  t.after(() => worker.close());
  return worker;
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

describe('worker mode', () => {
  test('echo: initialize names the plugin, tools/list and tools/call work', async (t) => {
    const worker = startWorker(t, 'echo');
    const init = await worker.initialize();
    assert.deepEqual(init._meta['io.mcpd/plugin'], {
      name: 'echo',
      version: '1.0',
      description: 'Echoes text back; a smoke test and benchmark target.',
    });
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
    const worker = startWorker(t, 'everything');
    const init = await worker.initialize();
    assert.equal(init._meta['io.mcpd/plugin'].name, 'everything');
    // The same list the in-process server gives for the same plugin.
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
    const worker = startWorker(t, 'everything');
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
    const worker = startWorker(t, 'everything');
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
    const worker = startWorker(t, 'asker');
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
      const only = await worker.call('tools/call', { name }, { meta: facts });
      assert.deepEqual(JSON.parse(resultText(only)), {}, name);
    }
    // The session's own roots/list, sent on notifications/initialized for
    // no request, is the only request sent, and it carries no tag.
    const asked = worker.messages.filter((m) => 'method' in m && 'id' in m);
    assert.deepEqual(asked.map((m) => [m.method, m.params?._meta]), [['roots/list', undefined]]);
    assertClean(worker);
  });

  test('a log line written by a call carries the id of its request', async (t) => {
    const worker = startWorker(t, 'everything');
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

  test('the config from fd 3 reaches init(), through a pipe or a file read from its start', async (t) => {
    const config = { greeting: 'hello', n: [1, 2] };
    const piped = startWorker(t, 'good', { config: `${JSON.stringify(config)}\n` });
    await piped.initialize();
    assert.deepEqual(JSON.parse(resultText(await piped.callTool('config', {}))), config);

    // A memfd the host wrote has its offset at the end; so does this file.
    const dir = await makeTempDir();
    const fd = fs.openSync(path.join(dir, 'config.json'), 'w+');
    fs.writeSync(fd, JSON.stringify(config));
    const filed = startWorker(t, 'good', { configFd: fd });
    fs.closeSync(fd);
    await filed.initialize();
    assert.deepEqual(JSON.parse(resultText(await filed.callTool('config', {}))), config);

    const none = startWorker(t, 'good');
    await none.initialize();
    assert.equal(resultText(await none.callTool('config', {})), 'null');
  });

  test('a config that is not an object or null is refused', async (t) => {
    for (const text of ['[1]', '{"a": 1} x', '', '"s"']) {
      const worker = startWorker(t, 'good', { config: text });
      const { code } = await worker.waitExit(5000);
      assert.equal(code, 2, `${JSON.stringify(text)}: ${worker.stderr}`);
      assert.match(worker.stderr, /--worker-config-fd 3: /);
      assert.equal(worker.rawLines.length, 0);
    }
  });

  test('a plugin that cannot be loaded: one line on stderr, exit 3, nothing served', async (t) => {
    for (const plugin of ['fail_init', 'no_symbol', 'abi_major']) {
      const worker = startWorker(t, plugin);
      const { code } = await worker.waitExit(5000);
      assert.equal(code, 3, `${plugin}: ${worker.stderr}`);
      const errors = worker.stderr.split('\n').filter((l) => / error: /.test(l));
      assert.equal(errors.length, 1, worker.stderr);
      assert.ok(errors[0].includes(pluginPath(plugin)), errors[0]);
      assert.equal(worker.rawLines.length, 0);
    }
    const missing = startWorker(t, 'no-such-plugin');
    assert.equal((await missing.waitExit(5000)).code, 3, missing.stderr);
    assert.match(missing.stderr, /no-such-plugin/);
  });

  test('--rlimit-nofile, --rlimit-as and --rlimit-cpu are in effect, soft and hard', async (t) => {
    const as = SANITIZED ? [] : ['--rlimit-as', '4096'];
    const worker = startWorker(t, 'echo', {
      args: ['--rlimit-nofile', '16', ...as, '--rlimit-cpu', '600'],
    });
    await worker.initialize();
    const limits = await fsp.readFile(`/proc/${worker.pid}/limits`, 'utf8');
    const row = (name) => limits.split('\n').find((l) => l.startsWith(name)).split(/\s{2,}/);
    assert.deepEqual(row('Max open files').slice(1, 3), ['16', '16']);
    if (!SANITIZED)
      assert.deepEqual(row('Max address space').slice(1, 3), [String(4096 * 1048576), String(4096 * 1048576)]);
    assert.deepEqual(row('Max cpu time').slice(1, 3), ['600', '600']);
    assert.equal(resultText(await worker.callTool('echo', { text: 'ok' })), 'ok');
    assert.deepEqual(await worker.close(), { code: 0, signal: null });
  });

  test('--rlimit-as binds the plugin, not mcpd: pool threads still start, a plugin that does not fit is refused', { skip: SANITIZED && 'a sanitizer needs more address space than any limit' }, async (t) => {
    // libuv aborts when it cannot start its pool threads; the worker starts
    // them before the limit, so a POOL call works under a limit far below
    // what eight thread stacks would need later.
    const worker = startWorker(t, 'everything', { args: ['--rlimit-as', '160', '--threads', '8'] });
    await worker.initialize();
    const res = await worker.callTool('test_tool_with_progress', {});
    assert.equal(res.isError, undefined, JSON.stringify(res));
    assert.deepEqual(await worker.close(), { code: 0, signal: null });

    // A limit the plugin cannot even be mapped in is a load failure.
    const tight = startWorker(t, 'everything', { args: ['--rlimit-as', '16'] });
    const { code, signal } = await tight.waitExit(5000);
    assert.deepEqual({ code, signal }, { code: 3, signal: null }, tight.stderr);
    assert.match(tight.stderr, /everything\.so.*not loaded/);
    assert.equal(tight.rawLines.length, 0);
  });

  test('a limit that cannot be set: a stderr line and exit 3', async (t) => {
    // Raising a hard limit needs privilege, lowering never does; a limit
    // above the hard one fails unless we are root.
    if (process.getuid() === 0) return t.skip('root may raise any limit');
    const worker = startWorker(t, 'echo', { args: ['--rlimit-nofile', '1048576'] });
    const { code } = await worker.waitExit(5000);
    assert.equal(code, 3, worker.stderr);
    assert.match(worker.stderr, /--rlimit-nofile 1048576: setrlimit failed/);
  });

  test('EOF ends the worker with status 0, also with a call in flight', async (t) => {
    const worker = startWorker(t, 'everything');
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

  test('the worker exits when the host that started it dies, though its stdin stays open', async (t) => {
    // A stand-in host: starts a worker on the stdin it inherited from us
    // (which we keep open), prints the worker's pid, and is then killed.
    const dir = await makeTempDir();
    const script = path.join(dir, 'host.mjs');
    await fsp.writeFile(
      script,
      `import { spawn } from 'node:child_process';
       const worker = spawn(process.argv[2], process.argv.slice(3), { stdio: ['inherit', 'ignore', 'inherit'] });
       console.log(String(worker.pid));
       setInterval(() => {}, 1000);\n`,
    );
    const host = spawn(process.execPath, [script, MCPD, '--worker', pluginPath('echo')], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    t.after(() => host.kill('SIGKILL'));
    const pid = Number(await new Promise((resolve) => host.stdout.once('data', (d) => resolve(String(d).trim()))));
    assert.ok(pid > 0);
    await sleep(300);
    assert.ok(pidAlive(pid), 'the worker should run while its host does');
    host.kill('SIGKILL');
    assert.ok(await waitPidGone(pid, 3000), 'the worker outlived its host');
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
  for (const extra of [['--rlimit-nofile', '16'], ['--worker-config-fd', '2']]) {
    const r = await runMcpd(extra);
    assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stderr}`);
  }
  const help = await runMcpd(['--help']);
  assert.doesNotMatch(help.stdout, /--worker|--rlimit/);
});
