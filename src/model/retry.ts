import { setTimeout as sleep } from 'node:timers/promises';

/** Backoff bounds: production defaults are 1 s doubling up to 60 s; tests pass small ones. */
export interface RetryDelays {
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_DELAYS: RetryDelays = { baseDelayMs: 1_000, maxDelayMs: 60_000 };

/** Why one attempt failed, as the retry loop needs to know it. */
export interface AttemptFailure {
  /** `rate_limited`: the endpoint kept answering 429 past max_rate_limit_wait_ms. */
  kind: 'aborted' | 'retryable' | 'fatal' | 'rate_limited';
  /** HTTP status when the server answered. */
  status?: number;
  /** The server's (or the connection's) message. */
  message: string;
  /** What the server asked for with `retry-after` / `retry-after-ms`. */
  retryAfterMs?: number;
  cause: unknown;
}

export interface RetryEvent {
  /** The attempt that failed (1-based); the next one is attempt + 1. */
  attempt: number;
  delayMs: number;
  failure: AttemptFailure;
}

export interface RetryOptions extends RetryDelays {
  /** Retries after the first attempt; 0 = a single attempt. */
  maxRetries: number;
  signal?: AbortSignal;
  classify: (error: unknown) => AttemptFailure;
  /** The error to throw for a failure that is not (or no longer) retried. */
  giveUp: (failure: AttemptFailure, attempts: number) => Error;
  onRetry?: (event: RetryEvent) => void;
  /**
   * Rate limiting (429) is the endpoint pacing us, not a fault: such retries do not use
   * `maxRetries`; they go on until their backoffs add up to `maxWaitMs` for this call.
   */
  rateLimit?: { isRateLimit(failure: AttemptFailure): boolean; maxWaitMs: number };
}

/** Run `attempt` until it succeeds, a failure is fatal or aborted, or retries run out. */
export async function withRetries<T>(
  attempt: (number: number) => Promise<T>,
  options: RetryOptions,
): Promise<{ value: T; attempts: number }> {
  let retries = 0;
  let rateLimitWaitMs = 0;
  for (let number = 1; ; number++) {
    let failure: AttemptFailure;
    try {
      return { value: await attempt(number), attempts: number };
    } catch (error) {
      failure = options.classify(error);
    }
    if (failure.kind !== 'retryable') throw options.giveUp(failure, number);
    const delayMs = backoffDelay(number, failure.retryAfterMs, options);
    if (options.rateLimit?.isRateLimit(failure)) {
      rateLimitWaitMs += delayMs;
      if (rateLimitWaitMs > options.rateLimit.maxWaitMs)
        throw options.giveUp({ ...failure, kind: 'rate_limited' }, number);
    } else if (++retries > options.maxRetries) throw options.giveUp(failure, number);
    options.onRetry?.({ attempt: number, delayMs, failure });
    try {
      await sleep(delayMs, undefined, { signal: options.signal });
    } catch (error) {
      throw options.giveUp({ kind: 'aborted', message: 'aborted during the retry backoff', cause: error }, number);
    }
  }
}

/** Full jitter (random in [0, base·2^(n-1)], capped); a server's retry-after wins, up to the cap. */
export function backoffDelay(failedAttempt: number, retryAfterMs: number | undefined, delays: RetryDelays): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, delays.maxDelayMs);
  const ceiling = Math.min(delays.maxDelayMs, delays.baseDelayMs * 2 ** (failedAttempt - 1));
  return Math.round(Math.random() * ceiling);
}

interface HeaderReader {
  get(name: string): string | null;
}

/** `retry-after-ms` (milliseconds), else `retry-after` as seconds or an HTTP date. */
export function parseRetryAfter(headers: HeaderReader | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const milliseconds = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return Math.round(milliseconds);
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1_000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
