import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { exportRun } from '../../src/export/index.js';
import { temporaryDirectory } from '../helpers/cli.js';
import { readParquet, rowToRecord } from './duckdb.js';
import { buildStore, MIXED_ROLLOUTS, storedRecords, type RolloutShape } from './store-fixture.js';

function jsonlRecords(directory: string, split = 'train'): Record<string, unknown>[] {
  const files = readdirSync(join(directory, 'data'))
    .filter((name) => name.startsWith(`${split}-`) && name.endsWith('.jsonl'))
    .sort();
  return files.flatMap((name) =>
    readFileSync(join(directory, 'data', name), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>),
  );
}

function cardHeader(directory: string): Record<string, unknown> {
  const text = readFileSync(join(directory, 'README.md'), 'utf8');
  const match = /^---\n([\s\S]*?)\n---\n/.exec(text);
  assert.ok(match, 'the card starts with a YAML header');
  return parseYaml(match[1]!) as Record<string, unknown>;
}

const MESSAGE_TYPE =
  'STRUCT("role" VARCHAR, "content" VARCHAR, reasoning VARCHAR, reasoning_details VARCHAR, images VARCHAR[], ' +
  'tool_calls STRUCT(id VARCHAR, "type" VARCHAR, "function" STRUCT("name" VARCHAR, arguments VARCHAR))[], echo VARCHAR, tool_call_id VARCHAR, "name" VARCHAR)';
const USAGE_TYPE =
  'STRUCT(prompt_tokens BIGINT, completion_tokens BIGINT, reasoning_tokens BIGINT, cached_tokens BIGINT, "cost" DOUBLE, cost_source VARCHAR, unpriced_models VARCHAR[])';

const EXPECTED_TYPES: Record<string, string> = {
  id: 'VARCHAR',
  sample: 'INTEGER',
  conversations: 'STRUCT("from" VARCHAR, "value" VARCHAR)[]',
  messages:
    'STRUCT("role" VARCHAR, "content" VARCHAR, reasoning VARCHAR, reasoning_details VARCHAR, images VARCHAR[], ' +
    'tool_calls STRUCT(id VARCHAR, "type" VARCHAR, "function" STRUCT("name" VARCHAR, arguments VARCHAR))[], echo VARCHAR, tool_call_id VARCHAR, "name" VARCHAR)[]',
  tools: 'VARCHAR',
  toolsets: 'VARCHAR[]',
  model: 'VARCHAR',
  completed: 'BOOLEAN',
  partial: 'BOOLEAN',
  finish_reason: 'VARCHAR',
  turns: 'INTEGER',
  api_calls: 'INTEGER',
  tool_stats: 'STRUCT("name" VARCHAR, calls INTEGER, ok INTEGER, errors INTEGER)[]',
  usage: USAGE_TYPE,
  compressions:
    'STRUCT(at_call BIGINT, at_message BIGINT, "trigger" VARCHAR, tokens_before BIGINT, tokens_after BIGINT, replaced_start BIGINT, replaced_end BIGINT, summary VARCHAR, todo VARCHAR)[]',
  memory: 'STRUCT(memory VARCHAR[], "user" VARCHAR[])',
  skills_viewed: 'VARCHAR[]',
  has_reasoning: 'BOOLEAN',
  reward: 'DOUBLE',
  scores: 'VARCHAR',
  reward_details: 'VARCHAR',
  reward_error: 'VARCHAR',
  group: 'VARCHAR',
  advantage: 'DOUBLE',
  source: 'STRUCT(dataset VARCHAR, "row" BIGINT, fields VARCHAR)',
  timing: 'STRUCT(started_at VARCHAR, duration_ms DOUBLE, model_ms DOUBLE, tool_ms DOUBLE)',
  error: 'VARCHAR',
  images: 'VARCHAR[]',
  artifacts: 'VARCHAR[]',
  subagents: `STRUCT(call_id VARCHAR, depth INTEGER, goal VARCHAR, toolsets VARCHAR[], messages ${MESSAGE_TYPE}[], usage ${USAGE_TYPE}, finish_reason VARCHAR)[]`,
  code_calls: 'STRUCT(call_id VARCHAR, "name" VARCHAR, arguments VARCHAR, ok BOOLEAN, ms DOUBLE, result VARCHAR)[]',
  simulated_user: `STRUCT(model VARCHAR, turns INTEGER, stop VARCHAR, usage ${USAGE_TYPE})`,
};

test('Parquet read back by DuckDB: one fixed schema; Parquet rows and JSONL lines both hold every stored record', async (t) => {
  const directory = temporaryDirectory(t);
  const storePath = buildStore(directory, 'mixed', MIXED_ROLLOUTS);
  const parquetOut = join(directory, 'parquet');
  const jsonlOut = join(directory, 'jsonl');
  const parquet = await exportRun({ storePath, out: parquetOut, format: 'parquet' });
  await exportRun({ storePath, out: jsonlOut, format: 'jsonl' });

  assert.deepEqual(parquet.files, ['data/train-00000-of-00001.parquet', 'README.md']);
  const contents = await readParquet([join(parquetOut, 'data', 'train-00000-of-00001.parquet')]);
  const expected = storedRecords(storePath);
  const lines = jsonlRecords(jsonlOut);
  assert.equal(contents.rows.length, 5, 'done rows only: the discarded and the failed row stay out');
  assert.equal(expected.length, 5);
  assert.deepEqual(Object.fromEntries(contents.columns.map((column) => [column.name, column.type])), EXPECTED_TYPES);
  assert.deepEqual(contents.rows.map(rowToRecord), expected);
  // A JSON line is the Parquet row: the schema's columns in its order, nothing of the record lost.
  for (const line of lines) assert.deepEqual(Object.keys(line), Object.keys(EXPECTED_TYPES));
  assert.deepEqual(lines.map(rowToRecord), expected);
  // The mix really is mixed: rows with and without tool calls, reasoning and rewards share the file.
  assert.deepEqual(
    expected.map((record) => [
      record.id,
      (record.tool_stats as unknown[]).length > 0,
      record.has_reasoning,
      record.reward,
    ]),
    [
      ['alpha', true, true, 1],
      ['beta', false, false, null],
      ['gamma', true, false, 0],
      ['delta', false, true, null],
      ['eta', true, true, 0.5],
    ],
  );
  assert.deepEqual(contents.rowGroups, [5]);
});

test('the schema is the same for every run: a run without tool calls or rewards gets the same columns and types', async (t) => {
  const directory = temporaryDirectory(t);
  const plain = buildStore(directory, 'plain', [{ key: 'one' }, { key: 'two' }], 'batch');
  const rich = buildStore(directory, 'rich', [
    { key: 'three', toolCall: true, reasoning: true, reward: 1, group: 'three' },
  ]);
  await exportRun({ storePath: plain, out: join(directory, 'plain') });
  await exportRun({ storePath: rich, out: join(directory, 'rich') });
  const [a, b] = await Promise.all(
    ['plain', 'rich'].map((name) => readParquet([join(directory, name, 'data', 'train-00000-of-00001.parquet')])),
  );
  assert.deepEqual(a!.columns, b!.columns);
  // Both files read as one table: their schemas are identical.
  const both = await readParquet(
    ['plain', 'rich'].map((name) => join(directory, name, 'data', 'train-00000-of-00001.parquet')),
  );
  assert.equal(both.rows.length, 3);
});

test('views: sharegpt writes conversations only, messages writes messages only', async (t) => {
  const directory = temporaryDirectory(t);
  const storePath = buildStore(directory, 'views', MIXED_ROLLOUTS);
  for (const [view, present, absent] of [
    ['sharegpt', 'conversations', 'messages'],
    ['messages', 'messages', 'conversations'],
  ] as const) {
    const out = join(directory, view);
    await exportRun({ storePath, out, view });
    const { columns } = await readParquet([join(out, 'data', 'train-00000-of-00001.parquet')]);
    const names = columns.map((column) => column.name);
    assert.ok(names.includes(present) && !names.includes(absent), `${view}: ${names.join(',')}`);
    assert.equal(names.length, Object.keys(EXPECTED_TYPES).length - 1);
    const jsonlOut = join(directory, `${view}-jsonl`);
    await exportRun({ storePath, out: jsonlOut, view, format: 'jsonl' });
    for (const record of jsonlRecords(jsonlOut)) assert.ok(present in record && !(absent in record));
  }
});

test('Arrow IPC shards carry the same schema and rows as Parquet', async (t) => {
  const directory = temporaryDirectory(t);
  const storePath = buildStore(directory, 'arrow', MIXED_ROLLOUTS);
  const out = join(directory, 'arrow');
  const result = await exportRun({ storePath, out, format: 'arrow' });
  assert.deepEqual(result.files, ['data/train-00000-of-00001.arrow', 'README.md']);
  const arrow = await import('apache-arrow');
  const table = arrow.tableFromIPC(readFileSync(join(out, 'data', 'train-00000-of-00001.arrow')));
  assert.equal(table.numRows, 5);
  assert.equal(table.schema.metadata.get('traj.schema_version'), '6');
  const parquetOut = join(directory, 'parquet');
  await exportRun({ storePath, out: parquetOut });
  const parquet = await readParquet([join(parquetOut, 'data', 'train-00000-of-00001.parquet')]);
  assert.deepEqual(
    table.schema.fields.map((field) => field.name),
    parquet.columns.map((column) => column.name),
  );
  const rows = table
    .toArray()
    .map(
      (row) =>
        JSON.parse(
          JSON.stringify(row.toJSON(), (_key, value: unknown) => (typeof value === 'bigint' ? Number(value) : value)),
        ) as Record<string, unknown>,
    );
  assert.deepEqual(rows.map(rowToRecord), storedRecords(storePath));
});

test('--split-by status: done, discarded and failed rows land in separate splits named in the card', async (t) => {
  const directory = temporaryDirectory(t);
  const storePath = buildStore(directory, 'status', MIXED_ROLLOUTS);
  const out = join(directory, 'out');
  const result = await exportRun({ storePath, out, splitBy: 'status' });
  assert.deepEqual(
    result.splits.map((split) => [split.name, split.rows]),
    [
      ['done', 5],
      ['discarded', 1],
      ['failed', 1],
    ],
  );
  const header = cardHeader(out);
  assert.deepEqual(header.configs, [
    {
      config_name: 'default',
      data_files: [
        { split: 'done', path: 'data/done-*' },
        { split: 'discarded', path: 'data/discarded-*' },
        { split: 'failed', path: 'data/failed-*' },
      ],
    },
  ]);
  assert.deepEqual(header.size_categories, ['n<1K']);
  assert.deepEqual(header.task_categories, ['text-generation', 'reinforcement-learning']);
  assert.equal(header.license, undefined, 'an unknown license is left out');
  const discarded = await readParquet([join(out, 'data', 'discarded-00000-of-00001.parquet')]);
  assert.deepEqual(
    discarded.rows.map((row) => row.id),
    ['epsilon'],
  );
  const failed = await readParquet([join(out, 'data', 'failed-00000-of-00001.parquet')]);
  assert.equal(JSON.parse(failed.rows[0]!.error as string).code, 'setup_failed');
  const card = readFileSync(join(out, 'README.md'), 'utf8');
  assert.match(card, /\| discarded \| 1 \| 1 \| rollouts discarded by a run filter/);
  assert.match(card, /\| fingerprint \| [0-9a-f]{64} \|/);
  assert.match(card, /\| environment \| fixture@1 \|/);
});

test('--split-by toolsets and category name one split per value among done rows', async (t) => {
  const directory = temporaryDirectory(t);
  const storePath = buildStore(directory, 'by', MIXED_ROLLOUTS);
  const toolsets = await exportRun({
    storePath,
    out: join(directory, 'toolsets'),
    splitBy: 'toolsets',
    format: 'jsonl',
  });
  assert.deepEqual(
    toolsets.splits.map((split) => [split.name, split.rows]),
    [
      ['no_tools', 2],
      ['terminal', 3],
    ],
  );
  const category = await exportRun({
    storePath,
    out: join(directory, 'category'),
    splitBy: 'category',
    format: 'jsonl',
  });
  assert.deepEqual(
    category.splits.map((split) => [split.name, split.rows]),
    [
      ['chat', 1],
      ['files', 2],
      ['math_logic', 1],
      ['uncategorized', 1],
    ],
  );
});

test('--filter keeps matching rows and the card reports what it left out', async (t) => {
  const directory = temporaryDirectory(t);
  const storePath = buildStore(directory, 'filter', MIXED_ROLLOUTS);
  const cases: Array<[string, string[]]> = [
    ['reward >= 0.5', ['alpha', 'eta']],
    ['reward >= 0.5 and finish_reason == "stop"', ['alpha']],
    ['toolsets contains "terminal" and turns < 10', ['alpha', 'gamma', 'eta']],
    ['tool_stats.name contains "terminal" and not has_reasoning', ['gamma']],
    ['reward == null or source.fields.category in ["chat", "math & logic"]', ['beta', 'delta']],
    ['len(messages) > 3', ['alpha', 'gamma', 'eta']],
    ['reward_error contains "no such file"', ['delta']],
  ];
  for (const [filter, ids] of cases) {
    const out = join(directory, `filter-${ids.join('-')}`);
    const result = await exportRun({ storePath, out, filter, format: 'jsonl' });
    assert.deepEqual(
      jsonlRecords(out).map((record) => record.id),
      ids,
      filter,
    );
    assert.equal(result.left.filteredOut, 5 - ids.length, filter);
    assert.match(
      readFileSync(join(out, 'README.md'), 'utf8'),
      new RegExp(`\\| rows left out by the filter \\| ${5 - ids.length} \\|`),
    );
  }
  await assert.rejects(
    exportRun({ storePath, out: join(directory, 'none'), filter: 'turns > 100' }),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, 'nothing_to_export');
      assert.match(error.message, /the filter left out 5 rows/);
      return true;
    },
  );
});

test('shards: --shard-size cuts files the Hub way, every row once; an unchanged export is byte-identical', async (t) => {
  const directory = temporaryDirectory(t);
  const shapes: RolloutShape[] = Array.from({ length: 30 }, (_, index) => ({
    key: `row${String(index).padStart(2, '0')}`,
    toolCall: index % 2 === 0,
    padding: 20_000,
  }));
  const storePath = buildStore(directory, 'sharded', shapes, 'batch');
  const out = join(directory, 'out');
  const first = await exportRun({ storePath, out, shardSizeMb: 0.2 });
  const files = first.splits[0]!.files;
  assert.ok(files.length >= 3, `several shards: ${files.join(', ')}`);
  files.forEach((file, index) =>
    assert.equal(
      file,
      `data/train-${String(index).padStart(5, '0')}-of-${String(files.length).padStart(5, '0')}.parquet`,
    ),
  );
  const contents = await readParquet(files.map((file) => join(out, file)));
  assert.deepEqual(
    contents.rows.map((row) => row.id),
    shapes.map((shape) => shape.key),
  );
  const before = files.map((file) => readFileSync(join(out, file)));
  const card = readFileSync(join(out, 'README.md'));

  const again = await exportRun({ storePath, out, shardSizeMb: 0.2 });
  assert.deepEqual(again.files, first.files);
  assert.ok(
    again.splits[0]!.files.every((file, index) => readFileSync(join(out, file)).equals(before[index]!)),
    'same bytes',
  );
  assert.ok(readFileSync(join(out, 'README.md')).equals(card), 'same card');

  // A coarser export replaces the shards: no file of the earlier export is left behind.
  writeFileSync(join(out, 'data', 'notes.txt'), 'kept');
  await exportRun({ storePath, out });
  assert.deepEqual(readdirSync(join(out, 'data')).sort(), ['notes.txt', 'train-00000-of-00001.parquet']);
});

test('a record that does not fit the schema is refused with its key (the previous export stays), and a filter can leave it out', async (t) => {
  const directory = temporaryDirectory(t);
  const storePath = buildStore(directory, 'broken', [{ key: 'good' }, { key: 'bad' }, { key: 'fine' }]);
  const out = join(directory, 'out');
  await exportRun({ storePath, out });
  const before = readFileSync(join(out, 'data', 'train-00000-of-00001.parquet'));
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(storePath);
  db.prepare(`UPDATE items SET record = json_set(record, '$.turns', 'many') WHERE key = 'bad'`).run();
  db.close();
  for (const format of ['parquet', 'arrow', 'jsonl'] as const) {
    await assert.rejects(
      exportRun({ storePath, out, format }),
      /record "bad" \(sample 0\) .* at turns: .*--filter 'not \(id == "bad" and sample == 0\)'/,
      format,
    );
    assert.deepEqual(
      readdirSync(join(out, 'data')),
      ['train-00000-of-00001.parquet'],
      `${format}: no partial shard is left behind`,
    );
    assert.ok(
      readFileSync(join(out, 'data', 'train-00000-of-00001.parquet')).equals(before),
      `${format}: the previous export is intact`,
    );
  }
  const result = await exportRun({ storePath, out, filter: 'not (id == "bad" and sample == 0)' });
  assert.equal(result.rows, 2);
});
