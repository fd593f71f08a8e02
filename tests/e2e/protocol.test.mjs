// SPDX-License-Identifier: MIT
// JSON-RPC and framing over stdio, with raw lines: every bad input gets the
// right error (or none, for notifications), the connection survives it (a
// ping after it is still answered), and stdout only ever carries JSON-RPC.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LATEST,
  configFile,
  isResponse,
  protocolProblems,
  responses,
  resultText,
  session,
  sleep,
} from './lib.mjs';

/** The next error response, whatever its id. */
function nextError(mcpd, timeout = 10000) {
  return mcpd.take((m) => isResponse(m) && 'error' in m, { what: 'an error response', timeout });
}

/** Asserts ping still works and the stream so far is well formed. */
async function assertAlive(mcpd) {
  assert.deepEqual(await mcpd.ping(), {});
  assert.deepEqual(protocolProblems(mcpd), []);
}

/**
 * Sends `line` (exactly these bytes) to an initialized mcpd, then a ping as
 * a barrier, and checks that exactly one error came back for the line, with
 * `code` (or one of a list) and id `id` (or one of a list), that the ping
 * was answered, and that nothing else was written.
 */
async function expectErrorFor(t, line, code, id, opts = {}) {
  const mcpd = await session(t, opts);
  const before = mcpd.messages.length;
  await mcpd.write(line);
  await mcpd.write('{"jsonrpc":"2.0","id":"barrier","method":"ping"}\n');
  const barrier = await mcpd.response('barrier');
  assert.deepEqual(barrier.result, {}, `ping after the bad line: ${JSON.stringify(barrier)}`);
  await sleep(50);
  const answers = mcpd.messages.slice(before).filter((m) => m.id !== 'barrier');
  const shown = JSON.stringify(Buffer.isBuffer(line) ? line.toString('latin1').slice(0, 100) : String(line).slice(0, 100));
  assert.equal(answers.length, 1, `want exactly one error for ${shown}, got ${JSON.stringify(answers).slice(0, 500)}`);
  const [res] = answers;
  assert.ok('error' in res, `${shown} was accepted: ${JSON.stringify(res).slice(0, 500)}`);
  const codes = Array.isArray(code) ? code : [code];
  assert.ok(codes.includes(res.error.code), `error code for ${shown}: want ${codes}, got ${JSON.stringify(res)}`);
  const ids = Array.isArray(id) ? id : [id];
  assert.ok(
    ids.some((want) => JSON.stringify(want) === JSON.stringify(res.id)),
    `id ${JSON.stringify(res.id)} is not one of ${JSON.stringify(ids)}`,
  );
  assert.deepEqual(protocolProblems(mcpd), []);
  return { mcpd, res };
}

describe('parse errors (-32700, id null)', () => {
  const cases = {
    'garbage text': 'this is not json\n',
    'truncated JSON': '{"jsonrpc":"2.0","id":901,"method":"ping"\n',
    'unterminated string': '{"jsonrpc":"2.0","id":901,"method":"ping\n',
    'trailing comma': '{"jsonrpc":"2.0","id":901,"method":"ping",}\n',
    'two values on one line': '{"jsonrpc":"2.0","id":901,"method":"ping"} {"jsonrpc":"2.0","id":902,"method":"ping"}\n',
    'single quotes': "{'jsonrpc':'2.0','id':1,'method':'ping'}\n",
    'NUL bytes only': Buffer.from([0, 0, 0, 0x0a]),
    'NUL byte inside a message': Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":901,'),
      Buffer.from([0]),
      Buffer.from('"method":"ping"}\n'),
    ]),
    'NUL byte after a complete message': Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":901,"method":"ping"}'),
      Buffer.from([0, 0]),
      Buffer.from('\n'),
    ]),
    'invalid UTF-8 (0xff) in a string': Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":901,"method":"ping","params":{"x":"a'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}}\n'),
    ]),
    'overlong UTF-8 encoding': Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":901,"method":"ping","params":{"x":"'),
      Buffer.from([0xc0, 0xaf]),
      Buffer.from('"}}\n'),
    ]),
    'UTF-8 encoded surrogate': Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":901,"method":"ping","params":{"x":"'),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('"}}\n'),
    ]),
    'truncated UTF-8 sequence': Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":901,"method":"ping","params":{"x":"'),
      Buffer.from([0xe2, 0x82]),
      Buffer.from('"}}\n'),
    ]),
    '100000 open brackets': `${'['.repeat(100000)}\n`,
  };
  for (const [name, line] of Object.entries(cases)) {
    test(name, async (t) => {
      const { mcpd } = await expectErrorFor(t, line, -32700, null);
      // The request inside the bad line must not have been answered.
      assert.ok(!mcpd.messages.some((m) => m.id === 901 || m.id === 902), 'a bad line was answered as a request');
    });
  }
});

describe('valid JSON that json-c alone would refuse is served', () => {
  // Python's json.dumps(10**20) and JavaScript's JSON.stringify of a string
  // cut inside an emoji write these; RFC 8259 calls both valid.
  test('an integer beyond 64 bits in _meta', async (t) => {
    const mcpd = await session(t);
    await mcpd.write(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"1+1"},"_meta":{"n":100000000000000000000}}}\n',
    );
    const res = await mcpd.response(1);
    assert.equal(resultText(res.result), '1+1', JSON.stringify(res));
    await assertAlive(mcpd);
  });
  test('a lone surrogate escape reads as U+FFFD', async (t) => {
    const mcpd = await session(t);
    await mcpd.write('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\\ud800 \\udc00x"}}}\n');
    const res = await mcpd.response(3);
    assert.equal(resultText(res.result), '\ufffd \ufffdx', JSON.stringify(res));
    await assertAlive(mcpd);
  });
  test('a roots/list answer with a lone surrogate gets no parse error', async (t) => {
    const mcpd = await session(t, { init: false });
    await mcpd.initialize(LATEST, { capabilities: { roots: {} } });
    const ask = await mcpd.take((m) => m.method === 'roots/list', { what: 'roots/list' });
    await mcpd.write(
      `{"jsonrpc":"2.0","id":${JSON.stringify(ask.id)},"result":{"roots":[{"uri":"file:///p","name":"proj \\ud83d"}]}}\n`,
    );
    await assertAlive(mcpd);
    await sleep(50);
    assert.ok(!mcpd.messages.some((m) => 'error' in m), JSON.stringify(mcpd.messages));
  });
  test('a number beyond a double is refused under the request id', async (t) => {
    await expectErrorFor(t, '{"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":1e400}}\n', -32602, 4);
  });
  test('leading zeros, NaN, comments and trailing commas stay parse errors', async (t) => {
    for (const line of [
      '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":007}}\n',
      '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}\n',
      '{"jsonrpc":"2.0","id":1,"method":"ping"} /* c */\n',
      '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":[1,]}}\n',
    ]) {
      await expectErrorFor(t, line, -32700, null);
    }
  });
});

describe('nesting deeper than the parser allows', () => {
  // Closed, these are valid JSON that mcpd does not build (beyond 512
  // levels): refused under the request's own id, with -32600, when the id
  // can be read; a notification gets nothing; and what is not JSON at all
  // stays a parse error.  Exactly one answer, no crash, and mcpd keeps
  // serving.
  test('100000 nested arrays, closed', async (t) => {
    await expectErrorFor(t, `${'['.repeat(100000)}${']'.repeat(100000)}\n`, -32600, null);
  });
  test('100000 nested objects inside params: -32600 under the request id', async (t) => {
    const deep = `${'{"a":'.repeat(100000)}1${'}'.repeat(100000)}`;
    await expectErrorFor(t, `{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":${deep}}}\n`, -32600, 'deep');
  });
  test('the id after the deep part is read too', async (t) => {
    const deep = `${'['.repeat(600)}${']'.repeat(600)}`;
    await expectErrorFor(t, `{"params":{"x":${deep}},"method":"ping","id":77,"jsonrpc":"2.0"}\n`, -32600, 77);
  });
  test('a deep notification gets nothing', async (t) => {
    const mcpd = await session(t);
    const deep = `${'['.repeat(600)}${']'.repeat(600)}`;
    await mcpd.write(`{"jsonrpc":"2.0","method":"notifications/x","params":{"x":${deep}}}\n`);
    await assertAlive(mcpd);
    await sleep(50);
    assert.equal(responses(mcpd).length, 2, JSON.stringify(responses(mcpd)).slice(0, 300));
  });
  test('deep and broken (a trailing comma) stays a parse error', async (t) => {
    const broken = `${'['.repeat(600)}1,]${']'.repeat(599)}`;
    await expectErrorFor(t, `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":${broken}}}\n`, -32700, null);
  });
});

describe('invalid requests (-32600)', () => {
  const cases = [
    ['missing jsonrpc', { id: 7, method: 'ping' }, 7],
    ['jsonrpc "1.0"', { jsonrpc: '1.0', id: 7, method: 'ping' }, 7],
    ['jsonrpc as a number', { jsonrpc: 2.0, id: 7, method: 'ping' }, 7],
    ['id null', { jsonrpc: '2.0', id: null, method: 'ping' }, null],
    ['id a float', { jsonrpc: '2.0', id: 1.5, method: 'ping' }, [null, 1.5]],
    ['id an object', { jsonrpc: '2.0', id: { a: 1 }, method: 'ping' }, [null, { a: 1 }]],
    ['id an array', { jsonrpc: '2.0', id: [1], method: 'ping' }, [null, [1]]],
    ['id a boolean', { jsonrpc: '2.0', id: true, method: 'ping' }, [null, true]],
    ['missing method', { jsonrpc: '2.0', id: 7 }, 7],
    ['method a number', { jsonrpc: '2.0', id: 7, method: 42 }, 7],
    ['method null', { jsonrpc: '2.0', id: 7, method: null }, 7],
    ['empty object', {}, null],
  ];
  for (const [name, msg, id] of cases) {
    test(name, async (t) => {
      await expectErrorFor(t, `${JSON.stringify(msg)}\n`, -32600, id);
    });
  }
  for (const [name, line] of [
    ['a JSON number', '42\n'],
    ['a JSON string', '"ping"\n'],
    ['JSON null', 'null\n'],
    ['JSON true', 'true\n'],
  ]) {
    test(name, async (t) => {
      await expectErrorFor(t, line, -32600, null);
    });
  }
});

describe('method and params errors', () => {
  test('unknown method -> -32601 with the id', async (t) => {
    await expectErrorFor(t, '{"jsonrpc":"2.0","id":"u1","method":"no/such/method"}\n', -32601, 'u1');
  });
  test('server/discover (2026 probe) on a legacy session -> error', async (t) => {
    const mcpd = await session(t);
    const res = await mcpd.request('server/discover', {});
    assert.ok('error' in res, JSON.stringify(res));
    await assertAlive(mcpd);
  });
  test('tools/call without name -> -32602', async (t) => {
    await expectErrorFor(t, '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}\n', -32602, 3);
  });
  test('tools/call with name not a string -> -32602', async (t) => {
    await expectErrorFor(t, '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}\n', -32602, 3);
  });
  test('tools/call with params an array -> -32602', async (t) => {
    await expectErrorFor(t, '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":["echo"]}\n', -32602, 3);
  });
  test('tools/call with params a string -> -32602 (or -32600: not structured)', async (t) => {
    // JSON-RPC 2.0 makes a non-structured params an invalid Request object.
    await expectErrorFor(t, '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"echo"}\n', [-32602, -32600], 3);
  });
  test('tools/call with arguments not an object -> -32602', async (t) => {
    await expectErrorFor(
      t,
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":"hi"}}\n',
      -32602,
      3,
    );
  });
  test('tools/call of an unknown tool -> -32602', async (t) => {
    await expectErrorFor(
      t,
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}\n',
      -32602,
      3,
    );
  });
  test('tools/list with a bogus cursor -> -32602', async (t) => {
    await expectErrorFor(t, '{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"bogus!"}}\n', -32602, 4);
  });
  test('logging/setLevel with an invalid level -> -32602', async (t) => {
    await expectErrorFor(t, '{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"loud"}}\n', -32602, 5);
  });
  test('arguments failing the input schema -> isError result naming the argument', async (t) => {
    const mcpd = await session(t);
    const res = await mcpd.request('tools/call', { name: 'echo', arguments: { txet: 'typo' } });
    assert.ok('result' in res, `expected a result, not a JSON-RPC error: ${JSON.stringify(res)}`);
    assert.equal(res.result.isError, true);
    assert.match(resultText(res.result), /\btext\b/);
    const wrongType = await mcpd.callTool('echo', { text: 42 });
    assert.equal(wrongType.isError, true, JSON.stringify(wrongType));
    assert.match(resultText(wrongType), /\btext\b/);
    await assertAlive(mcpd);
  });
  test('an unsolicited response from the client gets no reply', async (t) => {
    const mcpd = await session(t);
    await mcpd.write('{"jsonrpc":"2.0","id":999,"result":{}}\n');
    await mcpd.write('{"jsonrpc":"2.0","id":998,"error":{"code":-32601,"message":"no"}}\n');
    await assertAlive(mcpd);
    await sleep(100);
    assert.equal(responses(mcpd).length, 2, JSON.stringify(mcpd.messages));
  });
  test('unknown notifications are ignored', async (t) => {
    const mcpd = await session(t);
    await mcpd.notify('notifications/no_such_thing', { x: 1 });
    await mcpd.notify('no/such/method');
    await mcpd.notify('notifications/cancelled', { requestId: 'never-sent' });
    await assertAlive(mcpd);
    await sleep(100);
    assert.equal(responses(mcpd).length, 2, JSON.stringify(mcpd.messages));
  });
});

describe('a NUL character inside a name matches nothing', () => {
  test('tool "echo\\u0000evil" does not run echo: unknown tool, -32602', async (t) => {
    const { res } = await expectErrorFor(
      t,
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo\\u0000evil","arguments":{"text":"x"}}}\n',
      -32602,
      3,
    );
    assert.match(res.error.message, /Unknown tool/);
  });
  test('"jsonrpc":"2.0\\u0000junk" is not 2.0: -32600', async (t) => {
    await expectErrorFor(t, '{"jsonrpc":"2.0\\u0000junk","id":7,"method":"ping"}\n', -32600, 7);
  });
  test('"method":"ping\\u0000x" is no method: -32601', async (t) => {
    await expectErrorFor(t, '{"jsonrpc":"2.0","id":8,"method":"ping\\u0000x"}\n', -32601, 8);
  });
  test('the same as a notification gets no reply', async (t) => {
    const mcpd = await session(t);
    await mcpd.write('{"jsonrpc":"2.0","method":"ping\\u0000x"}\n');
    await mcpd.write('{"jsonrpc":"2.0","method":"notifications/initialized\\u0000"}\n');
    await assertAlive(mcpd);
    await sleep(100);
    assert.equal(responses(mcpd).length, 2, JSON.stringify(mcpd.messages));
  });
  test('protocolVersion "2025-06-18\\u0000x" is not 2025-06-18', async (t) => {
    const mcpd = await session(t, { init: false });
    const res = await mcpd.initialize('2025-06-18\u0000x');
    assert.equal(res.protocolVersion, LATEST);
  });
});

describe('ids', () => {
  test('string and integer ids are echoed with their type', async (t) => {
    const mcpd = await session(t);
    const ids = ['1', 1, 0, -5, 'abc', '', 9007199254740991, 'ü€😀'];
    for (const id of ids) {
      const res = await mcpd.request('ping', undefined, { id });
      assert.deepEqual(res, { jsonrpc: '2.0', id, result: {} });
    }
    // The raw text of the two "1"s differs: the type survived.
    assert.ok(mcpd.rawLines.some((l) => /"id":\s*"1"/.test(l)));
    assert.ok(mcpd.rawLines.some((l) => /"id":\s*1[,}]/.test(l)));
  });
});

describe('framing', () => {
  test('several messages in one write', async (t) => {
    const mcpd = await session(t);
    await mcpd.write(
      '{"jsonrpc":"2.0","id":"a","method":"ping"}\n{"jsonrpc":"2.0","id":"b","method":"ping"}\n' +
        '{"jsonrpc":"2.0","id":"c","method":"tools/list"}\n',
    );
    for (const id of ['a', 'b', 'c']) assert.ok('result' in (await mcpd.response(id)));
  });
  test('one message split across writes', async (t) => {
    const mcpd = await session(t);
    const msg = Buffer.from('{"jsonrpc":"2.0","id":"split","method":"tools/call","params":{"name":"echo","arguments":{"text":"h€llo"}}}\n');
    // Split inside the multi-byte "€" too.
    const cuts = [1, 10, 30, msg.indexOf(0xe2) + 1, msg.length - 1];
    let prev = 0;
    for (const cut of cuts) {
      await mcpd.write(msg.subarray(prev, cut));
      await sleep(30);
      prev = cut;
    }
    assert.equal(responses(mcpd).length, 1, 'answered before the line was complete');
    await mcpd.write(msg.subarray(prev));
    const res = await mcpd.response('split');
    assert.equal(resultText(res.result), 'h€llo');
  });
  test('byte-at-a-time writes', async (t) => {
    const mcpd = await session(t);
    const msg = '{"jsonrpc":"2.0","id":"bytes","method":"ping"}\n';
    for (const ch of msg) await mcpd.write(ch);
    assert.deepEqual((await mcpd.response('bytes')).result, {});
  });
  test('CRLF line endings are accepted', async (t) => {
    const mcpd = await session(t);
    await mcpd.write('{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r\n');
    await mcpd.write('{"jsonrpc":"2.0","id":"crlf2","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}\r\n');
    assert.deepEqual((await mcpd.response('crlf')).result, {});
    assert.equal(resultText((await mcpd.response('crlf2')).result), 'x');
    await assertAlive(mcpd);
    assert.equal(responses(mcpd).length, 4);
  });
  test('blank lines are ignored', async (t) => {
    const mcpd = await session(t);
    await mcpd.write('\n\n\r\n\n');
    await mcpd.write('{"jsonrpc":"2.0","id":"after-blank","method":"ping"}\n\n\n');
    assert.deepEqual((await mcpd.response('after-blank')).result, {});
    await assertAlive(mcpd);
    await sleep(50);
    assert.equal(responses(mcpd).length, 3, JSON.stringify(mcpd.messages));
  });
  test('responses are single lines of compact JSON terminated by \\n', async (t) => {
    const mcpd = await session(t);
    const res = await mcpd.callTool('echo', { text: 'line1\nline2\r\n\ttab' });
    assert.equal(resultText(res), 'line1\nline2\r\n\ttab');
    assert.deepEqual(protocolProblems(mcpd), []);
    assert.equal(mcpd.rawLines.length, mcpd.messages.length);
  });
});

describe('exactly one response per request', () => {
  test('a mixed stream of requests and notifications', async (t) => {
    const mcpd = await session(t);
    const requests = [
      { jsonrpc: '2.0', id: 'r1', method: 'ping' },
      { jsonrpc: '2.0', id: 'r2', method: 'tools/list' },
      { jsonrpc: '2.0', id: 'r3', method: 'no/such' },
      { jsonrpc: '2.0', id: 'r4', method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } },
      { jsonrpc: '2.0', id: 'r5', method: 'tools/call', params: { name: 'echo' } },
      { jsonrpc: '2.0', id: 'r6', method: 'tools/call', params: {} },
      { jsonrpc: '2.0', id: 'r7', method: 'initialize', params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
      { jsonrpc: '2.0', id: 'r8', method: 'logging/setLevel', params: { level: 'error' } },
    ];
    const notifications = [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', method: 'notifications/whatever' },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } },
    ];
    const lines = [];
    for (let i = 0; i < requests.length; i++) {
      lines.push(JSON.stringify(requests[i]));
      if (notifications[i]) lines.push(JSON.stringify(notifications[i]));
    }
    for (let round = 0; round < 3; round++) {
      await mcpd.write(`${lines.map((l) => l.replaceAll('"r', `"${round}r`)).join('\n')}\n`);
    }
    for (let round = 0; round < 3; round++) {
      for (const r of requests) await mcpd.response(`${round}${r.id}`);
    }
    await assertAlive(mcpd);
    await sleep(200);
    const counts = new Map();
    for (const m of responses(mcpd)) counts.set(JSON.stringify(m.id), (counts.get(JSON.stringify(m.id)) ?? 0) + 1);
    for (const [id, n] of counts) assert.equal(n, 1, `id ${id} answered ${n} times`);
    // 1 initialize + 3 rounds of 8 + 1 ping.
    assert.equal(responses(mcpd).length, 1 + 3 * requests.length + 1);
  });
});

describe('batches', () => {
  const batch = [
    { jsonrpc: '2.0', id: 'b1', method: 'ping' },
    { jsonrpc: '2.0', method: 'notifications/whatever' },
    { jsonrpc: '2.0', id: 'b2', method: 'tools/list' },
  ];

  for (const version of ['2025-11-25', '2025-06-18']) {
    test(`rejected under ${version} with one -32600`, async (t) => {
      const { mcpd } = await expectErrorFor(t, `${JSON.stringify(batch)}\n`, -32600, null, { version });
      assert.ok(!mcpd.messages.some(Array.isArray), 'answered with an array');
      assert.ok(!mcpd.messages.some((m) => m.id === 'b1' || m.id === 'b2'), 'batch members were served');
    });
  }

  test('rejected before initialize with one -32600', async (t) => {
    const mcpd = await session(t, { init: false });
    await mcpd.write(`${JSON.stringify(batch)}\n`);
    const res = await nextError(mcpd);
    assert.equal(res.error.code, -32600);
    assert.equal(res.id, null);
    assert.deepEqual(await mcpd.ping(), {});
    assert.ok(!mcpd.messages.some(Array.isArray));
  });

  test('accepted under 2025-03-26: one array of the responses', async (t) => {
    const mcpd = await session(t, { version: '2025-03-26' });
    await mcpd.write(`${JSON.stringify(batch)}\n`);
    const arr = await mcpd.take(Array.isArray, { what: 'a batch response array' });
    assert.equal(arr.length, 2, JSON.stringify(arr));
    const byId = Object.fromEntries(arr.map((m) => [m.id, m]));
    assert.deepEqual(byId.b1, { jsonrpc: '2.0', id: 'b1', result: {} });
    assert.ok(Array.isArray(byId.b2.result.tools));
    assert.deepEqual(protocolProblems(mcpd), []);
    await assertAlive(mcpd);
    assert.ok(!mcpd.messages.some((m) => !Array.isArray(m) && (m.id === 'b1' || m.id === 'b2')), 'batch members also answered singly');
  });

  test('2025-03-26: errors inside a batch stay in the array', async (t) => {
    const mcpd = await session(t, { version: '2025-03-26' });
    await mcpd.write(
      `${JSON.stringify([1, { jsonrpc: '2.0', id: 'e1', method: 'no/such' }, { jsonrpc: '2.0', id: 'e2', method: 'tools/call', params: { name: 'echo', arguments: { text: 'in batch' } } }])}\n`,
    );
    const arr = await mcpd.take(Array.isArray, { what: 'a batch response array' });
    assert.equal(arr.length, 3, JSON.stringify(arr));
    const invalid = arr.find((m) => m.id === null);
    assert.equal(invalid?.error?.code, -32600, JSON.stringify(arr));
    assert.equal(arr.find((m) => m.id === 'e1')?.error?.code, -32601, JSON.stringify(arr));
    assert.equal(resultText(arr.find((m) => m.id === 'e2').result), 'in batch');
    await assertAlive(mcpd);
  });

  test('2025-03-26: a member with a number beyond a double is refused alone, under its own id', async (t) => {
    const mcpd = await session(t, { version: '2025-03-26' });
    await mcpd.write(
      '[{"jsonrpc":"2.0","id":"u1","method":"ping","params":{"x":1e400}},' +
        '{"jsonrpc":"2.0","id":"u2","method":"ping"},' +
        '{"jsonrpc":"2.0","method":"notifications/x","params":{"y":-1e999}}]\n',
    );
    const arr = await mcpd.take(Array.isArray, { what: 'a batch response array' });
    assert.equal(arr.length, 2, JSON.stringify(arr));
    assert.equal(arr.find((m) => m.id === 'u1')?.error?.code, -32602, JSON.stringify(arr));
    assert.deepEqual(arr.find((m) => m.id === 'u2'), { jsonrpc: '2.0', id: 'u2', result: {} });
    await assertAlive(mcpd);
  });

  test('2025-03-26: an empty array -> one -32600', async (t) => {
    const { mcpd } = await expectErrorFor(t, '[]\n', -32600, null, { version: '2025-03-26' });
    assert.ok(!mcpd.messages.some(Array.isArray));
  });

  test('2025-03-26: a batch of notifications only -> no response', async (t) => {
    const mcpd = await session(t, { version: '2025-03-26' });
    await mcpd.write(`${JSON.stringify([{ jsonrpc: '2.0', method: 'notifications/a' }, { jsonrpc: '2.0', method: 'notifications/b' }])}\n`);
    await assertAlive(mcpd);
    await sleep(100);
    assert.equal(mcpd.messages.length, 2, JSON.stringify(mcpd.messages));
  });
});

describe('version negotiation', () => {
  const table = [
    ['2025-11-25', '2025-11-25'],
    ['2025-06-18', '2025-06-18'],
    ['2025-03-26', '2025-03-26'],
    ['2024-11-05', '2024-11-05'],
    ['2026-07-28', LATEST],
    ['2099-01-01', LATEST],
    ['1.0.0', LATEST],
  ];
  for (const [asked, answered] of table) {
    test(`${asked} -> ${answered}`, async (t) => {
      const mcpd = await session(t, { init: false });
      const res = await mcpd.initialize(asked);
      assert.equal(res.protocolVersion, answered);
      assert.equal(res.serverInfo.name, 'mcpd');
      assert.equal(typeof res.serverInfo.version, 'string');
      assert.ok(res.serverInfo.version.length > 0);
      assert.equal(typeof res.serverInfo.title, 'string');
      assert.equal(res.capabilities.tools?.listChanged, true, JSON.stringify(res.capabilities));
      assert.deepEqual(typeof res.capabilities.logging, 'object');
      assert.notEqual(res.capabilities.logging, null);
      await assertAlive(mcpd);
    });
  }
});

describe('lifecycle rules', () => {
  test('ping before initialize -> exactly {}', async (t) => {
    const mcpd = await session(t, { init: false });
    const res = await mcpd.request('ping', undefined, { id: 'p0' });
    assert.deepEqual(res, { jsonrpc: '2.0', id: 'p0', result: {} });
    assert.match(mcpd.rawLines.at(-1), /"result":\s*\{\s*\}/);
  });
  test('ping after initialize -> exactly {}', async (t) => {
    const mcpd = await session(t);
    const res = await mcpd.request('ping', undefined, { id: 'p1' });
    assert.deepEqual(res, { jsonrpc: '2.0', id: 'p1', result: {} });
  });
  test('ping with params (and _meta) -> {}', async (t) => {
    const mcpd = await session(t);
    const res = await mcpd.request('ping', { _meta: { x: 1 } });
    assert.deepEqual(res.result, {});
  });
  for (const method of ['tools/list', 'tools/call', 'logging/setLevel']) {
    test(`${method} before initialize -> -32600`, async (t) => {
      const mcpd = await session(t, { init: false });
      const params = method === 'tools/call' ? { name: 'echo', arguments: { text: 'x' } } : method === 'logging/setLevel' ? { level: 'info' } : {};
      const res = await mcpd.request(method, params);
      assert.equal(res.error?.code, -32600, JSON.stringify(res));
      assert.deepEqual(await mcpd.ping(), {});
      // And initialize still works afterwards.
      const init = await mcpd.initialize();
      assert.equal(init.protocolVersion, LATEST);
    });
  }
  test('initialize without a usable protocolVersion -> -32602, then a good one works', async (t) => {
    const mcpd = await session(t, { init: false });
    for (const params of [{}, { protocolVersion: 5, capabilities: {}, clientInfo: { name: 'x', version: '1' } }]) {
      const res = await mcpd.request('initialize', params);
      assert.equal(res.error?.code, -32602, JSON.stringify(res));
    }
    assert.equal((await mcpd.initialize()).protocolVersion, LATEST);
  });

  test('a second initialize -> error, session unchanged', async (t) => {
    const mcpd = await session(t, { version: '2025-06-18' });
    const res = await mcpd.request('initialize', {
      protocolVersion: '2025-03-26',
      capabilities: {},
      clientInfo: { name: 'again', version: '1' },
    });
    assert.ok('error' in res, JSON.stringify(res));
    // Still 2025-06-18: batches stay refused.
    await mcpd.write('[{"jsonrpc":"2.0","id":"x","method":"ping"}]\n');
    const err = await nextError(mcpd);
    assert.equal(err.error.code, -32600);
    await assertAlive(mcpd);
  });
  test('requests before notifications/initialized are served', async (t) => {
    const mcpd = await session(t, { init: false });
    await mcpd.call('initialize', { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: 'x', version: '1' } });
    const res = await mcpd.request('tools/list', {});
    // Lenient either way, but exactly one answer and no crash.
    assert.ok('result' in res || 'error' in res);
    await assertAlive(mcpd);
  });
});

describe('message size limits', () => {
  test('a 65 MiB line with the default limit -> -32600, connection kept', { timeout: 120000 }, async (t) => {
    const mcpd = await session(t);
    const pad = 'x'.repeat(65 * 1024 * 1024);
    await mcpd.write(`{"jsonrpc":"2.0","id":"huge","method":"ping","params":{"pad":"${pad}"}}\n`);
    const res = await nextError(mcpd, 60000);
    assert.equal(res.error.code, -32600);
    assert.equal(res.id, null);
    await assertAlive(mcpd);
    assert.ok(!mcpd.messages.some((m) => m.id === 'huge'), 'the oversized request was answered');
  });

  test('--max-message-size 1024: oversize -> -32600, the rest of the line discarded', async (t) => {
    const mcpd = await session(t, { args: ['--max-message-size', '1024'] });
    const big = `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"echo","arguments":{"text":"${'y'.repeat(5000)}"}}}\n`;
    // The ping follows in the same write: only the oversized line is lost.
    await mcpd.write(`${big}{"jsonrpc":"2.0","id":"after","method":"ping"}\n`);
    const res = await nextError(mcpd);
    assert.equal(res.error.code, -32600);
    assert.equal(res.id, null);
    assert.deepEqual((await mcpd.response('after')).result, {});
    // Oversized and split across writes, with something that looks like a
    // message in the part that must be discarded.
    await mcpd.write(`{"jsonrpc":"2.0","id":"big2","method":"ping","params":{"pad":"${'z'.repeat(1500)}`);
    await sleep(50);
    await mcpd.write(`"}, "x": {"jsonrpc":"2.0","id":"ghost","method":"ping"}}\n`);
    const res2 = await nextError(mcpd);
    assert.equal(res2.error.code, -32600);
    // A message under the limit still works.
    const ok = await mcpd.callTool('echo', { text: 'u'.repeat(800) });
    assert.equal(resultText(ok), 'u'.repeat(800));
    await assertAlive(mcpd);
    await sleep(100);
    assert.ok(!mcpd.messages.some((m) => ['big', 'big2', 'ghost'].includes(m.id)), JSON.stringify(mcpd.messages.map((m) => m.id)));
  });

  test('a client that stops reading for a while loses nothing', { timeout: 60000 }, async (t) => {
    const mcpd = await session(t);
    mcpd.child.stdout.pause();
    const texts = Array.from({ length: 16 }, (_, i) => `${i}:`.padEnd(512 * 1024, String.fromCharCode(97 + i)));
    for (let i = 0; i < texts.length; i++) {
      await mcpd.write({ jsonrpc: '2.0', id: `big${i}`, method: 'tools/call', params: { name: 'echo', arguments: { text: texts[i] } } });
    }
    await mcpd.write('{"jsonrpc":"2.0","id":"last","method":"ping"}\n');
    await sleep(1000);
    mcpd.child.stdout.resume();
    for (let i = 0; i < texts.length; i++) {
      const res = await mcpd.response(`big${i}`, { timeout: 30000 });
      assert.ok(resultText(res.result) === texts[i], `response ${i} differs`);
    }
    assert.deepEqual((await mcpd.response('last')).result, {});
    await assertAlive(mcpd);
  });

  test('a 10 MiB echo round trip comes back intact', { timeout: 120000 }, async (t) => {
    const mcpd = await session(t);
    const unit = 'abc \u00e9\u20ac\ud83d\ude00 "q" \\ \n\t\u0001 xyz ';
    const text = unit.repeat(Math.ceil((10 * 1024 * 1024) / Buffer.byteLength(unit)));
    const res = await mcpd.callTool('echo', { text }, { timeout: 60000 });
    assert.equal(res.isError ?? false, false);
    const back = resultText(res);
    assert.equal(back.length, text.length);
    assert.ok(back === text, 'echoed text differs');
    await assertAlive(mcpd);
  });
});

describe('tools/list pagination', () => {
  async function listAll(mcpd) {
    const names = [];
    let cursor;
    let pages = 0;
    do {
      const res = await mcpd.call('tools/list', cursor === undefined ? {} : { cursor });
      names.push(...res.tools.map((x) => x.name));
      cursor = res.nextCursor;
      if (cursor !== undefined) assert.equal(typeof cursor, 'string');
      pages++;
      assert.ok(pages < 1000, 'pagination does not end');
    } while (cursor !== undefined);
    return { names, pages };
  }

  test('--page-size 2 pages through every tool once', async (t) => {
    const config = await configFile({ plugins: { many: { count: 7 } } });
    const plugins = ['echo', 'calc', 'many'];
    const full = await session(t, { plugins, args: ['--config', config] });
    const all = await listAll(full);
    assert.equal(all.pages, 1, 'the default page size should hold 10 tools');
    assert.equal(all.names.length, 10, `tools: ${all.names}`);
    const paged = await session(t, { plugins, args: ['--config', config, '--page-size', '2'] });
    const some = await listAll(paged);
    assert.equal(some.pages, 5);
    assert.equal(new Set(some.names).size, some.names.length, `duplicates: ${some.names}`);
    assert.deepEqual([...some.names].sort(), [...all.names].sort());
    assert.ok(all.names.includes('echo') && all.names.includes('calculate') && all.names.includes('t6'));
  });

  test('10000 run-time tools page through with the default page size', { timeout: 60000 }, async (t) => {
    const mcpd = await session(t, { plugins: ['echo', 'many'] });
    const { names, pages } = await listAll(mcpd);
    assert.ok(pages > 1, 'expected more than one page for 10002 tools');
    assert.equal(names.length, 10002);
    assert.equal(new Set(names).size, names.length);
    for (const n of ['echo', 'many_echo', 't0', 't9999']) assert.ok(names.includes(n), `${n} missing`);
    assert.equal(resultText(await mcpd.callTool('t9999', { text: 'last' })), 'last');
  });

  test('bogus cursor -> -32602 with --page-size too', async (t) => {
    const config = await configFile({ plugins: { many: { count: 7 } } });
    const mcpd = await session(t, { plugins: ['echo', 'calc', 'many'], args: ['--config', config, '--page-size', '2'] });
    const first = await mcpd.call('tools/list', {});
    assert.ok(first.nextCursor !== undefined);
    for (const cursor of ['bogus', `${first.nextCursor}x`, 'A'.repeat(5000)]) {
      const res = await mcpd.request('tools/list', { cursor });
      assert.equal(res.error?.code, -32602, `cursor ${JSON.stringify(cursor.slice(0, 20))}: ${JSON.stringify(res)}`);
    }
    const bad = await mcpd.request('tools/list', { cursor: 5 });
    assert.equal(bad.error?.code, -32602, JSON.stringify(bad));
    await assertAlive(mcpd);
  });
});

describe('tool calls (good.so)', () => {
  const plugins = ['echo', 'good'];

  test('add returns text and structuredContent', async (t) => {
    const mcpd = await session(t, { plugins });
    const res = await mcpd.callTool('add', { a: 2, b: 40 });
    assert.notEqual(res.isError, true);
    assert.equal(resultText(res).trim(), '42');
    assert.deepEqual(res.structuredContent, { sum: 42 });
  });

  test('async_echo completes later', async (t) => {
    const mcpd = await session(t, { plugins });
    const res = await mcpd.callTool('async_echo', { text: 'later' });
    assert.equal(resultText(res), 'later');
  });

  test('a tool that builds nothing / garbage -> -32603; fail -> isError', async (t) => {
    const mcpd = await session(t, { plugins });
    for (const name of ['nothing', 'garbage']) {
      const res = await mcpd.request('tools/call', { name, arguments: {} });
      assert.equal(res.error?.code, -32603, `${name}: ${JSON.stringify(res)}`);
    }
    const fail = await mcpd.request('tools/call', { name: 'fail', arguments: {} });
    assert.ok('result' in fail, JSON.stringify(fail));
    assert.equal(fail.result.isError, true);
    await assertAlive(mcpd);
  });

  test('notifications/cancelled: no response for the cancelled call', { timeout: 30000 }, async (t) => {
    const mcpd = await session(t, { plugins });
    await mcpd.write({ jsonrpc: '2.0', id: 'cancel-me', method: 'tools/call', params: { name: 'slow', arguments: { ms: 1500 } } });
    await mcpd.write({ jsonrpc: '2.0', id: 'keep-me', method: 'tools/call', params: { name: 'slow', arguments: { ms: 1500 } } });
    await sleep(200);
    await mcpd.notify('notifications/cancelled', { requestId: 'cancel-me', reason: 'test' });
    // The uncancelled twin completes; then give the cancelled one as long
    // again before checking that nothing came for it.
    const kept = await mcpd.response('keep-me', { timeout: 15000 });
    assert.ok('result' in kept, JSON.stringify(kept));
    await sleep(1500);
    await assertAlive(mcpd);
    assert.ok(!mcpd.messages.some((m) => m.id === 'cancel-me'), 'a response was sent for a cancelled request');
  });

  test('notifications/cancelled after the response, for unknown ids or malformed: ignored', async (t) => {
    const mcpd = await session(t, { plugins });
    const done = await mcpd.request('tools/call', { name: 'echo', arguments: { text: 'x' } });
    assert.ok('result' in done, JSON.stringify(done));
    const before = mcpd.messages.length;
    // The call already answered, an id never used, a missing and a
    // malformed requestId, and initialize (which cannot be cancelled).
    await mcpd.notify('notifications/cancelled', { requestId: done.id });
    await mcpd.notify('notifications/cancelled', { requestId: 'never-sent' });
    await mcpd.notify('notifications/cancelled', {});
    await mcpd.notify('notifications/cancelled', { requestId: { x: 1 } });
    await mcpd.notify('notifications/cancelled', { requestId: 0 });
    await assertAlive(mcpd);
    await sleep(100);
    // Nothing answered the notifications; only the liveness check's reply.
    const extra = mcpd.messages.slice(before).filter((m) => m.method === undefined && m.id !== undefined);
    assert.equal(extra.length, 1, JSON.stringify(mcpd.messages.slice(before)));
    const res = await mcpd.request('tools/call', { name: 'echo', arguments: { text: 'still' } });
    assert.equal(resultText(res.result), 'still');
  });

  for (const token of ['tok-1', 7]) {
    test(`progress: token ${JSON.stringify(token)} echoed verbatim, increasing, none after the response`, async (t) => {
      const mcpd = await session(t, { plugins });
      const res = await mcpd.request('tools/call', { name: 'progress', arguments: { steps: 4 } }, { meta: { progressToken: token } });
      assert.ok('result' in res, JSON.stringify(res));
      const answeredAt = mcpd.messages.indexOf(res);
      await assertAlive(mcpd);
      await sleep(100);
      const progress = mcpd.messages.filter((m) => m.method === 'notifications/progress');
      assert.ok(progress.length >= 1, 'no notifications/progress');
      for (const p of progress) {
        assert.deepEqual(p.params.progressToken, token, `token changed: ${JSON.stringify(p)}`);
        assert.ok(mcpd.messages.indexOf(p) < answeredAt, `progress after the response: ${JSON.stringify(p)}`);
      }
      for (let i = 1; i < progress.length; i++) assert.ok(progress[i].params.progress > progress[i - 1].params.progress);
      // Without a token, no progress notifications at all.
      const before = mcpd.messages.length;
      await mcpd.callTool('progress', { steps: 3 });
      await assertAlive(mcpd);
      assert.ok(!mcpd.messages.slice(before).some((m) => m.method === 'notifications/progress'));
    });
  }

  test('logging/setLevel filters notifications/message', async (t) => {
    const mcpd = await session(t, { plugins });
    assert.deepEqual(await mcpd.call('logging/setLevel', { level: 'warning' }), {});
    await mcpd.callTool('log', {});
    await assertAlive(mcpd);
    await sleep(100);
    const levels = mcpd.notifications.filter((n) => n.method === 'notifications/message').map((n) => n.params.level);
    assert.deepEqual([...levels].sort(), ['error', 'warning'], JSON.stringify(mcpd.notifications));
    for (const n of mcpd.notifications.filter((x) => x.method === 'notifications/message')) {
      assert.ok('data' in n.params);
    }
  });

  test('stdout written by a tool never reaches the protocol stream', async (t) => {
    const mcpd = await session(t, { plugins });
    const res = await mcpd.request('tools/call', { name: 'stdout_writer', arguments: {} });
    assert.ok('result' in res || 'error' in res);
    for (let i = 0; i < 3; i++) await mcpd.callTool('echo', { text: `after ${i}` });
    await assertAlive(mcpd);
    await mcpd.close();
    assert.deepEqual(mcpd.badLines, []);
  });
});
