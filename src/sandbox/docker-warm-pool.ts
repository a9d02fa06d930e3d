import type Docker from 'dockerode';
import type { Standby } from './docker-standby.js';

/** A started container kept ready, with its first command's process when that could start. */
export interface WarmContainer {
  container: Docker.Container;
  standby?: Standby;
}

/** A spare being started or started; `ready` once it is. */
interface Spare {
  starting: Promise<WarmContainer>;
  ready: boolean;
}

/** This thread's takes, and how many found their spare ready: what the warm-pool benchmark reports. */
const counts = { takes: 0, ready: 0 };

/**
 * Started containers kept ready per image (and per isolation settings), so a rollout's first
 * command does not wait for create + start, nor for its process to start. A rollout takes a
 * fresh container; a used one is never handed out again (it is removed with its sandbox). The
 * pool lives in one thread: a run sizes it from its concurrency over its worker threads.
 *
 * Spares grow with demand: after k takes of one image the pool keeps min(k, size) spares, so
 * an image used once (a task with one sample) costs at most one spare, removed at the end. A take
 * whose spare was still starting means refills take longer than rollouts hold their containers
 * (a busy engine): each such take adds a spare, up to twice `size`, so refills start further
 * ahead.
 */
class WarmPool {
  private readonly spares: Spare[] = [];
  private takes = 0;
  /** Spares beyond `size`, one per take that found its spare still starting. */
  private extra = 0;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly start: () => Promise<WarmContainer>,
  ) {}

  async take(): Promise<WarmContainer> {
    this.takes++;
    counts.takes++;
    const spare = this.spares.shift();
    if (spare?.ready) counts.ready++;
    else if (spare) this.extra = Math.min(this.extra + 1, this.size);
    // A take that finds no spare starts its own before the refills, so it does not queue behind them.
    const own = spare ? undefined : this.start();
    this.refill();
    if (own) return own;
    // A spare that failed to start is not the rollout's fault: start one for it now.
    return (await spare!.starting.catch(() => undefined)) ?? this.start();
  }

  private refill(): void {
    const target = Math.min(this.size + this.extra, this.takes);
    while (!this.closed && this.spares.length < target) {
      const spare: Spare = { starting: this.start(), ready: false };
      // Kept for take(); an unhandled rejection here would crash the thread.
      spare.starting.then(
        () => {
          spare.ready = true;
        },
        () => {},
      );
      this.spares.push(spare);
    }
  }

  /** Remove every spare, those still starting included. */
  async close(): Promise<void> {
    this.closed = true;
    const spares = this.spares.splice(0);
    await Promise.all(
      spares.map(async (spare) => {
        const warm = await spare.starting.catch(() => undefined);
        warm?.standby?.stream.destroy();
        await warm?.container.remove({ force: true, v: true }).catch(() => {});
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
  start: () => Promise<WarmContainer>,
): Promise<WarmContainer> {
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

/** Takes so far in this thread, and how many of them found a spare ready. */
export function warmPoolCounts(): { takes: number; ready: number } {
  return { ...counts };
}
