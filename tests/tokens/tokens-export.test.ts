import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { exportRun, type AtroposGroupLine } from '../../src/export/index.js';
import { RunStore } from '../../src/run/store.js';
import { callTool, conversationScript, reply } from '../../src/testing/index.js';
import { tokenTrace, type ChatTokenizer } from '../../src/tokens/index.js';
import { buildRecord, type TrajectoryRecord } from '../../src/trajectory/index.js';
import { temporaryDirectory } from '../helpers/cli.js';
import { QWEN3_FOLDER, qwen3 } from '../helpers/qwen3.js';
import { qwen3Rollout } from '../helpers/qwen3-rollout.js';
import { readParquet } from '../export/duckdb.js';

type Context = { after(fn: () => unknown): void };

async function record(t: Context, tokenizer: ChatTokenizer, sample: number, drift: boolean): Promise<TrajectoryRecord> {
  const final = '<think>\nIt printed hi.\n</think>\n\nThe command printed hi.<|im_end|>';
  const split = [
    ...tokenizer.encode('<think>\nIt pr'),
    ...tokenizer.encode('inted hi.\n</think>\n\nThe command printed hi.<|im_end|>'),
  ];
  const script = conversationScript([
    callTool('terminal', { command: 'echo hi' }, { reasoning_content: 'I will run echo.' }),
    reply('The command printed hi.', { reasoning_content: 'It printed hi.', ...(drift ? { token_ids: split } : {}) }),
  ]);
  assert.equal(tokenizer.decode(split), final);
  const { result, specs } = await qwen3Rollout(t, tokenizer, script);
  const built = buildRecord({
    key: 'echo',
    sample,
    result,
    tools: specs,
    toolsets: ['terminal'],
    model: 'qwen3',
    source: { dataset: 'fixture.jsonl', row: 0, fields: {} },
    reward: { reward: sample === 0 ? 1 : 0, scores: {}, reward_details: null, reward_error: null },
    group: 'echo',
  });
  return { ...built, advantage: sample === 0 ? 1 : -1 };
}

function store(directory: string, records: TrajectoryRecord[]): string {
  const path = join(directory, 'tokens.sqlite');
  const runStore = RunStore.open(path);
  try {
    runStore.initRun({
      name: 'tokens',
      kind: 'eval',
      config: { dataset: 'fixture.jsonl' },
      fingerprintParts: {
        model: 'qwen3',
        toolsets: { fixed: ['terminal'] },
        environment: { name: 'fixture', version: '1' },
        max_turns: 4,
        seed: 0,
        system_prompt: null,
      },
    });
    records.forEach((entry, row) => {
      runStore.markDispatched(entry.id, entry.sample, row, entry.toolsets);
      runStore.saveResult({
        key: entry.id,
        sample: entry.sample,
        status: 'done',
        record: entry,
        reward: entry.reward,
        finishReason: entry.finish_reason,
        errorClass: null,
      });
    });
  } finally {
    runStore.close();
  }
  return path;
}

test('the tokens export loads in DuckDB with the documented types, ids, masks and logprobs as traced', async (t) => {
  const tokenizer = await qwen3();
  const records = [await record(t, tokenizer, 0, false), await record(t, tokenizer, 1, true)];
  const directory = temporaryDirectory(t);
  const storePath = store(directory, records);
  const out = join(directory, 'out');
  const result = await exportRun({ storePath, out, format: 'tokens', tokenizer: QWEN3_FOLDER });
  assert.equal(result.rows, 2);
  assert.deepEqual(
    result.notes.map((note) => [note.id, note.sample, note.outcome]),
    [['echo', 1, 'drift']],
    'the drifted record is reported, by record',
  );
  const { columns, rows } = await readParquet(
    result.files.filter((file) => file.endsWith('.parquet')).map((file) => join(out, file)),
  );
  assert.deepEqual(columns, [
    { name: 'id', type: 'VARCHAR' },
    { name: 'sample', type: 'INTEGER' },
    { name: 'group', type: 'VARCHAR' },
    { name: 'reward', type: 'DOUBLE' },
    { name: 'advantage', type: 'DOUBLE' },
    { name: 'prompt_ids', type: 'INTEGER[]' },
    { name: 'completion_ids', type: 'INTEGER[]' },
    { name: 'completion_mask', type: 'TINYINT[]' },
    { name: 'completion_logprobs', type: 'DOUBLE[]' },
    { name: 'truncated', type: 'BOOLEAN' },
    { name: 'drift', type: 'VARCHAR[]' },
  ]);
  for (const [position, row] of rows.entries()) {
    const source = records[position]!;
    const outcome = tokenTrace(tokenizer, {
      messages: source.messages,
      tools: source.tools,
      completions: source.completions!,
    });
    assert.ok(outcome.ok);
    assert.equal(row.id, 'echo');
    assert.equal(row.sample, position);
    assert.equal(row.reward, position === 0 ? 1 : 0);
    assert.equal(row.advantage, position === 0 ? 1 : -1);
    assert.deepEqual(row.prompt_ids, outcome.trace.promptIds);
    assert.deepEqual(row.completion_ids, outcome.trace.completionIds);
    assert.deepEqual(row.completion_mask, outcome.trace.completionMask);
    assert.deepEqual(row.completion_logprobs, outcome.trace.completionLogprobs);
    const sampled = (row.completion_logprobs as Array<number | null>).filter((value) => value !== null);
    assert.deepEqual(
      sampled,
      source.completions!.flatMap((completion) => completion.logprobs!),
      'logprobs per token',
    );
    assert.equal(row.truncated, false);
    assert.equal((row.drift as string[]).length, position === 0 ? 0 : 1);
  }
  assert.match(
    (rows[1]!.drift as string[])[0]!,
    /^message 4, token \d+: endpoint \d+ " pr", re-tokenised \d+ " printed"$/,
  );
});

test('--max-tokens drops or truncates longer rollouts and says so per record; atropos gets tokens, masks and logprobs', async (t) => {
  const tokenizer = await qwen3();
  const records = [await record(t, tokenizer, 0, false), await record(t, tokenizer, 1, false)];
  const directory = temporaryDirectory(t);
  const storePath = store(directory, records);
  const traced = tokenTrace(tokenizer, {
    messages: records[0]!.messages,
    tools: records[0]!.tools,
    completions: records[0]!.completions!,
  });
  assert.ok(traced.ok);
  const total = traced.trace.promptIds.length + traced.trace.completionIds.length;

  const dropped = await exportRun({
    storePath,
    out: join(directory, 'a'),
    format: 'atropos',
    tokenizer: QWEN3_FOLDER,
    maxTokens: total,
  });
  assert.deepEqual(dropped.notes, [], 'a rollout of exactly --max-tokens is kept');
  const [group] = readFileSync(join(directory, 'a', dropped.files[0]!), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AtroposGroupLine);
  const ids = [...traced.trace.promptIds, ...traced.trace.completionIds];
  assert.deepEqual(group!.tokens![0], ids);
  const mask = [...traced.trace.promptIds.map(() => 0), ...traced.trace.completionMask];
  assert.deepEqual(
    group!.masks![0],
    ids.map((id, position) => (mask[position] === 1 ? id : -100)),
  );
  const logprobs = [...traced.trace.promptIds.map(() => null), ...traced.trace.completionLogprobs];
  assert.deepEqual(
    group!.inference_logprobs![0],
    logprobs.map((value) => value ?? 1),
  );
  assert.deepEqual(group!.ref_logprobs, group!.inference_logprobs);

  await assert.rejects(
    exportRun({
      storePath,
      out: join(directory, 'b'),
      format: 'tokens',
      tokenizer: QWEN3_FOLDER,
      maxTokens: total - 1,
    }),
    /nothing to export/,
    'both rollouts are one token too long: dropped',
  );
  const truncated = await exportRun({
    storePath,
    out: join(directory, 'c'),
    format: 'tokens',
    tokenizer: QWEN3_FOLDER,
    maxTokens: total - 5,
    overLength: 'truncate',
  });
  assert.deepEqual(
    truncated.notes.map((note) => `${note.outcome} ${note.id}#${note.sample}: ${note.detail}`),
    [0, 1].map((sample) => `truncated echo#${sample}: ${total} tokens cut to ${total - 5} (--max-tokens)`),
  );
  const { rows } = await readParquet([join(directory, 'c', truncated.files[0]!)]);
  for (const row of rows) {
    assert.equal(row.truncated, true);
    assert.equal((row.prompt_ids as number[]).length + (row.completion_ids as number[]).length, total - 5);
    assert.deepEqual(
      row.completion_mask,
      traced.trace.completionMask.slice(0, total - 5 - traced.trace.promptIds.length),
    );
  }
});
