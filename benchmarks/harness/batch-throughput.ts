import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { measureCli, scratchDirectory, startMockServer } from './processes.js';

export interface BatchThroughputOptions {
  name: string;
  prompts: number;
  toolTurns: number;
  latencyMs: number;
  concurrency: number;
  toolsets: string;
  /** Local sandbox isolation (`local: {isolation}` in a run config); default: traj's own (auto). */
  isolation?: 'bwrap' | 'none';
}

/**
 * `traj batch` end to end as a user runs it (a CLI process with its worker threads) against the
 * scripted server in another process: wall time, CPU of all threads, peak RSS, and throughput
 * against the ideal (prompts × model calls per rollout × latency / concurrency).
 */
export async function batchThroughputBenchmark(options: BatchThroughputOptions): Promise<Record<string, number | string>> {
  const scratch = scratchDirectory('traj-bench-batch-');
  const server = await startMockServer(['--latency-ms', String(options.latencyMs), '--tool-turns', String(options.toolTurns)]);
  try {
    const dataset = join(scratch.path, 'prompts.jsonl');
    writeFileSync(dataset, Array.from({ length: options.prompts }, (_, index) => JSON.stringify({ prompt: `benchmark prompt ${index}` })).join('\n') + '\n');
    const config = join(scratch.path, 'run.yaml');
    writeFileSync(config, options.isolation ? `local:\n  isolation: ${options.isolation}\n` : '{}\n');
    const measured = await measureCli(
      ['batch', '--config', config, '--dataset', dataset, '--run', options.name, '--toolsets', options.toolsets, '--concurrency', String(options.concurrency), '--base-url', server.url, '--model', 'traj-scripted', '--api-key-env', 'NO_KEY', '--max-turns', String(options.toolTurns + 2)],
      { cwd: scratch.path },
    );
    if (measured.code !== 0) throw new Error(`traj batch exited ${measured.code}: ${measured.stderr.slice(-2000)}`);
    const callsPerRollout = options.toolTurns + 1;
    // Continuous dispatch bound: every slot busy all the time, no startup, no tool time.
    const idealSeconds = (options.prompts * callsPerRollout * (options.latencyMs / 1000)) / options.concurrency;
    const wallSeconds = measured.wall_ms / 1000;
    return {
      scenario: options.name,
      isolation: options.isolation ?? 'auto',
      prompts: options.prompts,
      tool_turns: options.toolTurns,
      latency_ms: options.latencyMs,
      in_flight: options.concurrency,
      wall_s: round(wallSeconds),
      cpu_s: round(measured.cpu_ms / 1000),
      children_cpu_s: round(measured.children_cpu_ms / 1000),
      achieved_rollouts_per_s: round(options.prompts / wallSeconds),
      ideal_rollouts_per_s: round(options.prompts / idealSeconds),
      achieved_over_ideal: round(idealSeconds / wallSeconds),
      harness_cpu_ms_per_rollout: round(measured.cpu_ms / options.prompts),
      tool_processes_cpu_ms_per_rollout: round(measured.children_cpu_ms / options.prompts),
      peak_rss_mb: measured.max_rss_mb,
    };
  } finally {
    await server.stop();
    scratch.remove();
  }
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
