import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ModelError } from '../../src/errors.js';
import { createModelClient } from '../../src/model/client.js';
import type { Message } from '../../src/model/messages.js';
import type { ModelDelta, ModelResponse } from '../../src/model/types.js';
import {
  fixtureReplayScript,
  loadProviderFixtures,
  startScriptedServer,
  type ProviderFixture,
  type ScriptedServer,
} from '../../src/testing/index.js';
import { projectRoot } from '../../src/util/paths.js';
import { FAST } from './scripted-endpoint.js';

/**
 * Every provider fixture (tests/fixtures/providers) replayed over real HTTP through the
 * non-streamed and the streamed client paths: content, reasoning, tool calls, finish reason,
 * usage (cached tokens and cost), what is echoed back, and the error text.
 */
const FIXTURES = loadProviderFixtures(join(projectRoot(), 'tests', 'fixtures', 'providers'));
const PROVIDERS = [
  'openai',
  'azure',
  'xai',
  'deepseek',
  'groq',
  'mistral',
  'moonshot',
  'alibaba',
  'glm',
  'openrouter',
  'vllm',
  'llamacpp',
  'ollama',
];

let server: ScriptedServer;
before(async () => {
  server = await startScriptedServer(fixtureReplayScript(FIXTURES));
});
after(() => server.close());

function clientFor(fixture: ProviderFixture, reasoningEcho?: 'auto' | 'always' | 'never') {
  return createModelClient(
    {
      base_url: server.url,
      model: fixture.id,
      max_retries: 0,
      timeout_ms: 10_000,
      ...(reasoningEcho ? { reasoning_echo: reasoningEcho } : {}),
    },
    FAST,
  );
}

const PROMPT: Message[] = [{ role: 'user', content: 'What is the weather?' }];

test('the fixtures cover every provider, each marked recorded or documented, each replayable both ways', () => {
  assert.deepEqual(
    PROVIDERS.filter((provider) => !FIXTURES.some((fixture) => fixture.provider === provider)),
    [],
  );
  for (const fixture of FIXTURES) {
    const origins =
      typeof fixture.origin === 'string' ? [fixture.origin] : [fixture.origin.body, fixture.origin.chunks];
    assert.ok(
      origins.every((origin) => origin === 'recorded' || origin === 'documented'),
      fixture.id,
    );
    assert.ok(fixture.stream !== undefined || fixture.status >= 400, `${fixture.id}: a 200 fixture needs its .chunks`);
  }
  assert.ok(
    FIXTURES.filter((fixture) => JSON.stringify(fixture.origin).includes('recorded')).length >= 5,
    'several public recordings',
  );
  for (const kind of ['reasoning', 'tool_calls', 'error', 'usage'] as const) {
    assert.ok(
      FIXTURES.some((fixture) => fixture.expect[kind] !== undefined),
      `some fixture has ${kind}`,
    );
  }
  assert.ok(
    FIXTURES.some((fixture) => (fixture.expect.tool_calls?.length ?? 0) > 1),
    'parallel calls',
  );
});

for (const fixture of FIXTURES) {
  for (const stream of [false, true]) {
    test(`${fixture.id} (${typeof fixture.origin === 'string' ? fixture.origin : `body ${fixture.origin.body}, chunks ${fixture.origin.chunks}`}), ${stream ? 'streamed' : 'not streamed'}`, async () => {
      const deltas: ModelDelta[] = [];
      const request = { messages: PROMPT, ...(stream ? { onDelta: (delta: ModelDelta) => deltas.push(delta) } : {}) };
      const { expect } = fixture;
      if (expect.error) {
        await assert.rejects(clientFor(fixture).complete(request), (error: unknown) => {
          assert.ok(error instanceof ModelError, `a ModelError, got ${String(error)}`);
          assert.ok(
            error.message.includes(expect.error!.contains),
            `the server's words reach the user: ${error.message}`,
          );
          assert.equal(error.retryable, expect.error!.retryable);
          assert.doesNotMatch(error.message, /status code \(no body\)|<html|\[object Object\]/);
          return true;
        });
        return;
      }
      const response = await clientFor(fixture).complete(request);
      assertExpected(fixture, response);
      if (stream) assertDeltas(fixture, deltas);
    });
  }
}

function assertExpected(fixture: ProviderFixture, response: ModelResponse): void {
  const { expect } = fixture;
  const message = response.message;
  if (expect.content !== undefined) assert.equal(message.content, expect.content, 'content');
  assert.equal(message.reasoning, expect.reasoning, 'reasoning');
  assert.equal(response.finishReason, expect.finish_reason, 'finish reason, as sent');
  const calls = (message.tool_calls ?? []).map((call) => ({
    id: call.id,
    name: call.function.name,
    arguments: JSON.parse(call.function.arguments) as unknown,
  }));
  assert.deepEqual(
    calls,
    (expect.tool_calls ?? []).map((call) => ({ id: call.id, name: call.name, arguments: call.arguments })),
    'tool calls',
  );
  if (expect.usage) {
    // No pricing: is here, so a call without a provider cost is unknown and names its model.
    const known = expect.usage.cost !== null && expect.usage.cost !== undefined;
    assert.deepEqual(
      response.usage,
      { ...expect.usage, cost_source: known ? 'provider' : 'unknown', unpriced_models: known ? [] : [fixture.id] },
      'usage',
    );
  }
  if (expect.reasoning_details !== undefined)
    assert.equal(message.reasoning_details?.length, expect.reasoning_details, 'reasoning_details kept');
  if (expect.signatures)
    assert.deepEqual(
      message.reasoning_details?.map((detail) => detail.signature),
      expect.signatures,
      'signatures kept whole',
    );
  if (expect.echo) assert.deepEqual(Object.keys(message.echo ?? {}), expect.echo, 'what goes back on the next request');
  assert.deepEqual(message.images ?? [], expect.images ?? [], 'images');
}

/** Deltas carry the text as it arrives: reasoning fields and parts as reasoning, the rest as content. */
function assertDeltas(fixture: ProviderFixture, deltas: ModelDelta[]): void {
  const text = (type: 'content' | 'reasoning') =>
    deltas
      .filter((delta) => delta.type === type)
      .map((delta) => (delta as { text: string }).text)
      .join('');
  const inlineTags = fixture.stream!.includes('<think>');
  if (fixture.expect.reasoning && !inlineTags)
    assert.equal(text('reasoning').trim(), fixture.expect.reasoning, 'reasoning deltas');
  if (fixture.expect.content && !fixture.stream!.includes('"refusal":"I'))
    assert.ok(text('content').includes(fixture.expect.content), 'content deltas');
  const calls = new Set(
    deltas.filter((delta) => delta.type === 'tool_call').map((delta) => (delta as { index: number }).index),
  );
  assert.equal(calls.size, fixture.expect.tool_calls?.length ?? 0, 'tool-call deltas name each call apart');
}

test('the next request carries exactly the echo the messages view shows, and nothing traj keeps locally', async () => {
  for (const fixture of FIXTURES.filter((entry) => entry.expect.tool_calls?.length && !entry.expect.error)) {
    const client = clientFor(fixture);
    const first = await client.complete({ messages: PROMPT });
    const tools: Message[] = first.message.tool_calls!.map((call) => ({
      role: 'tool',
      tool_call_id: call.id,
      content: '{"temperature": 21}',
    }));
    const before = server.requests.length;
    const second = await client.complete({ messages: [...PROMPT, first.message, ...tools] });
    assert.equal(second.message.content, `done after ${fixture.id}`);
    const sent = server.requests[before]!.messages[1]!;
    const { role, content, tool_calls, ...rest } = sent;
    assert.equal(role, 'assistant');
    const expected = { content: first.message.content, ...first.message.echo };
    // Anthropic-named models get prompt-cache breakpoints (endpoint.prompt_caching auto): the text is the same.
    const marked =
      Array.isArray(content) &&
      content.length === 1 &&
      (content[0] as { cache_control?: unknown }).cache_control !== undefined;
    assert.equal(
      marked,
      marked && /anthropic|claude/i.test(fixture.id),
      `${fixture.id}: cache marks only for Anthropic models`,
    );
    const unmarked = marked ? (content as { text: string }[])[0]!.text : content;
    assert.deepEqual(
      { content: unmarked, ...rest },
      expected,
      `${fixture.id}: the wire message is the record's content plus its echo`,
    );
    assert.deepEqual(tool_calls, first.message.tool_calls);
  }
});

test("reasoning_echo never sends nothing back; always sends every turn's reasoning in the form it came", async () => {
  const byId = (id: string) => FIXTURES.find((fixture) => fixture.id === id)!;
  const openrouter = await clientFor(byId('openrouter/anthropic-reasoning-details'), 'never').complete({
    messages: PROMPT,
  });
  assert.equal(openrouter.message.echo, undefined);
  assert.equal(openrouter.message.reasoning_details?.length, 1, 'kept in the record even when not sent back');
  const groq = await clientFor(byId('groq/reasoning-parsed'), 'always').complete({ messages: PROMPT });
  assert.deepEqual(groq.message.echo, { reasoning: byId('groq/reasoning-parsed').expect.reasoning });
  const tags = await clientFor(byId('llamacpp/think-tags-timings'), 'always').complete({ messages: PROMPT });
  assert.deepEqual(tags.message.echo, { content: '<think>\nThe user greets me.\n</think>\nHello there!' });
  const mistral = await clientFor(byId('mistral/magistral-thinking'), 'always').complete({ messages: PROMPT });
  assert.equal(((mistral.message.echo?.content ?? []) as unknown[]).length, 2, 'the parts as they came');
});
