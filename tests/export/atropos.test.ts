import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { exportRun, type AtroposGroupLine } from '../../src/export/index.js';
import { temporaryDirectory } from '../helpers/cli.js';
import { buildStore, type RolloutShape } from './store-fixture.js';

/** Samples of two items, interleaved in the store the way concurrent rollouts land. */
const GROUPED: RolloutShape[] = [
  { key: 'item-a', sample: 0, group: 'item-a', reward: 1, advantage: 1.2, toolCall: true },
  { key: 'item-b', sample: 0, group: 'item-b', reward: 0.5, advantage: 0 },
  { key: 'item-a', sample: 1, group: 'item-a', reward: 0, advantage: -1.2 },
  { key: 'item-b', sample: 1, group: 'item-b', reward: 0.5, advantage: 0, reasoning: true },
  { key: 'item-a', sample: 2, group: 'item-a', rewardError: 'reward hook timed out' },
  { key: 'item-c', sample: 0, group: 'item-c' },
  { key: 'item-d', sample: 0, group: 'item-d', reward: 1, status: 'discarded' },
];

function lines(path: string): AtroposGroupLine[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AtroposGroupLine);
}

test('atropos: one ScoredDataGroup line per group, rollouts without a reward left out and counted', async (t) => {
  const directory = temporaryDirectory(t);
  const storePath = buildStore(directory, 'groups', GROUPED);
  const out = join(directory, 'out');
  const result = await exportRun({ storePath, out, format: 'atropos' });
  assert.deepEqual(result.files, ['data/train-00000-of-00001.jsonl', 'README.md', 'statistics.json']);
  assert.equal(result.rows, 2);
  assert.equal(result.left.unscored, 2);
  const groups = lines(join(out, result.files[0]!));
  assert.deepEqual(
    groups.map((group) => [group.group, group.scores, group.traj.ids, group.traj.advantages]),
    [
      ['item-a', [1, 0], ['item-a#0', 'item-a#1'], [1.2, -1.2]],
      ['item-b', [0.5, 0.5], ['item-b#0', 'item-b#1'], [0, 0]],
    ],
  );
  const [first] = groups;
  assert.deepEqual(Object.keys(first!).sort(), [
    'advantages',
    'group',
    'group_overrides',
    'messages',
    'overrides',
    'ref_logprobs',
    'scores',
    'traj',
  ]);
  assert.equal(first!.advantages, null);
  assert.equal('tokens' in first! || 'masks' in first!, false, 'no tokens without a tokenizer');
  assert.equal(first!.messages.length, 2);
  assert.deepEqual(
    first!.messages[0]!.map((message) => message.role),
    ['system', 'user', 'assistant', 'tool', 'assistant'],
  );
  const card = readFileSync(join(out, 'README.md'), 'utf8');
  assert.match(card, /- reinforcement-learning/);
  assert.match(card, /ScoredDataGroup/);
  assert.match(card, /\| rollouts left out without a reward \| 2 \|/);
});

test('atropos refuses what it cannot do: a run without rewards, and --split-by', async (t) => {
  const directory = temporaryDirectory(t);
  const storePath = buildStore(directory, 'unscored', [{ key: 'one' }, { key: 'two', toolCall: true }], 'batch');
  await assert.rejects(
    exportRun({ storePath, out: join(directory, 'out'), format: 'atropos' }),
    /nothing to export from run 'unscored': 2 rollouts have no reward \(atropos needs rewards: export an eval run\)/,
  );
  await assert.rejects(
    exportRun({ storePath, out: join(directory, 'out'), format: 'atropos', splitBy: 'status' }),
    /--split-by does not apply to --format atropos/,
  );
});
