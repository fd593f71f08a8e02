// SPDX-License-Identifier: MIT
// A stdio MCP server (2025-11-25) that breaks every rule it can, so that
// proxy-faults.test.mjs can prove mcpd neither crashes, hangs nor loses an
// answer whatever an upstream sends.  It answers initialize (amid junk)
// and declares tools, resources, prompts, completions and logging; how it
// misbehaves is chosen by its mode and by the tool called.
//
//   node bad-upstream.mjs [MODE]
//
// Modes:
//   normal (default)  junk around initialize; listings full of broken
//                     entries; each tool below misbehaves in its own way
//   never-init        never answers initialize
//   exit-after-init   answers initialize, then exits at once
//   loop-cursor       listings whose nextCursor never ends: tools/list
//                     gives the same cursor again, resources/list empty
//                     pages with a new cursor each time
//   modern            refuses initialize, then says it speaks 2026-07-28
//                     with a supportedVersions list holding non-strings;
//                     its tools answer with a resultType that is null or
//                     a number, input_required rounds that ask nothing or
//                     what cannot be asked, and one the proxy answers
//                     itself (roots/list)
//
// Tools (normal mode; the proxy offers them as bad_NAME):
//   echo {text}        a correct answer, to show the upstream still works
//   twice              answers under ids of every wrong type, then twice
//   both               an answer with both result and error
//   not_object {kind}  a result that is a string, array, number or null
//   odd_error {kind}   error objects with odd or missing code and message
//   content_string, untyped_block, structured_string, no_content
//                      results of the wrong shape
//   progress           progress with unknown tokens, non-numbers, a
//                      decrease and infinity, then the answer
//   notes              odd notifications (log, resources/updated, ...)
//   storm              1000 list_changed of each kind, then the answer
//   requests           requests to its client: unknown methods, ids of
//                      every type, sampling and elicitation, a flood
//   idle_requests      answers, then asks its client with no call in flight
//   report             what it got back so far, as JSON text
//   hang               never answers (notes the notifications/cancelled)
//   deep               a result nested 40 levels deep
//   trailing_space     the answer followed by blanks before its newline
//   stderr_flood       20000 stderr lines and one of 1 MiB, then answers
//   huge               a 20 MiB line on stdout
//   exit               exits in the middle of the call
//   close_stdout       closes stdout, keeps running and ignores SIGTERM

import fs from 'node:fs';

const mode = process.argv[2] || 'normal';
const served = { name: 'bad-upstream', version: '6.6.6' };

/** Everything it learnt from its client, for the `report` tool. */
const state = {
  answers: {}, // JSON id of each request it sent -> ['ok' | code, ...]
  cancelled: [], // requestIds of notifications/cancelled
  hung: [], // ids of hang calls
  initialized: 0,
  setLevel: [],
  rounds: 0,
};
let resourcePage = 0;
let muted = false; // mute-list: the first tools/list went unanswered

process.stdout.on('error', () => process.exit(0));
process.on('SIGPIPE', () => {});

function raw(text) {
  process.stdout.write(text);
}

function send(msg) {
  raw(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);
}

function text(t) {
  return { content: [{ type: 'text', text: t }] };
}

const OBJ = { type: 'object' };

/** The tools of normal mode, then every broken entry it can think of. */
function tools() {
  const good = [
    ['echo', { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }],
    ['twice', OBJ],
    ['both', OBJ],
    ['not_object', { type: 'object', properties: { kind: { type: 'string' } } }],
    ['odd_error', { type: 'object', properties: { kind: { type: 'string' } } }],
    ['content_string', OBJ],
    ['untyped_block', OBJ],
    ['structured_string', OBJ],
    ['no_content', OBJ],
    ['progress', OBJ],
    ['notes', OBJ],
    ['storm', OBJ],
    ['requests', OBJ],
    ['idle_requests', OBJ],
    ['report', OBJ],
    ['hang', OBJ],
    ['deep', OBJ],
    ['trailing_space', OBJ],
    ['stderr_flood', OBJ],
    ['huge', OBJ],
    ['exit', OBJ],
    ['close_stdout', OBJ],
  ].map(([name, inputSchema]) => ({ name, description: `misbehaves: ${name}`, inputSchema }));
  const huge = { type: 'object', properties: {} };
  for (let i = 0; i < 5000; i++) huge.properties[`p${i}`] = { type: 'string', description: 'x'.repeat(20) };
  const weird = [
    'a string, not a tool',
    42,
    null,
    [],
    { description: 'no name', inputSchema: OBJ },
    { name: '', inputSchema: OBJ },
    { name: 17, inputSchema: OBJ },
    { name: null, inputSchema: OBJ },
    { name: 'with space', inputSchema: OBJ },
    { name: 'with.dot', inputSchema: OBJ },
    { name: 'ünï', inputSchema: OBJ },
    { name: 'x'.repeat(61), inputSchema: OBJ }, // 65 with "bad_"
    { name: 'y'.repeat(60), inputSchema: OBJ }, // exactly 64
    { name: 'dup', description: 'first', inputSchema: OBJ },
    { name: 'dup', description: 'second', inputSchema: OBJ },
    { name: 'a.b', inputSchema: OBJ },
    { name: 'a_b', inputSchema: OBJ }, // maps to bad_a_b like a.b
    { name: 'schema_text', inputSchema: 'not an object' },
    { name: 'schema_missing' },
    { name: 'schema_string_type', inputSchema: { type: 'string' } },
    { name: 'schema_bad_props', inputSchema: { type: 'object', properties: 5 } },
    { name: 'schema_huge', inputSchema: huge },
    { name: 'output_string', inputSchema: OBJ, outputSchema: { type: 'string' } },
    { name: 'odd_fields', title: 5, description: ['x'], annotations: 'none', execution: 7, inputSchema: OBJ },
    { name: 'odd_task', execution: { taskSupport: 99 }, inputSchema: OBJ },
    { name: 'deep_schema', inputSchema: deepSchema(20) }, // 40 levels
  ];
  return [...good, ...weird];
}

function resources() {
  return [
    { uri: 'bad://ok', name: 'ok', mimeType: 'text/plain' },
    { uri: 'bad://wrong-shape', name: 'wrong-shape' },
    { uri: 'bad://ok', name: 'ok again' },
    { name: 'no uri' },
    { uri: '' },
    { uri: 5, name: 'number uri' },
    { uri: 'not a uri at all', name: 'spaces' },
    { uri: 'bad://odd-fields', name: 7, mimeType: {}, title: [] },
    'just a string',
    null,
  ];
}

function templates() {
  return [
    { uriTemplate: 'bad://t/{id}', name: 't' },
    { uriTemplate: 'bad://open/{', name: 'open brace' },
    { uriTemplate: 'bad://{a}{b}}', name: 'stray close' },
    { uriTemplate: 'bad://{}', name: 'empty expression' },
    { uriTemplate: 7, name: 'number' },
    { name: 'no template' },
    { uriTemplate: '', name: 'empty' },
  ];
}

function prompts() {
  return [
    { name: 'ok', description: 'a prompt' },
    { name: 'args', arguments: [5, null, { name: 5 }, { description: 'no name' }, { name: 'who', required: 'yes' }] },
    { name: 'args_not_array', arguments: 'who' },
    { name: 'bad_messages' },
    { name: 'with space' },
    { description: 'no name' },
    { name: 'z'.repeat(61) },
  ];
}

/* ------------------------------------------------------------------------ */
/* Requests it sends its client, and their answers.                          */

let ask = 0;
const waiting = new Map(); // JSON id -> resolve

function record(msg) {
  const key = JSON.stringify(msg.id);
  (state.answers[key] ??= []).push('error' in msg ? msg.error?.code ?? 'error' : 'ok');
  const resolve = waiting.get(key);
  if (resolve) {
    waiting.delete(key);
    resolve();
  }
}

/** Sends a request to the client; resolves when it is answered or after
 * 3 s (the report then shows the missing answer). */
function request(id, method, params) {
  const key = JSON.stringify(id);
  const answered = new Promise((resolve) => {
    waiting.set(key, resolve);
    setTimeout(resolve, 3000);
  });
  const msg = { id, method };
  if (params !== undefined) msg.params = params;
  send(msg);
  return answered;
}

const SAMPLING = {
  messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
  maxTokens: 5,
};
const ELICIT = {
  message: 'ok?',
  requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
};

/* ------------------------------------------------------------------------ */
/* Tool calls.                                                               */

function deepSchema(n) {
  let v = { type: 'string' };
  for (let i = 0; i < n; i++) v = { type: 'object', properties: { a: v } };
  return v;
}

function deep(n) {
  let v = { leaf: true };
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
}

async function call(id, params) {
  const args = params?.arguments ?? {};
  const token = params?._meta?.progressToken;
  const answer = (result) => send({ id, result });
  switch (params?.name) {
    case 'echo':
      return answer(text(String(args.text)));
    case 'twice':
      for (const wrong of [String(id), id + 0.5, null, { id }, [id], true, id + 100000, -1]) {
        send({ id: wrong, result: text('wrong id') });
      }
      answer(text('first'));
      answer(text('second'));
      send({ id, error: { code: -32603, message: 'third' } });
      return undefined;
    case 'both':
      return send({ id, result: text('result'), error: { code: -32000, message: 'both result and error' } });
    case 'not_object': {
      const values = { string: 'a string', array: [text('x')], number: 5, null: null, bool: true };
      return send({ id, result: values[args.kind] });
    }
    case 'odd_error': {
      const errors = {
        string: 'oops',
        empty: {},
        types: { code: 'x', message: 5 },
        nulls: { code: null, message: null },
        float: { code: 1.5, message: 'float code' },
        big: { code: 1e20, message: 'big code' },
        params: { code: -32602, message: 'bad arguments upstream', data: { why: 'x' } },
        array: [1, 2],
      };
      return send({ id, error: errors[args.kind] });
    }
    case 'content_string':
      return answer({ content: 'just text' });
    case 'untyped_block':
      return answer({ content: [{ text: 'no type' }] });
    case 'structured_string':
      return answer({ content: [{ type: 'text', text: 's' }], structuredContent: 'not an object' });
    case 'no_content':
      return answer({ isError: 'maybe' });
    case 'progress':
      for (const p of [
        { progressToken: 'unknown-token', progress: 1 },
        { progressToken: 987654, progress: 1 },
        { progressToken: token, progress: 'abc' },
        { progressToken: token, progress: null },
        { progressToken: token, progress: 5, total: 'ten', message: 7 },
        { progressToken: token, progress: 3 },
        { progressToken: token },
        { progressToken: 1.5, progress: 6 },
      ]) {
        send({ method: 'notifications/progress', params: p });
      }
      raw(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":${JSON.stringify(token)},"progress":1e999}}\n`);
      send({ method: 'notifications/progress', params: { progressToken: token, progress: 7, total: 10, message: 'seven' } });
      send({ method: 'notifications/progress' });
      return answer(text('progress done'));
    case 'notes':
      for (const params of [
        { level: 'bogus', data: { an: 'object' } },
        { level: 5, logger: 7, data: [1, 2] },
        { level: 'error' },
        { data: null },
        { level: 'warning', data: 'bad-upstream: a plain warning' },
      ]) {
        send({ method: 'notifications/message', params });
      }
      send({ method: 'notifications/message' });
      send({ method: 'notifications/resources/updated' });
      send({ method: 'notifications/resources/updated', params: {} });
      send({ method: 'notifications/resources/updated', params: { uri: 5 } });
      send({ method: 'notifications/resources/updated', params: { uri: 'bad://never-listed' } });
      send({ method: 'notifications/elicitation/complete', params: { elicitationId: null } });
      send({ method: 'notifications/elicitation/complete', params: { elicitationId: { x: 1 } } });
      send({ method: 'notifications/cancelled', params: { requestId: 424242 } });
      send({ method: 'notifications/no/such/thing', params: 'not an object' });
      send({ method: 7 });
      send({ method: null, params: {} });
      send({});
      return answer(text('notes done'));
    case 'storm':
      for (let i = 0; i < 1000; i++) send({ method: 'notifications/tools/list_changed' });
      for (let i = 0; i < 1000; i++) send({ method: 'notifications/resources/list_changed' });
      for (let i = 0; i < 1000; i++) send({ method: 'notifications/prompts/list_changed' });
      return answer(text('storm done'));
    case 'requests': {
      const asked = [
        request(`r-${++ask}`, 'no/such/method', {}),
        request(`r-${++ask}`, 'sampling/createMessage', SAMPLING),
        request(`r-${++ask}`, 'elicitation/create', ELICIT),
        request(`r-${++ask}`, 'roots/list'),
        request(`r-${++ask}`, 'ping'),
        request(77777, 'ping'),
        request(1.5, 'ping'),
        request({ o: 1 }, 'ping'),
        request([1], 'ping'),
        request(true, 'ping'),
        request(-1, 'tools/list'),
      ];
      for (let i = 0; i < 200; i++) asked.push(request(`flood-${i}`, i % 2 ? 'elicitation/create' : 'sampling/createMessage', i % 2 ? ELICIT : SAMPLING));
      // A request whose id is null, or that has none, reads as a
      // notification: no answer.
      send({ id: null, method: 'ping' });
      send({ method: 'sampling/createMessage', params: SAMPLING });
      send({ method: 'elicitation/create', params: ELICIT });
      await Promise.all(asked);
      return answer(text('requests done'));
    }
    case 'idle_requests':
      answer(text('idle requests sent'));
      setTimeout(() => {
        request('idle-sampling', 'sampling/createMessage', SAMPLING);
        request('idle-elicit', 'elicitation/create', ELICIT);
        request('idle-unknown', 'no/such/method');
      }, 50);
      return undefined;
    case 'report':
      return answer(text(JSON.stringify(state)));
    case 'hang':
      state.hung.push(id);
      return undefined;
    case 'deep':
      return answer({ content: [{ type: 'text', text: 'deep' }], structuredContent: deep(40) });
    case 'trailing_space':
      raw(`${JSON.stringify({ jsonrpc: '2.0', id, result: text('blanks after me') })}  \t \r\n`);
      return undefined;
    case 'stderr_flood': {
      const line = `bad-upstream stderr line ${'.'.repeat(60)}\n`;
      for (let i = 0; i < 20000; i++) process.stderr.write(line);
      process.stderr.write(`${'e'.repeat(1 << 20)}\n`);
      return answer(text('stderr flood done'));
    }
    case 'huge':
      raw(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"${'h'.repeat(20 << 20)}"}}\n`);
      return answer(text('huge survived?'));
    case 'exit':
      process.exit(3);
      return undefined;
    case 'close_stdout':
      process.on('SIGTERM', () => {});
      fs.closeSync(1);
      setInterval(() => {}, 1000);
      return undefined;
    default:
      return send({ id, error: { code: -32602, message: `no tool ${params?.name}` } });
  }
}

/* ------------------------------------------------------------------------ */
/* The other requests.                                                       */

const CAPS = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
};

function initialize(id) {
  if (mode === 'never-init') return;
  if (mode === 'modern') {
    send({ id, error: { code: -32602, message: 'Unsupported protocol version', data: { supported: ['2026-07-28'] } } });
    return;
  }
  const result = { protocolVersion: '2025-11-25', capabilities: CAPS, serverInfo: served, instructions: 5 };
  if (mode === 'normal') {
    // Junk first: none of it may upset the proxy or reach mcpd's client.
    for (const line of [
      'not json at all',
      '',
      '   \t ',
      '{"jsonrpc":"2.0","id":',
      '{"jsonrpc":"2.0"}{"jsonrpc":"2.0"}',
      '42',
      '"a string"',
      'null',
      'true',
      '[]',
      '[1,"two",null,[3]]',
      '\u001b[31mred\u001b[0m',
    ]) {
      raw(`${line}\n`);
    }
    raw(Buffer.from([0xff, 0xfe, 0x20, 0x7b, 0x0a])); // not UTF-8
    for (const wrong of [String(id), id + 0.5, null, { id }, [id], false, 9999, -5]) {
      send({ id: wrong, result });
    }
    send({ id: 424242, error: { code: -32603, message: 'an answer nobody asked for' } });
    send({ id: 424243, result: 'not an object' });
    // The real answer inside a batch, between notifications, and then
    // again alone.
    raw(
      `${JSON.stringify([
        { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'batch before' } },
        { jsonrpc: '2.0', id, result },
        'junk in a batch',
        { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
      ])}\n`,
    );
    send({ id, result: { ...result, serverInfo: { name: 'a second answer' } } });
    return;
  }
  send({ id, result });
  if (mode === 'exit-after-init') process.exit(0);
}

function listing(id, method, params) {
  if (mode === 'mute-list' && method === 'tools/list' && !muted) {
    // Never answered; a change announced later must still be listed.
    muted = true;
    setTimeout(() => send({ method: 'notifications/tools/list_changed' }), 1500);
    return;
  }
  if (mode === 'loop-cursor') {
    if (method === 'tools/list') {
      const page = [];
      for (let i = 0; i < 100; i++) page.push({ name: `looped_${i}`, inputSchema: OBJ });
      return send({ id, result: { tools: page, nextCursor: 'again' } });
    }
    if (method === 'resources/list') {
      resourcePage++;
      const first = params?.cursor === undefined;
      return send({
        id,
        result: { resources: first ? [{ uri: 'bad://looped', name: 'looped' }] : [], nextCursor: `c${resourcePage}` },
      });
    }
    if (method === 'prompts/list') return send({ id, result: { prompts: [{ name: 'looped' }], nextCursor: 5 } });
    return send({ id, result: { resourceTemplates: 'not an array', nextCursor: null } });
  }
  switch (method) {
    case 'tools/list':
      return send({ id, result: { tools: tools() } });
    case 'resources/list':
      return send({ id, result: { resources: resources() } });
    case 'resources/templates/list':
      return send({ id, result: { resourceTemplates: templates() } });
    case 'prompts/list':
      return send({ id, result: { prompts: prompts() } });
    default:
      return undefined;
  }
}

function modern(msg) {
  const { id, method, params } = msg;
  switch (method) {
    case 'server/discover':
      return send({
        id,
        result: {
          resultType: 'complete',
          supportedVersions: [null, 7, { v: 1 }, '2026-07-28'],
          capabilities: { tools: {} },
          serverInfo: served,
        },
      });
    case 'tools/list':
      return send({
        id,
        result: {
          resultType: 'complete',
          tools: [
            { name: 'null_type', inputSchema: OBJ },
            { name: 'number_type', inputSchema: OBJ },
            { name: 'echo', inputSchema: OBJ },
            { name: 'no_questions', inputSchema: OBJ },
            { name: 'roots_round', inputSchema: OBJ },
            { name: 'roots_forever', inputSchema: OBJ },
            { name: 'state_only', inputSchema: OBJ },
            { name: 'odd_round', inputSchema: OBJ },
          ],
        },
      });
    case 'tools/call': {
      const name = params?.name;
      if (name === 'null_type') return send({ id, result: { resultType: null, ...text('null resultType') } });
      if (name === 'number_type') return send({ id, result: { resultType: 5, ...text('number resultType') } });
      const round = (inputRequests) => send({ id, result: { resultType: 'input_required', inputRequests, requestState: 's' } });
      // Neither a question nor state: nothing to send the call again with.
      if (name === 'no_questions')
        return send({ id, result: { resultType: 'input_required', inputRequests: state.rounds++ % 2 ? {} : 'none' } });
      // Only new state, which the revision allows: done when it comes back.
      if (name === 'state_only') {
        if (params?.requestState === 'step-2') return send({ id, result: { resultType: 'complete', ...text('state came back') } });
        return send({ id, result: { resultType: 'input_required', requestState: 'step-2' } });
      }
      // A question the proxy answers itself, so the call goes again at once.
      if (name === 'roots_round') {
        const answer = params?.inputResponses?.r;
        if (answer === undefined) return round({ r: { method: 'roots/list' } });
        return send({ id, result: { resultType: 'complete', ...text(`roots ${JSON.stringify(answer)}`) } });
      }
      // Asks the question the proxy answers itself, whatever the answer.
      if (name === 'roots_forever') return round({ r: { method: 'roots/list' } });
      if (name === 'odd_round') return round({ k: 'not an object', j: { method: 'tools/call', params: {} } });
      return send({ id, result: { resultType: 'complete', ...text(`modern ${JSON.stringify(params?.arguments ?? {})}`) } });
    }
    default:
      return send({ id, error: { code: -32601, message: `no ${method}` } });
  }
}

function onMessage(msg) {
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return;
  if (!('method' in msg)) {
    record(msg);
    return;
  }
  if (!('id' in msg)) {
    if (msg.method === 'notifications/initialized') state.initialized++;
    if (msg.method === 'notifications/cancelled') state.cancelled.push(msg.params?.requestId);
    return;
  }
  if (msg.method === 'initialize') return initialize(msg.id);
  if (mode === 'modern') return modern(msg);
  if (mode === 'never-init') return undefined;
  switch (msg.method) {
    case 'tools/call':
      return call(msg.id, msg.params);
    case 'tools/list':
    case 'resources/list':
    case 'resources/templates/list':
    case 'prompts/list':
      return listing(msg.id, msg.method, msg.params);
    case 'logging/setLevel':
      state.setLevel.push(msg.params?.level);
      return send({ id: msg.id, error: 'not an error object' });
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return send({ id: msg.id, result: 7 });
    case 'resources/read':
      if (msg.params?.uri === 'bad://ok') {
        return send({ id: msg.id, result: { contents: [{ uri: 'bad://ok', mimeType: 'text/plain', text: 'fine' }] } });
      }
      return send({ id: msg.id, result: { contents: 'not an array' } });
    case 'prompts/get':
      if (msg.params?.name === 'ok') {
        return send({ id: msg.id, result: { messages: [{ role: 'user', content: { type: 'text', text: 'hello' } }] } });
      }
      return send({ id: msg.id, result: { messages: [{ role: 'user' }, 'x'] } });
    case 'completion/complete':
      return send({ id: msg.id, result: { completion: { values: 'not an array' } } });
    default:
      return send({ id: msg.id, error: { code: -32601, message: `no ${msg.method}` } });
  }
}

let rest = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  rest += chunk;
  let nl;
  while ((nl = rest.indexOf('\n')) >= 0) {
    const line = rest.slice(0, nl);
    rest = rest.slice(nl + 1);
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      process.stderr.write(`bad-upstream: not JSON from the proxy: ${line.slice(0, 100)}\n`);
      continue;
    }
    Promise.resolve(onMessage(msg)).catch((e) => process.stderr.write(`bad-upstream: ${e.stack}\n`));
  }
});
process.stdin.on('end', () => process.exit(0));
