import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Every browser traj launches keeps its profile in `<tmp>/traj-chromium-<owner pid>-<random>`, so
 * the owner is written in the command line of the browser process itself. Chromium exits when
 * traj's end of its DevTools pipe closes, even after a SIGKILL, but the profile folder stays, and
 * a browser wedged mid-exit would too: the next start removes both for owners no longer alive.
 */
export const PROFILE_PREFIX = 'traj-chromium-';

export function profileRoot(): string {
  return tmpdir();
}

function ownerOf(name: string): number | undefined {
  const match = new RegExp(`^${PROFILE_PREFIX}(\\d+)-`).exec(name);
  return match ? Number(match[1]) : undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Process ids whose command line mentions this folder (a browser and the helpers it started). */
export function processesUsing(folder: string): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pids; // no procfs (macOS): only the folders are pruned
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(folder)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/** Kill the browsers and remove the profiles of traj processes that are gone; returns the folders removed. */
export async function pruneLeftoverBrowsers(root = profileRoot()): Promise<string[]> {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const stale = names.filter((name) => {
    const owner = ownerOf(name);
    return owner !== undefined && owner !== process.pid && !alive(owner);
  });
  for (const name of stale) {
    const folder = join(root, name);
    for (const pid of processesUsing(folder)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await rm(folder, { recursive: true, force: true });
  }
  return stale.map((name) => join(root, name));
}
