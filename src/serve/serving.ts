import type { TokenNote } from '../export/tokens-format.js';
import type { KeyedEnvironmentItem } from '../run/environment-entries.js';
import type { EnvironmentStream } from '../run/environment-run.js';
import type { PipelineEvent } from '../run/pipeline.js';
import type { RolloutSettings } from '../run/rollout.js';
import type { ServedGroupRow, ServedGroups } from '../run/served-groups.js';
import { stateKey, type RunStore } from '../run/store.js';
import type { ChatTokenizer } from '../tokens/index.js';
import type { TrajectoryRecord } from '../trajectory/record.js';
import type { WorkItem } from '../run/work-item.js';
import { GroupSource } from './group-source.js';
import { PolicyBoard, policyEndpoint, type Policy } from './policy.js';
import { scoreGroup, type ScoredGroup } from './scored-group.js';

export interface ServingOptions {
  policy: Policy;
  /** Rollouts per group (K). */
  samples: number;
  maxAhead: number;
  maxStaleness: number;
  tokenizer?: ChatTokenizer;
  maxTokens?: number;
  stop: AbortSignal;
  /** What the server wants the operator to see (a group without a scored rollout, token notes). */
  onNotice?: (line: string) => void;
}

export interface PullRequest {
  request_id: string;
  count: number;
  policy?: Policy;
  /** Answer with what is ready after this long (default: wait for `count`). */
  wait_ms?: number;
}

export interface PullAnswer {
  groups: ScoredGroup[];
  policy: Policy;
  /** Groups dropped as stale over the run so far. */
  stale: number;
}

/**
 * A serving run's state between the pipeline and the trainer: the current policy, production on
 * demand (GroupSource), each group finished once all its rollouts landed (advantages, tokens, one
 * transaction), and pulls answered from the store, so a retried request gets the same groups.
 */
export class Serving {
  readonly policy: PolicyBoard;
  private store?: RunStore;
  private groups?: ServedGroups;
  private source?: GroupSource;
  private demand = 0;
  private readonly landed = new Set<string>();
  private readonly waiters = new Set<() => void>();
  private readonly attached: Promise<void>;
  private onAttached!: () => void;

  constructor(private readonly options: ServingOptions) {
    this.policy = new PolicyBoard(options.policy);
    this.attached = new Promise((resolve) => (this.onAttached = resolve));
    this.policy.onChange(() => {
      this.dropStale();
      this.wake();
    });
    options.stop.addEventListener('abort', () => this.wake(), { once: true });
  }

  /** What runEnvironment is given: items on demand, each rollout with its group's policy. */
  readonly stream: EnvironmentStream = {
    items: (store, read) => this.attach(store, read),
    entry: (entry, settings) => this.withPolicy(entry, settings),
  };

  /** The pipeline's events: a landed rollout may complete its group. */
  onEvent(event: PipelineEvent): void {
    if (event.type !== 'finished') return;
    // Looked at on the next turn, after the store's write of this turn's landings (store.ts batches them).
    if (this.landed.size === 0)
      setImmediate(() => {
        const keys = [...this.landed];
        this.landed.clear();
        for (const key of keys) this.finishIfLanded(key);
      });
    this.landed.add(event.key);
  }

  /** Resolves once the store is open (the pipeline started): pulls wait for it. */
  ready(): Promise<void> {
    return this.attached;
  }

  private attach(
    store: RunStore,
    read: () => AsyncIterable<KeyedEnvironmentItem>,
  ): AsyncIterable<KeyedEnvironmentItem> {
    this.store = store;
    this.groups = store.servedGroups();
    this.source = new GroupSource({
      groups: this.groups,
      policy: this.policy,
      maxAhead: this.options.maxAhead,
      stop: this.options.stop,
    });
    // A restarted server goes on with the newest policy it served, unless it was started with a newer one.
    const latest = this.groups.latestPolicy();
    if (latest && latest.version > this.policy.current.version) this.policy.update(JSON.parse(latest.policy) as Policy);
    // Killed after its last rollout landed, before the group was finished: finish it now.
    for (const row of this.groups.withStatus('running')) this.finishIfLanded(row.group_key);
    this.dropStale();
    this.onAttached();
    return this.source.items(read);
  }

  private withPolicy(entry: WorkItem, settings: RolloutSettings): WorkItem {
    const row = this.groups?.byKey(entry.key);
    if (!row) return entry;
    const policy = JSON.parse(row.policy) as Policy;
    return { ...entry, settings: { ...settings, endpoint: policyEndpoint(settings.endpoint, policy) } };
  }

  private finishIfLanded(groupKey: string): void {
    const { store, groups } = this;
    const row = groups?.byKey(groupKey);
    if (!store || !groups || row?.status !== 'running') return;
    store.flush();
    const samples = Array.from({ length: this.options.samples }, (_, sample) => ({ key: groupKey, sample }));
    const states = store.lookupMany(samples);
    if (samples.some(({ sample }) => (states.get(stateKey(groupKey, sample))?.status ?? 'pending') === 'pending'))
      return;
    this.finish(store, groups, row);
  }

  private finish(store: RunStore, groups: ServedGroups, row: ServedGroupRow): void {
    const records: TrajectoryRecord[] = [];
    for (const item of store.samplesOf(row.group_key, 'done'))
      if (item.record) records.push(JSON.parse(item.record) as TrajectoryRecord);
    const notes: TokenNote[] = [];
    const scored = scoreGroup({
      group: row.group_key,
      seq: row.seq,
      item: row.item_key,
      policy: JSON.parse(row.policy) as Policy,
      records,
      tokenizer: this.options.tokenizer,
      maxTokens: this.options.maxTokens,
      notes,
    });
    for (const note of notes)
      this.options.onNotice?.(`group ${row.seq}: ${note.id}#${note.sample} ${note.outcome}: ${note.detail}`);
    if (!scored.group) this.options.onNotice?.(`group ${row.seq} (${row.item_key}): no rollout was scored; not served`);
    groups.finish(row.seq, scored.group ?? null, scored.group?.mean_reward ?? null, () => {
      for (const record of scored.records) store.updateRecord(record.id, record.sample, record, record.reward);
    });
    this.dropStale();
    this.wake();
  }

  private dropStale(): void {
    this.groups?.dropStale(this.policy.current.version, this.options.maxStaleness);
  }

  private wake(): void {
    this.source?.setDemand(this.demand);
    for (const waiter of [...this.waiters]) waiter();
  }

  /**
   * The next `count` groups for a trainer. The named policy becomes current first (a new version
   * drops what is now too stale). A request id answered before is answered the same again.
   */
  async pull(request: PullRequest): Promise<PullAnswer> {
    await this.attached;
    const groups = this.groups!;
    if (request.policy) this.policy.update(request.policy);
    const answer = (rows: ServedGroupRow[]): PullAnswer => ({
      groups: rows.map((row) => JSON.parse(row.payload!) as ScoredGroup),
      policy: this.policy.current,
      stale: groups.counts().stale,
    });
    const given = groups.deliveredTo(request.request_id);
    if (given.length > 0) return answer(given);
    this.demand += request.count;
    this.wake();
    try {
      await this.until(() => groups.counts().ready >= request.count, request.wait_ms);
    } finally {
      this.demand -= request.count;
    }
    const { version } = this.policy.current;
    const delivered = groups.deliver(request.request_id, request.count, version, this.options.maxStaleness).rows;
    this.wake();
    return answer(delivered);
  }

  /** Waits until `done()` holds, the server stops, or `waitMs` passes. */
  private until(done: () => boolean, waitMs: number | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const check = () => {
        if (!done() && !this.options.stop.aborted) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      if (waitMs !== undefined)
        timer = setTimeout(() => {
          this.waiters.delete(check);
          resolve();
        }, waitMs);
      this.waiters.add(check);
      check();
    });
  }

  /** The oldest ready group, for a pusher (Atropos); undefined when stopping. */
  async nextReady(): Promise<ServedGroupRow | undefined> {
    await this.attached;
    const groups = this.groups!;
    this.demand += 1;
    this.wake();
    try {
      await this.until(() => groups.counts().ready > 0, undefined);
    } finally {
      this.demand -= 1;
      this.wake();
    }
    return groups.withStatus('ready')[0];
  }

  /** A pushed group was accepted downstream. */
  delivered(seq: number, requestId: string): void {
    this.groups!.markDelivered(seq, requestId, this.policy.current.version);
    this.wake();
  }

  status(): Record<string, unknown> {
    const counts = this.groups?.counts();
    return {
      policy: this.policy.current,
      groups: counts ?? null,
      max_ahead: this.options.maxAhead,
      max_staleness: this.options.maxStaleness,
      samples: this.options.samples,
      waiting_for: this.demand,
    };
  }
}
