import { openAsBlob } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, errorMessage } from '../errors.js';
import { fileDigests } from './content-hash.js';
import { HubError } from './hub-error.js';

export const DEFAULT_HUB_URL = 'https://huggingface.co';

export interface PushInput {
  /** The exported dataset folder. */
  directory: string;
  /** The files to publish, relative to `directory` (data shards and README.md). */
  files: string[];
  /** ORG/NAME of the dataset repository. */
  repository: string;
  token: string;
  hubUrl: string;
  /** The branch to commit to (created from main when missing). */
  revision: string;
  /** Create the repository private (an existing repository keeps its visibility). */
  private: boolean;
  commitTitle: string;
}

export interface PushResult {
  repository: string;
  revision: string;
  created: boolean;
  /** Null when the remote already held exactly these files: nothing was committed. */
  commit: { oid: string; url: string } | null;
  uploaded: string[];
  unchanged: string[];
  deleted: string[];
}

/** The parts of a remote tree entry a comparison needs. */
interface RemoteFile {
  oid?: string;
  lfs?: { oid: string };
}

type HubModule = typeof import('@huggingface/hub');

/**
 * Publish an exported folder to a Hub dataset repository in one commit. The remote tree is read
 * first and each file compared by its digest (sha256 for LFS files, the git blob id otherwise):
 * unchanged files are not sent, shards of an earlier export that this one no longer has are
 * deleted in the same commit, and when nothing differs no commit is made at all, so pushing the
 * same export twice leaves the repository at the same revision.
 */
export async function pushToHub(input: PushInput): Promise<PushResult> {
  if (!/^[\w.-]+\/[\w.-]+$/.test(input.repository)) {
    throw new ConfigError(`--push: expected ORG/NAME (a Hub dataset repository), got '${input.repository}'`, {
      code: 'cli_usage',
    });
  }
  if (!input.token.startsWith('hf_')) {
    throw new ConfigError('the Hub token does not look like a Hugging Face access token (it should start with "hf_")', {
      code: 'invalid_token',
    });
  }
  const hub = await import('@huggingface/hub');
  const repo = { type: 'dataset' as const, name: input.repository };
  const common = { hubUrl: input.hubUrl, accessToken: input.token };
  const guard = <T>(step: string, call: () => Promise<T>) => hubCall(input, step, call);

  const exists = await guard('checking the repository', () => hub.repoExists({ repo, ...common }));
  if (!exists)
    await guard('creating the repository', () =>
      hub.createRepo({ repo, ...common, ...(input.private ? { visibility: 'private' as const } : {}) }),
    );
  const remote = await remoteFiles(hub, input, guard);
  const plan = await planCommit(input, remote);
  const result: PushResult = {
    repository: input.repository,
    revision: input.revision,
    created: !exists,
    commit: null,
    ...plan,
  };
  if (plan.uploaded.length === 0 && plan.deleted.length === 0) return result;

  const operations = [
    ...(await Promise.all(
      plan.uploaded.map(async (path) => ({
        operation: 'addOrUpdate' as const,
        path,
        content: await openAsBlob(join(input.directory, path)),
      })),
    )),
    ...plan.deleted.map((path) => ({ operation: 'delete' as const, path })),
  ];
  const output = await guard('committing', () =>
    hub.commit({ repo, ...common, branch: input.revision, title: input.commitTitle, operations }),
  );
  result.commit = output ? { oid: output.commit.oid, url: output.commit.url } : null;
  return result;
}

async function remoteFiles(
  hub: HubModule,
  input: PushInput,
  guard: <T>(step: string, call: () => Promise<T>) => Promise<T>,
): Promise<Map<string, RemoteFile>> {
  const repo = { type: 'dataset' as const, name: input.repository };
  const list = async () => {
    const files = new Map<string, RemoteFile>();
    for await (const entry of hub.listFiles({
      repo,
      revision: input.revision,
      recursive: true,
      hubUrl: input.hubUrl,
      accessToken: input.token,
    })) {
      if (entry.type === 'file') files.set(entry.path, entry);
    }
    return files;
  };
  try {
    return await list();
  } catch (error) {
    const missingBranch = (error as { statusCode?: number }).statusCode === 404 && input.revision !== 'main';
    if (!missingBranch) throw hubError(input, 'listing the remote files', error);
    await guard(`creating the branch ${input.revision}`, () =>
      hub.createBranch({ repo, branch: input.revision, hubUrl: input.hubUrl, accessToken: input.token }),
    );
    return guard('listing the remote files', list);
  }
}

async function planCommit(
  input: PushInput,
  remote: Map<string, RemoteFile>,
): Promise<Pick<PushResult, 'uploaded' | 'unchanged' | 'deleted'>> {
  const uploaded: string[] = [];
  const unchanged: string[] = [];
  for (const path of input.files) {
    const existing = remote.get(path);
    const digests = await fileDigests(join(input.directory, path));
    const same =
      existing !== undefined && (existing.lfs ? existing.lfs.oid === digests.sha256 : existing.oid === digests.gitSha1);
    (same ? unchanged : uploaded).push(path);
  }
  const local = new Set(input.files);
  // Only shards are ours to remove: other files in the repository (its .gitattributes, files a
  // person added) are left alone.
  const deleted = [...remote.keys()].filter((path) => path.startsWith('data/') && !local.has(path)).sort();
  return { uploaded, unchanged, deleted };
}

/** Run one Hub call; its failure becomes a HubError naming the step. */
async function hubCall<T>(input: PushInput, step: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw hubError(input, step, error);
  }
}

/** A Hub failure as a typed error with the token scrubbed out of the message. */
function hubError(input: PushInput, step: string, error: unknown): HubError {
  const status = (error as { statusCode?: number }).statusCode;
  const message = errorMessage(error).split(input.token).join('[token]');
  const owner = input.repository.split('/')[0];
  const hint =
    status === undefined
      ? ` (is ${input.hubUrl} reachable? --hub-url sets another Hub)`
      : status === 401 || status === 403
        ? ` (check that the token is valid and may write to ${owner})`
        : '';
  return new HubError(
    `Hub push to ${input.repository}@${input.revision} failed while ${step}: ${status !== undefined ? `HTTP ${status}: ` : ''}${message}${hint}`,
    {
      code:
        status === undefined
          ? 'hub_unreachable'
          : status === 401 || status === 403
            ? 'hub_unauthorized'
            : 'hub_request_failed',
      retryable: status === undefined || status === 429 || status >= 500,
    },
  );
}
