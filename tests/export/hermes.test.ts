import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { exportRun } from '../../src/export/index.js';
import { HERMES_TOOL_NAMES } from '../../src/tools/hermes-tool-names.js';
import { hermesLine, toHermesRecord, type HermesRecord } from '../../src/trajectory/hermes-record.js';
import { RunStore } from '../../src/run/store.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { temporaryDirectory } from '../helpers/cli.js';
import { buildStore } from './store-fixture.js';

test('hermes: one batch-runner line per done rollout, each exactly the converter of its stored record', async (t) => {
  const directory = temporaryDirectory(t);
  const storePath = buildStore(
    directory,
    'hermes',
    [{ key: 'one', toolCall: true, reasoning: true }, { key: 'two' }, { key: 'three', status: 'failed' }],
    'batch',
  );
  const out = join(directory, 'out');
  const result = await exportRun({ storePath, out, format: 'hermes' });
  assert.deepEqual(result.files, ['data/train-00000-of-00001.jsonl', 'README.md', 'statistics.json']);
  const text = readFileSync(join(out, result.files[0]!), 'utf8');
  const lines = text.split('\n').filter(Boolean);
  assert.equal(lines.length, 2, 'done rows only, as the default split');
  const store = RunStore.open(storePath);
  const stored = [...store.items({ status: 'done' })].map((row) => JSON.parse(row.record!) as TrajectoryRecord);
  store.close();
  const knownTools = HERMES_TOOL_NAMES;
  assert.deepEqual(
    lines,
    stored.map((record) => hermesLine(toHermesRecord(record, { knownTools, batchSize: 10 }))),
  );
  const first = JSON.parse(lines[0]!) as HermesRecord;
  assert.deepEqual(Object.keys(first), [
    'prompt_index',
    'conversations',
    'metadata',
    'completed',
    'partial',
    'api_calls',
    'toolsets_used',
    'tool_stats',
    'tool_error_counts',
  ]);
  assert.deepEqual(Object.keys(first.tool_stats), [...knownTools].sort(), 'padded with every tool Hermes registers');
  assert.ok(first.tool_stats.kanban_show && first.tool_stats.clarify, "Hermes' names, not traj's list");
  assert.equal(first.tool_stats.terminal!.count, 1);
  assert.match(first.conversations[0]!.value, /"required": null\}/);
  assert.ok(
    !JSON.stringify(first.conversations).includes('careful agent'),
    'the run system prompt is not in Hermes records',
  );
  const card = readFileSync(join(out, 'README.md'), 'utf8');
  assert.match(card, /hermes-agent batch-runner JSON lines/);
  assert.match(card, /\| tool_error_counts \| `dict<tool, int>` \|/);
});
