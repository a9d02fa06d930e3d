import pLimit, { type LimitFunction } from 'p-limit';

/**
 * One limiter per base URL for the whole process: every client talking to the same endpoint
 * (one per rollout, many rollouts per worker) shares its cap. The first client to use an
 * endpoint sets the size; in one run all clients of an endpoint share one configuration.
 */
const limiters = new Map<string, LimitFunction>();

export function endpointLimiter(baseURL: string, concurrency: number): LimitFunction {
  let limiter = limiters.get(baseURL);
  if (!limiter) {
    limiter = pLimit(concurrency);
    limiters.set(baseURL, limiter);
  }
  return limiter;
}

/** Run `task` under the limiter; an abort rejects at once, even while still waiting for a slot. */
export function runLimited<T>(limiter: LimitFunction, task: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return limiter(task);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    limiter(() => (signal.aborted ? Promise.reject(signal.reason) : task()))
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}
