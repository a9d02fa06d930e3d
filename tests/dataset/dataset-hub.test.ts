import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DatasetError } from '../../src/errors.js';
import { readDataset, type BadRow, type DatasetItem } from '../../src/dataset/index.js';

const directory = mkdtempSync(join(tmpdir(), 'traj-hub-'));
after(() => rmSync(directory, { recursive: true, force: true }));

const FILES: Record<string, string> = {
  'data/train.jsonl': '{"prompt": "from the hub", "id": "h1"}\n{"prompt": "second hub row", "split": "train"}\n',
};

interface Request {
  method: string;
  path: string;
  range?: string;
}

/**
 * A stand-in for the Hugging Face Hub serving the two endpoints @huggingface/hub calls to fetch
 * a file into its cache: POST /api/datasets/ORG/NAME/paths-info/REV and
 * GET /datasets/ORG/NAME/resolve/REV/PATH (first with `Range: bytes=0-0` for size and ETag).
 */
function standIn(requests: Request[]): Server {
  return createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://hub');
    requests.push({
      method: request.method ?? '',
      path: decodeURIComponent(url.pathname),
      ...(request.headers.range ? { range: request.headers.range } : {}),
    });
    const info = /^\/api\/datasets\/org\/name\/paths-info\/([^/]+)$/.exec(url.pathname);
    const commit = (info?.[1] === 'main' ? 'a' : 'b').repeat(40);
    if (request.method === 'POST' && info) {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const paths = (JSON.parse(body) as { paths: string[] }).paths.filter((path) => path in FILES);
        const entries = paths.map((path) => ({
          path,
          type: 'file',
          oid: oid(FILES[path]!),
          size: FILES[path]!.length,
          lastCommit: { id: commit, title: 'add data', date: '2025-01-01T00:00:00Z' },
        }));
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(entries));
      });
      return;
    }
    const resolve = /^\/datasets\/org\/name\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    const content = resolve ? FILES[decodeURIComponent(resolve[2]!)] : undefined;
    if (request.method === 'GET' && content !== undefined) {
      const headers = { etag: `"${oid(content)}"`, 'content-type': 'application/octet-stream' };
      if (request.headers.range === 'bytes=0-0') {
        response
          .writeHead(206, { ...headers, 'content-range': `bytes 0-0/${content.length}` })
          .end(content.slice(0, 1));
      } else {
        response.writeHead(200, { ...headers, 'content-length': String(content.length) }).end(content);
      }
      return;
    }
    response
      .writeHead(404, { 'content-type': 'application/json', 'x-error-code': 'EntryNotFound' })
      .end(JSON.stringify({ error: 'Entry not found' }));
  });
}

function oid(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

async function collect(
  source: string,
  options: Parameters<typeof readDataset>[1],
): Promise<Array<DatasetItem | BadRow>> {
  const out: Array<DatasetItem | BadRow> = [];
  for await (const row of readDataset(source, options)) out.push(row);
  return out;
}

/** Full downloads: resolve GETs without the size probe's Range header. */
function downloads(requests: Request[]): number {
  return requests.filter((request) => request.method === 'GET' && request.path.includes('/resolve/') && !request.range)
    .length;
}

describe('readDataset: hf:// datasets through a local Hub stand-in', () => {
  const requests: Request[] = [];
  const server = standIn(requests);
  let hubUrl: string;
  const cacheDir = join(directory, 'cache');

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    hubUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('downloads into the cache once and reads from the cache the second time', async () => {
    const source = 'hf://datasets/org/name/data/train.jsonl';
    const first = (await collect(source, { hubUrl, cacheDir })) as DatasetItem[];
    assert.deepEqual(
      first.map((row) => [row.id, row.messages[0]!.content, row.fields]),
      [
        ['h1', 'from the hub', {}],
        [undefined, 'second hub row', { split: 'train' }],
      ],
    );
    assert.equal(downloads(requests), 1);
    const second = await collect(source, { hubUrl, cacheDir });
    assert.deepEqual(second, first);
    assert.equal(downloads(requests), 1, 'the second read must not download again');
  });

  it('asks the Hub about the revision after @ and reuses the identical blob already cached', async () => {
    const rows = await collect('hf://datasets/org/name@v1.0/data/train.jsonl', { hubUrl, cacheDir });
    assert.equal(rows.length, 2);
    assert.ok(requests.some((request) => request.path === '/api/datasets/org/name/paths-info/v1.0'));
    assert.equal(downloads(requests), 1, 'same content, same blob: no second download');
  });

  it('says a missing file is not found on the Hub', async () => {
    await assert.rejects(
      collect('hf://datasets/org/name/data/absent.jsonl', { hubUrl, cacheDir }),
      (error: unknown) => {
        assert.ok(error instanceof DatasetError);
        assert.match(
          error.message,
          /hf:\/\/datasets\/org\/name\/data\/absent\.jsonl: not found on http:\/\/127\.0\.0\.1:\d+/,
        );
        return true;
      },
    );
  });

  it('refuses a malformed hf:// address, showing the expected form', async () => {
    await assert.rejects(
      collect('hf://org/name/train.jsonl', { hubUrl, cacheDir }),
      /expected hf:\/\/datasets\/ORG\/NAME\[@REVISION\]\/PATH/,
    );
  });

  it('reads a cached revision with the Hub down, and says so for an uncached one', async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const rows = (await collect('hf://datasets/org/name/data/train.jsonl', { hubUrl, cacheDir })) as DatasetItem[];
    assert.equal(rows.length, 2);
    await assert.rejects(
      collect('hf://datasets/org/name@other/data/train.jsonl', { hubUrl, cacheDir }),
      (error: unknown) => {
        assert.ok(error instanceof DatasetError);
        assert.equal(error.retryable, true);
        assert.match(error.message, /cannot download from http:\/\/127\.0\.0\.1:\d+ .*use --hub-url/);
        return true;
      },
    );
  });
});
