import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { RunStatistics } from '../../src/run/run-statistics.js';
import { measureCli, scratchDirectory, startMockServer, writePrompts } from './processes.js';
import { scriptedBatchArgs } from '../../src/testing/index.js';

export interface AdaptiveConcurrencyOptions {
  prompts: number;
  /** The endpoint answers 429 to a request arriving while this many are being answered. */
  limit: number;
  latencyMs: number;
  /** Fixed levels tried to find the best fixed concurrency (the limit and 4× it are always run). */
  fixedLevels: number[];
  /** Rounds of adaptive, fixed at the limit and fixed at 4× it, alternating; each keeps its best. */
  rounds: number;
}

interface Measured {
  label: string;
  wall_s: number;
  rollouts_per_s: number;
  http_429: number;
  share_429: number;
  lowest_level: number;
  highest_level: number;
  series_points: number;
}

/**
 * `traj batch` (single-turn prompts, --concurrency 4×N) against `traj mock-server --rate-limit-above N`:
 * the adaptive default against fixed request caps (endpoint.adaptive: false, endpoint.concurrency) at
 * several levels.
 * Reports throughput relative to the best fixed level (goal ≥ 0.9), the share of calls that got a
 * 429 (goal < 5%), and the same for a fixed cap at 4×N, for contrast. The share of 429s is the
 * best round's; throughput is the best round of each configuration.
 */
export async function adaptiveConcurrencyBenchmark(
  options: AdaptiveConcurrencyOptions,
): Promise<Record<string, unknown>> {
  const loadBefore = loadavg()[0]!;
  const wideLevel = 4 * options.limit;
  // The machine is shared: the adaptive run and its two references alternate over the rounds and each
  // keeps its best round (load only ever slows a run), so a busy moment cannot decide the ratio.
  const contenders: Array<[string, number, boolean]> = [
    ['adaptive', wideLevel, true],
    [`fixed-${options.limit}`, options.limit, false],
    [`fixed-${wideLevel}`, wideLevel, false],
  ];
  const best = new Map<string, Measured>();
  const keep = (run: Measured) => {
    const known = best.get(run.label);
    if (!known || run.rollouts_per_s > known.rollouts_per_s) best.set(run.label, run);
  };
  for (let round = 0; round < options.rounds; round++) {
    const order = [...contenders.slice(round % 3), ...contenders.slice(0, round % 3)];
    for (const [label, level, adaptive] of order) keep(await measure(options, label, level, adaptive));
  }
  for (const level of options.fixedLevels.filter((level) => level !== options.limit && level !== wideLevel))
    keep(await measure(options, `fixed-${level}`, level, false));
  const adaptive = best.get('adaptive')!;
  const fixed = [...best.values()].filter((run) => run.label !== 'adaptive');
  const bestFixed = fixed.reduce((top, run) => (run.rollouts_per_s > top.rollouts_per_s ? run : top));
  const wide = best.get(`fixed-${wideLevel}`)!;
  return {
    prompts: options.prompts,
    endpoint_limit: options.limit,
    latency_ms: options.latencyMs,
    rounds: options.rounds,
    adaptive_max: wideLevel,
    adaptive_rollouts_per_s: adaptive.rollouts_per_s,
    best_fixed: bestFixed.label,
    best_fixed_rollouts_per_s: bestFixed.rollouts_per_s,
    adaptive_over_best_fixed: round(adaptive.rollouts_per_s / bestFixed.rollouts_per_s),
    adaptive_share_429: adaptive.share_429,
    adaptive_level_range: `${adaptive.lowest_level}..${adaptive.highest_level}`,
    [`fixed_${wideLevel}_over_best_fixed`]: round(wide.rollouts_per_s / bestFixed.rollouts_per_s),
    [`fixed_${wideLevel}_share_429`]: wide.share_429,
    runs: [adaptive, ...fixed.sort((a, b) => Number(a.label.slice(6)) - Number(b.label.slice(6)))],
    load_1min_before_after: `${loadBefore.toFixed(2)} / ${loadavg()[0]!.toFixed(2)}`,
  };
}

async function measure(
  options: AdaptiveConcurrencyOptions,
  label: string,
  concurrency: number,
  adaptive: boolean,
): Promise<Measured> {
  const scratch = scratchDirectory('traj-bench-aimd-');
  const server = await startMockServer([
    '--latency-ms',
    String(options.latencyMs),
    '--rate-limit-above',
    String(options.limit),
  ]);
  try {
    const dataset = join(scratch.path, 'prompts.jsonl');
    writePrompts(dataset, options.prompts, 'rate');
    const config = join(scratch.path, 'run.yaml');
    // Every configuration runs the same 4×N rollouts; only the request gate differs (a fixed cap is
    // endpoint.concurrency with adaptive off), so rollout overheads overlap the model calls alike.
    writeFileSync(config, adaptive ? '{}\n' : `endpoint:\n  adaptive: false\n  concurrency: ${concurrency}\n`);
    const measured = await measureCli(
      scriptedBatchArgs(dataset, label, server.url, 'NO_KEY', [
        '--config',
        config,
        '--toolsets',
        'file',
        '--max-turns',
        '1',
        '--concurrency',
        String(4 * options.limit),
      ]),
      { cwd: scratch.path },
    );
    if (measured.code !== 0)
      throw new Error(`traj batch (${label}) exited ${measured.code}: ${measured.stderr.slice(-2000)}`);
    const stats = JSON.parse(
      readFileSync(join(scratch.path, 'datasets', label, 'statistics.json'), 'utf8'),
    ) as RunStatistics;
    if (stats.prompts.done !== options.prompts) throw new Error(`${label}: ${stats.prompts.done} prompts done`);
    const levels = stats.concurrency.series.map(([, level]) => level);
    // One model call per prompt answered, plus every call refused.
    const calls = options.prompts + stats.concurrency.http_429;
    return {
      label,
      wall_s: round(measured.wall_ms / 1000),
      rollouts_per_s: round(options.prompts / (measured.wall_ms / 1000)),
      http_429: stats.concurrency.http_429,
      share_429: round(stats.concurrency.http_429 / calls),
      lowest_level: Math.min(...levels),
      highest_level: Math.max(...levels),
      series_points: levels.length,
    };
  } finally {
    await server.stop();
    scratch.remove();
  }
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
