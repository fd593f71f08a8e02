// SPDX-License-Identifier: MIT
// The 2026-07-28 ("modern") revision over stdio, with raw JSON-RPC lines:
// era selection per connection, the per-request envelope, the modern
// results (resultType, serverInfo, cache hints) and errors, and the legacy
// path beside it, unchanged.  Every check reads what a client would see.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LATEST,
  McpdProcess,
  configFile,
  isResponse,
  makePluginDir,
  protocolProblems,
  resultText,
  session,
  sleep,
} from './lib.mjs';

const MODERN = '2026-07-28';
const K = 'io.modelcontextprotocol/';
const SERVER_INFO = `${K}serverInfo`;

/** A modern envelope: version and capabilities, plus whatever `extra` adds. */
function envelope(extra = {}, { capabilities = {} } = {}) {
  return {
    [`${K}protocolVersion`]: MODERN,
    [`${K}clientCapabilities`]: capabilities,
    [`${K}clientInfo`]: { name: 'mcpd-e2e', version: '0.0.0' },
    ...extra,
  };
}

/** Sends a modern request: `params` with the envelope as its _meta. */
function modern(mcpd, method, params = {}, meta = envelope()) {
  return mcpd.request(method, { ...params, _meta: meta });
}

/** An mcpd that has not been initialized, with `plugins`. */
function fresh(t, { plugins = ['echo'], args = [] } = {}) {
  return session(t, { plugins, args, init: false });
}

/** The modern members every result must carry. */
function assertModernResult(res, what) {
  assert.ok('result' in res, `${what}: ${JSON.stringify(res).slice(0, 400)}`);
  assert.equal(res.result.resultType, 'complete', what);
  assert.equal(res.result._meta?.[SERVER_INFO]?.name, 'mcpd', what);
  assert.equal(typeof res.result._meta[SERVER_INFO].version, 'string', what);
}

function assertCacheable(res, what) {
  assert.ok(Number.isInteger(res.result.ttlMs) && res.result.ttlMs >= 0, `${what}: ttlMs`);
  assert.equal(res.result.cacheScope, 'public', `${what}: cacheScope`);
}

function assertError(res, code, what) {
  assert.ok('error' in res, `${what}: want error ${code}, got ${JSON.stringify(res).slice(0, 400)}`);
  assert.equal(res.error.code, code, `${what}: ${JSON.stringify(res.error)}`);
}

describe('server/discover', () => {
  test('answers on a fresh connection with versions, capabilities and cache hints', async (t) => {
    const config = await configFile({ instructions: 'Use echo.' });
    const mcpd = await fresh(t, { args: ['--config', config] });
    const res = await modern(mcpd, 'server/discover', {}, envelope({}, {}));
    assertModernResult(res, 'discover');
    assertCacheable(res, 'discover');
    assert.deepEqual(res.result.supportedVersions, [MODERN]);
    assert.equal(res.result.instructions, 'Use echo.');
    for (const cap of ['tools', 'resources', 'prompts', 'completions', 'logging'])
      assert.equal(typeof res.result.capabilities[cap], 'object', cap);
    // No handshake fields in the body.
    assert.equal(res.result.serverInfo, undefined);
    assert.equal(res.result.protocolVersion, undefined);
    assert.deepEqual(protocolProblems(mcpd), []);
  });

  test('leaves the connection undecided: initialize still works after it', async (t) => {
    const mcpd = await fresh(t);
    assertModernResult(await modern(mcpd, 'server/discover'), 'discover');
    const init = await mcpd.initialize(LATEST);
    assert.equal(init.protocolVersion, LATEST);
    assert.deepEqual(await mcpd.ping(), {});
  });

  test('is answered after a legacy initialize too, which stays legacy', async (t) => {
    const mcpd = await session(t);
    assertModernResult(await modern(mcpd, 'server/discover'), 'discover');
    const list = await mcpd.request('tools/list', {});
    assert.equal(list.result.resultType, undefined);
    assert.deepEqual(await mcpd.ping(), {});
  });

  test('without the claim it is not a method of the legacy revision', async (t) => {
    const mcpd = await fresh(t);
    assertError(await mcpd.request('server/discover', {}), -32601, 'claim-less discover');
  });

  test('stdin closing right after it ends the process at once', async (t) => {
    const dir = await makePluginDir(['echo']);
    const mcpd = new McpdProcess([], { plugins: dir });
    t.after(() => mcpd.close());
    const res = await modern(mcpd, 'server/discover');
    assertModernResult(res, 'discover');
    const start = Date.now();
    mcpd.endInput();
    const { code } = await mcpd.waitExit(2000);
    const took = Date.now() - start;
    assert.equal(code, 0, mcpd.stderr);
    assert.ok(took < 1000, `exit took ${took} ms`);
  });

  test('a probe as the very first line, then EOF: one answer, exit 0', async (t) => {
    const dir = await makePluginDir(['echo']);
    const mcpd = new McpdProcess([], { plugins: dir });
    t.after(() => mcpd.close());
    await mcpd.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 'server-discover-probe-1', method: 'server/discover', params: { _meta: envelope() } })}\n`,
    );
    mcpd.endInput();
    const { code } = await mcpd.waitExit(2000);
    assert.equal(code, 0, mcpd.stderr);
    assert.equal(mcpd.messages.length, 1);
    assert.equal(mcpd.messages[0].id, 'server-discover-probe-1');
    assertModernResult(mcpd.messages[0], 'probe');
  });
});

describe('pinning the connection', () => {
  test('a modern request pins modern: claim-less initialize gets -32022 with the versions', async (t) => {
    const mcpd = await fresh(t);
    assertModernResult(await modern(mcpd, 'tools/list'), 'tools/list');
    const res = await mcpd.request('initialize', {
      protocolVersion: LATEST,
      capabilities: {},
      clientInfo: { name: 'c', version: '1' },
    });
    assertError(res, -32022, 'initialize after modern');
    assert.deepEqual(res.error.data, { supported: [MODERN], requested: LATEST });
  });

  test('on a modern connection a claim-less request is an envelope error (-32602)', async (t) => {
    const mcpd = await fresh(t);
    assertModernResult(await modern(mcpd, 'tools/list'), 'tools/list');
    assertError(await mcpd.request('tools/list', {}), -32602, 'claim-less tools/list');
    assertError(await mcpd.request('ping'), -32602, 'claim-less ping');
  });

  test('a claimed initialize is a modern call to a method that does not exist', async (t) => {
    const mcpd = await fresh(t);
    const res = await modern(mcpd, 'initialize', { protocolVersion: LATEST, capabilities: {} });
    assertError(res, -32601, 'claimed initialize');
  });

  test('initialize pins legacy: a claimed request other than discover gets -32600', async (t) => {
    const mcpd = await session(t);
    assertError(await modern(mcpd, 'tools/list'), -32600, 'claimed tools/list on legacy');
    // The legacy connection is untouched by it.
    const list = await mcpd.call('tools/list', {});
    assert.deepEqual(Object.keys(list), ['tools']);
  });

  test('a refused claim does not pin: -32022 or -32602 leave initialize possible', async (t) => {
    const mcpd = await fresh(t);
    assertError(
      await modern(mcpd, 'tools/list', {}, envelope({ [`${K}protocolVersion`]: '2099-01-01' })),
      -32022,
      'unknown version',
    );
    assertError(await modern(mcpd, 'tools/list', {}, { [`${K}protocolVersion`]: MODERN }), -32602, 'no capabilities');
    assert.equal((await mcpd.initialize(LATEST)).protocolVersion, LATEST);
  });

  test('batches are refused on a modern connection', async (t) => {
    const mcpd = await fresh(t);
    assertModernResult(await modern(mcpd, 'tools/list'), 'tools/list');
    await mcpd.write(`[${JSON.stringify({ jsonrpc: '2.0', id: 'b1', method: 'tools/list', params: { _meta: envelope() } })}]\n`);
    const res = await mcpd.nullIdError();
    assert.equal(res.error.code, -32600);
  });
});

describe('the envelope', () => {
  const cases = {
    'protocolVersion not a string': [{ [`${K}protocolVersion`]: 20260728, [`${K}clientCapabilities`]: {} }, -32602],
    'clientCapabilities missing': [{ [`${K}protocolVersion`]: MODERN }, -32602],
    'clientCapabilities not an object': [{ [`${K}protocolVersion`]: MODERN, [`${K}clientCapabilities`]: [] }, -32602],
    'clientInfo not an object': [envelope({ [`${K}clientInfo`]: 'me' }), -32602],
    'logLevel unknown': [envelope({ [`${K}logLevel`]: 'loud' }), -32602],
  };
  for (const [name, [meta, code]] of Object.entries(cases)) {
    test(`${name} → ${code}`, async (t) => {
      const mcpd = await fresh(t);
      const res = await modern(mcpd, 'tools/list', {}, meta);
      assertError(res, code, name);
      assert.equal(res.id !== null, true, 'errors echo the id');
    });
  }

  test('an unsupported version → -32022 with supported and requested', async (t) => {
    const mcpd = await fresh(t);
    const res = await modern(mcpd, 'tools/list', {}, envelope({ [`${K}protocolVersion`]: '2025-11-25' }));
    assertError(res, -32022, 'legacy version in the envelope');
    assert.deepEqual(res.error.data, { supported: [MODERN], requested: '2025-11-25' });
  });

  test('clientInfo may be left out, unknown keys are tolerated', async (t) => {
    const mcpd = await fresh(t);
    const meta = {
      [`${K}protocolVersion`]: MODERN,
      [`${K}clientCapabilities`]: { experimental: { x: {} }, somethingNew: {} },
      'example.com/unknown': 1,
    };
    assertModernResult(await modern(mcpd, 'tools/list', {}, meta), 'tools/list');
  });

  test('string and integer ids are echoed', async (t) => {
    const mcpd = await fresh(t);
    for (const id of ['server-discover-probe-1', 0, 42]) {
      const res = await mcpd.request('server/discover', { _meta: envelope() }, { id });
      assert.equal(res.id, id);
    }
  });
});

describe('modern methods and results', () => {
  test('lists carry resultType, serverInfo, ttlMs and cacheScope', async (t) => {
    const mcpd = await fresh(t, { plugins: ['echo', 'everything'] });
    for (const method of ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']) {
      const res = await modern(mcpd, method);
      assertModernResult(res, method);
      assertCacheable(res, method);
    }
  });

  test('tools/list is the legacy list plus the modern members, in the same order', async (t) => {
    const legacy = await session(t, { plugins: ['echo', 'everything'] });
    const mcpd = await fresh(t, { plugins: ['echo', 'everything'] });
    const old = await legacy.call('tools/list', {});
    const res = await modern(mcpd, 'tools/list');
    assert.deepEqual(
      res.result.tools.map((x) => x.name),
      old.tools.map((x) => x.name),
    );
    assert.deepEqual(res.result.tools, old.tools);
  });

  test('tools/call of echo: the result, resultType and serverInfo, no cache hints', async (t) => {
    const mcpd = await fresh(t);
    const res = await modern(mcpd, 'tools/call', { name: 'echo', arguments: { text: 'héllo' } });
    assertModernResult(res, 'echo');
    assert.equal(resultText(res.result), 'héllo');
    assert.equal(res.result.ttlMs, undefined);
    assert.equal(res.result.cacheScope, undefined);
  });

  test('echo of text that looks like our members still gives one of each', async (t) => {
    const mcpd = await fresh(t);
    const text = '{"_meta":1,"resultType":"x","ttlMs":2}';
    const res = await modern(mcpd, 'tools/call', { name: 'echo', arguments: { text } });
    assertModernResult(res, 'echo');
    assert.equal(resultText(res.result), text);
    const raw = mcpd.rawLines.find((l) => l.includes('"resultType":"complete"') && l.includes('ttlMs\\"'));
    assert.equal(raw.split('"resultType":').length, 2, raw);
  });

  test("everything's tools over the modern path", async (t) => {
    const mcpd = await fresh(t, { plugins: ['everything'] });
    const text = await modern(mcpd, 'tools/call', { name: 'test_simple_text', arguments: {} });
    assertModernResult(text, 'test_simple_text');
    assert.ok(resultText(text.result).length > 0);
    const image = await modern(mcpd, 'tools/call', { name: 'test_image_content', arguments: {} });
    assertModernResult(image, 'test_image_content');
    assert.equal(image.result.content[0].type, 'image');
    const err = await modern(mcpd, 'tools/call', { name: 'test_error_handling', arguments: {} });
    assertModernResult(err, 'test_error_handling');
    assert.equal(err.result.isError, true);
    const unknown = await modern(mcpd, 'tools/call', { name: 'nope', arguments: {} });
    assertError(unknown, -32602, 'unknown tool');
  });

  test('progress reaches a request that sent a progressToken, before its response', async (t) => {
    const mcpd = await fresh(t, { plugins: ['everything'] });
    const res = await modern(mcpd, 'tools/call', { name: 'test_tool_with_progress', arguments: {} }, envelope({ progressToken: 'p1' }));
    assertModernResult(res, 'progress tool');
    const progress = mcpd.notifications.filter((n) => n.method === 'notifications/progress');
    assert.ok(progress.length >= 1);
    assert.ok(progress.every((n) => n.params.progressToken === 'p1'));
    const at = (m) => mcpd.messages.indexOf(m);
    assert.ok(progress.every((n) => at(n) < at(res)));
  });

  test('resources/read: a resource carries cache hints; a missing one is -32602 with data.uri', async (t) => {
    const mcpd = await fresh(t, { plugins: ['everything'] });
    const ok = await modern(mcpd, 'resources/read', { uri: 'test://static-text' });
    assertModernResult(ok, 'read');
    assertCacheable(ok, 'read');
    assert.equal(ok.result.contents[0].uri, 'test://static-text');
    const missing = await modern(mcpd, 'resources/read', { uri: 'test://missing' });
    assertError(missing, -32602, 'missing resource');
    assert.deepEqual(missing.error.data, { uri: 'test://missing' });
  });

  test("a plugin's own not found is -32602 with data.uri here, -32002 on legacy", async (t) => {
    const mcpd = await fresh(t, { plugins: ['content'] });
    const res = await modern(mcpd, 'resources/read', { uri: 'content://misuse/notfound' });
    assertError(res, -32602, 'plugin not found');
    assert.deepEqual(res.error.data, { uri: 'content://misuse/notfound' });
    const whole = await modern(mcpd, 'resources/read', { uri: 'content://misuse/json' });
    assertModernResult(whole, 'result_json read');
    assertCacheable(whole, 'result_json read');
    const legacy = await session(t, { plugins: ['content'] });
    assertError(await legacy.request('resources/read', { uri: 'content://misuse/notfound' }), -32002, 'legacy');
  });

  test('prompts/get and completion/complete carry resultType, no cache hints', async (t) => {
    const mcpd = await fresh(t, { plugins: ['everything'] });
    const prompt = await modern(mcpd, 'prompts/get', { name: 'test_simple_prompt' });
    assertModernResult(prompt, 'prompts/get');
    assert.equal(prompt.result.ttlMs, undefined);
    const done = await modern(mcpd, 'completion/complete', {
      ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
      argument: { name: 'arg1', value: '' },
    });
    assertModernResult(done, 'completion/complete');
  });

  for (const method of ['ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'tasks/list']) {
    test(`${method} is removed on the modern path (-32601)`, async (t) => {
      const mcpd = await fresh(t, { plugins: ['everything'] });
      const params = method.startsWith('resources/') ? { uri: 'test://static-text' } : method === 'logging/setLevel' ? { level: 'debug' } : {};
      assertError(await modern(mcpd, method, params), -32601, method);
    });
  }
});

describe('per-request capabilities', () => {
  test('a tool that needs sampling, without it in the envelope → -32021 naming it', async (t) => {
    const mcpd = await fresh(t, { plugins: ['everything'] });
    const res = await modern(mcpd, 'tools/call', { name: 'test_sampling', arguments: { prompt: 'hi' } });
    assertError(res, -32021, 'sampling without the capability');
    assert.deepEqual(res.error.data, { requiredCapabilities: { sampling: {} } });
  });

  test('the same for elicitation', async (t) => {
    const mcpd = await fresh(t, { plugins: ['everything'] });
    const res = await modern(mcpd, 'tools/call', { name: 'test_elicitation', arguments: { message: 'name?' } });
    assertError(res, -32021, 'elicitation without the capability');
    assert.deepEqual(Object.keys(res.error.data.requiredCapabilities), ['elicitation']);
  });

  test('nothing carries over: capabilities of one request do not serve the next', async (t) => {
    const mcpd = await fresh(t, { plugins: ['everything'] });
    const withIt = await modern(
      mcpd,
      'tools/call',
      { name: 'test_sampling', arguments: { prompt: 'hi' } },
      envelope({}, { capabilities: { sampling: {} } }),
    );
    // Declared: the client is asked through an input_required result
    // (modern-listen.test.mjs), never with a request of the server's.
    assert.equal(withIt.result.resultType, 'input_required');
    assert.equal(Object.values(withIt.result.inputRequests)[0].method, 'sampling/createMessage');
    const without = await modern(mcpd, 'tools/call', { name: 'test_sampling', arguments: { prompt: 'hi' } });
    assertError(without, -32021, 'the next request, without it');
    await sleep(50);
    assert.deepEqual(
      mcpd.messages.filter((m) => 'method' in m && 'id' in m),
      [],
      'no request was sent to the client',
    );
  });

  test('a legacy session keeps its declared capabilities (sampling is asked for)', async (t) => {
    const mcpd = await session(t, { plugins: ['everything'], init: false });
    await mcpd.initialize(LATEST, { capabilities: { sampling: {} } });
    await mcpd.write({ jsonrpc: '2.0', id: 's1', method: 'tools/call', params: { name: 'test_sampling', arguments: { prompt: 'hi' } } });
    const ask = await mcpd.take((m) => m.method === 'sampling/createMessage' && 'id' in m, { what: 'sampling request' });
    await mcpd.write({ jsonrpc: '2.0', id: ask.id, result: { role: 'assistant', content: { type: 'text', text: 'yo' }, model: 'm' } });
    const res = await mcpd.response('s1');
    assert.equal(res.result.resultType, undefined);
    assert.match(resultText(res.result), /yo/);
  });
});

describe('per-request log level', () => {
  test('notifications/message only for a request that set logLevel, at or above it', async (t) => {
    const mcpd = await fresh(t, { plugins: ['everything'] });
    const quiet = await modern(mcpd, 'tools/call', { name: 'test_tool_with_logging', arguments: {} });
    assertModernResult(quiet, 'no logLevel');
    await sleep(100);
    assert.equal(mcpd.notifications.filter((n) => n.method === 'notifications/message').length, 0);

    const loud = await modern(mcpd, 'tools/call', { name: 'test_tool_with_logging', arguments: {} }, envelope({ [`${K}logLevel`]: 'info' }));
    assertModernResult(loud, 'logLevel info');
    const lines = mcpd.notifications.filter((n) => n.method === 'notifications/message');
    assert.ok(lines.length >= 1);
    assert.ok(lines.every((n) => n.params.level === 'info'));
    assert.ok(lines.every((n) => mcpd.messages.indexOf(n) < mcpd.messages.indexOf(loud)));

    const before = lines.length;
    const high = await modern(mcpd, 'tools/call', { name: 'test_tool_with_logging', arguments: {} }, envelope({ [`${K}logLevel`]: 'error' }));
    assertModernResult(high, 'logLevel error');
    await sleep(100);
    assert.equal(mcpd.notifications.filter((n) => n.method === 'notifications/message').length, before);
  });
});

describe('cancellation', () => {
  test('notifications/cancelled stops a modern call: no response for it', async (t) => {
    const mcpd = await fresh(t, { plugins: ['everything'] });
    await mcpd.write({
      jsonrpc: '2.0',
      id: 'slow',
      method: 'tools/call',
      params: { name: 'test_tool_with_progress', arguments: {}, _meta: envelope() },
    });
    await sleep(50);
    await mcpd.notify('notifications/cancelled', { requestId: 'slow', reason: 'test' });
    await sleep(500);
    assertModernResult(await modern(mcpd, 'tools/list'), 'after cancel');
    assert.equal(mcpd.messages.filter((m) => m.id === 'slow').length, 0);
  });
});

describe('isolated plugins on the modern path', () => {
  test('echo and a missing sampling capability through a worker', async (t) => {
    const mcpd = await fresh(t, { plugins: ['echo', 'everything', 'content'], args: ['--isolate'] });
    const echo = await modern(mcpd, 'tools/call', { name: 'echo', arguments: { text: 'far' } });
    assertModernResult(echo, 'isolated echo');
    assert.equal(resultText(echo.result), 'far');
    const res = await modern(mcpd, 'tools/call', { name: 'test_sampling', arguments: { prompt: 'hi' } });
    assertError(res, -32021, 'isolated sampling');
    assert.deepEqual(res.error.data, { requiredCapabilities: { sampling: {} } });
    const gone = await modern(mcpd, 'resources/read', { uri: 'content://misuse/notfound' });
    assertError(gone, -32602, 'isolated plugin not found');
    assert.deepEqual(gone.error.data, { uri: 'content://misuse/notfound' });
    assert.deepEqual(protocolProblems(mcpd), []);
  });
});

describe('the legacy path is unchanged', () => {
  test('no modern members on legacy results; ping stays {}', async (t) => {
    const mcpd = await session(t, { plugins: ['echo', 'everything'] });
    assert.deepEqual(await mcpd.ping(), {});
    for (const method of ['tools/list', 'resources/list', 'prompts/list', 'resources/templates/list']) {
      const res = await mcpd.call(method, {});
      for (const key of ['resultType', 'ttlMs', 'cacheScope', '_meta']) assert.equal(res[key], undefined, `${method}.${key}`);
    }
    const echo = await mcpd.callTool('echo', { text: 'x' });
    assert.deepEqual(echo, { content: [{ type: 'text', text: 'x' }] });
    const init = mcpd.initResult;
    assert.equal(init.resultType, undefined);
    assert.equal(init.capabilities.tools.listChanged, true);
    assert.equal(init.capabilities.resources.subscribe, true);
  });

  test('resource not found stays -32002 on legacy', async (t) => {
    const mcpd = await session(t, { plugins: ['everything'] });
    const res = await mcpd.request('resources/read', { uri: 'test://missing' });
    assertError(res, -32002, 'legacy missing resource');
  });

  test('legacy results are byte-for-byte what they were', async (t) => {
    const mcpd = await session(t);
    await mcpd.write('{"jsonrpc":"2.0","id":77,"method":"ping"}\n');
    await mcpd.response(77);
    await mcpd.write('{"jsonrpc":"2.0","id":78,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}\n');
    await mcpd.response(78);
    assert.ok(mcpd.rawLines.includes('{"jsonrpc":"2.0","id":77,"result":{}}'));
    assert.ok(mcpd.rawLines.includes('{"jsonrpc":"2.0","id":78,"result":{"content":[{"type":"text","text":"a"}]}}'));
  });

  test('a client that ignores the claim entirely never sees the modern path', async (t) => {
    const mcpd = await fresh(t);
    // Claim-less requests before initialize behave as they always did.
    const res = await mcpd.request('tools/list', {});
    assertError(res, -32600, 'tools/list before initialize');
    assert.deepEqual(await mcpd.ping(), {});
    assert.ok(isResponse(res));
  });
});
