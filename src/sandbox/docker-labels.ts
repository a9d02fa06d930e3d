import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

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
  const pid = Number(labels[LABELS.pid]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (!pidExists(pid)) return false;
  const recorded = labels[LABELS.pidStart];
  const current = processStartTicks(pid);
  return !recorded || current === undefined || recorded === current;
}

/** True for containers owned by this very process (the shutdown path of a run). */
export function ownedByThisProcess(labels: Record<string, string>): boolean {
  return labels[LABELS.host] === hostname() && labels[LABELS.pid] === String(process.pid);
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); undefined off Linux. */
function processStartTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}
