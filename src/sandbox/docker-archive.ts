import { DEFAULT_MAX_READ_BYTES, notRegular, tooLarge } from './confined-files.js';
import { createReadStream, createWriteStream, type Stats } from 'node:fs';
import { link, lstat, mkdir, readdir, readlink, symlink } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import type Docker from 'dockerode';
import tar from 'tar-stream';
import { errorMessage, SandboxError } from '../errors.js';
import { engineStatus, withEngineRetry } from './docker-engine.js';
import { pipeExec } from './docker-exec.js';
import type { ExecTarget } from './docker-exec-target.js';

/**
 * How tar streams get in and out of a container. The engine's archive endpoints need nothing
 * inside the image, but they read the container's root filesystem from the host side and so
 * cannot see tmpfs mounts (a file written to /tmp through them would land *under* the tmpfs);
 * paths on a tmpfs go through `tar` run inside the container instead.
 */
export interface ArchiveTransport {
  /** Extract a tar stream at `/` inside the container (missing parent folders are created). */
  put(archive: Readable): Promise<void>;
  /** Hand a tar stream of `path` (entries `<basename>`, `<basename>/...`) to `consume`. */
  get<T>(path: string, consume: (archive: Readable) => Promise<T>): Promise<T>;
}

/** Go's os.ModeSymlink, as reported in the X-Docker-Container-Path-Stat header. */
const MODE_SYMLINK = 2 ** 27;
const MAX_SYMLINK_HOPS = 40;

export function engineTransport(container: Docker.Container, sandboxId: string): ArchiveTransport {
  return {
    async put(archive) {
      await container.putArchive(archive, { path: '/' });
    },
    async get(path, consume) {
      let current = path;
      for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
        const response = (await withEngineRetry(() => container.getArchive({ path: current })).catch(
          (error: unknown) => {
            throw archiveError(error, path, sandboxId);
          },
        )) as Readable & { headers?: Record<string, string | undefined> };
        const stat = parsePathStat(response.headers?.['x-docker-container-path-stat']);
        if (stat && (stat.mode & MODE_SYMLINK) !== 0 && stat.linkTarget) {
          // The engine resolved the link inside the container for us; fetch what it points to.
          response.destroy();
          current = stat.linkTarget;
          continue;
        }
        try {
          return await consume(response);
        } finally {
          response.destroy();
        }
      }
      throw new SandboxError(`too many levels of symbolic links in '${path}' (sandbox ${sandboxId})`, {
        code: 'path_loop',
      });
    },
  };
}

/** Exits with this code when the path to archive does not exist. */
const MISSING_EXIT_CODE = 44;
const TAR_OUT_SCRIPT = `p=$(readlink -f -- "$1") && [ -e "$p" ] || { echo "no such file or directory" >&2; exit ${MISSING_EXIT_CODE}; }
cd -- "$(dirname -- "$p")" && exec tar -c -f - -- "$(basename -- "$p")"`;

export function execTransport(target: ExecTarget): ArchiveTransport {
  return {
    async put(archive) {
      const sink = new PassThrough();
      sink.resume();
      const result = await pipeExec(target, ['tar', '-x', '-f', '-', '-C', '/'], { stdin: archive, stdout: sink });
      if (result.exitCode !== 0) {
        throw new SandboxError(`tar could not unpack into sandbox ${target.sandboxId}: ${result.stderr.trim()}`, {
          code: 'write_failed',
        });
      }
    },
    async get(path, consume) {
      const archive = new PassThrough();
      const running = pipeExec(target, ['bash', '-c', TAR_OUT_SCRIPT, 'traj-tar', path], { stdout: archive });
      const consumed = consume(archive).then(
        (value) => ({ value }),
        (error: unknown) => {
          archive.resume();
          return { error };
        },
      );
      const [result, outcome] = await Promise.all([running, consumed]);
      if (result.exitCode === MISSING_EXIT_CODE) {
        throw new SandboxError(`no such file: '${path}' in sandbox ${target.sandboxId}`, { code: 'not_found' });
      }
      if (result.exitCode !== 0) {
        throw new SandboxError(`tar could not read '${path}' in sandbox ${target.sandboxId}: ${result.stderr.trim()}`, {
          code: 'read_failed',
        });
      }
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    },
  };
}

interface PathStat {
  mode: number;
  linkTarget?: string;
}

function parsePathStat(header: string | undefined): PathStat | undefined {
  if (!header) return undefined;
  try {
    return JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PathStat;
  } catch {
    return undefined;
  }
}

function archiveError(error: unknown, path: string, sandboxId: string): SandboxError {
  if (error instanceof SandboxError) return error;
  if (engineStatus(error) === 404) {
    const containerGone = /no such container:/i.test(errorMessage(error));
    return containerGone
      ? new SandboxError(`sandbox ${sandboxId} has no container any more: ${errorMessage(error)}`, {
          code: 'container_gone',
          retryable: true,
          cause: error,
        })
      : new SandboxError(`no such file: '${path}' in sandbox ${sandboxId}`, { code: 'not_found', cause: error });
  }
  return new SandboxError(`cannot reach '${path}' in sandbox ${sandboxId}: ${errorMessage(error)}`, {
    code: 'archive_failed',
    retryable: true,
    cause: error,
  });
}

/** Build a tar stream while `send` consumes it; a failed send stops the packing (and vice versa). */
export async function sendArchive(transport: ArchiveTransport, fill: (pack: tar.Pack) => Promise<void>): Promise<void> {
  const pack = tar.pack();
  const sending = transport.put(pack as unknown as Readable);
  sending.catch((error: unknown) => pack.destroy(error as Error));
  try {
    await fill(pack);
    pack.finalize();
  } catch (error) {
    pack.destroy(error as Error);
    await sending.catch(() => {});
    throw error;
  }
  await sending;
}

/** Archive name of an absolute container path: tar entries are relative to `/`. */
export function archiveName(absolutePath: string): string {
  return absolutePath.replace(/^\/+/, '');
}

/** One in-memory file entry (writeFile). */
export function addBuffer(pack: tar.Pack, name: string, data: Buffer): Promise<void> {
  return new Promise((done, fail) => {
    pack.entry({ name, type: 'file', mode: 0o644, size: data.length }, data, (error) => (error ? fail(error) : done()));
  });
}

/**
 * A host file or directory tree, streamed file by file (never read whole into memory). A file
 * with several names goes in once: its later names are hard-link entries to the first, so a
 * package whose installer hard-links a large binary (Claude Code's) is not copied twice. Pass the
 * same `links` to calls that pack parts of one archive.
 */
export async function addHostTree(
  pack: tar.Pack,
  name: string,
  hostPath: string,
  links: Map<string, string> = new Map(),
): Promise<void> {
  const info = await lstat(hostPath);
  if (info.isSymbolicLink()) {
    await addVoid(pack, { name, type: 'symlink', linkname: await readlink(hostPath), mode: 0o777 });
  } else if (info.isDirectory()) {
    await addVoid(pack, { name, type: 'directory', mode: info.mode & 0o7777, mtime: info.mtime });
    for (const child of (await readdir(hostPath)).sort())
      await addHostTree(pack, `${name}/${child}`, join(hostPath, child), links);
  } else if (info.isFile()) {
    const inode = `${info.dev}:${info.ino}`;
    const first = info.nlink > 1 ? links.get(inode) : undefined;
    if (first !== undefined) return addVoid(pack, { name, type: 'link', linkname: first, mode: info.mode & 0o7777 });
    if (info.nlink > 1) links.set(inode, name);
    await addHostFile(pack, name, hostPath, info);
  }
  // Sockets, fifos and devices have no place in a sandbox copy: skipped.
}

function addHostFile(pack: tar.Pack, name: string, hostPath: string, info: Stats): Promise<void> {
  return new Promise<void>((done, fail) => {
    const entry = pack.entry(
      { name, type: 'file', mode: info.mode & 0o7777, size: info.size, mtime: info.mtime },
      (error) => (error ? fail(error) : done()),
    );
    const source = createReadStream(hostPath);
    source.on('error', (error) => entry.destroy(error));
    source.pipe(entry as unknown as Writable);
  });
}

type EntryHeader = Parameters<tar.Pack['entry']>[0];

/** A directory or symlink entry: no body, so tar-stream closes it by itself. */
function addVoid(pack: tar.Pack, header: EntryHeader): Promise<void> {
  return new Promise((done, fail) => {
    pack.entry(header, (error) => (error ? fail(error) : done()));
  });
}

/** Call `handle` for each entry in turn; it must consume (or resume) the entry's stream. */
export function forEachEntry(
  archive: Readable,
  handle: (header: tar.Header, body: Readable) => Promise<void>,
): Promise<void> {
  return new Promise((done, fail) => {
    const extract = tar.extract();
    extract.on('entry', (header, body, next) => {
      handle(header, body as unknown as Readable).then(
        () => next(),
        (error: unknown) => extract.destroy(error as Error),
      );
    });
    extract.on('finish', () => done());
    extract.on('error', fail);
    archive.on('error', (error) => extract.destroy(error));
    archive.pipe(extract as unknown as Writable);
  });
}

/** The single file of an archive as a Buffer (readFile). */
export async function readSingleFile(
  archive: Readable,
  path: string,
  sandboxId: string,
  maxBytes = DEFAULT_MAX_READ_BYTES,
): Promise<Buffer> {
  let content: Buffer | undefined;
  let problem: SandboxError | undefined;
  await forEachEntry(archive, async (header, body) => {
    if (content !== undefined || problem !== undefined) return drain(body);
    if (header.type === 'directory') {
      problem = new SandboxError(`'${path}' is a directory, not a file (sandbox ${sandboxId})`, {
        code: 'is_directory',
      });
      return drain(body);
    }
    if (header.type !== 'file' && header.type !== 'contiguous-file') {
      problem = notRegular(path, `a ${header.type}`);
      return drain(body);
    }
    // Refused before a byte is kept: a tool's memory is bounded whatever the file (the rest streams past).
    if ((header.size ?? 0) > maxBytes) {
      problem = tooLarge(path, header.size ?? 0, maxBytes);
      return drain(body);
    }
    const chunks: Buffer[] = [];
    body.on('data', (chunk: Buffer) => chunks.push(chunk));
    await ended(body);
    content = Buffer.concat(chunks);
  });
  if (problem) throw problem;
  if (content === undefined)
    throw new SandboxError(`no such file: '${path}' in sandbox ${sandboxId}`, { code: 'not_found' });
  return content;
}

/**
 * Write an archive's tree AT `destination` (its first path component is replaced by it), each
 * file streamed to disk. Entries that would land outside `destination` are refused, and links
 * are made only after every file is written, so no write can pass through a link from the
 * archive.
 */
export async function extractTree(archive: Readable, destination: string): Promise<void> {
  const root = resolve(destination);
  const links: Array<() => Promise<void>> = [];
  const place = (name: string): string => {
    const parts = name.split('/').filter((part) => part !== '' && part !== '.');
    const target = resolve(root, ...parts.slice(1));
    if (parts.includes('..') || (target !== root && !target.startsWith(root + sep))) {
      throw new SandboxError(`refusing archive entry '${name}': it points outside ${root}`, { code: 'path_escape' });
    }
    return target;
  };
  await mkdir(dirname(root), { recursive: true });
  await forEachEntry(archive, async (header, body) => {
    const target = place(header.name);
    if (header.type === 'directory') {
      await mkdir(target, { recursive: true });
    } else if (header.type === 'file' || header.type === 'contiguous-file') {
      await mkdir(dirname(target), { recursive: true });
      await writeStream(body, target, header.mode ?? 0o644);
      return;
    } else if (header.type === 'symlink' && header.linkname) {
      const linkname = header.linkname;
      links.push(async () => symlink(linkname, target));
    } else if (header.type === 'link' && header.linkname) {
      const existing = place(header.linkname);
      links.push(async () => link(existing, target));
    }
    await drain(body);
  });
  for (const make of links) await make();
}

function writeStream(body: Readable, target: string, mode: number): Promise<void> {
  return new Promise((done, fail) => {
    const file = createWriteStream(target, { mode: mode & 0o777 });
    file.on('error', fail);
    file.on('close', () => done());
    body.on('error', (error) => file.destroy(error));
    body.pipe(file);
  });
}

function drain(body: Readable): Promise<void> {
  body.resume();
  return ended(body);
}

function ended(body: Readable): Promise<void> {
  return new Promise((done, fail) => {
    body.on('end', () => done());
    body.on('error', fail);
  });
}
