// SPDX-License-Identifier: MIT
// plugins/proxy in front of an upstream that misbehaves in every way
// bad-upstream.mjs can think of: junk and batches on its stdout, answers
// under wrong ids or twice or of the wrong shape, broken listings and
// endless cursors, odd notifications and storms of them, requests to its
// client with no call in flight, calls it never answers, a 20 MiB line,
// exits mid-call, a closed stdout, a flood on stderr, initialize never
// answered, and a 2026-07-28 discovery with non-strings in it.  What a
// user of mcpd sees must stay sound: every request with an id gets
// exactly one response, of the right kind (a JSON-RPC error or an isError
// result); stdout carries JSON-RPC only; the bundled echo plugin beside
// the proxy keeps working; broken entries are skipped with a log line
// naming them; and mcpd exits 0 on EOF (so a sanitizer build's leak or
// error fails the test).

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { assertCleanStdout, configFile, isResponse, makePluginDir, McpdProcess, resultText, sleep, SRCDIR, until } from './lib.mjs';

const UPSTREAM = path.join(SRCDIR, 'tests', 'e2e', 'bad-upstream.mjs');
const REQUEST_TIMEOUT = -32001;

/**
 * mcpd with the proxy (serving bad-upstream.mjs in `mode` as "bad") and
 * echo, initialized.  Every request id it is sent is remembered, so
 * finish() can check that each got exactly one response.
 */
async function start(t, mode, { startTimeoutMs = 10000, deadline = 3000, listTimeoutMs } = {}) {
  const dir = await makePluginDir(['proxy', 'echo']);
  const config = await configFile({
    plugins: {
      proxy: { startTimeoutMs, listTimeoutMs, servers: { bad: { command: [process.execPath, UPSTREAM, mode] } } },
    },
  });
  const mcpd = new McpdProcess(['--config', config, '--deadline', String(deadline)], { plugins: dir });
  t.after(() => mcpd.close());
  const request = mcpd.request.bind(mcpd);
  let n = 0;
  mcpd.sentIds = [];
  mcpd.request = (method, params, opts = {}) => {
    const id = opts.id ?? `${mode}-${++n}`;
    mcpd.sentIds.push(id);
    return request(method, params, { ...opts, id });
  };
  await mcpd.initialize();
  return mcpd;
}

/** tools/call; resolves with the whole response message. */
function call(mcpd, name, args = {}, opts = {}) {
  return mcpd.request('tools/call', { name, arguments: args }, { timeout: 15000, ...opts });
}

async function toolNames(mcpd) {
  return (await mcpd.call('tools/list', {})).tools.map((x) => x.name);
}

/** mcpd's own echo plugin still answers. */
async function echoWorks(mcpd, text = 'still here') {
  const res = await call(mcpd, 'echo', { text });
  assert.deepEqual(res.result, { content: [{ type: 'text', text }] }, JSON.stringify(res));
}

function assertError(res, code, message) {
  assert.ok('error' in res, `expected an error, got ${JSON.stringify(res)}`);
  if (code !== undefined) assert.equal(res.error.code, code, JSON.stringify(res));
  if (message !== undefined) assert.match(res.error.message, message, JSON.stringify(res));
}

function assertToolError(res, message) {
  assert.equal(res.result?.isError, true, `expected an isError result, got ${JSON.stringify(res)}`);
  assert.match(resultText(res.result), message);
}

/** What the upstream reports of the answers it got, its cancellations. */
async function report(mcpd) {
  const res = await call(mcpd, 'bad_report');
  return JSON.parse(resultText(res.result));
}

/** Which of the upstream's request ids got what answers. */
function answersOf(rep) {
  return new Map(Object.entries(rep.answers).map(([k, v]) => [JSON.parse(k), v]));
}

/**
 * EOF; mcpd must exit 0 having answered every request exactly once, with
 * nothing but JSON-RPC on stdout and no crash or sanitizer report.
 */
async function finish(mcpd) {
  mcpd.endInput();
  const { code, signal } = await mcpd.waitExit(15000);
  const stderr = mcpd.stderr;
  assert.equal(signal, null, stderr.slice(-3000));
  assert.equal(code, 0, stderr.slice(-3000));
  assert.doesNotMatch(stderr, /Sanitizer|runtime error:|killed by signal 11|Segmentation|Aborted/);
  assert.doesNotMatch(stderr, /worker process .*(killed|crashed|died)/);
  assertCleanStdout(mcpd);
  const counts = new Map();
  for (const m of mcpd.messages.filter(isResponse)) counts.set(JSON.stringify(m.id), (counts.get(JSON.stringify(m.id)) ?? 0) + 1);
  for (const id of mcpd.sentIds) {
    assert.equal(counts.get(JSON.stringify(id)), 1, `request ${JSON.stringify(id)} got ${counts.get(JSON.stringify(id)) ?? 0} responses`);
  }
}

/** Waits for mcpd's log to hold `pattern` (a string or a RegExp): its
 * stderr is a pipe of its own, read apart from stdout. */
function logged(mcpd, pattern, ms = 5000) {
  const found = () => (typeof pattern === 'string' ? mcpd.stderr.includes(pattern) : pattern.test(mcpd.stderr));
  return until(found, ms, `the log line ${pattern}`, 50);
}

/** A skipped entry's log line names it. */
function skipped(mcpd, kind, name) {
  return logged(mcpd, `bad: ${kind} "${name}" skipped: `);
}

describe('proxy: an upstream that breaks every rule', { concurrency: true }, () => {
  test('junk, broken entries, wrong answers and odd messages', async (t) => {
    const mcpd = await start(t, 'normal');

    // Junk around initialize was ignored, with a log line.
    await logged(mcpd, 'bad: connected to bad-upstream 6.6.6', 10000);
    await logged(mcpd, 'bad: not a JSON message on stdout, ignored: not json at all');

    // Tools: broken names mapped or skipped, unusable schemas skipped;
    // whatever mcpd offers is a valid tool.
    const { tools } = await mcpd.call('tools/list', {});
    const names = tools.map((x) => x.name);
    for (const name of [
      'echo',
      'bad_echo',
      'bad_with_space',
      'bad_with_dot',
      'bad___n__',
      `bad_${'y'.repeat(60)}`,
      'bad_dup',
      'bad_a_b',
      'bad_schema_text',
      'bad_schema_missing',
      'bad_schema_huge',
      'bad_deep_schema', // 40 levels: deeper than json-c's default
      'bad_odd_fields',
    ]) {
      assert.ok(names.includes(name), `${name} is missing from ${names.join(' ')}`);
    }
    for (const tool of tools) {
      assert.match(tool.name, /^[A-Za-z0-9_-]{1,64}$/);
      assert.equal(tool.inputSchema?.type, 'object', `${tool.name}: ${JSON.stringify(tool.inputSchema)}`);
    }
    assert.equal(new Set(names).size, names.length, 'a name is offered twice');
    assert.equal(tools.find((x) => x.name === 'bad_dup').description, 'first');
    for (const name of ['bad_schema_string_type', 'bad_schema_bad_props', 'bad_output_string', 'bad_xxxxx']) {
      assert.ok(!names.some((n) => n.startsWith(name)), `${name} should have been skipped`);
    }
    await skipped(mcpd, 'tool', '?');
    await skipped(mcpd, 'tool', 'x'.repeat(61));
    await skipped(mcpd, 'tool', 'dup');
    await skipped(mcpd, 'tool', 'a_b');
    await skipped(mcpd, 'tool', 'schema_string_type');
    await skipped(mcpd, 'tool', 'schema_bad_props');
    await skipped(mcpd, 'tool', 'output_string');

    // Resources, templates and prompts likewise.
    const { resources } = await mcpd.call('resources/list', {});
    assert.deepEqual(resources.map((r) => r.uri).sort(), ['bad://odd-fields', 'bad://ok', 'bad://wrong-shape']);
    await skipped(mcpd, 'resource', '?');
    await skipped(mcpd, 'resource', 'bad://ok');
    await skipped(mcpd, 'resource', 'not a uri at all');
    const { resourceTemplates } = await mcpd.call('resources/templates/list', {});
    assert.deepEqual(resourceTemplates.map((r) => r.uriTemplate), ['bad://t/{id}']);
    for (const tpl of ['?', 'bad://open/{', 'bad://{a}{b}}', 'bad://{}']) await skipped(mcpd, 'resource template', tpl);
    const { prompts } = await mcpd.call('prompts/list', {});
    assert.deepEqual(prompts.map((p) => p.name).sort(), [
      'bad_args',
      'bad_args_not_array',
      'bad_bad_messages',
      'bad_ok',
      'bad_with_space',
    ]);
    assert.deepEqual(prompts.find((p) => p.name === 'bad_args').arguments, [{ name: 'who', required: true }]);
    await skipped(mcpd, 'prompt', '?');
    await skipped(mcpd, 'prompt', 'z'.repeat(61));

    // Answers under wrong ids are dropped; of three answers to one id,
    // the first counts.
    assert.deepEqual((await call(mcpd, 'bad_twice')).result, { content: [{ type: 'text', text: 'first' }] });
    // An answer with both result and error is an error.
    assertError(await call(mcpd, 'bad_both'), -32603, /^both result and error$/);
    // A result that is not an object is no answer.
    for (const kind of ['string', 'array', 'number', 'null', 'bool']) {
      assertError(await call(mcpd, 'bad_not_object', { kind }), -32603, /answered without a result/);
    }
    // Error objects of any shape become well-formed errors; only the codes
    // that mean something to the client pass.
    for (const kind of ['string', 'empty', 'types', 'nulls', 'float', 'big', 'array']) {
      const res = await call(mcpd, 'bad_odd_error', { kind });
      assertError(res, -32603);
      assert.doesNotMatch(res.error.message, /\(null\)/);
    }
    assertError(await call(mcpd, 'bad_odd_error', { kind: 'params' }), -32602, /^bad arguments upstream$/);
    // Results of the wrong shape never reach the client as they are.
    for (const name of ['bad_content_string', 'bad_untyped_block', 'bad_no_content']) {
      assertError(await call(mcpd, name), -32603, /malformed result/);
    }

    // Progress: only this call's, only numbers, only increasing.
    const progressed = await call(mcpd, 'bad_progress', {}, { meta: { progressToken: 'p-tok' } });
    assert.equal(resultText(progressed.result), 'progress done');
    const progress = mcpd.notifications.filter((m) => m.method === 'notifications/progress');
    assert.ok(progress.every((m) => m.params.progressToken === 'p-tok'), JSON.stringify(progress));
    assert.deepEqual(
      progress.map((m) => m.params.progress),
      [5, 7],
      'only the numbers that increase pass',
    );

    // Odd notifications and a storm of list_changed change nothing.
    assert.equal(resultText((await call(mcpd, 'bad_notes')).result), 'notes done');
    await logged(mcpd, 'bad: bad-upstream: a plain warning');
    assert.equal(resultText((await call(mcpd, 'bad_storm')).result), 'storm done');
    await mcpd.ping();
    assert.deepEqual((await toolNames(mcpd)).sort(), names.slice().sort());

    // Requests to the client: every one answered once, with an error
    // where the client cannot answer; ids of any type come back as sent.
    assert.equal(resultText((await call(mcpd, 'bad_requests')).result), 'requests done');
    assert.equal(resultText((await call(mcpd, 'bad_idle_requests')).result), 'idle requests sent');
    const rep = await until(
      async () => {
        const r = await report(mcpd);
        return answersOf(r).has('idle-unknown') && answersOf(r).has('idle-elicit') ? r : null;
      },
      5000,
      'the answers to the requests sent with no call in flight', 50);
    const answers = answersOf(rep);
    // The proxy's own requests went out in spite of the junk before them.
    assert.equal(rep.initialized, 1);
    assert.deepEqual(rep.setLevel, ['info']);
    const expected = new Map([
      ['r-1', [-32601]],
      ['r-4', ['ok']],
      ['r-5', ['ok']],
      [77777, ['ok']],
      [1.5, ['ok']],
      [true, ['ok']],
      [-1, [-32601]],
      ['idle-unknown', [-32601]],
    ]);
    for (const [id, want] of expected) assert.deepEqual(answers.get(id), want, `answers to ${JSON.stringify(id)}`);
    assert.deepEqual(rep.answers['{"o":1}'], ['ok']);
    assert.deepEqual(rep.answers['[1]'], ['ok']);
    for (const id of ['r-2', 'r-3', 'idle-sampling', 'idle-elicit']) {
      assert.equal(answers.get(id)?.length, 1, `answers to ${id}: ${JSON.stringify(answers.get(id))}`);
      assert.ok(Number.isInteger(answers.get(id)[0]), `${id} is answered with an error`);
    }
    for (let i = 0; i < 200; i++) {
      const got = answers.get(`flood-${i}`);
      assert.ok(got?.length === 1 && Number.isInteger(got[0]), `flood-${i}: ${JSON.stringify(got)}`);
    }
    assert.equal(answers.has(null), false, 'a request with a null id is a notification');

    // A result nested deeper than json-c's default depth, and one with
    // blanks before its newline, are answers like any other.
    const deep = await call(mcpd, 'bad_deep');
    assert.equal(resultText(deep.result), 'deep', JSON.stringify(deep).slice(0, 300));
    assert.equal(resultText((await call(mcpd, 'bad_trailing_space')).result), 'blanks after me');

    // A flood on stderr goes to the log; the upstream and mcpd go on.
    assert.equal(resultText((await call(mcpd, 'bad_stderr_flood')).result), 'stderr flood done');
    await until(
      () => mcpd.stderr.split('bad: bad-upstream stderr line').length > 20000,
      10000,
      'the 20000 stderr lines in the log', 50);
    await logged(mcpd, `bad: ${'e'.repeat(200)}`);

    // Reads, prompts and completion of the wrong shape are errors.
    const ok = await mcpd.call('resources/read', { uri: 'bad://ok' });
    assert.equal(ok.contents[0].text, 'fine');
    assertError(await mcpd.request('resources/read', { uri: 'bad://wrong-shape' }), -32603, /malformed/);
    assertError(await mcpd.request('resources/read', { uri: 'bad://t/1' }), -32603, /malformed/);
    const prompt = await mcpd.call('prompts/get', { name: 'bad_ok' });
    assert.equal(prompt.messages[0].content.text, 'hello');
    assertError(await mcpd.request('prompts/get', { name: 'bad_bad_messages' }), -32603, /malformed/);
    const completion = await mcpd.request('completion/complete', {
      ref: { type: 'ref/prompt', name: 'bad_args' },
      argument: { name: 'who', value: 'x' },
    });
    assertError(completion, -32603);

    // A call never answered: mcpd's deadline answers it, and the upstream
    // hears it was cancelled.  Calls beside it are not held up.
    const hung = call(mcpd, 'bad_hang');
    const beside = await Promise.all(Array.from({ length: 30 }, (_, i) => call(mcpd, 'bad_echo', { text: `b${i}` })));
    beside.forEach((res, i) => assert.equal(resultText(res.result), `b${i}`));
    assertError(await hung, REQUEST_TIMEOUT, /deadline/);
    const after = await until(async () => {
      const r = await report(mcpd);
      return r.cancelled.length > 0 ? r : null;
    }, 5000, 'notifications/cancelled upstream', 50);
    assert.deepEqual(after.cancelled, after.hung);

    await echoWorks(mcpd);
    await finish(mcpd);
  });

  test('a result whose structuredContent is not an object is not passed on as it is', async (t) => {
    const mcpd = await start(t, 'normal');
    await until(async () => (await toolNames(mcpd)).includes('bad_structured_string'), 10000, 'the upstream tools', 50);
    const res = await call(mcpd, 'bad_structured_string');
    if ('result' in res) {
      const sc = res.result.structuredContent;
      assert.ok(sc === undefined || (sc !== null && typeof sc === 'object' && !Array.isArray(sc)), JSON.stringify(res));
    }
    await finish(mcpd);
  });

  test('a 20 MiB line, an exit mid-call and a closed stdout: calls fail, the upstream comes back', async (t) => {
    const mcpd = await start(t, 'normal', { deadline: 10000 });
    await until(async () => (await toolNames(mcpd)).includes('bad_huge'), 10000, 'the upstream tools', 50);

    /** Waits until bad_echo answers again after a restart. */
    const back = () =>
      until(
        async () => {
          const res = await call(mcpd, 'bad_echo', { text: 'back' });
          return 'result' in res && resultText(res.result) === 'back';
        },
        12000,
        'the upstream to be started again', 50);

    /** Starts a bad_hang call and waits until the upstream has it; the
     * call's response comes in `response`. */
    const hang = async () => {
      const response = call(mcpd, 'bad_hang');
      await until(async () => (await report(mcpd)).hung.length > 0, 5000, 'the upstream to get bad_hang', 50);
      return { response };
    };

    // A line over the proxy's 16 MiB limit ends that upstream, not mcpd;
    // its calls in flight fail as tool errors.
    let hung = await hang();
    assertToolError(await call(mcpd, 'bad_huge'), /bad: wrote a line longer than 16 MiB/);
    assertToolError(await hung.response, /bad: wrote a line longer than 16 MiB/);
    await logged(mcpd, 'bad: wrote a line longer than 16 MiB; stopped; starting it again in 1.0 s');
    await echoWorks(mcpd);
    await back();

    // An exit in the middle of a call.
    hung = await hang();
    assertToolError(await call(mcpd, 'bad_exit'), /bad: exited with status 3/);
    assertToolError(await hung.response, /bad: exited with status 3/);
    await logged(mcpd, 'bad: exited with status 3; starting it again in 2.0 s');
    await echoWorks(mcpd);
    await back();

    // stdout closed, the process alive and deaf to SIGTERM: it is killed.
    const closed = await call(mcpd, 'bad_close_stdout');
    assertToolError(closed, /bad: killed by signal 9/);
    await logged(mcpd, 'bad: killed by signal 9 (Killed); starting it again in 4.0 s');
    await echoWorks(mcpd);
    await finish(mcpd);
  });

  test('initialize never answered: mcpd starts anyway and serves echo', async (t) => {
    const began = Date.now();
    const mcpd = await start(t, 'never-init', { startTimeoutMs: 1000 });
    assert.ok(Date.now() - began < 8000, `initialize took ${Date.now() - began} ms`);
    await echoWorks(mcpd);
    await logged(mcpd, '1 server(s) not ready after 1000 ms');
    assert.ok(!(await toolNames(mcpd)).some((n) => n.startsWith('bad_')));
    assertError(await call(mcpd, 'bad_echo', { text: 'x' }), -32602);
    await finish(mcpd);
  });

  test('an upstream that exits right after initialize is started again and again', async (t) => {
    const mcpd = await start(t, 'exit-after-init', { startTimeoutMs: 1000 });
    await echoWorks(mcpd);
    await logged(mcpd, 'bad: exited with status 0; starting it again in 2.0 s', 8000);
    const res = await call(mcpd, 'bad_echo', { text: 'x' });
    assert.ok('error' in res || res.result?.isError === true, JSON.stringify(res));
    await echoWorks(mcpd);
    await finish(mcpd);
  });

  test('a listing never answered fails after listTimeoutMs; the next list_changed is listed', async (t) => {
    const mcpd = await start(t, 'mute-list', { startTimeoutMs: 1000, listTimeoutMs: 500 });
    await logged(mcpd, 'bad: tools/list failed: no answer within 500 ms', 8000);
    await until(async () => (await toolNames(mcpd)).includes('bad_echo'), 10000, 'the tools listed after list_changed', 50);
    const res = await call(mcpd, 'bad_echo', { text: 'late' });
    assert.equal(resultText(res.result), 'late', JSON.stringify(res));
    await echoWorks(mcpd);
    await finish(mcpd);
  });

  test('a nextCursor that never ends: the listing ends anyway', async (t) => {
    const mcpd = await start(t, 'loop-cursor');
    // The same cursor again: the first page is all there is.
    const tools = await until(async () => {
      const names = (await toolNames(mcpd)).filter((n) => n.startsWith('bad_'));
      return names.length > 0 ? names : null;
    }, 10000, 'the looped tools', 50);
    assert.deepEqual(tools.sort(), Array.from({ length: 100 }, (_, i) => `bad_looped_${i}`).sort());
    // A new cursor on every empty page: the listing still ends.
    const { resources } = await until(async () => {
      const r = await mcpd.call('resources/list', {});
      return r.resources.length > 0 ? r : null;
    }, 20000, 'the resources listing to end', 50);
    assert.deepEqual(resources.map((r) => r.uri), ['bad://looped']);
    // A nextCursor that is no string ends it; so does a list that is none.
    assert.deepEqual((await mcpd.call('prompts/list', {})).prompts.map((p) => p.name), ['bad_looped']);
    assert.deepEqual((await mcpd.call('resources/templates/list', {})).resourceTemplates, []);
    await logged(mcpd, 'bad: tools/list: the nextCursor of page 2 is the cursor that asked for it');
    await logged(mcpd, /bad: resources\/list: stopped after 1 items in \d+ pages/);
    assert.ok(mcpd.stderr.split('skipped: another entry').length < 300, 'a looping cursor floods the log');
    await echoWorks(mcpd);
    await finish(mcpd);
  });

  test('a 2026-07-28 upstream: non-strings where strings belong, rounds that ask nothing', async (t) => {
    // Its supportedVersions holds null, a number and an object.
    const mcpd = await start(t, 'modern');
    await until(async () => (await toolNames(mcpd)).includes('bad_null_type'), 10000, 'the modern upstream tools', 50);
    await logged(mcpd, 'bad: connected to bad-upstream 6.6.6 (protocol 2026-07-28)');
    assert.equal(resultText((await call(mcpd, 'bad_null_type')).result), 'null resultType');
    assert.equal(resultText((await call(mcpd, 'bad_number_type')).result), 'number resultType');
    // An input_required round with no questions (none, then {}), or with
    // questions mcpd cannot put to a client, fails the call.
    assertToolError(await call(mcpd, 'bad_no_questions'), /^bad asked for input but named none$/);
    assertToolError(await call(mcpd, 'bad_no_questions'), /^bad asked for input but named none$/);
    assertToolError(await call(mcpd, 'bad_odd_round'), /which mcpd cannot pass on/);
    // A round the proxy answers itself (roots/list) goes again at once.
    for (let i = 0; i < 3; i++) {
      assert.equal(resultText((await call(mcpd, 'bad_roots_round')).result), 'roots {"roots":[]}');
    }
    // A round with only new state goes again with it.
    assert.equal(resultText((await call(mcpd, 'bad_state_only')).result), 'state came back');
    // One that asks for ever is given up after 16 rounds, not at the deadline.
    assertToolError(await call(mcpd, 'bad_roots_forever'), /^bad asked for input 16 times; given up$/);
    assert.equal(resultText((await call(mcpd, 'bad_echo', { a: 1 })).result), 'modern {"a":1}');
    await echoWorks(mcpd);
    await finish(mcpd);
  });
});
