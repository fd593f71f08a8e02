// SPDX-License-Identifier: MIT
// sessions.mjs -- what an idle HTTP session costs mcpd: opens N sessions
// (initialize, then notifications/initialized, as a client does), leaves
// them idle, and prints the growth of mcpd's VmRSS per session in KiB.
//
// usage: node bench/sessions.mjs MCPD PLUGIN_DIR [N]   (default N 10000)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';

const [mcpd, dir, nArg] = process.argv.slice(2);
const n = Number(nArg ?? 10000);
const child = spawn(mcpd, ['--transport', 'http', '--listen', '127.0.0.1:0', '--plugins', dir, '--no-watch',
  '--max-sessions', String(n + 200), '--log-level', 'info'], { stdio: ['ignore', 'ignore', 'pipe'] });
const url = await new Promise((resolve, reject) => {
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
    const m = /listening on (http:\/\/\S+)/.exec(err);
    if (m) resolve(new URL(m[1]));
  });
  child.on('exit', (code) => reject(new Error(`mcpd exited (${code}): ${err}`)));
});
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function post(body, sid) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (sid) headers['mcp-session-id'] = sid;
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

async function open() {
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
    protocolVersion: '2025-11-25', capabilities: { roots: { listChanged: true }, sampling: {} },
    clientInfo: { name: 'sessions-bench', version: '1.0' } } });
  if (init.statusCode !== 200) throw new Error(`initialize: HTTP ${init.statusCode}`);
  const sid = init.headers['mcp-session-id'];
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sid);
}

const rss = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]);
for (let i = 0; i < 100; i++) await open(); // the allocator's first growth
const before = rss();
const t0 = process.hrtime.bigint();
for (let i = 0; i < n; i++) await open();
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
const after = rss();
console.log(`sessions=${n} rss_before_kib=${before} rss_after_kib=${after} ` +
  `kib_per_session=${((after - before) / n).toFixed(2)} open_per_s=${((n * 1000) / ms).toFixed(0)}`);
child.kill('SIGTERM');
agent.destroy();
