import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { processOwnerAlive, thisProcessOwner } from './process-owner.js';
import { removeCgroup, sandboxCgroups } from './process-limit.js';

const PREFIX = 'traj-sbx-';
/** `traj-sbx-<owner pid>.<owner start ticks>-<random>`; older folders lack the owner. */
const OWNED_NAME = /^traj-sbx-(\d+)\.(\d*)-/;

/** The mkdtemp prefix of this process's sandbox folders: it names the owner, for prune. */
export function sandboxFolderPrefix(): string {
  const owner = thisProcessOwner();
  return `${PREFIX}${owner.pid}.${owner.start}-`;
}

export interface LocalPruneOptions {
  /** Also folders whose traj process still runs, and folders of older versions without an owner. */
  all?: boolean;
  /** Where to look (default: the OS temp dir). */
  directory?: string;
}

/**
 * Remove local sandbox folders (and their pids cgroups) left by traj processes that are gone:
 * crashed or SIGKILLed, so their dispose never ran. Returns how many folders were removed.
 */
export async function pruneSandboxFolders(options: LocalPruneOptions = {}): Promise<number> {
  const directory = options.directory ?? tmpdir();
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return 0;
  }
  const doomed = names.filter((name) => name.startsWith(PREFIX) && (options.all || ownerGone(name)));
  await Promise.all(doomed.map((name) => rm(join(directory, name), { recursive: true, force: true, maxRetries: 3 })));
  const cgroups = sandboxCgroups(PREFIX).filter((path) => options.all || ownerGone(basename(path)));
  await Promise.all(cgroups.map((path) => removeCgroup(path)));
  return doomed.length;
}

function ownerGone(name: string): boolean {
  const match = OWNED_NAME.exec(name);
  if (!match) return false;
  return !processOwnerAlive({ pid: Number(match[1]), start: match[2] ?? '' });
}
