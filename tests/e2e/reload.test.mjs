// SPDX-License-Identifier: MIT
// Hot reload as an MCP client sees it: plugin files dropped into, replaced in
// and removed from a watched plugin directory are loaded, reloaded and
// unloaded live, each batch announced with notifications/*/list_changed;
// calls in flight survive a reload; corrupt and duplicate files are refused
// with one stderr line while everything else keeps serving; churn leaks
// neither memory nor descriptors; and mcpd still exits 0 afterwards.
//
// Driven with the official MCP TypeScript SDK client, except where the exit
// code matters (the raw line client from lib.mjs).
//
// Every wait is bounded and generous (the machine running this is shared and
// may run mcpd under AddressSanitizer); no assertion depends on tight timing.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { makePluginDir, MCPD, McpdProcess, pidAlive, pluginPath, protocolProblems, resultText, sleep, until, withTimeout } from './lib.mjs';

/** Generous bound for anything that should take tens of milliseconds. */
const WAIT = 15000;
/** How long to watch for something that must NOT happen. */
const QUIET = 1000;
const LIST_CHANGED = 'notifications/tools/list_changed';

/* ------------------------------------------------------------------------ */
/* Local helpers.                                                            */

// SDK transports spawn their own children; make sure none outlives us.
const sdkPids = new Set();
process.on('exit', () => {
  for (const pid of sdkPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

let tmpSeq = 0;

/**
 * Puts a copy of plugin `src` (a lib.mjs plugin name, or an absolute path)
 * into `dir` as `as` atomically: written under a hidden temporary name in
 * the same directory (which the watcher ignores), chmod 0644, then renamed
 * into place -- over an existing file if there is one.
 */
function dropIn(dir, src, as) {
  const from = path.isAbsolute(src) ? src : pluginPath(src);
  const tmp = path.join(dir, `.${as}.${process.pid}.${++tmpSeq}.tmp`);
  fs.copyFileSync(from, tmp);
  fs.chmodSync(tmp, 0o644);
  fs.renameSync(tmp, path.join(dir, as));
  return path.join(dir, as);
}

/** Same as dropIn, for raw bytes. */
function dropBytes(dir, bytes, as) {
  const tmp = path.join(dir, `.${as}.${process.pid}.${++tmpSeq}.tmp`);
  fs.writeFileSync(tmp, bytes, { mode: 0o644 });
  fs.chmodSync(tmp, 0o644);
  fs.renameSync(tmp, path.join(dir, as));
  return path.join(dir, as);
}

const SANITIZER = /AddressSanitizer|LeakSanitizer|ThreadSanitizer|UndefinedBehaviorSanitizer|runtime error:/;

function assertNoSanitizerReport(stderr) {
  const bad = stderr.split('\n').filter((l) => SANITIZER.test(l));
  assert.deepEqual(bad, [], `sanitizer reports on stderr:\n${stderr.slice(-4000)}`);
}

/** mcpd's stderr lines that name `file` (an absolute path). */
function linesNaming(stderr, file) {
  return stderr.split('\n').filter((l) => l.includes(`"${file}"`) || l.includes(file));
}

/** Error-level stderr lines refusing `file`. */
function refusals(stderr, file) {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith(`mcpd: error: plugin "${file}": `) && /; (not loaded|keeping the version already loaded)$/.test(l));
}

function readVmRssKiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  assert.ok(m, `no VmRSS in /proc/${pid}/status`);
  return Number(m[1]);
}

// Descriptors other than the private memfd copies: mcpd keeps one memfd
// open per loaded plugin, so those follow the load state, not a leak.
function fdCount(pid) {
  return fdTargets(pid).filter((t) => !t.startsWith('/memfd:')).length;
}

function fdTargets(pid) {
  const dir = `/proc/${pid}/fd`;
  const out = [];
  for (const fd of fs.readdirSync(dir)) {
    try {
      out.push(fs.readlinkSync(`${dir}/${fd}`));
    } catch {
      // closed between readdir and readlink
    }
  }
  return out;
}

/**
 * Connects an SDK client to a fresh mcpd watching a private plugin dir that
 * holds copies of `plugins`.  Returns a handle:
 *   client, transport, pid, dir,
 *   stderr()            everything mcpd wrote to stderr so far,
 *   changes             list_changed notifications received so far,
 *   waitChanges(n)      resolves once at least n have arrived.
 */
async function connect(t, { plugins = [], watch = true, args = [] } = {}) {
  const dir = await makePluginDir(plugins);
  const transport = new StdioClientTransport({
    command: MCPD,
    args: ['--plugins', dir, ...(watch ? [] : ['--no-watch']), ...args],
    env: process.env,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'mcpd-e2e-reload', version: '0.0.0' });
  const h = {
    client,
    transport,
    dir,
    pid: null,
    changes: 0,
    stderrText: '',
    stderr: () => h.stderrText,
    waitChanges: (n, what = `${n} ${LIST_CHANGED} notification(s)`) =>
      until(() => h.changes >= n, WAIT, `${what} (got ${h.changes}); stderr:\n${h.stderrText.slice(-2000)}`),
  };
  transport.stderr.on('data', (d) => {
    h.stderrText += d;
  });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    h.changes++;
  });
  t.after(async () => {
    await client.close().catch(() => {});
    if (h.pid && pidAlive(h.pid)) {
      try {
        process.kill(h.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  });
  await withTimeout(client.connect(transport), WAIT, 'SDK client connect');
  h.pid = transport.pid;
  assert.ok(Number.isInteger(h.pid) && h.pid > 0, 'the transport exposes the mcpd pid');
  sdkPids.add(h.pid);
  return h;
}

/** Every tool name, following pagination. */
async function toolNames(client) {
  const names = [];
  let cursor;
  do {
    const res = await client.listTools(cursor === undefined ? {} : { cursor });
    names.push(...res.tools.map((x) => x.name));
    cursor = res.nextCursor;
  } while (cursor !== undefined);
  return names;
}

async function callText(client, name, args = {}) {
  const res = await client.callTool({ name, arguments: args });
  assert.notEqual(res.isError, true, `${name} returned isError: ${JSON.stringify(res)}`);
  return resultText(res);
}

async function assertUnknownTool(client, name) {
  await assert.rejects(
    client.callTool({ name, arguments: {} }),
    (err) => {
      assert.ok(err instanceof McpError, `not an McpError: ${err}`);
      assert.equal(err.code, -32602);
      assert.match(err.message, new RegExp(`Unknown tool: ${name}`));
      return true;
    },
    `calling ${name} should fail with -32602`,
  );
}

/**
 * Waits until mcpd is quiet: no list_changed for a while and a ping answered
 * after it, so a directory scan that was due has happened.
 */
async function settle(h, quietMs = 400) {
  const deadline = Date.now() + WAIT;
  for (;;) {
    const before = h.changes;
    await sleep(quietMs);
    await h.client.ping();
    if (h.changes === before) return;
    if (Date.now() > deadline) throw new Error('mcpd kept announcing list changes');
  }
}

/* ------------------------------------------------------------------------ */

describe('hot reload of a watched plugin directory (SDK client)', { timeout: 180000 }, () => {
  test('a plugin renamed into the directory is loaded, announced, listed and callable', async (t) => {
    const h = await connect(t, { plugins: ['calc'] });
    assert.deepEqual(await toolNames(h.client), ['calculate']);
    const seen = h.changes;

    const file = dropIn(h.dir, 'echo', 'x.so');
    await h.waitChanges(seen + 1);

    const names = await toolNames(h.client);
    assert.ok(names.includes('echo'), `echo not listed after it was dropped in: ${names}`);
    assert.ok(names.includes('calculate'), `calculate vanished: ${names}`);
    assert.equal(await callText(h.client, 'echo', { text: 'dropped in' }), 'dropped in');
    assert.equal(await callText(h.client, 'calculate', { expression: '2+3' }), '5');
    assert.ok(
      h.stderr().includes(`loaded plugin "echo" 1.0 from ${file}`),
      `no "loaded plugin" line for ${file}:\n${h.stderr()}`,
    );
    assertNoSanitizerReport(h.stderr());
  });

  test('resources, templates and prompts come and go with their plugin, each list announced', async (t) => {
    const h = await connect(t, { plugins: ['calc'] });
    const heard = { resources: 0, prompts: 0 };
    h.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => heard.resources++);
    h.client.setNotificationHandler(PromptListChangedNotificationSchema, () => heard.prompts++);
    assert.deepEqual((await h.client.listResources()).resources, []);
    assert.deepEqual((await h.client.listPrompts()).prompts, []);

    const file = dropIn(h.dir, 'everything', 'everything.so');
    await until(() => heard.resources >= 1 && heard.prompts >= 1, WAIT, 'resources and prompts list_changed on load');
    const uris = (await h.client.listResources()).resources.map((r) => r.uri);
    assert.ok(uris.includes('test://static-text'), `not listed after the load: ${uris}`);
    const templates = (await h.client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate);
    assert.deepEqual(templates, ['test://template/{id}/data']);
    assert.ok((await h.client.listPrompts()).prompts.some((p) => p.name === 'test_simple_prompt'));
    const read = await h.client.readResource({ uri: 'test://template/7/data' });
    assert.match(read.contents[0].text, /"id":"7"/);

    const seen = { ...heard };
    fs.unlinkSync(file);
    await until(
      () => heard.resources > seen.resources && heard.prompts > seen.prompts,
      WAIT,
      'resources and prompts list_changed on unload',
    );
    assert.deepEqual((await h.client.listResources()).resources, []);
    assert.deepEqual((await h.client.listResourceTemplates()).resourceTemplates, []);
    assert.deepEqual((await h.client.listPrompts()).prompts, []);
    await assert.rejects(h.client.readResource({ uri: 'test://static-text' }), (err) => err.code === -32002);
    assertNoSanitizerReport(h.stderr());
  });

  test('a removed plugin is unloaded and announced; its tools are gone, the others still work', async (t) => {
    const h = await connect(t, { plugins: ['echo', 'calc', 'good'] });
    const before = await toolNames(h.client);
    for (const n of ['echo', 'calculate', 'add']) assert.ok(before.includes(n), `${n} not listed: ${before}`);
    const seen = h.changes;

    fs.unlinkSync(path.join(h.dir, 'echo.so'));
    await h.waitChanges(seen + 1);

    const after = await toolNames(h.client);
    assert.ok(!after.includes('echo'), `echo still listed after echo.so was removed: ${after}`);
    assert.deepEqual(after.slice().sort(), before.filter((n) => n !== 'echo').sort());
    await assertUnknownTool(h.client, 'echo');
    assert.equal(await callText(h.client, 'calculate', { expression: '6*7' }), '42');
    assert.equal(await callText(h.client, 'add', { a: 2, b: 3 }), '5');
    assert.equal(await callText(h.client, 'slow', { ms: 1 }), 'slept 1');
    assert.deepEqual(await h.client.ping(), {});
    assertNoSanitizerReport(h.stderr());
  });

  describe('a replaced plugin is reloaded: reload_v1 -> reload_v2', () => {
    const replacements = {
      'renamed over the old file': (dir) => dropIn(dir, 'reload_v2', 'reload.so'),
      'copied over the old file in place (fs.copyFileSync)': (dir) => {
        const dest = path.join(dir, 'reload.so');
        const ino = fs.statSync(dest).ino;
        fs.copyFileSync(pluginPath('reload_v2'), dest);
        // An in-place copy keeps the inode; the size/mtime change is what
        // mcpd has to notice.
        assert.equal(fs.statSync(dest).ino, ino, 'copyFileSync replaced the inode');
        assert.equal(fs.statSync(dest).mode & 0o022, 0, 'the copy became group/other-writable');
        return dest;
      },
    };
    for (const [how, replace] of Object.entries(replacements)) {
      test(how, async (t) => {
        const h = await connect(t, { plugins: [{ name: 'reload_v1', as: 'reload.so' }, 'echo'] });
        assert.equal(await callText(h.client, 'version'), '1');
        assert.ok(!(await toolNames(h.client)).includes('v2_only'));
        const seen = h.changes;

        replace(h.dir);
        await h.waitChanges(seen + 1);

        // A notification is only sent once the new version is in.
        assert.equal(await callText(h.client, 'version'), '2');
        const names = await toolNames(h.client);
        assert.ok(names.includes('v2_only'), `v2_only not listed after the reload: ${names}`);
        assert.equal(names.filter((n) => n === 'version').length, 1, `version listed twice: ${names}`);
        assert.ok(names.includes('echo'), `echo vanished during the reload: ${names}`);
        assert.equal(await callText(h.client, 'v2_only'), 'v2');
        assert.equal(await callText(h.client, 'echo', { text: 'still here' }), 'still here');
        assert.match(h.stderr(), /loaded plugin "reload" 2 from /);
        assertNoSanitizerReport(h.stderr());
      });
    }
  });

  test('replaced while 50 slow calls run: every call resolves, mcpd keeps serving', async (t) => {
    const h = await connect(t, { plugins: ['echo'] });
    let seen = h.changes;
    dropIn(h.dir, 'good', 'good.so');
    await h.waitChanges(seen + 1, 'list_changed after good.so was dropped in');
    assert.ok((await toolNames(h.client)).includes('slow'));

    const N = 50;
    const calls = Array.from({ length: N }, () =>
      h.client.callTool({ name: 'slow', arguments: { ms: 300 } }, undefined, { timeout: 120000 }),
    );
    // Let mcpd read the requests and start them (8 pool threads: the batch
    // takes about 2 s), then replace the file under them.
    await sleep(150);
    seen = h.changes;
    const oldIno = fs.statSync(path.join(h.dir, 'good.so')).ino;
    dropIn(h.dir, 'good', 'good.so');
    assert.notEqual(fs.statSync(path.join(h.dir, 'good.so')).ino, oldIno);

    const settled = await withTimeout(Promise.allSettled(calls), 120000, `${N} slow calls to settle`);
    const rejected = settled.filter((s) => s.status === 'rejected').map((s) => String(s.reason));
    assert.deepEqual(rejected, [], `calls rejected across the reload:\n${rejected.join('\n')}`);
    const texts = settled.map((s) => resultText(s.value));
    assert.deepEqual(texts, Array(N).fill('slept 300'), 'every call returned its own result');
    for (const s of settled) assert.notEqual(s.value.isError, true, JSON.stringify(s.value));

    await h.waitChanges(seen + 1, 'list_changed after good.so was replaced');
    assert.match(h.stderr(), /plugin file .*good\.so changed; reloading/);
    assert.equal((h.stderr().match(/loaded plugin "good"/g) ?? []).length, 2, h.stderr());

    assert.deepEqual(await h.client.ping(), {});
    assert.ok(pidAlive(h.pid), 'mcpd died');
    // The new image serves.
    assert.equal(await callText(h.client, 'slow', { ms: 1 }), 'slept 1');
    assert.equal(await callText(h.client, 'add', { a: 40, b: 2 }), '42');
    assert.equal(await callText(h.client, 'echo', { text: 'ok' }), 'ok');
    assertNoSanitizerReport(h.stderr());
    assert.doesNotMatch(h.stderr(), /mcpd: error:/, 'no errors logged');
  });

  describe('a corrupt file is refused with one line; mcpd keeps serving; fixed, it loads', () => {
    const corruptions = {
      'random bytes': {
        bytes: () => {
          const b = Buffer.alloc(8192);
          for (let i = 0; i < b.length; i++) b[i] = Math.floor(Math.random() * 256);
          b[0] = 0x00; // never accidentally "\x7fELF"
          return b;
        },
        reason: /not an ELF file/,
        // Fixed by renaming a good copy over it.
        fix: (dir) => dropIn(dir, 'echo', 'broken.so'),
      },
      'a truncated copy of echo.so (first 4096 bytes)': {
        bytes: () => fs.readFileSync(pluginPath('echo')).subarray(0, 4096),
        reason: /truncated|ELF/,
        // Fixed by copying a good file over it in place.
        fix: (dir) => fs.copyFileSync(pluginPath('echo'), path.join(dir, 'broken.so')),
      },
    };
    for (const [what, { bytes, reason, fix }] of Object.entries(corruptions)) {
      test(what, async (t) => {
        const h = await connect(t, { plugins: ['calc'] });
        const file = path.join(h.dir, 'broken.so');
        let seen = h.changes;

        dropBytes(h.dir, bytes(), 'broken.so');
        await until(() => refusals(h.stderr(), file).length >= 1, WAIT, `the refusal of ${file}`);
        const [line] = refusals(h.stderr(), file);
        assert.match(line, reason);
        assert.match(line, /; not loaded$/);

        // Still serving.
        assert.deepEqual(await h.client.ping(), {});
        assert.equal(await callText(h.client, 'calculate', { expression: '1+1' }), '2');
        assert.deepEqual(await toolNames(h.client), ['calculate']);

        // An unrelated change rescans the directory: the unchanged corrupt
        // file is not tried (or reported) again.
        dropIn(h.dir, 'good', 'good.so');
        await h.waitChanges(seen + 1, 'list_changed after good.so was dropped in');
        await settle(h);
        assert.equal(refusals(h.stderr(), file).length, 1, `refused more than once:\n${h.stderr()}`);
        assert.equal(linesNaming(h.stderr(), file).length, 1, `more than one line names ${file}:\n${h.stderr()}`);

        // Fixed, it loads.
        seen = h.changes;
        fix(h.dir);
        await h.waitChanges(seen + 1, 'list_changed after the corrupt file was fixed');
        await until(async () => (await toolNames(h.client)).includes('echo'), WAIT, 'echo to be listed');
        assert.equal(await callText(h.client, 'echo', { text: 'fixed' }), 'fixed');
        assert.equal(await callText(h.client, 'calculate', { expression: '2^10' }), '1024');
        assert.ok(
          h.stderr().includes(`loaded plugin "echo" 1.0 from ${file}`),
          `no "loaded plugin" line for ${file}:\n${h.stderr()}`,
        );
        assertNoSanitizerReport(h.stderr());
      });
    }
  });

  test('two files declaring the same plugin name: one loads, the other is refused naming the first', async (t) => {
    const h = await connect(t, { plugins: ['echo'] });
    const a = path.join(h.dir, 'a.so');
    const b = path.join(h.dir, 'b.so');
    const seen = h.changes;

    // Dropped together: both renamed in back to back.
    const ta = path.join(h.dir, '.a.tmp');
    const tb = path.join(h.dir, '.b.tmp');
    for (const [src, tmp] of [['reload_v1', ta], ['reload_v2', tb]]) {
      fs.copyFileSync(pluginPath(src), tmp);
      fs.chmodSync(tmp, 0o644);
    }
    fs.renameSync(ta, a);
    fs.renameSync(tb, b);

    await h.waitChanges(seen + 1);
    const refusedA = () => refusals(h.stderr(), a);
    const refusedB = () => refusals(h.stderr(), b);
    await until(() => refusedA().length + refusedB().length >= 1, WAIT, 'the refusal of a.so or b.so');
    await settle(h);

    const version = await callText(h.client, 'version');
    assert.ok(version === '1' || version === '2', `version answered ${version}`);
    const [loaded, other] = version === '1' ? [a, b] : [b, a];
    const names = await toolNames(h.client);
    assert.equal(names.filter((n) => n === 'version').length, 1, `version listed twice: ${names}`);
    assert.equal(names.includes('v2_only'), version === '2', `tools do not match version ${version}: ${names}`);
    assert.ok(names.includes('echo'));

    const lines = refusals(h.stderr(), other);
    assert.equal(lines.length, 1, `expected one refusal of ${other}:\n${h.stderr()}`);
    assert.match(lines[0], /plugin name "reload" is already used by /);
    assert.ok(lines[0].includes(loaded), `the refusal does not name ${loaded}: ${lines[0]}`);
    assert.deepEqual(refusals(h.stderr(), loaded), [], `${loaded} was refused too`);
    // Sorted scan order: a.so comes first when both are seen in one scan.
    t.diagnostic(`loaded ${path.basename(loaded)}, refused ${path.basename(other)}`);
    assertNoSanitizerReport(h.stderr());
  });

  test('100 rapid add/remove cycles of calc.so, then a final add: alive, consistent, no growth', async (t) => {
    const h = await connect(t, { plugins: ['echo'] });
    const target = path.join(h.dir, 'calc.so');
    let rss10;
    let fds10;

    for (let i = 1; i <= 100; i++) {
      dropIn(h.dir, 'calc', 'calc.so');
      // Mostly 20-30 ms (about the debounce), sometimes none; every tenth
      // cycle waits long enough for a scan to see calc.so present, and
      // every tenth (offset by five) for one to see it gone, so real loads
      // and unloads happen, not only reloads.
      let pause = i % 4 === 0 ? 0 : 20 + (i % 11);
      if (i % 10 === 0) pause = 150;
      if (pause) await sleep(pause);
      fs.unlinkSync(target);
      if (i % 10 === 5) await sleep(150);
      if (i === 10) {
        await settle(h);
        rss10 = readVmRssKiB(h.pid);
        fds10 = fdCount(h.pid);
      }
    }
    await settle(h);
    assert.ok(pidAlive(h.pid), 'mcpd died during the churn');
    assert.deepEqual(await toolNames(h.client), ['echo'], 'calc.so is gone, so is calculate');
    await assertUnknownTool(h.client, 'calculate');

    const seen = h.changes;
    dropIn(h.dir, 'calc', 'calc.so');
    await h.waitChanges(seen + 1, 'list_changed after the final add');
    await settle(h);

    assert.deepEqual(await h.client.ping(), {});
    const names = await toolNames(h.client);
    assert.deepEqual(names.slice().sort(), ['calculate', 'echo'], `tools after the final add: ${names}`);
    assert.equal(await callText(h.client, 'calculate', { expression: '(1+2)*3' }), '9');
    assert.equal(await callText(h.client, 'echo', { text: 'alive' }), 'alive');

    const rss100 = readVmRssKiB(h.pid);
    // The same plugins as at cycle 10, calc gone, for a fair count: a
    // worker process holds two pipes of mcpd's while it runs.
    const seenBefore = h.changes;
    fs.unlinkSync(target);
    await h.waitChanges(seenBefore + 1, 'list_changed after the final removal');
    await settle(h);
    // The removed worker's pipes close as it exits, just after.
    for (let waited = 0; fdCount(h.pid) > fds10 && waited < 5000; waited += 50) await sleep(50);
    const fds100 = fdCount(h.pid);
    // A file replaced between two scans is reloaded (its inode changed), one
    // missing at a scan is unloaded: every load replaced an instance or was
    // unloaded.
    const count = (re) => (h.stderr().match(re) ?? []).length;
    const loads = count(/(?<!un)loaded plugin "calc"/g);
    const unloads = count(/unloaded plugin "calc"/g);
    const reloads = count(/plugin file \S*\/calc\.so changed; reloading/g);
    // A file removed between the scan that saw it change and its reload is
    // no reload at all: the next scan unloads the old instance.
    const vanished = count(/plugin file \S*\/calc\.so vanished before it could be reloaded/g);
    t.diagnostic(
      `calc loaded ${loads}x (${reloads} of them reloads), unloaded ${unloads}x; ` +
        `VmRSS ${rss10} -> ${rss100} kB; fds ${fds10} -> ${fds100}; ${h.changes} list_changed`,
    );
    assert.ok(loads >= 2 && unloads >= 2, `the churn never really loaded and unloaded calc (${loads} loads); stderr:\n${h.stderr()}`);
    // The final instance was unloaded above too.
    assert.equal(loads, unloads + reloads - vanished, `loads do not add up:\n${h.stderr()}`);
    assert.ok(rss100 - rss10 < 4096, `VmRSS grew by ${rss100 - rss10} kB (${rss10} -> ${rss100})`);
    assert.ok(fds100 <= fds10, `fd count grew: ${fds10} -> ${fds100} (${fdTargets(h.pid)})`);
    // One private copy per loaded plugin, no more.
    const memfds = fdTargets(h.pid).filter((t) => t.startsWith('/memfd:'));
    assert.ok(memfds.length <= 3, `stale private copies: ${memfds}`);
    assert.doesNotMatch(h.stderr(), /mcpd: error:/, 'no errors logged');
    assertNoSanitizerReport(h.stderr());
  });

  test('a failed reload keeps the old version serving; the next good version replaces it', async (t) => {
    const h = await connect(t, { plugins: [{ name: 'reload_v1', as: 'reload.so' }] });
    const file = path.join(h.dir, 'reload.so');
    assert.equal(await callText(h.client, 'version'), '1');
    let seen = h.changes;

    dropBytes(h.dir, fs.readFileSync(pluginPath('reload_v2')).subarray(0, 4096), 'reload.so');
    await until(() => refusals(h.stderr(), file).length >= 1, WAIT, `the refusal of ${file}`);
    assert.match(refusals(h.stderr(), file)[0], /; keeping the version already loaded$/);
    await settle(h);
    assert.equal(h.changes, seen, 'list_changed although the tools did not change');
    assert.equal(await callText(h.client, 'version'), '1');
    assert.deepEqual(await toolNames(h.client), ['version']);

    seen = h.changes;
    dropIn(h.dir, 'reload_v2', 'reload.so');
    await h.waitChanges(seen + 1);
    assert.equal(await callText(h.client, 'version'), '2');
    assert.deepEqual((await toolNames(h.client)).sort(), ['v2_only', 'version']);
    assert.equal(refusals(h.stderr(), file).length, 1);
    assertNoSanitizerReport(h.stderr());
  });

  test('no window without the tools while a plugin is reloaded over and over', async (t) => {
    const h = await connect(t, { plugins: [{ name: 'reload_v1', as: 'reload.so' }] });
    let stop = false;
    const failures = [];
    let calls = 0;
    let lists = 0;
    const callLoop = async () => {
      while (!stop) {
        try {
          const text = await callText(h.client, 'version');
          if (text !== '1' && text !== '2') failures.push(`version answered ${text}`);
          calls++;
        } catch (err) {
          failures.push(`version failed: ${err.message}`);
        }
      }
    };
    const listLoop = async () => {
      while (!stop) {
        const names = await toolNames(h.client).catch((err) => [`tools/list failed: ${err.message}`]);
        if (!names.includes('version')) failures.push(`version missing from tools/list: ${names}`);
        lists++;
      }
    };
    const loops = [callLoop(), callLoop(), callLoop(), listLoop()];
    try {
      for (let i = 0; i < 10; i++) {
        const seen = h.changes;
        const want = i % 2 === 0 ? '2' : '1';
        dropIn(h.dir, `reload_v${want}`, 'reload.so');
        await h.waitChanges(seen + 1, `list_changed after reload ${i + 1}`);
        await until(async () => (await callText(h.client, 'version')) === want, WAIT, `version ${want}`);
      }
    } finally {
      stop = true;
      await withTimeout(Promise.all(loops), WAIT, 'the call loops to stop');
    }
    t.diagnostic(`${calls} version calls and ${lists} tools/list during 10 reloads`);
    assert.deepEqual(failures.slice(0, 20), [], `${failures.length} failures during reloads`);
    assert.ok(calls > 0 && lists > 0);
    assertNoSanitizerReport(h.stderr());
  });

  test('--no-watch: dropped and removed files are noticed only on SIGHUP, in one announced batch', async (t) => {
    const h = await connect(t, { plugins: ['echo'], watch: false });
    const seen = h.changes;

    dropIn(h.dir, 'calc', 'calc.so');
    fs.unlinkSync(path.join(h.dir, 'echo.so'));
    await sleep(QUIET);
    await h.client.ping();
    assert.equal(h.changes, seen, 'list_changed without SIGHUP under --no-watch');
    assert.deepEqual(await toolNames(h.client), ['echo'], 'the directory was rescanned without SIGHUP');
    assert.equal(await callText(h.client, 'echo', { text: 'old' }), 'old');

    process.kill(h.pid, 'SIGHUP');
    await h.waitChanges(seen + 1, 'list_changed after SIGHUP');
    assert.deepEqual(await toolNames(h.client), ['calculate']);
    assert.equal(await callText(h.client, 'calculate', { expression: '7*6' }), '42');
    await assertUnknownTool(h.client, 'echo');
    await sleep(300);
    assert.equal(h.changes, seen + 1, 'one rescan is announced once');
    assert.ok(pidAlive(h.pid), 'SIGHUP killed mcpd');
    assertNoSanitizerReport(h.stderr());
  });
});

describe('after hot reloads (raw client)', { timeout: 120000 }, () => {
  test('closing stdin after loads, reloads and unloads with calls in flight: exit code 0', async (t) => {
    const dir = await makePluginDir(['good', { name: 'reload_v1', as: 'reload.so' }, 'calc']);
    const mcpd = new McpdProcess([], { plugins: dir, watch: true });
    t.after(() => mcpd.close());
    await mcpd.initialize();
    const changes = () => mcpd.notifications.filter((n) => n.method === LIST_CHANGED).length;
    const waitChanges = (n, what) =>
      until(() => changes() >= n, WAIT, `${what}; stderr:\n${mcpd.stderr.slice(-2000)}`);

    // Calls in flight across a reload of good.so and of reload.so.
    const slow = Array.from({ length: 12 }, () =>
      mcpd.request('tools/call', { name: 'slow', arguments: { ms: 200 } }, { timeout: 60000 }),
    );
    await sleep(100);
    let seen = changes();
    dropIn(dir, 'good', 'good.so');
    dropIn(dir, 'reload_v2', 'reload.so');
    dropIn(dir, 'echo', 'echo.so');
    fs.unlinkSync(path.join(dir, 'calc.so'));
    await waitChanges(seen + 1, 'list_changed after the batch');
    const responses = await Promise.all(slow);
    for (const r of responses) {
      assert.ok('result' in r, `a slow call failed: ${JSON.stringify(r)}`);
      assert.equal(resultText(r.result), 'slept 200');
    }
    await until(
      async () => resultText(await mcpd.callTool('version')) === '2',
      WAIT,
      'version to answer 2',
    );
    assert.equal(resultText(await mcpd.callTool('echo', { text: 'e' })), 'e');
    const gone = await mcpd.request('tools/call', { name: 'calculate', arguments: { expression: '1' } });
    assert.equal(gone.error?.code, -32602, JSON.stringify(gone));

    // Unload one more, then end input with nothing running: the plain EOF
    // path, after which every image must be unloaded cleanly (under ASan a
    // leak would make the exit code nonzero).
    seen = changes();
    fs.unlinkSync(path.join(dir, 'reload.so'));
    await waitChanges(seen + 1, 'list_changed after reload.so was removed');

    mcpd.endInput();
    const { code, signal } = await mcpd.waitExit(WAIT);
    assert.equal(signal, null, `mcpd was killed by ${signal}:\n${mcpd.stderr}`);
    assert.equal(code, 0, `mcpd exited ${code}:\n${mcpd.stderr}`);
    assert.deepEqual(protocolProblems(mcpd), []);
    assertNoSanitizerReport(mcpd.stderr);
    assert.doesNotMatch(mcpd.stderr, /mcpd: error:/, 'no errors logged');
  });
});

// Refused files are retried when the reason for refusing them may be gone.
describe('refused files are retried when what refused them changes', { timeout: 60000 }, () => {
  const SOON = 5000;

  test(
    'a file refused as group-writable loads once it is chmod go-w (as the refusal advises)',
    async (t) => {
      const h = await connect(t, { plugins: ['echo'] });
      const file = path.join(h.dir, 'calc.so');
      const tmp = path.join(h.dir, '.calc.tmp');
      fs.copyFileSync(pluginPath('calc'), tmp);
      fs.chmodSync(tmp, 0o664);
      fs.renameSync(tmp, file);
      await until(() => refusals(h.stderr(), file).length >= 1, WAIT, `the refusal of ${file}`);
      assert.match(refusals(h.stderr(), file)[0], /writable by other users.*chmod go-w/);

      const seen = h.changes;
      fs.chmodSync(file, 0o644);
      await until(() => h.changes > seen, SOON, 'list_changed after chmod go-w');
      assert.equal(await callText(h.client, 'calculate', { expression: '1+1' }), '2');
    },
  );

  test(
    'a file refused for a duplicate plugin name loads once the first file is removed',
    async (t) => {
      const h = await connect(t, {
        plugins: [
          { name: 'reload_v1', as: 'a.so' },
          { name: 'reload_v2', as: 'b.so' },
        ],
      });
      assert.equal(await callText(h.client, 'version'), '1');
      assert.equal(refusals(h.stderr(), path.join(h.dir, 'b.so')).length, 1);

      const seen = h.changes;
      fs.unlinkSync(path.join(h.dir, 'a.so'));
      await h.waitChanges(seen + 1, 'list_changed after a.so was removed');
      await until(
        async () => (await toolNames(h.client)).includes('version'),
        SOON,
        `b.so to load once a.so is gone; tools: ${await toolNames(h.client)}`,
      );
      assert.equal(await callText(h.client, 'version'), '2');
    },
  );
});
