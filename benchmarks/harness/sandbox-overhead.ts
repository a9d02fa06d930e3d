import { batchThroughputBenchmark, type BatchThroughputOptions } from './batch-throughput.js';

type Figures = Record<string, number | string | number[]>;

/**
 * The same batch under bubblewrap and unsandboxed, in alternating pairs against the same kind of
 * mock: each pair gives the ratios (wall, machine CPU per rollout, and where a cgroup can be made,
 * the CPU of traj's process tree per rollout), and the headline figures are their medians, so a
 * slow minute of the machine moves one pair, not the result.
 */
export async function sandboxOverheadBenchmark(
  options: Omit<BatchThroughputOptions, 'name' | 'isolation'>,
  pairs: number,
): Promise<Figures> {
  const measured: { bwrap: Figures; none: Figures; wall: number; cpu: number; tree: number }[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    const bwrap = await batchThroughputBenchmark({ ...options, name: 'batch-1000x3', isolation: 'bwrap' });
    const none = await batchThroughputBenchmark({ ...options, name: 'batch-1000x3-unsandboxed', isolation: 'none' });
    measured.push({
      bwrap,
      none,
      wall: ratio(bwrap.wall_s, none.wall_s),
      cpu: ratio(bwrap.machine_cpu_ms_per_rollout_less_mock, none.machine_cpu_ms_per_rollout_less_mock),
      tree: ratio(bwrap.tree_cpu_ms_per_rollout, none.tree_cpu_ms_per_rollout),
    });
  }
  const middle = [...measured].sort((a, b) => a.cpu - b.cpu)[Math.floor(measured.length / 2)]!;
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const trees = measured.map((pair) => pair.tree).filter((value) => Number.isFinite(value));
  return {
    ...middle.bwrap,
    unsandboxed_wall_s: middle.none.wall_s,
    unsandboxed_cpu_s: middle.none.cpu_s,
    unsandboxed_children_cpu_s: middle.none.children_cpu_s,
    unsandboxed_machine_cpu_ms_per_rollout_less_mock: middle.none.machine_cpu_ms_per_rollout_less_mock,
    pairs,
    bwrap_over_unsandboxed_wall_each: measured.map((pair) => pair.wall),
    bwrap_over_unsandboxed_machine_cpu_per_rollout_each: measured.map((pair) => pair.cpu),
    // Both sides of each pair's ratio: on a shared machine either one moves between runs.
    bwrap_machine_cpu_ms_per_rollout_each: measured.map((pair) =>
      Number(pair.bwrap.machine_cpu_ms_per_rollout_less_mock),
    ),
    unsandboxed_machine_cpu_ms_per_rollout_each: measured.map((pair) =>
      Number(pair.none.machine_cpu_ms_per_rollout_less_mock),
    ),
    bwrap_over_unsandboxed_wall: median(measured.map((pair) => pair.wall)),
    bwrap_over_unsandboxed_machine_cpu_per_rollout: middle.cpu,
    ...(trees.length === measured.length
      ? {
          unsandboxed_tree_cpu_ms_per_rollout: middle.none.tree_cpu_ms_per_rollout!,
          bwrap_over_unsandboxed_tree_cpu_per_rollout_each: trees,
          bwrap_over_unsandboxed_tree_cpu_per_rollout: median(trees),
        }
      : {}),
  };
}

/** A over B, to three decimals: how every scenario states one figure against its baseline. */
export function ratio(numerator: unknown, denominator: unknown): number {
  return Math.round((Number(numerator) / Number(denominator)) * 1000) / 1000;
}
