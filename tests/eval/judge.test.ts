import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EndpointSchema } from '../../src/config/endpoint.js';
import {
  gradeWithPanel,
  JudgeSettingsSchema,
  judgeCacheKey,
  memoryJudgeCache,
  type JudgeSettingsInput,
} from '../../src/eval/judge.js';
import { extractJsonObject } from '../../src/eval/judge-prompt.js';
import { httpError, reply, startScriptedServer, type ChatRequest, type Script } from '../../src/testing/index.js';
import { ModelError } from '../../src/errors.js';

const REQUEST = {
  rubric: 'Correct capital city.',
  prompt: 'What is the capital of France?',
  response: 'Paris.',
  reference: 'Paris',
  scale: { min: 0, max: 10 },
};

async function judgeServer(t: { after(fn: () => Promise<void>): void }, script: Script) {
  const server = await startScriptedServer(script);
  t.after(() => server.close());
  return server;
}

function settings(urls: string[] | string, models: string[], extra: Partial<JudgeSettingsInput> = {}) {
  const list = Array.isArray(urls) ? urls : models.map(() => urls);
  return JudgeSettingsSchema.parse({
    endpoints: models.map((model, index) => EndpointSchema.parse({ base_url: list[index], model, max_retries: 0 })),
    ...extra,
  });
}

const verdict = (score: number, pass: boolean, reasoning = 'matches the reference') =>
  JSON.stringify({ reasoning, score, pass });

test('structured output: the request carries a strict json_schema response_format built from the verdict schema', async (t) => {
  const server = await judgeServer(t, [reply(verdict(8, true))]);
  const panel = await gradeWithPanel(settings(server.url, ['judge-structured']), REQUEST, memoryJudgeCache());
  assert.equal(server.requestCount(), 1);
  const format = server.requests[0]!.response_format as {
    type: string;
    json_schema: {
      name: string;
      strict: boolean;
      schema: { type: string; properties: Record<string, unknown>; required: string[]; additionalProperties: boolean };
    };
  };
  assert.equal(format.type, 'json_schema');
  assert.equal(format.json_schema.strict, true);
  assert.equal(format.json_schema.name, 'verdict');
  assert.deepEqual(Object.keys(format.json_schema.schema.properties).sort(), ['pass', 'reasoning', 'score']);
  assert.deepEqual([...format.json_schema.schema.required].sort(), ['pass', 'reasoning', 'score']);
  assert.equal(format.json_schema.schema.additionalProperties, false);
  assert.equal(server.requests[0]!.temperature, undefined, 'sampling comes from the endpoint settings only');
  const prompt = server.requests[0]!.messages.map((message) => String(message.content)).join('\n');
  for (const part of [
    '<RUBRIC>\nCorrect capital city.',
    '<TASK>\nWhat is the capital of France?',
    '<REFERENCE_ANSWER>\nParis',
    '<RESPONSE>\nParis.',
  ])
    assert.ok(prompt.includes(part), part);
  assert.equal(panel.score, 0.8);
  assert.equal(panel.pass, true);
  assert.equal(panel.agreement, 1);
  assert.equal(panel.verdicts[0]!.raw, verdict(8, true));
  assert.equal(panel.verdicts[0]!.cached, false);
});

test('text fallback: an endpoint that rejects response_format with HTTP 400 is asked again for JSON in text', async (t) => {
  const script = (request: ChatRequest) =>
    request.response_format
      ? httpError(400, { message: "response_format 'json_schema' is not supported by this model" })
      : reply(`Let me grade.\n\`\`\`json\n${verdict(3, false, 'wrong city')}\n\`\`\`\nDone.`);
  const server = await judgeServer(t, script);
  const judge = settings(server.url, ['judge-text-only']);
  const panel = await gradeWithPanel(judge, REQUEST, memoryJudgeCache());
  assert.equal(server.requestCount(), 2);
  assert.ok(server.requests[0]!.response_format);
  assert.equal(server.requests[1]!.response_format, undefined);
  assert.equal(panel.score, 0.3);
  assert.equal(panel.pass, false);
  assert.equal(panel.verdicts[0]!.reasoning, 'wrong city');
  // The rejection is remembered for this endpoint: the next verdict goes straight to text.
  await gradeWithPanel(judge, { ...REQUEST, response: 'Lyon.' }, memoryJudgeCache());
  assert.equal(server.requestCount(), 3);
  assert.equal(server.requests[2]!.response_format, undefined);
});

test('text mode never sends response_format and reads the last JSON object of the answer', async (t) => {
  const server = await judgeServer(t, [reply(`I considered {"draft": true}. Final: ${verdict(10, true)}`)]);
  const panel = await gradeWithPanel(
    settings(server.url, ['judge-t'], { structured: 'text' }),
    REQUEST,
    memoryJudgeCache(),
  );
  assert.equal(server.requests[0]!.response_format, undefined);
  assert.equal(panel.score, 1);
});

test('invalid then valid: the judge is told what was wrong and asked again (bounded)', async (t) => {
  const server = await judgeServer(t, [
    reply('{"reasoning": "fine", "score": "eight", "pass": true}'),
    reply(verdict(12, true)),
    reply(verdict(9, true)),
  ]);
  const panel = await gradeWithPanel(settings(server.url, ['judge-retry']), REQUEST, memoryJudgeCache());
  assert.equal(server.requestCount(), 3);
  assert.equal(panel.score, 0.9);
  const second = server.requests[1]!.messages;
  assert.equal(second.at(-2)!.role, 'assistant');
  assert.match(String(second.at(-1)!.content), /could not be used: score: .*number/i);
  assert.match(String(server.requests[2]!.messages.at(-1)!.content), /score 12 is outside the scale 0\.\.10/);

  const hopeless = await judgeServer(t, [reply('no idea'), reply('still no idea')]);
  await assert.rejects(
    gradeWithPanel(settings(hopeless.url, ['judge-hopeless'], { maxAttempts: 2 }), REQUEST, memoryJudgeCache()),
    (error: unknown) =>
      error instanceof ModelError &&
      error.code === 'judge_invalid_output' &&
      /no valid verdict in 2 attempts/.test(error.message),
  );
  assert.equal(hopeless.requestCount(), 2);
});

test('three judges: mean score, majority pass, agreement = share agreeing with the majority', async (t) => {
  const scores: Record<string, [number, boolean]> = {
    'judge-a': [9, true],
    'judge-b': [7, true],
    'judge-c': [2, false],
  };
  const server = await judgeServer(t, (request) => {
    const [score, pass] = scores[request.model!]!;
    return reply(verdict(score, pass, `${request.model} says ${pass}`));
  });
  const cache = memoryJudgeCache();
  const judge = settings(server.url, Object.keys(scores));
  const panel = await gradeWithPanel(judge, REQUEST, cache);
  assert.equal(server.requestCount(), 3);
  assert.ok(Math.abs(panel.score - 0.6) < 1e-12);
  assert.equal(panel.pass, true);
  assert.ok(Math.abs(panel.agreement - 2 / 3) < 1e-12);
  assert.deepEqual(
    panel.verdicts.map((entry) => entry.model),
    ['judge-a', 'judge-b', 'judge-c'],
  );
  // Cached: the same grade asked again makes no call; a different response does.
  assert.equal(cache.entries.size, 3);
  assert.ok(cache.entries.has(judgeCacheKey('judge-b', REQUEST)));
  const again = await gradeWithPanel(judge, REQUEST, cache);
  assert.equal(server.requestCount(), 3);
  assert.deepEqual(
    again.verdicts.map((entry) => entry.cached),
    [true, true, true],
  );
  await gradeWithPanel(judge, { ...REQUEST, response: 'Marseille' }, cache);
  assert.equal(server.requestCount(), 6);
});

test('the cache key covers model, rubric, reference, scale, prompt and response', () => {
  const base = judgeCacheKey('m', REQUEST);
  assert.equal(judgeCacheKey('m', { ...REQUEST }), base);
  for (const changed of [
    judgeCacheKey('other', REQUEST),
    judgeCacheKey('m', { ...REQUEST, rubric: 'x' }),
    judgeCacheKey('m', { ...REQUEST, reference: undefined }),
    judgeCacheKey('m', { ...REQUEST, scale: { min: 1, max: 5 } }),
    judgeCacheKey('m', { ...REQUEST, prompt: 'y' }),
    judgeCacheKey('m', { ...REQUEST, response: 'z' }),
  ]) {
    assert.notEqual(changed, base);
  }
});

test('JSON extraction from free text', () => {
  assert.deepEqual(extractJsonObject('Verdict: {"score": 1, "pass": true, "reasoning": "a {nested} brace"} — done'), {
    score: 1,
    pass: true,
    reasoning: 'a {nested} brace',
  });
  assert.deepEqual(extractJsonObject('```json\n{"a": {"b": 2}}\n```'), { a: { b: 2 } });
  assert.equal(extractJsonObject('no json here'), undefined);
  assert.equal(extractJsonObject('[1, 2]'), undefined);
});
