// SPDX-License-Identifier: MIT
// Tasks as the official TypeScript SDK 1.x client uses them (its
// experimental task API, 2025-11-25): create, poll, cancel, fetch, list,
// input_required with elicitation, over stdio and over HTTP, and a result
// fetched by a new connection of the same identity -- never by another.
// The fixture tools are examples/everything's task tools (tasks.c).  The
// 2026-07-28 extension is what the conformance suite's tasks-* scenarios
// check (tests/conformance.sh); the SDK 2.x client, which has no task API,
// is checked here to get plain answers from task-capable tools.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { MCPD, makePluginDir, makeTempDir, sleep, startHttp, stop, withTimeout, writeFile } from './lib.mjs';

const RELATED = 'io.modelcontextprotocol/related-task';
const TERMINAL = ['completed', 'failed', 'cancelled'];

/** A 1.x client over stdio, with `capabilities`; closed after the test. */
async function stdioClient(t, { capabilities, args = [] } = {}) {
  const dir = await makePluginDir(['everything']);
  const transport = new StdioClientTransport({
    command: MCPD,
    args: ['--plugins', dir, '--no-watch', ...args],
    env: process.env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d;
  });
  const client = new Client({ name: 'mcpd-e2e-tasks', version: '0.0.0' }, capabilities && { capabilities });
  let child;
  t.after(async () => {
    await client.close().catch(() => {});
    // mcpd ends on EOF with status 0, tasks still running or not, and no
    // sanitizer said anything.
    if (child) assert.equal(child.exitCode, 0, `mcpd exited with ${child.exitCode}/${child.signalCode}:\n${stderr}`);
    assert.doesNotMatch(stderr, /Sanitizer|runtime error:/, stderr);
  });
  await client.connect(transport);
  child = transport._process;
  return { client, stderr: () => stderr };
}

/** A 1.x client over HTTP to `url`, with optional headers. */
async function httpClient(url, headers, capabilities) {
  const transport = new StreamableHTTPClientTransport(new URL(url), headers && { requestInit: { headers } });
  const client = new Client({ name: 'mcpd-e2e-tasks-http', version: '0.0.0' }, capabilities && { capabilities });
  await client.connect(transport);
  return client;
}

/** Polls tasks/get until the task is terminal (or `status`). */
async function waitFor(client, taskId, status) {
  for (let i = 0; i < 200; i++) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (task.status === status || TERMINAL.includes(task.status)) return task;
    await sleep(50);
  }
  throw new Error(`task ${taskId} never reached ${status ?? 'a terminal status'}`);
}

/** Creates a task for `name` with `args`; its Task. */
async function createTask(client, name, args, ttl = 60000) {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: { ttl } } },
    // The CreateTaskResult: its `task`.
    (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
  );
  return created.task;
}

/** The text of a tool result's first block. */
const textOf = (result) => result.content?.[0]?.text;

async function codeOf(promise) {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof McpError, String(err));
    return err.code;
  }
  assert.fail('expected an error');
}

describe('tasks over stdio (SDK 1.x experimental task API)', () => {
  test('initialize declares tasks; tools/list says which tools allow them', async (t) => {
    const { client } = await stdioClient(t);
    assert.deepEqual(client.getServerCapabilities().tasks, {
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await client.listTools();
    const support = Object.fromEntries(tools.map((x) => [x.name, x.execution?.taskSupport]));
    assert.equal(support.greet, undefined);
    assert.equal(support.slow_compute, 'optional');
    assert.equal(support.failing_job, 'required');
    assert.equal(support.test_tool_with_task, 'required');
    assert.equal(support.test_simple_text, undefined);
  });

  test('callToolStream: created, polled with a status message, then the result', async (t) => {
    const { client } = await stdioClient(t);
    const seen = [];
    let result;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'slow_compute', arguments: { seconds: 0.6, label: 'stream' } },
      CallToolResultSchema,
      { task: { ttl: 60000 } },
    )) {
      seen.push(message.type);
      if (message.type === 'taskStatus' && message.task.status === 'working') seen.push(message.task.statusMessage);
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    assert.equal(seen[0], 'taskCreated');
    assert.ok(seen.includes('taskStatus'));
    assert.ok(
      seen.some((s) => typeof s === 'string' && /^stream: \d+ of 600 ms$/.test(s)),
      `a status message from task_status(): ${JSON.stringify(seen)}`,
    );
    assert.equal(textOf(result), 'stream: computed in 0.6 s');
    assert.equal(result._meta?.[RELATED]?.taskId.length > 0, true);
  });

  test('a created task is found at once, listed, and its result fetched with related-task _meta', async (t) => {
    const { client } = await stdioClient(t);
    const task = await createTask(client, 'slow_compute', { seconds: 0.2, label: 'fetch' }, 5000);
    assert.equal(task.status, 'working');
    assert.equal(task.ttl, 5000);
    assert.equal(task.pollInterval, 500);
    assert.match(task.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const got = await client.experimental.tasks.getTask(task.taskId);
    assert.equal(got.taskId, task.taskId);
    const { tasks } = await client.experimental.tasks.listTasks();
    assert.ok(tasks.some((x) => x.taskId === task.taskId));
    // tasks/result waits for the end, then answers what the call would have.
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    assert.equal(textOf(result), 'fetch: computed in 0.2 s');
    assert.deepEqual(result._meta[RELATED], { taskId: task.taskId });
    assert.equal((await client.experimental.tasks.getTask(task.taskId)).status, 'completed');
  });

  test('a TTL beyond --task-ttl is clamped to it', async (t) => {
    const { client } = await stdioClient(t, { args: ['--task-ttl', '2000'] });
    const task = await createTask(client, 'slow_compute', { seconds: 0 }, 99999999);
    assert.equal(task.ttl, 2000);
  });

  test('cancel: the task ends cancelled at once; a second cancel is -32602', async (t) => {
    const { client } = await stdioClient(t);
    const task = await createTask(client, 'slow_compute', { seconds: 30, label: 'long' });
    const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal((await client.experimental.tasks.getTask(task.taskId)).status, 'cancelled');
    assert.equal(await codeOf(client.experimental.tasks.cancelTask(task.taskId)), -32602);
    assert.equal(await codeOf(client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)), -32603);
  });

  test('tool errors fail the task; protocol errors come back from tasks/result', async (t) => {
    const { client } = await stdioClient(t);
    const failing = await createTask(client, 'failing_job', {});
    assert.equal((await waitFor(client, failing.taskId)).status, 'failed');
    const result = await client.experimental.tasks.getTaskResult(failing.taskId, CallToolResultSchema);
    assert.equal(result.isError, true);
    assert.match(textOf(result), /failing_job failed/);

    const broken = await createTask(client, 'protocol_error_job', {});
    assert.equal((await waitFor(client, broken.taskId)).status, 'failed');
    assert.equal(await codeOf(client.experimental.tasks.getTaskResult(broken.taskId, CallToolResultSchema)), -32603);
  });

  test('task support is enforced: required needs a task, forbidden refuses one', async (t) => {
    const { client } = await stdioClient(t);
    assert.equal(
      await codeOf(client.request({ method: 'tools/call', params: { name: 'failing_job', arguments: {} } }, CallToolResultSchema)),
      -32601,
    );
    assert.equal(await codeOf(createTask(client, 'greet', { name: 'x' })), -32601);
    // An optional tool without a task is a plain call.
    const plain = await client.callTool({ name: 'slow_compute', arguments: { seconds: 0, label: 'plain' } });
    assert.equal(textOf(plain), 'plain: computed in 0 s');
    assert.equal(await codeOf(client.experimental.tasks.getTask('no-such-task')), -32602);
  });

  test('input_required: the elicitation reaches the client with related-task _meta, then the task completes', async (t) => {
    const { client } = await stdioClient(t, { capabilities: { elicitation: {} } });
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { confirm: true } };
    });
    let result;
    const statuses = [];
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'confirm_delete', arguments: { filename: 'notes.txt' } },
      CallToolResultSchema,
      { task: { ttl: 60000 } },
    )) {
      if (message.type === 'taskStatus') statuses.push(message.task.status);
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    assert.equal(textOf(result), 'Deleted notes.txt');
    assert.equal(asked.length, 1);
    assert.equal(typeof asked[0]._meta?.[RELATED]?.taskId, 'string');
  });
});

describe('tasks over HTTP (SDK 1.x)', () => {
  const TOKEN_A = 'task-token-a-0123456789';
  const TOKEN_B = 'task-token-b-9876543210';
  let server;

  before(async () => {
    const dir = await makeTempDir();
    const file = await writeFile(dir, 'tokens', `${TOKEN_A}\n${TOKEN_B}\n`, 0o600);
    server = await startHttp(['everything'], ['--auth-token-file', file]);
  });
  after(async () => {
    assert.equal(await stop(server.child), 0, server.stderr());
    assert.doesNotMatch(server.stderr(), /Sanitizer|runtime error:/);
  });
  const bearer = (token) => ({ authorization: `Bearer ${token}` });

  test('create, poll, fetch and cancel', async () => {
    const client = await httpClient(server.url, bearer(TOKEN_A));
    try {
      let result;
      for await (const message of client.experimental.tasks.callToolStream(
        { name: 'slow_compute', arguments: { seconds: 0.3, label: 'http' } },
        CallToolResultSchema,
        { task: { ttl: 60000 } },
      )) {
        if (message.type === 'result') result = message.result;
        if (message.type === 'error') throw message.error;
      }
      assert.equal(textOf(result), 'http: computed in 0.3 s');
      const long = await createTask(client, 'slow_compute', { seconds: 30 });
      assert.equal((await client.experimental.tasks.cancelTask(long.taskId)).status, 'cancelled');
    } finally {
      await client.close();
    }
  });

  test('a result is fetched by a new connection of the same identity, and by no other', async () => {
    const first = await httpClient(server.url, bearer(TOKEN_A));
    const task = await createTask(first, 'slow_compute', { seconds: 0.4, label: 'later' });
    // The client goes away mid-task: its session ends, the task does not.
    await first.transport.terminateSession();
    await first.close();

    const other = await httpClient(server.url, bearer(TOKEN_B));
    try {
      assert.equal(await codeOf(other.experimental.tasks.getTask(task.taskId)), -32602);
      assert.equal(await codeOf(other.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)), -32602);
      const { tasks } = await other.experimental.tasks.listTasks();
      assert.ok(!tasks.some((x) => x.taskId === task.taskId));
    } finally {
      await other.close();
    }

    const again = await httpClient(server.url, bearer(TOKEN_A));
    try {
      const result = await withTimeout(
        again.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema),
        5000,
        'the result',
      );
      assert.equal(textOf(result), 'later: computed in 0.4 s');
    } finally {
      await again.close();
    }
  });
});

describe('the SDK 2.x client, which has no task API', () => {
  // In each era it negotiates: task-capable tools answer plainly, and a
  // task-only tool is refused with what it needs.
  for (const [era, options, refusal] of [
    ['2026-07-28', { versionNegotiation: { mode: 'auto' } }, -32021],
    ['2025-11-25', {}, -32601],
  ]) {
    test(`${era}: plain answers from task-capable tools; a task-only tool is ${refusal}`, async (t) => {
      const { Client: Client2, StreamableHTTPClientTransport: Transport2 } = await import(
        '@modelcontextprotocol/client'
      );
      const server = await startHttp(['everything']);
      t.after(() => stop(server.child));
      const client = new Client2({ name: 'mcpd-e2e-tasks-2x', version: '0.0.0' }, options);
      await client.connect(new Transport2(new URL(server.url)));
      t.after(() => client.close());
      const plain = await client.callTool({ name: 'slow_compute', arguments: { seconds: 0, label: 'v2' } });
      assert.equal(plain.content[0].text, 'v2: computed in 0 s');
      let code;
      try {
        await client.callTool({ name: 'failing_job', arguments: {} });
      } catch (err) {
        code = err.code;
      }
      assert.equal(code, refusal);
    });
  }
});
