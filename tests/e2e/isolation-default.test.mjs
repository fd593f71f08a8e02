// SPDX-License-Identifier: MIT
// Plugins run in a worker process by default (issue 22), as a user sees it
// with real mcpd processes:
//   - with default options no plugin code runs in mcpd, not even an ELF
//     constructor: the `ctor_pid` fixture's tool answers a worker's pid,
//     and every pid its constructor recorded is another process's;
//     `--in-process` (all or NAME), `plugins.NAME.mcpd.isolate: false`
//     and `--isolate [NAME]` move it, the later of --in-process/--isolate
//     winning;
//   - a plugin whose constructor crashes (`ctor_crash`) costs its worker,
//     not mcpd: the rest is served, `mcpd --list` says NOT LOADED with the
//     signal and exits 1, the log says it once, and a new file in its
//     place is loaded;
//   - no process outlives mcpd: at EOF it exits 0 only once its workers,
//     even one stuck in a call, are gone; killed with SIGKILL, its workers
//     follow within a second;
//   - lists come in file order, whichever worker is ready first.
//
// Waits are for events (a message, a stderr line, a pid going away) with
// generous limits: the machine may be slow and shared.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { assertCleanStdout, configFile, makePluginDir, makeTempDir, McpdProcess, pidAlive, PLUGIN_MODE, pluginPath, resultText, runMcpd, sleep, until, waitPidGone, withTimeout, workerProcesses } from './lib.mjs';

/** Tests of mcpd's default placement skip when the suite runs with
 * MCPD_TEST_PLUGIN_MODE=in-process, which overrides it. */
const DEFAULT_OVERRIDDEN = PLUGIN_MODE === 'in-process' && 'this run puts plugins in-process by default';

const EXIT_MS = 3000;
const LIST_CHANGED = 'notifications/tools/list_changed';

let nextId = 1;
const id = (what) => `${what}-${nextId++}`;

/* ------------------------------------------------------------------------ */
/* Processes, through /proc.                                                 */

/** The worker processes of mcpd `pid`: {pid -> base name of the plugin
 * file it serves}. */
function workers(pid) {
  return new Map([...workerProcesses(pid)].map(([kid, file]) => [kid, path.basename(file)]));
}

/** The base names of the files mcpd `pid` has workers for, sorted. */
function workerFiles(pid) {
  return [...workers(pid).values()].sort();
}

/** Every process in process group `pgid`, zombies too unless told:
 * ["PID STATE COMMAND", ...]. */
function processGroup(pgid, { zombies = true } = {}) {
  const found = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After the parenthesised command: state, ppid, pgrp, ...
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      if (!zombies && (fields[0] === 'Z' || fields[0] === 'X')) continue;
      found.push(`${entry} ${fields[0]} ${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}`);
    } catch {
      /* gone while we looked */
    }
  }
  return found;
}

/** Whether a thread of `pid` sleeps in nanosleep(): the `fault` fixture's
 * hang.  null when the kernel does not say (wchan hidden). */
function sleepsInNanosleep(pid) {
  let told = false;
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      const wchan = fs.readFileSync(`/proc/${pid}/task/${tid}/wchan`, 'utf8').trim();
      if (/nanosleep/.test(wchan)) return true;
      if (wchan !== '' && wchan !== '0') told = true;
    }
  } catch {
    /* gone, or not ours to read */
  }
  return told ? false : null;
}

/** Resolves once `mcpd.stderr` matches `re`; rejects after `ms`. */
function waitStderr(mcpd, re, ms = 10000) {
  if (re.test(mcpd.stderr)) return Promise.resolve();
  let onData;
  return withTimeout(
    new Promise((resolve) => {
      onData = () => {
        if (re.test(mcpd.stderr)) resolve();
      };
      mcpd.child.stderr.on('data', onData);
    }),
    ms,
    `stderr to match ${re}\nstderr so far:\n${mcpd.stderr.slice(-2000)}`,
  ).finally(() => mcpd.child.stderr.off('data', onData));
}

/* ------------------------------------------------------------------------ */
/* stdio.                                                                    */

/** mcpd over stdio with `plugins` in a private directory, initialized;
 * killed when the test ends. */
async function stdio(t, { plugins, args = [], config, env, watch, detached } = {}) {
  const dir = await makePluginDir(plugins);
  const extra = [...args];
  if (config) extra.push('--config', await configFile(config));
  const mcpd = new McpdProcess(extra, { plugins: dir, env, watch, detached });
  mcpd.pluginDir = dir;
  t.after(() => mcpd.close(500));
  mcpd.initResult = await mcpd.initialize(undefined, { timeout: 20000 });
  return mcpd;
}

/** Names of the tools mcpd lists now. */
async function toolNames(mcpd) {
  const { tools } = await mcpd.call('tools/list', {}, { id: id('list') });
  return tools.map((x) => x.name);
}


/** EOF: exit 0 within EXIT_MS, and the workers it had are gone. */
async function assertExitsOnEof(mcpd) {
  const pids = [...workers(mcpd.pid).keys()];
  const t0 = Date.now();
  mcpd.endInput();
  const { code, signal } = await mcpd.waitExit(EXIT_MS);
  assert.deepEqual({ code, signal }, { code: 0, signal: null }, mcpd.stderr);
  assert.ok(Date.now() - t0 <= EXIT_MS, `took ${Date.now() - t0} ms`);
  for (const pid of pids) assert.ok(!pidAlive(pid), `worker ${pid} outlived mcpd`);
  assertCleanStdout(mcpd);
}

/** The pids the ctor_pid constructor recorded in `file`, in order. */
function recordedPids(file) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map(Number);
}

/* ------------------------------------------------------------------------ */
/* 1. Where plugin code runs.                                                */

/**
 * How each choice of options places ctor_pid and echo: `isolated` says
 * where ctor_pid runs, `workers` which files get a worker, and `ctorOnlyInMcpd`
 * that no worker is started at all (every plugin in-process: nothing needs
 * a worker to say its plugin's name).
 */
const PLACEMENTS = [
  { what: 'default options', args: [], isolated: true, workers: ['ctor_pid.so', 'echo.so'] },
  { what: '--isolate, the default said aloud', args: ['--isolate'], isolated: true, workers: ['ctor_pid.so', 'echo.so'] },
  { what: '--in-process', args: ['--in-process'], isolated: false, workers: [], ctorOnlyInMcpd: true },
  { what: '--in-process ctor_pid', args: ['--in-process', 'ctor_pid'], isolated: false, workers: ['echo.so'] },
  {
    what: 'config plugins.ctor_pid.mcpd.isolate: false',
    config: { plugins: { ctor_pid: { mcpd: { isolate: false } } } },
    isolated: false,
    workers: ['echo.so'],
  },
  {
    what: '--in-process --isolate ctor_pid',
    args: ['--in-process', '--isolate', 'ctor_pid'],
    isolated: true,
    workers: ['ctor_pid.so'],
  },
  {
    what: '--in-process --isolate, the later word winning',
    args: ['--in-process', '--isolate'],
    isolated: true,
    workers: ['ctor_pid.so', 'echo.so'],
  },
  {
    what: '--isolate --in-process, the later word winning',
    args: ['--isolate', '--in-process'],
    isolated: false,
    workers: [],
    ctorOnlyInMcpd: true,
  },
];

/** Whether `args` place every plugin (--isolate or --in-process without a
 * name), so that the test means the same whatever the suite's mode. */
function saysWhereAll(args) {
  return args.some((a, i) => (a === '--isolate' || a === '--in-process') && !/^[^-]/.test(args[i + 1] ?? '-'));
}

describe('where plugin code runs', () => {
  for (const place of PLACEMENTS) {
    const where = place.isolated ? 'in a worker, never in mcpd' : 'in mcpd';
    test(`${place.what}: ctor_pid's constructor and tool run ${where}`, { timeout: 30000, skip: !saysWhereAll(place.args ?? []) && DEFAULT_OVERRIDDEN }, async (t) => {
      const ctorFile = path.join(await makeTempDir('mcpd-ctor-'), 'pids');
      const mcpd = await stdio(t, {
        plugins: ['ctor_pid', 'echo'],
        args: place.args,
        config: place.config,
        env: { ...process.env, MCPD_TEST_CTOR_FILE: ctorFile },
      });
      const toolPid = Number(resultText(await mcpd.callTool('pid', {}, { id: id('pid') })));
      assert.ok(Number.isInteger(toolPid) && toolPid > 0, `pid answered ${toolPid}`);
      assert.equal(resultText(await mcpd.callTool('echo', { text: 'x' }, { id: id('echo') })), 'x');
      // A worker that only said its plugin's name may still be leaving.
      await until(
        () => JSON.stringify(workerFiles(mcpd.pid)) === JSON.stringify(place.workers),
        10000,
        `workers for ${JSON.stringify(place.workers)} (now ${JSON.stringify(workerFiles(mcpd.pid))})`,
      );
      const recorded = recordedPids(ctorFile);
      assert.ok(recorded.length > 0, 'the constructor never ran');

      if (place.isolated) {
        assert.notEqual(toolPid, mcpd.pid, 'the tool ran in mcpd');
        assert.equal(workers(mcpd.pid).get(toolPid), 'ctor_pid.so', `pid ${toolPid} is not mcpd's worker for ctor_pid.so`);
        assert.ok(!recorded.includes(mcpd.pid), `the constructor ran in mcpd (${mcpd.pid}): ${recorded}`);
        assert.ok(recorded.includes(toolPid), `the constructor did not run in the worker ${toolPid}: ${recorded}`);
      } else {
        assert.equal(toolPid, mcpd.pid, 'the tool ran outside mcpd');
        assert.ok(recorded.includes(mcpd.pid), `the constructor did not run in mcpd (${mcpd.pid}): ${recorded}`);
        if (place.ctorOnlyInMcpd) {
          assert.deepEqual(recorded, [mcpd.pid], 'the constructor ran somewhere else too');
        } else {
          // Chosen by name: a worker opened the file to say the name, and
          // left.  No process but mcpd runs the plugin.
          for (const pid of recorded) {
            if (pid !== mcpd.pid) assert.ok(await waitPidGone(pid, 5000), `process ${pid} that ran the constructor is still there`);
          }
        }
      }
      await assertExitsOnEof(mcpd);
    });
  }
});

/* ------------------------------------------------------------------------ */
/* 2. A constructor that crashes.                                            */

const CRASH_ENV = { ...process.env, MCPD_TEST_CTOR_CRASH: '1' };

describe('a plugin whose constructor raises SIGSEGV', { skip: DEFAULT_OVERRIDDEN }, () => {
  test('mcpd keeps serving the rest; the log says so once, naming the file and the signal', { timeout: 30000 }, async (t) => {
    const mcpd = await stdio(t, { plugins: ['ctor_crash', 'echo'], env: CRASH_ENV });
    const file = path.join(mcpd.pluginDir, 'ctor_crash.so');
    assert.ok(mcpd.initResult.protocolVersion, JSON.stringify(mcpd.initResult));
    assert.deepEqual(await toolNames(mcpd), ['echo']);
    assert.equal(resultText(await mcpd.callTool('echo', { text: 'alive' }, { id: id('echo') })), 'alive');
    assert.deepEqual(await mcpd.ping({ id: id('ping') }), {});
    assert.ok(pidAlive(mcpd.pid));
    assert.deepEqual(workerFiles(mcpd.pid), ['echo.so']);
    await waitStderr(mcpd, /signal 11/);
    const lines = mcpd.stderr.split('\n').filter((l) => l.includes(file));
    assert.equal(lines.length, 1, `not one line naming ${file}:\n${mcpd.stderr}`);
    assert.match(lines[0], /signal 11/);
    await assertExitsOnEof(mcpd);
  });

  test('mcpd --list: NOT LOADED with the signal, the rest listed, exit status 1', { timeout: 30000 }, async () => {
    const dir = await makePluginDir(['ctor_crash', 'echo']);
    const file = path.join(dir, 'ctor_crash.so');
    const { code, signal, stdout, stderr, timedOut } = await runMcpd(['--plugins', dir, '--no-watch', '--list'], {
      env: CRASH_ENV,
      timeout: 20000,
    });
    assert.equal(timedOut, false, stderr);
    assert.deepEqual({ code, signal }, { code: 1, signal: null }, `${stdout}\n${stderr}`);
    const notLoaded = stdout.split('\n').filter((l) => l.startsWith('NOT LOADED '));
    assert.equal(notLoaded.length, 1, stdout);
    assert.ok(notLoaded[0].startsWith(`NOT LOADED ${file}: `), notLoaded[0]);
    assert.match(notLoaded[0], /signal 11/);
    assert.match(stdout, /^echo\s+\S+\s+\S*echo\.so$/m);
    assert.doesNotMatch(stdout, /^ctor_crash\s/m);
    assert.equal(stderr.split('\n').filter((l) => l.includes(file)).length, 1, stderr);
  });

  test('a good file put in its place is loaded: its tools come with list_changed', { timeout: 30000 }, async (t) => {
    const mcpd = await stdio(t, { plugins: ['ctor_crash', 'echo'], env: CRASH_ENV, watch: true });
    const file = path.join(mcpd.pluginDir, 'ctor_crash.so');
    await waitStderr(mcpd, /signal 11/);
    assert.deepEqual(await toolNames(mcpd), ['echo']);

    // Written under a hidden name the watcher ignores, then renamed in.
    const tmp = path.join(mcpd.pluginDir, '.ctor_crash.so.tmp');
    fs.copyFileSync(pluginPath('good'), tmp);
    fs.chmodSync(tmp, 0o644);
    fs.renameSync(tmp, file);
    await mcpd.notification(LIST_CHANGED, { timeout: 15000 });
    const names = await toolNames(mcpd);
    assert.ok(names.includes('add') && names.includes('echo'), JSON.stringify(names));
    assert.equal(resultText(await mcpd.callTool('add', { a: 1, b: 2 }, { id: id('add') })), '3');
    assert.equal(resultText(await mcpd.callTool('echo', { text: 'y' }, { id: id('echo') })), 'y');
    assert.deepEqual(workerFiles(mcpd.pid), ['ctor_crash.so', 'echo.so']);
    // The crash was reported once, not again for the new file.
    assert.equal(mcpd.stderr.split('\n').filter((l) => /signal 11/.test(l)).length, 1, mcpd.stderr);
    await assertExitsOnEof(mcpd);
  });
});

/* ------------------------------------------------------------------------ */
/* 3. No process outlives mcpd.                                              */

/**
 * mcpd (default options) leading a process group of its own, with echo
 * and fault, and fault's worker stuck in hang_inline: its loop never reads
 * again, so only a signal ends it.  Resolves {mcpd, workerPids}.
 */
async function stuckWorker(t) {
  const mcpd = await stdio(t, { plugins: ['echo', 'fault'], detached: true });
  t.after(() => {
    // Whatever is left of the group this test started.
    try {
      process.kill(-mcpd.pid, 'SIGKILL');
    } catch {
      /* none left */
    }
  });
  const found = workers(mcpd.pid);
  assert.deepEqual([...found.values()].sort(), ['echo.so', 'fault.so']);
  const faultPid = [...found].find(([, f]) => f === 'fault.so')[0];
  // ThreadSanitizer's own thread sleeps in nanosleep in every process.
  if (!process.env.TSAN_OPTIONS) assert.ok(!sleepsInNanosleep(faultPid), 'the fault worker sleeps before the call');
  await mcpd.write({ jsonrpc: '2.0', id: id('hang_inline'), method: 'tools/call', params: { name: 'hang_inline' } });
  // The worker is in the call once one of its threads sleeps in it; a
  // kernel that hides wchan leaves only echo's answer to go by.
  await until(() => sleepsInNanosleep(faultPid) !== false, 10000, `worker ${faultPid} to hang`);
  assert.equal(resultText(await mcpd.callTool('echo', { text: 'x' }, { id: id('echo') })), 'x');
  // The workers share mcpd's process group: what is left of it is theirs.
  const group = processGroup(mcpd.pid).map((l) => Number(l.split(' ')[0]));
  for (const pid of [mcpd.pid, ...found.keys()]) assert.ok(group.includes(pid), `${pid} is not in group ${mcpd.pid}: ${group}`);
  return { mcpd, workerPids: [...found.keys()] };
}

describe('no process outlives mcpd', { skip: DEFAULT_OVERRIDDEN }, () => {
  test('EOF with a worker stuck in a call: exit 0, and at that moment nothing of its process group is left', { timeout: 30000 }, async (t) => {
    const { mcpd, workerPids } = await stuckWorker(t);
    // Looked at the moment mcpd is reaped, before anything else runs.
    const atExit = new Promise((resolve) => {
      mcpd.child.once('exit', (code, signal) =>
        resolve({ code, signal, group: processGroup(mcpd.pid), alive: workerPids.filter((p) => pidAlive(p)) }),
      );
    });
    const t0 = Date.now();
    mcpd.endInput();
    const seen = await withTimeout(atExit, 10000, 'mcpd to exit on EOF');
    const took = Date.now() - t0;
    assert.deepEqual({ code: seen.code, signal: seen.signal }, { code: 0, signal: null }, mcpd.stderr);
    assert.deepEqual(seen.group, [], `left in process group ${mcpd.pid} when mcpd exited`);
    assert.deepEqual(seen.alive, [], 'workers alive when mcpd exited');
    assert.ok(took <= EXIT_MS, `exit took ${took} ms`);
    await mcpd.exited;
    assertCleanStdout(mcpd);
  });

  test('SIGKILL to mcpd: every worker, the stuck one too, is gone within 1 s', { timeout: 30000 }, async (t) => {
    const { mcpd, workerPids } = await stuckWorker(t);
    const killed = new Promise((resolve) => mcpd.child.once('exit', (code, signal) => resolve({ code, signal })));
    const t0 = Date.now();
    mcpd.child.kill('SIGKILL');
    assert.deepEqual(await withTimeout(killed, 5000, 'mcpd to die'), { code: null, signal: 'SIGKILL' });
    for (const pid of workerPids) {
      const left = Math.max(0, 1000 - (Date.now() - t0));
      assert.ok(await waitPidGone(pid, left), `worker ${pid} still runs ${Date.now() - t0} ms after SIGKILL to mcpd`);
    }
    // Their parent gone, whoever reaps them does: only zombies may linger.
    assert.deepEqual(processGroup(mcpd.pid, { zombies: false }), [], `left in process group ${mcpd.pid}`);
  });
});

/* ------------------------------------------------------------------------ */
/* 4. Lists in file order.                                                   */

// File order a_, m_, z_; ctor_pid sleeps in its constructor, so its worker
// is ready last though its file comes first.
const ORDERED = [
  { name: 'ctor_pid', as: 'a_ctor_pid.so' },
  { name: 'good', as: 'm_good.so' },
  { name: 'echo', as: 'z_echo.so' },
];
const SLOW_ENV = { ...process.env, MCPD_TEST_CTOR_DELAY_MS: '1500' };

/** Which plugin a listed tool belongs to, for ORDERED. */
const owner = (tool) => (tool === 'pid' ? 'ctor_pid' : tool === 'echo' ? 'echo' : 'good');

/** The plugins in the order their tools are listed, each once. */
function blocks(names) {
  const out = [];
  for (const n of names) if (out.at(-1) !== owner(n)) out.push(owner(n));
  return out;
}

describe('lists come in file order', { skip: DEFAULT_OVERRIDDEN }, () => {
  for (let run = 1; run <= 3; run++) {
    test(`tools/list follows the file names, not which worker is ready first (run ${run})`, { timeout: 30000 }, async (t) => {
      const mcpd = await stdio(t, { plugins: ORDERED, env: SLOW_ENV });
      // The premise: the first file's worker was ready last.
      await waitStderr(mcpd, /loaded plugin "ctor_pid"/);
      const loaded = [...mcpd.stderr.matchAll(/loaded plugin "(\w+)"/g)].map((m) => m[1]);
      assert.deepEqual(loaded.slice().sort(), ['ctor_pid', 'echo', 'good'], mcpd.stderr);
      assert.equal(loaded.at(-1), 'ctor_pid', `ctor_pid was not ready last: ${loaded}`);
      assert.deepEqual(blocks(await toolNames(mcpd)), ['ctor_pid', 'good', 'echo']);
      await assertExitsOnEof(mcpd);
    });
  }

  test('mcpd --list follows the file names too', { timeout: 30000 }, async () => {
    const dir = await makePluginDir(ORDERED);
    const { code, stdout, stderr } = await runMcpd(['--plugins', dir, '--no-watch', '--list'], {
      env: SLOW_ENV,
      timeout: 20000,
    });
    assert.equal(code, 0, stderr);
    const plugins = stdout
      .split('\n')
      .slice(1)
      .filter((l) => /^\S/.test(l))
      .map((l) => l.split(/\s+/)[0]);
    assert.deepEqual(plugins, ['ctor_pid', 'good', 'echo'], stdout);
  });
});
