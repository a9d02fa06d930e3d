import type { ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { ERROR_BODY_BYTES, UNREAD_ERROR_BODY } from './error-body.js';
import { httpAgentFor } from './http-fetch.js';
import { ReplyTooLargeError } from './reply-body.js';

export interface HttpReply {
  status: number;
  /** A 2xx status. */
  ok: boolean;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * Where and how one client sends, worked out once: the request options without their headers, and
 * the headers as a flat list of names and values, Host among them. Node sends an array of headers
 * as it is (still checking each name and value), where an object goes through setHeader one by
 * one; with the options already made from the URL, a call cost ~30% less client CPU (114 against
 * 162 µs measured with a 14 KB body, docs/performance.md).
 */
export interface HttpTarget {
  readonly transport: typeof http | typeof https;
  readonly options: Readonly<http.RequestOptions>;
  /** Flat: name, value, name, value. */
  readonly headers: readonly string[];
}

export function httpTarget(url: URL, headers: Record<string, string>, method = 'POST'): HttpTarget {
  const { hostname, port, path } = urlToHttpOptions(url);
  return {
    transport: url.protocol === 'https:' ? https : http,
    options: { method, hostname, port, path, agent: httpAgentFor(url.protocol) },
    headers: ['Host', url.host, ...Object.entries(headers).flat()],
  };
}

export interface ExchangeOptions {
  /** The caller's signal: its abort ends the exchange with the signal's reason. */
  signal?: AbortSignal;
  /** From the request to the reply's last byte; past it the exchange ends with `timeoutError()`. */
  timeoutMs: number;
  timeoutError: () => Error;
  /** The cap of a 2xx reply's body; other statuses keep ERROR_BODY_BYTES of theirs. */
  maxReplyBytes: number;
  /** The error a failed connection is given as (a plain Error with the cause by default). */
  connectionError?: (options: { message?: string; cause?: Error }) => Error;
}

const decoder = new TextDecoder();

/**
 * One exchange, whatever the status. The timeout and the caller's abort destroy the request
 * themselves: an AbortController per call, and the listener Node adds for a request's `signal`,
 * were a tenth of this client's CPU per call on Node 20.
 */
export function exchange(target: HttpTarget, body: readonly Buffer[], options: ExchangeOptions): Promise<HttpReply> {
  const caller = options.signal;
  if (caller?.aborted) return Promise.reject(caller.reason);
  let length = 0;
  for (const chunk of body) length += chunk.byteLength;
  const request = target.transport.request({
    ...target.options,
    headers: body.length > 0 ? [...target.headers, 'content-length', String(length)] : target.headers,
  });
  let ended: unknown;
  const end = (reason: unknown) => {
    ended ??= reason;
    request.destroy(reason instanceof Error ? reason : undefined);
  };
  const timer = setTimeout(() => end(options.timeoutError()), options.timeoutMs);
  const onAbort = () => end(caller!.reason);
  caller?.addEventListener('abort', onAbort, { once: true });
  return sendAndRead(request, body, options)
    .catch((error: unknown) => {
      throw ended ?? error;
    })
    .finally(() => {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    });
}

async function sendAndRead(
  request: ClientRequest,
  body: readonly Buffer[],
  options: ExchangeOptions,
): Promise<HttpReply> {
  const connectionError = options.connectionError ?? plainConnectionError;
  const response = await send(request, body, connectionError);
  const status = response.statusCode ?? 500;
  const ok = status >= 200 && status < 300;
  const text = await readBody(response, ok ? options.maxReplyBytes : ERROR_BODY_BYTES, connectionError).catch(
    (error: unknown) => {
      if (!ok && error instanceof ReplyTooLargeError) return UNREAD_ERROR_BODY;
      throw error;
    },
  );
  return { status, ok, headers: response.headers, text };
}

/** Write `body`, given as encoded chunks: the request buffers them until its socket is assigned, then writes them together. */
function send(
  request: ClientRequest,
  body: readonly Buffer[],
  connectionError: NonNullable<ExchangeOptions['connectionError']>,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    request.once('response', resolve);
    request.once('error', (error) => reject(connectionError({ cause: error })));
    for (const chunk of body) request.write(chunk);
    request.end();
  });
}

function readBody(
  response: IncomingMessage,
  maxBytes: number,
  connectionError: NonNullable<ExchangeOptions['connectionError']>,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    response.on('data', (chunk: Buffer) => {
      bytes += chunk.byteLength;
      if (bytes > maxBytes) {
        response.destroy();
        reject(new ReplyTooLargeError(maxBytes));
        return;
      }
      chunks.push(chunk);
    });
    response.once('end', () => resolve(decoder.decode(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))));
    response.once('error', reject);
    // An abort, a timeout or a dropped connection: the body ended short (a settled promise ignores it).
    response.once('close', () => {
      if (!response.complete)
        reject(connectionError({ message: 'the connection closed before the reply was complete' }));
    });
  });
}

function plainConnectionError(options: { message?: string; cause?: Error }): Error {
  return new Error(options.message ?? 'connection error', { cause: options.cause });
}
