import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadEnvironment, resolveEnvironmentModule } from '../../src/eval/load-environment.js';
import { keyedItems, type KeyedEnvironmentItem } from '../../src/run/environment-entries.js';
import { executeRollout } from '../../src/run/rollout.js';
import { createThreadServices } from '../../src/run/worker-services.js';
import { reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { sha256 } from '../../src/util/hash.js';
import { sharedDir } from '../../src/util/paths.js';
import { scriptedRolloutSettings } from '../helpers/rollout-settings.js';

const DEV = join(sharedDir(), 'datasets', 'gsm8k', 'test-dev.jsonl');

/** Answers written the ways models write them: right and wrong, in every format the reward must read. */
function answerFor(final: string, variant: number): string {
  const value = Number(final.replace(/,/g, ''));
  switch (variant) {
    case 0:
      return `Step by step...\n#### ${final}`;
    case 1:
      return `So she makes $${value.toLocaleString('en-US')}. The answer is $${value.toLocaleString('en-US')}.`;
    case 2:
      return `Therefore \\boxed{${value}}`;
    case 3:
      return `#### ${value + 1}`;
    case 4:
      return 'I cannot solve this one.';
    case 5:
      return `#### ${value}.0\n(checked twice, in 3 steps)`;
    case 6:
      return `First 12 apples, then ${value} in total, and 7 left over.`;
    default:
      return `The answer is ${value - 0.5}`;
  }
}

/** One policy for both environments: the answer depends only on the question, so both runs see the same text. */
function policy(finals: Map<string, string>) {
  return (request: ChatRequest) => {
    const prompt = String(request.messages.find((message) => message.role === 'user')?.content ?? '');
    const question = prompt.split('\n\nSolve the problem')[0]!.trim();
    const final = finals.get(question);
    if (final === undefined) return reply('unknown question');
    return reply(answerFor(final, Number.parseInt(sha256(question).slice(0, 8), 16) % 8));
  };
}

async function rewards(modulePath: string, url: string): Promise<Map<string, number | null>> {
  const environment = await loadEnvironment(modulePath);
  const items: KeyedEnvironmentItem[] = [];
  for await (const keyed of keyedItems(environment, {})) items.push(keyed);
  const services = createThreadServices();
  const settings = scriptedRolloutSettings(url, 'yaml-gsm8k', { environmentModule: modulePath, maxTurns: 2 });
  try {
    const outcomes = await Promise.all(
      items.map((keyed) =>
        executeRollout(
          { key: keyed.key, sample: 0, toolsets: [], messages: keyed.messages, item: keyed.item, settings },
          services,
          new AbortController().signal,
        ),
      ),
    );
    for (const outcome of outcomes) assert.equal(outcome.reward?.reward_error, null, outcome.key);
    return new Map(outcomes.map((outcome) => [outcome.key, outcome.reward?.reward ?? null]));
  } finally {
    await services.close();
  }
}

test('the YAML GSM8K environment gives the same reward as the JS one on each of the 300 dev problems', async (t) => {
  if (!existsSync(DEV)) return t.skip(`skipped: ${DEV} is absent (../shared beside the checkout)`);
  const rows = readFileSync(DEV, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { question: string; final: string });
  const finals = new Map(rows.map((row) => [row.question.trim(), String(row.final)]));
  const server = await startScriptedServer(policy(finals), { record: false });
  t.after(() => server.close());

  const javascript = await rewards(resolveEnvironmentModule('gsm8k'), server.url);
  const declarative = await rewards(resolveEnvironmentModule('gsm8k-yaml'), server.url);
  assert.equal(javascript.size, 300);
  assert.deepEqual([...declarative.keys()], [...javascript.keys()]);
  const differing = [...javascript].filter(([key, reward]) => declarative.get(key) !== reward);
  assert.deepEqual(differing, []);
  // Not a trivial agreement: the formats right and wrong both occur, in the proportions the variants make.
  const passed = [...javascript.values()].filter((reward) => reward === 1).length;
  const failed = [...javascript.values()].filter((reward) => reward === 0).length;
  assert.equal(passed + failed, 300);
  assert.ok(passed > 100 && failed > 80, `passed ${passed}, failed ${failed}`);
});
