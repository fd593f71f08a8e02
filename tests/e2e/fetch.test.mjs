// SPDX-License-Identifier: MIT
// The bundled fetch plugin driven by the official MCP TypeScript SDK client
// against a real HTTP server this test starts on 127.0.0.1: HTML reduced to
// text, JSON, images, the size and time limits, progress, cancellation,
// robots.txt -- and the refusals: loopback without permission, redirects
// to loopback, denied hosts, other schemes and redirect loops.
//
// The server is on loopback, so the cases that should succeed allow it
// (allowHosts: ["127.0.0.1"]); the refusals run with the defaults.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MCPD, configFile, makePluginDir, pluginPath, resultText, sleep, withTimeout } from './lib.mjs';

/* configure builds the plugin only when it finds libcurl. */
const SKIP = !fs.existsSync(pluginPath('fetch')) && 'the fetch plugin was not built (configure found no libcurl)';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  'base64',
);

const PAGE = `<!DOCTYPE html>
<html><head><title>The &amp; Test</title>
<style>body { color: red }</style>
<script>document.write("<p>never shown</p>")</script>
</head>
<body>
<nav><a href="/a">Home</a> <a href="/b">About</a></nav>
<h1>Hello,    world</h1>
<p>Caf&eacute; &lt;b&gt; &#8364;5 &#x2014; a <a href="/link">link text</a>.</p>
<noscript>enable scripts</noscript>
<ul><li>one</li><li>two</li></ul>
<pre>  kept
    as is</pre>
</body></html>`;

/* robots.txt: everything is disallowed for other agents, and for ours only
 * /private, except /private/open (the longer rule wins). */
const ROBOTS = `# test robots
User-agent: *
Disallow: /

User-agent: mcpd-fetch
Allow: /
Disallow: /private
Allow: /private/open$
`;

let server;
let base;
let port;
/** Request paths the server saw, with the Host header they came with. */
const seen = [];
/** Resolves when the endless /slow response was closed by the client. */
let slowClosed = null;

function handler(req, res) {
  const url = new URL(req.url, 'http://x');
  seen.push({ path: url.pathname, host: req.headers.host, agent: req.headers['user-agent'] });
  const send = (status, type, body, headers = {}) => {
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
  };
  const p = url.pathname;
  if (p === '/robots.txt') return send(200, 'text/plain', ROBOTS);
  if (p === '/page.html' || p === '/private/page' || p === '/private/open') {
    return send(200, 'text/html; charset=utf-8', PAGE);
  }
  if (p === '/data.json') return send(200, 'application/json', '{"name":"mcpd","list":[1,2,{"deep":true}]}\n');
  if (p === '/notes.txt') return send(200, 'text/plain; charset=iso-8859-1', Buffer.from('caf\xe9 au lait', 'latin1'));
  if (p === '/pixel.png') return send(200, 'image/png', PNG);
  if (p === '/fake.png') return send(200, 'image/png', 'not a png at all');
  if (p === '/doc.pdf') return send(200, 'application/pdf', '%PDF-1.4 ...');
  if (p === '/missing') return send(404, 'text/plain', 'no such page here');
  if (p === '/big.txt') return send(200, 'text/plain', 'x'.repeat(3 * 1024 * 1024));
  if (p === '/big.png') return send(200, 'image/png', Buffer.concat([PNG, Buffer.alloc(2 * 1024 * 1024)]));
  if (p === '/long.txt') {
    // 2 MiB in 16 parts over about 0.8 s, with a Content-Length.
    const part = 'y'.repeat(128 * 1024);
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 16 * part.length });
    let sent = 0;
    const timer = setInterval(() => {
      res.write(part);
      if (++sent === 16) {
        clearInterval(timer);
        res.end();
      }
    }, 50);
    res.on('close', () => clearInterval(timer));
    return undefined;
  }
  if (p === '/slow') {
    // Endless: a little text every 50 ms until the client goes away.
    res.writeHead(200, { 'content-type': 'text/plain' });
    const timer = setInterval(() => res.write('tick\n'), 50);
    let closed;
    slowClosed = new Promise((resolve) => {
      closed = resolve;
    });
    res.on('close', () => {
      clearInterval(timer);
      closed(Date.now());
    });
    return undefined;
  }
  if (p === '/to-loopback') return send(302, 'text/plain', '', { location: `http://localhost:${port}/page.html` });
  if (p === '/to-mapped') return send(302, 'text/plain', '', { location: `http://[::ffff:127.0.0.1]:${port}/page.html` });
  if (p === '/to-private') return send(301, 'text/plain', '', { location: 'http://10.255.255.1/secret' });
  if (p === '/to-file') return send(302, 'text/plain', '', { location: 'file:///etc/passwd' });
  if (p === '/to-page') return send(307, 'text/plain', '', { location: '/page.html' });
  if (p.startsWith('/loop/')) {
    const n = Number(p.slice(6));
    return send(302, 'text/plain', '', { location: `/loop/${n + 1}` });
  }
  return send(404, 'text/plain', 'not found');
}

before(async () => {
  server = http.createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = server.address().port;
  base = `http://127.0.0.1:${port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** An SDK client connected to a fresh mcpd with the fetch plugin and
 * `config` as its plugin config. */
async function connect(t, config = {}) {
  const dir = await makePluginDir(['fetch']);
  const args = ['--plugins', dir, '--no-watch', '--config', await configFile({ plugins: { fetch: config } })];
  const transport = new StdioClientTransport({ command: MCPD, args, env: process.env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d;
  });
  const client = new Client({ name: 'mcpd-e2e-fetch', version: '0.0.0' });
  t.after(async () => {
    await client.close().catch(() => {});
    assert.doesNotMatch(stderr, /Sanitizer|runtime error:/, `mcpd stderr:\n${stderr}`);
  });
  await withTimeout(client.connect(transport), 10000, 'SDK client connect');
  return client;
}

const ALLOWED = { allowHosts: ['127.0.0.1'] };

async function fetchTool(client, args, options) {
  return withTimeout(client.callTool({ name: 'fetch', arguments: args }, undefined, options), 15000, `fetch ${args.url}`);
}

function assertRefused(result, pattern) {
  assert.equal(result.isError, true, `expected a refusal, got ${JSON.stringify(result).slice(0, 400)}`);
  assert.match(resultText(result), pattern);
}

describe('fetch: content', { skip: SKIP }, () => {
  test('HTML comes back as readable text, the title first', async (t) => {
    const client = await connect(t, ALLOWED);
    const result = await fetchTool(client, { url: `${base}/page.html` });
    assert.notEqual(result.isError, true, resultText(result));
    const text = resultText(result);
    assert.ok(text.startsWith('The & Test\n\n'), text);
    assert.match(text, /# Hello, world/);
    assert.match(text, /Café <b> €5 — a link text\./);
    assert.match(text, /- one\n- two/);
    assert.match(text, / {2}kept\n {4}as is/);
    for (const hidden of ['color: red', 'never shown', 'document.write', 'enable scripts', '<p>', 'href']) {
      assert.ok(!text.includes(hidden), `${hidden} leaked into:\n${text}`);
    }
    // Our user agent, on robots.txt and the page.
    assert.ok(seen.some((r) => r.path === '/page.html' && /^mcpd-fetch\/\S+ \(\+https:\/\/modelcontextprotocol.io\)$/.test(r.agent)));
  });

  test('raw: true returns the HTML as sent', async (t) => {
    const client = await connect(t, ALLOWED);
    const result = await fetchTool(client, { url: `${base}/page.html`, raw: true });
    assert.equal(resultText(result), PAGE);
  });

  test('JSON is pretty-printed; Latin-1 text is converted to UTF-8', async (t) => {
    const client = await connect(t, ALLOWED);
    const json = resultText(await fetchTool(client, { url: `${base}/data.json` }));
    assert.deepEqual(JSON.parse(json), { name: 'mcpd', list: [1, 2, { deep: true }] });
    assert.match(json, /^\{\n  "name": "mcpd",\n/, 'not pretty-printed');
    assert.equal(resultText(await fetchTool(client, { url: `${base}/notes.txt` })), 'café au lait');
  });

  test('a PNG comes back as image content; other types are refused', async (t) => {
    const client = await connect(t, ALLOWED);
    const result = await fetchTool(client, { url: `${base}/pixel.png` });
    assert.equal(result.content.length, 1);
    assert.equal(result.content[0].type, 'image');
    assert.equal(result.content[0].mimeType, 'image/png');
    assert.equal(result.content[0].data, PNG.toString('base64'));
    assertRefused(await fetchTool(client, { url: `${base}/fake.png` }), /not a PNG|no PNG/);
    assertRefused(await fetchTool(client, { url: `${base}/doc.pdf` }), /application\/pdf/);
    assertRefused(await fetchTool(client, { url: `${base}/missing` }), /HTTP 404[\s\S]*no such page here/);
  });

  test('a relative redirect within the allowed host is followed', async (t) => {
    const client = await connect(t, ALLOWED);
    assert.match(resultText(await fetchTool(client, { url: `${base}/to-page` })), /# Hello, world/);
  });
});

describe('fetch: limits', { skip: SKIP }, () => {
  test('text is returned in parts, and startIndex reads on', async (t) => {
    const client = await connect(t, ALLOWED);
    const first = resultText(await fetchTool(client, { url: `${base}/page.html`, maxBytes: 20 }));
    const m = first.match(/bytes 0 to (\d+) of (\d+)\. Call fetch again with startIndex (\d+)/);
    assert.ok(m, first);
    assert.equal(m[1], m[3]);
    const whole = resultText(await fetchTool(client, { url: `${base}/page.html` }));
    assert.ok(whole.startsWith(first.slice(0, Number(m[1]))));
    const next = resultText(await fetchTool(client, { url: `${base}/page.html`, startIndex: Number(m[3]), maxBytes: 100000 }));
    assert.equal(first.slice(0, Number(m[1])) + next, whole);
    assertRefused(await fetchTool(client, { url: `${base}/page.html`, startIndex: 100000 }), /past the end/);
  });

  test('a body over maxBytes is cut there (text) or refused (images)', async (t) => {
    const client = await connect(t, { ...ALLOWED, maxBytes: 1024 * 1024 });
    const text = resultText(
      await fetchTool(client, { url: `${base}/big.txt`, maxBytes: 1024 * 1024, startIndex: 1024 * 1024 - 10 }),
    );
    assert.match(text, /^x{10}\n\n\[The download stopped at this server's maxBytes \(1048576 bytes\)/);
    assertRefused(await fetchTool(client, { url: `${base}/big.png` }), /image of \d+ bytes, more than this server's maxBytes \(1048576\)/);
  });

  test('progress notifications report a long download', async (t) => {
    const client = await connect(t, ALLOWED);
    const events = [];
    const result = await fetchTool(client, { url: `${base}/long.txt`, maxBytes: 10 }, { onprogress: (p) => events.push(p) });
    assert.match(resultText(result), /of 2097152\./);
    assert.ok(events.length >= 2, `only ${events.length} progress events`);
    for (let i = 1; i < events.length; i++) assert.ok(events[i].progress > events[i - 1].progress);
    assert.ok(events.every((e) => e.total === 2097152), JSON.stringify(events));
  });

  test('cancelling the call stops the download at once', async (t) => {
    const client = await connect(t, ALLOWED);
    slowClosed = null;
    const controller = new AbortController();
    const pending = fetchTool(client, { url: `${base}/slow` }, { signal: controller.signal });
    while (slowClosed === null) await sleep(20);
    await sleep(300);
    const abortedAt = Date.now();
    controller.abort();
    await assert.rejects(pending);
    const closedAt = await withTimeout(slowClosed, 3000, 'the server sees the download end');
    assert.ok(closedAt - abortedAt < 1500, `the download went on for ${closedAt - abortedAt} ms`);
    // mcpd is still there, and fetches again.
    assert.match(resultText(await fetchTool(client, { url: `${base}/data.json` })), /mcpd/);
  });

  test('timeoutMs ends an endless download with an error', async (t) => {
    const client = await connect(t, { ...ALLOWED, timeoutMs: 1000 });
    const started = Date.now();
    assertRefused(await fetchTool(client, { url: `${base}/slow` }), /timed out after 1000 ms/);
    const took = Date.now() - started;
    assert.ok(took >= 900 && took < 4000, `took ${took} ms`);
  });
});

describe('fetch: robots.txt', { skip: SKIP }, () => {
  test('our group is honoured: the longest rule wins', async (t) => {
    const client = await connect(t, ALLOWED);
    assertRefused(await fetchTool(client, { url: `${base}/private/page` }), /robots\.txt does not allow mcpd-fetch to fetch \/private\/page/);
    assert.match(resultText(await fetchTool(client, { url: `${base}/private/open` })), /Hello, world/);
    const before = seen.filter((r) => r.path === '/private/page').length;
    assert.equal(before, 0, 'a disallowed page was requested');
  });

  test('robots: false ignores it', async (t) => {
    const client = await connect(t, { ...ALLOWED, robots: false });
    const count = seen.filter((r) => r.path === '/robots.txt').length;
    assert.match(resultText(await fetchTool(client, { url: `${base}/private/page` })), /Hello, world/);
    assert.equal(seen.filter((r) => r.path === '/robots.txt').length, count, 'robots.txt was fetched');
  });
});

describe('fetch: refusals', { skip: SKIP }, () => {
  test('127.0.0.1 and localhost are refused by default', async (t) => {
    const client = await connect(t, {});
    const count = seen.length;
    assertRefused(await fetchTool(client, { url: `${base}/page.html` }), /127\.0\.0\.1, a loopback address/);
    assertRefused(await fetchTool(client, { url: `http://localhost:${port}/page.html` }), /loopback address/);
    assertRefused(await fetchTool(client, { url: `http://[::ffff:127.0.0.1]:${port}/page.html` }), /loopback address/);
    assert.equal(seen.length, count, 'the server was reached');
  });

  test('a redirect from an allowed host to loopback or a private address is refused', async (t) => {
    const client = await connect(t, ALLOWED);
    const viaLocalhost = () => seen.filter((r) => r.host?.startsWith('localhost')).length;
    const count = viaLocalhost();
    assertRefused(await fetchTool(client, { url: `${base}/to-loopback` }), /localhost is at .*, a loopback address/);
    assert.equal(viaLocalhost(), count, 'the redirect target was requested');
    assertRefused(await fetchTool(client, { url: `${base}/to-mapped` }), /a loopback address/);
    assertRefused(await fetchTool(client, { url: `${base}/to-private` }), /10\.255\.255\.1, a private address/);
    assertRefused(await fetchTool(client, { url: `${base}/to-file` }), /only http and https URLs are fetched, not file:/);
  });

  test('allowPrivate lets loopback through, except denied hosts', async (t) => {
    const client = await connect(t, { allowPrivate: true, denyHosts: ['localhost', '*.example'] });
    assert.match(resultText(await fetchTool(client, { url: `${base}/page.html` })), /Hello, world/);
    assertRefused(await fetchTool(client, { url: `http://localhost:${port}/page.html` }), /localhost is in this server's denyHosts/);
    assertRefused(await fetchTool(client, { url: 'https://www.deny.example/' }), /www\.deny\.example is in this server's denyHosts/);
  });

  test('other schemes are refused', async (t) => {
    const client = await connect(t, { allowPrivate: true });
    assertRefused(await fetchTool(client, { url: 'file:///etc/passwd' }), /not file:/);
    assertRefused(await fetchTool(client, { url: `ftp://127.0.0.1:${port}/x` }), /not ftp:/);
    assertRefused(await fetchTool(client, { url: 'not a url' }), /not an absolute http or https URL/);
  });

  test('more redirects than maxRedirects are refused', async (t) => {
    const client = await connect(t, { ...ALLOWED, maxRedirects: 3 });
    assertRefused(await fetchTool(client, { url: `${base}/loop/0` }), /too many redirects \(more than 3.*\/loop\/4/);
    assert.ok(!seen.some((r) => r.path === '/loop/4'), '/loop/4 was requested');
  });

  test('a bad config fails the load with a line that names the key', async (t) => {
    const dir = await makePluginDir(['fetch']);
    const cfg = await configFile({ plugins: { fetch: { denyHosts: ['http://x/'], robot: true } } });
    const transport = new StdioClientTransport({
      command: MCPD,
      args: ['--plugins', dir, '--no-watch', '--config', cfg],
      env: process.env,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d) => {
      stderr += d;
    });
    const client = new Client({ name: 'mcpd-e2e-fetch', version: '0.0.0' });
    t.after(() => client.close().catch(() => {}));
    await withTimeout(client.connect(transport), 10000, 'connect');
    const { tools } = await client.listTools();
    assert.ok(!tools.some((x) => x.name === 'fetch'));
    assert.match(stderr, /config: denyHosts\[0\] "http:\/\/x\/" is not a host name/);
  });
});
