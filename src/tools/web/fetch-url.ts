import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { NetworkPolicyError, policyLookup, urlRefusal, type NetworkPolicy } from '../network/network-policy.js';

export interface FetchLimits {
  /** The whole fetch, redirects included. */
  timeoutMs: number;
  /** Body bytes kept (after decompression); the rest is not read. */
  maxBytes: number;
  maxRedirects: number;
}

export interface FetchedUrl {
  url: string;
  /** Where the redirects ended. */
  finalUrl: string;
  status: number;
  contentType: string;
  body: Buffer;
  /** The body was longer than maxBytes and was cut there. */
  truncated: boolean;
  redirects: string[];
}

/** A fetch that did not produce a response the caller can use: timeout, network error, too many redirects. */
export class FetchFailure extends Error {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'network' | 'redirects' | 'policy',
  ) {
    super(message);
    this.name = 'FetchFailure';
  }
}

export const USER_AGENT = 'traj-web/1 (+https://github.com/traj)';

/**
 * GET a URL under the network policy: every hop's URL and resolved address is checked, redirects
 * are followed by hand up to the limit, the body is read up to the byte cap.
 */
export async function fetchUrl(
  url: string,
  policy: NetworkPolicy,
  limits: FetchLimits,
  signal?: AbortSignal,
  accept = '*/*',
): Promise<FetchedUrl> {
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
  const redirects: string[] = [];
  let current = url;
  for (;;) {
    const refusal = urlRefusal(current, policy);
    if (refusal) throw new FetchFailure(new NetworkPolicyError(current, refusal).message, 'policy');
    const response = await request(current, policy, combined, accept, limits.timeoutMs, deadline);
    const location = response.headers.location;
    if (response.statusCode && response.statusCode >= 300 && response.statusCode < 400 && location) {
      response.resume();
      if (redirects.length >= limits.maxRedirects)
        throw new FetchFailure(
          `more than ${limits.maxRedirects} redirects (last: ${current} → ${location})`,
          'redirects',
        );
      redirects.push(current);
      current = new URL(location, current).toString();
      continue;
    }
    const { body, truncated } = await readCapped(response, limits.maxBytes, combined, limits.timeoutMs, deadline);
    return {
      url,
      finalUrl: current,
      status: response.statusCode ?? 0,
      contentType: String(response.headers['content-type'] ?? '').toLowerCase(),
      body,
      truncated,
      redirects,
    };
  }
}

async function request(
  url: string,
  policy: NetworkPolicy,
  signal: AbortSignal,
  accept: string,
  timeoutMs: number,
  deadline: AbortSignal,
): Promise<IncomingMessage> {
  const parsed = new URL(url);
  const transport = parsed.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    const outgoing = transport.request(
      parsed,
      {
        method: 'GET',
        headers: { 'user-agent': USER_AGENT, accept, 'accept-encoding': 'gzip, deflate, br' },
        lookup: policyLookup(policy),
        signal,
        // A fresh connection per hop: a pooled socket could skip the address check.
        agent: false,
      },
      resolve,
    );
    outgoing.on('error', (error) => reject(failureOf(error, url, signal, timeoutMs, deadline)));
    outgoing.end();
  });
}

function failureOf(error: unknown, url: string, signal: AbortSignal, timeoutMs: number, deadline: AbortSignal): Error {
  if (error instanceof NetworkPolicyError)
    return new FetchFailure(`refused by the network policy: ${url}: ${error.reason}`, 'policy');
  if (deadline.aborted) return new FetchFailure(`no complete answer within ${timeoutMs / 1000} s`, 'timeout');
  if (signal.aborted) return signal.reason instanceof Error ? signal.reason : new Error('aborted');
  const code = (error as NodeJS.ErrnoException).code;
  return new FetchFailure(`${code ? `${code}: ` : ''}${(error as Error).message}`, 'network');
}

function decoded(response: IncomingMessage): Readable {
  const encoding = String(response.headers['content-encoding'] ?? '').toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip') return response.pipe(createGunzip());
  if (encoding === 'deflate') return response.pipe(createInflate());
  if (encoding === 'br') return response.pipe(createBrotliDecompress());
  return response;
}

/**
 * Read the (decoded) body up to maxBytes; past that, or on abort, the connection is closed, so nothing more is
 * downloaded.
 */
function readCapped(
  response: IncomingMessage,
  maxBytes: number,
  signal: AbortSignal,
  timeoutMs: number,
  deadline: AbortSignal,
): Promise<{ body: Buffer; truncated: boolean }> {
  const stream = decoded(response);
  const close = () => {
    stream.destroy();
    response.destroy();
  };
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onAbort = () => {
      close();
      reject(failureOf(new Error('aborted'), '', signal, timeoutMs, deadline));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    const done = (truncated: boolean) => {
      signal.removeEventListener('abort', onAbort);
      resolve({ body: Buffer.concat(chunks, Math.min(size, maxBytes)).subarray(0, maxBytes), truncated });
    };
    stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > maxBytes) {
        close();
        done(true);
      }
    });
    stream.on('end', () => done(false));
    stream.on('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      if (size > maxBytes) return;
      reject(new FetchFailure(`reading the body failed: ${error.message}`, 'network'));
    });
  });
}
