import { readFileSync } from 'node:fs';

/**
 * Which traj process owns a leftover (a container, a sandbox folder): its pid and the pid's
 * start time. A pid alone is not enough: after a crash the number can be reused.
 */
export interface ProcessOwner {
  pid: number;
  /** Field 22 of /proc/<pid>/stat; empty off Linux. */
  start: string;
}

let owner: ProcessOwner | undefined;

/** Read once: every sandbox folder and container names its owner, and /proc reads cost ~0.25 ms. */
export function thisProcessOwner(): ProcessOwner {
  owner ??= { pid: process.pid, start: processStartTicks(process.pid) ?? '' };
  return owner;
}

/** Whether the owner still runs: its pid exists and, when recorded, started at the same tick. */
export function processOwnerAlive(owner: ProcessOwner): boolean {
  if (!Number.isInteger(owner.pid) || owner.pid <= 0) return false;
  if (!pidExists(owner.pid)) return false;
  const current = processStartTicks(owner.pid);
  return !owner.start || current === undefined || owner.start === current;
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
export function processStartTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}
