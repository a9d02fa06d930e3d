import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import {
  assistantTurns,
  callTool,
  reply,
  startScriptedServer,
  type ChatRequest,
  type ScriptedResponse,
} from '../../src/testing/index.js';
import { scriptedBatchArgs, writeJsonl } from '../helpers/batch-run.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { duckDbColumns, sqlFiles, withDuckDb, type YamlFeature } from '../export/duckdb.js';

/**
 * One schema across export formats, checked by a reader independent of traj (DuckDB): the JSONL
 * and Parquet exports of a real `traj batch` run (no rewards: reward, group, error all null) and
 * of a real `traj eval` run read with one set of column names and types, and concatenate.
 */

const userText = (request: ChatRequest) =>
  String(request.messages.find((message) => message.role === 'user')?.content ?? '');

/** Batch prompts call terminal or answer; file-task items alternate a right and a wrong first move per task. */
function policy() {
  const seen = new Map<string, number>();
  return (request: ChatRequest): ScriptedResponse => {
    const prompt = userText(request);
    if (assistantTurns(request) > 0) return reply('Done.');
    if (prompt.startsWith('tool task'))
      return callTool('terminal', { command: 'echo schema' }, { reasoning_content: 'Let me run it.' });
    if (prompt.startsWith('plain task')) return reply(`Plain answer to: ${prompt}`);
    const count = seen.get(prompt) ?? 0;
    seen.set(prompt, count + 1);
    const right = count % 2 === 0;
    if (prompt.includes('report.txt'))
      return callTool('write_file', { path: 'report.txt', content: right ? '100\n' : '101\n' });
    return callTool('terminal', { command: `mkdir -p numbers && seq ${right ? 2 : 1} 2 10 > numbers/evens.txt` });
  };
}

type RunName = 'batchrun' | 'evalrun';
type Format = 'jsonl' | 'parquet';

let directory: string;
const exportDirectory = (run: RunName, format: Format) => join(directory, 'exports', `${run}-${format}`);

function dataFiles(out: string, extension: string): string[] {
  return readdirSync(join(out, 'data'))
    .filter((name) => name.endsWith(`.${extension}`))
    .sort()
    .map((name) => join(out, 'data', name));
}

function cardFeatures(out: string): YamlFeature[] {
  const card = readFileSync(join(out, 'README.md'), 'utf8');
  const header = parseYaml(/^---\n([\s\S]*?)\n---\n/.exec(card)![1]!) as {
    dataset_info?: { features?: YamlFeature[] };
  };
  assert.ok(header.dataset_info?.features, `${out}: the card declares dataset_info.features`);
  return header.dataset_info.features;
}

/** The JSONL export read as the card declares it (never DuckDB's per-file guess), and the Parquet export. */
function sources(run: RunName): Record<Format, string> {
  const jsonl = exportDirectory(run, 'jsonl');
  return {
    jsonl: `read_json(${sqlFiles(dataFiles(jsonl, 'jsonl'))}, format = 'newline_delimited', columns = ${duckDbColumns(cardFeatures(jsonl))})`,
    parquet: `read_parquet(${sqlFiles(dataFiles(exportDirectory(run, 'parquet'), 'parquet'))})`,
  };
}

type Query = (sql: string) => Promise<Record<string, unknown>[]>;

async function describe(query: Query, source: string): Promise<string[][]> {
  const rows = await query(`DESCRIBE SELECT * FROM ${source}`);
  return rows.map((row) => [row.column_name as string, row.column_type as string]);
}

/** Each JSON line (as DuckDB reads the file's objects) is the Parquet row as JSON: same keys, nesting, values. */
async function assertLinesAreParquetRows(query: Query, jsonlFiles: string[], parquetFiles: string[]): Promise<void> {
  const lines = await query(`SELECT json FROM read_ndjson_objects(${sqlFiles(jsonlFiles)})`);
  const rows = await query(`SELECT to_json(p) AS json FROM read_parquet(${sqlFiles(parquetFiles)}) p`);
  assert.deepEqual(
    lines.map((line) => JSON.parse(line.json as string)),
    rows.map((row) => JSON.parse(row.json as string)),
  );
}

before(async () => {
  directory = temporaryDirectory({ after: (fn) => process.once('exit', fn) }, 'traj-export-schema-');
  const server = await startScriptedServer(policy());
  try {
    const dataset = join(directory, 'prompts.jsonl');
    writeJsonl(dataset, [
      { prompt: 'tool task 1' },
      { prompt: 'plain task 2' },
      { prompt: 'tool task 3' },
      { prompt: 'plain task 4' },
    ]);
    const batch = await runCli(
      scriptedBatchArgs(dataset, 'batchrun', server.url, 'NO_KEY', [
        '--toolsets',
        'terminal',
        '--workers',
        '1',
        '--concurrency',
        '4',
      ]),
      { cwd: directory },
    );
    assert.equal(batch.code, 0, batch.stderr);
    const evaluation = await runCli(
      [
        'eval',
        '--env',
        'file-task',
        '--run',
        'evalrun',
        '--limit',
        '2',
        '--samples',
        '2',
        '--workers',
        '1',
        '--concurrency',
        '4',
        '--base-url',
        server.url,
        '--model',
        'policy',
        '--api-key-env',
        'NO_KEY',
      ],
      { cwd: directory },
    );
    assert.equal(evaluation.code, 0, evaluation.stderr);
  } finally {
    await server.close();
  }
  for (const run of ['batchrun', 'evalrun'] as const)
    for (const format of ['jsonl', 'parquet'] as const) {
      const exported = await runCli(['export', run, '--format', format, '--out', exportDirectory(run, format)], {
        cwd: directory,
      });
      assert.equal(exported.code, 0, exported.stderr);
    }
});

test('DuckDB reads the JSONL and Parquet exports of a batch run and an eval run with identical columns and types, and concatenates them', async () => {
  const features = cardFeatures(exportDirectory('batchrun', 'parquet'));
  for (const run of ['batchrun', 'evalrun'] as const)
    for (const format of ['jsonl', 'parquet'] as const)
      assert.deepEqual(cardFeatures(exportDirectory(run, format)), features, `${run} ${format}: the same features`);
  const batch = sources('batchrun');
  const evaluation = sources('evalrun');
  await withDuckDb(async (query) => {
    const expected = await describe(query, batch.parquet);
    assert.deepEqual(
      expected.map(([name]) => name),
      features.map((feature) => feature.name),
      'the Parquet columns are the card’s',
    );
    for (const [name, source] of [
      ['batch jsonl', batch.jsonl],
      ['eval jsonl', evaluation.jsonl],
      ['eval parquet', evaluation.parquet],
    ] as const)
      assert.deepEqual(await describe(query, source), expected, `${name}: the same column names and types`);

    // Batch rows really have no reward, group or error; eval rows have rewards and groups.
    const nulls = await query(
      `SELECT count(*) AS n, count(reward) AS rewards, count("group") AS groups, count(error) AS errors FROM ${batch.jsonl}`,
    );
    assert.deepEqual(nulls, [{ n: '4', rewards: '0', groups: '0', errors: '0' }]);
    const scored = await query(
      `SELECT count(*) AS n, count(reward) AS rewards, count("group") AS groups, sum(reward) AS total FROM ${evaluation.parquet}`,
    );
    assert.deepEqual(scored, [{ n: '4', rewards: '4', groups: '4', total: 2 }]);

    // The four concatenate: UNION ALL by position, and its type is each part's type (no widening).
    const union = [batch.jsonl, batch.parquet, evaluation.jsonl, evaluation.parquet]
      .map((source) => `SELECT * FROM ${source}`)
      .join(' UNION ALL ');
    assert.deepEqual(await describe(query, `(${union})`), expected);
    const counted = await query(
      `SELECT count(*) AS n, count(reward) AS rewards, count(DISTINCT id) AS ids FROM (${union})`,
    );
    assert.deepEqual(counted, [{ n: '16', rewards: '8', ids: '6' }]);

    // Typed per file, a batch export's reward has no numeric type: the card's features are what align the runs.
    const guessed = Object.fromEntries(
      await describe(query, `read_json_auto(${sqlFiles(dataFiles(exportDirectory('batchrun', 'jsonl'), 'jsonl'))})`),
    );
    assert.notEqual(guessed.reward, 'DOUBLE');
  });
});

test('every JSON line is its Parquet row: the same keys, nesting and values, whether a row has tool calls, rewards or neither', async () => {
  await withDuckDb(async (query) => {
    for (const run of ['batchrun', 'evalrun'] as const) {
      const jsonl = dataFiles(exportDirectory(run, 'jsonl'), 'jsonl');
      const parquet = dataFiles(exportDirectory(run, 'parquet'), 'parquet');
      await assertLinesAreParquetRows(query, jsonl, parquet);
      // Read as the card types it, too.
      const { jsonl: typed } = sources(run);
      const [fromJsonl, fromParquet] = await Promise.all([
        query(`SELECT to_json(j) AS json FROM ${typed} j`),
        query(`SELECT to_json(p) AS json FROM read_parquet(${sqlFiles(parquet)}) p`),
      ]);
      assert.deepEqual(fromJsonl, fromParquet, run);
    }
  });
});

test('the checks fail when a format differs: a JSON line with tools as objects, a card with another integer width', async () => {
  const tampered = join(directory, 'tampered');
  mkdirSync(tampered, { recursive: true });
  const jsonl = dataFiles(exportDirectory('evalrun', 'jsonl'), 'jsonl');
  const parquet = dataFiles(exportDirectory('evalrun', 'parquet'), 'parquet');
  const lines = readFileSync(jsonl[0]!, 'utf8').split('\n').filter(Boolean);
  const first = JSON.parse(lines[0]!) as Record<string, unknown>;
  // What the JSONL export wrote before it shared the schema: tools as objects, not JSON text.
  first.tools = JSON.parse(first.tools as string);
  const file = join(tampered, 'train-00000-of-00001.jsonl');
  writeFileSync(file, `${[JSON.stringify(first), ...lines.slice(1)].join('\n')}\n`);
  await withDuckDb(async (query) => {
    await assert.rejects(assertLinesAreParquetRows(query, [file], parquet), assert.AssertionError);
    const features = cardFeatures(exportDirectory('evalrun', 'jsonl')).map((feature) =>
      feature.name === 'sample' ? { name: 'sample', dtype: 'int64' } : feature,
    );
    const widened = `read_json(${sqlFiles(jsonl)}, format = 'newline_delimited', columns = ${duckDbColumns(features)})`;
    assert.notDeepEqual(await describe(query, widened), await describe(query, `read_parquet(${sqlFiles(parquet)})`));
  });
});
