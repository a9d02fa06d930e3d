import type Database from 'better-sqlite3';
import { RecordJson } from './record-json.js';
import { RunError } from '../errors.js';
import { canonicalJson, sha256 } from '../util/hash.js';
import { openDatabase } from '../util/sqlite.js';
import { acquireRunLock, releaseRunLock, runLockHolder, type RunLock } from './run-lock.js';
import { aggregateStore, type StoreAggregates } from './store-aggregates.js';
import { createStoreSchema } from './store-schema.js';

export type { RunLock } from './run-lock.js';
import {
  saveShaped,
  setShapingSpec,
  SHAPED_JOIN,
  SHAPED_KEEP,
  createShapedSchema,
  SHAPED_TEXT,
  shapingSpec,
  shapingTotals,
  unshapedKeys,
  type ShapedRow,
  type ShapingTotals,
} from './store-shaped.js';
import { SERVED_GROUPS_SCHEMA, ServedGroups } from './served-groups.js';

export type { StoreAggregates } from './store-aggregates.js';
export type { ShapedRow, ShapingMetrics, ShapingTotals, SummaryUsage } from './store-shaped.js';

export type ItemStatus = 'pending' | 'done' | 'discarded' | 'failed';
export type ErrorClass = 'infra' | 'agent' | 'filtered' | 'input';

export interface ItemState {
  status: ItemStatus;
  /** Recorded failures (a rollout cut off by a kill or a run-level fault is not one). */
  attempts: number;
  /** 0 when the last failure would repeat on every try (failed for good until --retry-failed). */
  retryable: number | null;
}

/** Done or discarded: it landed in an earlier invocation, so a rerun skips it without a slot. */
export function isFinished(state: ItemState | undefined): state is ItemState & { status: 'done' | 'discarded' } {
  return state?.status === 'done' || state?.status === 'discarded';
}

/** How `lookupMany` names one (key, sample). */
export function stateKey(key: string, sample: number): string {
  return `${sample}:${key}`;
}

/** The few record fields statistics aggregate, kept in columns so they never parse record JSON. */
export interface RecordColumns {
  completed: boolean;
  has_reasoning: boolean;
  reward_error: string | null;
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    reasoning_tokens: number;
    cached_tokens?: number;
    cost?: number | null;
    cost_source?: string | null;
    unpriced_models?: string[];
  };
  tool_stats: unknown[];
  compressions?: unknown[];
}

/** The counter of everything the run spent (USD), every invocation and attempt: what `--max-cost` limits. */
const SPENT_COUNTER = 'cost:spent_usd';
/** `cost:unpriced:MODEL` counts landed rollouts with calls of MODEL whose cost is unknown (the viewer reads them). */
const UNPRICED_COUNTER = 'cost:unpriced:';

export interface ResultRow {
  key: string;
  sample: number;
  status: Exclude<ItemStatus, 'pending'>;
  record: RecordColumns | null;
  errorClass?: ErrorClass | null;
  errorCode?: string | null;
  errorMessage?: string | null;
  /** For a failure: whether another try may succeed. */
  retryable?: boolean;
  reward?: number | null;
  finishReason?: string | null;
  durationMs?: number | null;
  /** Judge verdicts produced while scoring this result (cached in the same transaction). */
  judgeCache?: { key: string; verdict: unknown }[];
  /** Pages and searches web tools fetched (cached in the same transaction), and the fetch/hit counts. */
  webCache?: { key: string; value: unknown }[];
  webCounts?: { fetches: number; hits: number };
}

export interface StoredItem {
  key: string;
  sample: number;
  row_index: number | null;
  status: ItemStatus;
  attempts: number;
  error_class: string | null;
  error_code: string | null;
  error_message: string | null;
  retryable: number | null;
  toolsets: string;
  reward: number | null;
  finish_reason: string | null;
  duration_ms: number | null;
  record: string | null;
}

export interface RunMeta {
  name: string;
  kind: string;
  config: Record<string, unknown>;
  fingerprint: string;
  fingerprint_parts: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

/** Record fields the store can filter and split by (kept in a column, or read from the record). */
export type RecordField = 'toolsets' | 'category';

/** Which rows that kept a record: a status, optionally narrowed to some values of a field (null: absent). */
export interface RecordSelection {
  status: ItemStatus;
  field?: { name: RecordField; values: unknown[] };
}

/** `dataset`: row, key, sample. `group`: a group's rollouts together, groups in dataset order. */
export type RecordOrder = 'dataset' | 'group';

/** A stored row on its way out: the record exactly as stored (JSON text). */
export interface StoredRecordRow {
  key: string;
  sample: number;
  status: ItemStatus;
  text: string;
}

const FIELD_SQL: Record<RecordField, string> = {
  toolsets: 'toolsets',
  category: `json_extract(record, '$.source.fields.category')`,
};
const GROUP = `COALESCE(json_extract(record, '$.group'), key)`;
const ORDER_SQL: Record<RecordOrder, string> = {
  dataset: 'row_index, key, sample',
  group: `MIN(row_index) OVER (PARTITION BY ${GROUP}), ${GROUP}, sample`,
};

function filterSql(filter: RecordSelection): { where: string; params: unknown[] } {
  if (!filter.field) return { where: 'status = ?', params: [filter.status] };
  const column = FIELD_SQL[filter.field.name];
  const present = filter.field.values.filter((value) => value !== null);
  const conditions = [
    ...(present.length ? [`${column} IN (${present.map(() => '?').join(', ')})`] : []),
    ...(present.length < filter.field.values.length ? [`${column} IS NULL`] : []),
  ];
  return { where: `status = ? AND (${conditions.join(' OR ')})`, params: [filter.status, ...present] };
}

/**
 * The columns statistics aggregate, copied from a record when it is stored: summing them never
 * parses the records (a few KB each), which at the end of a large run took longer than writing it out.
 */
function summaryColumns(record: RecordColumns | null) {
  const usage = record?.usage;
  return {
    cached_tokens: usage?.cached_tokens ?? null,
    cost: usage?.cost ?? null,
    cost_source: usage?.cost_source ?? null,
    unpriced_models: usage?.unpriced_models?.length ? JSON.stringify(usage.unpriced_models) : null,
    compressions: record ? (record.compressions?.length ?? 0) : null,
  };
}

/** Describe how two fingerprints differ, one line per changed part. */
export function diffFingerprint(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const show = (value: unknown) => {
    const text = value === undefined ? '(unset)' : canonicalJson(value);
    return text.length > 120 ? `${text.slice(0, 60)}… (sha256 ${sha256(text).slice(0, 12)})` : text;
  };
  return keys
    .filter((key) => canonicalJson(before[key] ?? null) !== canonicalJson(after[key] ?? null))
    .map((key) => `${key}: ${show(before[key])} → ${show(after[key])}`);
}

/**
 * The run store: the only source of truth of a run. SQLite in WAL mode, owned by the main thread;
 * a result and its status land in one transaction, so a crash at any instant loses no finished work.
 */
export class RunStore {
  private readonly db: Database.Database;
  private readonly statements: ReturnType<RunStore['prepare']>;
  /**
   * Writes of one event-loop turn, committed together: results that land at the same moment share
   * one transaction instead of paying one each. Each result is still atomic with its status.
   */
  private pending: Array<() => void> = [];
  private flushScheduled = false;
  private readonly recordJson = new RecordJson();

  private constructor(readonly path: string) {
    this.db = openDatabase(path);
    createStoreSchema(this.db);
    createShapedSchema(this.db);
    this.db.exec(SERVED_GROUPS_SCHEMA);
    this.statements = this.prepare();
  }

  static open(path: string): RunStore {
    return new RunStore(path);
  }

  private prepare() {
    const db = this.db;
    return {
      hasItems: db.prepare<[], { one: number }>('SELECT 1 AS one FROM items LIMIT 1'),
      lookup: db.prepare<[string, number], ItemState>(
        'SELECT status, attempts, retryable FROM items WHERE key = ? AND sample = ?',
      ),
      // One statement for many keys: a resume looks up every row, and one statement per row cost ~1.3 times as much.
      lookupMany: db.prepare<[string], ItemState & { key: string; sample: number }>(
        'SELECT items.key AS key, sample, status, attempts, retryable FROM json_each(?) AS wanted JOIN items ON items.key = wanted.value',
      ),
      // A dispatch uses no attempt: a rollout cut off by a kill never landed, so it never failed.
      dispatch: db.prepare(
        `INSERT INTO items (key, sample, row_index, status, attempts, toolsets, updated_at) VALUES (@key, @sample, @row_index, 'pending', 0, @toolsets, @now)
         ON CONFLICT (key, sample) DO UPDATE SET status = 'pending', row_index = @row_index, toolsets = @toolsets, updated_at = @now`,
      ),
      save: db.prepare(
        `UPDATE items SET status = @status, record = CAST(@record AS TEXT), error_class = @error_class, error_code = @error_code, error_message = @error_message,
         reward = @reward, finish_reason = @finish_reason, duration_ms = @duration_ms, completed = @completed, has_reasoning = @has_reasoning,
         reward_error = @reward_error, prompt_tokens = @prompt_tokens, completion_tokens = @completion_tokens, reasoning_tokens = @reasoning_tokens,
         tool_stats = @tool_stats, retryable = @retryable, attempts = attempts + @failed, cached_tokens = @cached_tokens, cost = @cost,
         cost_source = @cost_source, unpriced_models = @unpriced_models, compressions = @compressions, updated_at = @now WHERE key = @key AND sample = @sample`,
      ),
      release: db.prepare(
        `UPDATE items SET status = 'pending', updated_at = ? WHERE key = ? AND sample = ? AND status = 'pending'`,
      ),
      refund: db.prepare(
        `UPDATE items SET status = 'pending', attempts = MAX(attempts - 1, 0), updated_at = ? WHERE key = ? AND sample = ? AND status = 'failed'`,
      ),
      finished: db.prepare('UPDATE segments SET finished = finished + 1, wall_ms = ? WHERE id = ?'),
      badRow: db.prepare('INSERT OR REPLACE INTO bad_rows (line, reason) VALUES (?, ?)'),
      addCounter: db.prepare(
        'INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = value + excluded.value',
      ),
      toolsetDrop: db.prepare('INSERT OR IGNORE INTO toolset_drops (toolset, key) VALUES (?, ?)'),
      concurrencyPoint: db.prepare('INSERT INTO concurrency (segment, at_ms, level) VALUES (?, ?, ?)'),
      judgePut: db.prepare('INSERT OR REPLACE INTO judge_cache (key, verdict, created_at) VALUES (?, ?, ?)'),
      webPut: db.prepare('INSERT OR REPLACE INTO web_cache (key, value, created_at) VALUES (?, ?, ?)'),
      finishedCount: db.prepare(`SELECT COUNT(*) FROM items WHERE status IN ('done','discarded')`).pluck(),
    };
  }

  meta(): RunMeta | undefined {
    const row = this.db.prepare('SELECT * FROM run WHERE id = 1').get() as Record<string, string> | undefined;
    if (!row) return undefined;
    return {
      name: row.name!,
      kind: row.kind!,
      config: JSON.parse(row.config!),
      fingerprint: row.fingerprint!,
      fingerprint_parts: JSON.parse(row.fingerprint_parts!),
      created_at: row.created_at!,
      updated_at: row.updated_at!,
    };
  }

  /**
   * Record the run's settings on first use; on later uses refuse a changed fingerprint with a
   * readable list of what changed, unless `force` (the change is then recorded).
   */
  initRun(input: {
    name: string;
    kind: string;
    config: Record<string, unknown>;
    fingerprintParts: Record<string, unknown>;
    force?: boolean;
  }): { changes: string[] } {
    const fingerprint = sha256(canonicalJson(input.fingerprintParts));
    const now = new Date().toISOString();
    const existing = this.meta();
    if (!existing) {
      this.db
        .prepare(
          'INSERT INTO run (id, name, kind, config, fingerprint, fingerprint_parts, created_at, updated_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(
          input.name,
          input.kind,
          JSON.stringify(input.config),
          fingerprint,
          JSON.stringify(input.fingerprintParts),
          now,
          now,
        );
      return { changes: [] };
    }
    const changes =
      existing.fingerprint === fingerprint ? [] : diffFingerprint(existing.fingerprint_parts, input.fingerprintParts);
    if (changes.length > 0 && !input.force) {
      throw new RunError(
        `run '${input.name}' was started with different settings (${this.path}):\n${changes.map((line) => `  ${line}`).join('\n')}\n` +
          'Resume with the original settings, choose a new --run name, or pass --force to continue anyway (the change is recorded).',
        { code: 'fingerprint_changed', details: { changes } },
      );
    }
    this.db.transaction(() => {
      if (changes.length > 0)
        this.db
          .prepare('INSERT INTO fingerprint_changes (at, changes) VALUES (?, ?)')
          .run(now, JSON.stringify(changes));
      this.db
        .prepare('UPDATE run SET config = ?, fingerprint = ?, fingerprint_parts = ?, updated_at = ? WHERE id = 1')
        .run(JSON.stringify(input.config), fingerprint, JSON.stringify(input.fingerprintParts), now);
    })();
    return { changes };
  }

  /** Reads committed state: keys are unique in a stream, so no queued write concerns a lookup. */
  lookup(key: string, sample: number): ItemState | undefined {
    return this.statements.lookup.get(key, sample);
  }

  /** Whether any (key, sample) has a state yet: none in a fresh run's store. */
  hasItems(): boolean {
    this.flush();
    return this.statements.hasItems.get() !== undefined;
  }

  /** `lookup` for many keys at once: the state of each (key, sample) that has one, by `stateKey`. */
  lookupMany(items: ReadonlyArray<{ key: string; sample: number }>): Map<string, ItemState> {
    const keys = [...new Set(items.map((item) => item.key))];
    const states = new Map<string, ItemState>();
    for (const { key, sample, ...state } of this.statements.lookupMany.all(JSON.stringify(keys))) {
      states.set(stateKey(key, sample), state);
    }
    return states;
  }

  /** Queue a write for the transaction that commits at the end of this event-loop turn. */
  private defer(write: () => void): void {
    this.pending.push(write);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /** Commit queued writes now (before reading what they wrote, and before closing). */
  flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0 || !this.db.open) return;
    const writes = this.pending;
    this.pending = [];
    this.db.transaction(() => {
      for (const write of writes) write();
    })();
  }

  markDispatched(key: string, sample: number, rowIndex: number | null, toolsets: readonly string[]): void {
    const now = new Date().toISOString();
    const toolsetsJson = JSON.stringify(toolsets);
    this.defer(() => this.statements.dispatch.run({ key, sample, row_index: rowIndex, toolsets: toolsetsJson, now }));
  }

  /** An interrupted rollout goes back to pending without using up an attempt. */
  release(key: string, sample: number): void {
    const now = new Date().toISOString();
    this.defer(() => this.statements.release.run(now, key, sample));
  }

  /**
   * Undo a recorded failure: back to pending, its attempt given back. For failures that turned out
   * to be a run-level fault (a streak of an endpoint being down), not the prompt's.
   */
  refund(key: string, sample: number): void {
    const now = new Date().toISOString();
    this.defer(() => this.statements.refund.run(now, key, sample));
  }

  /** `--retry-failed`: every failed prompt gets fresh attempts. Returns how many there were. */
  resetFailedAttempts(): number {
    this.flush();
    return this.db.prepare(`UPDATE items SET attempts = 0, retryable = 1 WHERE status = 'failed'`).run().changes;
  }

  /** Take the run for this process, or throw naming the process that holds it (run-lock.ts). */
  acquireLock(): void {
    acquireRunLock(this.db, this.path);
  }

  releaseLock(): void {
    if (this.db.open) releaseRunLock(this.db);
  }

  lockHolder(): RunLock | undefined {
    return runLockHolder(this.db);
  }

  /**
   * Land one result and its status together. The segment's wall time moves with every result, so
   * the time of an invocation that is SIGKILLed still counts in cumulative statistics.
   */
  saveResult(row: ResultRow, segment?: { id: number; elapsedMs: number }): void {
    const record = row.record;
    const values = {
      key: row.key,
      sample: row.sample,
      status: row.status,
      record: record === null ? null : this.recordJson.encode(record),
      error_class: row.errorClass ?? null,
      error_code: row.errorCode ?? null,
      error_message: row.errorMessage ?? null,
      retryable: row.status === 'failed' ? Number(row.retryable ?? true) : null,
      failed: row.status === 'failed' ? 1 : 0,
      reward: row.reward ?? null,
      finish_reason: row.finishReason ?? null,
      duration_ms: row.durationMs ?? null,
      completed: record ? Number(record.completed) : null,
      has_reasoning: record ? Number(record.has_reasoning) : null,
      reward_error: record ? Number(record.reward_error !== null) : null,
      prompt_tokens: record?.usage.prompt_tokens ?? null,
      completion_tokens: record?.usage.completion_tokens ?? null,
      reasoning_tokens: record?.usage.reasoning_tokens ?? null,
      tool_stats: record ? JSON.stringify(record.tool_stats) : null,
      ...summaryColumns(record),
      now: new Date().toISOString(),
    };
    const elapsed = segment ? Math.round(segment.elapsedMs) : 0;
    const verdicts = (row.judgeCache ?? []).map(
      (entry) => [entry.key, JSON.stringify(entry.verdict), values.now] as const,
    );
    const pages = (row.webCache ?? []).map((entry) => [entry.key, JSON.stringify(entry.value), values.now] as const);
    const web = row.webCounts;
    const spent = record?.usage.cost ?? 0;
    const unpriced = record?.usage.unpriced_models ?? [];
    this.defer(() => {
      this.statements.save.run(values);
      if (segment) this.statements.finished.run(elapsed, segment.id);
      for (const verdict of verdicts) this.statements.judgePut.run(...verdict);
      for (const page of pages) this.statements.webPut.run(...page);
      if (web?.fetches) this.statements.addCounter.run('web:fetches', web.fetches);
      if (web?.hits) this.statements.addCounter.run('web:cache_hits', web.hits);
      if (spent > 0) this.statements.addCounter.run(SPENT_COUNTER, spent);
      for (const model of unpriced) this.statements.addCounter.run(`${UNPRICED_COUNTER}${model}`, 1);
    });
  }

  /**
   * Spend no landing record carries: a rollout that lands none (interrupted, cut off by a run-level
   * fault), or a rescore's new judge calls.
   */
  addSpend(usd: number): void {
    if (usd > 0) this.addCounter(SPENT_COUNTER, usd);
  }

  /**
   * USD the run has spent so far, over every invocation and attempt (a retried rollout's first
   * try included, though its record was replaced). Read only: a store from before the counter
   * reports the sum of its records' costs until `startSpendCounter` writes it down.
   */
  spentUsd(): number {
    const counted = this.counters()[SPENT_COUNTER];
    return Math.round((counted ?? this.recordedCost()) * 1e12) / 1e12;
  }

  /** Before a run adds to it: the counter of a store from before it starts at its records' costs. */
  startSpendCounter(): void {
    if (this.counters()[SPENT_COUNTER] === undefined) this.setCounter(SPENT_COUNTER, this.recordedCost());
  }

  private recordedCost(): number {
    return (
      (this.db.prepare(`SELECT SUM(cost) FROM items WHERE record IS NOT NULL`).pluck().get() as number | null) ?? 0
    );
  }

  /** Replace a stored record (re-scoring, advantages) without touching its status. */
  updateRecord(key: string, sample: number, record: RecordColumns, reward: number | null): void {
    this.flush();
    this.db
      .prepare(
        `UPDATE items SET record = @record, reward = @reward, reward_error = @reward_error, cached_tokens = @cached_tokens, cost = @cost,
         cost_source = @cost_source, unpriced_models = @unpriced_models, compressions = @compressions, updated_at = @now
         WHERE key = @key AND sample = @sample`,
      )
      .run({
        record: JSON.stringify(record),
        reward,
        reward_error: Number(record.reward_error !== undefined && record.reward_error !== null),
        ...summaryColumns(record),
        now: new Date().toISOString(),
        key,
        sample,
      });
  }

  startSegment(): number {
    return Number(
      this.db.prepare('INSERT INTO segments (started_at) VALUES (?)').run(new Date().toISOString()).lastInsertRowid,
    );
  }

  endSegment(id: number, wallMs: number, outcome: string): void {
    this.flush();
    this.db
      .prepare('UPDATE segments SET ended_at = ?, wall_ms = ?, outcome = ? WHERE id = ?')
      .run(new Date().toISOString(), Math.round(wallMs), outcome, id);
  }

  addBadRow(line: number, reason: string): void {
    this.defer(() => this.statements.badRow.run(line, reason));
  }

  setCounter(name: string, value: number): void {
    this.flush();
    this.db
      .prepare(
        'INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
      )
      .run(name, value);
  }

  /** The endpoint's adaptive concurrency level from `atMs` into a segment (a point when it changed). */
  addConcurrencyPoint(segment: number, atMs: number, level: number): void {
    this.defer(() => this.statements.concurrencyPoint.run(segment, Math.round(atMs), level));
  }

  /**
   * The concurrency level over the run's cumulative wall time: [seconds, level] pairs, each
   * segment's points shifted by the wall time of the segments before it (like wall_time_ms).
   */
  concurrencySeries(): Array<[number, number]> {
    this.flush();
    const rows = this.db
      .prepare(
        `SELECT c.at_ms + COALESCE((SELECT SUM(COALESCE(s.wall_ms, 0)) FROM segments s WHERE s.id < c.segment), 0) AS at, c.level
         FROM concurrency c ORDER BY c.segment, c.at_ms, c.rowid`,
      )
      .all() as { at: number; level: number }[];
    return rows.map((row) => [Math.round(row.at / 100) / 10, row.level]);
  }

  addCounter(name: string, delta: number): void {
    this.defer(() => this.statements.addCounter.run(name, delta));
  }

  /**
   * A toolset was dropped from the draw of prompt `key` (unavailable here). Each resume reads and draws
   * every row again: kept per (toolset, key), a prompt counts once however often it is drawn.
   */
  addToolsetDrop(toolset: string, key: string): void {
    this.defer(() => this.statements.toolsetDrop.run(toolset, key));
  }

  /**
   * Prompts whose draw dropped each toolset. A store written before drops were kept per prompt has
   * only its `dropped:` counters (one per draw, so resumes counted again): those stand in for toolsets
   * the table does not know.
   */
  toolsetDrops(): Record<string, number> {
    const legacy = Object.entries(this.counters())
      .filter(([name]) => name.startsWith('dropped:'))
      .map(([name, value]) => [name.slice('dropped:'.length), value] as const);
    const rows = this.db.prepare('SELECT toolset, COUNT(*) AS n FROM toolset_drops GROUP BY toolset').all() as {
      toolset: string;
      n: number;
    }[];
    return { ...Object.fromEntries(legacy), ...Object.fromEntries(rows.map((row) => [row.toolset, row.n])) };
  }

  counters(): Record<string, number> {
    this.flush();
    const rows = this.db.prepare('SELECT name, value FROM counters').all() as { name: string; value: number }[];
    return Object.fromEntries(rows.map((row) => [row.name, row.value]));
  }

  /** Stream stored items (records parsed lazily by the caller), ordered by row then sample. */
  *items(where: { status?: ItemStatus | ItemStatus[] } = {}): IterableIterator<StoredItem> {
    this.flush();
    const statuses =
      where.status === undefined ? undefined : Array.isArray(where.status) ? where.status : [where.status];
    const filter = statuses ? `WHERE status IN (${statuses.map(() => '?').join(',')})` : '';
    yield* this.db
      .prepare(`SELECT * FROM items ${filter} ORDER BY row_index, key, sample`)
      .iterate(...(statuses ?? [])) as IterableIterator<StoredItem>;
  }

  /** The stored records of one status as their JSON bytes (never decoded), ordered by row then sample. */
  *recordBytes(status: ItemStatus): IterableIterator<Buffer> {
    this.flush();
    yield* this.db
      .prepare(
        'SELECT CAST(record AS BLOB) FROM items WHERE status = ? AND record IS NOT NULL ORDER BY row_index, key, sample',
      )
      .pluck()
      .iterate(status) as IterableIterator<Buffer>;
  }

  /** The samples of one key with this status, in sample order (the (key, sample) index). */
  samplesOf(key: string, status: ItemStatus): StoredItem[] {
    this.flush();
    return this.db
      .prepare('SELECT * FROM items WHERE key = ? AND status = ? ORDER BY sample')
      .all(key, status) as StoredItem[];
  }

  getItem(key: string, sample: number): StoredItem | undefined {
    this.flush();
    return this.db.prepare('SELECT * FROM items WHERE key = ? AND sample = ?').get(key, sample) as
      | StoredItem
      | undefined;
  }

  judgeCacheGet(key: string): unknown | undefined {
    const row = this.db.prepare('SELECT verdict FROM judge_cache WHERE key = ?').get(key) as
      | { verdict: string }
      | undefined;
    return row ? JSON.parse(row.verdict) : undefined;
  }

  judgeCachePut(key: string, verdict: unknown): void {
    this.statements.judgePut.run(key, JSON.stringify(verdict), new Date().toISOString());
  }

  webCacheSize(): number {
    this.flush();
    return this.db.prepare('SELECT COUNT(*) FROM web_cache').pluck().get() as number;
  }

  /** Prompts that landed for good (done or discarded): what a resume does not run again. */
  finishedCount(): number {
    return (this.statements.finishedCount.get() as number | undefined) ?? 0;
  }

  hasKey(key: string): boolean {
    this.flush();
    return this.db.prepare('SELECT 1 FROM items WHERE key = ? LIMIT 1').get(key) !== undefined;
  }

  /** Distinct keys starting with `prefix` (LIKE wildcards in it match themselves), in key order. */
  keysWithPrefix(prefix: string, limit: number): string[] {
    this.flush();
    const escaped = prefix.replace(/[\\%_]/g, (character) => `\\${character}`);
    return this.db
      .prepare(`SELECT DISTINCT key FROM items WHERE key LIKE ? ESCAPE '\\' ORDER BY key LIMIT ?`)
      .pluck()
      .all(`${escaped}%`, limit) as string[];
  }

  itemCount(): number {
    this.flush();
    return this.db.prepare('SELECT COUNT(*) FROM items').pluck().get() as number;
  }

  /** The first keys in dataset order, as examples in a message. */
  firstKeys(limit: number): string[] {
    this.flush();
    return this.db.prepare('SELECT key FROM items ORDER BY row_index LIMIT ?').pluck().all(limit) as string[];
  }

  /** Distinct values of a record field among done rows that kept a record (null when the field is absent). */
  recordedValues(field: RecordField): unknown[] {
    this.flush();
    return this.db
      .prepare(`SELECT DISTINCT ${FIELD_SQL[field]} FROM items WHERE status = 'done' AND record IS NOT NULL`)
      .pluck()
      .all() as unknown[];
  }

  countRecords(filter: RecordSelection): number {
    this.flush();
    const { where, params } = filterSql(filter);
    return this.db
      .prepare(`SELECT COUNT(*) FROM items WHERE record IS NOT NULL AND (${where})`)
      .pluck()
      .get(...params) as number;
  }

  /** Stream the rows that kept a record and match `filter`, the record as stored (JSON text). */
  *records(filter: RecordSelection, order: RecordOrder = 'dataset'): IterableIterator<StoredRecordRow> {
    this.flush();
    const { where, params } = filterSql(filter);
    const statement = this.db.prepare(
      `SELECT key, sample, status, record AS text FROM items WHERE record IS NOT NULL AND (${where}) ORDER BY ${ORDER_SQL[order]}`,
    );
    yield* statement.iterate(...params) as IterableIterator<StoredRecordRow>;
  }

  /**
   * `records` as `traj compress` left them: the compressed record where one was made, else the
   * record; rows still over the budget are left out (`shapedCounts` says how many).
   */
  *shapedRecords(filter: RecordSelection, order: RecordOrder = 'dataset'): IterableIterator<StoredRecordRow> {
    this.flush();
    const { where, params } = filterSql(filter);
    const statement = this.db.prepare(
      `SELECT key, sample, status, ${SHAPED_TEXT} AS text FROM items ${SHAPED_JOIN}
       WHERE record IS NOT NULL AND ${SHAPED_KEEP} AND (${where}) ORDER BY ${ORDER_SQL[order]}`,
    );
    yield* statement.iterate(...params) as IterableIterator<StoredRecordRow>;
  }

  /** Done rows with a record that no compression finished, in dataset order (what `traj compress` does next). */
  unshapedKeys(): Array<{ key: string; sample: number }> {
    this.flush();
    return unshapedKeys(this.db);
  }

  /**
   * One record's shaping, in its own transaction at once, with its summaries' cost added to the run's
   * spend: a kill right after loses nothing that landed, and a record is never counted twice.
   */
  saveShaped(row: ShapedRow): void {
    this.flush();
    const usd = (row.status === 'done' ? row.metrics.summary_cost_usd : row.usage.summary_cost_usd) ?? 0;
    this.db.transaction(() => {
      saveShaped(this.db, row);
      if (usd > 0) this.statements.addCounter.run(SPENT_COUNTER, usd);
    })();
  }

  shapingTotals(): ShapingTotals | undefined {
    this.flush();
    return shapingTotals(this.db);
  }

  /** The settings the run's records were compressed with, if any were. */
  shapingSpec(): Record<string, unknown> | undefined {
    return shapingSpec(this.db);
  }

  /** Start a compression with these settings; rows shaped under other settings are dropped. */
  setShapingSpec(spec: Record<string, unknown>): void {
    this.flush();
    setShapingSpec(this.db, spec);
  }

  /** Rows without a record: failed by a worker crash, or still pending. */
  unrecordedCounts(): { failedWithoutRecord: number; pending: number } {
    this.flush();
    const count = (sql: string) => this.db.prepare(sql).pluck().get() as number;
    return {
      failedWithoutRecord: count(`SELECT COUNT(*) FROM items WHERE status = 'failed' AND record IS NULL`),
      pending: count(`SELECT COUNT(*) FROM items WHERE status = 'pending'`),
    };
  }

  /** Aggregates over every stored row, computed inside SQLite so no record JSON is parsed (see run-statistics). */
  aggregates(maxAttempts?: number): StoreAggregates {
    this.flush();
    return aggregateStore(this.db, maxAttempts);
  }

  /** The groups `traj serve` produced (empty for every other kind of run). */
  servedGroups(): ServedGroups {
    return new ServedGroups(this.db, () => this.flush());
  }

  /** Run `work` in one transaction (many record updates after a run: advantages, rescoring). */
  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  close(): void {
    this.flush();
    if (this.db.open) this.db.close();
  }
}
