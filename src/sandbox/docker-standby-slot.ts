import type Docker from 'dockerode';
import type { ContainerRestarter } from './docker-restart.js';
import { type Standby, startStandby } from './docker-standby.js';

/**
 * A sandbox's next standby (docker-standby.ts), started ahead: with its container by the warm
 * pool, then after each command for the next one, so a command finds its process already
 * running. One at most, so an idle sandbox holds one waiting process; a command that finds none
 * (commands run at once) starts its own. A standby started before a restart died with it and is
 * replaced.
 */
export class StandbySlot {
  private next: Promise<Standby> | undefined;
  private closed = false;
  /** Aborted at close: gives up on every start still waiting for the engine. */
  private readonly closing = new AbortController();

  constructor(
    private readonly container: Docker.Container,
    private readonly restarter: ContainerRestarter,
    prepared?: Standby,
  ) {
    if (prepared) this.hold(Promise.resolve(prepared));
    else this.refill();
  }

  /** The standby started ahead when it is still usable, else one started now. */
  async claim(): Promise<Standby> {
    const prepared = this.next;
    this.next = undefined;
    const standby = await prepared?.catch(() => undefined);
    if (standby && standby.generation === this.restarter.generation && !standby.stream.destroyed) return standby;
    standby?.stream.destroy();
    return this.start();
  }

  /** Start the next command's standby, unless one is held or the sandbox is going away. */
  refill(): void {
    if (!this.closed && !this.next) this.hold(this.start());
  }

  /** The container was restarted: the held standby died with it; start another. */
  forget(): void {
    this.drop();
    this.refill();
  }

  /**
   * A standby of a command's own, its environment in its process (for names the standby cannot
   * export), started now.
   */
  async startOwn(env: string[]): Promise<Standby> {
    await this.restarter.settled();
    return startStandby(this.container, this.restarter.generation, { env, signal: this.closing.signal });
  }

  /** The sandbox is being disposed: no more standbys, and no wait for those still starting. */
  close(): void {
    this.closed = true;
    this.drop();
    this.closing.abort();
  }

  private hold(standby: Promise<Standby>): void {
    this.next = standby;
    // Failures surface to claim(), which starts another; not unhandled meanwhile.
    standby.catch(() => {});
  }

  private drop(): void {
    const next = this.next;
    this.next = undefined;
    void next?.then(
      (standby) => standby.stream.destroy(),
      () => {},
    );
  }

  private start(): Promise<Standby> {
    return this.startOwn([]);
  }
}
