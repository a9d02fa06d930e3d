import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { applyAdvantages } from '../../src/report/advantages.js';
import { defineEnvironment } from '../../src/eval/environment.js';
import { rescoreRun } from '../../src/report/rescore.js';
import { RunStore } from '../../src/run/store.js';
import { buildRecord } from '../../src/trajectory/build-record.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { answeredResult } from '../helpers/agent-result.js';
import { temporaryDirectory } from '../helpers/cli.js';

function storeWithAnswers(directory: string, answers: Record<string, string[]>): RunStore {
  const store = RunStore.open(join(directory, 'rescore.sqlite'));
  store.initRun({ name: 'rescore-run', kind: 'eval', config: {}, fingerprintParts: {} });
  for (const [key, samples] of Object.entries(answers)) {
    samples.forEach((answer, sample) => {
      const record = buildRecord({
        key,
        sample,
        result: answeredResult({
          question: `question ${key}`,
          answer,
          usage: { prompt_tokens: 1, completion_tokens: 1 },
          durationMs: 1,
          modelMs: 1,
        }),
        tools: [],
        toolsets: [],
        model: 'm',
        source: { dataset: 'd', row: 0, fields: {} },
        reward: { reward: 0, scores: {}, reward_details: 'old', reward_error: null },
        group: key,
      });
      store.markDispatched(key, sample, 0, []);
      store.saveResult({ key, sample, status: 'done', record, reward: 0 });
    });
  }
  return store;
}

const records = (store: RunStore) =>
  [...store.items({ status: ['done'] })].map((row) => JSON.parse(row.record!) as TrajectoryRecord);

test('rescoring recomputes rewards from the stored transcript; advantages follow; unknown items are kept as they were', async (t) => {
  const directory = temporaryDirectory(t);
  const store = storeWithAnswers(directory, { a: ['yes', 'no', 'yes'], b: ['no'], gone: ['yes'] });
  t.after(() => store.close());
  const environment = defineEnvironment<{ key: string }>({
    name: 'yes-env',
    version: '2',
    items: () => [{ key: 'a' }, { key: 'b' }],
    id: (item) => item.key,
    prompt: (item) => `question ${item.key}`,
    reward: (item, result) => ({
      score: result.messages.at(-1)?.content === 'yes' ? 1 : 0,
      details: { item: item.key, turns: result.turns },
    }),
  });
  const summary = await rescoreRun({
    store,
    environment,
    items: new Map([
      ['a', { key: 'a' }],
      ['b', { key: 'b' }],
    ]),
    sandbox: { kind: 'local' },
    run: 'rescore-run',
    concurrency: 4,
  });
  assert.deepEqual(summary, { rescored: 4, missingItems: 1, rewardErrors: 0, judgeCacheHits: 0, judgeCalls: 0 });
  assert.equal(applyAdvantages(store), 5, 'every record gets an advantage (a single sample: 0)');
  assert.equal(applyAdvantages(store), 0, 'nothing changes when applied again');
  const byKey = Object.fromEntries(records(store).map((record) => [`${record.id}#${record.sample}`, record]));
  assert.deepEqual(
    ['a#0', 'a#1', 'a#2', 'b#0', 'gone#0'].map((id) => byKey[id]!.reward),
    [1, 0, 1, 0, 0],
  );
  assert.deepEqual(byKey['a#1']!.reward_details, { item: 'a', turns: 1 });
  assert.equal(byKey['gone#0']!.reward_details, 'old');
  const advantages = ['a#0', 'a#1', 'a#2'].map((id) => byKey[id]!.advantage!);
  assert.ok(Math.abs(advantages.reduce((sum, value) => sum + value, 0)) < 1e-9);
  assert.equal(byKey['b#0']!.advantage, 0);
  assert.equal(store.getItem('a', 1)!.reward, 0);
  assert.equal(store.getItem('a', 0)!.reward, 1);
});

test('a transcript rescore of a reward that reads the sandbox says why it cannot', async (t) => {
  const directory = temporaryDirectory(t);
  const store = storeWithAnswers(directory, { a: ['done'] });
  t.after(() => store.close());
  const environment = defineEnvironment<{ key: string }>({
    name: 'files-env',
    version: '1',
    items: () => [{ key: 'a' }],
    prompt: () => 'question a',
    reward: async (_item, _result, context) => ((await context.readFile('out.txt')).toString() === 'ok' ? 1 : 0),
  });
  const summary = await rescoreRun({
    store,
    environment,
    items: new Map([['a', { key: 'a' }]]),
    sandbox: { kind: 'local' },
    run: 'rescore-run',
    concurrency: 1,
  });
  assert.equal(summary.rewardErrors, 1);
  const [record] = records(store);
  assert.equal(record!.reward, null);
  assert.match(
    record!.reward_error!,
    /rescoring has no sandbox: .*environment 'files-env' reads sandbox state, so declare rescore: 'replay'/,
  );
});
