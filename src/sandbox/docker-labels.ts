import { hostname } from 'node:os';
import { processOwnerAlive, processStartTicks } from './process-owner.js';

/** Labels on every container traj creates; prune and leak checks filter on them. */
export const LABELS = {
  managed: 'traj.managed',
  run: 'traj.run',
  key: 'traj.key',
  /** The traj process that owns the container: host, pid, and the pid's start time. */
  host: 'traj.host',
  pid: 'traj.pid',
  pidStart: 'traj.pid-start',
} as const;

export function containerLabels(run: string | undefined, key: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {
    [LABELS.managed]: '1',
    [LABELS.host]: hostname(),
    [LABELS.pid]: String(process.pid),
    [LABELS.pidStart]: processStartTicks(process.pid) ?? '',
  };
  if (run !== undefined) labels[LABELS.run] = run;
  if (key !== undefined) labels[LABELS.key] = key;
  return labels;
}

/**
 * Whether the process that created a container still runs. A pid alone is not enough: after
 * a crash the number can be reused, so the start time recorded beside it must match too.
 * A container of another host (a shared remote engine) counts as in use: we cannot tell.
 */
export function ownerAlive(labels: Record<string, string>): boolean {
  if (labels[LABELS.host] !== hostname()) return true;
  return processOwnerAlive({ pid: Number(labels[LABELS.pid]), start: labels[LABELS.pidStart] ?? '' });
}

/** True for containers owned by this very process (the shutdown path of a run). */
export function ownedByThisProcess(labels: Record<string, string>): boolean {
  return labels[LABELS.host] === hostname() && labels[LABELS.pid] === String(process.pid);
}
