import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { buildRoot, projectRoot } from '../../src/util/paths.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const ITEMS = 200;
const CONCURRENCY = 2;

/**
 * An environment whose items() reads a real JSONL through traj's streaming reader and logs each
 * item it yields; setup() (in the worker thread, before the rollout's agent starts) logs too.
 * One log file, appended by both threads, shows the order in which reading and rollouts happened.
 */
function streamingEnvironment(log: string): string {
  const evalRoom = pathToFileURL(join(buildRoot(), 'src', 'eval', 'index.js')).href;
  return `import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { readItems } from ${JSON.stringify(evalRoom)};
const { z } = createRequire(${JSON.stringify(join(projectRoot(), 'package.json'))})('zod');
const ItemSchema = z.object({ id: z.string(), question: z.string() });
const LOG = ${JSON.stringify(log)};
let pass = 0;
export default {
  name: 'streaming', version: '1',
  async *items(options) {
    const current = ++pass;
    for await (const item of readItems(options.dataset, ItemSchema)) {
      appendFileSync(LOG, 'read ' + current + '\\n');
      yield item;
    }
    appendFileSync(LOG, 'end ' + current + '\\n');
  },
  id: (item) => item.id,
  prompt: (item) => item.question,
  toolsets: [],
  async setup(item) { appendFileSync(LOG, 'setup ' + item.id + '\\n'); },
  reward: () => 0,
};
`;
}

test('eval streams its items: rollouts start before the dataset is read through, and reading stays just ahead of them', async (t) => {
  const directory = temporaryDirectory(t);
  const dataset = join(directory, 'items.jsonl');
  const rows = Array.from({ length: ITEMS }, (_, n) => JSON.stringify({ id: `item-${n}`, question: `Question ${n}?` }));
  writeFileSync(dataset, `${rows.join('\n')}\n`);
  const log = join(directory, 'order.log');
  writeFileSync(log, '');
  const module = join(directory, 'streaming-env.mjs');
  writeFileSync(module, streamingEnvironment(log));

  const args = ['eval', '--env', module, '--dataset', dataset, '--run', 'streaming', '--agent', 'noop'];
  const result = await runCli([...args, '--workers', '1', '--concurrency', String(CONCURRENCY)], { cwd: directory });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, new RegExp(`${ITEMS} items × 1 samples`), 'the start line still counts every item');
  const records = readFileSync(join(directory, 'datasets', 'streaming', 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean);
  assert.equal(records.length, ITEMS);

  const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const firstSetup = lines.findIndex((line) => line.startsWith('setup '));
  assert.ok(firstSetup > 0, 'rollouts ran their setup');
  // The pass that feeds the rollouts is still reading when the first one starts; a survey pass may have ended.
  const before = lines.slice(0, firstSetup);
  const open = [...new Set(before.filter((line) => line.startsWith('read ')))]
    .map((line) => line.slice('read '.length))
    .filter((pass) => !before.includes(`end ${pass}`));
  assert.equal(open.length, 1, `every pass over the items had ended before the first rollout: they were collected`);
  const feeding = open[0]!;
  const readBeforeFirstRollout = before.filter((line) => line === `read ${feeding}`).length;
  assert.ok(
    readBeforeFirstRollout <= CONCURRENCY + 1,
    `the first rollout started after ${readBeforeFirstRollout} of ${ITEMS} items were read`,
  );
  // Backpressure all along: the reader is never more than the in-flight rollouts (plus one) ahead.
  let read = 0;
  let started = 0;
  let furthestAhead = 0;
  for (const line of lines.slice(firstSetup)) {
    if (line === `read ${feeding}`) read++;
    if (line.startsWith('setup ')) started++;
    furthestAhead = Math.max(furthestAhead, read + readBeforeFirstRollout - started);
  }
  assert.equal(read + readBeforeFirstRollout, ITEMS, 'the feeding pass read every item once');
  assert.equal(started, ITEMS);
  assert.ok(furthestAhead <= CONCURRENCY + 1, `the reader ran ${furthestAhead} items ahead of the rollouts`);
});
