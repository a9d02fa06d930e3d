import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  planCompression,
  runAgent,
  SUMMARIZER_PROMPT,
  SUMMARY_MARKER,
  modelSummarizer,
  type AgentEvent,
} from '../../src/agent/index.js';
import { createModelClient, isContextOverflow, toWireMessages, type Message } from '../../src/model/index.js';
import { modelErrorFor } from '../../src/model/failure.js';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { loadToolRegistry } from '../../src/tools/builtin.js';
import { toolSpec } from '../../src/tools/tool-spec.js';
import { buildRecord, rebuildRequests, validateRecord } from '../../src/trajectory/index.js';
import { startScriptedServer, type ChatRequest, type Script, type ScriptedResponse } from '../../src/testing/index.js';
import { projectRoot } from '../../src/util/paths.js';

const FIXTURES = join(projectRoot(), 'tests', 'fixtures', 'context-overflow');

function isSummaryRequest(request: ChatRequest): boolean {
  return request.messages[0]?.content === SUMMARIZER_PROMPT;
}

async function setup(t: { after(fn: () => unknown): void }, script: Script) {
  const server = await startScriptedServer(script);
  const sandbox = await createLocalSandbox({ kind: 'local' });
  t.after(async () => {
    await sandbox.dispose();
    await server.close();
  });
  const model = createModelClient(
    { base_url: server.url, model: 'scripted', api_key_env: 'NO_KEY', max_retries: 3 },
    { retry: { baseDelayMs: 1, maxDelayMs: 2 } },
  );
  const tools = (await loadToolRegistry()).select(['terminal', 'todo'], { env: process.env });
  const messages: Message[] = [
    { role: 'system', content: 'You are a test agent.' },
    { role: 'user', content: 'Run ten steps, then say done.' },
  ];
  return { server, sandbox, model, tools, messages };
}

/** Ten terminal steps; usage grows 500 tokens a message, so a 10k window at 0.5 passes the threshold mid-way. */
const longTask: Script = (request) => {
  if (isSummaryRequest(request))
    return { content: `summary of ${request.messages[1]!.content!.toString().split('[tool').length - 1} tool results` };
  const steps = request.messages.filter((message) => message.role === 'tool').length;
  const usage = { prompt_tokens: 500 * request.messages.length, completion_tokens: 20 };
  const all = request.messages.map((message) => String(message.content ?? '')).join('\n');
  const done = (all.match(/step-\d+/g) ?? []).length + (all.includes(SUMMARY_MARKER) ? 100 : 0);
  if (steps === 0)
    return {
      tool_calls: [
        { name: 'todo', arguments: { todos: [{ id: 'all', content: 'run ten steps', status: 'in_progress' }] } },
      ],
      usage,
    };
  if (done < 10 || (done >= 100 && done < 104))
    return { tool_calls: [{ name: 'terminal', arguments: { command: `echo step-${done}` } }], usage };
  return { content: 'done', usage } satisfies ScriptedResponse;
};

test('usage past the threshold compresses the middle, the rollout carries on and finishes, and every request rebuilds from the record', async (t) => {
  const { server, sandbox, model, tools, messages } = await setup(t, longTask);
  const events: AgentEvent[] = [];
  const result = await runAgent({
    model,
    tools,
    messages,
    sandbox,
    maxTurns: 30,
    onEvent: (event) => events.push(event),
    context: { contextLength: 10_000, threshold: 0.5, keepLastTurns: 2, summarize: modelSummarizer(model) },
  });
  assert.equal(result.finishReason, 'stop');
  assert.ok(result.compressions && result.compressions.length >= 1, 'at least one compression');
  const first = result.compressions[0]!;
  assert.equal(first.trigger, 'threshold');
  assert.equal(first.replaced_start, 2, 'the system prompt and the first user message are kept');
  assert.ok(first.tokens_before > 5000 && first.tokens_after < first.tokens_before, JSON.stringify(first));
  assert.match(first.summary, /^summary of \d+ tool results$/);
  assert.match(first.todo ?? '', /\[in_progress\] all: run ten steps/, 'the todo list is re-injected');
  assert.equal(events.filter((event) => event.type === 'compression').length, result.compressions.length);
  // The transcript is whole: every tool call keeps its result, nothing was rewritten.
  assert.equal(result.messages.filter((message) => message.role === 'tool').length, result.toolCalls.length);
  assert.ok(!result.messages.some((message) => String(message.content).includes(SUMMARY_MARKER)));

  const record = validateRecord(
    buildRecord({
      key: 'k',
      sample: 0,
      result,
      tools: tools.map(toolSpec),
      toolsets: ['terminal', 'todo'],
      model: 'scripted',
      source: { dataset: 'd', row: 0, fields: {} },
    }),
  );
  assert.deepEqual(record.compressions, result.compressions);
  const received = server.requests.filter((request) => !isSummaryRequest(request));
  const rebuilt = rebuildRequests(record);
  assert.equal(rebuilt.length, received.length);
  rebuilt.forEach((request, index) => {
    assert.deepEqual(received[index]!.messages, toWireMessages(request), `request ${index + 1}`);
    assert.deepEqual(received[index]!.tools, record.tools);
  });
  // A compressed request starts with the kept head, then the marked summary, never with a tool result.
  const compressed = received.find((request) => String(request.messages[2]?.content).startsWith(SUMMARY_MARKER))!;
  assert.ok(compressed, 'some request carried the summary');
  assert.notEqual(compressed.messages[3]!.role, 'tool');
  assert.ok(compressed.messages.length < received.at(-1)!.messages.length + 100);
  assert.equal(server.requests.filter(isSummaryRequest).length, result.compressions.length);
});

test('without a summariser nothing is compressed: the requests are the transcript', async (t) => {
  const { server, sandbox, model, tools, messages } = await setup(t, longTask);
  const result = await runAgent({
    model,
    tools,
    messages,
    sandbox,
    maxTurns: 30,
    context: { contextLength: 10_000, threshold: 0.5 },
  });
  assert.equal(result.finishReason, 'stop');
  assert.deepEqual(result.compressions, []);
  assert.deepEqual(server.requests.at(-1)!.messages, toWireMessages(result.messages.slice(0, -1)));
});

for (const file of readdirSync(FIXTURES).filter((name) => name.endsWith('.json'))) {
  const fixture = JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as {
    server: string;
    status: number;
    body: Record<string, unknown>;
  };

  test(`${fixture.server}'s overflow 400 ends the rollout with context_length, without a retry`, async (t) => {
    const { server, sandbox, model, tools, messages } = await setup(t, () => ({
      fault: 'http',
      status: fixture.status,
      body: fixture.body,
    }));
    const result = await runAgent({
      model,
      tools,
      messages,
      sandbox,
      maxTurns: 5,
      context: { contextLength: 10_000, summarize: modelSummarizer(model) },
    });
    assert.equal(result.finishReason, 'context_length', JSON.stringify(result.error));
    assert.equal(server.requestCount(), 1, 'one request: a 400 is not retried and there is nothing to compress');
    // The server's own words survive whatever the body's shape (vLLM's is flat, see model/error-body.ts).
    const body = fixture.body as { error?: { message?: string }; message?: string };
    const serverWords = body.error?.message ?? body.message!;
    assert.ok(result.error?.message.includes(serverWords), `${result.error?.message} keeps: ${serverWords}`);
    assert.equal(result.error?.code, 'context_overflow', 'the client files it under the code the run pipeline knows');
    const record = buildRecord({
      key: 'k',
      sample: 0,
      result,
      tools: [],
      toolsets: [],
      model: 'scripted',
      source: { dataset: 'd', row: 0, fields: {} },
    });
    assert.equal(record.completed, false);
    assert.equal(record.finish_reason, 'context_length');
  });
}

test('an overflow mid-rollout is compressed and sent again; a second overflow with nothing left ends it', async (t) => {
  let overflowed = 0;
  const script: Script = (request) => {
    if (isSummaryRequest(request)) return { content: 'what happened so far' };
    const tools = request.messages.filter((message) => message.role === 'tool').length;
    const compressed = String(request.messages[2]?.content).startsWith(SUMMARY_MARKER);
    if (tools === 4 && !compressed) {
      overflowed++;
      return { fault: 'http', status: 400, body: JSON.parse(readFileSync(join(FIXTURES, 'vllm.json'), 'utf8')).body };
    }
    if (tools < 6) return { tool_calls: [{ name: 'terminal', arguments: { command: `echo ${tools}` } }] };
    return { content: 'finished' };
  };
  const { server, sandbox, model, tools, messages } = await setup(t, script);
  const result = await runAgent({
    model,
    tools,
    messages,
    sandbox,
    maxTurns: 10,
    context: { contextLength: 1_000_000, keepLastTurns: 1, summarize: modelSummarizer(model) },
  });
  assert.equal(result.finishReason, 'stop');
  assert.equal(overflowed, 1);
  assert.equal(result.compressions?.length, 1);
  assert.equal(result.compressions![0]!.trigger, 'overflow');
  const record = buildRecord({
    key: 'k',
    sample: 0,
    result,
    tools: tools.map(toolSpec),
    toolsets: [],
    model: 'scripted',
    source: { dataset: 'd', row: 0, fields: {} },
  });
  const answered = server.requests.filter(
    (request) =>
      !isSummaryRequest(request) &&
      !(
        request.messages.filter((m) => m.role === 'tool').length === 4 &&
        !String(request.messages[2]?.content).startsWith(SUMMARY_MARKER)
      ),
  );
  assert.deepEqual(
    rebuildRequests(record).map(toWireMessages),
    answered.map((request) => request.messages),
  );
});

test('overflow recognition: the four servers, and what is not an overflow', () => {
  for (const file of readdirSync(FIXTURES)) {
    const { status, body } = JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as {
      status: number;
      body: { error?: { message: string }; message?: string };
    };
    assert.ok(isContextOverflow({ status, message: body.error?.message ?? body.message! }), file);
  }
  assert.ok(!isContextOverflow({ status: 400, message: 'Invalid value for tool_choice' }));
  assert.ok(
    !isContextOverflow({ status: 500, message: "This model's maximum context length is 4096 tokens" }),
    'a 5xx is an infrastructure fault',
  );
  assert.ok(isContextOverflow({ status: 400, message: 'x', code: 'context_overflow' }));
});

test('the model client and the agent loop agree on what an overflow is', () => {
  const where = { baseURL: 'http://127.0.0.1:1/v1', model: 'm' };
  const cases: { status: number; message: string }[] = [
    ...readdirSync(FIXTURES).map((file) => {
      const { status, body } = JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as {
        status: number;
        body: { error?: { message: string }; message?: string };
      };
      return { status, message: body.error?.message ?? body.message! };
    }),
    { status: 400, message: 'Invalid value for tool_choice' },
    { status: 413, message: 'prompt is too long: 210000 tokens > 200000 maximum' },
    { status: 400, message: "Unsupported parameter: 'top_k'" },
  ];
  for (const failure of cases) {
    const error = modelErrorFor({ kind: 'fatal', ...failure, cause: undefined }, 1, where);
    assert.equal(error.code === 'context_overflow', isContextOverflow(failure), failure.message);
  }
});

test('a compression plan never starts the kept tail with a tool result', () => {
  const call = (id: string): Message => ({
    role: 'assistant',
    content: null,
    tool_calls: [{ id, type: 'function', function: { name: 't', arguments: '{}' } }],
  });
  const result = (id: string): Message => ({ role: 'tool', tool_call_id: id, content: 'r' });
  const transcript: Message[] = [
    { role: 'system', content: 's' },
    { role: 'user', content: 'u' },
    call('a'),
    result('a'),
    call('b'),
    result('b'),
    call('c'),
    result('c'),
  ];
  for (const keep of [1, 2, 3]) {
    const plan = planCompression(transcript, keep, undefined);
    if (!plan) continue;
    assert.equal(plan.start, 2);
    assert.notEqual(transcript[plan.end]!.role, 'tool');
  }
  assert.deepEqual(planCompression(transcript, 2, undefined), { start: 2, end: 4 });
  assert.equal(planCompression(transcript.slice(0, 4), 1, undefined), undefined, 'one turn: nothing to compress');
});
