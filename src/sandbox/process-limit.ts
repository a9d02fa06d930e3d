import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { readFile, rmdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A per-sandbox process limit: a cgroup of the `pids` controller, where this process may create
 * one (root on most hosts; cgroup v1 `pids` hierarchy or a v2 tree delegating `pids`). RLIMIT_NPROC
 * is no substitute: the kernel never enforces it for root, and for other users it counts all their
 * processes, traj's own included, not one rollout's.
 */
let base: string | null | undefined;

/** The folder under which sandbox cgroups go, or undefined when no pids cgroup can be made here. */
export function pidsCgroupBase(): string | undefined {
  if (base === undefined) base = findBase() ?? null;
  return base ?? undefined;
}

function findBase(): string | undefined {
  let membership: string;
  try {
    membership = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return undefined;
  }
  const candidates: string[] = [];
  for (const line of membership.split('\n')) {
    const [, controllers, path] = line.split(':');
    if (path === undefined) continue;
    if (controllers?.split(',').includes('pids')) candidates.push(join('/sys/fs/cgroup/pids', path));
    if (controllers === '') candidates.push(join('/sys/fs/cgroup', path), join('/sys/fs/cgroup/unified', path));
  }
  for (const candidate of candidates) {
    if (usable(candidate)) return candidate;
  }
  return undefined;
}

/** Whether a child cgroup with a pids.max can be made (and removed) here. */
function usable(directory: string): boolean {
  if (!existsSync(directory)) return false;
  const probe = join(directory, `traj-probe-${process.pid}`);
  try {
    mkdirSync(probe);
  } catch {
    return false;
  }
  try {
    if (!existsSync(join(probe, 'pids.max'))) return false;
    writeFileSync(join(probe, 'pids.max'), '64');
    return true;
  } catch {
    return false;
  } finally {
    try {
      rmdirSync(probe);
    } catch {
      // Left for prune: an empty cgroup costs nothing.
    }
  }
}

/** A pids cgroup named `name` limited to `limit` processes; undefined when none can be had. */
export function createPidsCgroup(name: string, limit: number): string | undefined {
  const root = pidsCgroupBase();
  if (!root) return undefined;
  const directory = join(root, name);
  try {
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, 'pids.max'), String(limit));
    return directory;
  } catch {
    return undefined;
  }
}

/**
 * Emptied cgroups of this process, kept for the next sandbox: making and removing one costs
 * ~5 ms of machine CPU per sandbox under load (most of it kernel time no process is charged
 * for), about as much as the namespace itself. A reused cgroup is empty, and its limit is set
 * anew, so a sandbox still starts with nothing of another's.
 */
const spare: string[] = [];
const MAX_SPARE = 256;

/** A pids cgroup for a sandbox: an emptied one kept by this process if any, else a new one named `name`. */
export function acquirePidsCgroup(name: string, limit: number): string | undefined {
  for (let reused = spare.pop(); reused !== undefined; reused = spare.pop()) {
    try {
      writeFileSync(join(reused, 'pids.max'), String(limit));
      return reused;
    } catch {
      // Removed meanwhile (prune --all): try the next, or make one.
    }
  }
  return createPidsCgroup(name, limit);
}

/** Give a sandbox's cgroup back once its processes are gone: kept when empty, else removed. */
export async function releasePidsCgroup(directory: string): Promise<void> {
  const members = await readFile(join(directory, 'cgroup.procs'), 'utf8').catch(() => undefined);
  if (members === '' && spare.length < MAX_SPARE) {
    spare.push(directory);
    return;
  }
  await removeCgroup(directory);
}

/** Remove the kept cgroups (the process is going away). */
export function removeSpareCgroups(): void {
  for (const directory of spare.splice(0)) {
    try {
      rmdirSync(directory);
    } catch {
      // Left for prune, which removes the cgroups of owners that are gone.
    }
  }
}

/**
 * Remove a sandbox's cgroup once its processes are gone (they may take a moment to leave it).
 * Asynchronous on purpose: removing a cgroup waits in the kernel for tens of ms under load, and the
 * spawn host, which relays every command of its thread's sandboxes, must not stall meanwhile.
 */
export async function removeCgroup(directory: string): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      await rmdir(directory);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY') return;
      await killMembers(directory);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

async function killMembers(directory: string): Promise<void> {
  let pids: string[] = [];
  try {
    pids = (await readFile(join(directory, 'cgroup.procs'), 'utf8')).split('\n').filter(Boolean);
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

/** Sandbox cgroups (named like sandbox folders) under the base, for prune. */
export function sandboxCgroups(prefix: string): string[] {
  const root = pidsCgroupBase();
  if (!root) return [];
  try {
    return readdirSync(root)
      .filter((name) => name.startsWith(prefix))
      .map((name) => join(root, name));
  } catch {
    return [];
  }
}
