// SPDX-License-Identifier: MIT
// A stdio MCP server that speaks only 2026-07-28, as the revision says a
// modern-only server does: no initialize (-32022 with the versions it
// serves), server/discover, every request carrying its own envelope,
// input_required rounds instead of requests to the client, and
// subscriptions/listen for list changes.  The proxy tests put it behind
// mcpd to show that a 2025-11-25 client reaches such a server.
//
//   node modern-upstream.mjs            (stdio)
//   node modern-upstream.mjs http PORT  (Streamable HTTP at /mcp; says
//                                        "listening on port N" on stderr)
//
// Tools: greet {name} (progress when asked), confirm {action} (asks the
// user with an elicitation round), add_tool (adds "late", then the
// listen stream says tools/list_changed).  Resource note://hello (its
// listen subscription gets an update when add_tool runs).  Prompt hi.

import http from 'node:http';
import readline from 'node:readline';

const VERSION = '2026-07-28';
const META = 'io.modelcontextprotocol/';
const served = { name: 'modern-upstream', version: '1.0' };
let late = false;
const listens = new Map(); // id -> {n: requested notifications, out}

function stdout(msg) {
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n');
}

function complete(result) {
  return { resultType: 'complete', ...result, _meta: { [META + 'serverInfo']: served } };
}

function tools() {
  const list = [
    { name: 'greet', description: 'Greets', inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
    { name: 'confirm', description: 'Asks before acting', inputSchema: { type: 'object', properties: { action: { type: 'string' } }, required: ['action'] } },
    { name: 'add_tool', description: 'Adds the tool "late"', inputSchema: { type: 'object' } },
  ];
  if (late) list.push({ name: 'late', description: 'Added at run time', inputSchema: { type: 'object' } });
  return list;
}

function text(t) {
  return { content: [{ type: 'text', text: t }] };
}

async function call(id, params, send) {
  const args = params.arguments || {};
  const token = params._meta?.progressToken;
  switch (params.name) {
    case 'greet':
      if (token !== undefined) {
        // Paced like real work: the SDK clients dispatch notifications a
        // tick later than responses, so progress written in the same read
        // as the result would reach a handler already removed.
        for (let i = 1; i <= 2; i++) {
          send({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: 2 } });
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      return complete(text(`hello ${args.name}`));
    case 'confirm': {
      const answer = params.inputResponses?.ok;
      if (answer === undefined || params.requestState !== 'asked') {
        return {
          resultType: 'input_required',
          inputRequests: {
            ok: {
              method: 'elicitation/create',
              params: {
                mode: 'form',
                message: `Really ${args.action}?`,
                requestedSchema: { type: 'object', properties: { sure: { type: 'boolean' } }, required: ['sure'] },
              },
            },
          },
          requestState: 'asked',
        };
      }
      if (answer.action !== 'accept') return complete(text(`not done: ${answer.action}`));
      return complete(text(answer.content?.sure ? `done: ${args.action}` : 'not sure'));
    }
    case 'add_tool':
      late = true;
      for (const [lid, { n, out }] of listens) {
        const meta = { [META + 'subscriptionId']: lid };
        if (n.toolsListChanged) out({ method: 'notifications/tools/list_changed', params: { _meta: meta } });
        if ((n.resourceSubscriptions || []).includes('note://hello'))
          out({ method: 'notifications/resources/updated', params: { uri: 'note://hello', _meta: meta } });
      }
      return complete(text('added'));
    case 'late':
      return complete(text('late tool ran'));
    default:
      return { error: { code: -32602, message: `Unknown tool: ${params.name}` } };
  }
}

/** Handles one message, writing what it sends through `send`; resolves to
 * true when the request stays open (a listen). */
async function handle(msg, send) {
  if (msg.method === undefined) return; // a response: this server asks nothing
  const params = msg.params || {};
  const claim = params._meta?.[META + 'protocolVersion'];
  const reply = (r) => {
    if (msg.id !== undefined) send('error' in r ? { id: msg.id, error: r.error } : { id: msg.id, result: r });
    return false;
  };
  if (msg.method === 'notifications/cancelled') {
    listens.delete(params.requestId);
    return false;
  }
  if (msg.id === undefined) return false;
  if (claim !== VERSION) {
    reply({ error: { code: -32022, message: 'Unsupported protocol version', data: { supported: [VERSION], requested: claim ?? null } } });
    return;
  }
  switch (msg.method) {
    case 'server/discover':
      return reply(complete({
        supportedVersions: [VERSION],
        capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, prompts: {}, completions: {} },
        ttlMs: 0,
        cacheScope: 'public',
      }));
    case 'tools/list':
      return reply(complete({ tools: tools(), ttlMs: 0, cacheScope: 'public' }));
    case 'tools/call':
      return reply(await call(msg.id, params, send));
    case 'resources/list':
      return reply(complete({ resources: [{ uri: 'note://hello', name: 'hello', mimeType: 'text/plain' }], ttlMs: 0, cacheScope: 'public' }));
    case 'resources/templates/list':
      return reply(complete({ resourceTemplates: [{ uriTemplate: 'note://{name}', name: 'note' }], ttlMs: 0, cacheScope: 'public' }));
    case 'resources/read':
      if (params.uri !== 'note://hello') return reply({ error: { code: -32602, message: 'Resource not found', data: { uri: params.uri } } });
      return reply(complete({ contents: [{ uri: 'note://hello', mimeType: 'text/plain', text: late ? 'hello again' : 'hello' }], ttlMs: 0, cacheScope: 'public' }));
    case 'prompts/list':
      return reply(complete({ prompts: [{ name: 'hi', arguments: [{ name: 'who', required: true }] }] }));
    case 'prompts/get':
      return reply(complete({ messages: [{ role: 'user', content: { type: 'text', text: `say hi to ${params.arguments?.who}` } }] }));
    case 'completion/complete':
      return reply(complete({ completion: { values: ['world', 'wide'].filter((v) => v.startsWith(params.argument?.value ?? '')), hasMore: false } }));
    case 'subscriptions/listen': {
      const n = params.notifications || {};
      listens.set(msg.id, { n, out: send });
      send({ method: 'notifications/subscriptions/acknowledged', params: { _meta: { [META + 'subscriptionId']: msg.id }, notifications: n } });
      return true; // answered only when it ends
    }
    default:
      return reply({ error: { code: -32601, message: `Method not found: ${msg.method}` } });
  }
}

function serveStdio() {
  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      stdout({ id: null, error: { code: -32700, message: 'Parse error' } });
      return;
    }
    handle(msg, stdout);
  });
  rl.on('close', () => process.exit(0));
}

/** One POST, one message; the answer as an event stream, except what the
 * revision answers with an HTTP error status: a request without the
 * envelope (initialize, say) gets 400 and its JSON-RPC error. */
function serveHttp(port) {
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/mcp') {
      res.writeHead(405).end();
      return;
    }
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', async () => {
      let msg;
      try {
        msg = JSON.parse(body);
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
        return;
      }
      if (msg.id === undefined || msg.method === undefined) {
        await handle(msg, () => {});
        res.writeHead(202).end();
        return;
      }
      if (msg.params?._meta?.[META + 'protocolVersion'] !== VERSION) {
        const claim = msg.params?._meta?.[META + 'protocolVersion'] ?? null;
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32022, message: 'Unsupported protocol version', data: { supported: [VERSION], requested: claim } } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const out = (m) => res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...m })}\n\n`);
      res.on('close', () => listens.delete(msg.id));
      if (!(await handle(msg, out))) res.end();
    });
  });
  server.listen(port, '127.0.0.1', () => process.stderr.write(`listening on port ${server.address().port}\n`));
}

if (process.argv[2] === 'http') serveHttp(Number(process.argv[3] || 0));
else serveStdio();
