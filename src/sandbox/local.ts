import { randomBytes } from 'node:crypto';
import { cp, lstat, mkdir, mkdtemp, readFile, readlink, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { errorMessage, SandboxError } from '../errors.js';
import { registerLiveSandbox } from './live-sandboxes.js';
import { killProcessGroup, processGroupAlive } from './process-group.js';
import {
  type ExecOptions,
  type ExecResult,
  type Sandbox,
  type SandboxOptions,
} from './sandbox.js';
import { scrubEnvironment } from './scrub-environment.js';
import { runCommand } from './spawner.js';

/** The only host variables a local command inherits; everything else (keys, tokens) stays out. */
const INHERITED_VARIABLES = ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TERM', 'TMPDIR', 'USER', 'SHELL'] as const;

const MAX_SYMLINK_HOPS = 40;

/**
 * A sandbox that is a fresh folder under the OS temp dir, with commands run by `bash -c` in it.
 * It isolates files and secrets, not the machine: commands can still reach the host's
 * filesystem and network. `options.workdir` names a subfolder to create inside the fresh
 * folder (e.g. `/app` becomes `<tmp>/traj-sbx-XXXX/app`), so tasks written for docker keep
 * their relative layout.
 */
export async function createLocalSandbox(options: SandboxOptions = { kind: 'local' }): Promise<Sandbox> {
  if (options.hostFolder !== undefined) return hostFolderSandbox(options.hostFolder, options.env ?? {});
  let root: string;
  try {
    root = await realpath(await mkdtemp(join(tmpdir(), 'traj-sbx-')));
  } catch (error) {
    throw new SandboxError(`cannot create a local sandbox folder under ${tmpdir()}: ${errorMessage(error)}`, {
      code: 'create_failed',
      retryable: true,
      cause: error,
    });
  }
  const workdir = options.workdir ? join(root, subfolderName(options.workdir)) : root;
  await mkdir(workdir, { recursive: true });
  return new LocalSandbox(root, workdir, options.env ?? {});
}

/** A sandbox over an existing folder: files and commands work on it, and dispose leaves it in place. */
async function hostFolderSandbox(folder: string, env: Record<string, string>): Promise<Sandbox> {
  const info = await stat(folder).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new SandboxError(`--workdir ${folder}: no such folder (give an existing directory to work in)`, { code: 'invalid_workdir' });
  }
  const root = await realpath(folder);
  return new LocalSandbox(root, root, env, false);
}

function subfolderName(workdir: string): string {
  const parts = workdir.split(/[\\/]+/).filter((part) => part !== '' && part !== '.');
  if (parts.length === 0) return '.';
  if (parts.includes('..')) {
    throw new SandboxError(`sandbox workdir '${workdir}' must not contain '..'`, { code: 'invalid_workdir' });
  }
  return join(...parts);
}

class LocalSandbox implements Sandbox {
  readonly id: string;
  readonly kind = 'local';
  private disposed = false;
  /** Process-group ids of commands that may still run (background jobs outlive their bash). */
  private readonly groups = new Set<number>();
  private readonly unregister: () => void;

  constructor(
    private readonly root: string,
    readonly workdir: string,
    private readonly baseEnv: Record<string, string>,
    /** False for a user's own folder (--workdir): dispose stops processes but deletes nothing. */
    private readonly owned = true,
  ) {
    this.id = `local-${basename(root).replace(/^traj-sbx-/, '')}-${randomBytes(2).toString('hex')}`;
    this.unregister = registerLiveSandbox(this);
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    this.assertLive();
    const cwd = options.cwd === undefined ? this.workdir : await this.resolvePath(options.cwd);
    const cwdStat = await stat(cwd).catch(() => undefined);
    if (!cwdStat?.isDirectory()) {
      throw new SandboxError(`working directory '${options.cwd}' does not exist in sandbox ${this.id}`, { code: 'cwd_missing' });
    }
    const started = performance.now();
    if (options.signal?.aborted) {
      return { exitCode: 130, stdout: '', stderr: '', timedOut: false, aborted: true, durationMs: 0 };
    }
    const result = await this.spawnCommand(command, cwd, options);
    return { ...result, durationMs: Math.round(performance.now() - started) };
  }

  private async spawnCommand(command: string, cwd: string, options: ExecOptions): Promise<ExecResult> {
    try {
      return await runCommand(
        { command, cwd, env: this.environment(options.env), stdin: options.stdin, timeoutMs: options.timeoutMs, maxOutputBytes: options.maxOutputBytes },
        { signal: options.signal, onStart: (pid) => this.groups.add(pid) },
      );
    } catch (error) {
      if (error instanceof SandboxError) throw error;
      throw new SandboxError(`cannot run bash in sandbox ${this.id}: ${errorMessage(error)}`, { code: 'exec_failed', cause: error });
    } finally {
      this.forgetFinishedGroups();
    }
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
    const inherited: Record<string, string> = {};
    for (const name of INHERITED_VARIABLES) {
      const value = process.env[name];
      if (value !== undefined) inherited[name] = value;
    }
    inherited.PATH ??= '/usr/local/bin:/usr/bin:/bin';
    return scrubEnvironment({ ...inherited, HOME: this.workdir, ...this.baseEnv, ...extra });
  }

  async readFile(path: string): Promise<Buffer> {
    this.assertLive();
    const target = await this.resolvePath(path);
    try {
      return await readFile(target);
    } catch (error) {
      throw fileError(error, path, this.id, 'read');
    }
  }

  async writeFile(path: string, data: Buffer | string): Promise<void> {
    this.assertLive();
    const target = await this.resolvePath(path);
    try {
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, data);
    } catch (error) {
      throw fileError(error, path, this.id, 'write');
    }
  }

  async upload(localPath: string, remotePath: string): Promise<void> {
    this.assertLive();
    const target = await this.resolvePath(remotePath);
    await copyTree(localPath, target, `upload ${localPath} to ${remotePath} in sandbox ${this.id}`);
  }

  async download(remotePath: string, localPath: string): Promise<void> {
    this.assertLive();
    const source = await this.resolvePath(remotePath);
    await copyTree(source, resolve(localPath), `download ${remotePath} from sandbox ${this.id}`);
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.unregister();
    for (const group of this.groups) killProcessGroup(group);
    this.groups.clear();
    if (this.owned) await rm(this.root, { recursive: true, force: true, maxRetries: 3 });
  }

  private assertLive(): void {
    if (this.disposed) throw new SandboxError(`sandbox ${this.id} is already disposed`, { code: 'disposed' });
  }

  /**
   * The real host path for a sandbox path, refusing any that leaves the workdir: `..`, an
   * absolute path elsewhere, or a symlink (also a dangling one) pointing out.
   */
  private async resolvePath(path: string): Promise<string> {
    const requested = resolve(this.workdir, path);
    this.assertInside(requested, path);
    const pending: string[] = [];
    let existing = requested;
    for (let hops = 0; hops <= MAX_SYMLINK_HOPS; ) {
      const real = await realpath(existing).catch(() => undefined);
      if (real !== undefined) {
        const target = join(real, ...pending);
        this.assertInside(target, path);
        return target;
      }
      const link = await symlinkTarget(existing);
      if (link !== undefined) {
        existing = resolve(dirname(existing), link);
        hops++;
        continue;
      }
      pending.unshift(basename(existing));
      existing = dirname(existing);
    }
    throw new SandboxError(`too many levels of symbolic links in '${path}'`, { code: 'path_loop' });
  }

  private assertInside(target: string, requested: string): void {
    const fromWorkdir = relative(this.workdir, target);
    const leaves = fromWorkdir === '..' || fromWorkdir.startsWith(`..${sep}`) || isAbsolute(fromWorkdir);
    if (!leaves) return;
    throw new SandboxError(`path '${requested}' is outside the sandbox workdir ${this.workdir}`, {
      code: 'path_escape',
      details: { path: requested, workdir: this.workdir },
    });
  }
}

async function symlinkTarget(path: string): Promise<string | undefined> {
  const info = await lstat(path).catch(() => undefined);
  return info?.isSymbolicLink() ? readlink(path) : undefined;
}

function fileError(error: unknown, path: string, sandboxId: string, action: 'read' | 'write'): SandboxError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new SandboxError(`no such file: '${path}' in sandbox ${sandboxId}`, { code: 'not_found', cause: error });
  if (code === 'EISDIR') return new SandboxError(`'${path}' is a directory, not a file (sandbox ${sandboxId})`, { code: 'is_directory', cause: error });
  return new SandboxError(`cannot ${action} '${path}' in sandbox ${sandboxId}: ${errorMessage(error)}`, { code: `${action}_failed`, cause: error });
}

async function copyTree(source: string, target: string, what: string): Promise<void> {
  try {
    await mkdir(dirname(target), { recursive: true });
    await cp(source, target, { recursive: true, force: true, verbatimSymlinks: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new SandboxError(`cannot ${what}: ${code === 'ENOENT' ? `no such file or directory '${source}'` : errorMessage(error)}`, {
      code: code === 'ENOENT' ? 'not_found' : 'copy_failed',
      cause: error,
    });
  }
}
