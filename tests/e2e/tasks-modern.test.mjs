// SPDX-License-Identifier: MIT
// Tasks over stdio as raw JSON-RPC: the 2026-07-28 extension beside the
// conformance suite's HTTP scenarios (notifications/tasks on a listen
// stream, -32021 naming the extension), and what both eras share: the
// bounds on how many tasks are kept, the TTL after which an ended task is
// gone, and tasks/list pages.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { session, sleep } from './lib.mjs';

const MODERN = '2026-07-28';
const K = 'io.modelcontextprotocol/';
const EXT = `${K}tasks`;
const SUB = `${K}subscriptionId`;

function envelope(extensions, caps = {}) {
  return {
    [`${K}protocolVersion`]: MODERN,
    [`${K}clientCapabilities`]: extensions ? { ...caps, extensions: { [EXT]: {} } } : caps,
    [`${K}clientInfo`]: { name: 'mcpd-e2e', version: '0.0.0' },
  };
}

/** A modern request; `ext` declares the tasks extension. */
function modern(mcpd, method, params = {}, ext = true, caps = {}) {
  return mcpd.request(method, { ...params, _meta: envelope(ext, caps) });
}

function assertError(res, code, what) {
  assert.ok('error' in res, `${what}: want error ${code}, got ${JSON.stringify(res).slice(0, 400)}`);
  assert.equal(res.error.code, code, `${what}: ${JSON.stringify(res.error)}`);
}

async function untilStatus(get, status) {
  for (let i = 0; i < 200; i++) {
    const task = await get();
    if (task.status === status) return task;
    await sleep(25);
  }
  throw new Error(`never ${status}`);
}

describe('the tasks extension over stdio', () => {
  test('a flat CreateTaskResult, then tasks/get with the result inlined', async (t) => {
    const mcpd = await session(t, { plugins: ['everything'], init: false });
    const created = await modern(mcpd, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.1, label: 'm' } });
    const task = created.result;
    assert.equal(task.resultType, 'task');
    assert.match(task.taskId, /^task-[0-9a-f]{32}$/);
    assert.equal(task.status, 'working');
    assert.equal(Number.isInteger(task.ttlMs), true);
    assert.equal(task.pollIntervalMs, 500);
    assert.equal('task' in task || 'ttl' in task || 'result' in task, false);
    const done = await untilStatus(
      async () => (await modern(mcpd, 'tasks/get', { taskId: task.taskId })).result,
      'completed',
    );
    assert.equal(done.resultType, 'complete');
    assert.deepEqual(done.result.content, [{ type: 'text', text: 'm: computed in 0.1 s' }]);
  });

  test('without the extension: optional tools run plainly, task-only tools and tasks/* name it', async (t) => {
    const mcpd = await session(t, { plugins: ['everything'], init: false });
    const plain = await modern(mcpd, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } }, false);
    assert.equal(plain.result.resultType, 'complete');
    for (const [method, params] of [
      ['tools/call', { name: 'failing_job', arguments: {} }],
      ['tasks/get', { taskId: 'x' }],
      ['tasks/update', { taskId: 'x', inputResponses: {} }],
      ['tasks/cancel', { taskId: 'x' }],
    ]) {
      const res = await modern(mcpd, method, params, false);
      assertError(res, -32021, method);
      assert.deepEqual(res.error.data.requiredCapabilities, { extensions: { [EXT]: {} } });
    }
    assertError(await modern(mcpd, 'tasks/list'), -32601, 'tasks/list');
    assertError(await modern(mcpd, 'tasks/result', { taskId: 'x' }), -32601, 'tasks/result');
  });

  test('a listen with taskIds hears notifications/tasks, the last one with the result', async (t) => {
    const mcpd = await session(t, { plugins: ['everything'], init: false });
    const created = await modern(mcpd, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0.3, label: 'l' } });
    const id = created.result.taskId;
    await mcpd.write({
      jsonrpc: '2.0',
      id: 'L',
      method: 'subscriptions/listen',
      params: { notifications: { taskIds: [id, 'task-unknown'] }, _meta: envelope(true) },
    });
    const ack = await mcpd.take((m) => m.method === 'notifications/subscriptions/acknowledged', { what: 'the ack' });
    assert.deepEqual(ack.params.notifications.taskIds, [id]);
    const done = await mcpd.take(
      (m) => m.method === 'notifications/tasks' && m.params.status === 'completed',
      { what: 'the completed notification' },
    );
    assert.equal(done.params.taskId, id);
    assert.equal(done.params._meta[SUB], 'L');
    assert.equal(done.params.result.content[0].text, 'l: computed in 0.3 s');
  });

  test('tasks/update answers what the task asks, then it runs again to the end', async (t) => {
    const mcpd = await session(t, { plugins: ['everything'], init: false });
    // Asked without elicitation declared, the task fails with -32021 inlined.
    const blind = await modern(mcpd, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'b.txt' } });
    const failed = await untilStatus(
      async () => (await modern(mcpd, 'tasks/get', { taskId: blind.result.taskId })).result,
      'failed',
    );
    assert.equal(failed.error.code, -32021);
    assert.equal('result' in failed, false);

    const created = await modern(
      mcpd,
      'tools/call',
      { name: 'confirm_delete', arguments: { filename: 'a.txt' } },
      true,
      { elicitation: {} },
    );
    const id = created.result.taskId;
    const waiting = await untilStatus(async () => (await modern(mcpd, 'tasks/get', { taskId: id })).result, 'input_required');
    assert.deepEqual(Object.keys(waiting.inputRequests), ['confirm_delete']);
    assert.equal(waiting.inputRequests.confirm_delete.method, 'elicitation/create');
    assertError(await modern(mcpd, 'tasks/update', { taskId: id, inputResponses: 5 }), -32602, 'not an object');
    const ack = await modern(mcpd, 'tasks/update', {
      taskId: id,
      inputResponses: { confirm_delete: { action: 'accept', content: { confirm: false } } },
    });
    assert.deepEqual(ack.result, { resultType: 'complete', _meta: ack.result._meta });
    const done = await untilStatus(async () => (await modern(mcpd, 'tasks/get', { taskId: id })).result, 'completed');
    assert.equal(done.result.content[0].text, 'Kept a.txt');
  });
});

describe('bounds, TTL and pages (2025-11-25)', () => {
  const call = (mcpd, args, ttl) =>
    mcpd.request('tools/call', { name: 'slow_compute', arguments: args, task: ttl ? { ttl } : {} });

  test('a client keeps at most --max-tasks-per-client tasks; more are refused with a reason', async (t) => {
    const mcpd = await session(t, { plugins: ['everything'], args: ['--max-tasks-per-client', '2'] });
    assert.ok((await call(mcpd, { seconds: 30 })).result.task);
    assert.ok((await call(mcpd, { seconds: 30 })).result.task);
    const third = await call(mcpd, { seconds: 30 });
    assertError(third, -32000, 'the third task');
    assert.match(third.error.message, /2 tasks are kept \(the limit for one client\)/);
  });

  test('an ended task is gone once its TTL passed', async (t) => {
    const mcpd = await session(t, { plugins: ['everything'], args: ['--task-ttl', '1000'] });
    const { task } = (await call(mcpd, { seconds: 0 }, 600000)).result;
    assert.equal(task.ttl, 1000);
    await untilStatus(async () => (await mcpd.request('tasks/get', { taskId: task.taskId })).result, 'completed');
    await sleep(1300);
    assertError(await mcpd.request('tasks/get', { taskId: task.taskId }), -32602, 'expired');
  });

  test('what a task sends its client (progress) carries the related-task _meta', async (t) => {
    const mcpd = await session(t, { plugins: ['everything'] });
    const res = await mcpd.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0.3 },
      task: {},
      _meta: { progressToken: 'p1' },
    });
    const id = res.result.task.taskId;
    const progress = await mcpd.take((m) => m.method === 'notifications/progress', { what: 'progress' });
    assert.equal(progress.params.progressToken, 'p1');
    assert.deepEqual(progress.params._meta, { [`${K}related-task`]: { taskId: id } });
  });

  test('tasks/list pages with --page-size, oldest first', async (t) => {
    const mcpd = await session(t, { plugins: ['everything'], args: ['--page-size', '2'] });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await call(mcpd, { seconds: 0 })).result.task.taskId);
    const first = (await mcpd.request('tasks/list', {})).result;
    assert.deepEqual(first.tasks.map((x) => x.taskId), ids.slice(0, 2));
    const second = (await mcpd.request('tasks/list', { cursor: first.nextCursor })).result;
    assert.deepEqual(second.tasks.map((x) => x.taskId), ids.slice(2));
    assert.equal(second.nextCursor, undefined);
    assertError(await mcpd.request('tasks/list', { cursor: 'bogus' }), -32602, 'a bad cursor');
  });
});
