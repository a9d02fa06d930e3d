import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

/**
 * `fetch` over node:http/https with keep-alive agents, for the openai client. Measured here it
 * costs about half the CPU per request of the built-in fetch (undici with web streams), which
 * is what bounds a worker thread's throughput against a fast endpoint. Bodies it cannot send
 * itself (streams, forms) go to the built-in fetch.
 *
 * Idle sockets are all kept (an agent's default keeps 256): when a burst of replies lands before
 * the next requests go out, as each wave of a high-concurrency run does, the default closed the
 * rest and the next burst opened them again, a TLS handshake each against a remote endpoint.
 * The server's keep-alive timeout still closes the ones left idle.
 */
const AGENT_OPTIONS = {
  keepAlive: true,
  maxSockets: Number.POSITIVE_INFINITY,
  maxFreeSockets: Number.POSITIVE_INFINITY,
};
const agents = {
  'http:': new http.Agent(AGENT_OPTIONS),
  'https:': new https.Agent(AGENT_OPTIONS),
};

/** The keep-alive agent of a protocol (`http:` or `https:`), shared with direct-post.ts. */
export function httpAgentFor(protocol: string): http.Agent {
  return protocol === 'https:' ? agents['https:'] : agents['http:'];
}

/**
 * Replies up to this size that are not event streams are read whole, chunked or not (the reply
 * cap is still checked by the reader); a longer one is passed on as a stream from where it got to.
 */
const BUFFERED_BODY_BYTES = 4 * 1024 * 1024;

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * The bytes of each reply read whole, by its Response: readCappedText takes them as they are, where
 * reading the Response's own web stream cost more CPU than the rest of the exchange.
 */
const wholeBodies = new WeakMap<Response, Buffer>();

export function wholeBodyOf(response: Response): Buffer | undefined {
  return wholeBodies.get(response);
}

type FetchInput = string | URL | Request;

export function nodeHttpFetch(input: FetchInput, init: RequestInit = {}): Promise<Response> {
  const body = init.body;
  const sendable = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
  if (input instanceof Request || !sendable) return fetch(input, init);
  const url = input instanceof URL ? input : new URL(input);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fetch(input, init);
  return new Promise<Response>((resolve, reject) => {
    const secure = url.protocol === 'https:';
    const transport = secure ? https : http;
    const request = transport.request(
      url,
      {
        method: init.method ?? 'GET',
        headers: plainHeaders(init.headers),
        agent: secure ? agents['https:'] : agents['http:'],
        signal: init.signal ?? undefined,
      },
      (response) => {
        const responseHeaders = webHeaders(response.headers);
        const status = response.statusCode ?? 500;
        const init = { status, statusText: response.statusMessage, headers: responseHeaders };
        if (NULL_BODY_STATUSES.has(status)) {
          response.resume();
          resolve(new Response(null, init));
          return;
        }
        const streamed = (response.headers['content-type'] ?? '').includes('text/event-stream');
        if (streamed || Number(response.headers['content-length']) > BUFFERED_BODY_BYTES) {
          resolve(new Response(webStream(response), init));
          return;
        }
        readUpTo(response, BUFFERED_BODY_BYTES).then((read) => {
          if (read.more) return resolve(new Response(webStream(Readable.from(joined(read.chunks, response))), init));
          const whole = read.chunks.length === 1 ? read.chunks[0]! : Buffer.concat(read.chunks);
          const reply = new Response(whole, init);
          wholeBodies.set(reply, whole);
          resolve(reply);
        }, reject);
      },
    );
    request.on('error', reject);
    request.end(body ?? undefined);
  });
}

/** A reply's headers as a web Headers object (repeated ones joined, as fetch does). */
export function webHeaders(raw: http.IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}

/** The SDK passes a Headers: copied as they are, without a second Headers in between. */
function plainHeaders(headers: RequestInit['headers']): Record<string, string> {
  const plain: Record<string, string> = {};
  (headers instanceof Headers ? headers : new Headers(headers)).forEach((value, name) => {
    plain[name] = value;
  });
  return plain;
}

function webStream(body: Readable): ReadableStream<Uint8Array> {
  return Readable.toWeb(body) as WebReadableStream<Uint8Array> as ReadableStream<Uint8Array>;
}

async function* joined(head: Buffer[], rest: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  yield* head;
  yield* rest;
}

/** Chunks up to `limit` bytes; `more` when the body goes on past them (the rest is left unread). */
function readUpTo(response: http.IncomingMessage, limit: number): Promise<{ chunks: Buffer[]; more: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      bytes += chunk.byteLength;
      if (bytes <= limit) return;
      response.off('data', onData);
      response.pause();
      resolve({ chunks, more: true });
    };
    response.on('data', onData);
    response.once('end', () => resolve({ chunks, more: false }));
    response.once('error', reject);
    // An abort, a timeout or a dropped connection: the body ended short (a settled promise ignores it).
    response.once('close', () => {
      if (!response.complete) reject(new Error('the connection closed before the reply was complete'));
    });
  });
}
