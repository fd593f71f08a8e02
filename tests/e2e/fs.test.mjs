// SPDX-License-Identifier: MIT
// The bundled fs plugin driven by the official MCP TypeScript SDK client, as
// Claude Desktop or the MCP Inspector would drive it: the files it lists as
// resources, reads through resources and through its file:///{+path}
// template, path completion, its tools, subscriptions -- and, above all,
// that nothing outside the configured roots is ever read or written,
// whether reached by "..", an absolute path, a symbolic link (also one
// swapped in while mcpd resolves the path) or a FIFO.  Without configured
// roots it serves each client the roots that client declared
// (roots/list), under the same containment, and follows their changes.

import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ListRootsRequestSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { configFile, makePluginDir, makeTempDir, MCPD, resultText, runMcpd, sleep, track, until, withTimeout } from './lib.mjs';

const SECRET = 'TOP SECRET: outside the roots';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  'base64',
);
const BINARY = Buffer.from([0, 1, 2, 0xfe, 0xff, 0x80]);
const TEMPLATE = 'file:///{+path}';

/** file:// URI of an absolute path, percent-encoded as RFC 3986 asks:
 * everything but unreserved characters and '/'. */
function fileUri(p) {
  const seg = (s) =>
    encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `file://${p.split('/').map(seg).join('/')}`;
}

/**
 * The tree every test serves:
 *
 *   base/root/            the one root
 *     hello.txt           text
 *     space name.txt      a name that must be percent-encoded
 *     blob.bin            binary
 *     pixel.png           an image
 *     notes/todo.md
 *     notes/deep/nested.txt
 *     notes/.hidden
 *     inlink -> hello.txt              a link that stays inside
 *     escape -> ../outside/secret.txt  a link that leads out
 *     linkdir -> ../outside            a directory link that leads out
 *     abslink -> base/root/hello.txt   absolute: openat2 refuses it too
 *     fifo                             would block a reader forever
 *   base/outside/secret.txt            what must never be read
 */
async function makeTree() {
  const base = fs.realpathSync(await makeTempDir('mcpd-fs-'));
  const root = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  await fsp.mkdir(path.join(root, 'notes', 'deep'), { recursive: true });
  await fsp.mkdir(outside);
  await fsp.writeFile(path.join(outside, 'secret.txt'), SECRET);
  await fsp.writeFile(path.join(root, 'hello.txt'), 'hello, world\n');
  await fsp.writeFile(path.join(root, 'space name.txt'), 'spaced out\n');
  await fsp.writeFile(path.join(root, 'blob.bin'), BINARY);
  await fsp.writeFile(path.join(root, 'pixel.png'), PNG);
  await fsp.writeFile(path.join(root, 'notes', 'todo.md'), '- buy milk\n');
  await fsp.writeFile(path.join(root, 'notes', 'deep', 'nested.txt'), 'nested\n');
  await fsp.writeFile(path.join(root, 'notes', '.hidden'), 'hidden\n');
  await fsp.symlink('hello.txt', path.join(root, 'inlink'));
  await fsp.symlink('../outside/secret.txt', path.join(root, 'escape'));
  await fsp.symlink('../outside', path.join(root, 'linkdir'));
  await fsp.symlink(path.join(root, 'hello.txt'), path.join(root, 'abslink'));
  execFileSync('mkfifo', [path.join(root, 'fifo')]);
  return { base, root, outside };
}

/** An SDK client connected to a fresh mcpd serving the fs plugin with
 * `config` as its plugin config (undefined: no --config at all).  With
 * `roots` (a function returning the roots/list array) the client declares
 * roots, with listChanged, and answers roots/list with what it returns. */
async function connect(t, config, { roots } = {}) {
  const dir = await makePluginDir(['fs']);
  const args = ['--plugins', dir, '--no-watch'];
  if (config !== undefined) args.push('--config', await configFile({ plugins: { fs: config } }));
  const transport = new StdioClientTransport({ command: MCPD, args, env: process.env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d;
  });
  const client = new Client(
    { name: 'mcpd-e2e-fs', version: '0.0.0' },
    roots ? { capabilities: { roots: { listChanged: true } } } : undefined,
  );
  if (roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: await roots() }));
  t.after(async () => {
    await client.close().catch(() => {});
    // Under ASan, UBSan or TSan (setup.sh --asan, --tsan) a leak, an error
    // or a race in the plugin is reported here, when mcpd exits.
    assert.doesNotMatch(stderr, /Sanitizer|runtime error:/, `mcpd stderr:\n${stderr}`);
  });
  await withTimeout(client.connect(transport), 10000, 'SDK client connect');
  return { client, stderr: () => stderr };
}

async function call(client, name, args) {
  return withTimeout(client.callTool({ name, arguments: args }), 10000, `tools/call ${name}`);
}

/** Asserts that a resources/read is refused with -32002 (not found). */
async function assertReadRefused(client, uri) {
  await assert.rejects(
    withTimeout(client.readResource({ uri }), 10000, `resources/read ${uri}`),
    (err) => {
      assert.ok(err instanceof McpError, `not an McpError: ${err}`);
      assert.equal(err.code, -32002, `${uri}: ${err.message}`);
      assert.ok(!err.message.includes(SECRET));
      return true;
    },
  );
}

/** Asserts an isError tool result whose text matches `pattern`. */
function assertToolError(result, pattern) {
  assert.equal(result.isError, true, `expected an error, got ${JSON.stringify(result)}`);
  const text = resultText(result);
  assert.match(text, pattern);
  assert.ok(!JSON.stringify(result).includes(SECRET), 'the secret leaked');
}

let tree;
before(async () => {
  tree = await makeTree();
});

describe('fs: resources', () => {
  test('resources/list shows the readable files under the root, breadth first', async (t) => {
    const { client } = await connect(t, { roots: [tree.root] });
    const { resources } = await client.listResources();
    const byName = Object.fromEntries(resources.map((r) => [r.name, r]));
    assert.deepEqual(resources.map((r) => r.name), [
      'blob.bin',
      'hello.txt',
      'pixel.png',
      'space name.txt',
      'notes/.hidden',
      'notes/todo.md',
      'notes/deep/nested.txt',
    ]);
    assert.equal(byName['hello.txt'].uri, fileUri(path.join(tree.root, 'hello.txt')));
    assert.equal(byName['hello.txt'].mimeType, 'text/plain');
    assert.equal(byName['space name.txt'].uri, `file://${tree.root}/space%20name.txt`);
    assert.equal(byName['notes/todo.md'].mimeType, 'text/markdown');
    assert.equal(byName['pixel.png'].mimeType, 'image/png');
    // Links, the FIFO and what lies outside are not listed.
    for (const r of resources) assert.ok(r.uri.startsWith(`file://${tree.root}/`), r.uri);
  });

  test('max_listed bounds the list', async (t) => {
    const { client } = await connect(t, { roots: [tree.root], max_listed: 2 });
    const { resources } = await client.listResources();
    assert.deepEqual(
      resources.map((r) => r.name),
      ['blob.bin', 'hello.txt'],
    );
  });

  test('resources/read returns text as text and binary as a base64 blob', async (t) => {
    const { client } = await connect(t, { roots: [tree.root] });
    const uri = fileUri(path.join(tree.root, 'hello.txt'));
    assert.deepEqual((await client.readResource({ uri })).contents, [
      { uri, mimeType: 'text/plain', text: 'hello, world\n' },
    ]);
    const spaced = `file://${tree.root}/space%20name.txt`;
    assert.equal((await client.readResource({ uri: spaced })).contents[0].text, 'spaced out\n');

    const bin = fileUri(path.join(tree.root, 'blob.bin'));
    const [content] = (await client.readResource({ uri: bin })).contents;
    assert.equal(content.mimeType, 'application/octet-stream');
    assert.deepEqual(Buffer.from(content.blob, 'base64'), BINARY);

    const png = fileUri(path.join(tree.root, 'pixel.png'));
    const [image] = (await client.readResource({ uri: png })).contents;
    assert.equal(image.mimeType, 'image/png');
    assert.deepEqual(Buffer.from(image.blob, 'base64'), PNG);
  });

  test('a file over max_read_bytes is refused with a clear message', async (t) => {
    const { client } = await connect(t, { roots: [tree.root], max_read_bytes: 5 });
    await assert.rejects(client.readResource({ uri: fileUri(path.join(tree.root, 'hello.txt')) }), (err) => {
      assert.equal(err.code, -32603);
      assert.match(err.message, /13 bytes, more than this server's max_read_bytes \(5\)/);
      return true;
    });
  });

  test('the template reads files that are not listed, and directories', async (t) => {
    const { client } = await connect(t, { roots: [tree.root], max_listed: 1 });
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.equal(resourceTemplates.length, 1);
    assert.equal(resourceTemplates[0].uriTemplate, TEMPLATE);
    assert.equal(resourceTemplates[0].name, 'file');
    assert.match(resourceTemplates[0].description, /any file/);

    const nested = fileUri(path.join(tree.root, 'notes', 'deep', 'nested.txt'));
    const { resources } = await client.listResources();
    assert.ok(!resources.some((r) => r.uri === nested), 'nested.txt should not be listed');
    assert.deepEqual((await client.readResource({ uri: nested })).contents, [
      { uri: nested, mimeType: 'text/plain', text: 'nested\n' },
    ]);
    // An in-root link is followed (openat2 keeps it beneath the root).
    const inlink = fileUri(path.join(tree.root, 'inlink'));
    assert.equal((await client.readResource({ uri: inlink })).contents[0].text, 'hello, world\n');

    const dir = fileUri(path.join(tree.root, 'notes'));
    assert.deepEqual((await client.readResource({ uri: dir })).contents, [
      { uri: dir, mimeType: 'inode/directory', text: '.hidden\ndeep/\ntodo.md\n' },
    ]);
  });

  test('completion/complete completes the template path', async (t) => {
    const { client } = await connect(t, { roots: [tree.root] });
    const ref = { type: 'ref/resource', uri: TEMPLATE };
    const rel = tree.root.slice(1); // the template supplies the first '/'
    const complete = async (value) =>
      (await client.complete({ ref, argument: { name: 'path', value } })).completion;

    // Above the roots: the roots themselves.
    assert.deepEqual((await complete('')).values, [`${rel}/`]);
    assert.deepEqual((await complete(rel.slice(0, -2))).values, [`${rel}/`]);
    // Inside: entries that begin with the last component; directories end in '/'.
    assert.deepEqual((await complete(`${rel}/no`)).values, [`${rel}/notes/`]);
    assert.deepEqual((await complete(`${rel}/notes/`)).values, [`${rel}/notes/deep/`, `${rel}/notes/todo.md`]);
    // Dot files once a '.' is typed.
    assert.deepEqual((await complete(`${rel}/notes/.`)).values, [`${rel}/notes/.hidden`]);
    const all = (await complete(`${rel}/`)).values;
    assert.ok(all.includes(`${rel}/hello.txt`) && all.includes(`${rel}/space name.txt`), JSON.stringify(all));
    assert.deepEqual((await complete(`${rel}/zzz`)).values, []);
    // Never anything outside.
    assert.deepEqual((await complete(`${path.dirname(tree.root).slice(1)}/outs`)).values, []);
  });
});

describe('fs: tools', () => {
  test('read-only by default: four tools with read-only annotations, no write_file', async (t) => {
    const { client } = await connect(t, { roots: [tree.root] });
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((x) => x.name).sort(), ['list_directory', 'read_file', 'search', 'stat']);
    for (const tool of tools) {
      assert.equal(tool.annotations?.readOnlyHint, true, tool.name);
      assert.equal(tool.annotations?.destructiveHint, false, tool.name);
      assert.equal(tool.annotations?.openWorldHint, false, tool.name);
      assert.equal(tool.inputSchema.type, 'object');
      assert.ok(tool.inputSchema.required.includes('path'), tool.name);
      assert.ok(tool.description.length > 40, tool.name);
    }
    const stat = tools.find((x) => x.name === 'stat');
    assert.equal(stat.outputSchema?.type, 'object');
  });

  test('list_directory lists entries with their types, sorted', async (t) => {
    const { client } = await connect(t, { roots: [tree.root] });
    const text = resultText(await call(client, 'list_directory', { path: 'notes' }));
    assert.equal(
      text,
      `${tree.root}/notes: 3 entries\n[file] .hidden (7 bytes)\n[directory] deep/\n[file] todo.md (11 bytes)\n`,
    );
    const top = resultText(await call(client, 'list_directory', { path: '.' }));
    assert.match(top, /\[symlink\] escape -> \.\.\/outside\/secret\.txt\n/);
    assert.match(top, /\[fifo\] fifo\n/);
    assert.match(top, /\[directory\] notes\/\n/);
    // Absolute paths under the root work too.
    const abs = resultText(await call(client, 'list_directory', { path: path.join(tree.root, 'notes', 'deep') }));
    assert.match(abs, /nested\.txt \(7 bytes\)/);
    assertToolError(await call(client, 'list_directory', { path: 'hello.txt' }), /not a directory/);
  });

  test('read_file returns text, ranges, images and binary blobs', async (t) => {
    const { client } = await connect(t, { roots: [tree.root] });
    const hello = await call(client, 'read_file', { path: 'hello.txt' });
    assert.deepEqual(hello.content, [{ type: 'text', text: 'hello, world\n' }]);
    assert.ok(!hello.isError);

    const part = await call(client, 'read_file', { path: 'hello.txt', offset: 7, length: 5 });
    assert.equal(part.content[0].text, 'world');
    assert.match(part.content[1].text, /bytes 7 to 12 of 13; read on with offset 12/);

    const image = await call(client, 'read_file', { path: 'pixel.png' });
    assert.deepEqual(image.content, [{ type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' }]);

    const bin = await call(client, 'read_file', { path: 'blob.bin' });
    assert.match(bin.content[0].text, /binary/);
    assert.equal(bin.content[1].type, 'resource');
    assert.equal(bin.content[1].resource.uri, fileUri(path.join(tree.root, 'blob.bin')));
    assert.deepEqual(Buffer.from(bin.content[1].resource.blob, 'base64'), BINARY);

    assertToolError(await call(client, 'read_file', { path: 'notes' }), /is a directory/);
    assertToolError(await call(client, 'read_file', { path: 'missing.txt' }), /no such file/);
  });

  test('read_file cuts at max_read_bytes and says how to read on', async (t) => {
    const { client } = await connect(t, { roots: [tree.root], max_read_bytes: 5 });
    const r = await call(client, 'read_file', { path: 'hello.txt' });
    assert.equal(r.content[0].text, 'hello');
    assert.match(r.content[1].text, /bytes 0 to 5 of 13; read on with offset 5/);
  });

  test('stat returns structured content that matches its output schema', async (t) => {
    const { client } = await connect(t, { roots: [tree.root] });
    const r = await call(client, 'stat', { path: 'hello.txt' });
    const s = r.structuredContent;
    assert.equal(s.path, path.join(tree.root, 'hello.txt'));
    assert.equal(s.type, 'file');
    assert.equal(s.size, 13);
    assert.match(s.mode, /^0[0-7]{3}$/);
    assert.match(s.mtime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const mtime = fs.statSync(path.join(tree.root, 'hello.txt')).mtime;
    assert.equal(s.mtime, `${mtime.toISOString().slice(0, 19)}Z`);
    assert.match(resultText(r), /type: file\nsize: 13\n/);

    const link = (await call(client, 'stat', { path: 'escape' })).structuredContent;
    assert.equal(link.type, 'symlink');
    assert.equal(link.target, '../outside/secret.txt');
    assert.equal((await call(client, 'stat', { path: 'notes' })).structuredContent.type, 'directory');
    // A FIFO is described without being opened.
    assert.equal((await call(client, 'stat', { path: 'fifo' })).structuredContent.type, 'fifo');
  });

  test('search matches names by glob and paths by substring, bounded', async (t) => {
    const { client } = await connect(t, { roots: [tree.root] });
    assert.equal(
      resultText(await call(client, 'search', { path: '.', pattern: '*.txt' })),
      `3 matches for '*.txt' under ${tree.root}:\nhello.txt\nspace name.txt\nnotes/deep/nested.txt\n`,
    );
    assert.equal(
      resultText(await call(client, 'search', { path: 'notes', pattern: 'deep/', mode: 'substring' })),
      `1 match for 'deep/' under ${tree.root}/notes:\ndeep/nested.txt\n`,
    );
    // Links are not followed: the secret behind linkdir is not found.
    assert.match(
      resultText(await call(client, 'search', { path: '.', pattern: 'secret*' })),
      /^No glob matches for 'secret\*'/,
    );
    const { client: small } = await connect(t, { roots: [tree.root], max_results: 2 });
    const cut = resultText(await call(small, 'search', { path: '.', pattern: '*' }));
    assert.match(cut, /^2 matches/);
    assert.match(cut, /truncated: stopped at max_results = 2/);
  });

  test('write_file is offered only with "write": true, and writes atomically', async (t) => {
    const work = path.join(tree.base, 'writable');
    await fsp.mkdir(work, { recursive: true });
    await fsp.writeFile(path.join(work, 'keep.txt'), 'old');
    await fsp.chmod(path.join(work, 'keep.txt'), 0o600);
    await fsp.symlink('../outside/secret.txt', path.join(work, 'escape'));
    await fsp.symlink('../outside', path.join(work, 'linkdir'));

    const { client } = await connect(t, { roots: [work], write: true });
    const { tools } = await client.listTools();
    const write = tools.find((x) => x.name === 'write_file');
    assert.ok(write, 'write_file not listed');
    assert.equal(write.annotations?.readOnlyHint, false);
    assert.equal(write.annotations?.destructiveHint, true);
    assert.deepEqual(write.inputSchema.required, ['path', 'content']);

    const created = await call(client, 'write_file', { path: 'new.txt', content: 'fresh ✓\n' });
    assert.ok(!created.isError, resultText(created));
    assert.match(resultText(created), /^Created .*new\.txt \(10 bytes\)$/);
    assert.equal(await fsp.readFile(path.join(work, 'new.txt'), 'utf8'), 'fresh ✓\n');

    const replaced = await call(client, 'write_file', { path: path.join(work, 'keep.txt'), content: 'new' });
    assert.match(resultText(replaced), /^Replaced /);
    assert.equal(await fsp.readFile(path.join(work, 'keep.txt'), 'utf8'), 'new');
    assert.equal(fs.statSync(path.join(work, 'keep.txt')).mode & 0o777, 0o600, 'permissions kept');

    assertToolError(await call(client, 'write_file', { path: 'a/b/c.txt', content: 'x' }), /create_dirs/);
    const deep = await call(client, 'write_file', { path: 'a/b/c.txt', content: 'x', create_dirs: true });
    assert.ok(!deep.isError, resultText(deep));
    assert.equal(await fsp.readFile(path.join(work, 'a', 'b', 'c.txt'), 'utf8'), 'x');

    // No temporary files are left behind.
    assert.deepEqual((await fsp.readdir(work)).filter((n) => n.startsWith('.')), []);

    // Nothing outside is written, by any route.
    assertToolError(await call(client, 'write_file', { path: 'escape', content: 'pwned' }), /symlink/);
    assertToolError(await call(client, 'write_file', { path: 'linkdir/secret.txt', content: 'pwned' }), /outside/);
    assertToolError(
      await call(client, 'write_file', { path: 'linkdir/new/x', content: 'pwned', create_dirs: true }),
      /outside/,
    );
    assertToolError(await call(client, 'write_file', { path: '../outside/secret.txt', content: 'pwned' }), /outside/);
    assertToolError(
      await call(client, 'write_file', { path: path.join(tree.outside, 'new.txt'), content: 'pwned' }),
      /outside the allowed roots/,
    );
    assertToolError(await call(client, 'write_file', { path: 'a', content: 'x' }), /is a directory/);
    assert.equal(await fsp.readFile(path.join(tree.outside, 'secret.txt'), 'utf8'), SECRET);
    assert.deepEqual(await fsp.readdir(tree.outside), ['secret.txt']);
  });
});

for (const useOpenat2 of [true, false]) {
  describe(`fs: containment (${useOpenat2 ? 'openat2' : 'component walk'})`, () => {
    const config = () => ({ roots: [tree.root], use_openat2: useOpenat2 });

    test('"..", absolute paths and links that lead out are refused', async (t) => {
      const { client } = await connect(t, config());
      // openat2 refuses links that leave the root; the walk refuses every link.
      const linkOut = useOpenat2 ? /leads outside/ : /symbolic link/;
      const attempts = [
        ['../outside/secret.txt', /outside the allowed roots/],
        ['notes/../../outside/secret.txt', /outside the allowed roots/],
        [path.join(tree.outside, 'secret.txt'), /outside the allowed roots/],
        [`${tree.root}/../outside/secret.txt`, /outside the allowed roots/],
        ['/etc/passwd', /outside the allowed roots/],
        ['escape', linkOut],
        ['linkdir/secret.txt', linkOut],
        ['abslink', linkOut],
      ];
      for (const [p, pattern] of attempts) {
        assertToolError(await call(client, 'read_file', { path: p }), pattern);
        assertToolError(await call(client, 'list_directory', { path: p }), pattern);
      }
      assertToolError(await call(client, 'list_directory', { path: 'linkdir' }), linkOut);
      assertToolError(await call(client, 'search', { path: 'linkdir', pattern: '*' }), linkOut);
      assertToolError(await call(client, 'stat', { path: 'linkdir/secret.txt' }), linkOut);
      // The error says where the model may look instead.
      const refusal = resultText(await call(client, 'read_file', { path: '/etc/passwd' }));
      assert.match(refusal, new RegExp(`Allowed roots: ${tree.root}$`));

      for (const p of [
        path.join(tree.outside, 'secret.txt'),
        path.join(tree.root, 'escape'),
        path.join(tree.root, 'linkdir', 'secret.txt'),
        path.join(tree.root, 'linkdir'),
        path.join(tree.root, 'abslink'),
      ]) {
        await assertReadRefused(client, fileUri(p));
      }
      // Dot segments in a URI cannot climb out either.
      await assertReadRefused(client, `file://${tree.root}/../outside/secret.txt`);
      await assertReadRefused(client, `file://${tree.root}/%2e%2e/outside/secret.txt`);
      await assertReadRefused(client, 'file://otherhost/etc/passwd');
    });

    test(`links that stay inside are ${useOpenat2 ? 'followed' : 'refused'}`, async (t) => {
      const { client } = await connect(t, config());
      const r = await call(client, 'read_file', { path: 'inlink' });
      if (useOpenat2) assert.equal(resultText(r), 'hello, world\n');
      else assertToolError(r, /symbolic link/);
    });

    test('a FIFO is refused at once, without blocking', async (t) => {
      const { client } = await connect(t, config());
      const started = Date.now();
      assertToolError(await call(client, 'read_file', { path: 'fifo' }), /FIFO/);
      assertToolError(await call(client, 'list_directory', { path: 'fifo' }), /FIFO/);
      await assertReadRefused(client, fileUri(path.join(tree.root, 'fifo')));
      assert.ok(Date.now() - started < 5000);
      // mcpd still answers.
      assert.deepEqual(await client.ping(), {});
    });

    test('a directory swapped for an outside link during reads never leaks', async (t) => {
      // A shell loop renames a real directory and a link to the outside in
      // and out of place while the client reads through that name.
      const race = await makeTempDir('mcpd-fs-race-');
      const root = path.join(race, 'root');
      await fsp.mkdir(path.join(root, 'real'), { recursive: true });
      await fsp.mkdir(path.join(race, 'outside'));
      await fsp.writeFile(path.join(race, 'outside', 'secret.txt'), SECRET);
      await fsp.writeFile(path.join(root, 'real', 'secret.txt'), 'harmless');
      await fsp.symlink('../outside', path.join(root, 'link'));
      const swapper = track(
        spawn(
          'sh',
          [
            '-c',
            'while :; do mv -T real swap; mv -T swap real; mv -T link swap; mv -T swap link; done',
          ],
          { cwd: root, stdio: 'ignore' },
        ),
      );
      t.after(() => swapper.kill('SIGKILL'));

      const { client } = await connect(t, { roots: [root], use_openat2: useOpenat2 });
      const uri = fileUri(path.join(root, 'swap', 'secret.txt'));
      let harmless = 0;
      for (let i = 0; i < 150; i++) {
        const [tool, read] = await Promise.all([
          call(client, 'read_file', { path: 'swap/secret.txt' }),
          client.readResource({ uri }).catch((err) => ({ error: err })),
        ]);
        const seen = JSON.stringify([tool, read.error?.message ?? read]);
        assert.ok(!seen.includes(SECRET), `leaked on attempt ${i}: ${seen}`);
        if (resultText(tool) === 'harmless') harmless++;
      }
      t.diagnostic(`read the real directory ${harmless} of 150 times`);
    });
  });
}

describe('fs: subscriptions', () => {
  test('a subscribed file that changes sends notifications/resources/updated; after unsubscribe nothing', async (t) => {
    const dir = path.join(tree.base, 'watched');
    await fsp.mkdir(dir, { recursive: true });
    const file = path.join(dir, 'live.txt');
    await fsp.writeFile(file, 'one');
    const other = path.join(dir, 'other.txt');
    await fsp.writeFile(other, 'other');

    const { client } = await connect(t, { roots: [dir] });
    const updates = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    const uri = fileUri(file);
    assert.ok((await client.listResources()).resources.some((r) => r.uri === uri));
    await client.subscribeResource({ uri });

    await fsp.writeFile(file, 'two');
    await until(() => updates.length >= 1, 5000, 'the first update', 20);
    assert.deepEqual(updates, [uri], 'one write, one coalesced notification');

    // An editor's atomic save: a new file renamed over the old one.  The
    // watch moves to the new file, so later writes are still reported.
    await fsp.writeFile(`${file}.tmp`, 'three');
    await fsp.rename(`${file}.tmp`, file);
    await until(() => updates.length >= 2, 5000, 'the update after the rename', 20);
    await sleep(300);
    const n = updates.length;
    await fsp.appendFile(file, ' and four');
    await until(() => updates.length > n, 5000, 'the update of the renamed-in file', 20);
    assert.ok(updates.every((u) => u === uri), JSON.stringify(updates));
    assert.equal((await client.readResource({ uri })).contents[0].text, 'three and four');

    // Changes to files nobody subscribed to are not announced.
    await sleep(300);
    const settled = updates.length;
    await fsp.writeFile(other, 'changed');
    await sleep(400);
    assert.equal(updates.length, settled, `unsubscribed file announced: ${JSON.stringify(updates)}`);

    await client.unsubscribeResource({ uri });
    await sleep(300);
    const before = updates.length;
    await fsp.writeFile(file, 'five');
    await sleep(600);
    assert.equal(updates.length, before, `updates after unsubscribe: ${JSON.stringify(updates.slice(before))}`);
  });

  test('a template URI can be subscribed to; a file that appears later is reported', async (t) => {
    const dir = path.join(tree.base, 'later');
    await fsp.mkdir(dir, { recursive: true });
    const { client } = await connect(t, { roots: [dir] });
    const updates = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    const file = path.join(dir, 'soon.txt');
    const uri = fileUri(file);
    await client.subscribeResource({ uri });
    await fsp.writeFile(file, 'here now');
    await until(() => updates.length >= 1, 5000, 'the update for a new file', 20);
    assert.equal(updates[0], uri);
  });
});

describe('fs: configuration', () => {
  const loadError = async (config) => {
    const dir = await makePluginDir(['fs']);
    const args = ['--plugins', dir, '--no-watch', '--list'];
    if (config !== undefined) args.push('--config', await configFile({ plugins: { fs: config } }));
    const r = await runMcpd(args);
    assert.equal(r.code, 1, `--list should fail when fs does not load: ${r.stderr}`);
    const line = r.stderr.split('\n').find((l) => l.includes('fs.so') && l.includes('init failed'));
    assert.ok(line, `no load error line in:\n${r.stderr}`);
    return line;
  };

  test('unconfigured, it loads and offers its read-only tools and template for client roots', async () => {
    const dir = await makePluginDir(['fs']);
    const r = await runMcpd(['--plugins', dir, '--no-watch', '--list']);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /error/);
    assert.match(r.stderr, /no roots configured; serving each client's own roots \(read-only/);
    assert.match(r.stdout, /^fs\s+1\.0\s+/m, r.stdout);
    for (const tool of ['list_directory', 'read_file', 'search', 'stat'])
      assert.match(r.stdout, new RegExp(`^\\s+tool\\s+${tool}\\b`, 'm'), r.stdout);
    assert.doesNotMatch(r.stdout, /write_file/, r.stdout);
    assert.doesNotMatch(r.stdout, /^\s+resource\s/m, r.stdout);
    assert.match(r.stdout, /^\s+template\s+file:\/\/\/\{\+path\}/m, r.stdout);
  });

  test('a config without roots tunes the client-roots mode; write without roots or empty roots are refused', async () => {
    const dir = await makePluginDir(['fs']);
    const ok = await runMcpd([
      '--plugins', dir, '--no-watch', '--list',
      '--config', await configFile({ plugins: { fs: { max_read_bytes: 4096 } } }),
    ]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^\s+tool\s+read_file\s/m, ok.stdout);
    assert.doesNotMatch(ok.stdout, /write_file/, ok.stdout);
    assert.match(await loadError({ write: true }), /"write": true needs "roots"/);
    assert.match(await loadError({ roots: [] }), /config: "roots" must be a non-empty array/);
  });

  test('bad roots and keys are named', async () => {
    const missing = path.join(tree.base, 'does-not-exist');
    assert.match(await loadError({ roots: [missing] }), new RegExp(`roots\\[0\\] "${missing}": no such file`));
    assert.match(
      await loadError({ roots: [tree.root, path.join(tree.root, 'hello.txt')] }),
      /roots\[1\] ".*hello\.txt": not a directory/,
    );
    assert.match(await loadError({ roots: [tree.root], writable: true }), /unknown key "writable"/);
    assert.match(await loadError({ roots: [tree.root], write: 'yes' }), /"write" must be true or false/);
    assert.match(await loadError({ roots: [tree.root], max_read_bytes: 0 }), /"max_read_bytes" must be an integer/);
  });

  test('a good config loads and says what it serves', async () => {
    const dir = await makePluginDir(['fs']);
    const r = await runMcpd([
      '--plugins', dir, '--no-watch', '--list',
      '--config', await configFile({ plugins: { fs: { roots: [tree.root] } } }),
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`plugin "fs": serving ${tree.root} \\(read-only\\)`));
    assert.match(r.stderr, /serving the 1 configured root; clients' roots are ignored/);
  });
});

/** read_file of `p` until it succeeds: after notifications/roots/list_changed
 * mcpd fetches the roots again, so calls made meanwhile see the old ones. */
async function servedSoon(client, p) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const r = await call(client, 'read_file', { path: p });
    if (!r.isError || Date.now() > deadline) return r;
    await sleep(20);
  }
}

describe('fs: client roots (nothing configured)', () => {
  /** A second root, whose name needs percent-encoding in its URI. */
  let other;
  before(async () => {
    other = path.join(tree.base, 'client two');
    await fsp.mkdir(other, { recursive: true });
    await fsp.writeFile(path.join(other, 'two.txt'), 'second root\n');
  });

  test('a client with roots gets the tools and the template, served beneath its roots only', async (t) => {
    // Roots that are not local directories are skipped; the others serve.
    let roots = [
      { uri: 'https://example.com/repo', name: 'not a file' },
      { uri: fileUri(path.join(tree.base, 'does-not-exist')) },
      { uri: fileUri(tree.root), name: 'project' },
    ];
    const { client } = await connect(t, undefined, { roots: () => roots });

    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((x) => x.name).sort(), ['list_directory', 'read_file', 'search', 'stat']);
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((x) => x.uriTemplate), [TEMPLATE]);
    // No per-file resources: the roots are known per call only.
    assert.deepEqual((await client.listResources()).resources, []);

    // Served: relative paths start at the first usable root.
    assert.equal(resultText(await call(client, 'read_file', { path: 'hello.txt' })), 'hello, world\n');
    assert.equal(
      resultText(await call(client, 'read_file', { path: path.join(tree.root, 'notes', 'todo.md') })),
      '- buy milk\n',
    );
    assert.match(resultText(await call(client, 'list_directory', { path: '.' })), /\[directory\] notes\/\n/);
    assert.match(resultText(await call(client, 'search', { path: '.', pattern: '*.md' })), /^1 match .*\nnotes\/todo\.md\n/);
    assert.equal((await call(client, 'stat', { path: 'notes' })).structuredContent.type, 'directory');
    const hello = fileUri(path.join(tree.root, 'hello.txt'));
    assert.deepEqual((await client.readResource({ uri: hello })).contents, [
      { uri: hello, mimeType: 'text/plain', text: 'hello, world\n' },
    ]);
    const rel = tree.root.slice(1);
    const ref = { type: 'ref/resource', uri: TEMPLATE };
    assert.deepEqual((await client.complete({ ref, argument: { name: 'path', value: '' } })).completion.values, [
      `${rel}/`,
    ]);

    // Refused: "..", absolute paths elsewhere, links that lead out, the
    // roots that were skipped.
    for (const [p, pattern] of [
      ['../outside/secret.txt', /outside the allowed roots/],
      [path.join(tree.outside, 'secret.txt'), /outside the allowed roots\. Allowed roots: /],
      ['/etc/passwd', new RegExp(`Allowed roots: ${tree.root}$`)],
      ['escape', /leads outside/],
      ['linkdir/secret.txt', /leads outside/],
      [path.join(tree.base, 'does-not-exist'), /outside the allowed roots/],
    ]) {
      assertToolError(await call(client, 'read_file', { path: p }), pattern);
      assertToolError(await call(client, 'list_directory', { path: p }), pattern);
    }
    assertToolError(await call(client, 'search', { path: 'linkdir', pattern: '*' }), /leads outside/);
    for (const p of [path.join(tree.outside, 'secret.txt'), path.join(tree.root, 'escape'), path.join(other, 'two.txt')])
      await assertReadRefused(client, fileUri(p));
    await assertReadRefused(client, `file://${tree.root}/../outside/secret.txt`);

    // The client changes its roots: the new one is served, the old one no
    // longer (mcpd fetches them again on list_changed; wait for that).
    roots = [{ uri: fileUri(other), name: 'two' }];
    await client.sendRootsListChanged();
    const twoUri = fileUri(path.join(other, 'two.txt'));
    assert.ok(twoUri.includes('client%20two'), twoUri);
    assert.equal(resultText(await servedSoon(client, 'two.txt')), 'second root\n');
    assert.equal((await client.readResource({ uri: twoUri })).contents[0].text, 'second root\n');
    assertToolError(await call(client, 'read_file', { path: path.join(tree.root, 'hello.txt') }), /outside the allowed roots/);
    assertToolError(await call(client, 'read_file', { path: '../root/hello.txt' }), /outside the allowed roots/);
    await assertReadRefused(client, hello);
  });

  test('a call made before mcpd has fetched the roots asks the client for them', async (t) => {
    // The client answers roots/list slowly, so the first call starts before
    // mcpd's own roots/list (sent after initialization) is answered.
    const { client } = await connect(t, undefined, {
      roots: async () => {
        await sleep(300);
        return [{ uri: fileUri(tree.root) }];
      },
    });
    assert.equal(resultText(await call(client, 'read_file', { path: 'hello.txt' })), 'hello, world\n');
  });

  test('a client without roots gets a clear error', async (t) => {
    const { client } = await connect(t, undefined);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((x) => x.name).sort(), ['list_directory', 'read_file', 'search', 'stat']);
    const noRoots = /no roots: configure plugins\.fs\.roots or use a client that offers roots/;
    assertToolError(await call(client, 'read_file', { path: 'hello.txt' }), noRoots);
    assertToolError(await call(client, 'list_directory', { path: tree.root }), noRoots);
    await assert.rejects(client.readResource({ uri: fileUri(path.join(tree.root, 'hello.txt')) }), (err) => {
      assert.equal(err.code, -32002);
      assert.match(err.message, noRoots);
      return true;
    });
  });

  test('a client whose roots are all unusable gets the same error', async (t) => {
    const { client } = await connect(t, undefined, {
      roots: () => [{ uri: 'https://example.com/' }, { uri: fileUri(path.join(tree.root, 'hello.txt')) }],
    });
    assertToolError(
      await call(client, 'read_file', { path: 'hello.txt' }),
      /no roots: configure plugins\.fs\.roots or use a client that offers roots/,
    );
  });

  test("configured roots win: the client's roots are ignored", async (t) => {
    const { client } = await connect(t, { roots: [tree.root] }, { roots: () => [{ uri: fileUri(other) }] });
    assert.equal(resultText(await call(client, 'read_file', { path: 'hello.txt' })), 'hello, world\n');
    assertToolError(
      await call(client, 'read_file', { path: path.join(other, 'two.txt') }),
      new RegExp(`outside the allowed roots\\. Allowed roots: ${tree.root}$`),
    );
    await assertReadRefused(client, fileUri(path.join(other, 'two.txt')));
  });

  test('subscriptions are watched beneath the client roots, and stop when the roots move away', async (t) => {
    const dir = path.join(tree.base, 'client-watched');
    await fsp.mkdir(dir, { recursive: true });
    const file = path.join(dir, 'live.txt');
    await fsp.writeFile(file, 'one');
    let roots = [{ uri: fileUri(dir) }];
    const { client } = await connect(t, undefined, { roots: () => roots });
    const updates = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    const uri = fileUri(file);
    assert.equal((await client.readResource({ uri })).contents[0].text, 'one');
    await client.subscribeResource({ uri });
    await fsp.writeFile(file, 'two');
    await until(() => updates.length >= 1, 5000, 'the update under the client root', 20);
    assert.deepEqual(updates, [uri]);

    // The roots move elsewhere: once a call has seen them, the file is no
    // longer watched.
    roots = [{ uri: fileUri(other) }];
    await client.sendRootsListChanged();
    await servedSoon(client, 'two.txt');
    await sleep(300);
    const before = updates.length;
    await fsp.writeFile(file, 'three');
    await sleep(600);
    assert.equal(updates.length, before, `updates outside the roots: ${JSON.stringify(updates.slice(before))}`);
  });
});
