// SPDX-License-Identifier: MIT
// What a plugin author and a client's user run at a shell: `mcpd install`
// and `mcpd uninstall` against each client's config file in its real
// format (other servers, unrelated keys, numbers written their own way),
// `mcpd new` refusals, and a C++ plugin (examples/hello-cpp) served to the
// official SDK client.  tests/new.sh walks the whole five-minute path
// against an installed mcpd.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MCPD_BIN, makePluginDir, makeTempDir, pluginPath } from './lib.mjs';

/** Runs `mcpd ARGS` to its end: {status, stdout, stderr}. */
function mcpd(args, env = {}) {
  const r = spawnSync(MCPD_BIN, args, {
    encoding: 'utf8',
    env: { ...process.env, XDG_CONFIG_HOME: '', ...env },
    timeout: 10000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const SELF = fs.realpathSync(MCPD_BIN);

/** Each client: its file under $HOME, the servers key, a config as it
 * writes them, and the entry mcpd adds (with args ["--in-process"]). */
const CLIENTS = {
  'claude-desktop': {
    file: '.config/Claude/claude_desktop_config.json',
    key: 'mcpServers',
    text: `{
  "globalShortcut": "Ctrl+Alt+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/Desktop"]
    }
  },
  "scale": 1.50
}
`,
    entry: { command: SELF, args: ['--in-process'] },
  },
  cursor: {
    file: '.cursor/mcp.json',
    key: 'mcpServers',
    text: `{"mcpServers":{"github":{"url":"https://api.example.com/mcp/","headers":{"Authorization":"Bearer \${env:GH}"}}}}`,
    entry: { command: SELF, args: ['--in-process'] },
  },
  vscode: {
    file: '.config/Code/User/mcp.json',
    key: 'servers',
    text: `{
  "inputs": [
    { "type": "promptString", "id": "api-key", "description": "API key", "password": true }
  ],
  "servers": {
    "fetch": { "type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"] }
  }
}
`,
    entry: { type: 'stdio', command: SELF, args: ['--in-process'] },
  },
  'claude-code': {
    file: '.claude.json',
    key: 'mcpServers',
    text: `{
  "numStartups": 42,
  "userID": "0123abcd",
  "projects": { "/home/me/app": { "mcpServers": {}, "allowedTools": [] } },
  "mcpServers": { "other": { "type": "http", "url": "http://127.0.0.1:9000/mcp" } },
  "tipsHistory": { "new-user": 3 }
}
`,
    entry: { type: 'stdio', command: SELF, args: ['--in-process'], env: {} },
  },
  gemini: {
    file: '.gemini/settings.json',
    key: 'mcpServers',
    text: `{
  "theme": "GitHub",
  "mcpServers": {
    "py": { "command": "python", "args": ["-m", "server"], "cwd": "./srv", "timeout": 30000 }
  },
  "contextFileName": "GEMINI.md"
}
`,
    entry: { command: SELF, args: ['--in-process'] },
  },
};

/** HOME with the client's config in place (mode 0640); its path. */
async function home(client) {
  const dir = await makeTempDir('mcpd-install-');
  const file = path.join(dir, CLIENTS[client].file);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, CLIENTS[client].text, { mode: 0o640 });
  fs.chmodSync(file, 0o640);
  return { dir, file };
}

describe('mcpd install and uninstall', () => {
  for (const [client, c] of Object.entries(CLIENTS)) {
    test(`${client}: its documented file, every other key kept, one entry, then removed`, async () => {
      const { dir, file } = await home(client);
      const before = JSON.parse(c.text);
      const r = mcpd(['install', client, '--', '--in-process'], { HOME: dir });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`Added "mcpd" in .*${c.file.replace(/\./g, '\\.')}`));
      const after = JSON.parse(fs.readFileSync(file, 'utf8'));
      const want = { ...before, [c.key]: { ...before[c.key], mcpd: c.entry } };
      assert.deepEqual(after, want);
      // Order kept, the new entry last.
      assert.deepEqual(Object.keys(after), Object.keys(want));
      assert.deepEqual(Object.keys(after[c.key]), Object.keys(want[c.key]));
      // Same mode, and the previous file beside it, byte for byte.
      assert.equal(fs.statSync(file).mode & 0o777, 0o640);
      assert.equal(fs.readFileSync(`${file}.mcpd-backup`, 'utf8'), c.text);

      // Twice: still one entry, the same file.
      const text = fs.readFileSync(file, 'utf8');
      assert.equal(mcpd(['install', client, '--', '--in-process'], { HOME: dir }).status, 0);
      assert.equal(fs.readFileSync(file, 'utf8'), text);

      const u = mcpd(['uninstall', client], { HOME: dir });
      assert.equal(u.status, 0, u.stderr);
      const removed = JSON.parse(fs.readFileSync(file, 'utf8'));
      assert.deepEqual(removed, before);
      assert.deepEqual(Object.keys(removed), Object.keys(before));
      // Nothing left to remove is no error, and writes nothing.
      const again = mcpd(['uninstall', client], { HOME: dir });
      assert.equal(again.status, 0);
      assert.match(again.stdout, /nothing to remove/);
    });
  }

  test('numbers, non-ASCII text and slashes come back as they were written', async () => {
    const dir = await makeTempDir('mcpd-install-');
    const file = path.join(dir, 'c.json');
    fs.writeFileSync(file, '{"a": 1.50, "b": 12345678901234567890, "c": "héllo ✓", "d": "a/b", "e": 1e3}\n');
    assert.equal(mcpd(['install', 'cursor', '--config', file]).status, 0);
    const text = fs.readFileSync(file, 'utf8');
    for (const s of ['"a": 1.50', '"b": 12345678901234567890', '"c": "héllo ✓"', '"d": "a/b"', '"e": 1e3'])
      assert.ok(text.includes(s), `${s} in ${text}`);
  });

  test('--name, --dry-run, and a new file made private', async () => {
    const dir = await makeTempDir('mcpd-install-');
    const file = path.join(dir, 'sub', 'new.json');
    const dry = mcpd(['install', 'gemini', '--config', file, '--name', 'tools', '--dry-run', '--', '--isolate']);
    assert.equal(dry.status, 0, dry.stderr);
    assert.deepEqual(JSON.parse(dry.stdout), { mcpServers: { tools: { command: SELF, args: ['--isolate'] } } });
    assert.equal(fs.existsSync(file), false, '--dry-run writes nothing');
    assert.equal(mcpd(['install', 'gemini', '--config', file, '--name', 'tools']).status, 0);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(fs.existsSync(`${file}.mcpd-backup`), false, 'no backup of a file that was not there');
  });

  test('a file that is not JSON is left untouched, and the error says where', async () => {
    const dir = await makeTempDir('mcpd-install-');
    const file = path.join(dir, 'broken.json');
    const text = '{\n  "mcpServers": {\n    "a": {"command": "x" "args": []}\n  }\n}\n';
    fs.writeFileSync(file, text);
    const r = mcpd(['install', 'claude-desktop', '--config', file]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /broken\.json is not valid JSON: line 3, column \d+/);
    assert.equal(fs.readFileSync(file, 'utf8'), text);
    assert.deepEqual(fs.readdirSync(dir), ['broken.json']);
    const notObject = path.join(dir, 'array.json');
    fs.writeFileSync(notObject, '[]');
    assert.equal(mcpd(['install', 'cursor', '--config', notObject]).status, 1);
    const wrongShape = path.join(dir, 'shape.json');
    fs.writeFileSync(wrongShape, '{"mcpServers": []}');
    const w = mcpd(['install', 'cursor', '--config', wrongShape]);
    assert.equal(w.status, 1);
    assert.match(w.stderr, /"mcpServers" in .* is not an object/);
  });

  test('a config that is a symbolic link stays one', async () => {
    const dir = await makeTempDir('mcpd-install-');
    const real = path.join(dir, 'dotfiles-cursor.json');
    fs.writeFileSync(real, '{"mcpServers": {}}');
    fs.mkdirSync(path.join(dir, '.cursor'));
    fs.symlinkSync(real, path.join(dir, '.cursor', 'mcp.json'));
    assert.equal(mcpd(['install', 'cursor'], { HOME: dir }).status, 0);
    assert.ok(fs.lstatSync(path.join(dir, '.cursor', 'mcp.json')).isSymbolicLink());
    assert.ok(JSON.parse(fs.readFileSync(real, 'utf8')).mcpServers.mcpd);
  });

  test('usage errors: an unknown client, a missing one, a stray option', () => {
    for (const args of [['install', 'emacs'], ['install'], ['uninstall', 'cursor', '--dry-run'], ['install', 'cursor', '-x']]) {
      const r = mcpd(args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /usage: mcpd (un)?install CLIENT/);
    }
  });
});

describe('the entry mcpd install writes', () => {
  test('is what a real client runs: the SDK client started from it lists the default plugins', async (t) => {
    const dir = await makeTempDir('mcpd-client-home-');
    // A plugin where mcpd looks by default, as `make install` puts it.
    const plugins = path.join(dir, '.local', 'share', 'mcpd', 'plugins');
    fs.mkdirSync(plugins, { recursive: true, mode: 0o755 });
    for (let d = plugins; d !== dir; d = path.dirname(d)) fs.chmodSync(d, 0o755);
    fs.copyFileSync(pluginPath('echo'), path.join(plugins, 'echo.so'));
    fs.chmodSync(path.join(plugins, 'echo.so'), 0o644);
    const env = { ...process.env, HOME: dir, XDG_CONFIG_HOME: '', XDG_DATA_HOME: '', MCPD_PLUGIN_PATH: '' };
    assert.equal(mcpd(['install', 'claude-desktop', '--', '--no-watch'], env).status, 0);
    const config = JSON.parse(fs.readFileSync(path.join(dir, CLIENTS['claude-desktop'].file), 'utf8'));
    const entry = config.mcpServers.mcpd;
    delete env.XDG_CONFIG_HOME;
    delete env.XDG_DATA_HOME;
    delete env.MCPD_PLUGIN_PATH;
    const client = new Client({ name: 'mcpd-e2e-configured', version: '0.0.0' });
    t.after(() => client.close());
    await client.connect(new StdioClientTransport({ command: entry.command, args: entry.args, env, stderr: 'pipe' }));
    const { tools } = await client.listTools();
    assert.ok(tools.some((x) => x.name === 'echo'), JSON.stringify(tools.map((x) => x.name)));
    const result = await client.callTool({ name: 'echo', arguments: { text: 'from the config' } });
    assert.equal(result.content[0].text, 'from the config');
  });
});

describe('mcpd new', () => {
  test('refuses names that are not C identifiers, and never overwrites', async () => {
    const dir = await makeTempDir('mcpd-new-');
    for (const bad of ['1st', 'my-plugin', 'a.b', 'x'.repeat(65)]) {
      const r = mcpd(['new', bad, '--dir', dir]);
      assert.equal(r.status, 2, bad);
      assert.match(r.stderr, /is not a C identifier/);
    }
    assert.deepEqual(fs.readdirSync(dir), []);
    assert.equal(mcpd(['new', 'demo', '--dir', dir]).status, 0);
    assert.deepEqual(fs.readdirSync(path.join(dir, 'demo')).sort(), ['Makefile', 'README.md', 'demo.c']);
    fs.writeFileSync(path.join(dir, 'demo', 'demo.c'), '/* mine */');
    const again = mcpd(['new', 'demo', '--dir', dir]);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /never overwritten/);
    assert.equal(fs.readFileSync(path.join(dir, 'demo', 'demo.c'), 'utf8'), '/* mine */');
  });
});

describe('a C++ plugin (examples/hello-cpp)', () => {
  test('is served to the SDK client like a C one', async (t) => {
    const dir = await makePluginDir(['hello_cpp']);
    const transport = new StdioClientTransport({ command: MCPD_BIN, args: ['--plugins', dir, '--no-watch'], stderr: 'pipe' });
    const client = new Client({ name: 'mcpd-e2e-cpp', version: '0.0.0' });
    t.after(() => client.close());
    await client.connect(transport);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((x) => x.name), ['hello_cpp']);
    const result = await client.callTool({ name: 'hello_cpp', arguments: { name: 'World' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello, World!' }]);
  });
});
