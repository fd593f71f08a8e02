// SPDX-License-Identifier: MIT
// The 2026-07-28 ("modern") revision over stdio, third part: questions a
// plugin names (client_request_keyed(), ABI 1.2) in input_required
// results, in-process and in an isolated worker; answers sent without a
// requestState; what the client can answer asked before a missing
// capability is named; input_required on prompts/get; the same tools
// for a legacy client, which never sees a key; run-time list changes.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { protocolProblems, resultText, session } from './lib.mjs';

const MODERN = '2026-07-28';
const K = 'io.modelcontextprotocol/';
const ALL_CAPS = { elicitation: {}, sampling: {}, roots: {} };

function envelope(capabilities) {
  return {
    [`${K}protocolVersion`]: MODERN,
    [`${K}clientCapabilities`]: capabilities,
    [`${K}clientInfo`]: { name: 'mcpd-e2e', version: '0.0.0' },
  };
}

function modern(mcpd, method, params = {}, capabilities = ALL_CAPS) {
  return mcpd.request(method, { ...params, _meta: envelope(capabilities) });
}

const accept = (content) => ({ action: 'accept', content });
const sampled = (text) => ({ role: 'assistant', content: { type: 'text', text }, model: 'm' });

function assertInputRequired(res, keys, what) {
  assert.equal(res.result?.resultType, 'input_required', `${what}: ${JSON.stringify(res)}`);
  assert.deepEqual(Object.keys(res.result.inputRequests).sort(), [...keys].sort(), what);
  assert.equal(typeof res.result.requestState, 'string', what);
  assert.equal(res.result.ttlMs, undefined, `${what}: no cache hints on an interim result`);
}

function assertComplete(res, text, what) {
  assert.equal(res.result?.resultType, 'complete', `${what}: ${JSON.stringify(res)}`);
  assert.equal(res.result.isError, undefined, `${what}: ${JSON.stringify(res.result)}`);
  if (text !== undefined) assert.equal(resultText(res.result), text, what);
}

for (const isolated of [false, true]) {
  const mode = isolated ? 'isolated' : 'in-process';
  const fresh = (t, plugins = ['everything']) => session(t, { plugins, args: isolated ? ['--isolate'] : ['--in-process'], init: false });

  describe(`named input keys (${mode})`, () => {
    test('the key a plugin gives is the key of inputRequests, with the params it asked', async (t) => {
      const mcpd = await fresh(t);
      const params = { name: 'test_input_required_result_elicitation', arguments: {} };
      const first = await modern(mcpd, 'tools/call', params);
      assertInputRequired(first, ['user_name'], 'round 1');
      assert.deepEqual(first.result.inputRequests.user_name, {
        method: 'elicitation/create',
        params: {
          message: 'What is your name?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
      });
      const second = await modern(mcpd, 'tools/call', {
        ...params,
        inputResponses: { user_name: accept({ name: 'Alice' }) },
        requestState: first.result.requestState,
      });
      assertComplete(second, 'Hello, Alice!', 'round 2');
      assert.deepEqual(protocolProblems(mcpd), []);
    });

    test('any key of A-Z a-z 0-9 _ . : - up to 47 characters; others are refused', async (t) => {
      const mcpd = await fresh(t, ['asker']);
      const ask = (key) =>
        modern(mcpd, 'tools/call', { name: 'ask', arguments: { method: 'roots/list', params: {}, key } });
      const long = 'k'.repeat(47);
      for (const key of ['my.key:1-a_B', long]) assertInputRequired(await ask(key), [key], key);
      for (const key of ['', 'two words', 'k'.repeat(48), 'ключ', 'a/b']) {
        const res = await ask(key);
        assert.equal(res.result?.resultType, 'complete', JSON.stringify(res));
        assert.equal(res.result.isError, true, key);
        assert.match(resultText(res.result), /is not 1 to 47 characters/, key);
      }
    });

    test('answers without a requestState are used; wrong keys are asked again; malformed ones refused', async (t) => {
      const mcpd = await fresh(t);
      const params = { name: 'test_input_required_result_elicitation', arguments: {} };
      const direct = await modern(mcpd, 'tools/call', {
        ...params,
        inputResponses: { user_name: accept({ name: 'Bob' }), extra: accept({ x: 1 }) },
      });
      assertComplete(direct, 'Hello, Bob!', 'no state, extra key ignored');
      assertInputRequired(
        await modern(mcpd, 'tools/call', { ...params, inputResponses: { wrong_key: accept({}) } }),
        ['user_name'],
        'wrong key',
      );
      const bad = await modern(mcpd, 'tools/call', { ...params, inputResponses: { user_name: 12345 } });
      assert.equal(bad.error?.code, -32602, JSON.stringify(bad));
    });

    test('two rounds: the first answer travels in requestState', async (t) => {
      const mcpd = await fresh(t);
      const params = { name: 'test_input_required_result_multi_round', arguments: {} };
      const r1 = await modern(mcpd, 'tools/call', params);
      assertInputRequired(r1, ['step1'], 'round 1');
      const r2 = await modern(mcpd, 'tools/call', {
        ...params,
        inputResponses: { step1: accept({ name: 'Alice' }) },
        requestState: r1.result.requestState,
      });
      assertInputRequired(r2, ['step2'], 'round 2');
      assert.notEqual(r2.result.requestState, r1.result.requestState);
      const r3 = await modern(mcpd, 'tools/call', {
        ...params,
        inputResponses: { step2: accept({ color: 'blue' }) },
        requestState: r2.result.requestState,
      });
      assertComplete(r3, 'Alice likes blue', 'round 3');
    });

    test('three questions in one round, each under its key', async (t) => {
      const mcpd = await fresh(t);
      const params = { name: 'test_input_required_result_multiple_inputs', arguments: {} };
      const r1 = await modern(mcpd, 'tools/call', params);
      assertInputRequired(r1, ['user_name', 'greeting', 'client_roots'], 'round 1');
      assert.equal(r1.result.inputRequests.greeting.method, 'sampling/createMessage');
      assert.deepEqual(r1.result.inputRequests.client_roots, { method: 'roots/list', params: {} });
      const r2 = await modern(mcpd, 'tools/call', {
        ...params,
        inputResponses: {
          user_name: accept({ name: 'Ann' }),
          greeting: sampled('Hi'),
          client_roots: { roots: [{ uri: 'file:///p', name: 'P' }] },
        },
        requestState: r1.result.requestState,
      });
      assertComplete(r2, 'Hi, Ann! Your roots: [{"uri":"file:///p","name":"P"}]', 'round 2');
    });

    test('only what the request can answer is asked; -32021 when nothing is left', async (t) => {
      const mcpd = await fresh(t);
      const params = { name: 'test_input_required_result_capabilities', arguments: {} };
      const r1 = await modern(mcpd, 'tools/call', params, { sampling: {} });
      assertInputRequired(r1, ['capital_question'], 'sampling only');
      const r2 = await modern(
        mcpd,
        'tools/call',
        { ...params, inputResponses: { capital_question: sampled('Paris') }, requestState: r1.result.requestState },
        { sampling: {} },
      );
      assertComplete(r2, 'name: (not asked), capital: Paris', 'answered');
      const none = await modern(mcpd, 'tools/call', params, {});
      assert.equal(none.error?.code, -32021, JSON.stringify(none));
      assert.ok(none.error.data.requiredCapabilities, JSON.stringify(none.error));
    });

    test('prompts/get can be input_required too', async (t) => {
      const mcpd = await fresh(t);
      const params = { name: 'test_input_required_result_prompt' };
      const r1 = await modern(mcpd, 'prompts/get', params);
      assertInputRequired(r1, ['user_context'], 'round 1');
      const r2 = await modern(mcpd, 'prompts/get', {
        ...params,
        inputResponses: { user_context: accept({ context: 'tests' }) },
        requestState: r1.result.requestState,
      });
      assert.equal(r2.result?.resultType, 'complete', JSON.stringify(r2));
      assert.equal(r2.result.messages[0].content.text, 'Answer with this context in mind: tests');
    });

    test('a legacy client is asked with an ordinary request, without the key', async (t) => {
      const mcpd = await fresh(t);
      await mcpd.initialize('2025-11-25', { capabilities: { elicitation: {} } });
      const pending = mcpd.callTool('test_input_required_result_request_state', {});
      const ask = await mcpd.take((m) => m.method === 'elicitation/create', { what: 'the elicitation request' });
      assert.deepEqual(ask.params, {
        message: 'Please confirm',
        requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      });
      await mcpd.write({ jsonrpc: '2.0', id: ask.id, result: accept({ ok: true }) });
      const res = await pending;
      assert.equal(resultText(res), 'state-ok: the answer was {"action":"accept","content":{"ok":true}}');
      assert.deepEqual(protocolProblems(mcpd), []);
    });
  });
}

describe('list changes on demand', () => {
  test('test_trigger_tool_change adds and removes a tool, announced with list_changed', async (t) => {
    const mcpd = await session(t, { plugins: ['everything'] });
    const names = async () => (await mcpd.request('tools/list', {})).result.tools.map((x) => x.name);
    assert.ok(!(await names()).includes('test_dynamic_tool'));
    assert.equal(resultText(await mcpd.callTool('test_trigger_tool_change', {})), 'added test_dynamic_tool');
    await mcpd.notification('notifications/tools/list_changed');
    assert.ok((await names()).includes('test_dynamic_tool'));
    assert.equal(resultText(await mcpd.callTool('test_dynamic_tool', {})), 'I come and go.');
    assert.equal(resultText(await mcpd.callTool('test_trigger_tool_change', {})), 'removed test_dynamic_tool');
    assert.ok(!(await names()).includes('test_dynamic_tool'));
    assert.equal(resultText(await mcpd.callTool('test_trigger_prompt_change', {})), 'added test_dynamic_prompt');
    await mcpd.notification('notifications/prompts/list_changed');
    const prompt = await mcpd.request('prompts/get', { name: 'test_dynamic_prompt' });
    assert.equal(prompt.result.messages[0].content.text, 'I come and go too.');
  });
});
