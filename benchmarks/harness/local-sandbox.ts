import { createLocalSandbox } from '../../src/sandbox/local.js';
import type { Sandbox } from '../../src/sandbox/sandbox.js';
import { closeSpawner } from '../../src/sandbox/spawner.js';

type Isolation = 'bwrap' | 'none';

/**
 * What bubblewrap costs a local rollout: `exec('true')` in a live sandbox (per-command overhead),
 * `execInShell('true')` (the terminal tool's persistent shell: a builtin starts no process) and
 * create + one command + dispose (per-rollout), sequentially, p50/p95 in ms, for local+bwrap
 * against local+none. Both go through the same spawn host, so the difference is bubblewrap's.
 */
export async function localSandboxBenchmark(iterations: number): Promise<Record<string, number>> {
  const figures: Record<string, number> = { iterations };
  for (const isolation of ['none', 'bwrap'] as Isolation[]) {
    await lifecycle(isolation); // warm-up: the spawn host, the bwrap probe, page cache
    const commands = await commandTimes(isolation, iterations, (sandbox) => sandbox.exec('true'));
    const shell = await commandTimes(isolation, iterations, (sandbox) => sandbox.execInShell('true'));
    const rollouts: number[] = [];
    for (let index = 0; index < iterations; index++) rollouts.push(await lifecycle(isolation));
    figures[`${isolation}_exec_p50_ms`] = percentile(commands, 50);
    figures[`${isolation}_exec_p95_ms`] = percentile(commands, 95);
    figures[`${isolation}_shell_p50_ms`] = percentile(shell, 50);
    figures[`${isolation}_shell_p95_ms`] = percentile(shell, 95);
    figures[`${isolation}_create_exec_dispose_p50_ms`] = percentile(rollouts, 50);
    figures[`${isolation}_create_exec_dispose_p95_ms`] = percentile(rollouts, 95);
  }
  figures.bwrap_exec_overhead_p50_ms = round(figures.bwrap_exec_p50_ms! - figures.none_exec_p50_ms!);
  figures.bwrap_rollout_overhead_p50_ms = round(
    figures.bwrap_create_exec_dispose_p50_ms! - figures.none_create_exec_dispose_p50_ms!,
  );
  await closeSpawner();
  return figures;
}

async function commandTimes(
  isolation: Isolation,
  iterations: number,
  run: (sandbox: Sandbox) => Promise<{ exitCode: number; stderr: string }>,
): Promise<number[]> {
  const sandbox = await create(isolation);
  try {
    const times: number[] = [];
    for (let index = 0; index < iterations; index++) {
      const started = performance.now();
      const result = await run(sandbox);
      if (result.exitCode !== 0) throw new Error(`true exited ${result.exitCode}: ${result.stderr}`);
      times.push(performance.now() - started);
    }
    return times;
  } finally {
    await sandbox.dispose();
  }
}

async function lifecycle(isolation: Isolation): Promise<number> {
  const started = performance.now();
  const sandbox = await create(isolation);
  try {
    await sandbox.exec('true');
  } finally {
    await sandbox.dispose();
  }
  return performance.now() - started;
}

function create(isolation: Isolation): Promise<Sandbox> {
  return createLocalSandbox({ kind: 'local', local: { isolation } });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
