import type { EndpointGate } from '../model/concurrency.js';
import type { RunStore } from './store.js';

/** How often the main thread reads the shared gate. */
const SAMPLE_MS = 500;

/** Counter names of the 429 and 503 answers the run's endpoint gave (statistics.json `concurrency`). */
export const RATE_LIMITED_COUNTER = 'endpoint:http_429';
export const UNAVAILABLE_COUNTER = 'endpoint:http_503';

/**
 * Writes the run endpoint's concurrency level into the store as it changes (at most one point per
 * 500 ms), and the 429/503 answers as counters, so both are cumulative across resumes like every
 * other statistic. The gate lives in shared memory (model/concurrency.ts): reading it costs nothing
 * in the worker threads.
 */
export class ConcurrencySampler {
  private readonly timer: NodeJS.Timeout;
  private level = Number.NaN;
  private rateLimited = 0;
  private unavailable = 0;

  constructor(
    private readonly store: RunStore,
    private readonly gate: EndpointGate,
    private readonly segment: number,
    private readonly startedAt: number,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
  }

  /** The last reading, then no more. */
  stop(): void {
    clearInterval(this.timer);
    this.sample(true);
  }

  private sample(last = false): void {
    const snapshot = this.gate.snapshot();
    const level = snapshot.level;
    if (level !== this.level || last) {
      this.store.addConcurrencyPoint(this.segment, performance.now() - this.startedAt, level);
      this.level = level;
    }
    this.count(RATE_LIMITED_COUNTER, snapshot.rateLimited - this.rateLimited);
    this.count(UNAVAILABLE_COUNTER, snapshot.unavailable - this.unavailable);
    this.rateLimited = snapshot.rateLimited;
    this.unavailable = snapshot.unavailable;
  }

  private count(name: string, delta: number): void {
    if (delta > 0) this.store.addCounter(name, delta);
  }
}
