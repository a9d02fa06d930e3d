import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { startScriptedServer, type ChatRequest, type ScriptedReply } from '../../src/testing/index.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { scriptedBatchArgs, writeJsonl } from '../helpers/batch-run.js';
import { runCli, startCli, temporaryDirectory } from '../helpers/cli.js';
import { QWEN3_FOLDER, qwen3 } from '../helpers/qwen3.js';

const KEY = { TRAJ_TEST_KEY: 'test-key' };
const TOOL_TURNS = 22;
const SUMMARY_ASK = 'Summarize the following agent conversation turns';

/** The rollout: 22 terminal calls printing ~1,900 tokens each with the prompt's tag, then an answer. */
function longScript(request: ChatRequest): ScriptedReply {
  const first = request.messages.find((message) => message.role === 'user');
  const text = String(first?.content ?? '');
  if (text.startsWith(SUMMARY_ASK)) {
    const tags = [...new Set(text.match(/tag-\d+/g) ?? [])];
    return { content: `[CONTEXT SUMMARY]: the assistant printed long lines for ${tags.join(', ')} many times.` };
  }
  const tag = /tag-\d+/.exec(text)?.[0] ?? 'tag-none';
  const turns = request.messages.filter((message) => message.role === 'assistant').length;
  if (turns < TOOL_TURNS)
    return {
      content: `Step ${turns + 1}.`,
      tool_calls: [
        {
          name: 'terminal',
          arguments: { command: `yes '${tag} alpha beta gamma delta epsilon ${turns}' | head -n 190` },
        },
      ],
    };
  return { content: `Done with ${tag}: every step printed its lines.` };
}

async function longRun(t: TestContext, rows: number, latencyMs = 0) {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(longScript, { latencyMs });
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(
    dataset,
    Array.from({ length: rows }, (_, index) => ({ id: `p${index}`, prompt: `Print lines for tag-${index} please.` })),
  );
  writeFileSync(join(directory, 'run.yaml'), 'compression:\n  enabled: false\n');
  const batch = await runCli(
    scriptedBatchArgs(dataset, 'long', server.url, 'TRAJ_TEST_KEY', [
      '--toolsets',
      'terminal',
      '--max-turns',
      String(TOOL_TURNS + 2),
      '--config',
      'run.yaml',
    ]),
    { cwd: directory, env: KEY },
  );
  assert.equal(batch.code, 0, batch.stderr);
  return { directory, server };
}

function compressArgs(url: string, extra: string[] = []): string[] {
  return [
    'compress',
    'long',
    '--max-tokens',
    '15250',
    '--tokenizer',
    QWEN3_FOLDER,
    '--base-url',
    url,
    '--model',
    'summariser',
    '--api-key-env',
    'TRAJ_TEST_KEY',
    ...extra,
  ];
}

function exportedRecords(directory: string, name: string): TrajectoryRecord[] {
  const text = readFileSync(join(directory, name, 'data', 'train-00000-of-00001.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TrajectoryRecord);
}

test('a 40k-token trajectory compresses under 15,250 Qwen3 tokens with its protected turns byte-equal', async (t) => {
  const tokenizer = await qwen3();
  const { directory, server } = await longRun(t, 1);
  const plain = await runCli(['export', 'long', '--format', 'jsonl', '--out', 'plain'], { cwd: directory });
  assert.equal(plain.code, 0, plain.stderr);
  // The export's own shape of the original record (absent fields as null), to compare with the compressed one.
  const [original] = exportedRecords(directory, 'plain');
  const count = (record: TrajectoryRecord) =>
    record.conversations.reduce((sum, turn) => sum + tokenizer.encode(turn.value).length, 0);
  assert.ok(count(original!) > 40_000, `the trajectory has ${count(original!)} tokens`);

  const compressed = await runCli(compressArgs(server.url), { cwd: directory, env: KEY });
  assert.equal(compressed.code, 0, compressed.stderr);
  assert.match(compressed.stdout, /records: 1 \(compressed 1, under the budget 0, over the limit 0, failed 0\)/);
  const exported = await runCli(['export', 'long', '--compressed', '--format', 'jsonl', '--out', 'shaped'], {
    cwd: directory,
  });
  assert.equal(exported.code, 0, exported.stderr);
  const [shaped] = exportedRecords(directory, 'shaped');
  const after = count(shaped!);
  assert.ok(after < 15_250, `compressed to ${after} tokens`);

  const before = original!.conversations;
  const now = shaped!.conversations;
  // The head: system, first human, first gpt and its tool turn; then the summary, a human turn.
  assert.deepEqual(now.slice(0, 4), before.slice(0, 4));
  assert.equal(now[4]!.from, 'human');
  assert.match(now[4]!.value, /^\[CONTEXT SUMMARY\]: the assistant printed long lines for tag-0/);
  // The tail: the last four turns, byte for byte, and the messages behind them too.
  assert.deepEqual(now.slice(-4), before.slice(-4));
  assert.deepEqual(shaped!.messages.slice(0, 4), original!.messages.slice(0, 4));
  assert.deepEqual(shaped!.messages.slice(-3), original!.messages.slice(-3));
  // Only as much as needed was replaced: the turn right after the summary is one of the original's.
  const kept = before.findIndex((turn) => turn.value === now[5]!.value);
  assert.ok(kept > 4 && kept < before.length - 4);

  const statistics = JSON.parse(readFileSync(join(directory, 'datasets', 'long', 'statistics.json'), 'utf8'));
  assert.equal(statistics.compress.compressed, 1);
  assert.equal(statistics.compress.tokens_before, count(original!));
  assert.equal(statistics.compress.tokens_after, after);
  assert.equal(statistics.compress.turns_summarised, kept - 4);
  const card = readFileSync(join(directory, 'shaped', 'README.md'), 'utf8');
  assert.match(card, /\| budget \(tokens per record\) \| 15250 \|/);
  assert.match(card, new RegExp(`\\| tokenizer \\| ${QWEN3_FOLDER.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\|`));
  assert.match(card, /\| summariser model \| summariser \(/);
});

test('a compression killed with SIGKILL finishes on rerun, each record shaped exactly once', {
  todo: 'the child finishes before the kill: records land in a burst at the end (investigating)',
}, async (t) => {
  const { directory, server } = await longRun(t, 8, 0);
  // Each summary takes 1.5 s, so the kill lands while some records are shaped and others are not.
  const slow = await startScriptedServer((request) => ({ fault: 'delay', ms: 1500, then: longScript(request) }));
  t.after(() => slow.close());
  const store = join(directory, 'checkpoints', 'long.sqlite');
  const shapedRows = () => {
    const db = new Database(store, { readonly: true });
    try {
      return db.prepare(`SELECT shaped_key AS key, shaped_at AS at FROM shaped WHERE shaped_status = 'done'`).all() as {
        key: string;
        at: string;
      }[];
    } catch {
      return []; // the store may not hold the table yet
    } finally {
      db.close();
    }
  };
  const { child, done } = startCli(compressArgs(slow.url, ['--concurrency', '2']), { cwd: directory, env: KEY });
  let exited = false;
  void done.then(() => (exited = true));
  while (shapedRows().length < 2 && !exited) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(exited, false, `traj compress ended before the kill: ${(await done).stderr}`);
  child.kill('SIGKILL');
  const killed = await done;
  assert.equal(killed.signal, 'SIGKILL', `${shapedRows().length} rows; ${killed.stdout}${killed.stderr}`);
  const landed = shapedRows();
  assert.ok(landed.length >= 2 && landed.length < 8, `${landed.length} landed before the kill`);
  const askedBefore = slow.requests.length;

  const rerun = await runCli(compressArgs(server.url), { cwd: directory, env: KEY });
  assert.equal(rerun.code, 0, rerun.stderr);
  const after = shapedRows();
  assert.equal(after.length, 8);
  assert.equal(new Set(after.map((row) => row.key)).size, 8);
  // Rows that landed were not shaped again (their time is unchanged) and their records were not summarised again.
  for (const row of landed) assert.equal(after.find((other) => other.key === row.key)?.at, row.at);
  const landedTags = new Set(landed.map((row) => `tag-${row.key.slice(1)} `));
  const askedAgain = server.requests
    .map((request) => String(request.messages[0]?.content ?? ''))
    .filter((text) => text.startsWith(SUMMARY_ASK));
  assert.equal(askedAgain.length, 8 - landed.length);
  for (const text of askedAgain)
    for (const tag of landedTags) assert.ok(!text.includes(tag), `${tag} summarised twice`);
  assert.ok(askedBefore >= landed.length);
  assert.match(rerun.stdout, /records: 8 \(compressed 8,/);
});
