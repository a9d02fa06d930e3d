import type { KeyedEnvironmentItem } from '../run/environment-entries.js';
import type { ServedGroups } from '../run/served-groups.js';
import type { PolicyBoard } from './policy.js';

export interface GroupSourceOptions {
  groups: ServedGroups;
  policy: PolicyBoard;
  /** Groups kept running or ready beyond what waiting requests ask for. */
  maxAhead: number;
  stop: AbortSignal;
}

/** A group's key: the item's key and the group's sequence number, so every group is its own set of store rows. */
export function groupKeyFor(itemKey: string, seq: number): string {
  return `${itemKey}#g${seq}`;
}

/**
 * The items of a serving run, on demand: a new group starts only while fewer than `maxAhead` plus
 * the groups waiting requests still need are running or ready. Items are read round and round
 * (each pass is the environment's items again). Groups a killed server left running come first,
 * with the policy they were started with: their landed rollouts are kept, the rest run again.
 */
export class GroupSource {
  private wanted = 0;
  private waiting: (() => void) | undefined;

  constructor(private readonly options: GroupSourceOptions) {
    options.stop.addEventListener('abort', () => this.wake(), { once: true });
  }

  /** Groups that requests wait for beyond those ready: production runs ahead of them by maxAhead. */
  setDemand(groups: number): void {
    this.wanted = Math.max(0, groups);
    this.wake();
  }

  /** Something changed (a group finished or was delivered, demand, the policy): look again. */
  wake(): void {
    const resolve = this.waiting;
    this.waiting = undefined;
    resolve?.();
  }

  async *items(read: () => AsyncIterable<KeyedEnvironmentItem>): AsyncGenerator<KeyedEnvironmentItem> {
    yield* this.resumed(read);
    let lap = 0;
    while (!this.options.stop.aborted) {
      let yielded = 0;
      for await (const keyed of read()) {
        if (!(await this.room())) return;
        const policy = this.options.policy.current;
        const { groupKey } = this.options.groups.start({
          itemKey: keyed.key,
          groupKey: (seq) => groupKeyFor(keyed.key, seq),
          policy,
          version: policy.version,
        });
        yielded++;
        yield { ...keyed, key: groupKey };
      }
      // An environment that yields nothing would spin: the survey before the run rules it out.
      if (yielded === 0 && ++lap > 1) return;
    }
  }

  /** The running groups of an earlier invocation, found by one pass over the items. */
  private async *resumed(read: () => AsyncIterable<KeyedEnvironmentItem>): AsyncGenerator<KeyedEnvironmentItem> {
    const running = this.options.groups.withStatus('running');
    if (running.length === 0) return;
    const byItem = new Map<string, KeyedEnvironmentItem>();
    const wantedItems = new Set(running.map((row) => row.item_key));
    for await (const keyed of read()) {
      if (wantedItems.has(keyed.key)) byItem.set(keyed.key, keyed);
      if (byItem.size === wantedItems.size) break;
    }
    for (const row of running) {
      const keyed = byItem.get(row.item_key);
      // The environment no longer yields its item: nothing can run it; it stays running, visibly.
      if (keyed) yield { ...keyed, key: row.group_key };
    }
  }

  private async room(): Promise<boolean> {
    for (;;) {
      if (this.options.stop.aborted) return false;
      const counts = this.options.groups.counts();
      if (counts.running + counts.ready < this.options.maxAhead + this.wanted) return true;
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
    }
  }
}
