import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * A read-only Hugging Face Hub for one dataset repository whose files are a local folder,
 * answering exactly the calls `@huggingface/hub` (v2.17) makes to download a snapshot:
 *
 *   GET  /api/datasets/ORG/NAME/revision/REV          datasetInfo: the commit sha
 *   GET  /api/datasets/ORG/NAME/tree/REV[/PATH]       listFiles (recursive)
 *   POST /api/datasets/ORG/NAME/paths-info/REV        pathsInfo: one file's oid and size
 *   GET  /datasets/ORG/NAME/resolve/REV/PATH          the file (Range requests honoured)
 *
 * The commit sha is a hash of every file, and the oids are git blob sha1s, as on the Hub.
 */
export interface HubDatasetServer {
  url: string;
  sha: string;
  requests: string[];
  close(): Promise<void>;
}

interface Entry {
  path: string;
  type: 'file' | 'directory';
  oid: string;
  size: number;
}

function entriesOf(root: string, prefix = ''): Entry[] {
  const entries: Entry[] = [];
  for (const name of readdirSync(join(root, prefix)).sort()) {
    const path = prefix ? `${prefix}/${name}` : name;
    if (statSync(join(root, path)).isDirectory()) {
      entries.push({ path, type: 'directory', oid: '0'.repeat(40), size: 0 });
      entries.push(...entriesOf(root, path));
    } else {
      const content = readFileSync(join(root, path));
      const oid = createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
      entries.push({ path, type: 'file', oid, size: content.length });
    }
  }
  return entries;
}

export async function startHubDatasetServer(repository: string, folder: string): Promise<HubDatasetServer> {
  const entries = entriesOf(folder);
  const sha = createHash('sha1').update(JSON.stringify(entries)).digest('hex');
  const requests: string[] = [];
  const revisions = new Set(['main', sha]);
  const files = new Map(entries.filter((entry) => entry.type === 'file').map((entry) => [entry.path, entry]));

  const send = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    response.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };
  const notFound = (response: ServerResponse, code: string) =>
    send(response, 404, { error: `${code}: not on this stand-in` }, { 'X-Error-Code': code });

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const path = decodeURIComponent(url.pathname);
    requests.push(`${request.method} ${path}`);
    const api = /^\/api\/datasets\/([^/]+\/[^/]+)\/(revision|tree|paths-info)\/([^/]+)(?:\/(.*))?$/.exec(path);
    const resolve = /^\/datasets\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    const repo = api?.[1] ?? resolve?.[1];
    if (repo !== repository) return notFound(response, 'RepoNotFound');
    const revision = api?.[3] ?? resolve?.[2];
    if (!revisions.has(revision!)) return notFound(response, 'RevisionNotFound');
    if (api?.[2] === 'revision') return send(response, 200, { id: repository, sha });
    if (api?.[2] === 'tree') {
      const under = api[4] ? `${api[4]}/` : '';
      const recursive = url.searchParams.get('recursive') === 'true';
      const listed = entries.filter(
        (entry) => entry.path.startsWith(under) && (recursive || !entry.path.slice(under.length).includes('/')),
      );
      return send(response, 200, listed);
    }
    if (api?.[2] === 'paths-info') {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const { paths } = JSON.parse(Buffer.concat(chunks).toString()) as { paths: string[] };
      return send(
        response,
        200,
        paths.flatMap((wanted) => {
          const entry = files.get(wanted);
          return entry ? [{ ...entry, lastCommit: { id: sha, title: 'tasks', date: '2026-01-01T00:00:00Z' } }] : [];
        }),
      );
    }
    const entry = files.get(resolve![3]!);
    if (!entry) return notFound(response, 'EntryNotFound');
    const content = readFileSync(join(folder, entry.path));
    const range = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? '');
    const headers = { ETag: `"${entry.oid}"`, 'X-Repo-Commit': sha, 'Content-Type': 'application/octet-stream' };
    if (!range) {
      response.writeHead(200, { ...headers, 'Content-Length': String(content.length) });
      return response.end(content);
    }
    const start = Number(range[1]);
    const end = Math.min(range[2] ? Number(range[2]) : content.length - 1, content.length - 1);
    response.writeHead(206, { ...headers, 'Content-Range': `bytes ${start}-${end}/${content.length}` });
    response.end(content.subarray(start, end + 1));
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => send(response, 500, { error: String(error) }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sha,
    requests,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
