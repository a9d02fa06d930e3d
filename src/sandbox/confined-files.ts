import { closeSync, constants, fchownSync, openSync, writeSync } from 'node:fs';
import {
  type FileHandle,
  lchown,
  lstat,
  mkdir,
  open,
  readdir,
  readFile,
  readlink,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { errorMessage, SandboxError } from '../errors.js';

/**
 * File operations that the kernel confines to a folder, whatever a process in the sandbox does
 * meanwhile. A path is never handed to the kernel whole: each step opens ONE name relative to the
 * directory opened by the step before (through its /proc/self/fd link) with O_NOFOLLOW, and a
 * symlink met on the way is read and resolved here, lexically and inside the folder. A symlink
 * swapped in between a check and a use then fails the open (ELOOP) instead of leading out, and a
 * renamed parent is still the directory already held open. Non-regular files are refused without
 * blocking (O_NONBLOCK: a FIFO with no writer opens at once), and reads are capped by size.
 */

const MAX_SYMLINK_HOPS = 40;
const FD_FOLDER = '/proc/self/fd';
const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const WRITE_FLAGS = constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const CREATE_FLAGS = WRITE_FLAGS | constants.O_CREAT | constants.O_EXCL;

/** The default cap of one read: a file tool's memory is bounded whatever the file. */
export const DEFAULT_MAX_READ_BYTES = 32 * 1024 * 1024;
/** How long one file operation may take before it fails (a hung filesystem must not hang a rollout). */
export const FILE_OPERATION_TIMEOUT_MS = 30_000;

/** Who owns what traj creates in the sandbox: set when commands run as another user than traj. */
export interface FileOwner {
  uid: number;
  gid: number;
}

/** A sandbox folder as the file operations see it. */
export interface ConfinedFolder {
  /** A folder no sandboxed process can rename or replace (the bind-mounted root). */
  root: string;
  /** The folder paths must stay in: `root` or a folder inside it. */
  workdir: string;
  /** The sandbox's id, for messages. */
  id: string;
  owner?: FileOwner;
}

function escapeError(requested: string, folder: ConfinedFolder): SandboxError {
  return new SandboxError(`path '${requested}' is outside the sandbox workdir ${folder.workdir}`, {
    code: 'path_escape',
    details: { path: requested, workdir: folder.workdir },
  });
}

/** The path's components relative to the workdir, or a path_escape error when it leaves it lexically. */
function partsInside(path: string, folder: ConfinedFolder, requested: string): string[] {
  const fromWorkdir = relative(folder.workdir, resolve(folder.workdir, path));
  if (fromWorkdir === '..' || fromWorkdir.startsWith(`..${sep}`) || isAbsolute(fromWorkdir))
    throw escapeError(requested, folder);
  return fromWorkdir === '' ? [] : fromWorkdir.split(sep);
}

const at = (directory: FileHandle, name: string) => `${FD_FOLDER}/${directory.fd}/${name}`;

/**
 * One walk down the folder: a stack of open directories from the root, the names that led there,
 * and the components still to go. The workdir's own components are walked first and form the
 * floor that `..` may not cross.
 */
class Walk {
  private readonly stack: FileHandle[] = [];
  private readonly names: string[] = [];
  private floor = 0;
  private hops = 0;
  queue: string[];

  constructor(
    private readonly folder: ConfinedFolder,
    private readonly requested: string,
    parts: string[],
  ) {
    this.queue = parts;
  }

  async start(): Promise<void> {
    this.stack.push(await open(this.folder.root, DIRECTORY_FLAGS));
    for (const name of relative(this.folder.root, this.folder.workdir).split(sep).filter(Boolean)) {
      // The workdir is traj's own folder: a sandboxed process that replaced it by a link gets nothing.
      this.stack.push(await open(at(this.top, name), DIRECTORY_FLAGS));
      this.names.push(name);
    }
    this.floor = this.stack.length;
  }

  get top(): FileHandle {
    return this.stack[this.stack.length - 1]!;
  }

  /** The host path of the current directory (the same path commands see). */
  get here(): string {
    return join(this.folder.root, ...this.names);
  }

  /** Take the next component: '.' is nothing, '..' goes up, never below the workdir. */
  next(): string | undefined {
    for (;;) {
      const name = this.queue.shift();
      if (name === undefined) return undefined;
      if (name === '' || name === '.') continue;
      if (name !== '..') return name;
      if (this.stack.length <= this.floor) throw escapeError(this.requested, this.folder);
      void this.stack.pop()!.close();
      this.names.pop();
    }
  }

  /** Go into directory `name` (already known to be one that exists here). */
  async enter(name: string, create: boolean): Promise<'entered' | 'missing'> {
    try {
      this.stack.push(await open(at(this.top, name), DIRECTORY_FLAGS));
      this.names.push(name);
      return 'entered';
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && create) {
        await makeDirectoryAt(at(this.top, name), this.folder.owner);
        this.queue.unshift(name);
        return 'entered';
      }
      if (code === 'ENOENT') return 'missing';
      if ((code === 'ELOOP' || code === 'ENOTDIR') && (await this.followLink(name))) return 'entered';
      throw error;
    }
  }

  /**
   * Walk on to the last component: directories entered, links on the way spliced in. The last
   * name (undefined: the current directory itself), and, where a directory on the way is missing,
   * that one and everything after it.
   */
  async toLast(create: boolean): Promise<{ name: string | undefined; missing: string[] }> {
    for (;;) {
      const name = this.next();
      if (name === undefined || this.queue.every((rest) => rest === '' || rest === '.')) return { name, missing: [] };
      if ((await this.enter(name, create)) === 'missing') return { name, missing: [name, ...this.queue] };
    }
  }

  /**
   * When `name` here is a symlink, put its target's components in front of the queue (an absolute
   * target starts again from the root) and say so; false when it is not a symlink.
   */
  async followLink(name: string): Promise<boolean> {
    const info = await lstat(at(this.top, name)).catch(() => undefined);
    if (!info?.isSymbolicLink()) return false;
    if (++this.hops > MAX_SYMLINK_HOPS)
      throw new SandboxError(`too many levels of symbolic links in '${this.requested}'`, { code: 'path_loop' });
    const target = await readlink(at(this.top, name));
    if (isAbsolute(target)) {
      const parts = partsInside(target, this.folder, this.requested);
      while (this.stack.length > this.floor) void this.stack.pop()!.close();
      this.names.length = this.floor - 1;
      this.queue = [...parts, ...this.queue];
    } else {
      this.queue = [...target.split('/'), ...this.queue];
    }
    return true;
  }

  close(): void {
    for (const handle of this.stack) void handle.close();
    this.stack.length = 0;
  }
}

/**
 * Walk to the last component of `path`: every directory on the way opened without following a
 * link, links resolved inside the workdir. Returns the walk (its top is the parent) and the last
 * name, or undefined for the workdir itself. With `create`, missing directories are made.
 */
async function walkToParent(
  folder: ConfinedFolder,
  path: string,
  create: boolean,
): Promise<{ walk: Walk; name: string | undefined; missing: string[] }> {
  const walk = new Walk(folder, path, partsInside(path, folder, path));
  try {
    await walk.start();
    return { walk, ...(await walk.toLast(create)) };
  } catch (error) {
    walk.close();
    throw error;
  }
}

/**
 * Open the last component with `flags`, following a symlink there inside the workdir (the walk
 * goes on from its target). ELOOP from O_NOFOLLOW is how a link is noticed: no lstat-then-open gap.
 */
async function openLast(
  folder: ConfinedFolder,
  path: string,
  open_: (at: string) => Promise<FileHandle>,
  create: boolean,
  directory = false,
): Promise<FileHandle> {
  const direct = await openDirect(folder, path, open_);
  if (direct) return direct;
  const { walk, name } = await walkToParent(folder, path, create);
  try {
    let last = name;
    for (;;) {
      if (last === undefined && directory) last = '.';
      if (last === undefined) throw new SandboxError(`'${path}' is a directory, not a file`, { code: 'is_directory' });
      try {
        return await open_(at(walk.top, last));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ELOOP' || !(await walk.followLink(last))) throw error;
      }
      const next = await walk.toLast(create);
      if (next.missing.length > 0)
        throw Object.assign(new Error('ENOENT: no such file or directory'), { code: 'ENOENT' });
      last = next.name;
    }
  } finally {
    walk.close();
  }
}

/**
 * The common case in one open: a plain name directly in a workdir that is the sandbox's root.
 * The root's own path is the host's (no sandboxed process can rename or replace a bind-mounted
 * root, nor anything above it), so only the last name needs O_NOFOLLOW. A link there (ELOOP), a
 * missing name or anything else goes the whole walk, which says what it met.
 */
async function openDirect(
  folder: ConfinedFolder,
  path: string,
  open_: (at: string) => Promise<FileHandle>,
): Promise<FileHandle | undefined> {
  if (folder.workdir !== folder.root) return undefined;
  const parts = partsInside(path, folder, path);
  if (parts.length !== 1 || parts[0] === '.' || parts[0] === '..') return undefined;
  try {
    return await open_(join(folder.root, parts[0]!));
  } catch {
    return undefined;
  }
}

/** Bytes up to which a new file is written with synchronous calls (a larger one must not hold the thread). */
const SYNC_WRITE_BYTES = 1 << 20;

/**
 * The commonest write, a small new file named straight in a workdir that is the sandbox's root,
 * made with synchronous calls (see removeFolder in local.ts for why); true when done. The open is the
 * one the walk would make for it: O_CREAT | O_EXCL never follows a link and fails on any existing
 * name (a link, a FIFO, a file to overwrite), O_NONBLOCK never waits. Whatever it refuses goes the
 * full way (false), which says what it met.
 */
function writeNewFileSync(folder: ConfinedFolder, path: string, data: Buffer | string, mode?: number): boolean {
  if (folder.workdir !== folder.root) return false;
  const parts = partsInside(path, folder, path);
  if (parts.length !== 1 || parts[0] === '.' || parts[0] === '..') return false;
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  if (bytes.length > SYNC_WRITE_BYTES) return false;
  let fd: number;
  try {
    fd = openSync(join(folder.root, parts[0]!), CREATE_FLAGS, mode ?? 0o644);
  } catch {
    return false;
  }
  try {
    if (folder.owner) fchownSync(fd, folder.owner.uid, folder.owner.gid);
    for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
    return true;
  } catch (error) {
    throw fileError(error, path, folder.id, 'write');
  } finally {
    closeSync(fd);
  }
}

/** Make a directory (an existing one is fine); one this call made goes to `owner`. */
async function makeDirectoryAt(path: string, owner: FileOwner | undefined): Promise<void> {
  try {
    await mkdir(path, 0o755);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return;
  }
  if (!owner) return;
  const made = await open(path, DIRECTORY_FLAGS);
  await made.chown(owner.uid, owner.gid).finally(() => made.close());
}

function describeKind(info: {
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

export function notRegular(path: string, kind: string): SandboxError {
  return new SandboxError(`'${path}' is ${kind}; file tools read and write regular files only`, {
    code: 'not_regular_file',
    details: { path },
  });
}

/** Read a regular file inside the workdir, at most `maxBytes` of it (a larger one is refused unread). */
export async function readConfined(
  folder: ConfinedFolder,
  path: string,
  maxBytes = DEFAULT_MAX_READ_BYTES,
): Promise<Buffer> {
  return withTimeout(path, folder, 'read', async () => {
    const handle = await openLast(folder, path, (target) => open(target, READ_FLAGS), false);
    try {
      const info = await handle.stat();
      if (info.isDirectory()) throw new SandboxError(`'${path}' is a directory, not a file`, { code: 'is_directory' });
      if (!info.isFile()) throw notRegular(path, describeKind(info));
      if (info.size > maxBytes) throw tooLarge(path, info.size, maxBytes);
      return await readCapped(handle, path, Math.max(info.size, 1), maxBytes);
    } finally {
      await handle.close();
    }
  });
}

export function tooLarge(path: string, size: number, maxBytes: number): SandboxError {
  return new SandboxError(
    `'${path}' is ${size} bytes, over the ${maxBytes}-byte limit of one file read; read part of it with a command (head, tail, sed -n)`,
    { code: 'file_too_large', details: { path, size, maxBytes } },
  );
}

/** Read to the end, never holding more than maxBytes + 1 (a file that grows past the cap is refused). */
async function readCapped(handle: FileHandle, path: string, sizeHint: number, maxBytes: number): Promise<Buffer> {
  let buffer = Buffer.allocUnsafe(Math.min(sizeHint, maxBytes) + 1);
  let filled = 0;
  for (;;) {
    if (filled === buffer.length) {
      if (buffer.length > maxBytes) throw tooLarge(path, filled, maxBytes);
      const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxBytes + 1));
      buffer.copy(grown, 0, 0, filled);
      buffer = grown;
    }
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, null);
    if (bytesRead === 0) return buffer.subarray(0, filled);
    filled += bytesRead;
  }
}

/**
 * Write a regular file inside the workdir, making missing folders. A file with more than one hard
 * link is refused (a command may have linked a file from outside into the folder), and so is any
 * non-regular file.
 */
export async function writeConfined(
  folder: ConfinedFolder,
  path: string,
  data: Buffer | string,
  mode?: number,
): Promise<void> {
  if (writeNewFileSync(folder, path, data, mode)) return;
  return withTimeout(path, folder, 'write', async () => {
    let created = false;
    const handle = await openLast(
      folder,
      path,
      async (target) => {
        try {
          const handle = await open(target, CREATE_FLAGS, mode ?? 0o644);
          created = true;
          return handle;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
          return open(target, WRITE_FLAGS);
        }
      },
      true,
    );
    try {
      if (created) {
        if (folder.owner) await handle.chown(folder.owner.uid, folder.owner.gid);
      } else {
        await checkWritable(handle, path);
        await handle.truncate(0);
        if (mode !== undefined) await handle.chmod(mode);
      }
      await handle.writeFile(data);
    } finally {
      await handle.close();
    }
  });
}

async function checkWritable(handle: FileHandle, path: string): Promise<void> {
  const info = await handle.stat();
  if (!info.isFile()) throw notRegular(path, describeKind(info));
  if (info.nlink > 1) {
    throw new SandboxError(
      `'${path}' has ${info.nlink} hard links; writing it could change a file outside the sandbox, so it is refused`,
      { code: 'hard_link', details: { path } },
    );
  }
}

/**
 * The host path a sandbox path names, with every symlink on the way resolved inside the workdir
 * (missing components are kept as given). It is an answer at one moment: code that must not race
 * a sandboxed process opens through readConfined/writeConfined instead.
 */
export async function resolveConfined(folder: ConfinedFolder, path: string): Promise<string> {
  return withTimeout(path, folder, 'resolve', async () => {
    const walked = await walkToParent(folder, path, false);
    const { walk } = walked;
    try {
      let { name, missing } = walked;
      while (missing.length === 0 && name !== undefined && (await walk.followLink(name)))
        ({ name, missing } = await walk.toLast(false));
      const result = join(walk.here, ...(missing.length > 0 ? missing : name === undefined ? [] : [name]));
      // What is missing may come from a link's target, which can climb with `..`: check the whole.
      partsInside(result, folder, path);
      return result;
    } finally {
      walk.close();
    }
  });
}

/** Make a folder (and its parents) inside the workdir; an existing one is fine. */
export async function makeFolderConfined(folder: ConfinedFolder, path: string): Promise<void> {
  const handle = await openLast(
    folder,
    path,
    async (target) => {
      await makeDirectoryAt(target, folder.owner);
      return open(target, DIRECTORY_FLAGS);
    },
    true,
    true,
  );
  await handle.close();
}

/**
 * Copy a host file or tree into the workdir. Every file and folder is made through the confined
 * walk: a process in the sandbox that swaps a folder of the target for a link out makes the copy
 * fail, not write outside. Symlinks are copied as symlinks, never followed.
 */
export async function uploadConfined(folder: ConfinedFolder, localPath: string, remotePath: string): Promise<void> {
  const info = await lstat(localPath).catch((error: NodeJS.ErrnoException) => {
    throw copyError(`upload ${localPath} to ${remotePath} in sandbox ${folder.id}`, localPath, error);
  });
  if (info.isDirectory()) {
    await makeFolderConfined(folder, remotePath);
    for (const name of await readdir(localPath))
      await uploadConfined(folder, join(localPath, name), join(remotePath, name));
  } else if (info.isSymbolicLink()) {
    await linkConfined(folder, remotePath, await readlink(localPath));
  } else {
    await writeConfined(folder, remotePath, await readFile(localPath), info.mode & 0o7777);
  }
}

/** Make (or replace) a symlink inside the workdir; its target is stored as given, never followed here. */
async function linkConfined(folder: ConfinedFolder, path: string, target: string): Promise<void> {
  const { walk, name } = await walkToParent(folder, path, true);
  try {
    if (name === undefined) throw new SandboxError(`cannot replace the workdir by a link`, { code: 'copy_failed' });
    await unlink(at(walk.top, name)).catch(() => {});
    await symlink(target, at(walk.top, name));
    if (folder.owner) await lchownAt(walk.top, name, folder.owner);
  } finally {
    walk.close();
  }
}

async function lchownAt(directory: FileHandle, name: string, owner: FileOwner): Promise<void> {
  await lchown(at(directory, name), owner.uid, owner.gid);
}

/**
 * Copy a file or tree of the workdir to the host. Files are read through readConfined (links
 * inside followed, links out refused); links met while listing a folder are copied as links.
 */
export async function downloadConfined(folder: ConfinedFolder, remotePath: string, localPath: string): Promise<void> {
  await mkdir(dirname(localPath), { recursive: true });
  let data: Buffer;
  try {
    data = await readConfined(folder, remotePath, Number.MAX_SAFE_INTEGER);
  } catch (error) {
    if (!(error instanceof SandboxError) || error.code !== 'is_directory') throw error;
    await mkdir(localPath, { recursive: true });
    for (const entry of await listConfined(folder, remotePath)) {
      const [remote, local] = [join(remotePath, entry.name), join(localPath, entry.name)];
      if (entry.link !== undefined) {
        await unlink(local).catch(() => {});
        await symlink(entry.link, local);
      } else await downloadConfined(folder, remote, local);
    }
    return;
  }
  await writeFile(localPath, data);
}

/** A folder's entries inside the workdir, each with its link target when it is a symlink. */
async function listConfined(folder: ConfinedFolder, path: string): Promise<{ name: string; link?: string }[]> {
  const handle = await openLast(folder, path, (target) => open(target, DIRECTORY_FLAGS), false, true);
  try {
    const entries = await readdir(`${FD_FOLDER}/${handle.fd}`, { withFileTypes: true });
    return Promise.all(
      entries.map(async (entry) =>
        entry.isSymbolicLink()
          ? { name: entry.name, link: await readlink(at(handle, entry.name)) }
          : { name: entry.name },
      ),
    );
  } finally {
    await handle.close();
  }
}

function copyError(what: string, source: string, error: NodeJS.ErrnoException): SandboxError {
  const missing = error.code === 'ENOENT';
  return new SandboxError(
    `cannot ${what}: ${missing ? `no such file or directory '${source}'` : errorMessage(error)}`,
    {
      code: missing ? 'not_found' : 'copy_failed',
      cause: error,
    },
  );
}

async function withTimeout<T>(
  path: string,
  folder: ConfinedFolder,
  action: 'read' | 'write' | 'resolve',
  operation: () => Promise<T>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new SandboxError(
            `cannot ${action} '${path}' in sandbox ${folder.id}: no answer from the filesystem within ${FILE_OPERATION_TIMEOUT_MS / 1000} s`,
            { code: 'file_timeout', retryable: false },
          ),
        ),
      FILE_OPERATION_TIMEOUT_MS,
    );
    timer.unref();
  });
  try {
    return await Promise.race([operation(), timeout]);
  } catch (error) {
    throw fileError(error, path, folder.id, action);
  } finally {
    clearTimeout(timer);
  }
}

function fileError(error: unknown, path: string, sandboxId: string, action: string): SandboxError {
  if (error instanceof SandboxError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT')
    return new SandboxError(`no such file: '${path}' in sandbox ${sandboxId}`, { code: 'not_found', cause: error });
  if (code === 'EISDIR')
    return new SandboxError(`'${path}' is a directory, not a file (sandbox ${sandboxId})`, {
      code: 'is_directory',
      cause: error,
    });
  if (code === 'ENXIO') return notRegular(path, 'a FIFO (named pipe) with no reader');
  return new SandboxError(`cannot ${action} '${path}' in sandbox ${sandboxId}: ${errorMessage(error)}`, {
    code: action === 'write' ? 'write_failed' : 'read_failed',
    cause: error,
  });
}
