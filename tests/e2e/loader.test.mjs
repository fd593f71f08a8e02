// SPDX-License-Identifier: MIT
// The plugin loader as a user sees it: broken plugins are refused with one
// clear stderr line each while every good plugin keeps working; unsafe files
// are refused unless allowed; --list and --call; hot reload.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import {
  McpdProcess,
  makePluginDir,
  makeTempDir,
  pluginPath,
  protocolProblems,
  resultText,
  runMcpd,
  sleep,
  writeFile,
} from './lib.mjs';

/** stderr lines at warning or error level that mention `needle`. */
function problemLines(stderr, needle) {
  return stderr
    .split('\n')
    .filter((l) => /^mcpd: (warn\w*|error|critical|alert|emerg\w*):/i.test(l) && l.includes(needle));
}

async function toolNames(mcpd) {
  const names = [];
  let cursor;
  do {
    const res = await mcpd.call('tools/list', cursor === undefined ? {} : { cursor });
    names.push(...res.tools.map((x) => x.name));
    cursor = res.nextCursor;
  } while (cursor !== undefined);
  return names;
}

async function start(t, dir, args = [], opts = {}) {
  const mcpd = new McpdProcess(args, { plugins: dir, ...opts });
  t.after(() => mcpd.close());
  await mcpd.initialize();
  return mcpd;
}

// Fixtures that must each be refused, and a word the reason should contain.
const BROKEN = {
  abi_major: /ABI/i,
  newer_minor: /ABI|minor/i,
  no_symbol: /mcpd_plugin|symbol/i,
  init_fails: /database unreachable/,
  null_name: /name/i,
  bad_schema: /schema/i,
  schema_not_object: /schema|object/i,
  bad_name: /name/i,
  bad_size: /tool size 8/,
  bad_reserved: /argument "topic" sets reserved fields/,
};
const NOT_ELF = {
  'notelf.so': /ELF|shared object|dlopen|header/i,
  'empty.so': /ELF|too short|empty|shared object|dlopen/i,
};

describe('broken plugins', () => {
  async function brokenDir() {
    const dir = await makePluginDir(['echo', ...Object.keys(BROKEN)]);
    await writeFile(dir, 'notelf.so', 'this is a text file, not a shared object\n');
    await writeFile(dir, 'empty.so', '');
    await writeFile(dir, 'README.txt', 'not a plugin: no .so suffix, must be ignored silently\n');
    return dir;
  }

  test('each broken plugin gets exactly one stderr line naming it; echo still works', async (t) => {
    const dir = await brokenDir();
    const mcpd = await start(t, dir);
    assert.equal(resultText(await mcpd.callTool('echo', { text: 'still here' })), 'still here');
    assert.deepEqual(await toolNames(mcpd), ['echo']);
    await mcpd.close();
    const { stderr } = mcpd;
    const failures = [];
    for (const [name, reason] of [
      ...Object.entries(BROKEN).map(([n, r]) => [`${n}.so`, r]),
      ...Object.entries(NOT_ELF),
    ]) {
      const lines = problemLines(stderr, name);
      if (lines.length !== 1) failures.push(`${name}: ${lines.length} warning/error lines, want 1: ${JSON.stringify(lines)}`);
      else if (!reason.test(lines[0])) failures.push(`${name}: line lacks ${reason}: ${lines[0]}`);
    }
    assert.deepEqual(failures, [], `stderr was:\n${stderr}`);
    const unformatted = stderr.split('\n').filter((l) => l !== '' && !/^mcpd: (debug|info|warn|error): \S/.test(l));
    assert.deepEqual(unformatted, [], 'every stderr line is "mcpd: <level>: <message>"');
    assert.deepEqual(problemLines(stderr, 'echo.so'), []);
    assert.deepEqual(problemLines(stderr, 'README.txt'), []);
    assert.deepEqual(protocolProblems(mcpd), []);
  });

  for (const [name, reason] of Object.entries(BROKEN)) {
    test(`${name}.so alone: refused with a reason matching ${reason}`, async (t) => {
      const dir = await makePluginDir(['echo', name]);
      const mcpd = await start(t, dir);
      assert.deepEqual(await toolNames(mcpd), ['echo']);
      await mcpd.close();
      const lines = problemLines(mcpd.stderr, `${name}.so`);
      assert.equal(lines.length, 1, mcpd.stderr);
      assert.match(lines[0], reason);
    });
  }

  test('duplicate tool names: the second plugin is refused with a line naming both', async (t) => {
    const dir = await makePluginDir(['echo', 'dup_a', 'dup_b']);
    const mcpd = await start(t, dir);
    const names = await toolNames(mcpd);
    assert.equal(names.filter((n) => n === 'same_name').length, 1, `tools: ${names}`);
    // dup_a.so sorts first, so its same_name is the one served.
    assert.equal(resultText(await mcpd.callTool('same_name', {})), 'a');
    await mcpd.close();
    const lines = mcpd.stderr.split('\n').filter((l) => l.includes('dup_a') && l.includes('dup_b'));
    assert.equal(lines.length, 1, mcpd.stderr);
    assert.match(lines[0], /same_name/);
    assert.deepEqual(problemLines(mcpd.stderr, 'dup_a.so').filter((l) => !l.includes('dup_b')), []);
  });

  test('duplicate plugin names: the second file is refused', async (t) => {
    const dir = await makePluginDir(['reload_v1', 'reload_v2']);
    const mcpd = await start(t, dir);
    assert.equal(resultText(await mcpd.callTool('version', {})).trim(), '1');
    assert.ok(!(await toolNames(mcpd)).includes('v2_only'));
    await mcpd.close();
    assert.equal(problemLines(mcpd.stderr, 'reload_v2.so').length, 1, mcpd.stderr);
  });

  test('the same plugin directory given twice does not load plugins twice', async (t) => {
    const dir = await makePluginDir(['echo']);
    const mcpd = new McpdProcess(['--plugins', dir], { plugins: dir });
    t.after(() => mcpd.close());
    await mcpd.initialize();
    assert.deepEqual(await toolNames(mcpd), ['echo']);
  });
});

describe('plugin path', () => {
  /** process.env without the variables that choose plugin directories. */
  function baseEnv(extra) {
    const env = { ...process.env, ...extra };
    if (!('MCPD_PLUGIN_PATH' in extra)) delete env.MCPD_PLUGIN_PATH;
    return env;
  }

  test('--plugins may repeat', async (t) => {
    const a = await makePluginDir(['echo']);
    const b = await makePluginDir(['calc']);
    const mcpd = await start(t, [a, b]);
    assert.deepEqual((await toolNames(mcpd)).sort(), ['calculate', 'echo']);
  });

  test('MCPD_PLUGIN_PATH (colon-separated) replaces the default path', async (t) => {
    const a = await makePluginDir(['echo']);
    const b = await makePluginDir(['calc']);
    const xdg = await makeTempDir();
    await fsp.mkdir(path.join(xdg, 'mcpd', 'plugins'), { recursive: true, mode: 0o755 });
    await fsp.copyFile(pluginPath('good'), path.join(xdg, 'mcpd', 'plugins', 'good.so'));
    const mcpd = new McpdProcess(['--no-watch'], { env: baseEnv({ MCPD_PLUGIN_PATH: `${a}:${b}`, XDG_DATA_HOME: xdg }) });
    t.after(() => mcpd.close());
    await mcpd.initialize();
    assert.deepEqual((await toolNames(mcpd)).sort(), ['calculate', 'echo']);
  });

  test('without --plugins, $XDG_DATA_HOME/mcpd/plugins is searched', async (t) => {
    const xdg = await makeTempDir();
    const dir = path.join(xdg, 'mcpd', 'plugins');
    await fsp.mkdir(dir, { recursive: true, mode: 0o755 });
    await fsp.copyFile(pluginPath('echo'), path.join(dir, 'echo.so'));
    await fsp.chmod(path.join(dir, 'echo.so'), 0o644);
    const mcpd = new McpdProcess(['--no-watch'], { env: baseEnv({ XDG_DATA_HOME: xdg }) });
    t.after(() => mcpd.close());
    await mcpd.initialize();
    assert.ok((await toolNames(mcpd)).includes('echo'), mcpd.stderr);
    assert.equal(resultText(await mcpd.callTool('echo', { text: 'from xdg' })), 'from xdg');
  });

  test('a missing plugin directory is reported and mcpd keeps serving', async (t) => {
    const good = await makePluginDir(['echo']);
    const missing = path.join(good, 'does-not-exist');
    const mcpd = await start(t, [missing, good]);
    assert.deepEqual(await toolNames(mcpd), ['echo']);
    await mcpd.close();
    assert.equal(problemLines(mcpd.stderr, 'does-not-exist').length, 1, mcpd.stderr);
  });
});

describe('unsafe permissions', () => {
  test('a group-writable plugin file is refused, and accepted with --allow-insecure-plugins', async (t) => {
    const dir = await makePluginDir(['echo', 'calc']);
    await fsp.chmod(path.join(dir, 'echo.so'), 0o664);
    const strict = await start(t, dir);
    assert.deepEqual(await toolNames(strict), ['calculate']);
    await strict.close();
    const lines = problemLines(strict.stderr, 'echo.so');
    assert.equal(lines.length, 1, strict.stderr);
    assert.match(lines[0], /writable|permission|mode|insecure|unsafe/i);

    const lax = await start(t, dir, ['--allow-insecure-plugins']);
    assert.equal(resultText(await lax.callTool('echo', { text: 'allowed' })), 'allowed');
  });

  test('an other-writable plugin file is refused', async (t) => {
    const dir = await makePluginDir(['echo', 'calc']);
    await fsp.chmod(path.join(dir, 'echo.so'), 0o646);
    const mcpd = await start(t, dir);
    assert.deepEqual(await toolNames(mcpd), ['calculate']);
    await mcpd.close();
    assert.equal(problemLines(mcpd.stderr, 'echo.so').length, 1, mcpd.stderr);
  });

  for (const mode of [0o770, 0o777]) {
    test(`a plugin directory with mode ${mode.toString(8)} is refused, accepted with --allow-insecure-plugins`, async (t) => {
      const dir = await makePluginDir(['echo']);
      await fsp.chmod(dir, mode);
      const strict = await start(t, dir);
      assert.deepEqual(await toolNames(strict), []);
      await strict.close();
      const lines = problemLines(strict.stderr, path.basename(dir));
      assert.ok(lines.length >= 1, strict.stderr);
      assert.match(lines.join('\n'), /writable|permission|mode|insecure|unsafe/i);

      const lax = await start(t, dir, ['--allow-insecure-plugins']);
      assert.equal(resultText(await lax.callTool('echo', { text: 'allowed' })), 'allowed');
    });
  }
});

describe('--list and --call', () => {
  test('--list prints plugins, tools and errors, exit 1 when one failed', async () => {
    const dir = await makePluginDir(['echo', 'calc', 'init_fails']);
    const res = await runMcpd(['--plugins', dir, '--no-watch', '--list']);
    assert.equal(res.timedOut, false);
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stdout, /\becho\b/);
    assert.match(res.stdout, /\bcalc\b/);
    assert.match(res.stdout, /\bcalculate\b/);
    const all = res.stdout + res.stderr;
    assert.match(all, /init_fails/);
    assert.match(all, /database unreachable/);
  });

  test('--list exits 0 when every plugin loaded', async () => {
    const dir = await makePluginDir(['echo', 'calc']);
    const res = await runMcpd(['--plugins', dir, '--no-watch', '--list']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /\bcalculate\b/);
  });

  test('--call echo --args {"text":"hi"} prints the result, exit 0', async () => {
    const dir = await makePluginDir(['echo']);
    const res = await runMcpd(['--plugins', dir, '--no-watch', '--call', 'echo', '--args', '{"text":"hi there"}']);
    assert.equal(res.timedOut, false);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /hi there/);
  });

  test('--call works for a pool-thread and an async tool', async () => {
    const dir = await makePluginDir(['good']);
    const slow = await runMcpd(['--plugins', dir, '--no-watch', '--call', 'add', '--args', '{"a":1,"b":2}']);
    assert.equal(slow.code, 0, slow.stderr);
    assert.match(slow.stdout, /3/);
    const asyncRes = await runMcpd(['--plugins', dir, '--no-watch', '--call', 'async_echo', '--args', '{"text":"async-ok"}']);
    assert.equal(asyncRes.code, 0, asyncRes.stderr);
    assert.match(asyncRes.stdout, /async-ok/);
  });

  test('--call of an unknown tool -> nonzero exit', async () => {
    const dir = await makePluginDir(['echo']);
    const res = await runMcpd(['--plugins', dir, '--no-watch', '--call', 'no_such_tool', '--args', '{}']);
    assert.equal(res.timedOut, false);
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /no_such_tool/);
  });

  test('--call with --args that is not JSON -> nonzero exit', async () => {
    const dir = await makePluginDir(['echo']);
    const res = await runMcpd(['--plugins', dir, '--no-watch', '--call', 'echo', '--args', '{text: hi']);
    assert.equal(res.timedOut, false);
    assert.notEqual(res.code, 0);
    assert.notEqual(res.stderr, '');
  });
});

describe('hot reload (watching the plugin directory)', () => {
  const WAIT = 10000;

  /** Copies a built plugin into `dir` as `as` atomically (temp + rename). */
  async function install(dir, name, as) {
    const tmp = path.join(dir, `.${as}.tmp`);
    await fsp.copyFile(pluginPath(name), tmp);
    await fsp.chmod(tmp, 0o644);
    await fsp.rename(tmp, path.join(dir, as));
  }

  async function versionEventually(mcpd, want) {
    const deadline = Date.now() + WAIT;
    let last;
    while (Date.now() < deadline) {
      last = await mcpd.request('tools/call', { name: 'version', arguments: {} });
      if (last.result && resultText(last.result).trim() === want) return;
      await sleep(100);
    }
    assert.fail(`version never became ${want}; last answer ${JSON.stringify(last)}`);
  }

  test('replacing a plugin (rename) reloads it and announces list_changed', { timeout: 60000 }, async (t) => {
    const dir = await makePluginDir([{ name: 'reload_v1', as: 'reload.so' }]);
    const mcpd = await start(t, dir, [], { watch: true });
    assert.equal(resultText(await mcpd.callTool('version', {})).trim(), '1');
    await install(dir, 'reload_v2', 'reload.so');
    await mcpd.notification('notifications/tools/list_changed', { timeout: WAIT });
    await versionEventually(mcpd, '2');
    assert.ok((await toolNames(mcpd)).includes('v2_only'));
    assert.deepEqual(protocolProblems(mcpd), []);
  });

  test('overwriting a plugin in place reloads it without crashing', { timeout: 60000 }, async (t) => {
    const dir = await makePluginDir([{ name: 'reload_v1', as: 'reload.so' }]);
    const mcpd = await start(t, dir, [], { watch: true });
    assert.equal(resultText(await mcpd.callTool('version', {})).trim(), '1');
    await fsp.copyFile(pluginPath('reload_v2'), path.join(dir, 'reload.so'));
    await versionEventually(mcpd, '2');
    assert.deepEqual(await mcpd.ping(), {});
    assert.equal(mcpd.exitCode, undefined, 'mcpd exited');
  });

  test('adding and removing plugin files adds and removes their tools', { timeout: 60000 }, async (t) => {
    const dir = await makePluginDir(['calc']);
    const mcpd = await start(t, dir, [], { watch: true });
    assert.deepEqual(await toolNames(mcpd), ['calculate']);
    await install(dir, 'echo', 'echo.so');
    await mcpd.notification('notifications/tools/list_changed', { timeout: WAIT });
    assert.deepEqual((await toolNames(mcpd)).sort(), ['calculate', 'echo']);
    assert.equal(resultText(await mcpd.callTool('echo', { text: 'new' })), 'new');
    await fsp.unlink(path.join(dir, 'echo.so'));
    await mcpd.notification('notifications/tools/list_changed', { timeout: WAIT });
    assert.deepEqual(await toolNames(mcpd), ['calculate']);
    const gone = await mcpd.request('tools/call', { name: 'echo', arguments: { text: 'x' } });
    assert.equal(gone.error?.code, -32602, JSON.stringify(gone));
  });

  test('a call in flight survives the removal of its plugin', { timeout: 60000 }, async (t) => {
    const dir = await makePluginDir(['good', 'calc']);
    const mcpd = await start(t, dir, [], { watch: true });
    await mcpd.write({ jsonrpc: '2.0', id: 'survivor', method: 'tools/call', params: { name: 'slow', arguments: { ms: 1500 } } });
    await sleep(200);
    await fsp.unlink(path.join(dir, 'good.so'));
    await mcpd.notification('notifications/tools/list_changed', { timeout: WAIT });
    const res = await mcpd.response('survivor', { timeout: WAIT });
    assert.ok('result' in res, JSON.stringify(res));
    assert.notEqual(res.result.isError, true, JSON.stringify(res));
    assert.deepEqual(await toolNames(mcpd), ['calculate']);
    assert.deepEqual(await mcpd.ping(), {});
  });

  test('--no-watch ignores changes', { timeout: 30000 }, async (t) => {
    const dir = await makePluginDir(['calc']);
    const mcpd = await start(t, dir);
    await install(dir, 'echo', 'echo.so');
    await sleep(1500);
    assert.deepEqual(await toolNames(mcpd), ['calculate']);
    assert.ok(!mcpd.notifications.some((n) => n.method === 'notifications/tools/list_changed'));
  });
});
