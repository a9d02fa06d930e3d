import { lchownSync, mkdtempSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { lchown, mkdir, readdir, realpath, rm, stat } from 'node:fs/promises';
import { threadId } from 'node:worker_threads';
import { basename, dirname, join } from 'node:path';
import { errorMessage, SandboxError } from '../errors.js';
import {
  type BwrapStatus,
  bwrapStatus,
  processLimitAvailable,
  type SandboxUser,
  unprivilegedUser,
  zygoteFolder,
  zygoteOptions,
} from './bwrap.js';
import {
  type ConfinedFolder,
  downloadConfined,
  readConfined,
  resolveConfined,
  uploadConfined,
  writeConfined,
} from './confined-files.js';
import { registerLiveSandbox } from './live-sandboxes.js';
import { parseLocalSandboxConfig, type LocalSandboxConfig } from './local-config.js';
import { sandboxFolderPrefix } from './local-prune.js';
import type { NamespaceSpec } from './namespace-session.js';
import { PersistentShell } from './persistent-shell.js';
import { killProcessGroup, processGroupAlive } from './process-group.js';
import type { ExecOptions, ExecResult, Sandbox, SandboxOptions, ShellResult } from './sandbox.js';
import { baseEnvironment, scrubEnvironment } from './scrub-environment.js';
import { SHELL_ARGV } from './shell-protocol.js';
import { closeSession, openSession, openShell, runCommand } from './spawner.js';

export type LocalIsolation =
  | { mode: 'bwrap'; rootInside?: string }
  | { mode: 'none'; requested: 'auto' | 'none'; reason?: string };

/**
 * What `isolation` gives here: 'bwrap' when asked for (an error if bubblewrap is unusable),
 * 'none' when asked for, and for 'auto' bwrap when usable, else none with the reason.
 */
export async function resolveLocalIsolation(config: LocalSandboxConfig, known?: BwrapStatus): Promise<LocalIsolation> {
  if (config.isolation === 'none') return { mode: 'none', requested: 'none' };
  const status = known ?? (await bwrapStatus());
  if (status.usable) return status.rootInside ? { mode: 'bwrap', rootInside: status.rootInside } : { mode: 'bwrap' };
  if (config.isolation === 'auto') return { mode: 'none', requested: 'auto', reason: status.reason };
  throw new SandboxError(
    `local sandbox isolation 'bwrap' is not available: ${status.reason} (set isolation: none to run commands as plain processes)`,
    {
      code: 'isolation_unavailable',
    },
  );
}

/**
 * The warning a user must see once per invocation when local sandboxes are less isolated than
 * they could be (bubblewrap unusable, or no process limit), naming what is not isolated; undefined
 * when nothing is missing or the user chose `isolation: none`. Throws for `isolation: bwrap`
 * when bubblewrap cannot be had.
 */
export async function localIsolationWarning(local: Record<string, unknown> | undefined): Promise<string | undefined> {
  const config = parseLocalSandboxConfig(local);
  const isolation = await resolveLocalIsolation(config);
  if (isolation.mode === 'none') {
    if (isolation.requested === 'none') return undefined;
    return [
      `[traj] WARNING: local sandboxes are NOT isolated: bubblewrap is unusable here (${isolation.reason}).`,
      '[traj]   Tool commands run as plain processes of your user: they can read and write your files outside the',
      '[traj]   sandbox folder, read /proc/PID/environ of traj (API keys included), reach the network, outlive the',
      '[traj]   rollout through setsid, and fork without limit. Install bubblewrap, use --sandbox docker, or set',
      "[traj]   'local: {isolation: none}' in the run config to accept this.",
    ].join('\n');
  }
  if (isolation.rootInside) {
    return [
      `[traj] warning: sandboxed commands run as root (without capabilities, /proc/sys read-only, seccomp on): the kernel`,
      `[traj]   refuses a user namespace to the unprivileged sandbox user here (${isolation.rootInside}).`,
    ].join('\n');
  }
  if (!processLimitAvailable()) {
    return `[traj] warning: no pids cgroup can be created here, so local sandboxes have no process limit (pids_limit ${config.pids_limit} is not enforced).`;
  }
  return undefined;
}

/**
 * A sandbox that is a fresh folder under the OS temp dir, with commands run by `bash -c` in it.
 * With bubblewrap (see bwrap.ts) the rollout's commands run in namespaces of their own: its own
 * processes only, the system read-only, this folder the only writable place, no network unless
 * allowed, a process limit; without it they are plain processes of this host. `options.workdir`
 * names a subfolder to create inside the fresh folder (e.g. `/app` becomes
 * `<tmp>/traj-sbx-…/app`), so tasks written for docker keep their relative layout.
 */
export async function createLocalSandbox(options: SandboxOptions = { kind: 'local' }): Promise<Sandbox> {
  const config = parseLocalSandboxConfig(options.local);
  const isolation = await resolveLocalIsolation(config, options.bwrap);
  if (options.hostFolder !== undefined)
    return hostFolderSandbox(options.hostFolder, options.env ?? {}, isolation, config);
  let root: string;
  try {
    // Synchronous, as the folder's removal and the first file write are: see removeFolder.
    root = mkdtempSync(join(await realTemporaryFolder(), sandboxFolderPrefix()));
  } catch (error) {
    throw new SandboxError(`cannot create a local sandbox folder under ${temporaryFolder()}: ${errorMessage(error)}`, {
      code: 'create_failed',
      retryable: true,
      cause: error,
    });
  }
  const workdir = options.workdir ? join(root, subfolderName(options.workdir)) : root;
  if (workdir !== root) await mkdir(workdir, { recursive: true });
  const user = isolation.mode === 'bwrap' ? sandboxUser(isolation) : undefined;
  return new LocalSandbox(root, workdir, options.env ?? {}, isolation.mode === 'bwrap' ? { config, user } : undefined);
}

/**
 * The user a fresh sandbox's commands run as: nobody when traj is root (and the kernel gives that
 * user a namespace), else traj's own user (undefined: nothing to change).
 */
function sandboxUser(isolation: Extract<LocalIsolation, { mode: 'bwrap' }>): SandboxUser | undefined {
  if (process.getuid?.() !== 0 || isolation.rootInside) return undefined;
  return unprivilegedUser();
}

/**
 * Give the folder and everything in it to the sandbox user, before its first command: until
 * then no sandboxed process exists to race the walk, and file-only rollouts never pay for it.
 * The common folder (empty, or a few files) is done with synchronous calls, as removeFolder does:
 * the promise forms' round trips through libuv's pool cost more CPU than the calls themselves.
 */
async function ownTree(path: string, user: SandboxUser): Promise<void> {
  if (!ownFlatFolder(path, user)) await ownTreeAsync(path, user);
}

/** ownTree for a folder of at most FLAT_FOLDER_ENTRIES plain entries; false (nothing done) otherwise. */
function ownFlatFolder(path: string, user: SandboxUser): boolean {
  try {
    const entries = readdirSync(path, { withFileTypes: true });
    if (entries.length > FLAT_FOLDER_ENTRIES || entries.some((entry) => entry.isDirectory())) return false;
    lchownSync(path, user.uid, user.gid);
    for (const entry of entries) lchownSync(join(path, entry.name), user.uid, user.gid);
    return true;
  } catch {
    return false;
  }
}

async function ownTreeAsync(path: string, user: SandboxUser): Promise<void> {
  await lchown(path, user.uid, user.gid);
  const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.isDirectory()) await ownTreeAsync(join(path, entry.name), user);
    else await lchown(join(path, entry.name), user.uid, user.gid);
  }
}

const realTemporaryFolders = new Map<string, Promise<string>>();

/**
 * os.tmpdir() read through process.env: the same answer, without its three native getenv calls
 * (~5 µs per sandbox).
 */
function temporaryFolder(): string {
  const folder = process.env.TMPDIR || process.env.TMP || process.env.TEMP || '/tmp';
  return folder.length > 1 && folder.endsWith('/') ? folder.slice(0, -1) : folder;
}

/**
 * The OS temp dir with symlinks resolved, once per value of TMPDIR: a folder made inside it by
 * mkdtemp is then already a real path (the confinement check compares real paths).
 */
function realTemporaryFolder(): Promise<string> {
  const folder = temporaryFolder();
  let real = realTemporaryFolders.get(folder);
  if (!real) {
    real = realpath(folder);
    real.catch(() => realTemporaryFolders.delete(folder));
    realTemporaryFolders.set(folder, real);
  }
  return real;
}

/**
 * A sandbox over an existing folder (--workdir): files and commands work on it, isolated the same
 * way as a fresh folder (with bubblewrap, this folder is the only writable place), and dispose
 * leaves it in place.
 */
async function hostFolderSandbox(
  folder: string,
  env: Record<string, string>,
  isolation: LocalIsolation,
  config: LocalSandboxConfig,
): Promise<Sandbox> {
  const info = await stat(folder).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new SandboxError(`--workdir ${folder}: no such folder (give an existing directory to work in)`, {
      code: 'invalid_workdir',
    });
  }
  const root = await realpath(folder);
  if (isolation.mode === 'none') return new LocalSandbox(root, root, env, undefined, false);
  // As root, a user's own folder is worked on as its owner; a folder root owns keeps root (without capabilities).
  const asOwner = process.getuid?.() === 0 && info.uid !== 0 && !isolation.rootInside;
  const user = asOwner ? { uid: info.uid, gid: info.gid } : undefined;
  return new LocalSandbox(root, root, env, { config, user }, false);
}

function subfolderName(workdir: string): string {
  const parts = workdir.split(/[\\/]+/).filter((part) => part !== '' && part !== '.');
  if (parts.length === 0) return '.';
  if (parts.includes('..')) {
    throw new SandboxError(`sandbox workdir '${workdir}' must not contain '..'`, { code: 'invalid_workdir' });
  }
  return join(...parts);
}

/** Sandboxes made by this thread: with threadId, a part of every id. */
let sandboxesMade = 0;

class LocalSandbox implements Sandbox {
  readonly id: string;
  readonly kind = 'local';
  private disposed = false;
  /** Process-group ids of commands that may still run (background jobs outlive their bash). */
  private readonly groups = new Set<number>();
  private readonly unregister: () => void;

  /**
   * The spawn-host session running this sandbox's namespaces (forked by the run's zygote), asked for
   * by the first command: rollouts that only use file tools (which work on the folder from this
   * side) never pay for one. It resolves once the request is sent; `opened` once they are made.
   */
  private session?: Promise<{ id: string; opened: Promise<void> }>;
  private shell?: PersistentShell;

  constructor(
    private readonly root: string,
    readonly workdir: string,
    private readonly baseEnv: Record<string, string>,
    /** Set when commands run under bubblewrap, with the user they run as when it is not traj's. */
    private readonly isolation: { config: LocalSandboxConfig; user?: SandboxUser } | undefined,
    /** False for a user's own folder (--workdir): dispose stops processes but deletes nothing. */
    private readonly owned = true,
  ) {
    // threadId and a count: unique in the process without a random draw (~12 µs each).
    this.id = `local-${basename(root).replace(/^traj-sbx-[\d.]+-/, '')}-${threadId}.${++sandboxesMade}`;
    this.unregister = registerLiveSandbox(this);
    // A user's own folder (--workdir) is never walked: what traj writes there is its owner's from the start.
    const ownerNow = !owned && isolation?.user ? { owner: isolation.user } : {};
    this.folder = { root, workdir, id: this.id, ...ownerNow };
  }

  /**
   * What the file operations are confined to, and who owns what they create: set to the sandbox
   * user when the namespace opens (before that, traj's files are chowned with the folder).
   */
  private readonly folder: ConfinedFolder;

  /**
   * The namespace commands run in (undefined without bubblewrap). Checked around the awaits of a
   * command's start: no namespace is opened, and no command started, once dispose began.
   */
  private async commandSession(): Promise<string | undefined> {
    const session = await this.requestedSession();
    if (session) await this.opened(session.opened);
    return session?.id;
  }

  /** commandSession, but the namespace may still be in the making: the spawn host runs what follows once it is. */
  private async requestedSession(): Promise<{ id: string; opened: Promise<void> } | undefined> {
    this.assertLive();
    this.session ??= this.isolation ? this.requestNamespace(this.isolation.config) : undefined;
    const session = await this.session;
    this.assertLive();
    return session;
  }

  private async opened(opened: Promise<void>): Promise<void> {
    try {
      await opened;
    } catch (error) {
      throw new SandboxError(`cannot start bubblewrap for sandbox ${this.id}: ${errorMessage(error)}`, {
        code: 'create_failed',
        retryable: true,
        cause: error,
      });
    }
  }

  /** Ask the spawn host for this sandbox's namespaces; resolves as soon as the request is sent. */
  private async requestNamespace(config: LocalSandboxConfig): Promise<{ id: string; opened: Promise<void> }> {
    const user = this.isolation?.user;
    if (user) {
      // Files written from here on are chowned as they are made; the walk takes what came before.
      this.folder.owner = user;
      if (this.owned) await ownTree(this.root, user);
    }
    const view = this.owned ? { staging: dirname(this.root), user } : { folder: this.root, user };
    const spec: NamespaceSpec = {
      zygote: { bwrap: zygoteOptions(view), env: baseEnvironment(), seccomp: true, ...(user ? { user } : {}) },
      folder: zygoteFolder(view, this.root),
      network: config.network,
      cgroup: { name: basename(this.root), pidsLimit: config.pids_limit },
      reuse: config.reuse_namespaces,
    };
    const opened = openSession(this.id, spec);
    // Awaited by the command that asked (opened); a dispose before that must not leave it unhandled.
    opened.catch(() => {});
    return { id: this.id, opened };
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    this.assertLive();
    const cwd = options.cwd === undefined ? this.workdir : await this.existingFolder(options.cwd);
    const started = performance.now();
    if (options.signal?.aborted) {
      return { exitCode: 130, stdout: '', stderr: '', timedOut: false, aborted: true, durationMs: 0 };
    }
    const result = await this.spawnCommand(command, cwd, options);
    return { ...result, durationMs: Math.round(performance.now() - started) };
  }

  async execInShell(command: string, options: ExecOptions = {}): Promise<ShellResult> {
    this.assertLive();
    const cwd = options.cwd === undefined ? undefined : await this.existingFolder(options.cwd);
    // The shell's request follows the namespace's without waiting for it (one round trip to the
    // spawn host fewer per rollout); a namespace that could not be made still fails as create_failed.
    const session = await this.requestedSession();
    const running = this.persistentShell(session?.id).run(command, { ...options, cwd });
    if (session)
      await this.opened(session.opened).catch((error: unknown) => {
        running.catch(() => {});
        throw error;
      });
    const result = await running;
    if (this.disposed)
      throw new SandboxError(`sandbox ${this.id} was disposed while the command ran`, { code: 'disposed' });
    return result;
  }

  /** The rollout's one shell, in the namespace when there is one. */
  private persistentShell(session: string | undefined): PersistentShell {
    this.shell ??= new PersistentShell((handlers) =>
      openShell(
        {
          command: SHELL_ARGV('local').join(' '),
          argv: SHELL_ARGV('local'),
          cwd: this.workdir,
          env: this.environment(undefined),
        },
        {
          ...handlers,
          onStart: (pid) => this.groups.add(pid),
          ...(session ? { session } : {}),
        },
      ),
    );
    return this.shell;
  }

  private async spawnCommand(command: string, cwd: string, options: ExecOptions): Promise<ExecResult> {
    const session = await this.commandSession();
    try {
      return await runCommand(
        {
          command,
          cwd,
          env: this.environment(options.env),
          stdin: options.stdin,
          timeoutMs: options.timeoutMs,
          maxOutputBytes: options.maxOutputBytes,
        },
        {
          signal: options.signal,
          onStart: (pid) => this.groups.add(pid),
          ...(session ? { session } : {}),
        },
      );
    } catch (error) {
      if (error instanceof SandboxError) throw error;
      throw new SandboxError(`cannot run bash in sandbox ${this.id}: ${errorMessage(error)}`, {
        code: 'exec_failed',
        cause: error,
      });
    } finally {
      this.forgetFinishedGroups();
    }
  }

  private async existingFolder(path: string): Promise<string> {
    const folder = await this.resolvePath(path);
    const info = await stat(folder).catch(() => undefined);
    if (!info?.isDirectory()) {
      throw new SandboxError(`working directory '${path}' does not exist in sandbox ${this.id}`, {
        code: 'cwd_missing',
      });
    }
    return folder;
  }

  /**
   * Drop groups with no process left. A group id stays reserved while any member lives, so
   * killing the remembered ones on dispose never hits an unrelated process group.
   */
  private forgetFinishedGroups(): void {
    for (const group of this.groups) {
      if (!processGroupAlive(group)) this.groups.delete(group);
    }
  }

  private environment(extra: Record<string, string> | undefined): NodeJS.ProcessEnv {
    return scrubEnvironment({ ...baseEnvironment(), HOME: this.workdir, ...this.baseEnv, ...extra });
  }

  async readFile(path: string, options: { maxBytes?: number } = {}): Promise<Buffer> {
    this.assertLive();
    return readConfined(this.folder, path, options.maxBytes);
  }

  async writeFile(path: string, data: Buffer | string): Promise<void> {
    this.assertLive();
    await writeConfined(this.folder, path, data);
  }

  async upload(localPath: string, remotePath: string): Promise<void> {
    this.assertLive();
    await uploadConfined(this.folder, localPath, remotePath);
  }

  async download(remotePath: string, localPath: string): Promise<void> {
    this.assertLive();
    await downloadConfined(this.folder, remotePath, localPath);
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.unregister();
    // A shell in namespaces ends with them (closeSession): no kill message of its own.
    this.shell?.dispose(this.session === undefined);
    for (const group of this.groups) killProcessGroup(group);
    this.groups.clear();
    try {
      const session = await this.session?.catch(() => undefined);
      await session?.opened.catch(() => {});
      if (session) await closeSession(session.id);
    } finally {
      if (this.owned) await removeFolder(this.root);
    }
  }

  /**
   * The confinement check of the file tools that hand a path to a command (search_files, a cwd):
   * the host path a sandbox path names (the same path commands see, with or without bubblewrap),
   * refusing any that leaves the workdir: `..`, an absolute path elsewhere, or a symlink pointing
   * out. File reads and writes do not use it: they open through the same walk (confined-files.ts).
   */
  async resolvePath(path: string): Promise<string> {
    return resolveConfined(this.folder, path);
  }

  private assertLive(): void {
    if (this.disposed) throw new SandboxError(`sandbox ${this.id} is already disposed`, { code: 'disposed' });
  }
}

/** Entries up to which a flat sandbox folder is owned or removed with synchronous calls (ownTree, removeFolder). */
const FLAT_FOLDER_ENTRIES = 64;

/**
 * Delete a sandbox folder. The common case, a few plain files, takes one readdir, an unlink per
 * file and one rmdir, made synchronously: the promise forms' round trips through libuv's thread
 * pool cost more CPU than the calls themselves. With the folder's creation and its first file
 * write made the same way, a `write_file` rollout's folder work went from ~440 to ~210 µs of CPU,
 * and `batch-4000x1-c1000` from 14.0 to 12.1 CPU-s (4 alternating runs each, same wall time).
 * Anything else (subfolders, many files, a process still writing) goes to a recursive rm, which
 * retries and does not hold the thread.
 */
async function removeFolder(folder: string): Promise<void> {
  try {
    const entries = readdirSync(folder, { withFileTypes: true });
    if (entries.length <= FLAT_FOLDER_ENTRIES && entries.every((entry) => !entry.isDirectory())) {
      for (const entry of entries) unlinkSync(join(folder, entry.name));
      rmdirSync(folder);
      return;
    }
  } catch {
    // Fall through to the recursive removal, which copes with whatever happened here.
  }
  await rm(folder, { recursive: true, force: true, maxRetries: 3 });
}
