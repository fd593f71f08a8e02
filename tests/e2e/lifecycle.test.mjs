// SPDX-License-Identifier: MIT
// Process lifecycle: shutdown on EOF and signals, parent death, the command
// line, the config file, and stdout protection against chatty plugins.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  MCPD,
  McpdProcess,
  configFile,
  isResponse,
  makePluginDir,
  makeTempDir,
  pidAlive,
  protocolProblems,
  resultText,
  runMcpd,
  session,
  sleep,
  track,
  waitPidGone,
  withTimeout,
  writeFile,
} from './lib.mjs';

describe('shutdown', () => {
  test('stdin EOF -> exit 0 within 1 s', async (t) => {
    const mcpd = await session(t);
    await mcpd.ping();
    const start = Date.now();
    mcpd.endInput();
    const { code, signal } = await mcpd.waitExit(5000);
    const elapsed = Date.now() - start;
    assert.equal(signal, null);
    assert.equal(code, 0, mcpd.stderr);
    assert.ok(elapsed < 1000, `took ${elapsed} ms to exit after EOF`);
  });

  test('stdin EOF before initialize -> exit 0', async (t) => {
    const dir = await makePluginDir(['echo']);
    const res = await runMcpd(['--plugins', dir, '--no-watch']);
    assert.equal(res.timedOut, false);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, '');
  });

  for (const sig of ['SIGTERM', 'SIGINT']) {
    test(`${sig} -> exit 0`, async (t) => {
      const mcpd = await session(t);
      await mcpd.ping();
      mcpd.child.kill(sig);
      const { code, signal } = await mcpd.waitExit(5000);
      assert.equal(signal, null, `killed by ${signal} instead of exiting`);
      assert.equal(code, 0, mcpd.stderr);
      assert.deepEqual(protocolProblems(mcpd), []);
    });

    test(`${sig} with a call in flight -> exit 0 within a bound`, async (t) => {
      const mcpd = await session(t, { plugins: ['echo', 'good'] });
      await mcpd.write({ jsonrpc: '2.0', id: 'inflight', method: 'tools/call', params: { name: 'slow', arguments: { ms: 400 } } });
      await sleep(100);
      mcpd.child.kill(sig);
      const { code, signal } = await mcpd.waitExit(10000);
      assert.equal(signal, null);
      assert.equal(code, 0, mcpd.stderr);
      assert.ok(mcpd.messages.filter((m) => m.id === 'inflight').length <= 1);
      assert.deepEqual(protocolProblems(mcpd), []);
    });
  }

  test('stdin EOF with a call in flight: the call finishes, then exit 0', async (t) => {
    const mcpd = await session(t, { plugins: ['echo', 'good'] });
    await mcpd.write({ jsonrpc: '2.0', id: 'inflight', method: 'tools/call', params: { name: 'slow', arguments: { ms: 400 } } });
    await sleep(50);
    mcpd.endInput();
    const { code, signal } = await mcpd.waitExit(10000);
    assert.equal(signal, null);
    assert.equal(code, 0, mcpd.stderr);
    const answers = mcpd.messages.filter((m) => isResponse(m) && m.id === 'inflight');
    assert.equal(answers.length, 1, `in-flight call not answered before exit: ${JSON.stringify(mcpd.messages)}`);
    assert.deepEqual(protocolProblems(mcpd), []);
  });

  test('the client closes its end of stdout (EPIPE) -> mcpd exits cleanly', async (t) => {
    const mcpd = await session(t);
    mcpd.child.stdout.destroy();
    await sleep(100);
    for (let i = 0; i < 5; i++) {
      await mcpd.write({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(100000) } } });
    }
    const { code, signal } = await mcpd.waitExit(5000);
    assert.equal(signal, null, `killed by ${signal}`);
    assert.equal(code, 0, mcpd.stderr);
  });

  test('stdin and stdout may be regular files', async (t) => {
    const dir = await makePluginDir(['echo']);
    const tmp = await makeTempDir();
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'file', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'from a file' } } },
      { jsonrpc: '2.0', id: 3, method: 'ping' },
    ];
    const input = await writeFile(tmp, 'in.jsonl', `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    const output = path.join(tmp, 'out.jsonl');
    const inFd = fs.openSync(input, 'r');
    const outFd = fs.openSync(output, 'w');
    const child = track(spawn(MCPD, ['--plugins', dir, '--no-watch'], { stdio: [inFd, outFd, 'pipe'] }));
    fs.closeSync(inFd);
    fs.closeSync(outFd);
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
    t.after(() => child.kill('SIGKILL'));
    const { code, signal } = await withTimeout(exited, 10000, 'mcpd reading a file to exit');
    assert.equal(signal, null);
    assert.equal(code, 0, stderr);
    const out = fs.readFileSync(output, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    // One answer per request; the echo call's may come after the ping's,
    // since its plugin runs in a worker process.
    assert.deepEqual(out.map((m) => m.id).sort(), [1, 2, 3], JSON.stringify(out));
    assert.equal(out[0].id, 1, 'initialize is answered first');
    assert.equal(out.find((m) => m.id === 2).result.content[0].text, 'from a file');
  });

  test('parent death -> mcpd exits', { timeout: 30000 }, async (t) => {
    const dir = await makePluginDir(['echo']);
    // sh starts mcpd in the background with its stdin and stdout on fd 3
    // (a socket this test holds open, so mcpd never sees EOF), prints its
    // pid and becomes `sleep`.  Killing that intermediate leaves mcpd an
    // orphan whose stdin is still open: only parent-death detection ends it.
    const script = '"$0" --plugins "$1" --no-watch <&3 >&3 3>&- & echo $!; exec sleep 30';
    const inter = track(
      spawn('/bin/sh', ['-c', script, MCPD, dir], { stdio: ['ignore', 'pipe', 'pipe', 'pipe'] }),
    );
    let mcpdPid;
    t.after(() => {
      if (mcpdPid && pidAlive(mcpdPid)) process.kill(mcpdPid, 'SIGKILL');
      inter.kill('SIGKILL');
    });
    let stdout = '';
    inter.stdout.on('data', (d) => {
      stdout += d;
    });
    const sock = inter.stdio[3];
    let proto = '';
    sock.on('data', (d) => {
      proto += d;
    });
    sock.on('error', () => {});
    const deadline = Date.now() + 5000;
    while (!/^\d+\n/.test(stdout) && Date.now() < deadline) await sleep(20);
    mcpdPid = Number.parseInt(stdout, 10);
    assert.ok(mcpdPid > 0, `no pid from the intermediate shell: ${JSON.stringify(stdout)}`);
    // Make sure mcpd is up and serving before the parent dies.
    sock.write('{"jsonrpc":"2.0","id":"up","method":"ping"}\n');
    while (!proto.includes('"up"') && Date.now() < deadline) await sleep(20);
    assert.ok(proto.includes('"up"'), `mcpd did not answer ping: ${proto}`);

    inter.kill('SIGKILL');
    const gone = await waitPidGone(mcpdPid, 3500);
    assert.ok(gone, `mcpd (pid ${mcpdPid}) still running 3.5 s after its parent was killed`);
  });
});

describe('command line', () => {
  test('--help prints usage on stdout, exit 0', async () => {
    const res = await runMcpd(['--help']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /--plugins/);
    assert.match(res.stdout, /--config/);
  });

  test('--version prints the version on stdout, exit 0', async () => {
    const res = await runMcpd(['--version']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /mcpd/);
    assert.match(res.stdout, /\d+\.\d+\.\d+/);
  });

  const bad = [
    ['an unknown option', ['--bogus-option'], /bogus-option/],
    ['--plugins without a value', ['--plugins'], /plugins/],
    ['--max-message-size not a number', ['--max-message-size', 'lots'], /max-message-size|lots/],
    ['--page-size not a number', ['--page-size', 'many'], /page-size|many/],
    ['--log-level not a level', ['--log-level', 'loud'], /log-level|loud/],
    ['--transport unknown', ['--transport', 'carrier-pigeon'], /transport|carrier-pigeon/],
  ];
  for (const [name, args, mention] of bad) {
    test(`${name} -> message on stderr, nonzero exit, nothing on stdout`, async () => {
      const res = await runMcpd(args);
      assert.equal(res.timedOut, false, 'mcpd kept running');
      assert.notEqual(res.code, 0, `exit code ${res.code}`);
      assert.equal(res.stdout, '');
      assert.match(res.stderr, mention);
    });
  }

  test('--transport stdio is accepted', async (t) => {
    const dir = await makePluginDir(['echo']);
    const mcpd = new McpdProcess(['--transport', 'stdio'], { plugins: dir });
    t.after(() => mcpd.close());
    await mcpd.initialize();
    assert.deepEqual(await mcpd.ping(), {});
  });

  test('--log-level error keeps stderr free of debug/info lines', async (t) => {
    const quiet = await session(t, { plugins: ['echo', 'good'], args: ['--log-level', 'error'] });
    await quiet.callTool('log', {});
    await quiet.ping();
    await quiet.close();
    const lines = quiet.stderr.split('\n').filter((l) => /^mcpd: (debug|info|warn\w*):/.test(l));
    assert.deepEqual(lines, []);
    const loud = await session(t, { plugins: ['echo', 'good'], args: ['--log-level', 'debug'] });
    await loud.callTool('log', {});
    await loud.ping();
    await loud.close();
    assert.ok(loud.stderr.split('\n').some((l) => /^mcpd: debug:/.test(l)), loud.stderr);
  });
});

describe('config file', () => {
  test('invalid JSON -> stderr names the file, nonzero exit', async () => {
    const dir = await makeTempDir();
    const file = await writeFile(dir, 'broken-config.json', '{ "instructions": "x", ');
    const res = await runMcpd(['--config', file, '--no-watch']);
    assert.notEqual(res.code, 0);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /broken-config\.json/);
  });

  test('an unknown key -> stderr names the file and the key, nonzero exit', async () => {
    const file = await configFile({ instructionz: 'x' }, 'typo-config.json');
    const res = await runMcpd(['--config', file, '--no-watch']);
    assert.notEqual(res.code, 0);
    assert.equal(res.stdout, '');
    const line = res.stderr.split('\n').find((l) => l.includes('typo-config.json') && l.includes('instructionz'));
    assert.ok(line, `no line naming both the file and the key:\n${res.stderr}`);
  });

  test('requestTimeoutMs and --request-timeout: out-of-range values are refused, naming them', async () => {
    for (const [value, why] of [['x', /must be an integer/], [0, /must be an integer from 1/], [86400001, /from 1 to 86400000/]]) {
      const file = await configFile({ requestTimeoutMs: value }, 'timeout-config.json');
      const res = await runMcpd(['--config', file, '--no-watch']);
      assert.notEqual(res.code, 0);
      assert.match(res.stderr, /timeout-config\.json.*requestTimeoutMs/);
      assert.match(res.stderr, why);
    }
    const res = await runMcpd(['--request-timeout', '0', '--no-watch']);
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /--request-timeout: "0"/);
  });

  test('a missing file -> stderr names it, nonzero exit', async () => {
    const dir = await makeTempDir();
    const res = await runMcpd(['--config', path.join(dir, 'nowhere.json'), '--no-watch']);
    assert.notEqual(res.code, 0);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /nowhere\.json/);
  });

  test('instructions appear in the initialize result', async (t) => {
    const instructions = 'Use echo to repeat things.\nSecond line with "quotes" and ünïcödé.';
    const file = await configFile({ instructions });
    const mcpd = await session(t, { init: false, args: ['--config', file] });
    const init = await mcpd.initialize();
    assert.equal(init.instructions, instructions);
  });

  test('per-plugin config reaches the plugin', async (t) => {
    const pluginConfig = { greeting: 'hello', n: 3, nested: { list: [1, 2] } };
    const file = await configFile({ plugins: { good: pluginConfig } });
    const mcpd = await session(t, { plugins: ['good'], args: ['--config', file] });
    const res = await mcpd.callTool('config', {});
    assert.deepEqual(JSON.parse(resultText(res)), pluginConfig);
  });

  test('the environment reaches plugins', async (t) => {
    const mcpd = await session(t, { plugins: ['good'], env: { ...process.env, MCPD_E2E_VALUE: 'env-value-42' } });
    const res = await mcpd.callTool('env', { name: 'MCPD_E2E_VALUE' });
    assert.match(resultText(res), /env-value-42/);
  });
});

describe('stdout belongs to the protocol', () => {
  test('a tool that printf()s to fd 1 does not corrupt the stream', async (t) => {
    const mcpd = await session(t, { plugins: ['echo', 'good'] });
    for (let i = 0; i < 3; i++) {
      const res = await mcpd.request('tools/call', { name: 'stdout_writer', arguments: {} });
      assert.ok(isResponse(res));
      assert.equal(resultText((await mcpd.callTool('echo', { text: `ok ${i}` }))), `ok ${i}`);
    }
    await mcpd.close();
    assert.deepEqual(mcpd.badLines, []);
    assert.deepEqual(protocolProblems(mcpd), []);
  });

  test('a plugin that prints during init does not corrupt the stream', async (t) => {
    const mcpd = await session(t, { plugins: ['echo', 'printf_init'] });
    const list = await mcpd.call('tools/list', {});
    assert.ok(list.tools.some((x) => x.name === 'echo'));
    assert.equal(resultText(await mcpd.callTool('echo', { text: 'clean' })), 'clean');
    await mcpd.close();
    assert.deepEqual(mcpd.badLines, []);
    assert.deepEqual(protocolProblems(mcpd), []);
  });

  test('--list and --call work with a plugin that prints during init', async () => {
    const dir = await makePluginDir(['echo', 'printf_init']);
    const res = await runMcpd(['--plugins', dir, '--no-watch', '--call', 'echo', '--args', '{"text":"only-this"}']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /only-this/);
    const list = await runMcpd(['--plugins', dir, '--no-watch', '--list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /echo/);
  });

  test('stdout is only ever valid JSON-RPC lines from start to exit', async (t) => {
    const dir = await makePluginDir(['echo', 'good', 'printf_init']);
    const mcpd = new McpdProcess([], { plugins: dir });
    t.after(() => mcpd.close());
    await mcpd.initialize();
    await mcpd.request('tools/call', { name: 'stdout_writer', arguments: {} });
    await withTimeout(mcpd.close(), 5000, 'close');
    assert.equal(mcpd.rawLines.length, mcpd.messages.length);
    assert.deepEqual(protocolProblems(mcpd), []);
  });
});
