import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startScriptedServer, type ChatRequest, type ScriptedReply } from '../../src/testing/index.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { scriptedBatchArgs, writeJsonl } from '../helpers/batch-run.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const KEY = { TRAJ_TEST_KEY: 'test-key' };
const BENCHMARK_ITEM =
  'Natalia sold clips to forty eight of her friends in April and then she sold half as many clips in May';

/** Each prompt says which bad record to plant; clean ones call terminal once and answer. */
function plantingScript(request: ChatRequest): ScriptedReply {
  const prompt = String(request.messages.find((message) => message.role === 'user')?.content ?? '');
  const called = request.messages.some((message) => message.role === 'tool');
  const kind = /^\[(\w+)\]/.exec(prompt)?.[1] ?? 'clean';
  if (!called && kind === 'unknown') return { tool_calls: [{ name: 'launch_rocket', arguments: { target: 'moon' } }] };
  if (!called && kind === 'malformed') return { tool_calls: [{ name: 'terminal', arguments: { command: 42 } }] };
  if (!called && kind === 'unparsable') return { tool_calls: [{ name: 'terminal', arguments: '{"command": "ls' }] };
  if (!called) return { tool_calls: [{ name: 'terminal', arguments: { command: 'echo ok' } }] };
  if (kind === 'empty') return { content: '' };
  if (kind === 'answer') return { content: 'The Answer is: 42!' };
  if (kind === 'answer2') return { content: 'the answer is 42' };
  return { content: `Finished: ${prompt.slice(0, 60)}` };
}

test('each quality filter drops exactly the planted bad records and the card counts them', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(plantingScript);
  t.after(() => server.close());
  const rows = [
    { id: 'clean-1', prompt: 'Clean task one: list the files.' },
    { id: 'unknown', prompt: '[unknown] Use whatever tool you like.' },
    { id: 'malformed', prompt: '[malformed] Run a command.' },
    { id: 'unparsable', prompt: '[unparsable] Run another command.' },
    { id: 'empty', prompt: '[empty] Say nothing at all.' },
    { id: 'clean-2', prompt: 'Clean task two: show the date.' },
    { id: 'dup-prompt', prompt: 'Clean task two:   show the date.' },
    { id: 'answer-a', prompt: '[answer] What is six times seven?' },
    { id: 'answer-b', prompt: '[answer2] What is forty-two?' },
    { id: 'contaminated', prompt: `Please solve: ${BENCHMARK_ITEM.toUpperCase()}. How many in all?` },
    { id: 'near-miss', prompt: `Please solve: ${BENCHMARK_ITEM.split(' ').slice(0, 12).join(' ')} and stop.` },
  ];
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, rows);
  writeFileSync(
    join(directory, 'bench.jsonl'),
    `${JSON.stringify({ question: `${BENCHMARK_ITEM}. How many clips did Natalia sell?`, answer: '72' })}\n`,
  );
  const batch = await runCli(
    scriptedBatchArgs(dataset, 'quality', server.url, 'TRAJ_TEST_KEY', ['--toolsets', 'terminal', '--max-turns', '3']),
    { cwd: directory, env: KEY },
  );
  assert.equal(batch.code, 0, batch.stderr);

  const plain = await runCli(['export', 'quality', '--format', 'jsonl', '--out', 'plain'], { cwd: directory });
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(exportedIds(directory, 'plain').length, rows.length, 'without filters every record is exported');

  const filtered = await runCli(
    [
      'export',
      'quality',
      '--format',
      'jsonl',
      '--out',
      'filtered',
      '--quality',
      '--dedupe',
      '--decontaminate',
      'bench.jsonl',
    ],
    { cwd: directory },
  );
  assert.equal(filtered.code, 0, filtered.stderr);
  assert.deepEqual(exportedIds(directory, 'filtered'), ['clean-1', 'clean-2', 'answer-a', 'near-miss']);
  assert.match(
    filtered.stdout,
    /quality filters dropped: unknown_tool 1, malformed_arguments 2, empty_answer 1, duplicate_prompt 1, duplicate_answer 1, contaminated 1/,
  );
  const card = readFileSync(join(directory, 'filtered', 'README.md'), 'utf8');
  for (const [name, count] of Object.entries({
    unknown_tool: 1,
    malformed_arguments: 2,
    empty_answer: 1,
    duplicate_prompt: 1,
    duplicate_answer: 1,
    contaminated: 1,
  }))
    assert.match(card, new RegExp(`\\| ${name} \\| [^|]+ \\| ${count} \\|`), `card row of ${name}`);

  const onlyDedupe = await runCli(['export', 'quality', '--format', 'jsonl', '--out', 'dedupe', '--dedupe'], {
    cwd: directory,
  });
  assert.equal(onlyDedupe.code, 0, onlyDedupe.stderr);
  // Alone, --dedupe also drops near-miss: its answer quotes the same 60 characters as the contaminated record's, now kept.
  assert.deepEqual(
    exportedIds(directory, 'dedupe').filter((id) => ['dup-prompt', 'answer-b', 'near-miss'].includes(id)),
    [],
  );
  assert.equal(exportedIds(directory, 'dedupe').length, rows.length - 3);
  const dedupeCard = readFileSync(join(directory, 'dedupe', 'README.md'), 'utf8');
  assert.doesNotMatch(dedupeCard, /\| unknown_tool \|/, 'filters not asked for are not in the card');
});

function exportedIds(directory: string, name: string): string[] {
  return readFileSync(join(directory, name, 'data', 'train-00000-of-00001.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as TrajectoryRecord).id);
}
