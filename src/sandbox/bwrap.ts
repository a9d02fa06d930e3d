import { execFile } from 'node:child_process';
import { lstatSync, readdirSync, readlinkSync, type Stats } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { errorMessage } from '../errors.js';
import { pidsCgroupBase } from './process-limit.js';
import { baseEnvironment } from './scrub-environment.js';
import { zygoteCommand } from './zygote.js';
import { PRIVATE_FOLDERS } from './zygote-script.js';

/** The bubblewrap binary: `TRAJ_BWRAP` names another one (tests point it at a missing path). */
export function bwrapBinary(): string {
  return process.env.TRAJ_BWRAP || 'bwrap';
}

/** Host folders that make up the read-only system view (the rest of the host is not there). */
const SYSTEM_PATHS = ['/usr', '/etc', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** /etc entries are walked this deep for files only their owner may read (see masks()). */
const ETC_DEPTH = 6;

let systemFolders: string[] | undefined;
let systemView: string[] | undefined;

/**
 * bwrap options for the system view: each system folder read-only (merged-/usr symlinks kept as
 * symlinks), and, when traj runs as root, every /etc entry that other users cannot read hidden
 * behind an empty file or folder (/etc/shadow, private TLS keys, a docker key): the sandbox sees
 * the system as an unprivileged user would.
 */
function systemOptions(): string[] {
  systemView ??= [...systemFolderOptions(), ...(process.getuid?.() === 0 ? masks('/etc', ETC_DEPTH) : [])];
  return systemView;
}

/** The system folders alone: enough for the probe, which need not walk /etc (~20 ms as root). */
function systemFolderOptions(): string[] {
  if (systemFolders) return systemFolders;
  const options: string[] = [];
  for (const path of SYSTEM_PATHS) {
    let info: Stats;
    try {
      info = lstatSync(path);
    } catch {
      continue;
    }
    if (info.isSymbolicLink()) options.push('--symlink', readlinkSync(path), path);
    else if (info.isDirectory()) options.push('--ro-bind', path, path);
  }
  systemFolders = options;
  return options;
}

function masks(directory: string, depth: number): string[] {
  const options: string[] = [];
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch {
    return options;
  }
  for (const name of names) {
    const path = join(directory, name);
    let info: Stats;
    try {
      info = lstatSync(path);
    } catch {
      continue;
    }
    const othersMay = (bits: number) => (info.mode & bits) === bits;
    if (info.isDirectory()) {
      if (!othersMay(0o005)) options.push('--tmpfs', path);
      else if (depth > 0) options.push(...masks(path, depth - 1));
    } else if (info.isFile() && !othersMay(0o004)) {
      options.push('--ro-bind', '/dev/null', path);
    }
  }
  return options;
}

export interface ZygoteViewOptions {
  /** The folder holding the sandboxes' folders (the temp dir): the zygote sees it at its staging folder. */
  staging?: string;
  /** A folder every sandbox of this zygote works in (--workdir), at the same path inside. */
  folder?: string;
  /** The probe's view: the system folders without the /etc masks. */
  probe?: boolean;
  /**
   * Commands run as this unprivileged user, in a user namespace of their own (set when traj runs
   * as root): root inside maps to nobody outside, so no capability or kernel interface reaches the host.
   */
  user?: SandboxUser;
}

/** A host user that sandboxed commands run as. */
export interface SandboxUser {
  uid: number;
  gid: number;
}

/** The user commands run as when traj is root: nobody (65534), unless TRAJ_SANDBOX_UID names another. */
export function unprivilegedUser(): SandboxUser {
  const uid = Number(process.env.TRAJ_SANDBOX_UID ?? 65534);
  const gid = Number(process.env.TRAJ_SANDBOX_GID ?? uid);
  return { uid, gid };
}

/** Where the zygote sees the folder that holds every sandbox folder (covered in each sandbox). */
const STAGING = '/.traj/sandboxes';
/** Where the zygote sees a --workdir folder. */
const WORK_FOLDER = '/.traj/folder';

const inside = (path: string, folder: string) => `${path}/`.startsWith(`${folder}/`);
const privateFolder = (path: string) => PRIVATE_FOLDERS.some((folder) => inside(path, folder));
/** Where the zygote sees a --workdir folder: at its own path, unless a sandbox's fresh tmpfs covers that. */
const workFolderSource = (folder: string) => (privateFolder(folder) ? WORK_FOLDER : folder);

/** Where a zygote made with `view` sees a sandbox's folder, and where the sandbox has it. */
export function zygoteFolder(view: ZygoteViewOptions, folder: string): { source: string; path: string } {
  if (view.folder !== undefined) return { source: workFolderSource(folder), path: folder };
  return { source: `${STAGING}/${basename(folder)}`, path: folder };
}

/**
 * bubblewrap's options for a zygote (zygote-script.ts): the system read-only, the host's /proc
 * (which the kernel wants visible before it lets a sandbox mount its own), a minimal /dev, the
 * folders each sandbox mounts afresh, and the sandbox folders themselves; the root read-only.
 * With a user namespace (as nobody when traj is root, else as traj's user) its capabilities are
 * the namespace's only, and no further user namespace can be made inside (`--disable-userns`).
 * The zygote holds nothing a sandbox could use: each drops every capability before it runs anything.
 */
export function zygoteOptions(view: ZygoteViewOptions): string[] {
  const userNamespace = view.user !== undefined || process.getuid?.() !== 0;
  const staging = view.staging;
  return [
    bwrapBinary(),
    '--die-with-parent',
    '--new-session',
    ...(userNamespace ? ['--unshare-user', '--disable-userns'] : []),
    '--cap-add',
    'ALL',
    // An unprivileged user cannot read what the masks hide anyway: no mounts spent on them.
    ...(view.probe || view.user ? systemFolderOptions() : systemOptions()),
    '--bind',
    '/proc',
    '/proc',
    '--dev',
    '/dev',
    // Each sandbox's POSIX message queues show there (zygote-script.ts mounts).
    '--dir',
    '/dev/mqueue',
    ...['/tmp', '/var/tmp', '/run', '/.traj'].flatMap((path) => ['--dir', path]),
    ...(staging ? ['--bind', staging, STAGING, ...(privateFolder(staging) ? [] : ['--dir', staging])] : []),
    ...(view.folder ? ['--bind', view.folder, workFolderSource(view.folder)] : []),
    // With the network on, name resolution may go through systemd-resolved's socket folder.
    '--ro-bind-try',
    '/run/systemd/resolve',
    '/.traj/resolve',
    // Every sandbox shares this view: nothing in it may take a write (each mounts its own /tmp,
    // /var/tmp, /run, /dev/shm and /dev/pts on top).
    '--remount-ro',
    '/',
    '--remount-ro',
    '/dev',
  ];
}

export const BwrapStatusSchema = z.discriminatedUnion('usable', [
  z.object({
    usable: z.literal(true),
    /**
     * Set when traj runs as root but commands cannot run as an unprivileged user in a user
     * namespace here (the kernel refuses one to that user): why. They then run as root with no
     * capabilities, /proc/sys read-only and the seccomp filter.
     */
    rootInside: z.string().optional(),
  }),
  z.object({ usable: z.literal(false), reason: z.string() }),
]);
export type BwrapStatus = z.infer<typeof BwrapStatusSchema>;

let probe: Promise<BwrapStatus> | undefined;
let probedBinary: string | undefined;

/**
 * Whether bubblewrap can make a sandbox here: the binary exists, and a zygote inside it
 * (zygote-script.ts) can make one sandbox all the way: namespaces, mounts, capabilities dropped,
 * seccomp loaded. As root it is asked first as the unprivileged sandbox user. Asked once per thread
 * (~20 ms: a bwrap and a perl); a run asks in its main thread and hands the answer to its rollouts.
 */
export function bwrapStatus(): Promise<BwrapStatus> {
  if (probe && probedBinary === bwrapBinary()) return probe;
  probedBinary = bwrapBinary();
  probe = (async (): Promise<BwrapStatus> => {
    if (process.getuid?.() !== 0) return probeAs(undefined);
    const unprivileged = await probeAs(unprivilegedUser());
    if (unprivileged.usable) return unprivileged;
    const asRoot = await probeAs(undefined);
    // When bubblewrap fails as root too, the problem is bubblewrap itself: say that.
    return asRoot.usable ? { usable: true, rootInside: unprivileged.reason } : asRoot;
  })();
  return probe;
}

function probeAs(user: SandboxUser | undefined): Promise<BwrapStatus> {
  let command: string[];
  try {
    command = zygoteCommand({ bwrap: zygoteOptions({ probe: true, user }), seccomp: true }, true);
  } catch (error) {
    return Promise.resolve({ usable: false, reason: errorMessage(error) });
  }
  const [binary, ...options] = command;
  return new Promise((resolve) => {
    execFile(
      binary!,
      options,
      { env: baseEnvironment(), timeout: 10_000, ...(user ? { uid: user.uid, gid: user.gid } : {}) },
      (error, _stdout, stderr) => {
        if (!error) return resolve({ usable: true });
        const code = (error as NodeJS.ErrnoException).code;
        const reason =
          code === 'ENOENT'
            ? `${binary} not found (install the bubblewrap package)`
            : `${binary}${user ? ` as uid ${user.uid}` : ''} failed: ${stderr.trim() || error.message}`;
        resolve({ usable: false, reason });
      },
    );
  });
}

/** Whether a per-sandbox process limit (a pids cgroup) can be set here. */
export function processLimitAvailable(): boolean {
  return pidsCgroupBase() !== undefined;
}
