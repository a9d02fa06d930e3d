/**
 * A counting semaphore whose waiters are released empty-handed when a signal aborts (the
 * dispatcher stops waiting on SIGINT). One abort listener serves every waiter.
 */
export class Semaphore {
  private available: number;
  private readonly waiters: Array<(granted: boolean) => void> = [];

  constructor(
    size: number,
    private readonly signal?: AbortSignal,
  ) {
    this.available = size;
    signal?.addEventListener('abort', () => this.waiters.splice(0).forEach((resolve) => resolve(false)), {
      once: true,
    });
  }

  /** Resolves true when a slot was taken, false when the signal aborted first. */
  acquire(): Promise<boolean> {
    if (this.signal?.aborted) return Promise.resolve(false);
    if (this.available > 0) {
      this.available--;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next(true);
    else this.available++;
  }
}
