// SPDX-License-Identifier: MIT
// The conformance fixture examples/everything driven by the official MCP
// TypeScript SDK client over stdio: every tool, resource, template, prompt
// and completion it offers, answered exactly as the conformance suite's
// reference server answers them, plus logging, progress, cancellation and
// resource subscriptions as a client observes them.
//
// Each test taps the transport, so it can assert on the JSON-RPC messages
// exactly as mcpd wrote them (the SDK's schemas strip unknown keys) and on
// their order.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { configFile, isResponse, makePluginDir, MCPD, pluginPath, sleep, until, withTimeout } from './lib.mjs';

const IMAGE =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const AUDIO = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';
const WATCHED = 'test://watched-resource';
const TEMPLATE = 'test://template/{id}/data';
const NO_ARGUMENTS = { type: 'object', properties: {} };

/* ------------------------------------------------------------------------ */
/* The inventory, as the conformance suite's reference server lists it.     */

const JSON_SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

const TOOLS = [
  'test_simple_text',
  'test_image_content',
  'test_audio_content',
  'test_embedded_resource',
  'test_multiple_content_types',
  'test_tool_with_logging',
  'test_error_handling',
  'test_tool_with_progress',
  'test_reconnection',
  'test_sampling',
  'test_missing_capability',
  'test_logging_tool',
  'test_elicitation',
  'test_elicitation_sep1034_defaults',
  'test_elicitation_sep1330_enums',
  'test_input_required_result_elicitation',
  'test_input_required_result_sampling',
  'test_input_required_result_list_roots',
  'test_input_required_result_request_state',
  'test_input_required_result_tampered_state',
  'test_input_required_result_multiple_inputs',
  'test_input_required_result_multi_round',
  'test_input_required_result_capabilities',
  'test_streaming_elicitation',
  'test_trigger_tool_change',
  'test_trigger_prompt_change',
  'test_param_headers',
  'json_schema_2020_12_tool',
  // Tasks (examples/everything/tasks.c).
  'greet',
  'slow_compute',
  'failing_job',
  'protocol_error_job',
  'confirm_delete',
  'multi_input',
  'test_tool_with_task',
];

/** Input schemas of the tools that take arguments; the others take none. */
const INPUT_SCHEMAS = {
  test_param_headers: {
    type: 'object',
    properties: {
      region: { type: 'string', description: 'Where to run', 'x-mcp-header': 'Region' },
      priority: { type: 'integer', description: 'How urgent', 'x-mcp-header': 'Priority' },
      query: { type: 'string', description: 'Not mirrored' },
    },
    required: ['region'],
  },
  test_sampling: {
    type: 'object',
    properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } },
    required: ['prompt'],
  },
  test_elicitation: {
    type: 'object',
    properties: { message: { type: 'string', description: 'The message to show the user' } },
    required: ['message'],
  },
  json_schema_2020_12_tool: JSON_SCHEMA_2020_12,
  greet: { type: 'object', properties: { name: { type: 'string' } } },
  slow_compute: {
    type: 'object',
    properties: { seconds: { type: 'number', minimum: 0 }, label: { type: 'string' } },
  },
  confirm_delete: { type: 'object', properties: { filename: { type: 'string' } } },
};

/** Tools that answer at once with a fixed result. */
const FIXED_RESULTS = {
  test_simple_text: {
    content: [{ type: 'text', text: 'This is a simple text response for testing.' }],
  },
  test_image_content: { content: [{ type: 'image', data: IMAGE, mimeType: 'image/png' }] },
  test_audio_content: { content: [{ type: 'audio', data: AUDIO, mimeType: 'audio/wav' }] },
  test_embedded_resource: {
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  },
  test_multiple_content_types: {
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: IMAGE, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: '{"test":"data","value":123}',
        },
      },
    ],
  },
  test_error_handling: {
    content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
    isError: true,
  },
};

const RESOURCES = [
  {
    uri: 'test://static-text',
    name: 'static-text',
    title: 'Static Text Resource',
    description: 'A static text resource for testing',
    mimeType: 'text/plain',
  },
  {
    uri: 'test://static-binary',
    name: 'static-binary',
    title: 'Static Binary Resource',
    description: 'A static binary resource (image) for testing',
    mimeType: 'image/png',
  },
  {
    uri: WATCHED,
    name: 'watched-resource',
    title: 'Watched Resource',
    description: 'A resource that auto-updates every 3 seconds',
    mimeType: 'text/plain',
  },
];

const READS = {
  'test://static-text': {
    contents: [
      {
        uri: 'test://static-text',
        mimeType: 'text/plain',
        text: 'This is the content of the static text resource.',
      },
    ],
  },
  'test://static-binary': {
    contents: [{ uri: 'test://static-binary', mimeType: 'image/png', blob: IMAGE }],
  },
  [WATCHED]: {
    contents: [{ uri: WATCHED, mimeType: 'text/plain', text: 'Watched resource content' }],
  },
  'test://template/123/data': {
    contents: [
      {
        uri: 'test://template/123/data',
        mimeType: 'application/json',
        text: '{"id":"123","templateTest":true,"data":"Data for ID: 123"}',
      },
    ],
  },
};

const TEMPLATES = [
  {
    name: 'template',
    uriTemplate: TEMPLATE,
    title: 'Resource Template',
    description: 'A resource template with parameter substitution',
    mimeType: 'application/json',
  },
];

const PROMPTS = [
  {
    name: 'test_simple_prompt',
    title: 'Simple Test Prompt',
    description: 'A simple prompt without arguments',
  },
  {
    name: 'test_prompt_with_arguments',
    description: 'A prompt with required arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
  },
  {
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt that includes an embedded resource',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
  },
  {
    name: 'test_prompt_with_image',
    description: 'A prompt that includes image content',
  },
  {
    name: 'test_input_required_result_prompt',
    description: 'A prompt that first asks the user for its context (elicitation, key user_context).',
  },
];

/** prompts/get: the arguments sent and the messages expected back. */
const PROMPT_GETS = {
  test_simple_prompt: {
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  },
  test_prompt_with_arguments: {
    arguments: { arg1: 'testValue1', arg2: 'testValue2' },
    messages: [
      {
        role: 'user',
        content: { type: 'text', text: "Prompt with arguments: arg1='testValue1', arg2='testValue2'" },
      },
    ],
  },
  test_prompt_with_embedded_resource: {
    arguments: { resourceUri: 'test://example-resource' },
    messages: [
      {
        role: 'user',
        content: {
          type: 'resource',
          resource: {
            uri: 'test://example-resource',
            mimeType: 'text/plain',
            text: 'Embedded resource content for testing.',
          },
        },
      },
      { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
    ],
  },
  test_prompt_with_image: {
    messages: [
      { role: 'user', content: { type: 'image', data: IMAGE, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  },
};

/* ------------------------------------------------------------------------ */
/* Helpers.                                                                  */

/**
 * Connects an SDK client to a fresh mcpd serving only the everything
 * plugin, with `config` as its plugin config.  `received` and `sent` record
 * every JSON-RPC message in wire order; `errors` what the SDK reported
 * through onerror (a response or progress it could not place, say);
 * `stdout()` the bytes mcpd wrote, for what parsing hides (30 versus
 * 30.0).  The client declares `capabilities`; `setup(client)` installs its
 * handlers before it connects.
 */
async function connect(t, { config, capabilities, setup } = {}) {
  const dir = await makePluginDir(['everything']);
  const args = ['--plugins', dir, '--no-watch'];
  if (config !== undefined) args.push('--config', await configFile({ plugins: { everything: config } }));
  const transport = new StdioClientTransport({ command: MCPD, args, env: process.env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d;
  });
  const received = [];
  const sent = [];
  const errors = [];
  // Protocol.connect() chains to handlers already set, so this one sees
  // every message first, before the SDK parses it.
  transport.onmessage = (message) => received.push(message);
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    sent.push(message);
    return send(message, options);
  };
  const client = new Client({ name: 'mcpd-e2e-everything', version: '0.0.0' }, capabilities && { capabilities });
  client.onerror = (err) => errors.push(err);
  if (setup) setup(client);
  let child;
  let stdout = '';
  t.after(async () => {
    await client.close().catch(() => {});
    // mcpd ends on EOF with status 0: not if fini() hung (the SDK would
    // have sent SIGTERM) or a sanitizer reported something.
    if (child) assert.equal(child.exitCode, 0, `mcpd exited with ${child.exitCode}/${child.signalCode}:\n${stderr}`);
    assert.doesNotMatch(stderr, /Sanitizer|runtime error:/, stderr);
  });
  await withTimeout(client.connect(transport), 10000, 'SDK client connect');
  child = transport._process;
  assert.ok(child, 'SDK internals changed: no _process on the transport');
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  return { client, child, dir, received, sent, errors, stderr: () => stderr, stdout: () => stdout };
}

/** The id of the last request sent with `method`. */
function lastRequestId(conn, method) {
  const req = conn.sent.findLast((m) => m.method === method && 'id' in m);
  assert.ok(req, `no ${method} request was sent`);
  return req.id;
}

/** The response to request `id` exactly as mcpd wrote it. */
function rawResponse(conn, id) {
  const res = conn.received.find((m) => isResponse(m) && m.id === id);
  assert.ok(res, `no response to id ${id} was received`);
  return res;
}

/** The raw result of the last `method` request. */
function rawResult(conn, method) {
  const res = rawResponse(conn, lastRequestId(conn, method));
  assert.ok('result' in res, `${method} failed: ${JSON.stringify(res)}`);
  return res.result;
}

/** Index in `received` of the response to `id`. */
function responseIndex(conn, id) {
  return conn.received.findIndex((m) => isResponse(m) && m.id === id);
}

function notificationsOf(conn, method) {
  return conn.received.filter((m) => m.method === method && !('id' in m));
}

/** Asserts that `promise` rejects with an McpError of `code`; returns it. */
async function rejectsWith(promise, code) {
  let caught;
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof McpError, `not an McpError: ${err}`);
    assert.equal(err.code, code, err.message);
    caught = err;
    return true;
  });
  return caught;
}

/* ------------------------------------------------------------------------ */

describe('everything fixture (SDK client)', () => {
  test('initialize declares exactly the capabilities the fixture needs', async (t) => {
    const conn = await connect(t);
    const init = rawResult(conn, 'initialize');
    assert.deepEqual(init.capabilities, {
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      logging: {},
      completions: {},
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    });
  });

  describe('tools', () => {
    test('tools/list offers exactly the fixture tools, described, with their schemas', async (t) => {
      const { client } = await connect(t);
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((x) => x.name),
        TOOLS,
      );
      for (const tool of tools) {
        assert.equal(typeof tool.description, 'string', tool.name);
        assert.ok(tool.description.length > 0, `${tool.name} has an empty description`);
        assert.match(tool.name, /^[A-Za-z0-9_./-]{1,64}$/);
        assert.deepEqual(tool.inputSchema, INPUT_SCHEMAS[tool.name] ?? NO_ARGUMENTS, tool.name);
      }
      const jsonTool = tools.find((x) => x.name === 'json_schema_2020_12_tool');
      assert.equal(jsonTool.description, 'Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)');
    });

    test('the 2020-12 schema reaches the client untouched, as the suite checks it', async (t) => {
      const conn = await connect(t);
      await conn.client.listTools();
      const tool = rawResult(conn, 'tools/list').tools.find((x) => x.name === 'json_schema_2020_12_tool');
      assert.deepEqual(tool.inputSchema, JSON_SCHEMA_2020_12);
    });

    for (const [name, expected] of Object.entries(FIXED_RESULTS)) {
      test(`${name} answers exactly the reference result`, async (t) => {
        const conn = await connect(t);
        // Like the suite: test_simple_text is called without `arguments`.
        const params = name === 'test_simple_text' ? { name } : { name, arguments: {} };
        const res = await conn.client.callTool(params);
        assert.deepEqual(rawResult(conn, 'tools/call'), expected);
        assert.deepEqual(res.content, expected.content);
        if (name === 'test_simple_text') {
          assert.equal('arguments' in conn.sent.findLast((m) => m.method === 'tools/call').params, false);
        }
      });
    }

    test('json_schema_2020_12_tool echoes its arguments as JSON', async (t) => {
      const conn = await connect(t);
      const args = {
        name: 'Ada "A." Lovelace',
        address: { street: '1/2 Main St', city: 'Zürich' },
        contactMethod: 'email',
        email: 'ada@example.com',
      };
      await conn.client.callTool({ name: 'json_schema_2020_12_tool', arguments: args });
      assert.deepEqual(rawResult(conn, 'tools/call'), {
        content: [{ type: 'text', text: `JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}` }],
      });
      // additionalProperties:false is enforced before the tool runs.
      const bad = await conn.client.callTool({ name: 'json_schema_2020_12_tool', arguments: { nickname: 'x' } });
      assert.equal(bad.isError, true, JSON.stringify(bad));
      assert.match(bad.content[0].text, /nickname/);
    });

    test('test_tool_with_logging: three info messages, in order, before the result', async (t) => {
      const conn = await connect(t);
      const seen = [];
      conn.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => seen.push(n.params));
      await conn.client.setLoggingLevel('debug');
      const started = Date.now();
      const res = await conn.client.callTool({ name: 'test_tool_with_logging', arguments: {} });
      const elapsed = Date.now() - started;
      assert.deepEqual(res.content, [{ type: 'text', text: 'Tool with logging executed successfully' }]);
      assert.deepEqual(rawResult(conn, 'tools/call'), {
        content: [{ type: 'text', text: 'Tool with logging executed successfully' }],
      });
      const logs = notificationsOf(conn, 'notifications/message').map((n) => n.params);
      assert.deepEqual(
        logs.map((p) => [p.level, p.data]),
        [
          ['info', 'Tool execution started'],
          ['info', 'Tool processing data'],
          ['info', 'Tool execution completed'],
        ],
      );
      for (const p of logs) assert.equal(typeof p.logger, 'string');
      assert.equal(seen.length, 3, 'the SDK handler did not get all three');
      // Every log line was written before the response.
      const answered = responseIndex(conn, lastRequestId(conn, 'tools/call'));
      const lastLog = conn.received.findLastIndex((m) => m.method === 'notifications/message');
      assert.ok(lastLog < answered, 'a log message came after the result');
      assert.ok(elapsed >= 90, `the two ~50 ms pauses took only ${elapsed} ms`);
    });

    test('test_tool_with_logging respects logging/setLevel', async (t) => {
      const conn = await connect(t);
      await conn.client.setLoggingLevel('warning');
      await conn.client.callTool({ name: 'test_tool_with_logging', arguments: {} });
      assert.deepEqual(notificationsOf(conn, 'notifications/message'), []);
    });

    test('test_tool_with_progress: 0, 50, 100 of 100 with the token echoed, then the token as text', async (t) => {
      const conn = await connect(t);
      const events = [];
      const res = await conn.client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
        onprogress: (p) => events.push(p),
      });
      // The SDK replaced the token with the request id, an integer.
      const request = conn.sent.findLast((m) => m.method === 'tools/call');
      const token = request.params._meta.progressToken;
      assert.equal(typeof token, 'number');
      const expected = [0, 50, 100].map((n) => ({ progress: n, total: 100, message: `Completed step ${n} of 100` }));
      const progress = notificationsOf(conn, 'notifications/progress');
      assert.deepEqual(
        progress.map((n) => n.params),
        expected.map((p) => ({ progressToken: token, ...p })),
      );
      // The SDK's stdio client hands notifications to their handler a
      // microtask late, after the response in the same read has removed
      // the call's progress handler: such a last notification reaches
      // onerror ("unknown token") instead of onprogress.  mcpd wrote it
      // before the response (checked below); what onprogress got is the
      // start of the same list.
      const lost = conn.errors.filter((e) => /progress notification for an unknown token/.test(String(e)));
      assert.equal(lost.length, conn.errors.length, `unexpected SDK errors: ${conn.errors.join('; ')}`);
      assert.ok(events.length >= 2, `onprogress got ${events.length} of 3`);
      assert.deepEqual(events, expected.slice(0, events.length));
      assert.equal(events.length + lost.length, 3);
      for (let i = 1; i < progress.length; i++) {
        assert.ok(progress[i].params.progress > progress[i - 1].params.progress, 'progress did not increase');
      }
      const answered = responseIndex(conn, request.id);
      assert.ok(
        conn.received.findLastIndex((m) => m.method === 'notifications/progress') < answered,
        'progress came after the result',
      );
      assert.deepEqual(res.content, [{ type: 'text', text: String(token) }]);
    });

    test('test_tool_with_progress echoes a string token unchanged', async (t) => {
      const conn = await connect(t);
      const res = await conn.client.request(
        {
          method: 'tools/call',
          params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'progress-test-1' } },
        },
        CallToolResultSchema,
      );
      assert.deepEqual(res.content, [{ type: 'text', text: 'progress-test-1' }]);
      const progress = notificationsOf(conn, 'notifications/progress').map((n) => n.params);
      assert.deepEqual(
        progress,
        [0, 50, 100].map((n) => ({
          progressToken: 'progress-test-1',
          progress: n,
          total: 100,
          message: `Completed step ${n} of 100`,
        })),
      );
    });

    test('test_tool_with_progress without a token sends no progress', async (t) => {
      const conn = await connect(t);
      const res = await conn.client.callTool({ name: 'test_tool_with_progress', arguments: {} });
      assert.notEqual(res.isError, true);
      assert.equal(res.content.length, 1);
      assert.equal(res.content[0].type, 'text');
      assert.ok(res.content[0].text.length > 0);
      assert.deepEqual(notificationsOf(conn, 'notifications/progress'), []);
    });

    test('cancelling test_tool_with_progress after its first progress: no response, the session goes on', async (t) => {
      const conn = await connect(t);
      const controller = new AbortController();
      const events = [];
      const pending = conn.client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
        signal: controller.signal,
        onprogress: (p) => {
          events.push(p);
          if (events.length === 1) controller.abort('test cancels');
        },
      });
      await assert.rejects(pending);
      const request = conn.sent.findLast((m) => m.method === 'tools/call');
      const cancel = conn.sent.findLast((m) => m.method === 'notifications/cancelled');
      assert.equal(cancel?.params?.requestId, request.id, 'the SDK sent no notifications/cancelled');
      // Longer than the tool would have needed to finish.
      await sleep(400);
      assert.equal(responseIndex(conn, request.id), -1, 'a response arrived for the cancelled call');
      const progress = notificationsOf(conn, 'notifications/progress').filter(
        (n) => n.params.progressToken === request.params._meta.progressToken,
      );
      assert.ok(progress.length < 3, `the cancelled call ran to the end: ${JSON.stringify(progress)}`);
      assert.ok(
        !conn.errors.some((e) => /unknown message ID/.test(String(e))),
        `late response: ${conn.errors.join('; ')}`,
      );
      // The session still serves, the same tool included.
      assert.deepEqual(await conn.client.ping(), {});
      const res = await conn.client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
        onprogress: () => {},
      });
      const token = conn.sent.findLast((m) => m.method === 'tools/call').params._meta.progressToken;
      assert.equal(res.content[0].text, String(token));
      assert.deepEqual(
        notificationsOf(conn, 'notifications/progress')
          .filter((n) => n.params.progressToken === token)
          .map((n) => n.params.progress),
        [0, 50, 100],
      );
    });

    describe('asking the client', () => {
      // What the conformance suite's client declares and answers.
      const CAPABILITIES = { sampling: {}, elicitation: {} };
      const SAMPLED = {
        role: 'assistant',
        content: { type: 'text', text: 'This is a test response from the client' },
        model: 'test-model',
        stopReason: 'endTurn',
      };

      /** A client that answers elicitation/create with `answer`. */
      const elicitingClient = (t, answer, asked) =>
        connect(t, {
          capabilities: CAPABILITIES,
          setup: (client) =>
            client.setRequestHandler(ElicitRequestSchema, (request) => {
              asked.push(request.params);
              return answer;
            }),
        });

      /** The one request with `method` mcpd sent, as it went over the wire. */
      function onlyRequest(conn, method) {
        const requests = conn.received.filter((m) => m.method === method && 'id' in m);
        assert.equal(requests.length, 1, JSON.stringify(requests));
        return requests[0];
      }

      test('test_sampling: sampling/createMessage as the suite expects, the answer in the result', async (t) => {
        const asked = [];
        const conn = await connect(t, {
          capabilities: CAPABILITIES,
          setup: (client) =>
            client.setRequestHandler(CreateMessageRequestSchema, (request) => {
              asked.push(request.params);
              return SAMPLED;
            }),
        });
        const res = await conn.client.callTool({ name: 'test_sampling', arguments: { prompt: 'Test prompt for sampling' } });
        const expected = { content: [{ type: 'text', text: 'LLM response: This is a test response from the client' }] };
        assert.deepEqual(rawResult(conn, 'tools/call'), expected);
        assert.deepEqual(res.content, expected.content);
        const params = {
          messages: [{ role: 'user', content: { type: 'text', text: 'Test prompt for sampling' } }],
          maxTokens: 100,
        };
        assert.deepEqual(onlyRequest(conn, 'sampling/createMessage').params, params);
        assert.deepEqual(asked, [params]);
      });

      test('test_elicitation: the username/email form, the answer in the result', async (t) => {
        const asked = [];
        const conn = await elicitingClient(
          t,
          { action: 'accept', content: { username: 'testuser', email: 'test@example.com' } },
          asked,
        );
        await conn.client.callTool({ name: 'test_elicitation', arguments: { message: 'Please provide your information' } });
        assert.deepEqual(rawResult(conn, 'tools/call'), {
          content: [
            {
              type: 'text',
              text: 'User response: action=accept, content={"username":"testuser","email":"test@example.com"}',
            },
          ],
        });
        const params = {
          message: 'Please provide your information',
          requestedSchema: {
            type: 'object',
            properties: {
              username: { type: 'string', description: "User's response" },
              email: { type: 'string', description: "User's email address" },
            },
            required: ['username', 'email'],
          },
        };
        assert.deepEqual(onlyRequest(conn, 'elicitation/create').params, params);
        assert.deepEqual(asked, [params]);
      });

      test('test_elicitation_sep1034_defaults: a default of each type, 30 an integer and 95.5 a number', async (t) => {
        const asked = [];
        const conn = await elicitingClient(
          t,
          {
            action: 'accept',
            content: { name: 'Jane Smith', age: 25, score: 88.0, status: 'inactive', verified: false },
          },
          asked,
        );
        await conn.client.callTool({ name: 'test_elicitation_sep1034_defaults', arguments: {} });
        assert.deepEqual(rawResult(conn, 'tools/call'), {
          content: [
            {
              type: 'text',
              text: 'Elicitation completed: action=accept, content={"name":"Jane Smith","age":25,"score":88,"status":"inactive","verified":false}',
            },
          ],
        });
        const params = {
          message: 'Please review and update the form fields with defaults',
          requestedSchema: {
            type: 'object',
            properties: {
              name: { type: 'string', description: 'User name', default: 'John Doe' },
              age: { type: 'integer', description: 'User age', default: 30 },
              score: { type: 'number', description: 'User score', default: 95.5 },
              status: {
                type: 'string',
                description: 'User status',
                enum: ['active', 'inactive', 'pending'],
                default: 'active',
              },
              verified: { type: 'boolean', description: 'Verification status', default: true },
            },
            required: [],
          },
        };
        assert.deepEqual(onlyRequest(conn, 'elicitation/create').params, params);
        assert.deepEqual(asked, [params]);
        // JSON.parse reads 30.0 as 30: the bytes tell the integer apart.
        const line = conn
          .stdout()
          .split('\n')
          .find((l) => l.includes('"elicitation/create"'));
        assert.match(line, /"age":\{"type":"integer","description":"User age","default":30\}/);
        assert.match(line, /"score":\{"type":"number","description":"User score","default":95\.5\}/);
      });

      test('test_elicitation_sep1330_enums: every enum shape exactly', async (t) => {
        const asked = [];
        const content = {
          untitledSingle: 'option1',
          titledSingle: 'value1',
          legacyEnum: 'opt1',
          untitledMulti: ['option1', 'option2'],
          titledMulti: ['value1', 'value2'],
        };
        const conn = await elicitingClient(t, { action: 'accept', content }, asked);
        await conn.client.callTool({ name: 'test_elicitation_sep1330_enums', arguments: {} });
        assert.deepEqual(rawResult(conn, 'tools/call'), {
          content: [{ type: 'text', text: `Elicitation completed: action=accept, content=${JSON.stringify(content)}` }],
        });
        const titled = (prefix) => [
          { const: 'value1', title: `First ${prefix}` },
          { const: 'value2', title: `Second ${prefix}` },
          { const: 'value3', title: `Third ${prefix}` },
        ];
        const params = {
          message: 'Please select options from the enum fields',
          requestedSchema: {
            type: 'object',
            properties: {
              untitledSingle: {
                type: 'string',
                description: 'Select one option',
                enum: ['option1', 'option2', 'option3'],
              },
              titledSingle: {
                type: 'string',
                description: 'Select one option with titles',
                oneOf: titled('Option'),
              },
              legacyEnum: {
                type: 'string',
                description: 'Select one option (legacy)',
                enum: ['opt1', 'opt2', 'opt3'],
                enumNames: ['Option One', 'Option Two', 'Option Three'],
              },
              untitledMulti: {
                type: 'array',
                description: 'Select multiple options',
                minItems: 1,
                maxItems: 3,
                items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
              },
              titledMulti: {
                type: 'array',
                description: 'Select multiple options with titles',
                minItems: 1,
                maxItems: 3,
                items: { anyOf: titled('Choice') },
              },
            },
            required: [],
          },
        };
        assert.deepEqual(onlyRequest(conn, 'elicitation/create').params, params);
        assert.deepEqual(asked, [params]);
      });

      for (const action of ['decline', 'cancel']) {
        test(`a ${action}ed elicitation is reported with its action`, async (t) => {
          const asked = [];
          const conn = await elicitingClient(t, { action }, asked);
          const res = await conn.client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
          assert.notEqual(res.isError, true, JSON.stringify(res));
          assert.deepEqual(res.content, [{ type: 'text', text: `User response: action=${action}` }]);
          const sep = await conn.client.callTool({ name: 'test_elicitation_sep1034_defaults', arguments: {} });
          assert.deepEqual(sep.content, [{ type: 'text', text: `Elicitation completed: action=${action}` }]);
          assert.equal(asked.length, 2);
        });
      }

      test('a client without sampling or elicitation: isError results saying so, nothing sent', async (t) => {
        const conn = await connect(t);
        const calls = [
          ['test_sampling', { prompt: 'p' }, /sampling/],
          ['test_elicitation', { message: 'm' }, /elicitation/],
          ['test_elicitation_sep1034_defaults', {}, /elicitation/],
          ['test_elicitation_sep1330_enums', {}, /elicitation/],
        ];
        for (const [name, args, why] of calls) {
          const res = await conn.client.callTool({ name, arguments: args });
          assert.equal(res.isError, true, `${name}: ${JSON.stringify(res)}`);
          assert.match(res.content[0].text, /did not declare/, name);
          assert.match(res.content[0].text, why, name);
        }
        assert.deepEqual(
          conn.received.filter((m) => 'method' in m && 'id' in m),
          [],
        );
      });
    });
  });

  describe('resources', () => {
    test('resources/list lists the three resources exactly', async (t) => {
      const conn = await connect(t);
      const { resources } = await conn.client.listResources();
      assert.deepEqual(resources, RESOURCES);
      assert.deepEqual(rawResult(conn, 'resources/list').resources, RESOURCES);
    });

    for (const [uri, expected] of Object.entries(READS)) {
      test(`resources/read ${uri}`, async (t) => {
        const conn = await connect(t);
        const res = await conn.client.readResource({ uri });
        assert.deepEqual(res.contents, expected.contents);
        assert.deepEqual(rawResult(conn, 'resources/read'), expected);
      });
    }

    test('the template serves any id, and its text names it', async (t) => {
      const { client } = await connect(t);
      for (const id of ['1', 'abc', 'x y']) {
        const uri = `test://template/${encodeURIComponent(id)}/data`;
        const res = await client.readResource({ uri });
        assert.equal(res.contents.length, 1);
        assert.equal(res.contents[0].uri, uri);
        assert.equal(res.contents[0].mimeType, 'application/json');
        assert.deepEqual(JSON.parse(res.contents[0].text), { id, templateTest: true, data: `Data for ID: ${id}` });
      }
    });

    test('reading an unknown URI -> -32002 with the URI as data', async (t) => {
      const { client } = await connect(t);
      for (const uri of ['test://nonexistent-resource-for-conformance-testing', 'test://template/1/other']) {
        const err = await rejectsWith(client.readResource({ uri }), -32002);
        assert.equal(err.data?.uri, uri, JSON.stringify(err.data));
      }
      assert.deepEqual(await client.ping(), {});
    });

    test('resources/templates/list lists the template exactly', async (t) => {
      const conn = await connect(t);
      const { resourceTemplates } = await conn.client.listResourceTemplates();
      assert.deepEqual(resourceTemplates, TEMPLATES);
      assert.deepEqual(rawResult(conn, 'resources/templates/list').resourceTemplates, TEMPLATES);
    });

    test('resources/subscribe and resources/unsubscribe answer exactly {}', async (t) => {
      const conn = await connect(t);
      assert.deepEqual(await conn.client.subscribeResource({ uri: WATCHED }), {});
      assert.deepEqual(rawResult(conn, 'resources/subscribe'), {});
      assert.deepEqual(await conn.client.unsubscribeResource({ uri: WATCHED }), {});
      assert.deepEqual(rawResult(conn, 'resources/unsubscribe'), {});
    });

    test('the watched resource reports updates while subscribed, and only then', { timeout: 30000 }, async (t) => {
      const interval = 200;
      const conn = await connect(t, { config: { watch_interval_ms: interval } });
      const updates = [];
      conn.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params));
      const count = () => notificationsOf(conn, 'notifications/resources/updated').length;

      await sleep(3 * interval);
      assert.equal(count(), 0, 'updates before anyone subscribed');

      for (let round = 1; round <= 2; round++) {
        const before = count();
        await conn.client.subscribeResource({ uri: WATCHED });
        await until(() => count() >= before + 2, 20 * interval, `two updates in round ${round}`, 10);
        await conn.client.unsubscribeResource({ uri: WATCHED });
        // One update may have been under way when the unsubscribe arrived.
        await sleep(interval);
        const settled = count();
        await sleep(4 * interval);
        assert.equal(count(), settled, `updates kept coming after unsubscribe in round ${round}`);
      }
      for (const n of notificationsOf(conn, 'notifications/resources/updated')) {
        assert.deepEqual(n.params, { uri: WATCHED });
      }
      assert.equal(updates.length, count(), 'the SDK handler missed updates');
      assert.deepEqual(await conn.client.ping(), {});
    });

    test('closing the client while subscribed: the watcher stops at once, mcpd exits 0', async (t) => {
      // The default interval (3 s): fini() must wake the watcher, not wait.
      const conn = await connect(t);
      await conn.client.subscribeResource({ uri: WATCHED });
      await sleep(100);
      const started = Date.now();
      await conn.client.close();
      const elapsed = Date.now() - started;
      assert.equal(conn.child.exitCode, 0, conn.stderr());
      assert.ok(elapsed < 1500, `mcpd took ${elapsed} ms to exit`);
    });

    test('a reload hands the open subscription to the new instance', { timeout: 30000 }, async (t) => {
      const interval = 100;
      const conn = await connect(t, { config: { watch_interval_ms: interval } });
      const count = () => notificationsOf(conn, 'notifications/resources/updated').length;
      await conn.client.subscribeResource({ uri: WATCHED });
      await until(() => count() >= 2, 20 * interval, 'updates before the reload', 10);

      // A fresh copy renamed over the old file, then a rescan.
      const so = path.join(conn.dir, 'everything.so');
      await fsp.copyFile(pluginPath('everything'), `${so}.new`);
      await fsp.chmod(`${so}.new`, 0o644);
      await fsp.rename(`${so}.new`, so);
      conn.child.kill('SIGHUP');
      await until(() => /plugin "everything" .* replaces it/.test(conn.stderr()), 5000, 'the reload', 10);
      const reloaded = count();
      await until(() => count() >= reloaded + 2, 20 * interval, 'updates from the new instance', 10);

      await conn.client.unsubscribeResource({ uri: WATCHED });
      await sleep(interval);
      const settled = count();
      await sleep(4 * interval);
      assert.equal(count(), settled, 'updates kept coming after unsubscribe');
    });
  });

  describe('prompts', () => {
    test('prompts/list lists the five prompts with their argument metadata', async (t) => {
      const conn = await connect(t);
      const { prompts } = await conn.client.listPrompts();
      // A prompt without arguments may list none or an empty array.
      const normal = (list) =>
        list.map((p) => {
          const q = { ...p };
          if (Array.isArray(q.arguments) && q.arguments.length === 0) delete q.arguments;
          return q;
        });
      assert.deepEqual(normal(prompts), PROMPTS);
      assert.deepEqual(normal(rawResult(conn, 'prompts/list').prompts), PROMPTS);
      for (const p of prompts) assert.ok(p.description.length > 0, p.name);
    });

    for (const [name, { arguments: args, messages }] of Object.entries(PROMPT_GETS)) {
      test(`prompts/get ${name}`, async (t) => {
        const conn = await connect(t);
        const params = args === undefined ? { name } : { name, arguments: args };
        const res = await conn.client.getPrompt(params);
        assert.deepEqual(res.messages, messages);
        const description = PROMPTS.find((p) => p.name === name).description;
        assert.deepEqual(rawResult(conn, 'prompts/get'), { description, messages });
      });
    }

    test('a missing required argument -> -32602', async (t) => {
      const { client } = await connect(t);
      await rejectsWith(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'x' } }), -32602);
      await rejectsWith(client.getPrompt({ name: 'test_prompt_with_embedded_resource' }), -32602);
      await rejectsWith(client.getPrompt({ name: 'no_such_prompt' }), -32602);
      assert.deepEqual(await client.ping(), {});
    });
  });

  describe('completion', () => {
    test('completion/complete for the prompt arguments, by prefix', async (t) => {
      const conn = await connect(t);
      const ref = { type: 'ref/prompt', name: 'test_prompt_with_arguments' };
      const cases = [
        ['arg1', 'test', ['testValue1', 'testOther1']],
        ['arg1', '', ['testValue1', 'testOther1', 'value1']],
        ['arg2', 'testV', ['testValue2']],
        ['arg2', 'zzz', []],
      ];
      for (const [name, value, values] of cases) {
        const { completion } = await conn.client.complete({ ref, argument: { name, value } });
        assert.deepEqual(completion.values, values, `${name}=${JSON.stringify(value)}`);
        assert.notEqual(completion.hasMore, true);
        assert.deepEqual(rawResult(conn, 'completion/complete').completion.values, values);
      }
    });

    test('completion/complete for the template variable', async (t) => {
      const { client } = await connect(t);
      const ref = { type: 'ref/resource', uri: TEMPLATE };
      const cases = [
        ['1', ['1', '123']],
        ['', ['1', '2', '3', '42', '123']],
        ['4', ['42']],
        ['9', []],
      ];
      for (const [value, values] of cases) {
        const { completion } = await client.complete({ ref, argument: { name: 'id', value } });
        assert.deepEqual(completion.values, values, JSON.stringify(value));
      }
    });
  });
});
