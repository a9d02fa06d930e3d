import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import {
  assistantTurns,
  scriptedBatchArgs,
  startScriptedServer,
  type ScriptFunction,
} from '../../src/testing/index.js';
import { readParquet, rowToRecord } from '../export/duckdb.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { startHubStandIn } from '../helpers/hub-stand-in.js';

/** Prompts mixing a tool call, a plain answer with reasoning, and one without reasoning (discarded by --require-reasoning). */
const mixedScript: ScriptFunction = (request) => {
  const prompt = String(request.messages.find((message) => message.role === 'user')?.content ?? '');
  if (prompt.startsWith('tool') && assistantTurns(request) === 0) {
    return {
      reasoning_content: 'Let me run a command.',
      tool_calls: [{ name: 'terminal', arguments: { command: 'echo exported' } }],
    };
  }
  if (prompt.startsWith('plain')) return { content: `Plain answer to: ${prompt}` };
  return { reasoning_content: 'I know this one.', content: `Answer to: ${prompt}` };
};

const PROMPTS = [
  ...Array.from({ length: 4 }, (_, index) => ({ prompt: `tool task ${index}` })),
  ...Array.from({ length: 3 }, (_, index) => ({ prompt: `plain task ${index}` })),
  ...Array.from({ length: 3 }, (_, index) => ({ prompt: `think task ${index}` })),
];

let directory: string;

before(async () => {
  directory = temporaryDirectory({ after: (fn) => process.once('exit', fn) }, 'traj-export-e2e-');
  const server = await startScriptedServer(mixedScript);
  try {
    const dataset = join(directory, 'prompts.jsonl');
    writeFileSync(dataset, `${PROMPTS.map((row) => JSON.stringify(row)).join('\n')}\n`);
    const batch = await runCli(
      scriptedBatchArgs(
        dataset,
        'mixed',
        server.url,
        'NO_KEY',
        ['--toolsets', 'terminal', '--require-reasoning', '--workers', '1', '--concurrency', '4'],
        'scripted-a',
      ),
      { cwd: directory },
    );
    assert.equal(batch.code, 0, batch.stderr);
  } finally {
    await server.close();
  }
});

function batchRecords(): Record<string, unknown>[] {
  return readFileSync(join(directory, 'datasets', 'mixed', 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

test('traj export --split-by status: done and discarded rows in separate Parquet splits named in the card; done rows equal the batch JSONL', async () => {
  const result = await runCli(['export', 'mixed', '--split-by', 'status'], { cwd: directory });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /exported 10 rows of run 'mixed' as parquet to datasets\/mixed\//);
  assert.match(result.stdout, /done\s+7 rows .* data\/done-00000-of-00001\.parquet/);
  assert.match(result.stdout, /discarded\s+3 rows .* data\/discarded-00000-of-00001\.parquet/);
  const out = join(directory, 'datasets', 'mixed');
  const card = readFileSync(join(out, 'README.md'), 'utf8');
  assert.match(
    card,
    /data_files:\n\s+- split: done\n\s+path: data\/done-\*\n\s+- split: discarded\n\s+path: data\/discarded-\*/,
  );
  assert.match(card, /\| model \| scripted-a \|/);
  assert.match(card, /\| rows \(done \/ discarded \/ failed \/ pending\) \| 10 \(7 \/ 3 \/ 0 \/ 0\) \|/);

  const done = await readParquet([join(out, 'data', 'done-00000-of-00001.parquet')]);
  assert.deepEqual(done.rows.map(rowToRecord), batchRecords(), 'every done row equals the record traj batch wrote');
  assert.equal(
    done.rows.filter((row) => (row.tool_stats as unknown[]).length > 0).length,
    4,
    'rows with and without tool calls share the file',
  );
  const discarded = await readParquet([join(out, 'data', 'discarded-00000-of-00001.parquet')]);
  assert.deepEqual(
    discarded.rows.map((row) => row.has_reasoning),
    [false, false, false],
  );
  assert.deepEqual(discarded.columns, done.columns, 'one schema across splits');
});

test('traj export --format jsonl --filter keeps matching rows; a bad filter names the position', async () => {
  const out = join(directory, 'filtered');
  const result = await runCli(
    [
      'export',
      'mixed',
      '--format',
      'jsonl',
      '--filter',
      'tool_stats.name contains "terminal" and finish_reason == "stop"',
      '--out',
      out,
    ],
    { cwd: directory },
  );
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /not exported: 3 left out by --filter/);
  const lines = readFileSync(join(out, 'data', 'train-00000-of-00001.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean);
  assert.equal(lines.length, 4);
  const expected = batchRecords().filter((record) => (record.tool_stats as unknown[]).length > 0);
  // Each line is the Parquet export's row (free-form objects as JSON text) and holds the whole stored record.
  assert.deepEqual(
    lines.map((line) => rowToRecord(JSON.parse(line) as Record<string, unknown>)),
    expected,
    'every line holds its stored record',
  );

  const bad = await runCli(['export', 'mixed', '--filter', 'turns >> 2', '--out', out], { cwd: directory });
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /--filter: expected a field, a string, a number, true, false, null or a list, found '>' at position 8\n {2}turns >> 2\n {9}\^/,
  );
  const usage = await runCli(['export', 'mixed', '--format', 'csv'], { cwd: directory });
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--format: expected one of parquet, jsonl, arrow, atropos, hermes, tokens, got 'csv'/);
  const missing = await runCli(['export', 'nope'], { cwd: directory });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /no run store at .*checkpoints\/nope\.sqlite; runs in checkpoints\/: mixed/);
  const tokenizer = await runCli(['export', 'mixed', '--format', 'atropos', '--tokenizer', 'tokenizer.json'], {
    cwd: directory,
  });
  assert.equal(tokenizer.code, 2, 'a configuration error exits 2');
  assert.match(tokenizer.stderr, /tokenizer: 'tokenizer\.json' is neither a folder nor a Hugging Face model id/);
  const untokenized = await runCli(['export', 'mixed', '--format', 'tokens'], { cwd: directory });
  assert.equal(untokenized.code, 2);
  assert.match(untokenized.stderr, /--format tokens needs --tokenizer/);
});

test('traj export --push: one commit to the Hub stand-in, a second push commits nothing, the token is never printed', async (t) => {
  const hub = await startHubStandIn();
  t.after(() => hub.close());
  const out = join(directory, 'pushed');
  const args = ['export', 'mixed', '--out', out, '--push', 'traj-tests/mixed', '--hub-url', hub.url, '--private'];
  const first = await runCli(args, { cwd: directory, env: { HF_TOKEN: hub.token } });
  assert.equal(first.code, 0, first.stderr);
  assert.match(
    first.stdout,
    /created traj-tests\/mixed; pushed to traj-tests\/mixed@main: commit [0-9a-f]{40} \(3 uploaded, 0 unchanged, 0 deleted\)/,
  );
  assert.equal(hub.commits.length, 1);
  assert.deepEqual(hub.commits[0]!.files, [
    { path: 'data/train-00000-of-00001.parquet', lfs: true },
    { path: 'README.md', lfs: false },
    { path: 'statistics.json', lfs: false },
  ]);
  assert.equal(hub.commits[0]!.summary, 'traj export of run mixed (7 rows)');
  assert.equal(
    hub.file('traj-tests/mixed', 'README.md')!.content.toString(),
    readFileSync(join(out, 'README.md'), 'utf8'),
  );

  const second = await runCli([...args, '--token-env', 'MY_HUB_TOKEN'], {
    cwd: directory,
    env: { MY_HUB_TOKEN: hub.token, HF_TOKEN: undefined },
  });
  assert.equal(second.code, 0, second.stderr);
  assert.match(
    second.stdout,
    /traj-tests\/mixed@main already holds this export \(3 files unchanged\): nothing committed/,
  );
  assert.equal(hub.commits.length, 1);
  assert.equal(hub.unauthorized, 0, '--token-env named the variable that holds the token');

  const none = await runCli(args, { cwd: directory, env: { HF_TOKEN: undefined } });
  assert.equal(none.code, 2);
  assert.match(none.stderr, /--push needs a Hugging Face token in \$HF_TOKEN/);
  for (const run of [first, second, none])
    assert.ok(!run.stdout.includes(hub.token) && !run.stderr.includes(hub.token), 'no token in the output');
});
