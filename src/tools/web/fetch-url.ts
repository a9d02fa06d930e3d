import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import {
  NetworkPolicyError,
  policyForUrl,
  policyLookup,
  urlRefusal,
  type NetworkPolicy,
} from '../network/network-policy.js';

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
  const clock: Clock = {
    signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
    deadline,
    timeoutMs: limits.timeoutMs,
  };
  const redirects: string[] = [];
  let current = url;
  for (;;) {
    const hop: Hop = { url: current, from: redirects.at(-1) };
    const refusal = urlRefusal(current, policy);
    if (refusal) throw new FetchFailure(new NetworkPolicyError(current, refusal, hop.from).message, 'policy');
    const response = await request(hop, policy, accept, clock);
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
    const { body, truncated } = await readCapped(response, limits.maxBytes, clock);
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

/** One request of a fetch, and the one that redirected to it (refusals name both). */
interface Hop {
  url: string;
  from: string | undefined;
}

/** The fetch's abort signal (caller or deadline) and its deadline alone, to tell a timeout apart. */
interface Clock {
  signal: AbortSignal;
  deadline: AbortSignal;
  timeoutMs: number;
}

async function request(hop: Hop, policy: NetworkPolicy, accept: string, clock: Clock): Promise<IncomingMessage> {
  const parsed = new URL(hop.url);
  const transport = parsed.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    const outgoing = transport.request(
      parsed,
      {
        method: 'GET',
        headers: { 'user-agent': USER_AGENT, accept, 'accept-encoding': 'gzip, deflate, br' },
        lookup: policyLookup(policyForUrl(parsed, policy)),
        signal: clock.signal,
        // A fresh connection per hop: a pooled socket could skip the address check.
        agent: false,
      },
      resolve,
    );
    outgoing.on('error', (error) => reject(failureOf(error, hop, clock)));
    outgoing.end();
  });
}

function failureOf(error: unknown, hop: Hop | undefined, clock: Clock): Error {
  if (error instanceof NetworkPolicyError && hop)
    return new FetchFailure(new NetworkPolicyError(hop.url, error.reason, hop.from).message, 'policy');
  if (clock.deadline.aborted)
    return new FetchFailure(`no complete answer within ${clock.timeoutMs / 1000} s`, 'timeout');
  if (clock.signal.aborted) return clock.signal.reason instanceof Error ? clock.signal.reason : new Error('aborted');
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
  clock: Clock,
): Promise<{ body: Buffer; truncated: boolean }> {
  const { signal } = clock;
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
      reject(failureOf(new Error('aborted'), undefined, clock));
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
