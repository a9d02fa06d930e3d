import { spawn } from 'node:child_process';
import pLimit from 'p-limit';
import { createDockerSandbox } from '../../src/sandbox/docker.js';
import { DEFAULT_DOCKER_IMAGE } from '../../src/sandbox/docker-config.js';
import { pruneContainers } from '../../src/sandbox/docker-prune.js';

interface LifecycleTiming {
  total: number;
  create: number;
  exec: number;
  dispose: number;
}

interface Series {
  p50: number;
  p95: number;
  /** Completed lifecycles per second of wall time. */
  perSecond: number;
}

/**
 * The docker backend's per-rollout overhead: create + start + one exec + dispose, p50/p95 at
 * concurrency 1 and 8, measured in the same run as `docker run --rm IMAGE true` through the
 * docker CLI (the same work, container start to removal, as a user would do it by hand).
 */
export async function sandboxLifecycleBenchmark(
  options: { iterations?: number; image?: string } = {},
): Promise<Record<string, unknown>> {
  const iterations = options.iterations ?? 20;
  const image = options.image ?? DEFAULT_DOCKER_IMAGE;
  const run = `bench-sandbox-lifecycle-${process.pid}`;
  try {
    // Warm-up: engine connection, image layers in the page cache.
    await lifecycle(run, image, -1);
    await dockerRunTrue(image);

    const sequential = await measure(iterations, 1, (index) => lifecycle(run, image, index));
    const parallel = await measure(iterations, 8, (index) => lifecycle(run, image, index));
    const cliSequential = await measure(iterations, 1, () =>
      dockerRunTrue(image).then((total) => ({ total, create: 0, exec: 0, dispose: 0 })),
    );
    const cliParallel = await measure(iterations, 8, () =>
      dockerRunTrue(image).then((total) => ({ total, create: 0, exec: 0, dispose: 0 })),
    );

    const figures: Record<string, unknown> = {
      iterations,
      traj_c1_p50_ms: sequential.series.p50,
      traj_c1_p95_ms: sequential.series.p95,
      traj_c8_p50_ms: parallel.series.p50,
      traj_c8_p95_ms: parallel.series.p95,
      traj_c8_per_second: parallel.series.perSecond,
      traj_c1_steps_p50_ms: sequential.steps,
      docker_run_c1_p50_ms: cliSequential.series.p50,
      docker_run_c1_p95_ms: cliSequential.series.p95,
      docker_run_c8_p50_ms: cliParallel.series.p50,
      docker_run_c8_p95_ms: cliParallel.series.p95,
      docker_run_c8_per_second: cliParallel.series.perSecond,
    };
    printTable(sequential.series, parallel.series, cliSequential.series, cliParallel.series, sequential.steps);
    return figures;
  } finally {
    await pruneContainers({ run, all: true });
  }
}

async function lifecycle(run: string, image: string, index: number): Promise<LifecycleTiming> {
  const started = performance.now();
  const sandbox = await createDockerSandbox({ kind: 'docker', image, run, key: `iteration-${index}` });
  const created = performance.now();
  let executed = created;
  try {
    const result = await sandbox.exec('true');
    executed = performance.now();
    if (result.exitCode !== 0) throw new Error(`exec 'true' exited with ${result.exitCode}: ${result.stderr}`);
  } finally {
    await sandbox.dispose();
  }
  const disposed = performance.now();
  return {
    total: disposed - started,
    create: created - started,
    exec: executed - created,
    dispose: disposed - executed,
  };
}

async function measure(
  iterations: number,
  concurrency: number,
  once: (index: number) => Promise<LifecycleTiming>,
): Promise<{ series: Series; steps: Record<string, number> }> {
  const limit = pLimit(concurrency);
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: iterations }, (_, index) => limit(() => once(index))));
  const wall = performance.now() - started;
  const totals = results.map((timing) => timing.total);
  return {
    series: {
      p50: round(percentile(totals, 50)),
      p95: round(percentile(totals, 95)),
      perSecond: round((iterations / wall) * 1000, 2),
    },
    steps: {
      create_start: round(
        percentile(
          results.map((timing) => timing.create),
          50,
        ),
      ),
      exec: round(
        percentile(
          results.map((timing) => timing.exec),
          50,
        ),
      ),
      dispose: round(
        percentile(
          results.map((timing) => timing.dispose),
          50,
        ),
      ),
    },
  };
}

function dockerRunTrue(image: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('docker', ['run', '--rm', image, 'true'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve(performance.now() - started)
        : reject(new Error(`docker run exited with ${code}: ${stderr.trim()}`)),
    );
  });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

function round(value: number, digits = 0): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

function printTable(c1: Series, c8: Series, cli1: Series, cli8: Series, steps: Record<string, number>): void {
  const row = (name: string, series: Series) =>
    `   ${name.padEnd(50)}${String(series.p50).padStart(8)}${String(series.p95).padStart(8)}${String(series.perSecond).padStart(8)}`;
  const lines = [
    `   ${'lifecycle'.padEnd(50)}${'p50 ms'.padStart(8)}${'p95 ms'.padStart(8)}${'per s'.padStart(8)}`,
    row('traj docker sandbox, concurrency 1', c1),
    row('traj docker sandbox, concurrency 8', c8),
    row('docker run --rm IMAGE true (CLI), concurrency 1', cli1),
    row('docker run --rm IMAGE true (CLI), concurrency 8', cli8),
    `   steps at concurrency 1 (p50 ms): create+start ${steps.create_start}, exec ${steps.exec}, dispose ${steps.dispose}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
