import type Docker from 'dockerode';

/**
 * Started containers kept ready per image (and per isolation settings), so a rollout's first
 * command does not wait for create + start. A rollout takes a fresh container; a used one is
 * never handed out again (it is removed with its sandbox). The pool lives in one thread: a run
 * sizes it from its concurrency over its worker threads.
 *
 * Spares grow with demand: after k takes of one image the pool keeps min(k, size) spares, so
 * an image used once (a task with one sample) costs at most one spare, removed at the end.
 */
class WarmPool {
  private readonly spares: Promise<Docker.Container>[] = [];
  private takes = 0;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly start: () => Promise<Docker.Container>,
  ) {}

  async take(): Promise<Docker.Container> {
    this.takes++;
    const spare = this.spares.shift();
    this.refill();
    if (spare) {
      // A spare that failed to start is not the rollout's fault: start one for it now.
      const container = await spare.catch(() => undefined);
      if (container) return container;
    }
    return this.start();
  }

  private refill(): void {
    const target = Math.min(this.size, this.takes);
    while (!this.closed && this.spares.length < target) {
      const starting = this.start();
      // Kept for take(); an unhandled rejection here would crash the thread.
      starting.catch(() => {});
      this.spares.push(starting);
    }
  }

  /** Remove every spare, those still starting included. */
  async close(): Promise<void> {
    this.closed = true;
    const spares = this.spares.splice(0);
    await Promise.all(
      spares.map(async (spare) => {
        const container = await spare.catch(() => undefined);
        await container?.remove({ force: true, v: true }).catch(() => {});
      }),
    );
  }
}

const pools = new Map<string, WarmPool>();

/**
 * A started container for `key` (image, workdir and isolation settings, serialised), from the
 * pool when it has one, else started now; the pool then starts a replacement in the background.
 */
export function takeWarmContainer(
  key: string,
  size: number,
  start: () => Promise<Docker.Container>,
): Promise<Docker.Container> {
  let pool = pools.get(key);
  if (!pool) {
    pool = new WarmPool(size, start);
    pools.set(key, pool);
  }
  return pool.take();
}

/** Spare containers of this thread's pools, all removed (a thread's or a run's end). */
export async function closeWarmPools(): Promise<void> {
  const closing = [...pools.values()];
  pools.clear();
  await Promise.all(closing.map((pool) => pool.close()));
}
