import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { queueNameFor } from '../../src/queue/run-channel.js';
import { scriptedBatchArgs } from '../../src/testing/index.js';
import { openDatabase } from '../../src/util/sqlite.js';
import { startRedis, type RedisProcess } from '../../tests/helpers/redis.js';
import { machineDescription } from './bare-baseline.js';
import { createCpuQuotaGroup, joinGroupScript, type CpuQuotaGroup } from './cpu-quota.js';
import {
  CLI,
  machineBusyMs,
  measureCli,
  processCpuMs,
  scratchDirectory,
  startMockServer,
  threadCpuMs,
  writePrompts,
  type CliMeasurement,
  type MockServer,
} from './processes.js';

export interface ScaleOutOptions {
  /** CPU-bound rollouts per run (each one `terminal` call of ~0.1 s of CPU). */
  prompts: number;
  /** CPU of each simulated machine, in cores (its cgroup's CFS quota). */
  quota: number;
  /** Rollouts each worker runs at once in the CPU-bound runs. */
  workerConcurrency: number;
  /** Runs of each configuration; every headline figure is their median. */
  repeats: number;
  /** Trivially cheap rollouts (one model call, no tool) per run of the coordinator's limit. */
  cheapPrompts: number;
}

type Figures = Record<string, number | string | number[]>;

interface Setting {
  scratch: string;
  redis: RedisProcess;
  config: string;
}

/**
 * Scale-out over `--queue`: the same CPU-bound tool workload on 1 and on 3 `traj worker`
 * processes, each a simulated machine (a cgroup capped at `quota` cores), the coordinator, Redis
 * and the mock endpoint outside the caps. Then the coordinator's own limit with trivially cheap
 * rollouts (coordinatorLimitRuns). Cgroups and processes are removed at the end, also on a failure;
 * groups a killed benchmark left behind are removed by the next one (cpu-quota.ts).
 */
export async function scaleOutBenchmark(options: ScaleOutOptions): Promise<Figures> {
  const machine = machineDescription();
  const scratch = scratchDirectory('traj-bench-scale-out-');
  let redis: RedisProcess | undefined;
  try {
    redis = await startRedis();
    const config = join(scratch.path, 'run.yaml');
    // Plain processes, not bubblewrap: part of a sandbox's kernel work (namespace and mount
    // teardown) runs in kernel threads outside the worker's cgroup and would escape its cap.
    writeFileSync(config, 'local:\n  isolation: none\n');
    const setting: Setting = { scratch: scratch.path, redis, config };
    const cpu = await cpuBoundRuns(setting, options);
    const limit = await coordinatorLimitRuns(setting, options);
    return {
      cpu_model: machine.cpu_model,
      cores: machine.cores,
      load_before: machine.load_before.join(' '),
      temp_folder: machine.temp_folder,
      load_after: machineDescription().load_before.join(' '),
      ...cpu,
      ...limit,
    };
  } finally {
    await redis?.stop();
    scratch.remove();
  }
}

async function cpuBoundRuns(setting: Setting, options: ScaleOutOptions): Promise<Figures> {
  const script = fileURLToPath(new URL('./cpu-tool-script.js', import.meta.url));
  const server = await startMockServer(['--script', script]);
  try {
    const one: RunFigures[] = [];
    const three: RunFigures[] = [];
    // Interleaved, so a change in the machine's load falls on both configurations alike.
    for (let repeat = 0; repeat < options.repeats; repeat++) {
      one.push(await cpuBoundRun(setting, server, options, 1, repeat));
      three.push(await cpuBoundRun(setting, server, options, 3, repeat));
    }
    const speedups = one.map((run, index) => three[index]!.rollouts_per_s / run.rollouts_per_s);
    return {
      simulated_machines: `${three[0]!.cgroup} cgroups, ${options.quota} core each (CFS quota); coordinator, Redis and mock uncapped`,
      cpu_prompts: options.prompts,
      worker_concurrency: options.workerConcurrency,
      speedup_3_over_1_each: speedups.map(round),
      speedup_3_over_1_median: round(median(speedups)),
      wall_speedup_3_over_1_median: round(median(one.map((run, index) => run.wall_s / three[index]!.wall_s))),
      ...prefixed('one_worker', one),
      ...prefixed('three_workers', three),
    };
  } finally {
    await server.stop();
  }
}

interface RunFigures {
  cgroup: string;
  wall_s: number;
  /** Steady-state landing rate (see landingRate). */
  rollouts_per_s: number;
  /** The workers' CPU over the steady window, as a share of their quotas: ~1 means CPU-bound at the cap. */
  quota_used: number;
  /**
   * Of the scheduling periods in the window in which the workers ran, the share in which they used
   * up their quota. Below 1, they sometimes did not: idle for want of work, or held back by other
   * processes on the machine; `jobs_waiting_min` above 0 rules out the first.
   */
  quota_hit: number;
  /**
   * The fewest jobs waiting in Redis for a worker during the window, up to when the coordinator
   * queued its last prompt: above 0, it kept ahead of the workers.
   */
  jobs_waiting_min: number;
  /** The workers' CPU (tool included) per rollout landed in the steady window. */
  worker_cpu_ms_per_rollout: number;
  /** The coordinator's CPU per rollout landed in the steady window. */
  coordinator_cpu_ms_per_rollout: number;
}

async function cpuBoundRun(
  setting: Setting,
  server: MockServer,
  options: ScaleOutOptions,
  workers: number,
  repeat: number,
): Promise<RunFigures> {
  const groups: CpuQuotaGroup[] = [];
  const children: ChildProcess[] = [];
  try {
    for (let index = 0; index < workers; index++)
      groups.push(createCpuQuotaGroup(`r${repeat}-w${index}`, options.quota));
    await startWorkers(
      setting,
      children,
      groups.map((group) => ({ concurrency: options.workerConcurrency, threads: 1, group })),
    );
    const run = `cpu-${workers}w-${repeat}`;
    const queued = watchWaitingJobs(setting.redis.url, run);
    const inFlight = 16;
    const flags = ['--concurrency', String(inFlight)];
    const { measured, sampler } = await runCoordinator(setting, server, run, options.prompts, flags, {
      probes: (coordinator) => ({
        workers: () => sum(groups.map((group) => group.usageMs())),
        periods: () => sum(groups.map((group) => group.periods().total)),
        throttled: () => sum(groups.map((group) => group.periods().throttled)),
        coordinator: () => processCpuMs(coordinator()),
      }),
    }).finally(() => queued.stop());
    const slots = workers * options.workerConcurrency;
    // Two rounds of `slots` for warm-up (threads loading, workers attaching up to a poll apart),
    // then whole rounds, the last round (the tail) left out.
    const rounds = Math.max(1, Math.floor((options.prompts - 3 * slots) / slots));
    const landed = landingRate(setting.scratch, run, 2 * slots, 2 * slots + rounds * slots);
    const window = (name: string) => sampler.delta(name, landed.from, landed.to);
    return {
      cgroup: groups[0]!.version,
      wall_s: round(measured.wall_ms / 1000),
      rollouts_per_s: round(landed.perSecond),
      quota_used: round(window('workers') / (options.quota * workers * (landed.to - landed.from))),
      quota_hit: round(window('throttled') / Math.max(window('periods'), 1)),
      // Until the last prompt is queued: from then on the queue drains, as it must.
      jobs_waiting_min: queued.fewest(
        landed.from,
        Math.min(landed.to, landed.times[options.prompts - inFlight - 1] ?? 0),
      ),
      worker_cpu_ms_per_rollout: round(window('workers') / landed.count),
      coordinator_cpu_ms_per_rollout: round(window('coordinator') / landed.count),
    };
  } finally {
    await Promise.all(children.map(stopChild));
    for (const group of groups) group.remove();
  }
}

/**
 * The coordinator's limit: trivially cheap rollouts (one model call, no tool) on uncapped workers
 * with many slots, so that dispatching and landing is all the work there is. Twice per repeat:
 * - uncapped: the rate this machine reaches with every process sharing its cores, and the
 *   coordinator's main-thread CPU per rollout (a Node process dispatches and lands on one thread,
 *   so 1000 / that is the most one core could land);
 * - capped: the coordinator alone in a cgroup of `COORDINATOR_CORES`, so it and nothing else is
 *   saturated; the rate it lands there, per core, is its limit measured at saturation.
 */
async function coordinatorLimitRuns(setting: Setting, options: ScaleOutOptions): Promise<Figures> {
  const server = await startMockServer(['--tool-turns', '0']);
  try {
    const free: Record<string, number>[] = [];
    const capped: Record<string, number>[] = [];
    for (let repeat = 0; repeat < options.repeats; repeat++) {
      free.push(await coordinatorLimitRun(setting, server, options.cheapPrompts, `cheap-${repeat}`));
      capped.push(await cappedCoordinatorRun(setting, server, options.cheapPrompts, repeat));
    }
    const pick = (runs: Record<string, number>[], key: string) => runs.map((run) => run[key]!);
    return {
      cheap_prompts: options.cheapPrompts,
      uncapped_rollouts_per_s_each: pick(free, 'rollouts_per_s'),
      uncapped_rollouts_per_s_median: median(pick(free, 'rollouts_per_s')),
      uncapped_machine_busy_median: median(pick(free, 'machine_busy')),
      uncapped_coordinator_main_thread_busy_median: median(pick(free, 'main_thread_busy')),
      uncapped_coordinator_main_thread_cpu_ms_per_rollout_median: median(pick(free, 'main_thread_cpu_ms_per_rollout')),
      uncapped_coordinator_cpu_ms_per_rollout_median: median(pick(free, 'coordinator_cpu_ms_per_rollout')),
      uncapped_redis_cpu_ms_per_rollout_median: median(pick(free, 'redis_cpu_ms_per_rollout')),
      uncapped_workers_cpu_ms_per_rollout_median: median(pick(free, 'workers_cpu_ms_per_rollout')),
      uncapped_mock_cpu_ms_per_rollout_median: median(pick(free, 'mock_cpu_ms_per_rollout')),
      coordinator_main_thread_ceiling_per_s_median: median(
        pick(free, 'main_thread_cpu_ms_per_rollout').map((ms) => round(1000 / Math.max(ms, 0.001))),
      ),
      capped_coordinator_cores: COORDINATOR_CORES,
      capped_rollouts_per_s_each: pick(capped, 'rollouts_per_s'),
      capped_rollouts_per_s_median: median(pick(capped, 'rollouts_per_s')),
      capped_coordinator_quota_used_median: median(pick(capped, 'quota_used')),
      coordinator_limit_per_core_median: median(pick(capped, 'per_core')),
    };
  } finally {
    await server.stop();
  }
}

const LIMIT_WORKERS = 2;
const LIMIT_WORKER_CONCURRENCY = 128;
/** Small enough that the coordinator saturates while the workers, Redis and the mock have cores to spare. */
const COORDINATOR_CORES = 0.25;

async function cappedCoordinatorRun(
  setting: Setting,
  server: MockServer,
  prompts: number,
  repeat: number,
): Promise<Record<string, number>> {
  const group = createCpuQuotaGroup(`coordinator-${repeat}`, COORDINATOR_CORES);
  try {
    const run = await coordinatorLimitRun(setting, server, prompts, `capped-${repeat}`, group);
    return { ...run, per_core: round(run.rollouts_per_s! / COORDINATOR_CORES) };
  } finally {
    group.remove();
  }
}

async function coordinatorLimitRun(
  setting: Setting,
  server: MockServer,
  prompts: number,
  run: string,
  group?: CpuQuotaGroup,
): Promise<Record<string, number>> {
  const children: ChildProcess[] = [];
  try {
    await startWorkers(
      setting,
      children,
      Array.from({ length: LIMIT_WORKERS }, () => ({ concurrency: LIMIT_WORKER_CONCURRENCY, threads: 1 })),
    );
    const { sampler } = await runCoordinator(setting, server, run, prompts, ['--concurrency', '512'], {
      probes: (coordinator) => ({
        main: () => threadCpuMs(coordinator(), coordinator()),
        coordinator: () => processCpuMs(coordinator()),
        group: () => group?.usageMs() ?? 0,
        redis: () => processCpuMs(setting.redis.child.pid!),
        workers: () => sum(children.map((child) => processCpuMs(child.pid!))),
        mock: () => server.cpuMs(),
        machine: machineBusyMs,
      }),
      shellPrefix: group && joinGroupScript(group),
    });
    // The middle 80% of landings: past the start-up ramp, before the tail.
    const landed = landingRate(setting.scratch, run, Math.floor(prompts * 0.1), Math.floor(prompts * 0.9));
    const window = (name: string) => sampler.delta(name, landed.from, landed.to);
    const seconds = (landed.to - landed.from) / 1000;
    const perRollout = (name: string) => round(window(name) / landed.count);
    return {
      rollouts_per_s: round(landed.perSecond),
      machine_busy: round(window('machine') / 1000 / (seconds * machineDescription().cores)),
      main_thread_busy: round(window('main') / 1000 / seconds),
      main_thread_cpu_ms_per_rollout: perRollout('main'),
      coordinator_cpu_ms_per_rollout: perRollout('coordinator'),
      quota_used: group ? round(window('group') / 1000 / (seconds * group.cores)) : 0,
      redis_cpu_ms_per_rollout: perRollout('redis'),
      workers_cpu_ms_per_rollout: perRollout('workers'),
      mock_cpu_ms_per_rollout: perRollout('mock'),
    };
  } finally {
    await Promise.all(children.map(stopChild));
  }
}

/** A coordinator that has not finished by then is stuck (Redis gone, say): it is killed and the scenario fails. */
const COORDINATOR_DEADLINE_MS = 300_000;

/**
 * `traj batch --queue` for `prompts` rollouts, its counters sampled while it runs: `probes` reads
 * them, given the coordinator's pid (0 until it is spawned, and /proc readers give 0 for it).
 */
async function runCoordinator(
  setting: Setting,
  server: MockServer,
  run: string,
  prompts: number,
  flags: string[],
  launch: { probes: (coordinator: () => number) => Record<string, () => number>; shellPrefix?: string },
): Promise<{ measured: CliMeasurement; sampler: Sampler }> {
  const dataset = join(setting.scratch, `${run}.jsonl`);
  writePrompts(dataset, prompts, `${run} task`);
  const args = scriptedBatchArgs(dataset, run, server.url, 'NO_KEY', [
    '--config',
    setting.config,
    '--toolsets',
    'terminal',
    '--max-turns',
    '3',
    '--queue',
    setting.redis.url,
    ...flags,
  ]);
  let pid = 0;
  let late = false;
  const sampler = startSampler(launch.probes(() => pid));
  const deadline = setTimeout(() => {
    late = true;
    if (pid) process.kill(pid, 'SIGKILL');
  }, COORDINATOR_DEADLINE_MS);
  try {
    const measured = await measureCli(args, {
      cwd: setting.scratch,
      env: { NO_KEY: 'x' },
      onSpawn: (spawned) => (pid = spawned),
      shellPrefix: launch.shellPrefix,
    }).catch((error: unknown) => {
      throw late
        ? new Error(`coordinator of run '${run}' did not finish within ${COORDINATOR_DEADLINE_MS / 1000} s`)
        : error;
    });
    if (measured.code !== 0) throw new Error(`coordinator exited ${measured.code}: ${measured.stderr.slice(-1500)}`);
    return { measured, sampler };
  } finally {
    clearTimeout(deadline);
    sampler.stop();
  }
}

/**
 * How many of a run's jobs wait in Redis for a worker, read every 100 ms (BullMQ's wait list):
 * while some wait, no worker is idle for want of a job.
 */
function watchWaitingJobs(url: string, run: string): { stop(): void; fewest(from: number, to: number): number } {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  const samples: { at: number; waiting: number }[] = [];
  const key = `bull:${queueNameFor(run)}:wait`;
  const timer = setInterval(() => {
    client.llen(key).then(
      (waiting) => samples.push({ at: Date.now(), waiting }),
      () => undefined,
    );
  }, 100);
  return {
    stop: () => {
      clearInterval(timer);
      client.disconnect();
    },
    fewest: (from, to) => {
      const inside = samples.filter((sample) => sample.at >= from && sample.at <= to);
      return inside.length ? Math.min(...inside.map((sample) => sample.waiting)) : Number.NaN;
    },
  };
}

/**
 * Rollouts landed per second between the `from`-th and `to`-th landing (0-based, by the store's
 * landing time): a window of whole rounds leaves out start-up and the tail, and counts rollouts
 * that land in batches (a round of slots finishing together) exactly.
 */
function landingRate(
  scratch: string,
  run: string,
  from: number,
  to: number,
): { perSecond: number; from: number; to: number; count: number; times: number[] } {
  const db = openDatabase(join(scratch, 'checkpoints', `${run}.sqlite`));
  try {
    const times = (
      db.prepare(`SELECT updated_at FROM items WHERE status = 'done' ORDER BY updated_at`).pluck().all() as string[]
    ).map((at) => Date.parse(at));
    const last = Math.min(to, times.length - 1);
    const start = Math.min(from, last - 1);
    const count = last - start;
    const seconds = Math.max(times[last]! - times[start]!, 1) / 1000;
    return { perSecond: count / seconds, from: times[start]!, to: times[last]!, count, times };
  } finally {
    db.close();
  }
}

interface WorkerLaunch {
  concurrency: number;
  threads: number;
  /** The simulated machine it runs in; none: uncapped. */
  group?: CpuQuotaGroup;
}

/**
 * `traj worker` processes, started together (each capped one loads at its own cap's pace); resolves
 * once every one waits for jobs. Each is pushed to `children` as soon as it is spawned, so the
 * caller stops it even when another fails to start.
 */
async function startWorkers(setting: Setting, children: ChildProcess[], launches: WorkerLaunch[]): Promise<void> {
  await Promise.all(
    launches.map((launch) => {
      const child = spawnWorker(setting, launch);
      children.push(child);
      return untilWaiting(child);
    }),
  );
}

function spawnWorker(setting: Setting, launch: WorkerLaunch): ChildProcess {
  const args = [CLI, 'worker', '--queue', setting.redis.url, '--concurrency', String(launch.concurrency)];
  args.push('--threads', String(launch.threads));
  // The shell joins the group before it execs node, so not one instruction of the worker runs uncapped.
  const prefix = launch.group ? joinGroupScript(launch.group) : '';
  return spawn('sh', ['-c', `${prefix}exec "$0" "$@"`, process.execPath, ...args], {
    cwd: setting.scratch,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, NO_KEY: 'x' },
  });
}

function untilWaiting(child: ChildProcess): Promise<void> {
  let output = '';
  return new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
      if (output.includes('waiting for jobs')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`traj worker exited ${code} at start: ${output}`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

interface Sampler {
  stop(): void;
  /** How much a probe grew between two times (ms since the epoch), interpolated between samples. */
  delta(name: string, from: number, to: number): number;
}

/** Read cumulative counters (CPU ms, periods) every 100 ms, so their growth can be read over any window later. */
function startSampler(probes: Record<string, () => number>): Sampler {
  const samples: { at: number; values: Record<string, number> }[] = [];
  const take = () => {
    const values: Record<string, number> = {};
    // Counters only grow: a probe of a process that has exited (0) or a group already gone (throws) keeps the last value.
    for (const [name, probe] of Object.entries(probes))
      values[name] = Math.max(readProbe(probe), samples[samples.length - 1]?.values[name] ?? 0);
    samples.push({ at: Date.now(), values });
  };
  take();
  const timer = setInterval(take, 100);
  let stopped = false;
  const at = (name: string, time: number) => {
    const after = samples.findIndex((sample) => sample.at >= time);
    if (after <= 0) return samples[after === 0 ? 0 : samples.length - 1]!.values[name]!;
    const [a, b] = [samples[after - 1]!, samples[after]!];
    return a.values[name]! + ((b.values[name]! - a.values[name]!) * (time - a.at)) / Math.max(b.at - a.at, 1);
  };
  return {
    stop: () => {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      take();
    },
    delta: (name, from, to) => at(name, to) - at(name, from),
  };
}

function readProbe(probe: () => number): number {
  try {
    return probe();
  } catch {
    return 0;
  }
}

/** Each figure of each run as `<prefix>_<figure>_each`, and its median as `<prefix>_<figure>_median`. */
function prefixed(prefix: string, runs: RunFigures[]): Figures {
  const figures: Figures = {};
  for (const key of Object.keys(runs[0]!) as (keyof RunFigures)[]) {
    if (key === 'cgroup') continue;
    const values = runs.map((run) => run[key] as number);
    figures[`${prefix}_${key}_each`] = values;
    figures[`${prefix}_${key}_median`] = median(values);
  }
  return figures;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
