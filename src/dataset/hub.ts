import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { DatasetError, errorMessage } from '../errors.js';
import { trajHome } from '../util/paths.js';

export const HUB_URL_FORM = 'hf://datasets/ORG/NAME[@REVISION]/PATH';
const DEFAULT_HUB_URL = 'https://huggingface.co';

export interface HubLocation {
  /** ORG/NAME */
  repository: string;
  revision: string;
  /** The file inside the repository. */
  path: string;
}

export interface HubOptions {
  /** Another Hub endpoint (a mirror, a stand-in); default $HF_ENDPOINT, else huggingface.co. */
  hubUrl?: string;
  /** Where downloads are kept; default TRAJ_HOME/cache/hub. */
  cacheDir?: string;
  signal?: AbortSignal;
}

export function isHubUrl(source: string): boolean {
  return source.startsWith('hf://');
}

/** `hf://datasets/ORG/NAME[@REVISION]/PATH`; a revision with slashes is URL-encoded (refs%2Fpr%2F1). */
export function parseHubUrl(source: string): HubLocation {
  const match = /^hf:\/\/datasets\/([^/@]+)\/([^/@]+)(?:@([^/]+))?\/(.+)$/.exec(source);
  if (!match) {
    throw new DatasetError(`${source}: expected ${HUB_URL_FORM}`, { code: 'dataset_hub_url', details: { source } });
  }
  const [, organisation, name, revision, path] = match;
  return {
    repository: `${organisation}/${name}`,
    revision: revision ? decodeURIComponent(revision) : 'main',
    path: path!,
  };
}

export function hubCacheDir(): string {
  return join(trajHome(), 'cache', 'hub');
}

/**
 * Download one dataset file into the local cache (the Hugging Face cache layout: blobs plus
 * snapshot links) and return its local path; a file already cached is not downloaded again.
 * When the Hub cannot be reached, the snapshot last downloaded for this revision is used, so
 * a resumed run does not need the network.
 */
export async function downloadHubFile(source: string, options: HubOptions = {}): Promise<string> {
  const location = parseHubUrl(source);
  const hub = await import('@huggingface/hub');
  const cacheDir = options.cacheDir ?? hubCacheDir();
  const hubUrl = (options.hubUrl ?? process.env.HF_ENDPOINT ?? DEFAULT_HUB_URL).replace(/\/+$/, '');
  const storage = join(cacheDir, `datasets--${location.repository.replace('/', '--')}`);
  const reference = join(storage, 'refs', location.revision);
  const signal = options.signal;
  try {
    const local = await hub.downloadFileToCacheDir({
      repo: { type: 'dataset', name: location.repository },
      path: location.path,
      revision: location.revision,
      hubUrl,
      cacheDir,
      ...(process.env.HF_TOKEN ? { accessToken: process.env.HF_TOKEN } : {}),
      fetch: (input, init) => fetch(input, signal ? { ...init, signal } : init),
    });
    await rememberSnapshot(reference, join(storage, 'snapshots'), local);
    return local;
  } catch (error) {
    if (signal?.aborted) throw error;
    if (failureKind(error) === 'unreachable') {
      const cached = await cachedSnapshot(reference, join(storage, 'snapshots'), location.path);
      if (cached) return cached;
    }
    throw hubError(source, hubUrl, error);
  }
}

/** Record which snapshot this revision resolved to, for offline use later. */
async function rememberSnapshot(reference: string, snapshots: string, local: string): Promise<void> {
  const snapshot = relative(snapshots, local).split(sep)[0]!;
  await mkdir(dirname(reference), { recursive: true });
  await writeFile(reference, snapshot);
}

async function cachedSnapshot(reference: string, snapshots: string, path: string): Promise<string | undefined> {
  if (!existsSync(reference)) return undefined;
  const local = join(snapshots, (await readFile(reference, 'utf8')).trim(), path);
  return existsSync(local) ? local : undefined;
}

type FailureKind = 'not_found' | 'access' | 'unreachable';

function failureKind(error: unknown): FailureKind {
  const status = (error as { statusCode?: unknown }).statusCode;
  // A missing repository is a 404; a missing file in an existing one is an empty paths-info
  // answer, which the library reports only through this message.
  if (status === 404 || /cannot get path info/.test(errorMessage(error))) return 'not_found';
  if (status === 401 || status === 403) return 'access';
  return 'unreachable';
}

function hubError(source: string, hubUrl: string, error: unknown): DatasetError {
  const kind = failureKind(error);
  if (kind === 'not_found') {
    return new DatasetError(
      `${source}: not found on ${hubUrl} (check the organisation, dataset name, revision and file path)`,
      {
        code: 'dataset_hub_not_found',
        cause: error,
      },
    );
  }
  if (kind === 'access') {
    const status = (error as { statusCode?: unknown }).statusCode;
    return new DatasetError(
      `${source}: ${hubUrl} refused access (status ${String(status)}); for a gated or private dataset set HF_TOKEN`,
      {
        code: 'dataset_hub_access',
        cause: error,
      },
    );
  }
  const cause = (error as { cause?: unknown }).cause;
  const detail = cause ? `${errorMessage(error)}: ${errorMessage(cause)}` : errorMessage(error);
  return new DatasetError(
    `${source}: cannot download from ${hubUrl} (${detail}); use --hub-url (or HF_ENDPOINT) for another endpoint`,
    {
      code: 'dataset_hub_unreachable',
      retryable: true,
      cause: error,
    },
  );
}

/**
 * A whole dataset repository (or one folder of it) at a revision, downloaded with
 * `@huggingface/hub` and copied with links resolved into `destination` (a task's build context
 * must hold real files, not the cache's links to blobs). The caller keeps one copy per version.
 */
export async function downloadHubFolder(
  repository: string,
  revision: string,
  destination: string,
  options: HubOptions & { folder?: string } = {},
): Promise<void> {
  const hub = await import('@huggingface/hub');
  const { cpSync } = await import('node:fs');
  const hubUrl = (options.hubUrl ?? process.env.HF_ENDPOINT ?? DEFAULT_HUB_URL).replace(/\/+$/, '');
  const source = `hf://datasets/${repository}@${encodeURIComponent(revision)}/${options.folder ?? ''}`;
  let snapshot: string;
  try {
    snapshot = await hub.snapshotDownload({
      repo: { type: 'dataset', name: repository },
      revision,
      hubUrl,
      cacheDir: options.cacheDir ?? hubCacheDir(),
      ...(process.env.HF_TOKEN ? { accessToken: process.env.HF_TOKEN } : {}),
    });
  } catch (error) {
    throw hubError(source, hubUrl, error);
  }
  const from = options.folder ? join(snapshot, options.folder) : snapshot;
  if (!existsSync(from))
    throw new DatasetError(`${source}: the repository has no folder '${options.folder}'`, {
      code: 'dataset_hub_not_found',
    });
  cpSync(from, destination, { recursive: true, dereference: true });
}
