import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import pLimit from 'p-limit';
import tar from 'tar-stream';
import { errorMessage, SandboxError } from '../errors.js';
import { addHostTree } from './docker-archive.js';
import { connectDocker, engineStatus } from './docker-engine.js';
import { LABELS } from './docker-labels.js';

/** One image a task needs built from its own Dockerfile. */
export interface ImageBuild {
  /** The tag the image gets: the task's name and a hash of its build context (see contextTag). */
  tag: string;
  /** Absolute path of the build context (the task's environment/ folder). */
  context: string;
  /** The Dockerfile's path inside the context (default `Dockerfile`). */
  dockerfile?: string;
  /** The task it is for, named in every error. */
  task: string;
  /** Harbor's `[environment].build_timeout_sec` (default 600). */
  timeoutSec?: number;
}

export interface BuildSummary {
  built: string[];
  reused: string[];
}

/** Characters of the build log kept in a failure's message (its end, where the error is). */
export const BUILD_LOG_TAIL_CHARS = 3_000;
const DEFAULT_BUILD_TIMEOUT_SEC = 600;

/**
 * A tag that changes whenever anything in the build context changes (every file's path, mode
 * and bytes; symlinks by target), so an image is built once per context and reused by every
 * later run and rollout, and an edited Dockerfile never runs a stale image.
 */
export function contextTag(repository: string, context: string): string {
  const hash = createHash('sha256');
  const walk = (absolute: string, relative: string): void => {
    const info = lstatSync(absolute);
    if (info.isSymbolicLink()) hash.update(`l ${relative} ${readlinkSync(absolute)}\0`);
    else if (info.isDirectory()) {
      hash.update(`d ${relative}\0`);
      for (const child of readdirSync(absolute).sort()) walk(join(absolute, child), `${relative}/${child}`);
    } else if (info.isFile()) {
      hash.update(`f ${relative} ${(info.mode & 0o111) !== 0 ? 'x' : '-'} ${info.size}\0`);
      hash.update(readFileSync(absolute));
    }
  };
  walk(context, '.');
  const name = repository
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '');
  return `traj-task/${name || 'task'}:${hash.digest('hex').slice(0, 16)}`;
}

/**
 * Every image of `builds` on the engine: one already there (same context hash) is reused, the
 * others built, at most `concurrency` at once. This machine builds offline: a FROM image that is
 * not on the engine is a failure naming it, never a pull. Every failure is collected and
 * reported at once as `image_build_failed` (a task setup failure), each with its log's tail.
 */
export async function ensureImages(
  builds: readonly ImageBuild[],
  options: { concurrency?: number; onNotice?: (line: string) => void } = {},
): Promise<BuildSummary> {
  const docker = await connectDocker();
  const unique = [...new Map(builds.map((build) => [build.tag, build])).values()];
  const limit = pLimit(options.concurrency ?? 2);
  const summary: BuildSummary = { built: [], reused: [] };
  const failures: string[] = [];
  await Promise.all(
    unique.map((build) =>
      limit(async () => {
        if (await imageExists(docker, build.tag)) return void summary.reused.push(build.tag);
        options.onNotice?.(`building ${build.tag} for task '${build.task}'`);
        try {
          await buildImage(docker, build);
          summary.built.push(build.tag);
        } catch (error) {
          failures.push(errorMessage(error));
        }
      }),
    ),
  );
  if (failures.length > 0)
    throw new SandboxError(failures.join('\n\n'), {
      code: 'image_build_failed',
      details: { tasks: unique.filter((build) => !summary.built.includes(build.tag)).map((build) => build.task) },
    });
  return summary;
}

async function imageExists(docker: Docker, image: string): Promise<boolean> {
  try {
    await docker.getImage(image).inspect();
    return true;
  } catch (error) {
    if (engineStatus(error) === 404) return false;
    throw new SandboxError(`cannot inspect image '${image}' on the Docker engine: ${errorMessage(error)}`, {
      code: 'engine_unreachable',
      retryable: true,
      cause: error,
    });
  }
}

/** The images a Dockerfile starts FROM, less its own earlier stages, `scratch` and ones built from ARGs. */
export function baseImages(dockerfile: string): string[] {
  const stages = new Set<string>();
  const bases: string[] = [];
  for (const line of dockerfile.split('\n')) {
    const match = /^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?\s*$/i.exec(line);
    if (!match) continue;
    const image = match[1]!;
    if (!stages.has(image.toLowerCase()) && image !== 'scratch' && !image.includes('$')) bases.push(image);
    if (match[2]) stages.add(match[2].toLowerCase());
  }
  return [...new Set(bases)];
}

async function buildImage(docker: Docker, build: ImageBuild): Promise<void> {
  const dockerfile = build.dockerfile ?? 'Dockerfile';
  const where = `task '${build.task}': ${join(build.context, dockerfile)}`;
  let text: string;
  try {
    text = readFileSync(join(build.context, dockerfile), 'utf8');
  } catch (error) {
    throw new Error(`${where}: cannot read the Dockerfile (${errorMessage(error)})`);
  }
  for (const base of baseImages(text))
    if (!(await imageExists(docker, base)))
      throw new Error(
        `${where}: FROM ${base} is not on this Docker engine, and traj builds offline (it never pulls); load or build ${base} first (docker load, or scripts/build-sandbox-image.sh for traj-sandbox:bookworm)`,
      );
  const timeoutSec = build.timeoutSec ?? DEFAULT_BUILD_TIMEOUT_SEC;
  const log: string[] = [];
  try {
    const stream = await docker.buildImage(contextArchive(build.context), {
      t: build.tag,
      dockerfile,
      labels: { [LABELS.managed]: '1', 'traj.task': build.task },
      rm: true,
      forcerm: true,
      abortSignal: AbortSignal.timeout(timeoutSec * 1000),
    });
    await followBuild(docker, stream, log);
  } catch (error) {
    const timedOut = (error as Error).name === 'AbortError' || (error as Error).name === 'TimeoutError';
    const why = timedOut ? `did not finish within build_timeout_sec = ${timeoutSec}` : errorMessage(error);
    throw new Error(`${where}: the image build failed: ${why}\n--- build log (end) ---\n${logTail(log)}`);
  }
}

/** The build's progress until its end; an `error` event (a failed RUN, a bad instruction) rejects. */
function followBuild(docker: Docker, stream: NodeJS.ReadableStream, log: string[]): Promise<void> {
  return new Promise((done, fail) => {
    docker.modem.followProgress(
      stream,
      (error: Error | null) => (error ? fail(error) : done()),
      (event: { stream?: string; error?: string; errorDetail?: { message?: string } }) => {
        if (event.stream) log.push(event.stream);
        if (event.error) {
          log.push(`${event.error}\n`);
          fail(new Error(event.errorDetail?.message ?? event.error));
        }
      },
    );
  });
}

function logTail(log: string[]): string {
  const text = log.join('').trim();
  return text.length <= BUILD_LOG_TAIL_CHARS ? text : `...${text.slice(-BUILD_LOG_TAIL_CHARS)}`;
}

/** The build context as a tar stream, packed while the engine reads it. */
function contextArchive(context: string): Readable {
  const pack = tar.pack();
  (async () => {
    const links = new Map<string, string>();
    for (const child of readdirSync(context).sort()) await addHostTree(pack, child, join(context, child), links);
    pack.finalize();
  })().catch((error: unknown) => pack.destroy(error as Error));
  return pack as unknown as Readable;
}
