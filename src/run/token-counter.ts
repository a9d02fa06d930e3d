import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { BroadcastChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { loadChatTokenizer } from '../tokens/index.js';
import type { CountTask, CountWorkerData } from './token-count-worker.js';

/** Token counts of texts with one tokenizer: on worker threads, or on this thread when there are none. */
export interface TokenCounter {
  count(texts: string[]): Promise<number[]>;
  /** Threads counting (0: this thread). */
  readonly workers: number;
  close(): Promise<void>;
}

/**
 * Threads for `traj compress`: counting a 39k-token record with Qwen3's tokenizer is ~25 ms of CPU
 * (docs/performance.md), so on one thread 1,000 records are ~25 s of counting however fast the
 * summariser answers. One thread per core, at most one per record in flight; none on one core.
 */
export function compressWorkers(requested: number | undefined, concurrency: number): number {
  if (requested !== undefined) return Math.max(0, Math.min(requested, concurrency));
  const cores = availableParallelism();
  return cores <= 1 ? 0 : Math.min(cores, concurrency);
}

export async function startTokenCounter(tokenizer: string, workers: number): Promise<TokenCounter> {
  // Loaded here as well, even with threads: a tokenizer that cannot load fails the command before any record.
  const local = await loadChatTokenizer(tokenizer);
  if (workers === 0)
    return {
      workers: 0,
      count: async (texts) => texts.map((text) => local.count(text)),
      close: async () => {},
    };
  return new ThreadCounter(tokenizer, workers);
}

class ThreadCounter implements TokenCounter {
  private readonly piscina: Piscina<CountTask, number[]>;
  private readonly channel: BroadcastChannel;
  private readonly loaded = new Set<number>();
  private allLoaded?: () => void;

  constructor(
    private readonly tokenizer: string,
    readonly workers: number,
  ) {
    const name = `traj-count-${randomUUID()}`;
    this.channel = new BroadcastChannel(name);
    this.channel.onmessage = (event: unknown) => {
      this.loaded.add((event as { data: number }).data);
      if (this.loaded.size >= workers) this.allLoaded?.();
    };
    this.piscina = new Piscina({
      filename: new URL('./token-count-worker.js', import.meta.url).href,
      minThreads: workers,
      maxThreads: workers,
      atomics: 'disabled',
      workerData: { loaded: name } satisfies CountWorkerData,
    });
  }

  count(texts: string[]): Promise<number[]> {
    return this.piscina.run({ tokenizer: this.tokenizer, texts });
  }

  /** Waits for every thread to have loaded (Node 20 aborts the process when a loading thread is stopped). */
  async close(): Promise<void> {
    if (this.loaded.size < this.workers)
      await new Promise<void>((resolve) => {
        this.allLoaded = resolve;
        setTimeout(resolve, 30_000).unref();
      });
    this.channel.close();
    await this.piscina.destroy();
  }
}
