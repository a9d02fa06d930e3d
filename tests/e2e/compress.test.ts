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

  const spentBefore = JSON.parse(readFileSync(join(directory, 'datasets', 'long', 'statistics.json'), 'utf8')).cost
    .spent_usd;
  // The summariser's price: its calls' cost goes into the run's spend.
  writeFileSync(join(directory, 'priced.yaml'), 'pricing:\n  summariser: { input: 1000, output: 2000 }\n');
  const compressed = await runCli(compressArgs(server.url, ['--config', 'priced.yaml']), {
    cwd: directory,
    env: KEY,
  });
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
  // One summary call at the wire, its usage in the statistics and its cost in the run's spend.
  const summaries = server.requests.filter((request) => String(request.messages[0]?.content).startsWith(SUMMARY_ASK));
  assert.equal(summaries.length, 1);
  const { summary_prompt_tokens: prompt, summary_completion_tokens: completion } = statistics.compress;
  assert.ok(prompt > 1000 && completion > 0, `${prompt} + ${completion}`);
  const cost = (prompt * 1000 + completion * 2000) / 1e6;
  assert.ok(Math.abs(statistics.compress.summary_cost_usd - cost) < 1e-7, `${statistics.compress.summary_cost_usd}`);
  assert.ok(Math.abs(statistics.cost.spent_usd - (spentBefore + cost)) < 1e-7, `${statistics.cost.spent_usd}`);
  const card = readFileSync(join(directory, 'shaped', 'README.md'), 'utf8');
  assert.match(card, /\| budget \(tokens per record\) \| 15250 \|/);
  assert.match(card, new RegExp(`\\| tokenizer \\| ${QWEN3_FOLDER.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\|`));
  assert.match(card, /\| summariser model \| summariser \(/);
});

test('a compression killed with SIGKILL finishes on rerun, each record shaped exactly once', async (t) => {
  const { directory } = await longRun(t, 8, 0);
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
  while (shapedRows().length < 2 && !exited) await new Promise((resolve) => setTimeout(resolve, 50));
  // Not `(await done)` in the message: that waits for the child to end before the kill is sent.
  assert.equal(exited, false, 'traj compress ended before the kill');
  child.kill('SIGKILL');
  const killed = await done;
  assert.equal(killed.signal, 'SIGKILL', `${shapedRows().length} rows; ${killed.stdout}${killed.stderr}`);
  const landed = shapedRows();
  assert.ok(landed.length >= 2 && landed.length < 8, `${landed.length} landed before the kill`);

  const askedBeforeKill = [...slow.requests];

  // The same settings (the same summariser) as the killed run: others would be refused.
  const rerun = await runCli(compressArgs(slow.url), { cwd: directory, env: KEY });
  assert.equal(rerun.code, 0, rerun.stderr);
  assert.match(rerun.stdout, /records: 8 \(compressed 8,/);
  assert.match(rerun.stdout, new RegExp(`${8 - landed.length} records shaped now`));
  const after = shapedRows();
  assert.equal(after.length, 8);
  assert.equal(new Set(after.map((row) => row.key)).size, 8);
  // Rows that landed were not written again: their time is unchanged.
  for (const row of landed) assert.equal(after.find((other) => other.key === row.key)?.at, row.at);
  // At the wire, per record: a landed record was summarised once, by the killed run; any other record once by
  // the rerun (and at most once by the killed run, whose reply the kill lost).
  const asked = (requests: ChatRequest[], key: string) =>
    requests
      .map((request) => String(request.messages[0]?.content ?? ''))
      .filter((text) => text.startsWith(SUMMARY_ASK) && text.includes(`tag-${key.slice(1)} `)).length;
  const landedKeys = new Set(landed.map((row) => row.key));
  for (const { key } of after) {
    const before = asked(askedBeforeKill, key);
    const again = asked(slow.requests.slice(askedBeforeKill.length), key);
    if (landedKeys.has(key)) assert.deepEqual([before, again], [1, 0], `${key}: landed, asked ${before} + ${again}`);
    else assert.ok(again === 1 && before <= 1, `${key}: not landed, asked ${before} before and ${again} on rerun`);
  }
  const db = new Database(store, { readonly: true });
  t.after(() => db.close());
  const calls = db.prepare('SELECT shaped_key AS key, summary_calls AS calls FROM shaped').all() as {
    key: string;
    calls: number;
  }[];
  assert.deepEqual(
    calls.map((row) => row.calls),
    Array(8).fill(1),
  );
});

test("the summariser's requests in flight are capped by its endpoint's concurrency, never above --concurrency", async (t) => {
  const { directory } = await longRun(t, 9);
  // Each summary takes 1.5 s, so the records waiting for one pile up at the summariser's gate.
  const slowSummariser = () =>
    startScriptedServer((request) => ({ fault: 'delay', ms: 1500, then: longScript(request) }));
  const capped = await slowSummariser();
  t.after(() => capped.close());
  writeFileSync(join(directory, 'capped.yaml'), 'auxiliary:\n  summarizer:\n    concurrency: 3\n');
  const first = await runCli(compressArgs(capped.url, ['--config', 'capped.yaml', '--concurrency', '8']), {
    cwd: directory,
    env: KEY,
  });
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /records: 9 \(compressed 9,/);
  assert.equal(capped.requests.length, 9);
  assert.equal(capped.maxInFlight(), 3, 'the endpoint allows 3 requests in flight; 8 records were shaped at once');

  // No cap on the endpoint: --concurrency (2 records at once) bounds its requests.
  const uncapped = await slowSummariser();
  t.after(() => uncapped.close());
  const second = await runCli(compressArgs(uncapped.url, ['--force', '--concurrency', '2']), {
    cwd: directory,
    env: KEY,
  });
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /9 records shaped now/);
  assert.equal(uncapped.requests.length, 9);
  assert.equal(uncapped.maxInFlight(), 2);
});
