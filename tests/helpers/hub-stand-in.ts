import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the Hugging Face Hub, implementing exactly the endpoints
 * `@huggingface/hub` calls to publish a dataset (read from its source, v2.17):
 *
 *   GET  /api/datasets/ORG/NAME                          repoExists
 *   POST /api/repos/create                               createRepo
 *   GET  /api/datasets/ORG/NAME/tree/REV[/PATH]          listFiles (recursive)
 *   POST /api/datasets/ORG/NAME/branch/BRANCH            createBranch
 *   POST /api/datasets/ORG/NAME/preupload/REV            commit: which files go to LFS
 *   POST /datasets/ORG/NAME.git/info/lfs/objects/batch   commit: LFS batch (basic transfer)
 *   PUT  /lfs-upload/OID                                 commit: the LFS object itself
 *   POST /api/datasets/ORG/NAME/commit/REV               commit: NDJSON header + operations
 *
 * and the two it calls to download a file (downloadFile, downloadFileToCacheDir):
 *
 *   POST /api/datasets/ORG/NAME/paths-info/REV           size, oid and last commit of some paths
 *   GET  /datasets/ORG/NAME/resolve/REV/PATH             the file (first `Range: bytes=0-0` for size and ETag)
 *
 * Every call but the LFS upload (a pre-signed URL on the real Hub) must carry the token.
 * Repositories keep their files per branch, with the oids the real Hub reports (git blob sha1,
 * LFS sha256), and every commit is recorded.
 */
export interface StandInFile {
  content: Buffer;
  oid: string;
  lfs?: { oid: string; size: number; pointerSize: number };
}

export interface StandInCommit {
  repository: string;
  branch: string;
  oid: string;
  summary: string;
  /** Paths added or updated, with how they were sent. */
  files: Array<{ path: string; lfs: boolean }>;
  deleted: string[];
}

export interface StandInRepository {
  id: string;
  private: boolean;
  branches: Map<string, Map<string, StandInFile>>;
}

export interface HubStandIn {
  url: string;
  token: string;
  repositories: Map<string, StandInRepository>;
  commits: StandInCommit[];
  requests: Array<{ method: string; path: string }>;
  /** Requests refused for a missing or wrong token. */
  unauthorized: number;
  lfsUploads: string[];
  file(repository: string, path: string, branch?: string): StandInFile | undefined;
  /** Make a repository holding these files on main (what a download test serves). */
  seed(repository: string, files: Record<string, string | Buffer>): void;
  close(): Promise<void>;
}

const GITATTRIBUTES = '*.parquet filter=lfs diff=lfs merge=lfs -text\n*.arrow filter=lfs diff=lfs merge=lfs -text\n';
const LFS_LIMIT = 10 * 1024 * 1024;

export async function startHubStandIn(options: { token?: string } = {}): Promise<HubStandIn> {
  const token = options.token ?? `hf_${randomBytes(12).toString('hex')}`;
  const lfsObjects = new Map<string, Buffer>();
  const state = {
    url: '',
    token,
    repositories: new Map<string, StandInRepository>(),
    commits: [] as StandInCommit[],
    requests: [] as Array<{ method: string; path: string }>,
    unauthorized: 0,
    lfsUploads: [] as string[],
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => send(response, 500, { error: String(error) }));
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', state.url);
    const path = decodeURIComponent(url.pathname);
    state.requests.push({ method: request.method ?? 'GET', path });
    const body = await readBody(request);
    const upload = /^\/lfs-upload\/([0-9a-f]{64})$/.exec(path);
    if (request.method === 'PUT' && upload) return storeLfsObject(upload[1]!, body, response);
    if (request.headers.authorization !== `Bearer ${token}`) {
      state.unauthorized++;
      return send(response, 401, { error: 'Invalid credentials in Authorization header' });
    }
    if (request.method === 'POST' && path === '/api/repos/create')
      return createRepository(JSON.parse(body.toString()), response);
    const lfsBatch = /^\/datasets\/([\w.-]+\/[\w.-]+)\.git\/info\/lfs\/objects\/batch$/.exec(path);
    if (request.method === 'POST' && lfsBatch)
      return answerLfsBatch(lfsBatch[1]!, JSON.parse(body.toString()), response);
    const download = /^\/datasets\/([\w.-]+\/[\w.-]+)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    if (request.method === 'GET' && download)
      return serveFile(download[1]!, download[2]!, download[3]!, request, response);
    const api =
      /^\/api\/datasets\/([\w.-]+\/[\w.-]+)(?:\/(tree|branch|preupload|commit|paths-info)\/([^/]+)(\/.*)?)?$/.exec(
        path,
      );
    if (!api) return send(response, 404, { error: `stand-in: no route for ${request.method} ${path}` });
    const repository = state.repositories.get(api[1]!);
    if (!repository) return send(response, 404, { error: 'Repository not found' });
    const [, , action, revision] = api;
    if (!action && request.method === 'GET')
      return send(response, 200, { id: repository.id, private: repository.private });
    if (action === 'tree' && request.method === 'GET') return listTree(repository, revision!, response);
    if (action === 'paths-info' && request.method === 'POST')
      return pathsInfo(repository, revision!, JSON.parse(body.toString()), response);
    if (action === 'branch' && request.method === 'POST') return createBranch(repository, revision!, response);
    if (action === 'preupload' && request.method === 'POST') return preupload(JSON.parse(body.toString()), response);
    if (action === 'commit' && request.method === 'POST')
      return commit(repository, revision!, body.toString(), response);
    return send(response, 405, { error: `stand-in: ${request.method} not allowed on ${path}` });
  }

  function createRepository(
    payload: { name: string; organization: string; type: string; visibility?: string },
    response: ServerResponse,
  ): void {
    const id = `${payload.organization}/${payload.name}`;
    if (payload.type !== 'dataset')
      return send(response, 400, { error: `stand-in: only datasets, got ${payload.type}` });
    if (state.repositories.has(id)) return send(response, 409, { error: 'You already created this dataset repo' });
    const main = new Map<string, StandInFile>([['.gitattributes', regularFile(Buffer.from(GITATTRIBUTES))]]);
    state.repositories.set(id, { id, private: payload.visibility === 'private', branches: new Map([['main', main]]) });
    send(response, 200, { url: `${state.url}/datasets/${id}`, id });
  }

  function listTree(repository: StandInRepository, revision: string, response: ServerResponse): void {
    const files = repository.branches.get(revision);
    if (!files) return send(response, 404, { error: `Invalid rev id: ${revision}` });
    const directories = new Set<string>();
    for (const path of files.keys()) {
      const parts = path.split('/');
      for (let depth = 1; depth < parts.length; depth++) directories.add(parts.slice(0, depth).join('/'));
    }
    const entries = [
      ...[...directories].map((path) => ({ type: 'directory', path, size: 0, oid: sha1(path) })),
      ...[...files.entries()].map(([path, file]) => ({
        type: 'file',
        path,
        size: file.lfs?.size ?? file.content.length,
        oid: file.oid,
        ...(file.lfs ? { lfs: file.lfs } : {}),
      })),
    ];
    send(response, 200, entries);
  }

  function pathsInfo(
    repository: StandInRepository,
    revision: string,
    payload: { paths: string[] },
    response: ServerResponse,
  ): void {
    const files = repository.branches.get(revision);
    if (!files) return send(response, 404, { error: `Invalid rev id: ${revision}` });
    const lastCommit = { id: sha1(`${repository.id}@${revision}`), title: 'stand-in', date: '2025-01-01T00:00:00Z' };
    const entries = payload.paths
      .filter((path) => files.has(path))
      .map((path) => ({
        type: 'file',
        path,
        size: files.get(path)!.content.length,
        oid: files.get(path)!.oid,
        lastCommit,
      }));
    send(response, 200, entries);
  }

  function serveFile(
    id: string,
    revision: string,
    path: string,
    request: IncomingMessage,
    response: ServerResponse,
  ): void {
    const file = state.repositories.get(id)?.branches.get(revision)?.get(path);
    if (!file) {
      response.writeHead(404, { 'content-type': 'application/json', 'x-error-code': 'EntryNotFound' });
      response.end(JSON.stringify({ error: 'Entry not found' }));
      return;
    }
    const headers = { etag: `"${file.oid}"`, 'content-type': 'application/octet-stream' };
    if (request.headers.range === 'bytes=0-0') {
      response.writeHead(206, { ...headers, 'content-range': `bytes 0-0/${file.content.length}` });
      response.end(file.content.subarray(0, 1));
      return;
    }
    response.writeHead(200, { ...headers, 'content-length': String(file.content.length) });
    response.end(file.content);
  }

  function createBranch(repository: StandInRepository, branch: string, response: ServerResponse): void {
    if (repository.branches.has(branch)) return send(response, 409, { error: `Reference already exists: ${branch}` });
    repository.branches.set(branch, new Map(repository.branches.get('main')));
    send(response, 200, {});
  }

  function preupload(payload: { files: Array<{ path: string; size: number }> }, response: ServerResponse): void {
    send(response, 200, {
      files: payload.files.map((file) => ({
        path: file.path,
        uploadMode: /\.(parquet|arrow)$/.test(file.path) || file.size > LFS_LIMIT ? 'lfs' : 'regular',
      })),
    });
  }

  function answerLfsBatch(
    repository: string,
    payload: { operation: string; objects: Array<{ oid: string; size: number }> },
    response: ServerResponse,
  ): void {
    if (!state.repositories.has(repository)) return send(response, 404, { error: 'Repository not found' });
    const objects = payload.objects.map((object) =>
      lfsObjects.has(object.oid)
        ? { oid: object.oid, size: object.size }
        : {
            oid: object.oid,
            size: object.size,
            actions: { upload: { href: `${state.url}/lfs-upload/${object.oid}` } },
          },
    );
    send(response, 200, { transfer: 'basic', objects }, 'application/vnd.git-lfs+json');
  }

  function storeLfsObject(oid: string, content: Buffer, response: ServerResponse): void {
    if (sha256(content) !== oid)
      return send(response, 400, { error: 'stand-in: the uploaded bytes do not match the oid' });
    lfsObjects.set(oid, content);
    state.lfsUploads.push(oid);
    send(response, 200, {});
  }

  function commit(repository: StandInRepository, branch: string, ndjson: string, response: ServerResponse): void {
    const files = repository.branches.get(branch);
    if (!files) return send(response, 404, { error: `Invalid rev id: ${branch}` });
    const next = new Map(files);
    const record: StandInCommit = { repository: repository.id, branch, oid: '', summary: '', files: [], deleted: [] };
    for (const line of ndjson.split('\n').filter(Boolean)) {
      const { key, value } = JSON.parse(line) as { key: string; value: Record<string, string | number> };
      if (key === 'header') record.summary = String(value.summary);
      else if (key === 'file') {
        next.set(
          String(value.path),
          regularFile(Buffer.from(String(value.content), value.encoding === 'base64' ? 'base64' : 'utf8')),
        );
        record.files.push({ path: String(value.path), lfs: false });
      } else if (key === 'lfsFile') {
        const content = lfsObjects.get(String(value.oid));
        if (!content)
          return send(response, 400, {
            error: `stand-in: LFS object ${value.oid} of ${value.path} was never uploaded`,
          });
        next.set(String(value.path), {
          content,
          oid: sha1(`pointer ${value.oid}`),
          lfs: { oid: String(value.oid), size: content.length, pointerSize: 134 },
        });
        record.files.push({ path: String(value.path), lfs: true });
      } else if (key === 'deletedFile') {
        if (!next.delete(String(value.path)))
          return send(response, 404, { error: `stand-in: cannot delete ${value.path}: no such file` });
        record.deleted.push(String(value.path));
      } else return send(response, 400, { error: `stand-in: unknown commit line ${key}` });
    }
    repository.branches.set(branch, next);
    record.oid = sha1(`${repository.id}:${state.commits.length}:${ndjson}`);
    state.commits.push(record);
    send(response, 200, {
      success: true,
      commitOid: record.oid,
      commitUrl: `${state.url}/datasets/${repository.id}/commit/${record.oid}`,
      hookOutput: '',
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(state, {
    file: (repository: string, path: string, branch = 'main') =>
      state.repositories.get(repository)?.branches.get(branch)?.get(path),
    seed: (repository: string, files: Record<string, string | Buffer>) => {
      const main = new Map(Object.entries(files).map(([path, content]) => [path, regularFile(Buffer.from(content))]));
      state.repositories.set(repository, { id: repository, private: false, branches: new Map([['main', main]]) });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

function regularFile(content: Buffer): StandInFile {
  return { content, oid: sha1(Buffer.concat([Buffer.from(`blob ${content.length}\0`), content])) };
}

function sha1(data: string | Buffer): string {
  return createHash('sha1').update(data).digest('hex');
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function send(response: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  response.writeHead(status, { 'content-type': type });
  response.end(JSON.stringify(body));
}
