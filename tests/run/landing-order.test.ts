import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { SerializedError } from '../../src/errors.js';
import { runPipeline, type PipelineOptions } from '../../src/run/pipeline.js';
import type { PipelineEntry } from '../../src/run/work-item.js';
import type { RolloutOutcome, RolloutTask } from '../../src/run/rollout.js';
import { RunStore } from '../../src/run/store.js';
import { answeredResult } from '../helpers/agent-result.js';
import { temporaryDirectory } from '../helpers/cli.js';
import { scriptedRolloutSettings } from '../helpers/rollout-settings.js';

async function* prompts(count: number): AsyncGenerator<PipelineEntry> {
  for (let index = 0; index < count; index++) {
    yield {
      key: `k${index}`,
      sample: 0,
      rowIndex: index,
      group: null,
      task: { toolsets: [], messages: [{ role: 'user', content: `question ${index}` }] },
      source: { dataset: 'prompts.jsonl', row: index + 1, fields: {} },
    };
  }
}

const SANDBOX_FAULT: SerializedError = {
  name: 'SandboxError',
  code: 'sandbox_start_failed',
  message: 'the sandbox did not start',
  retryable: true,
};

/**
 * Three prompts, one in flight, each rollout answered at once with `outcome(key)`: the order in
 * which the pipeline dispatched them and landed their results.
 */
async function landingOrder(
  t: TestContext,
  outcome: (task: RolloutTask) => Partial<RolloutOutcome>,
  extra: Partial<PipelineOptions> = {},
): Promise<string[]> {
  const store = RunStore.open(join(temporaryDirectory(t), 'run.sqlite'));
  t.after(() => store.close());
  const order: string[] = [];
  await runPipeline({
    store,
    runner: {
      run: async (task) => ({
        key: task.key,
        sample: task.sample,
        result: answeredResult(),
        tools: [],
        interrupted: false,
        ...outcome(task),
      }),
      interrupt: () => {},
    },
    settings: scriptedRolloutSettings('http://127.0.0.1:9/v1', 'order'),
    entries: prompts(3),
    concurrency: 1,
    maxAttempts: 3,
    breakerThreshold: 100,
    onEvent: (event) => {
      if (event.type === 'dispatched') order.push(`dispatch ${event.key}`);
      if (event.type === 'finished') order.push(`land ${event.key} ${event.status}`);
    },
    ...extra,
  });
  return order;
}

test('a clean result frees its slot first: the next rollout is dispatched before the result lands', async (t) => {
  const order = await landingOrder(t, () => ({}));
  for (const [next, landed] of [
    ['dispatch k1', 'land k0 done'],
    ['dispatch k2', 'land k1 done'],
  ] as const)
    assert.ok(order.indexOf(next) < order.indexOf(landed), `${next} before ${landed}: ${order.join(', ')}`);
  assert.deepEqual(order.filter((step) => step.startsWith('land')).sort(), [
    'land k0 done',
    'land k1 done',
    'land k2 done',
  ]);
});

test('a failed rollout lands before the next dispatch, so a run-level stop is decided first', async (t) => {
  const order = await landingOrder(t, () => ({ error: SANDBOX_FAULT }));
  assert.deepEqual(order, [
    'dispatch k0',
    'land k0 failed',
    'dispatch k1',
    'land k1 failed',
    'dispatch k2',
    'land k2 failed',
  ]);
});

test('under --max-cost every result lands before the next dispatch, so the limit stops dispatch exactly', async (t) => {
  const order = await landingOrder(t, () => ({ result: answeredResult({ usage: { cost: 1 } }) }), { maxCostUsd: 2 });
  // The second result reaches the limit: the third prompt is never dispatched.
  assert.deepEqual(order, ['dispatch k0', 'land k0 done', 'dispatch k1', 'land k1 done']);
});
