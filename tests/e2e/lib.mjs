// SPDX-License-Identifier: MIT
// Shared helpers for the mcpd end-to-end tests.
//
// Paths come from the environment that tests/e2e.mk exports
// (MCPD_BUILDDIR, MCPD_SRCDIR); when a test file is run by hand they default
// to the source tree this file lives in, which is also the build tree for an
// in-tree build.
//
// The raw line client (McpdProcess) spawns src/mcpd with three pipes, writes
// whatever bytes a test wants, splits stdout on '\n' and keeps every line:
// lines that are not JSON are recorded as protocol violations (badLines), so
// any test can assert that stdout carried nothing but JSON-RPC.  Children and
// temporary directories are tracked and removed when the test process exits,
// whatever happens to the test.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export const SRCDIR = path.resolve(process.env.MCPD_SRCDIR || path.join(here, '..', '..'));
export const BUILDDIR = path.resolve(process.env.MCPD_BUILDDIR || SRCDIR);
/**
 * Where plugins run when a test does not say: 'isolated' (mcpd's default)
 * or 'in-process' (MCPD_TEST_PLUGIN_MODE=in-process, which CI runs too).
 * Tests of the default itself skip in the other mode.
 */
export const PLUGIN_MODE = process.env.MCPD_TEST_PLUGIN_MODE === 'in-process' ? 'in-process' : 'isolated';
/** The built binary itself. */
export const MCPD_BIN = path.join(BUILDDIR, 'src', 'mcpd');
/** What tests run: the binary, or in in-process mode a script that runs it
 * with --in-process first (a later --isolate wins). */
export const MCPD = PLUGIN_MODE === 'in-process' ? inProcessWrapper() : MCPD_BIN;

/** The platform file the build took (src/platform/): "linux", or "posix"
 * in a portable build; `mcpd --version` names it. */
export const PLATFORM = (() => {
  try {
    const m = /platform (\w+)/.exec(execFileSync(MCPD_BIN, ['--version'], { encoding: 'utf8' }));
    return m ? m[1] : 'unknown';
  } catch {
    return 'unknown';
  }
})();

function inProcessWrapper() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpd-in-process-'));
  const file = path.join(dir, 'mcpd');
  fs.writeFileSync(file, `#!/bin/sh\nexec '${MCPD_BIN}' --in-process "$@"\n`, { mode: 0o755 });
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return file;
}


/** The protocol revision tests negotiate unless they say otherwise. */
export const LATEST = '2025-11-25';

/** Whether mcpd runs under AddressSanitizer or ThreadSanitizer (setup.sh
 * sets their options): they reserve terabytes of address space, so no
 * address-space limit can apply to such a build. */
export const SANITIZED = Boolean(process.env.ASAN_OPTIONS || process.env.TSAN_OPTIONS);

/** Plugins shipped with mcpd; everything else is a check-only fixture. */
const BUNDLED = new Set(['echo', 'calc', 'fs', 'sqlite', 'fetch', 'exec', 'proxy']);
/** Example plugins, built under examples/. */
const EXAMPLES = new Set(['everything', 'hello_cpp']);

/** Absolute path of the built plugin `name` (without ".so"). */
export function pluginPath(name) {
  const base = name.replace(/\.so$/, '');
  if (BUNDLED.has(base)) return path.join(BUILDDIR, 'plugins', '.libs', `${base}.so`);
  if (EXAMPLES.has(base)) return path.join(BUILDDIR, 'examples', '.libs', `${base}.so`);
  return path.join(BUILDDIR, 'tests', 'plugins', '.libs', `${base}.so`);
}

/* ------------------------------------------------------------------------ */
/* Temporary directories and children, cleaned up whatever happens.         */

const tempDirs = new Set();
const children = new Set();

function cleanupSync() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
  children.clear();
  for (const dir of tempDirs) {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      /* best effort */
    }
  }
  tempDirs.clear();
}
process.on('exit', cleanupSync);

/** A private (0700) temporary directory, removed at exit or by cleanup(). */
export async function makeTempDir(prefix = 'mcpd-e2e-') {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), prefix));
  await fsp.chmod(dir, 0o700);
  tempDirs.add(dir);
  return dir;
}

/**
 * Creates a private plugin directory (mode 0700) holding copies of the
 * named plugins, each mode 0644 (mcpd refuses group/other-writable files).
 * Entries may be names ("echo", "good") or {name, as} to copy under another
 * file name.  Returns the directory path.
 */
export async function makePluginDir(names = []) {
  const dir = await makeTempDir('mcpd-plugins-');
  for (const entry of names) {
    const name = typeof entry === 'string' ? entry : entry.name;
    const as = typeof entry === 'string' ? `${name.replace(/\.so$/, '')}.so` : entry.as;
    const dest = path.join(dir, as);
    const src = pluginPath(name);
    if (!fs.existsSync(src)) throw new Error(`plugin ${name} is not built: ${src} is missing (run make check)`);
    await fsp.copyFile(src, dest);
    await fsp.chmod(dest, 0o644);
  }
  return dir;
}

/** Writes a file (mode 0644 unless told) and returns its path. */
export async function writeFile(dir, name, content, mode = 0o644) {
  const file = path.join(dir, name);
  await fsp.writeFile(file, content);
  await fsp.chmod(file, mode);
  return file;
}

/** Removes every temporary directory and kills every child still running. */
export async function cleanup() {
  cleanupSync();
}

/* ------------------------------------------------------------------------ */
/* Small utilities.                                                          */

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Rejects with `what` after `ms` unless `promise` settles first. */
export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** True while process `pid` exists and is not a zombie. */
export function pidAlive(pid) {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return err.code === 'EPERM';
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 3, after the parenthesised command name, is the state.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Polls `cond()` (sync or async) every `everyMs` until it is truthy, and
 * resolves to its value; rejects after `ms`, naming `what`. */
export async function until(cond, ms, what, everyMs = 25) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Polls until `pid` is gone; returns whether it went within `ms`. */
export async function waitPidGone(pid, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!pidAlive(pid)) return true;
    await sleep(50);
  }
  return !pidAlive(pid);
}

/** Tracks a child so it is SIGKILLed if the test process exits first. */
export function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/* ------------------------------------------------------------------------ */
/* One-shot runs: --help, --version, --list, --call, bad options.            */

/**
 * Runs mcpd to completion.  stdin gets `input` (or is closed at once) so a
 * mode that would serve stdio ends on EOF.  Resolves {code, signal, stdout,
 * stderr, timedOut}; a run longer than `timeout` is killed.
 */
export function runMcpd(args, { input = '', env, timeout = 10000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = track(
      spawn(MCPD, args, { stdio: ['pipe', 'pipe', 'pipe'], env: env ?? process.env }),
    );
    const out = [];
    const err = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeout);
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.stdin.on('error', () => {});
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code,
        signal,
        timedOut,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
    child.stdin.end(input);
  });
}

/* ------------------------------------------------------------------------ */
/* The raw line client.                                                      */

let nextAutoId = 1;

export class McpdProcess {
  /**
   * Spawns mcpd.  `args` are passed as they are; `plugins` (a directory or a
   * list of them) adds `--plugins DIR` for each and `--no-watch` unless
   * `watch` is true.  `extraStdio` becomes fds 3, 4, ... of the child (as
   * child_process.spawn's `stdio` entries).  `detached` makes mcpd lead a
   * process group of its own (its pid is the group's id).
   */
  constructor(args = [], { plugins, watch = false, env, extraStdio = [], detached = false } = {}) {
    const full = [];
    for (const dir of [].concat(plugins ?? [])) full.push('--plugins', dir);
    if (plugins !== undefined && !watch) full.push('--no-watch');
    full.push(...args);
    this.args = full;
    this.child = track(
      spawn(MCPD, full, { stdio: ['pipe', 'pipe', 'pipe', ...extraStdio], env: env ?? process.env, detached }),
    );
    this.pid = this.child.pid;
    /** Every parsed message from stdout, in arrival order. */
    this.messages = [];
    /** Messages not yet taken by take()/request(). */
    this.inbox = [];
    /** stdout lines that were not valid JSON (a protocol violation). */
    this.badLines = [];
    /** Raw stdout lines, exactly as received (without the '\n'). */
    this.rawLines = [];
    this.stderrChunks = [];
    this.waiters = [];
    this.stdoutRest = Buffer.alloc(0);
    this.stdoutChunks = [];

    this.child.stdin.on('error', () => {
      /* EPIPE after mcpd exited: the exit code tells the story. */
    });
    this.child.stdout.on('data', (chunk) => this.#onStdout(chunk));
    this.child.stderr.on('data', (chunk) => this.stderrChunks.push(chunk));
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code, signal) => {
        this.#flushStdout();
        this.exitCode = code;
        this.exitSignal = signal;
        for (const w of this.waiters.splice(0)) {
          w.reject(
            new Error(
              `mcpd exited (code ${code}, signal ${signal}) while waiting for ${w.what}\n` +
                `stderr:\n${this.stderr}`,
            ),
          );
        }
        resolve({ code, signal });
      });
    });
    this.spawnError = null;
    this.child.on('error', (e) => {
      this.spawnError = e;
    });
  }

  get stderr() {
    return Buffer.concat(this.stderrChunks).toString('utf8');
  }

  /** Notifications (messages with a method and no id) received so far. */
  get notifications() {
    return this.messages.filter((m) => m && typeof m === 'object' && 'method' in m && !('id' in m));
  }

  #onStdout(chunk) {
    let buf = this.stdoutRest.length ? Buffer.concat([this.stdoutRest, chunk]) : chunk;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      if (nl < 0) break;
      this.#onLine(buf.subarray(start, nl));
      start = nl + 1;
    }
    this.stdoutRest = Buffer.from(buf.subarray(start));
  }

  #flushStdout() {
    if (this.stdoutRest.length) {
      // A final line without '\n' is itself a framing violation.
      this.badLines.push(`(unterminated) ${this.stdoutRest.toString('utf8').slice(0, 200)}`);
      this.stdoutRest = Buffer.alloc(0);
    }
  }

  #onLine(bytes) {
    const line = bytes.toString('utf8');
    this.rawLines.push(line);
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      this.badLines.push(line.length > 200 ? `${line.slice(0, 200)}...` : line);
      return;
    }
    if (msg === null || typeof msg !== 'object') {
      this.badLines.push(line.slice(0, 200));
      return;
    }
    this.messages.push(msg);
    this.inbox.push(msg);
    for (const w of [...this.waiters]) {
      const i = this.inbox.findIndex(w.pred);
      if (i >= 0) {
        const [m] = this.inbox.splice(i, 1);
        this.waiters.splice(this.waiters.indexOf(w), 1);
        clearTimeout(w.timer);
        w.resolve(m);
      }
    }
  }

  /** Writes a message: an object is serialised and terminated with '\n';
   * a string or Buffer is written exactly as given. Resolves once written. */
  write(data) {
    const bytes =
      typeof data === 'string' || Buffer.isBuffer(data) ? data : `${JSON.stringify(data)}\n`;
    return new Promise((resolve) => {
      if (this.child.stdin.destroyed || this.child.stdin.writableEnded) return resolve(false);
      this.child.stdin.write(bytes, (err) => resolve(!err));
    });
  }

  /**
   * Removes and returns the first message matching `pred`, waiting up to
   * `timeout` ms for it.  `what` names it in the timeout error.
   */
  take(pred, { timeout = 10000, what = 'a message' } = {}) {
    const i = this.inbox.findIndex(pred);
    if (i >= 0) return Promise.resolve(this.inbox.splice(i, 1)[0]);
    if (this.exitCode !== undefined || this.exitSignal) {
      return Promise.reject(new Error(`mcpd already exited; cannot wait for ${what}`));
    }
    return new Promise((resolve, reject) => {
      const w = { pred, resolve, reject, what };
      w.timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(
          new Error(
            `timed out after ${timeout} ms waiting for ${what}\n` +
              `received so far: ${JSON.stringify(this.messages).slice(0, 2000)}\n` +
              `stderr:\n${this.stderr.slice(-2000)}`,
          ),
        );
      }, timeout);
      this.waiters.push(w);
    });
  }

  /** Waits for the response with this id. */
  response(id, opts = {}) {
    return this.take((m) => isResponse(m) && m.id === id, {
      what: `the response to id ${JSON.stringify(id)}`,
      ...opts,
    });
  }

  /** Waits for the next error response with id null (parse errors etc.). */
  nullIdError(opts = {}) {
    return this.take((m) => isResponse(m) && m.id === null, {
      what: 'an error response with id null',
      ...opts,
    });
  }

  /** Waits for a notification with this method. */
  notification(method, opts = {}) {
    return this.take((m) => m.method === method && !('id' in m), {
      what: `notification ${method}`,
      ...opts,
    });
  }

  /** Sends a request and resolves with the whole response message. */
  async request(method, params, { id = nextAutoId++, timeout = 10000, meta } = {}) {
    const msg = { jsonrpc: '2.0', id, method };
    if (params !== undefined) msg.params = params;
    if (meta) msg.params = { ...(msg.params ?? {}), _meta: meta };
    await this.write(msg);
    return this.response(id, { timeout });
  }

  /** Sends a request and resolves with its result, throwing on an error. */
  async call(method, params, opts) {
    const res = await this.request(method, params, opts);
    if ('error' in res) {
      const e = new Error(`${method} failed: ${JSON.stringify(res.error)}`);
      e.rpcError = res.error;
      throw e;
    }
    return res.result;
  }

  notify(method, params) {
    const msg = { jsonrpc: '2.0', method };
    if (params !== undefined) msg.params = params;
    return this.write(msg);
  }

  /** initialize + notifications/initialized; resolves with the result. */
  async initialize(protocolVersion = LATEST, { capabilities = {}, timeout = 10000 } = {}) {
    const result = await this.call(
      'initialize',
      {
        protocolVersion,
        capabilities,
        clientInfo: { name: 'mcpd-e2e', version: '0.0.0' },
      },
      { timeout },
    );
    await this.notify('notifications/initialized');
    return result;
  }

  /** tools/call; resolves with the CallToolResult (throws on an RPC error). */
  callTool(name, args, opts) {
    const params = { name };
    if (args !== undefined) params.arguments = args;
    return this.call('tools/call', params, opts);
  }

  /** Sends ping and asserts-by-throwing that the result is exactly {}. */
  async ping(opts) {
    const res = await this.request('ping', undefined, opts);
    if (!('result' in res)) throw new Error(`ping failed: ${JSON.stringify(res)}`);
    return res.result;
  }

  /** Closes stdin (EOF). */
  endInput() {
    if (!this.child.stdin.writableEnded) this.child.stdin.end();
  }

  /** Resolves {code, signal} once mcpd exits, or rejects after `ms`. */
  waitExit(ms = 5000) {
    return withTimeout(this.exited, ms, `mcpd (pid ${this.pid}) to exit`);
  }

  /** EOF, wait a little, then SIGKILL: never leaves the child behind. */
  async close(ms = 3000) {
    this.endInput();
    try {
      await withTimeout(this.exited, ms, 'exit');
    } catch {
      this.child.kill('SIGKILL');
      await this.exited;
    }
    return { code: this.exitCode, signal: this.exitSignal };
  }
}

export function isResponse(m) {
  return m && typeof m === 'object' && 'id' in m && ('result' in m || 'error' in m) && !('method' in m);
}

/** The text of a CallToolResult's content blocks, joined. */
export function resultText(result) {
  return (result.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('');
}

/**
 * Problems with the shape of what mcpd wrote: non-JSON lines, messages
 * without jsonrpc "2.0", responses with both or neither of result/error,
 * errors without an integer code and a string message.  [] when clean.
 */
export function protocolProblems(mcpd) {
  const problems = mcpd.badLines.map((l) => `not JSON: ${l}`);
  const check = (m) => {
    if (m === null || typeof m !== 'object' || Array.isArray(m)) {
      problems.push(`not an object: ${JSON.stringify(m).slice(0, 200)}`);
      return;
    }
    if (m.jsonrpc !== '2.0') problems.push(`jsonrpc is not "2.0": ${JSON.stringify(m).slice(0, 200)}`);
    if ('method' in m) return;
    const hasResult = 'result' in m;
    const hasError = 'error' in m;
    if (hasResult === hasError) problems.push(`neither/both result and error: ${JSON.stringify(m).slice(0, 200)}`);
    if (!('id' in m)) problems.push(`response without id: ${JSON.stringify(m).slice(0, 200)}`);
    if (hasError) {
      const e = m.error;
      if (!e || !Number.isInteger(e.code) || typeof e.message !== 'string') {
        problems.push(`malformed error object: ${JSON.stringify(m).slice(0, 200)}`);
      }
    }
    if (hasResult && (m.result === null || typeof m.result !== 'object' || Array.isArray(m.result))) {
      problems.push(`result is not an object: ${JSON.stringify(m).slice(0, 200)}`);
    }
  };
  for (const m of mcpd.messages) {
    if (Array.isArray(m)) m.forEach(check);
    else check(m);
  }
  return problems;
}

/**
 * Spawns mcpd for one test: a private plugin dir with `plugins` (default
 * echo), extra `args`, initialized with `version` unless `init` is false.
 * The process is closed (EOF, then SIGKILL) when the test ends.
 */
export async function session(t, { plugins = ['echo'], args = [], init = true, version = LATEST, env, watch } = {}) {
  const dir = await makePluginDir(plugins);
  const mcpd = new McpdProcess(args, { plugins: dir, env, watch });
  t.after(() => mcpd.close());
  if (init) mcpd.initResult = await mcpd.initialize(version);
  mcpd.pluginDir = dir;
  return mcpd;
}

/**
 * The worker processes of mcpd `pid` (children started with --worker): a
 * Map from each one's pid to the plugin file it serves.  It reads the
 * /proc/PID/stat of every process, since /proc/PID/task/TID/children
 * needs a kernel built with CONFIG_PROC_CHILDREN.
 */
export function workerProcesses(pid) {
  const found = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command: state, then ppid.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== pid || !pidAlive(Number(entry))) continue;
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const i = argv.indexOf('--worker');
      if (i >= 0) found.set(Number(entry), argv[i + 1]);
    } catch {
      /* gone while we looked */
    }
  }
  return found;
}

/** Stdout carried JSON-RPC only, and no id was answered twice. */
export function assertCleanStdout(mcpd) {
  assert.deepEqual(protocolProblems(mcpd), [], 'stdout carried something other than JSON-RPC');
  const seen = new Map();
  for (const m of responses(mcpd)) {
    const key = JSON.stringify(m.id);
    assert.ok(!seen.has(key), `two responses to id ${key}: ${JSON.stringify(seen.get(key))} and ${JSON.stringify(m)}`);
    seen.set(key, m);
  }
}

/** Responses (single messages with an id and result/error) received so far. */
export function responses(mcpd) {
  return mcpd.messages.filter(isResponse);
}

/** Writes `config` as JSON to a private temp file; returns its path. */
export async function configFile(config, name = 'config.json') {
  const dir = await makeTempDir('mcpd-config-');
  return writeFile(dir, name, JSON.stringify(config));
}

/* ------------------------------------------------------------------------ */
/* mcpd --transport http.                                                    */

/**
 * Starts mcpd --transport http with a private plugin dir holding `plugins`
 * and extra `args`, listening on `listen` (an ephemeral loopback port by
 * default).  Resolves once it logged "listening on ...": {child, url,
 * base, address, stderr(), stdout()}; `url` is the /mcp endpoint (or
 * "unix:PATH"), `base` the origin without a path.
 */
export async function startHttp(plugins, args = [], { listen = '127.0.0.1:0' } = {}) {
  const dir = await makePluginDir(plugins);
  const child = track(
    spawn(MCPD, ['--transport', 'http', '--listen', listen, '--plugins', dir, '--no-watch', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let err = '';
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  const url = await withTimeout(
    new Promise((resolve, reject) => {
      child.stderr.on('data', (d) => {
        err += d;
        // Text or JSON lines (--log-format json): the URL ends at a quote.
        const m = /listening on (http:\/\/[^\s"]+|unix:[^\s"]+)/.exec(err);
        if (m) resolve(m[1]);
      });
      child.once('exit', (code) => reject(new Error(`mcpd exited ${code}: ${err}`)));
    }),
    5000,
    'mcpd to listen',
  );
  const base = url.startsWith('http') ? new URL(url).origin : undefined;
  return { child, url, base, pluginDir: dir, stderr: () => err, stdout: () => out };
}

/** SIGTERM, then resolves mcpd's exit code (rejects after 5 s). */
export async function stop(child) {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return withTimeout(exited, 5000, 'mcpd to exit');
}

export const JSON_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** POSTs a JSON-RPC body (an object, or a string sent as it is). */
export function post(url, body, headers = {}, init = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { ...JSON_HEADERS, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });
}

export const INIT = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/**
 * The JSON-RPC answer a POST carried, whether mcpd sent it as
 * application/json or on an SSE stream (as it does when the answer comes
 * later than the request's handling, from a plugin's worker say).
 */
export async function answerOf(res) {
  const type = res.headers.get('content-type') ?? '';
  if (!type.includes('text/event-stream')) return res.json();
  const text = await res.text();
  for (const event of text.split('\n\n')) {
    const data = event
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (data === '') continue;
    const msg = JSON.parse(data);
    if ('id' in msg && ('result' in msg || 'error' in msg)) return msg;
  }
  throw new Error(`no answer on the SSE stream: ${text}`);
}

/** Opens a session by hand at protocol `version`; resolves its id. */
export async function rawSession(url, version = LATEST) {
  const res = await post(url, { ...INIT, params: { ...INIT.params, protocolVersion: version } });
  if (res.status !== 200) throw new Error(`initialize: HTTP ${res.status}: ${await res.text()}`);
  const sid = res.headers.get('mcp-session-id');
  await res.text();
  const ack = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': sid });
  if (ack.status !== 202) throw new Error(`notifications/initialized: HTTP ${ack.status}`);
  return sid;
}
