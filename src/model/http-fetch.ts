import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

/**
 * `fetch` over node:http/https with keep-alive agents, for the openai client. Measured here it
 * costs about half the CPU per request of the built-in fetch (undici with web streams), which
 * is what bounds a worker thread's throughput against a fast endpoint. Bodies it cannot send
 * itself (streams, forms) go to the built-in fetch.
 */
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY }),
};

/** Bodies up to this size with a Content-Length are buffered (the reply cap is still checked by the reader). */
const BUFFERED_BODY_BYTES = 4 * 1024 * 1024;

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

type FetchInput = string | URL | Request;

export function nodeHttpFetch(input: FetchInput, init: RequestInit = {}): Promise<Response> {
  const body = init.body;
  const sendable = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
  if (input instanceof Request || !sendable) return fetch(input, init);
  const url = input instanceof URL ? input : new URL(input);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fetch(input, init);
  return new Promise<Response>((resolve, reject) => {
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const secure = url.protocol === 'https:';
    const transport = secure ? https : http;
    const request = transport.request(
      url,
      {
        method: init.method ?? 'GET',
        headers,
        agent: secure ? agents['https:'] : agents['http:'],
        signal: init.signal ?? undefined,
      },
      (response) => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        const status = response.statusCode ?? 500;
        const init = { status, statusText: response.statusMessage, headers: responseHeaders };
        if (NULL_BODY_STATUSES.has(status)) {
          response.resume();
          resolve(new Response(null, init));
          return;
        }
        const length = Number(response.headers['content-length']);
        if (length >= 0 && length <= BUFFERED_BODY_BYTES) {
          // A body of known, modest size (every non-streamed completion) is read whole: a web stream
          // adapter per reply cost more CPU than the rest of the exchange.
          readWhole(response).then((body) => resolve(new Response(body, init)), reject);
          return;
        }
        resolve(
          new Response(Readable.toWeb(response) as WebReadableStream<Uint8Array> as ReadableStream<Uint8Array>, init),
        );
      },
    );
    request.on('error', reject);
    request.end(body ?? undefined);
  });
}

function readWhole(response: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    response.once('error', reject);
    // An abort, a timeout or a dropped connection: the body ended short (a settled promise ignores it).
    response.once('close', () => {
      if (!response.complete) reject(new Error('the connection closed before the reply was complete'));
    });
  });
}
