import pLimit, { type LimitFunction } from 'p-limit';

/**
 * One limiter per base URL for the whole thread: every client talking to the same endpoint
 * (one per rollout, many rollouts per worker) shares its cap. The first client to use an
 * endpoint sets the size; in one run all clients of an endpoint share one configuration.
 * A run passes each worker thread its share of `endpoint.concurrency` (src/run/pool.ts), so the
 * shares add up to at most the configured cap.
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
export function runLimited<T>(
  limiter: LimitFunction,
  task: () => Promise<T>,
  signal: AbortSignal | undefined,
): Promise<T> {
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

/**
 * Requests in flight, counted where a run's progress line can read them: slot 0 of a shared
 * Int32Array (a SharedArrayBuffer the pool hands every task), added to by every thread.
 */
let requestCounter: Int32Array | undefined;

export function countRequestsInto(counter: Int32Array | undefined): void {
  requestCounter = counter;
}

/** Run one HTTP exchange counted as in flight. */
export async function countedRequest<T>(task: () => Promise<T>): Promise<T> {
  const counter = requestCounter;
  if (!counter) return task();
  Atomics.add(counter, 0, 1);
  try {
    return await task();
  } finally {
    Atomics.sub(counter, 0, 1);
  }
}
