import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDockerSandbox } from '../../src/sandbox/docker.js';
import { DEFAULT_DOCKER_IMAGE } from '../../src/sandbox/docker-config.js';
import { pruneContainers } from '../../src/sandbox/docker-prune.js';
import { closeWarmPools, warmPoolCounts } from '../../src/sandbox/docker-warm-pool.js';

export interface WarmPoolOptions {
  /** Rollouts in flight (the run's concurrency). */
  concurrency?: number;
  /** Rollouts each of them runs, one after the other. */
  rounds?: number;
  /** What a rollout does between its first command and its end (the agent's turns), simulated. */
  rolloutMs?: number;
  image?: string;
}

/**
 * Request-to-first-exec time of a rollout's sandbox (what the agent waits before its first
 * command runs): from asking for the sandbox to the first command's result, with the warm pool
 * (a thread's spares per image, sized from the concurrency) and without it (create + start on
 * demand), in the same run: `concurrency` loops each run `rounds` rollouts that create a
 * sandbox, run `true` (exec; then, with the pool, once more in the persistent shell, as the
 * terminal tool does), hold it `rolloutMs`, then dispose it in the background as a run does.
 * The first round is a warm-up in every mode (the pool fills as rollouts ask: its first takes
 * are cold by design) and is not counted. Target: warm p50 ≤ 100 ms at c=8. The machine's load
 * average is saved beside the figures: on a shared 2-core machine other work dominates.
 */
export async function warmPoolBenchmark(options: WarmPoolOptions = {}): Promise<Record<string, unknown>> {
  const concurrency = options.concurrency ?? 8;
  const rounds = options.rounds ?? 6;
  const rolloutMs = options.rolloutMs ?? 2_000;
  const image = options.image ?? DEFAULT_DOCKER_IMAGE;
  const run = `bench-warm-pool-${process.pid}`;
  const loadBefore = Number(loadavg()[0]!.toFixed(2));
  const phase = { concurrency, rounds, rolloutMs, image, run };
  try {
    const cold = await measure({ ...phase, warm: 0, shell: false });
    const before = warmPoolCounts();
    const warm = await measure({ ...phase, warm: concurrency, shell: false });
    const after = warmPoolCounts();
    const shell = await measure({ ...phase, warm: concurrency, shell: true });
    const figures = {
      concurrency,
      rollouts: concurrency * rounds,
      counted: concurrency * (rounds - 1),
      load_average_1m_before: loadBefore,
      load_average_1m: Number(loadavg()[0]!.toFixed(2)),
      rollout_ms: rolloutMs,
      warm_first_exec_p50_ms: percentile(warm, 0.5),
      warm_first_exec_p95_ms: percentile(warm, 0.95),
      warm_first_shell_command_p50_ms: percentile(shell, 0.5),
      warm_first_shell_command_p95_ms: percentile(shell, 0.95),
      cold_first_exec_p50_ms: percentile(cold, 0.5),
      cold_first_exec_p95_ms: percentile(cold, 0.95),
      // The first round's takes find no spare by design; a take after it that finds none waits for a start.
      warm_takes: after.takes - before.takes,
      warm_takes_spare_ready: after.ready - before.ready,
      target_warm_p50_ms: 100,
    };
    process.stdout.write(
      `warm pool c=${concurrency}: request → first exec p50 ${figures.warm_first_exec_p50_ms} ms (p95 ${figures.warm_first_exec_p95_ms}, spare ready for ${figures.warm_takes_spare_ready} of ${figures.warm_takes} takes; first shell command p50 ${figures.warm_first_shell_command_p50_ms} ms); cold p50 ${figures.cold_first_exec_p50_ms} ms (p95 ${figures.cold_first_exec_p95_ms})\n`,
    );
    return figures;
  } finally {
    await closeWarmPools();
    await pruneContainers({ run, all: true });
  }
}

async function measure(input: {
  concurrency: number;
  rounds: number;
  rolloutMs: number;
  image: string;
  run: string;
  warm: number;
  /** Run the first command in the persistent shell (the terminal tool's) instead of exec. */
  shell: boolean;
}): Promise<number[]> {
  const timings: number[] = [];
  const disposals: Promise<void>[] = [];
  const loop = async (slot: number) => {
    for (let round = 0; round < input.rounds; round++) {
      const started = performance.now();
      const sandbox = await createDockerSandbox({
        kind: 'docker',
        image: input.image,
        run: input.run,
        key: `slot-${slot}`,
        ...(input.warm > 0 ? { warm: input.warm } : {}),
      });
      await (input.shell ? sandbox.execInShell('true') : sandbox.exec('true'));
      if (round > 0) timings.push(performance.now() - started);
      await sleep(input.rolloutMs);
      disposals.push(sandbox.dispose());
    }
  };
  await Promise.all(Array.from({ length: input.concurrency }, (_, slot) => loop(slot)));
  await Promise.all(disposals);
  await closeWarmPools();
  return timings;
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!);
}
