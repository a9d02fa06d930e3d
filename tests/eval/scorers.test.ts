import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EndpointSchema } from '../../src/config/endpoint.js';
import { defineEnvironment } from '../../src/eval/environment.js';
import { JudgeSettingsSchema, memoryJudgeCache } from '../../src/eval/judge.js';
import { scoreRollout, type RewardResult } from '../../src/eval/score.js';
import {
  buildScorers,
  reduceScores,
  ScorerConfigSchema,
  scoreWithScorers,
  tokenF1,
  type Reducer,
} from '../../src/eval/scorers/index.js';
import { createSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/sandbox.js';
import { reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { answeredResult } from '../helpers/agent-result.js';

const ITEM = { id: 'q1', city: 'Paris', number: '1,234', order: { id: 'A-17' } };

interface GradeOptions {
  sandbox?: Sandbox;
  judgeUrl?: string;
  reducer?: Reducer;
  item?: Record<string, unknown>;
}

/** Grade `answer` with the scorers through the real reward path (scoreRollout, its judge and sandbox). */
async function grade(configs: unknown[], answer: string, options: GradeOptions = {}): Promise<RewardResult> {
  const scorers = buildScorers(
    configs.map((config) => ScorerConfigSchema.parse(config)),
    'scorers',
  );
  const environment = defineEnvironment<unknown>({
    name: 'scorer-test',
    version: '1',
    items: () => [],
    prompt: () => 'q',
    reward: (item, result, context) => scoreWithScorers(scorers, options.reducer ?? 'mean', item, result, context),
  });
  const judges = options.judgeUrl
    ? JudgeSettingsSchema.parse({
        endpoints: [EndpointSchema.parse({ base_url: options.judgeUrl, model: 'judge', max_retries: 0 })],
        rubric: 'unused',
      })
    : undefined;
  return scoreRollout({
    environment,
    item: options.item ?? ITEM,
    result: answeredResult({ question: 'What is the capital of France?', answer }),
    sandbox: options.sandbox ?? ({} as Sandbox),
    judges,
    cache: memoryJudgeCache(),
  });
}

async function score(config: unknown, answer: string, options: GradeOptions = {}): Promise<number | null> {
  const result = await grade([config], answer, options);
  assert.equal(result.reward_error, null, result.reward_error ?? '');
  return result.reward;
}

test('exact: the answer (or its last line) equals the expected text; a near miss fails', async () => {
  const config = { type: 'exact', expected: '{{city}}' };
  assert.equal(await score(config, '  paris. '), 1);
  assert.equal(await score(config, 'Paris, France'), 0);
  assert.equal(await score(config, 'Pariss'), 0);
  assert.equal(await score({ ...config, case_sensitive: true }, 'paris'), 0);
  assert.equal(await score({ ...config, last_line: true }, 'Thinking...\nParis'), 1);
  assert.equal(await score(config, 'Thinking...\nParis'), 0);
});

test('includes: every expected text (or any with any: true) occurs in the answer; one missing fails', async () => {
  assert.equal(await score({ type: 'includes', expected: '{{city}}' }, 'It is PARIS, of course.'), 1);
  assert.equal(await score({ type: 'includes', expected: '{{city}}' }, 'It is Pari.'), 0);
  assert.equal(await score({ type: 'includes', expected: ['Paris', 'Seine'] }, 'Paris lies on the Loire.'), 0);
  assert.equal(await score({ type: 'includes', expected: ['Paris', 'Seine'], any: true }, 'Paris, Loire'), 1);
  assert.equal(await score({ type: 'includes', expected: 'paris', case_sensitive: true }, 'Paris'), 0);
});

test('regex: a match passes; with expected, the last match capture must equal it; an off-by-one capture fails', async () => {
  assert.equal(await score({ type: 'regex', pattern: 'order [A-Z]-\\d+' }, 'I refunded order A-17.'), 1);
  assert.equal(await score({ type: 'regex', pattern: 'order [A-Z]-\\d+' }, 'I refunded order 17.'), 0);
  const capture = { type: 'regex', pattern: 'ANSWER: (\\S+)', expected: '{{order.id}}' };
  assert.equal(await score(capture, 'ANSWER: A-1\nANSWER: A-17'), 1);
  assert.equal(await score(capture, 'ANSWER: A-17\nANSWER: A-171'), 0);
  assert.equal(await score({ ...capture, flags: 'i' }, 'answer: A-17'), 1);
  assert.throws(
    () => buildScorers([ScorerConfigSchema.parse({ type: 'regex', pattern: '(' })], 'scorers'),
    /scorers\.0\.pattern: not a valid regular expression/,
  );
});

test('numeric: the final number within the tolerance passes; just outside it fails', async () => {
  const config = { type: 'numeric', expected: '{{number}}' };
  assert.equal(await score(config, 'So the total is $1,234.00'), 1);
  assert.equal(await score(config, '#### 1234\n(after 3 steps)'), 1);
  assert.equal(await score(config, '#### 1235'), 0);
  assert.equal(await score(config, 'no idea'), 0);
  assert.equal(await score({ ...config, tolerance: 1 }, '#### 1235'), 1);
  assert.equal(await score({ ...config, tolerance: 1 }, '#### 1235.01'), 0);
  assert.equal(await score({ type: 'numeric', expected: 100, tolerance: 0.05, relative: true }, 'about 105'), 1);
  assert.equal(await score({ type: 'numeric', expected: 100, tolerance: 0.05, relative: true }, 'about 105.5'), 0);
});

test('json_schema: JSON satisfying the schema passes (bare or fenced); one wrong type or a missing key fails', async () => {
  const config = {
    type: 'json_schema',
    schema: {
      type: 'object',
      properties: { city: { type: 'string' }, population: { type: 'integer', minimum: 0 } },
      required: ['city', 'population'],
      additionalProperties: false,
    },
  };
  assert.equal(await score(config, '{"city": "Paris", "population": 2100000}'), 1);
  assert.equal(await score(config, 'Here:\n```json\n{"city": "Paris", "population": 2100000}\n```'), 1);
  assert.equal(await score(config, '{"city": "Paris", "population": 2100000.5}'), 0);
  assert.equal(await score(config, '{"city": "Paris"}'), 0);
  assert.equal(await score(config, '{"city": "Paris", "population": 1, "mayor": "x"}'), 0);
  const result = await grade([config], 'Paris has about two million people.');
  const details = result.reward_details as { scorers: { json_schema: { problems: string[] } } };
  assert.deepEqual(details.scorers.json_schema.problems, ['no JSON found in the answer']);
});

test('f1: token overlap with the reference; an exact answer is 1, a near miss is between 0 and 1', async () => {
  assert.equal(tokenF1('The Eiffel Tower!', 'eiffel tower'), 1);
  const config = { type: 'f1', expected: 'the Eiffel Tower in Paris' };
  assert.equal(await score(config, 'Eiffel Tower, in Paris.'), 1);
  const near = await score(config, 'the Eiffel Tower');
  assert.ok(near !== null && near > 0.5 && near < 1, String(near));
  assert.equal(near, Math.round(((2 * 1 * (2 / 4)) / (1 + 2 / 4)) * 1e6) / 1e6);
  assert.equal(await score(config, 'Big Ben'), 0);
  assert.equal(await score({ type: 'f1', expected: ['Big Ben', 'Eiffel Tower'] }, 'Eiffel Tower'), 1);
});

test('judge: the rubric goes to the run judge N times; the majority decides and each grading is cached apart', async (t) => {
  const grades = [true, false, true];
  const server = await startScriptedServer((request: ChatRequest, context) => {
    const pass = grades[context.index % grades.length]!;
    const text = String(request.messages.at(-1)?.content);
    assert.match(text, /<RUBRIC>\nNames the capital correctly\.\n<\/RUBRIC>/);
    assert.match(text, /<REFERENCE_ANSWER>\nParis\n/);
    return reply(JSON.stringify({ reasoning: pass ? 'right' : 'wrong', score: pass ? 10 : 0, pass }));
  });
  t.after(() => server.close());
  const config = { type: 'judge', rubric: 'Names the capital correctly.', reference: '{{city}}', samples: 3 };
  assert.equal(await score(config, 'Paris', { judgeUrl: server.url }), 1);
  assert.equal(server.requestCount(), 3, 'three gradings, none served from one another');
  const mean = await grade([{ ...config, score: 'mean' }], 'Paris?', { judgeUrl: server.url });
  assert.equal(mean.reward, 2 / 3);
  // A near miss: a 1-of-3 majority fails.
  grades.splice(0, 3, false, true, false);
  assert.equal(await score(config, 'Lyon', { judgeUrl: server.url }), 0);
  // The whole conversation can be graded instead of the final answer.
  const before = server.requests.length;
  await grade([{ ...config, samples: 1, response: 'conversation' }], 'Paris', { judgeUrl: server.url });
  assert.match(
    String(server.requests[before]!.messages.at(-1)?.content),
    /<RESPONSE>\nUSER: What is the capital of France\?\n\nASSISTANT: Paris\n<\/RESPONSE>/,
  );
  // No judge configured: the reward errors, never a silent 0.
  const without = await grade([config], 'Paris');
  assert.equal(without.reward, null);
  assert.match(without.reward_error ?? '', /asks for an LLM judge but the run has none/);
});

test('sandbox: the command runs in the sandbox the agent left; exit code and output decide; a near miss fails', async (t) => {
  const sandbox = await createSandbox({ kind: 'local', local: { isolation: 'none' } });
  t.after(() => sandbox.dispose());
  await sandbox.writeFile('status.txt', 'refunded\n');
  const status = { type: 'sandbox', command: 'cat status.txt', stdout: 'refunded' };
  assert.equal(await score(status, '', { sandbox }), 1);
  assert.equal(await score({ ...status, stdout: 'refunde' }, '', { sandbox }), 0);
  assert.equal(await score({ type: 'sandbox', command: 'test -f status.txt' }, '', { sandbox }), 1);
  assert.equal(await score({ type: 'sandbox', command: 'test -f missing.txt' }, '', { sandbox }), 0);
  assert.equal(
    await score({ type: 'sandbox', command: 'grep -q {{order.id}} status.txt', exit_code: 1 }, '', { sandbox }),
    1,
  );
  assert.equal(
    await score({ type: 'sandbox', command: 'cat status.txt', stdout_regex: '^refund' }, '', { sandbox }),
    1,
  );
  assert.equal(await score({ type: 'sandbox', command: 'cat status.txt', stdout_regex: '^fund' }, '', { sandbox }), 0);
  assert.equal(await score({ type: 'sandbox', command: 'echo 0.75', score_from_stdout: true }, '', { sandbox }), 0.75);
  const bad = await grade([{ type: 'sandbox', command: 'echo 7', score_from_stdout: true }], '', { sandbox });
  assert.equal(bad.reward, null);
  assert.match(bad.reward_error ?? '', /not a number in 0\.\.1/);
});

test('reducers: weighted mean, min, all; every grade kept in scores, weight 0 recorded but not counted', async () => {
  const configs = [
    { type: 'includes', name: 'city', expected: 'Paris', weight: 3 },
    { type: 'exact', name: 'short', expected: 'Paris' },
    { type: 'f1', name: 'overlap', expected: 'Paris France', weight: 0 },
  ];
  const mean = await grade(configs, 'It is Paris');
  assert.deepEqual(mean.scores, { city: 1, short: 0, overlap: 0.4 });
  assert.equal(mean.reward, 0.75);
  assert.equal((await grade(configs, 'It is Paris', { reducer: 'min' })).reward, 0);
  assert.equal((await grade(configs, 'It is Paris', { reducer: 'all' })).reward, 0);
  assert.equal((await grade(configs, 'Paris', { reducer: 'all' })).reward, 1);
  const scorers = buildScorers([ScorerConfigSchema.parse({ type: 'f1', expected: 'x', pass: 0.5 })], 'scorers');
  assert.equal(reduceScores(scorers, { f1: 0.5 }, 'all'), 1);
  assert.equal(reduceScores(scorers, { f1: 0.49 }, 'all'), 0);
});

test('config errors name the place: two scorers of one name, an unknown type, an unknown key', () => {
  assert.throws(
    () =>
      buildScorers(
        [
          ScorerConfigSchema.parse({ type: 'exact', expected: 'a' }),
          ScorerConfigSchema.parse({ type: 'exact', expected: 'b' }),
        ],
        'scorers',
      ),
    /scorers\.1: a second scorer named 'exact'/,
  );
  assert.equal(ScorerConfigSchema.safeParse({ type: 'fuzzy', expected: 'a' }).success, false);
  assert.equal(ScorerConfigSchema.safeParse({ type: 'exact', expected: 'a', tolerance: 1 }).success, false);
});
