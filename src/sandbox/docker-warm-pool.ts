import type Docker from 'dockerode';
import type { Standby } from './docker-standby.js';

/** A started container kept ready, with its first command's process when that could start. */
export interface WarmContainer {
  container: Docker.Container;
  standby?: Standby;
}

/** This thread's takes, and how many found a spare ready: what the warm-pool benchmark reports. */
const counts = { takes: 0, ready: 0 };

/**
 * Started containers kept ready per image (and per isolation settings), so a rollout's first
 * command does not wait for create + start, nor for its process to start. A rollout takes a
 * fresh container; a used one is never handed out again (it is removed with its sandbox). The
 * pool lives in one thread: a run sizes it from its concurrency over its worker threads.
 *
 * Spares grow with demand: after k takes of one image the pool keeps min(k, size) spares, so
 * an image used once (a task with one sample) costs at most one spare, removed at the end. A take
 * that finds no spare ready waits for the first one to finish starting (starts run in parallel
 * and finish in any order). No more spares than `size`: when takes find none ready, the engine
 * starts containers slower than rollouts end them, and more spares would only add starts.
 */
class WarmPool {
  private readonly ready: WarmContainer[] = [];
  /** Starts under way, each ending in the hand of the first waiting take, or among the ready. */
  private readonly starting = new Set<Promise<void>>();
  private readonly waiting: ((warm: WarmContainer | undefined) => void)[] = [];
  private takes = 0;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly start: () => Promise<WarmContainer>,
  ) {}

  async take(): Promise<WarmContainer> {
    this.takes++;
    counts.takes++;
    const spare = this.ready.shift();
    if (spare) {
      counts.ready++;
      this.refill();
      return spare;
    }
    if (this.starting.size <= this.waiting.length) {
      // Nothing is starting for this take: its own start goes first, so it does not queue behind the refills.
      const own = this.start();
      this.refill();
      return own;
    }
    const handed = new Promise<WarmContainer | undefined>((hand) => this.waiting.push(hand));
    this.refill();
    // A spare that failed to start is not the rollout's fault: start one for it now.
    return (await handed) ?? this.start();
  }

  /** Start spares until min(takes, size) are ready or starting for no waiting take. */
  private refill(): void {
    const target = Math.min(this.size, this.takes);
    while (!this.closed && this.ready.length + this.starting.size - this.waiting.length < target) {
      const starting: Promise<void> = this.start().then(
        (warm) => this.started(starting, warm),
        // A failed start leaves one spare fewer until the next take's refill.
        () => this.started(starting, undefined),
      );
      this.starting.add(starting);
    }
  }

  private async started(starting: Promise<void>, warm: WarmContainer | undefined): Promise<void> {
    this.starting.delete(starting);
    const waiter = this.waiting.shift();
    if (waiter) waiter(warm);
    else if (warm && this.closed) await remove(warm);
    else if (warm) this.ready.push(warm);
  }

  /** Remove every spare, those still starting included (a take waiting for one still gets it). */
  async close(): Promise<void> {
    this.closed = true;
    const ready = this.ready.splice(0);
    await Promise.all([...ready.map(remove), ...this.starting]);
  }
}

async function remove(warm: WarmContainer): Promise<void> {
  warm.standby?.stream.destroy();
  await warm.container.remove({ force: true, v: true }).catch(() => {});
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
