import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import {
  machineBusyMs,
  measureCli,
  scratchDirectory,
  startMockServer,
  writePrompts,
  type MockServer,
} from './processes.js';
import { scriptedBatchArgs } from '../../src/testing/index.js';
import { machineDescription, runBareClient } from './bare-baseline.js';
import { createCpuQuotaGroup, type CpuQuotaGroup, joinGroupScript } from './cpu-quota.js';

export interface BatchThroughputOptions {
  name: string;
  prompts: number;
  toolTurns: number;
  latencyMs: number;
  concurrency: number;
  toolsets: string;
  /** A script module for the mock server (default: its echo script with `toolTurns` terminal calls). */
  script?: string;
  /** Local sandbox isolation (`local: {isolation}` in a run config); default: traj's own (auto). */
  isolation?: 'bwrap' | 'none';
  /** Runs against the same mock server (default 1). */
  runs?: number;
  /**
   * Also run the bare client (bare-client.ts) after each traj run, with the same requests at the
   * same concurrency against the same mock: traj's CPU per model call is then reported as a ratio
   * to the bare client's, a figure that holds across machines.
   */
  baseline?: boolean;
}

/**
 * `traj batch` end to end as a user runs it (a CLI process with its worker threads) against the
 * scripted server in another process: wall time, CPU of all threads, peak RSS, and throughput
 * against the ideal (prompts × model calls per rollout × latency / concurrency). With `runs` > 1,
 * the figures of the run with the median wall time, and every run's wall time beside them.
 */
export async function batchThroughputBenchmark(
  options: BatchThroughputOptions,
): Promise<Record<string, number | string | number[]>> {
  const script = options.script ? ['--script', options.script] : ['--tool-turns', String(options.toolTurns)];
  const machine = machineDescription();
  const server = await startMockServer(['--latency-ms', String(options.latencyMs), ...script]);
  try {
    const runs: Record<string, number | string>[] = [];
    for (let run = 0; run < (options.runs ?? 1); run++) {
      const measured = await measureRun(options, server);
      runs.push(options.baseline ? { ...measured, ...(await measureBare(options, server, measured)) } : measured);
    }
    const median = medianBy(runs, 'wall_s');
    const described = {
      ...median,
      cpu_model: machine.cpu_model,
      cores: machine.cores,
      load_before: machine.load_before.join(' '),
      temp_folder: machine.temp_folder,
    };
    if (runs.length === 1) return described;
    return {
      ...described,
      runs: runs.length,
      wall_s_each: runs.map((run) => Number(run.wall_s)),
      ...(options.baseline
        ? {
            // Both sides of each ratio: on a shared machine either one moves between runs.
            traj_cpu_ms_per_call_each: runs.map((run) => Number(run.traj_cpu_ms_per_call_with_children)),
            bare_cpu_ms_per_call_each: runs.map((run) => Number(run.bare_cpu_ms_per_call)),
            cpu_per_call_over_bare_each: runs.map((run) => Number(run.cpu_per_call_over_bare)),
            cpu_per_call_over_bare_median: Number(medianBy(runs, 'cpu_per_call_over_bare').cpu_per_call_over_bare),
            cpu_per_call_over_bare_calls_only_each: runs.map((run) => Number(run.cpu_per_call_over_bare_calls_only)),
          }
        : {}),
    };
  } finally {
    await server.stop();
  }
}

async function measureRun(
  options: BatchThroughputOptions,
  server: MockServer,
): Promise<Record<string, number | string>> {
  const scratch = scratchDirectory('traj-bench-batch-');
  const serverCpuBefore = server.cpuMs();
  const machineBefore = machineBusyMs();
  try {
    const dataset = join(scratch.path, 'prompts.jsonl');
    writePrompts(dataset, options.prompts, 'benchmark prompt');
    const config = join(scratch.path, 'run.yaml');
    writeFileSync(config, options.isolation ? `local:\n  isolation: ${options.isolation}\n` : '{}\n');
    const tree = treeGroup(options.name);
    const measured = await measureCli(
      scriptedBatchArgs(dataset, options.name, server.url, 'NO_KEY', [
        '--config',
        config,
        '--toolsets',
        options.toolsets,
        '--concurrency',
        String(options.concurrency),
        '--max-turns',
        String(options.toolTurns + 2),
      ]),
      { cwd: scratch.path, ...(tree ? { shellPrefix: joinGroupScript(tree) } : {}) },
    );
    const treeMs = tree?.usageMs();
    tree?.remove();
    if (measured.code !== 0) throw new Error(`traj batch exited ${measured.code}: ${measured.stderr.slice(-2000)}`);
    const serverCpuMs = server.cpuMs() - serverCpuBefore;
    const machineMs = machineBusyMs() - machineBefore;
    const callsPerRollout = options.toolTurns + 1;
    const modelCalls = options.prompts * callsPerRollout;
    // The latency bound: every slot busy all the time, no start-up, no tool time. A rollout is
    // whole (its calls run one after another in one slot), so the slots that run one more rollout
    // than the others set it: ceil(prompts / slots) rollouts of `callsPerRollout` calls each.
    const rolloutSeconds = callsPerRollout * (options.latencyMs / 1000);
    const idealSeconds = Math.ceil(options.prompts / options.concurrency) * rolloutSeconds;
    // The same work spread as if rollouts could be split across slots: below what any schedule reaches
    // when prompts is not a multiple of the slots (kept for comparison with earlier results).
    const fractionalIdealSeconds = (options.prompts * rolloutSeconds) / options.concurrency;
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
      ideal_s: round(idealSeconds),
      achieved_over_ideal: round(idealSeconds / wallSeconds),
      fractional_ideal_s: round(fractionalIdealSeconds),
      achieved_over_fractional_ideal: round(fractionalIdealSeconds / wallSeconds),
      harness_cpu_ms_per_rollout: round(measured.cpu_ms / options.prompts),
      harness_cpu_ms_per_model_call: round(measured.cpu_ms / modelCalls),
      mock_server_cpu_s: round(serverCpuMs / 1000),
      // With the mock on the same cores: the whole machine's CPU per call, traj and mock together.
      total_cpu_ms_per_model_call: round((measured.cpu_ms + serverCpuMs) / modelCalls),
      // Kernel time included: all cores' busy time over the run, less the mock server's share.
      machine_cpu_s: round(machineMs / 1000),
      machine_cpu_ms_per_rollout_less_mock: round((machineMs - serverCpuMs) / options.prompts),
      // traj and every process it started (spawn host, bubblewrap, zygote, inits, tool commands),
      // kernel time in their context included, from a cgroup: not moved by the rest of the machine,
      // but blind to kernel threads (a network namespace's teardown runs in one).
      ...(treeMs === undefined ? {} : { tree_cpu_ms_per_rollout: round(treeMs / options.prompts) }),
      first_rollout_start_ms:
        firstRolloutStart(join(scratch.path, 'datasets', options.name, 'trajectories.jsonl')) - measured.spawned_at,
      start_line: measured.stderr.split('\n').find((line) => line.includes('rollouts in flight')) ?? '',
      tool_processes_cpu_ms_per_rollout: round(measured.children_cpu_ms / options.prompts),
      peak_rss_mb: measured.max_rss_mb,
    };
  } finally {
    scratch.remove();
  }
}

/**
 * An uncapped cgroup to count traj's process tree in, where one can be made (root) in cgroup v1's
 * cpuacct hierarchy. Not in v2: traj makes each sandbox's pids cgroup under its own, and a v2
 * group with controllers for its children may hold no process itself.
 */
function treeGroup(name: string): CpuQuotaGroup | undefined {
  let group: CpuQuotaGroup;
  try {
    group = createCpuQuotaGroup(`tree-${name}`, availableParallelism());
  } catch {
    return undefined;
  }
  if (group.version === 'v1') return group;
  group.remove();
  return undefined;
}

function medianBy(runs: Record<string, number | string>[], key: string): Record<string, number | string> {
  const sorted = [...runs].sort((a, b) => Number(a[key]) - Number(b[key]));
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/**
 * The bare client on the same mock, same prompts and concurrency, right after traj's run. traj's
 * CPU counts its process (all threads, user + system, start-up included) and its children (spawn
 * hosts, tool commands); the bare client's is its whole process, start-up included, the same way.
 */
async function measureBare(
  options: BatchThroughputOptions,
  server: MockServer,
  traj: Record<string, number | string>,
): Promise<Record<string, number>> {
  const scratch = scratchDirectory('traj-bench-bare-');
  try {
    const bare = await runBareClient({
      baseUrl: server.url,
      prompts: options.prompts,
      concurrency: options.concurrency,
      toolsets: options.toolsets.split(','),
      folder: scratch.path,
    });
    const trajCalls = options.prompts * (options.toolTurns + 1);
    const trajCpuPerCall = ((Number(traj.cpu_s) + Number(traj.children_cpu_s)) * 1000) / trajCalls;
    const bareCpuPerCall = bare.cpu_ms / bare.calls;
    const bareCallsCpuPerCall = bare.calls_cpu_ms / bare.calls;
    return {
      bare_calls: bare.calls,
      bare_wall_s: round(bare.wall_ms / 1000),
      bare_achieved_over_ideal: round(Number(traj.ideal_s) / (bare.wall_ms / 1000)),
      bare_cpu_ms_per_call: round(bareCpuPerCall),
      traj_cpu_ms_per_call_with_children: round(trajCpuPerCall),
      cpu_per_call_over_bare: round(trajCpuPerCall / bareCpuPerCall),
      // Until 2026-11-27 the bare client's calls alone were counted against traj's whole process.
      bare_calls_only_cpu_ms_per_call: round(bareCallsCpuPerCall),
      cpu_per_call_over_bare_calls_only: round(trajCpuPerCall / bareCallsCpuPerCall),
    };
  } finally {
    scratch.remove();
  }
}

/** The earliest rollout start in the records: start-up time until the first model request goes out. */
function firstRolloutStart(trajectories: string): number {
  let earliest = Number.POSITIVE_INFINITY;
  for (const line of readFileSync(trajectories, 'utf8').split('\n')) {
    const at = /"started_at":\s*"([^"]+)"/.exec(line)?.[1];
    if (at) earliest = Math.min(earliest, Date.parse(at));
  }
  return earliest;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
