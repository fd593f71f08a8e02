// SPDX-License-Identifier: MIT
// driver.mjs -- end-to-end checks of the Windows build of mcpd, run under
// wine: the stdio transport, the bundled plugins, hot reload, crash
// isolation of a plugin's worker process and a clean shutdown.
//
//   node tests/windows/driver.mjs DIST FIXTURES
//
// DIST holds mcpd.exe, its DLLs and plugins/{echo,calc}.dll; FIXTURES holds
// the test plugins fault.dll and good.dll.  WINEPREFIX comes from the
// caller, the wine command from $WINE (default wine64).  Each check prints
// one TAP-like line, "ok - ..." or "not ok - ..." with details as "#"
// lines; the exit status is 0 only if every check passed.  Node 20 stdlib.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const CHECK_MS = 60_000; // per check: wine's first start alone can take 10+ s
const RESTART_MS = 20_000; // how long a crashed worker may take to come back
const EXIT_MS = 20_000;
const PROTOCOL = '2025-11-25';
const LIST_CHANGED = 'notifications/tools/list_changed';
const UNICODE = 'héllo wörld ✓ 日本 🚀'; // 2-, 3- and 4-byte UTF-8
/** The answers a call gets while its plugin's worker is down or starting:
 * its tools leave the list meanwhile, hence "Unknown tool" too. */
const NOT_BACK_YET = /restart|unavailable|not available|not running|starting|unknown tool/i;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** wine maps drive Z: to the Linux root, so Z: + an absolute path works. */
const winePath = (p) => 'Z:' + path.resolve(p);
const resultText = (result) => result?.content?.[0]?.text;

/**
 * A JSON-RPC 2.0 client over a child's stdin/stdout, newline-delimited.
 * It keeps the raw stdout bytes and records every protocol violation
 * (a line that is not a JSON-RPC object, a response to an id never sent or
 * answered before) instead of throwing, so that each check can report them.
 */
class RpcClient {
  constructor(child) {
    this.child = child;
    this.nextId = 1;
    this.sent = new Set();
    this.answered = new Set();
    this.pending = new Map(); // id -> settle(msg, error)
    this.notes = []; // every notification, in arrival order
    this.waiters = new Set(); // re-examined on each notification
    this.violations = [];
    this.raw = [];
    this.rest = Buffer.alloc(0);
    this.failure = null; // why no more responses can come
    child.stdout.on('data', (chunk) => this.#onData(chunk));
    this.stdoutEnded = new Promise((resolve) => child.stdout.on('end', resolve));
    this.stdoutEnded.then(() => this.#fail('mcpd closed its stdout'));
    child.stdin.on('error', () => {}); // EPIPE once mcpd is gone: its exit tells why
    child.on('error', (e) => this.#fail(`cannot run mcpd: ${e.message}`));
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        // 'close' may never come if wineserver inherited the pipes, so give
        // stdout a moment to drain instead of waiting for it.
        setTimeout(() => this.#fail(`mcpd exited (code ${code}, signal ${signal})`), 1000).unref();
        resolve({ code, signal });
      });
      child.on('error', () => resolve({ code: null, signal: null }));
    });
  }

  /** Sends a request; resolves with the whole response message. */
  request(method, params = {}, timeoutMs = CHECK_MS) {
    if (this.failure) return Promise.reject(new Error(`${method}: ${this.failure}`));
    const id = this.nextId++;
    this.sent.add(id);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method} (id ${id}): no response within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, (msg, error) => {
        clearTimeout(timer);
        this.pending.delete(id);
        if (error) reject(new Error(`${method} (id ${id}): ${error}`));
        else resolve(msg);
      });
      this.#write({ jsonrpc: '2.0', id, method, params });
    });
  }

  /** Sends a request and returns its result, throwing on an error response. */
  async call(method, params) {
    const msg = await this.request(method, params);
    if (msg.error) throw new Error(`${method}: error ${JSON.stringify(msg.error)}`);
    return msg.result;
  }

  notify(method, params = {}) {
    this.#write({ jsonrpc: '2.0', method, params });
  }

  /** Resolves with the first notification `method` at or after index
   * `since` of this.notes: taking the count before an action means a
   * notification that beats the wait is not missed. */
  notification(method, since, timeoutMs = CHECK_MS) {
    return new Promise((resolve, reject) => {
      const waiter = () => {
        const note = this.notes.slice(since).find((n) => n.method === method);
        if (note || this.failure) {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          note ? resolve(note) : reject(new Error(`waiting for ${method}: ${this.failure}`));
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`no ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(waiter);
      waiter();
    });
  }

  #write(msg) {
    if (!this.child.stdin.writable) return;
    this.child.stdin.write(JSON.stringify(msg) + '\n');
  }

  #onData(chunk) {
    this.raw.push(chunk);
    let buf = Buffer.concat([this.rest, chunk]);
    for (let nl; (nl = buf.indexOf(0x0a)) >= 0; buf = buf.subarray(nl + 1)) this.#onLine(buf.subarray(0, nl));
    this.rest = Buffer.from(buf);
  }

  #onLine(bytes) {
    const line = bytes.toString('utf8');
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return this.violations.push(`stdout line is not JSON: ${JSON.stringify(line.slice(0, 200))}`);
    }
    if (msg === null || typeof msg !== 'object' || msg.jsonrpc !== '2.0')
      return this.violations.push(`stdout line is not JSON-RPC 2.0: ${line.slice(0, 200)}`);
    if ('method' in msg && 'id' in msg) {
      // A request from mcpd; none is expected with empty capabilities, but
      // answer it so that mcpd is not left waiting.
      this.violations.push(`unexpected request from mcpd: ${line.slice(0, 200)}`);
      return this.#write({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } });
    }
    if ('method' in msg) {
      this.notes.push(msg);
      for (const waiter of [...this.waiters]) waiter();
      return;
    }
    if (!this.sent.has(msg.id)) return this.violations.push(`response to an id never sent: ${line.slice(0, 200)}`);
    if (this.answered.has(msg.id)) return this.violations.push(`second response to id ${msg.id}: ${line.slice(0, 200)}`);
    this.answered.add(msg.id);
    this.pending.get(msg.id)?.(msg);
  }

  #fail(why) {
    this.failure ??= why;
    for (const settle of [...this.pending.values()]) settle(null, why);
    for (const waiter of [...this.waiters]) waiter();
  }
}

/* ------------------------------------------------------------------------ */

const [distArg, fixturesArg] = process.argv.slice(2);
if (!distArg || !fixturesArg) {
  console.error('usage: node tests/windows/driver.mjs DIST FIXTURES');
  process.exit(2);
}
const DIST = path.resolve(distArg);
const FIXTURES = path.resolve(fixturesArg);

const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mcpd-windows-'));
// Not ASCII: the path goes through the command line, the C runtime,
// LoadLibrary, the worker's command line and the directory watch.
const pluginDir = path.join(tmp, 'plugins-ü-日本');
try {
  await fs.mkdir(pluginDir);
  await fs.mkdir(path.join(tmp, 'staging'));
  for (const file of [path.join(DIST, 'plugins', 'echo.dll'), path.join(DIST, 'plugins', 'calc.dll'), path.join(FIXTURES, 'fault.dll')])
    await fs.copyFile(file, path.join(pluginDir, path.basename(file)));
} catch (e) {
  console.log(`not ok - setup: ${e.message}`);
  await fs.rm(tmp, { recursive: true, force: true });
  process.exit(1);
}

/** The private copies of plugins mcpd makes (mcpd-PID-XXXXXX) in wine's
 * temporary folders: none may be left once mcpd and its workers ended. */
async function copyDirs() {
  const users = path.join(process.env.WINEPREFIX || path.join(os.homedir(), '.wine'), 'drive_c', 'users');
  const found = [];
  for (const user of await fs.readdir(users).catch(() => [])) {
    const temp = path.join(users, user, 'Temp');
    for (const name of await fs.readdir(temp).catch(() => []))
      if (/^mcpd-\d+-/.test(name)) found.push(path.join(temp, name));
  }
  return found;
}
const copiesBefore = new Set(await copyDirs());

const stderr = [];
/** Starts mcpd.exe on the plugin folder, with `args` besides. */
function startMcpd(args = []) {
  const child = spawn(process.env.WINE || 'wine64', [path.join(DIST, 'mcpd.exe'), '--plugins', winePath(pluginDir), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, WINEDEBUG: process.env.WINEDEBUG ?? '-all' },
  });
  child.stderr.on('data', (chunk) => stderr.push(chunk));
  const rpc = new RpcClient(child);
  rpc.stderrFrom = stderr.length; // where this run's lines start
  return rpc;
}
let client = startMcpd();

let failed = 0;
/** Runs one check under CHECK_MS; any protocol violation seen meanwhile
 * fails it too. */
async function check(name, fn) {
  const before = client.violations.length;
  let timer;
  try {
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${CHECK_MS} ms`)), CHECK_MS);
    });
    const run = fn();
    run.catch(() => {}); // if the timeout wins, its late failure is moot
    await Promise.race([run, timeout]);
    const fresh = client.violations.slice(before);
    if (fresh.length) throw new Error(`protocol violations:\n${fresh.join('\n')}`);
    console.log(`ok - ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok - ${name}`);
    for (const line of String(e.message).split('\n')) console.log(`#   ${line}`);
  } finally {
    clearTimeout(timer);
  }
}

async function listTools() {
  const tools = [];
  let cursor;
  do {
    const page = await client.call('tools/list', cursor ? { cursor } : {});
    tools.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** Calls a tool expecting success; returns the whole result. */
async function callTool(name, args = {}) {
  const result = await client.call('tools/call', { name, arguments: args });
  assert.notEqual(result.isError, true, `${name} returned isError: ${JSON.stringify(result)}`);
  return result;
}

function assertIncludes(tools, wanted) {
  for (const name of wanted) assert.ok(tools.includes(name), `tools/list lacks ${name}: ${tools.join(', ')}`);
}

async function initialize() {
  const result = await client.call('initialize', {
    protocolVersion: PROTOCOL,
    capabilities: {},
    clientInfo: { name: 'mcpd-windows-driver', version: '1.0' },
  });
  assert.equal(result.protocolVersion, PROTOCOL);
  assert.equal(result.serverInfo?.name, 'mcpd');
  assert.equal(typeof result.capabilities?.tools, 'object', `no tools capability: ${JSON.stringify(result.capabilities)}`);
  client.notify('notifications/initialized');
}

/** Waits, list after list_changed, until tools/list has `name`. */
async function untilListed(name, since) {
  for (;;) {
    if ((await listTools()).includes(name)) return;
    await client.notification(LIST_CHANGED, since);
    since = client.notes.length;
  }
}

/** Copies `fixture` over reload.dll in the plugin folder -- in place, as an
 * editor or a build would, not renamed in: the file mcpd loaded is a copy,
 * so the original is not held -- and waits until `version` says `want`. */
async function replaceReload(fixture, want) {
  const since = client.notes.length;
  await fs.copyFile(path.join(FIXTURES, fixture), path.join(pluginDir, 'reload.dll'));
  await client.notification(LIST_CHANGED, since);
  const deadline = Date.now() + RESTART_MS;
  for (;;) {
    const msg = await client.request('tools/call', { name: 'version', arguments: {} });
    if (msg.result && resultText(msg.result) === want) return;
    assert.ok(Date.now() < deadline, `version still answers ${JSON.stringify(msg)}`);
    await sleep(100);
  }
}

/** Closes mcpd's stdin and checks how it ended. */
async function shutdown() {
  client.child.stdin.end();
  const exit = await Promise.race([client.exited, sleep(EXIT_MS).then(() => null)]);
  assert.ok(exit, `mcpd still running ${EXIT_MS} ms after EOF`);
  assert.deepEqual(exit, { code: 0, signal: null });
  await Promise.race([client.stdoutEnded, sleep(2000)]); // the last lines
  assert.equal(client.rest.length, 0, `stdout ends with a partial line: ${client.rest.toString('utf8').slice(0, 200)}`);
  const unanswered = [...client.sent].filter((id) => !client.answered.has(id));
  assert.deepEqual(unanswered, [], 'requests without a response');
  assert.ok(!Buffer.concat(client.raw).includes(0x0d), 'stdout contains \\r: not in binary mode');
  assert.ok(client.violations.length === 0, `protocol violations during the run:\n${client.violations.join('\n')}`);
  // The good plugin's fini() says so: a plugin is finished, not killed.
  const lines = Buffer.concat(stderr.slice(client.stderrFrom)).toString('utf8');
  assert.match(lines, /fini: releasing state/, 'the good plugin\'s fini() did not run');
  // Workers end a moment after their host; their copies go with them.
  const deadline = Date.now() + 5000;
  let left;
  do {
    left = (await copyDirs()).filter((d) => !copiesBefore.has(d));
    if (left.length === 0) break;
    await sleep(100);
  } while (Date.now() < deadline);
  assert.deepEqual(left, [], 'private copies of plugins left behind');
}

await check('initialize negotiates 2025-11-25 and offers tools', initialize);

await check('tools/list has echo, calculate and the fault plugin', async () => {
  assertIncludes(await listTools(), ['echo', 'calculate', 'ok', 'segv_inline']);
});

await check('echo returns UTF-8 text byte for byte; stdout is binary JSON lines', async () => {
  const text = resultText(await callTool('echo', { text: UNICODE }));
  assert.ok(Buffer.from(text ?? '', 'utf8').equals(Buffer.from(UNICODE, 'utf8')), `echo gave ${JSON.stringify(text)}`);
  // A '\r' would mean stdout is in text mode and "\n" became "\r\n".
  assert.ok(!Buffer.concat(client.raw).includes(0x0d), 'stdout contains \\r: not in binary mode');
});

await check('calculate evaluates (2 + 3) * 7 - 2^3 to 27', async () => {
  const result = await callTool('calculate', { expression: '(2 + 3) * 7 - 2^3' });
  assert.equal(resultText(result), '27');
  assert.equal(result.structuredContent?.result, 27);
});

await check('hot reload: good.dll dropped in brings list_changed and its tools', async () => {
  // Copied beside the directory and renamed in, so that the watcher never
  // sees half a DLL.
  const staged = path.join(tmp, 'staging', 'good.dll');
  await fs.copyFile(path.join(FIXTURES, 'good.dll'), staged);
  let since = client.notes.length;
  await fs.rename(staged, path.join(pluginDir, 'good.dll'));
  // The worker may announce more than once while it starts; list after
  // each announcement until good's tools are there.
  for (;;) {
    await client.notification(LIST_CHANGED, since);
    since = client.notes.length;
    if ((await listTools()).includes('add')) break;
  }
  const result = await callTool('add', { a: 2, b: 40 });
  assert.equal(resultText(result), '42');
});

await check('a loaded DLL is replaced in place: the new version is served', async () => {
  await fs.copyFile(path.join(FIXTURES, 'reload_v1.dll'), path.join(pluginDir, 'reload.dll'));
  await untilListed('version', 0);
  assert.equal(resultText(await callTool('version')), '1');
  await replaceReload('reload_v2.dll', '2');
  await untilListed('v2_only', 0);
});

/** Calls `name` until its plugin's worker is back and it answers. */
async function callWhenBack(name, args = {}) {
  const deadline = Date.now() + RESTART_MS;
  for (;;) {
    const msg = await client.request('tools/call', { name, arguments: args });
    const why = msg.error ? msg.error.message : resultText(msg.result);
    if (!msg.error || !NOT_BACK_YET.test(why ?? '')) return msg;
    assert.ok(Date.now() < deadline, `the fault worker not back within ${RESTART_MS} ms: ${why}`);
    await sleep(250);
  }
}

// Each fault ends the plugin's worker in its own way; mcpd answers the call
// with how it ended, restarts the worker, and serves everything else
// meanwhile.  Four crashes stay under the five a minute that park a plugin.
const FAULTS = [
  ['segv_inline', /crashed \(exception 0xC0000005\)/], // access violation
  ['overflow_inline', /crashed \(exception 0xC00000FD\)/], // stack overflow
  ['abort_pool', /exited with status 3/], // abort() on a pool thread
  ['exit_async', /exited with status 3/], // exit(3) on the plugin's own thread
];

await check('crash isolation: four kinds of crash are answered, echo still works, the worker comes back', async () => {
  for (const [tool, how] of FAULTS) {
    const crash = await callWhenBack(tool);
    assert.ok(crash.error, `${tool} did not fail: ${JSON.stringify(crash)}`);
    assert.match(crash.error.message, how, `${tool}: ${crash.error.message}`);
    assert.match(crash.error.message, /plugin "fault": its worker process/);
    assert.equal(resultText(await callTool('echo', { text: `after ${tool}` })), `after ${tool}`);
  }
  const msg = await callWhenBack('ok');
  assert.equal(resultText(msg.result), 'ok', JSON.stringify(msg));
});

await check('a plugin that writes to stdout cannot forge responses', async () => {
  const msg = await callWhenBack('stdout_inline');
  assert.ok(msg.result && !msg.result.isError, JSON.stringify(msg));
  const forged = Buffer.concat(client.raw).toString('utf8');
  assert.ok(!forged.includes('"forged"'), 'a forged response reached stdout');
});

await check('shutdown: EOF on stdin ends mcpd with 0; every request answered once; no copies left', shutdown);

// The same DLLs loaded into mcpd itself rather than worker processes.
client = startMcpd(['--in-process']);
await check('in-process: initialize, echo, and a loaded DLL replaced in place', async () => {
  await initialize();
  assert.equal(resultText(await callTool('echo', { text: UNICODE })), UNICODE);
  assert.equal(resultText(await callTool('version')), '2');
  await replaceReload('reload_v1.dll', '1');
});
await check('in-process: shutdown with exit 0, every copy removed', shutdown);

/** The official TypeScript SDK clients, from tests/node_modules, or null
 * when they are not installed (npm ci in tests/ installs them). */
async function sdkClients() {
  try {
    const legacy = await import('@modelcontextprotocol/sdk/client/index.js');
    const legacyStdio = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const modern = await import('@modelcontextprotocol/client');
    const modernStdio = await import('@modelcontextprotocol/client/stdio');
    return [
      ['1.x', '2025-11-25', legacy.Client, legacyStdio.StdioClientTransport, {}],
      ['2.x', '2026-07-28', modern.Client, modernStdio.StdioClientTransport, { versionNegotiation: { mode: 'auto' } }],
    ];
  } catch {
    return null;
  }
}

const sdks = await sdkClients();
if (sdks === null) console.log('ok - the official SDK clients # SKIP not installed (run npm ci in tests/)');
for (const [release, version, Client, Transport, options] of sdks ?? []) {
  await check(`the official SDK ${release} client over stdio speaks ${version}, lists and calls`, async () => {
    const transport = new Transport({
      command: process.env.WINE || 'wine64',
      args: [path.join(DIST, 'mcpd.exe'), '--plugins', winePath(pluginDir)],
      env: { ...process.env, WINEDEBUG: process.env.WINEDEBUG ?? '-all' },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk) => stderr.push(chunk));
    const sdk = new Client({ name: `mcpd-windows-sdk-${release}`, version: '0.0.0' }, options);
    try {
      await sdk.connect(transport);
      assert.equal(sdk.getServerVersion()?.name, 'mcpd');
      if (sdk.getNegotiatedProtocolVersion) assert.equal(sdk.getNegotiatedProtocolVersion(), version);
      const { tools } = await sdk.listTools();
      assertIncludes(
        tools.map((t) => t.name),
        ['echo', 'calculate', 'version'],
      );
      const echo = await sdk.callTool({ name: 'echo', arguments: { text: UNICODE } });
      assert.equal(resultText(echo), UNICODE);
      const calc = await sdk.callTool({ name: 'calculate', arguments: { expression: 'max(2, 3) * 14' } });
      assert.equal(calc.structuredContent?.result, 42, JSON.stringify(calc));
    } finally {
      await sdk.close().catch(() => {});
    }
  });
}

/** Runs mcpd.exe with `args` to its end: its exit code and output. */
function runMcpd(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.env.WINE || 'wine64', [path.join(DIST, 'mcpd.exe'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, WINEDEBUG: process.env.WINEDEBUG ?? '-all' },
    });
    const out = [];
    const err = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => err.push(chunk));
    child.on('error', reject);
    // 'exit', not 'close': wineserver may hold the pipes open.
    child.on('exit', (code) =>
      setTimeout(() => resolve({ code, out: Buffer.concat(out).toString(), err: Buffer.concat(err).toString() }), 200),
    );
  });
}

await check('mcpd install / uninstall claude-desktop write the client config', async () => {
  // The documented place, under wine's %APPDATA%, and a file named by --config.
  const users = path.join(process.env.WINEPREFIX || path.join(os.homedir(), '.wine'), 'drive_c', 'users');
  const named = path.join(tmp, 'claude.json');
  for (const extra of [[], ['--config', winePath(named)]]) {
    const run = await runMcpd(['install', 'claude-desktop', ...extra]);
    assert.equal(run.code, 0, `install ${extra.join(' ')}: ${run.err}`);
    let file = named;
    if (extra.length === 0) {
      const found = [];
      for (const user of await fs.readdir(users)) {
        const f = path.join(users, user, 'AppData', 'Roaming', 'Claude', 'claude_desktop_config.json');
        if (await fs.stat(f).catch(() => null)) found.push(f);
      }
      assert.equal(found.length, 1, `Claude Desktop's config under ${users}: ${found.join(', ')}; ${run.out}`);
      file = found[0];
    }
    const config = JSON.parse(await fs.readFile(file, 'utf8'));
    assert.match(config.mcpServers?.mcpd?.command ?? '', /mcpd\.exe$/i, JSON.stringify(config));
    const gone = await runMcpd(['uninstall', 'claude-desktop', ...extra]);
    assert.equal(gone.code, 0, `uninstall: ${gone.err}`);
    const after = JSON.parse(await fs.readFile(file, 'utf8'));
    assert.equal(after.mcpServers?.mcpd, undefined, JSON.stringify(after));
  }
});

if (failed) {
  const text = Buffer.concat(stderr).toString('utf8');
  for (const line of text.split('\n')) console.log(`# stderr: ${line}`);
}
if (client.child.exitCode === null && client.child.signalCode === null) client.child.kill('SIGKILL');
await fs.rm(tmp, { recursive: true, force: true });
// Pipes that wineserver inherited may keep the event loop alive.
process.exit(failed ? 1 : 0);
