// SPDX-License-Identifier: MIT
// The 2026-07-28 ("modern") revision over stdio, second part:
// subscriptions/listen (acknowledgement, the granted subset, tagged
// list_changed and resource updates, several listens, cancellation,
// shutdown) and input_required results for plugins that ask their client
// (sampling, elicitation), with the requestState checks.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { configFile, makePluginDir, McpdProcess, pluginPath, protocolProblems, resultText, session, sleep, until } from './lib.mjs';

const MODERN = '2026-07-28';
const K = 'io.modelcontextprotocol/';
const SUB = `${K}subscriptionId`;
const WATCHED = 'test://watched-resource';

function envelope(capabilities = {}) {
  return {
    [`${K}protocolVersion`]: MODERN,
    [`${K}clientCapabilities`]: capabilities,
    [`${K}clientInfo`]: { name: 'mcpd-e2e', version: '0.0.0' },
  };
}

function modern(mcpd, method, params = {}, capabilities = {}) {
  return mcpd.request(method, { ...params, _meta: envelope(capabilities) });
}

/** Opens a listen with id `id`; resolves with its acknowledgement. */
async function listen(mcpd, id, notifications) {
  await mcpd.write({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications, _meta: envelope() } });
  return mcpd.take((m) => m.method === 'notifications/subscriptions/acknowledged' && m.params?._meta?.[SUB] === id, {
    what: `the acknowledgement of listen ${id}`,
  });
}

/** Notifications tagged for listen `id`, so far. */
function tagged(mcpd, id, method) {
  return mcpd.messages.filter((m) => !('id' in m) && m.params?._meta?.[SUB] === id && (!method || m.method === method));
}

function assertError(res, code, what) {
  assert.ok('error' in res, `${what}: want error ${code}, got ${JSON.stringify(res).slice(0, 400)}`);
  assert.equal(res.error.code, code, `${what}: ${JSON.stringify(res.error)}`);
}

function fresh(t, { plugins = ['everything'], args = [], watch } = {}) {
  return session(t, { plugins, args, init: false, watch });
}

describe('server/discover now that listen exists', () => {
  test('declares listChanged and subscribe; lists have a positive TTL', async (t) => {
    const mcpd = await fresh(t);
    const res = await modern(mcpd, 'server/discover');
    const caps = res.result.capabilities;
    assert.equal(caps.tools.listChanged, true);
    assert.equal(caps.prompts.listChanged, true);
    assert.equal(caps.resources.listChanged, true);
    assert.equal(caps.resources.subscribe, true);
    assert.equal(res.result.ttlMs, 0);
    const list = await modern(mcpd, 'tools/list');
    assert.ok(list.result.ttlMs > 0, `tools/list ttlMs ${list.result.ttlMs}`);
    assert.equal(list.result.cacheScope, 'public');
  });
});

describe('subscriptions/listen', () => {
  test('acknowledges first with the granted subset, tagged with its id', async (t) => {
    const mcpd = await fresh(t);
    const ack = await listen(mcpd, 'L1', {
      toolsListChanged: true,
      promptsListChanged: false,
      resourceSubscriptions: [WATCHED, 'test://nothing-here', 'not a uri'],
      somethingNew: true,
    });
    assert.deepEqual(ack.params.notifications, { toolsListChanged: true, resourceSubscriptions: [WATCHED] });
    assert.equal(ack.params._meta[SUB], 'L1');
    // Nothing answers the listen while it is open.
    await sleep(100);
    assert.equal(mcpd.messages.filter((m) => m.id === 'L1').length, 0);
    assert.deepEqual(protocolProblems(mcpd), []);
  });

  test('bad params are -32602; an integer id is the subscription id', async (t) => {
    const mcpd = await fresh(t);
    assertError(await modern(mcpd, 'subscriptions/listen', { notifications: [] }), -32602, 'array');
    assertError(await modern(mcpd, 'subscriptions/listen', { notifications: { toolsListChanged: 'yes' } }), -32602, 'string flag');
    assertError(await modern(mcpd, 'subscriptions/listen', { notifications: { resourceSubscriptions: [1] } }), -32602, 'number uri');
    const ack = await listen(mcpd, 7, { resourcesListChanged: true });
    assert.equal(ack.params._meta[SUB], 7);
  });

  test('is not a method of the legacy revision', async (t) => {
    const mcpd = await session(t, { plugins: ['echo'] });
    assertError(await mcpd.request('subscriptions/listen', { notifications: {} }), -32601, 'legacy listen');
  });

  test('hot reload: tools list_changed reaches the listens that asked, tagged', { timeout: 20000 }, async (t) => {
    const mcpd = await fresh(t, { plugins: ['echo'], watch: true });
    await listen(mcpd, 'tools', { toolsListChanged: true });
    await listen(mcpd, 'prompts', { promptsListChanged: true });
    const tmp = path.join(mcpd.pluginDir, '.good.tmp');
    fs.copyFileSync(pluginPath('good'), tmp);
    fs.chmodSync(tmp, 0o644);
    fs.renameSync(tmp, path.join(mcpd.pluginDir, 'good.so'));
    await until(() => tagged(mcpd, 'tools', 'notifications/tools/list_changed').length >= 1, 10000, 'tools list_changed', 20);
    const list = await modern(mcpd, 'tools/list');
    assert.ok(list.result.tools.length > 1);
    await sleep(200);
    // Only what each asked for; nothing untagged.
    assert.equal(tagged(mcpd, 'prompts', 'notifications/tools/list_changed').length, 0);
    assert.equal(tagged(mcpd, 'tools').filter((m) => m.method !== 'notifications/subscriptions/acknowledged' && m.method !== 'notifications/tools/list_changed').length, 0);
    assert.equal(mcpd.messages.filter((m) => m.method?.endsWith('list_changed') && !m.params?._meta?.[SUB]).length, 0);
  });

  test('resource updates of the watched resource, for the listens that subscribed; two at once', { timeout: 20000 }, async (t) => {
    const config = await configFile({ plugins: { everything: { watch_interval_ms: 100 } } });
    const mcpd = await fresh(t, { args: ['--config', config] });
    await listen(mcpd, 'a', { resourceSubscriptions: [WATCHED] });
    await listen(mcpd, 'b', { resourceSubscriptions: [WATCHED], toolsListChanged: true });
    await listen(mcpd, 'c', { toolsListChanged: true });
    await until(() => tagged(mcpd, 'a', 'notifications/resources/updated').length >= 2 && tagged(mcpd, 'b', 'notifications/resources/updated').length >= 2, 5000, 'updates on both', 20);
    for (const n of tagged(mcpd, 'a', 'notifications/resources/updated')) assert.equal(n.params.uri, WATCHED);
    assert.equal(tagged(mcpd, 'c', 'notifications/resources/updated').length, 0);
    // Cancelling one leaves the other; no response for the cancelled one.
    await mcpd.notify('notifications/cancelled', { requestId: 'a', reason: 'done' });
    await sleep(150);
    const settled = tagged(mcpd, 'a').length;
    const bBefore = tagged(mcpd, 'b', 'notifications/resources/updated').length;
    await sleep(500);
    assert.equal(tagged(mcpd, 'a').length, settled, 'a kept hearing after its cancel');
    assert.ok(tagged(mcpd, 'b', 'notifications/resources/updated').length > bBefore, 'b stopped hearing');
    assert.equal(mcpd.messages.filter((m) => m.id === 'a').length, 0, 'a cancelled listen got a response');
    // The last listen leaving tells the plugin, whose watcher stops.
    await mcpd.notify('notifications/cancelled', { requestId: 'b' });
    await sleep(300);
    const all = mcpd.messages.filter((m) => m.method === 'notifications/resources/updated').length;
    await sleep(500);
    assert.equal(mcpd.messages.filter((m) => m.method === 'notifications/resources/updated').length, all);
  });

  test('shutdown ends an open listen with its response', async () => {
    const dir = await makePluginDir(['echo']);
    const mcpd = new McpdProcess([], { plugins: dir });
    try {
      await listen(mcpd, 'S', { toolsListChanged: true });
      mcpd.endInput();
      const { code } = await mcpd.waitExit(3000);
      assert.equal(code, 0, mcpd.stderr);
      const res = mcpd.messages.find((m) => m.id === 'S');
      assert.ok(res, JSON.stringify(mcpd.messages));
      assert.equal(res.result.resultType, 'complete');
      assert.equal(res.result._meta[SUB], 'S');
      assert.equal(res.result._meta[`${K}serverInfo`].name, 'mcpd');
    } finally {
      await mcpd.close();
    }
  });

  test('no log lines on a listen stream', async (t) => {
    const mcpd = await fresh(t);
    await listen(mcpd, 'quiet', { toolsListChanged: true, resourceSubscriptions: [WATCHED] });
    await modern(mcpd, 'tools/call', { name: 'test_tool_with_logging', arguments: {} });
    await sleep(100);
    assert.equal(mcpd.messages.filter((m) => m.method === 'notifications/message').length, 0);
  });
});

const SAMPLING_ANSWER = { role: 'assistant', content: { type: 'text', text: 'forty-two' }, model: 'm' };

describe('input_required (MRTR)', () => {
  test('test_sampling: input_required, then the retry with the answer gives the result', async (t) => {
    const mcpd = await fresh(t);
    const params = { name: 'test_sampling', arguments: { prompt: 'meaning?' } };
    const first = await modern(mcpd, 'tools/call', params, { sampling: {} });
    assert.equal(first.result.resultType, 'input_required', JSON.stringify(first));
    assert.equal(first.result.ttlMs, undefined);
    assert.equal(typeof first.result.requestState, 'string');
    const keys = Object.keys(first.result.inputRequests);
    assert.equal(keys.length, 1);
    const ask = first.result.inputRequests[keys[0]];
    assert.equal(ask.method, 'sampling/createMessage');
    assert.equal(ask.params.messages[0].content.text, 'meaning?');
    // Never a request to the client.
    assert.equal(mcpd.messages.filter((m) => 'method' in m && 'id' in m).length, 0);

    const retry = await modern(
      mcpd,
      'tools/call',
      { ...params, inputResponses: { [keys[0]]: SAMPLING_ANSWER }, requestState: first.result.requestState },
      { sampling: {} },
    );
    assert.equal(retry.result.resultType, 'complete', JSON.stringify(retry));
    assert.match(resultText(retry.result), /forty-two/);
  });

  test('test_elicitation round trip; the retry may land on another process with the same key', async (t) => {
    const keyDir = await makePluginDir([]);
    fs.writeFileSync(path.join(keyDir, 'state.key'), 'a shared key of thirty-two bytes!');
    const config = await configFile({ stateKeyFile: path.join(keyDir, 'state.key') });
    const one = await fresh(t, { args: ['--config', config] });
    const two = await fresh(t, { args: ['--config', config] });
    const params = { name: 'test_elicitation', arguments: { message: 'who?' } };
    const caps = { elicitation: {} };
    const first = await modern(one, 'tools/call', params, caps);
    assert.equal(first.result.resultType, 'input_required', JSON.stringify(first));
    const [key] = Object.keys(first.result.inputRequests);
    assert.equal(first.result.inputRequests[key].method, 'elicitation/create');
    const answer = { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
    const retry = await modern(two, 'tools/call', { ...params, inputResponses: { [key]: answer }, requestState: first.result.requestState }, caps);
    assert.equal(retry.result.resultType, 'complete', JSON.stringify(retry));
    assert.match(resultText(retry.result), /ada/);
    // A process with another (random) key refuses it.
    const other = await fresh(t);
    const refused = await modern(other, 'tools/call', { ...params, inputResponses: { [key]: answer }, requestState: first.result.requestState }, caps);
    assertError(refused, -32602, 'another key');
    assert.match(refused.error.message, /integrity/);
  });

  test('a retry without the answer is asked again; extra keys are ignored', async (t) => {
    const mcpd = await fresh(t);
    const params = { name: 'test_sampling', arguments: { prompt: 'q' } };
    const first = await modern(mcpd, 'tools/call', params, { sampling: {} });
    const again = await modern(mcpd, 'tools/call', { ...params, inputResponses: { other: {} }, requestState: first.result.requestState }, { sampling: {} });
    assert.equal(again.result.resultType, 'input_required');
    assert.deepEqual(Object.keys(again.result.inputRequests), Object.keys(first.result.inputRequests));
  });

  test('tampered, foreign and malformed state or responses → -32602; no state is fine', async (t) => {
    const mcpd = await fresh(t);
    const params = { name: 'test_sampling', arguments: { prompt: 'q' } };
    const first = await modern(mcpd, 'tools/call', params, { sampling: {} });
    const state = first.result.requestState;
    const [key] = Object.keys(first.result.inputRequests);
    const responses = { [key]: SAMPLING_ANSWER };
    const flip = (s, i) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (const [what, bad] of [
      ['payload altered', flip(state, 5)],
      ['mac altered', flip(state, state.length - 3)],
      ['garbage', 'hello'],
    ]) {
      const res = await modern(mcpd, 'tools/call', { ...params, inputResponses: responses, requestState: bad }, { sampling: {} });
      assertError(res, -32602, what);
    }
    // Bound to the request: other arguments, another tool.
    const otherArgs = await modern(mcpd, 'tools/call', { name: 'test_sampling', arguments: { prompt: 'other' }, inputResponses: responses, requestState: state }, { sampling: {} });
    assertError(otherArgs, -32602, 'other arguments');
    assert.match(otherArgs.error.message, /another request/);
    const otherTool = await modern(mcpd, 'tools/call', { name: 'test_elicitation', arguments: { message: 'q' }, inputResponses: responses, requestState: state }, { elicitation: {} });
    assertError(otherTool, -32602, 'another tool');
    assertError(await modern(mcpd, 'tools/call', { ...params, inputResponses: [1], requestState: state }, { sampling: {} }), -32602, 'responses not an object');
    assertError(await modern(mcpd, 'tools/call', { ...params, inputResponses: { [key]: 'x' }, requestState: state }, { sampling: {} }), -32602, 'response not an object');
    // Answers without a state are the client's own: the run uses them.
    const stateless = await modern(mcpd, 'tools/call', { ...params, inputResponses: responses }, { sampling: {} });
    assert.equal(stateless.result?.resultType, 'complete', JSON.stringify(stateless));
    assertError(await modern(mcpd, 'tools/call', { ...params, requestState: 5 }, { sampling: {} }), -32602, 'state not a string');
  });

  test('an expired state → -32602', async (t) => {
    const config = await configFile({ requestStateTtlMs: 50 });
    const mcpd = await fresh(t, { args: ['--config', config] });
    const params = { name: 'test_sampling', arguments: { prompt: 'q' } };
    const first = await modern(mcpd, 'tools/call', params, { sampling: {} });
    const [key] = Object.keys(first.result.inputRequests);
    await sleep(120);
    const res = await modern(mcpd, 'tools/call', { ...params, inputResponses: { [key]: SAMPLING_ANSWER }, requestState: first.result.requestState }, { sampling: {} });
    assertError(res, -32602, 'expired');
    assert.match(res.error.message, /expired/);
  });

  test('a capability the request does not declare is not asked for: -32021', async (t) => {
    const mcpd = await fresh(t);
    const res = await modern(mcpd, 'tools/call', { name: 'test_sampling', arguments: { prompt: 'q' } }, { elicitation: {} });
    assertError(res, -32021, 'sampling undeclared');
    assert.deepEqual(res.error.data, { requiredCapabilities: { sampling: {} } });
  });

  test('isolated plugins: the worker asks the host, which answers input_required', async (t) => {
    const mcpd = await fresh(t, { args: ['--isolate'] });
    const params = { name: 'test_sampling', arguments: { prompt: 'far' } };
    const first = await modern(mcpd, 'tools/call', params, { sampling: {} });
    assert.equal(first.result.resultType, 'input_required', JSON.stringify(first));
    const [key] = Object.keys(first.result.inputRequests);
    const retry = await modern(mcpd, 'tools/call', { ...params, inputResponses: { [key]: SAMPLING_ANSWER }, requestState: first.result.requestState }, { sampling: {} });
    assert.equal(retry.result.resultType, 'complete', JSON.stringify(retry));
    assert.match(resultText(retry.result), /forty-two/);
  });
});
