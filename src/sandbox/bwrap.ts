import { execFile } from 'node:child_process';
import { lstatSync, readdirSync, readlinkSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { pidsCgroupBase } from './process-limit.js';
import { baseEnvironment } from './scrub-environment.js';

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

export interface BwrapViewOptions {
  /** The sandbox folder: the only writable host folder, at the same path inside. */
  root?: string;
  workdir?: string;
  network: boolean;
  /** The probe's view: the system folders without the /etc masks (it runs only `perl -e 'exit 0'`). */
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

/**
 * bwrap's options for one sandbox: its own PID, IPC, UTS (and without network, network)
 * namespaces; the system read-only; a private /tmp; the sandbox folder writable; nothing of the
 * user's home or other sandboxes. It dies with its parent (the spawn host), and as root all
 * capabilities are dropped, so a command cannot mount its way out.
 */
export function bwrapOptions(view: BwrapViewOptions): string[] {
  const options = [
    bwrapBinary(),
    '--die-with-parent',
    '--new-session',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--hostname',
    'traj-sandbox',
    ...(view.network ? [] : ['--unshare-net']),
    ...(view.user ? ['--unshare-user', '--disable-userns'] : []),
    // An unprivileged user cannot read what the masks hide anyway: no mounts spent on them.
    ...(view.probe || view.user ? systemFolderOptions() : systemOptions()),
    '--proc',
    '/proc',
    // Kernel settings stay read-only even for a root inside: a writable core_pattern runs a
    // program of the sandbox's choosing as host root.
    '--ro-bind',
    '/proc/sys',
    '/proc/sys',
    '--ro-bind-try',
    '/proc/sysrq-trigger',
    '/proc/sysrq-trigger',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--tmpfs',
    '/var/tmp',
    '--tmpfs',
    '/run',
    // With the network on, name resolution may go through systemd-resolved's socket folder.
    ...(view.network ? ['--ro-bind-try', '/run/systemd/resolve', '/run/systemd/resolve'] : []),
    ...(view.root ? ['--bind', view.root, view.root] : []),
    ...(view.workdir ? ['--chdir', view.workdir] : []),
    ...(process.getuid?.() === 0 ? ['--cap-drop', 'ALL'] : []),
  ];
  return options;
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
 * Whether bubblewrap can make a sandbox here: the binary exists, the kernel lets it create the
 * namespaces, and perl (the sandbox's init) runs inside. As root it is asked first as the
 * unprivileged sandbox user. Asked once per thread (~15 ms: a bwrap and a perl); a run asks in
 * its main thread and hands the answer to its rollouts.
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
  const [binary, ...options] = bwrapOptions({ network: false, probe: true, user });
  return new Promise((resolve) => {
    execFile(
      binary!,
      [...options, 'perl', '-e', 'exit 0'],
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
