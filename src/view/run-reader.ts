import Database from 'better-sqlite3';
import { existsSync, statSync } from 'node:fs';
import { RunError } from '../errors.js';
import { wilsonInterval, type Estimate } from '../eval/metrics.js';
import { servingStats, type ServingStats } from './serving-reader.js';

/**
 * Read-only queries over one run store (checkpoints/RUN.sqlite), for the viewer.
 *
 * What this file knows of the store's schema, and nothing more (src/run/store.ts owns it):
 * - `run` (one row): name, kind, config (JSON; `eval.pass_threshold`), fingerprint_parts (JSON;
 *   `model`, `environment`), created_at, updated_at.
 * - `items`: id, key, sample, row_index, status, attempts, error_class, error_code,
 *   error_message, toolsets (JSON list), reward, finish_reason, duration_ms, completed,
 *   prompt_tokens, completion_tokens, record (the record's JSON), updated_at; a `cost` column
 *   is used when a store has one.
 * - `segments`: wall_ms per invocation.
 * - `counters`: `cost:spent_usd` (USD spent) and `cost:unpriced:MODEL` (rollouts with calls of an unpriced model).
 * Pages, counts and plots are SQL. Scanning `items` reads every record with its row, so the reader
 * keeps a compact copy of the columns above (no record) in a TEMP table of its read-only
 * connection, rebuilt when the store's files change: filters, sorts, counts and plots scan that
 * copy, record JSON is read by id for the rows a page shows, and text search scans records.
 */

export interface RunSummary {
  name: string;
  kind: string;
  model: string | null;
  environment: string | null;
  created_at: string | null;
  updated_at: string | null;
  statuses: Record<string, number>;
  total: number;
  mean_reward: number | null;
  scored: number;
  pass_threshold: number;
  pass_rate: Estimate;
  tokens: { prompt: number; completion: number };
  /** Wall time of all invocations (segments), and the summed rollout durations. */
  wall_ms: number;
  rollout_ms: number;
  toolsets: string[];
  /**
   * USD the run spent (the store's `cost:spent_usd` counter: every invocation and attempt), or the
   * summed `cost` column of an older store that has one; null when the store records no cost.
   */
  cost: number | null;
  /** Models whose calls had no known cost (`cost:unpriced:MODEL` counters): `cost` leaves them out. */
  unpriced_models: string[];
  /** A serving run's groups (`traj serve`); null for other runs. */
  serving?: ServingStats | null;
}

export const SORTS = ['row', 'key', 'reward', 'duration', 'tokens', 'attempts', 'updated'] as const;
export type SortKey = (typeof SORTS)[number];

export interface ItemQuery {
  status?: string;
  finish?: string;
  /** A stored toolset combination (its JSON text), or one toolset name the row must include. */
  toolsets?: string;
  toolset?: string;
  errorClass?: string;
  rewardMin?: number;
  rewardMax?: number;
  search?: string;
  sort: SortKey;
  descending: boolean;
  page: number;
  pageSize: number;
}

export interface ItemRow {
  key: string;
  sample: number;
  row_index: number | null;
  status: string;
  attempts: number;
  error_class: string | null;
  error_code: string | null;
  error_message: string | null;
  toolsets: string[];
  reward: number | null;
  finish_reason: string | null;
  duration_ms: number | null;
  tokens: number | null;
  turns: number | null;
  updated_at: string;
}

export interface ItemPage {
  rows: ItemRow[];
  /** Rows matching the filters. */
  total: number;
}

export interface Facets {
  statuses: [string, number][];
  finishReasons: [string, number][];
  toolsetCombinations: [string, number][];
  toolsets: string[];
  errorClasses: [string, number][];
}

export interface Outcome {
  key: string;
  sample: number;
  reward: number | null;
  finish_reason: string;
  tokens: number;
  duration_ms: number;
}

export interface StoredRow extends ItemRow {
  record: unknown | null;
}

/** Distributions and breakdowns for the plots page, each aggregated by SQL. */
export interface RunPlots {
  rewards: { value: number; count: number }[];
  turns: { value: number; count: number }[];
  tokens: number[];
  durations: number[];
  completionByToolsets: { toolsets: string[]; rollouts: number; completed: number }[];
  failures: { label: string; count: number }[];
  /** Finished rollouts per bucket of `bucketSeconds`, from the first one on. */
  throughput: { bucketSeconds: number; buckets: { offsetSeconds: number; done: number }[] };
}

/** Rows read for the distribution plots of values only record JSON holds (turns). */
export const TURNS_SAMPLE = 10_000;

const SORT_SQL: Record<SortKey, string> = {
  row: 'row_index IS NULL, row_index, key, sample',
  key: 'key, sample',
  reward: 'reward IS NULL, reward',
  duration: 'duration_ms IS NULL, duration_ms',
  tokens: 'prompt_tokens IS NULL, prompt_tokens + completion_tokens',
  attempts: 'attempts',
  updated: 'updated_at',
};

/** The compact copy's columns, from `items` (TEMP tables are writable on a read-only connection). */
const MIRROR = (hasCost: boolean) => `
CREATE TEMP TABLE IF NOT EXISTS rows (
  id INTEGER PRIMARY KEY, key TEXT, sample INTEGER, row_index INTEGER, status TEXT, attempts INTEGER,
  error_class TEXT, error_code TEXT, toolsets TEXT, reward REAL, finish_reason TEXT, duration_ms INTEGER,
  completed INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER, has_record INTEGER, updated_at TEXT, cost REAL
);
DELETE FROM temp.rows;
INSERT INTO temp.rows SELECT id, key, sample, row_index, status, attempts, error_class, error_code, toolsets, reward, finish_reason,
  duration_ms, completed, prompt_tokens, completion_tokens, record IS NOT NULL, updated_at, ${hasCost ? 'cost' : 'NULL'} FROM main.items;`;

/** Rebuild the copy at most this often while a run is writing its store. */
const REFRESH_INTERVAL_MS = 2_000;

export class RunReader {
  private readonly db: Database.Database;
  private readonly hasCost: boolean;
  private version = '';
  private refreshedAt = 0;
  private searched = '';
  private readonly memos = new Map<string, unknown>();

  private readonly refreshIntervalMs: number;

  constructor(
    readonly path: string,
    options: { refreshIntervalMs?: number } = {},
  ) {
    this.refreshIntervalMs = options.refreshIntervalMs ?? REFRESH_INTERVAL_MS;
    if (!existsSync(path)) throw new RunError(`no run store at ${path}`, { code: 'view_store_missing' });
    try {
      this.db = new Database(path, { readonly: true, fileMustExist: true });
      this.db.pragma('busy_timeout = 5000');
      const columns = this.db.prepare("SELECT name FROM pragma_table_info('items')").pluck().all() as string[];
      if (!columns.includes('record')) throw new Error('no items table with records');
      this.hasCost = columns.includes('cost');
    } catch (error) {
      throw new RunError(`${path} is not a traj run store: ${(error as Error).message}`, {
        code: 'view_store_invalid',
      });
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** Rebuild the compact copy when the store (or its write-ahead log) changed since the last build. */
  refresh(): void {
    const version = [this.path, `${this.path}-wal`]
      .map((file) => (existsSync(file) ? `${statSync(file).mtimeMs}:${statSync(file).size}` : '-'))
      .join('/');
    if (version === this.version) return;
    if (this.version !== '' && Date.now() - this.refreshedAt < this.refreshIntervalMs) return;
    this.db.transaction(() => this.db.exec(MIRROR(this.hasCost)))();
    this.memos.clear();
    this.version = version;
    this.refreshedAt = Date.now();
  }

  private meta(): Record<string, string> | undefined {
    return this.db.prepare('SELECT * FROM run WHERE id = 1').get() as Record<string, string> | undefined;
  }

  /** A serving run's groups (rate, reward by policy version, staleness); null for other runs. */
  serving(): ServingStats | null {
    return servingStats(this.db);
  }

  passThreshold(): number {
    const config = parseObject(this.meta()?.config);
    const threshold = (config.eval as { pass_threshold?: unknown } | undefined)?.pass_threshold;
    return typeof threshold === 'number' ? threshold : 1;
  }

  summary(fallbackName: string): RunSummary {
    this.refresh();
    return this.memo('summary', () => this.computeSummary(fallbackName));
  }

  /** Values that change only with the store: computed once per build of the copy. */
  memo<T>(name: string, compute: () => T): T {
    this.refresh();
    if (!this.memos.has(name)) this.memos.set(name, compute());
    return this.memos.get(name) as T;
  }

  private computeSummary(fallbackName: string): RunSummary {
    const meta = this.meta();
    const parts = parseObject(meta?.fingerprint_parts);
    const environment = parts.environment as { name?: unknown; version?: unknown } | undefined;
    const threshold = this.passThreshold();
    const statuses = Object.fromEntries(
      this.db.prepare('SELECT status, COUNT(*) FROM temp.rows GROUP BY status').raw().all() as [string, number][],
    );
    const totals = this.db
      .prepare(
        `SELECT COUNT(reward) AS scored, AVG(reward) AS mean, SUM(reward >= ? - 1e-9) AS passed,
         COALESCE(SUM(prompt_tokens), 0) AS prompt, COALESCE(SUM(completion_tokens), 0) AS completion, COALESCE(SUM(duration_ms), 0) AS rollout_ms
         ${this.hasCost ? ', SUM(cost) AS cost' : ''}
         FROM temp.rows WHERE status = 'done'`,
      )
      .get(threshold) as {
      scored: number;
      mean: number | null;
      passed: number | null;
      prompt: number;
      completion: number;
      rollout_ms: number;
      cost?: number | null;
    };
    const wall = this.db.prepare('SELECT COALESCE(SUM(wall_ms), 0) FROM segments').pluck().get() as number;
    return {
      name: meta?.name ?? fallbackName,
      kind: meta?.kind ?? 'unknown',
      model: typeof parts.model === 'string' ? parts.model : null,
      // A batch's environment is the built-in prompt dataset ('prompts' 1): naming it read as a prompt count.
      environment:
        typeof environment?.name === 'string' && meta?.kind !== 'batch'
          ? `${environment.name} ${String(environment.version ?? '')}`.trim()
          : null,
      created_at: meta?.created_at ?? null,
      updated_at: meta?.updated_at ?? null,
      statuses,
      total: Object.values(statuses).reduce((sum, count) => sum + count, 0),
      mean_reward: totals.mean,
      scored: totals.scored,
      pass_threshold: threshold,
      pass_rate: wilsonInterval(totals.passed ?? 0, totals.scored),
      tokens: { prompt: totals.prompt, completion: totals.completion },
      wall_ms: wall,
      rollout_ms: totals.rollout_ms,
      toolsets: this.facets().toolsets,
      ...this.costCounters(this.hasCost ? (totals.cost ?? null) : null),
      serving: this.serving(),
    };
  }

  /** The run's spend and unpriced models from the store's counters (a store may predate them). */
  private costCounters(column: number | null): Pick<RunSummary, 'cost' | 'unpriced_models'> {
    let rows: { name: string; value: number }[] = [];
    try {
      rows = this.db
        .prepare(`SELECT name, value FROM counters WHERE name = 'cost:spent_usd' OR name LIKE 'cost:unpriced:%'`)
        .all() as { name: string; value: number }[];
    } catch {
      // No counters table: a store from before counters; the column (if any) is all there is.
    }
    const spent = rows.find((row) => row.name === 'cost:spent_usd');
    return {
      cost: spent ? Math.round(spent.value * 1e12) / 1e12 : column,
      unpriced_models: rows
        .filter((row) => row.name.startsWith('cost:unpriced:'))
        .map((row) => row.name.slice('cost:unpriced:'.length))
        .sort(),
    };
  }

  facets(): Facets {
    this.refresh();
    return this.memo('facets', () => this.computeFacets());
  }

  private computeFacets(): Facets {
    const grouped = (column: string) =>
      this.db
        .prepare(
          `SELECT ${column}, COUNT(*) FROM temp.rows WHERE ${column} IS NOT NULL GROUP BY ${column} ORDER BY COUNT(*) DESC`,
        )
        .raw()
        .all() as [string, number][];
    const combinations = grouped('toolsets');
    const toolsets = new Set<string>();
    for (const [json] of combinations) for (const name of parseList(json)) toolsets.add(name);
    return {
      statuses: grouped('status'),
      finishReasons: grouped('finish_reason'),
      toolsetCombinations: combinations,
      toolsets: [...toolsets].sort(),
      errorClasses: grouped('error_class'),
    };
  }

  private where(query: ItemQuery): { sql: string; parameters: unknown[] } {
    const clauses: string[] = [];
    const parameters: unknown[] = [];
    const add = (clause: string, ...values: unknown[]) => {
      clauses.push(clause);
      parameters.push(...values);
    };
    if (query.status) add('status = ?', query.status);
    if (query.finish) add('finish_reason = ?', query.finish);
    if (query.toolsets) add('toolsets = ?', query.toolsets);
    if (query.toolset) add('EXISTS (SELECT 1 FROM json_each(rows.toolsets) WHERE value = ?)', query.toolset);
    if (query.errorClass)
      add(
        query.errorClass === '(none)' ? 'error_class IS NULL' : 'error_class = ?',
        ...(query.errorClass === '(none)' ? [] : [query.errorClass]),
      );
    if (query.rewardMin !== undefined) add('reward >= ?', query.rewardMin);
    if (query.rewardMax !== undefined) add('reward <= ?', query.rewardMax);
    if (query.search) {
      this.searchMatches(query.search);
      add('id IN (SELECT id FROM temp.matches)');
    }
    return { sql: clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '', parameters };
  }

  /**
   * The ids of rollouts whose messages contain `text`, kept in a TEMP table for the last search:
   * paging through its results, and the count, scan the records once.
   */
  private searchMatches(text: string): void {
    if (this.searched === `${this.version}\n${text}`) return;
    this.db.transaction(() => {
      this.db.exec('CREATE TEMP TABLE IF NOT EXISTS matches (id INTEGER PRIMARY KEY); DELETE FROM temp.matches;');
      this.db
        .prepare(`INSERT INTO temp.matches SELECT id FROM main.items WHERE record LIKE ? ESCAPE '\\'`)
        .run(messagesPattern(text));
    })();
    this.searched = `${this.version}\n${text}`;
  }

  /** One page of rows: the ids are chosen first, so record JSON is read only for the rows shown. */
  page(query: ItemQuery): ItemPage {
    this.refresh();
    const { sql, parameters } = this.where(query);
    const order = SORT_SQL[query.sort]
      .split(', ')
      .map((term) => (term.endsWith('IS NULL') ? term : `${term}${query.descending ? ' DESC' : ''}`))
      .join(', ');
    const offset = (query.page - 1) * query.pageSize;
    const ids = this.db
      .prepare(`SELECT id FROM temp.rows ${sql} ORDER BY ${order}, id LIMIT ? OFFSET ?`)
      .pluck()
      .all(...parameters, query.pageSize, offset) as number[];
    const rows = ids.map((id) => this.rowById(id)!);
    const total = this.db
      .prepare(`SELECT COUNT(*) FROM temp.rows ${sql}`)
      .pluck()
      .get(...parameters) as number;
    return { rows, total };
  }

  private rowById(id: number): ItemRow | undefined {
    const row = this.db
      .prepare(
        `SELECT key, sample, row_index, status, attempts, error_class, error_code, substr(error_message, 1, 300) AS error_message, toolsets, reward, finish_reason,
         duration_ms, prompt_tokens + completion_tokens AS tokens, json_extract(record, '$.turns') AS turns, updated_at FROM items WHERE id = ?`,
      )
      .get(id) as (Omit<ItemRow, 'toolsets'> & { toolsets: string }) | undefined;
    return row && { ...row, toolsets: parseList(row.toolsets) };
  }

  /** One stored rollout with its record parsed (null for a failed rollout, which has none). */
  item(key: string, sample: number): StoredRow | undefined {
    const id = this.db.prepare('SELECT id FROM items WHERE key = ? AND sample = ?').pluck().get(key, sample) as
      | number
      | undefined;
    if (id === undefined) return undefined;
    const row = this.rowById(id)!;
    const full = this.db.prepare('SELECT error_message, record FROM items WHERE id = ?').get(id) as {
      error_message: string | null;
      record: string | null;
    };
    return {
      ...row,
      error_message: full.error_message,
      record: full.record === null ? null : (JSON.parse(full.record) as unknown),
    };
  }

  plots(): RunPlots {
    return this.memo('plots', () => this.computePlots());
  }

  private computePlots(): RunPlots {
    const db = this.db;
    const rewards = db
      .prepare(
        "SELECT reward AS value, COUNT(*) AS count FROM temp.rows WHERE status = 'done' AND reward IS NOT NULL GROUP BY reward ORDER BY reward",
      )
      .all() as RunPlots['rewards'];
    // turns live only in record JSON: read the newest rows, at most TURNS_SAMPLE of them.
    const turns = db
      .prepare(
        `SELECT turns AS value, COUNT(*) AS count FROM (SELECT json_extract(record, '$.turns') AS turns FROM items WHERE status = 'done' AND record IS NOT NULL ORDER BY id DESC LIMIT ?) GROUP BY turns ORDER BY turns`,
      )
      .all(TURNS_SAMPLE) as RunPlots['turns'];
    const tokens = db
      .prepare(
        "SELECT prompt_tokens + completion_tokens FROM temp.rows WHERE status = 'done' AND prompt_tokens IS NOT NULL",
      )
      .pluck()
      .all() as number[];
    const durations = db
      .prepare("SELECT duration_ms FROM temp.rows WHERE status = 'done' AND duration_ms IS NOT NULL")
      .pluck()
      .all() as number[];
    const completion = db
      .prepare(
        "SELECT toolsets, COUNT(*) AS rollouts, COALESCE(SUM(completed), 0) AS completed FROM temp.rows WHERE status = 'done' GROUP BY toolsets ORDER BY rollouts DESC",
      )
      .all() as { toolsets: string; rollouts: number; completed: number }[];
    const failures = db
      .prepare(
        `SELECT CASE WHEN status = 'done' THEN 'agent: ' || finish_reason ELSE COALESCE(error_class, status) || COALESCE(': ' || error_code, '') END AS label, COUNT(*) AS count
         FROM temp.rows WHERE status IN ('failed', 'discarded') OR (status = 'done' AND finish_reason IS NOT NULL AND finish_reason <> 'stop')
         GROUP BY label ORDER BY count DESC`,
      )
      .all() as RunPlots['failures'];
    const throughput = this.throughput();
    return {
      rewards,
      turns,
      tokens,
      durations,
      completionByToolsets: completion.map((row) => ({
        toolsets: parseList(row.toolsets),
        rollouts: row.rollouts,
        completed: row.completed,
      })),
      failures,
      throughput,
    };
  }

  /** Finished rollouts over time, in at most ~60 buckets of a round width (1 s … 1 h). */
  private throughput(): RunPlots['throughput'] {
    const span = this.db
      .prepare(
        "SELECT MIN(julianday(updated_at)) AS first, MAX(julianday(updated_at)) AS last FROM temp.rows WHERE status = 'done'",
      )
      .get() as { first: number | null; last: number | null };
    if (span.first === null || span.last === null) return { bucketSeconds: 1, buckets: [] };
    const seconds = (span.last - span.first) * 86_400;
    const bucketSeconds =
      [1, 5, 10, 30, 60, 300, 900, 3_600, 21_600, 86_400].find((width) => seconds / width <= 60) ?? 86_400;
    const rows = this.db
      .prepare(
        "SELECT CAST((julianday(updated_at) - ?) * 86400 / ? AS INTEGER) AS bucket, COUNT(*) AS done FROM temp.rows WHERE status = 'done' GROUP BY bucket ORDER BY bucket",
      )
      .all(span.first, bucketSeconds) as { bucket: number; done: number }[];
    const counts = new Map(rows.map((row) => [row.bucket, row.done]));
    const last = rows.length === 0 ? 0 : rows[rows.length - 1]!.bucket;
    return {
      bucketSeconds,
      buckets: Array.from({ length: last + 1 }, (_, bucket) => ({
        offsetSeconds: bucket * bucketSeconds,
        done: counts.get(bucket) ?? 0,
      })),
    };
  }

  /** Finished rollouts as compare needs them, from the copy's columns (in no particular order). */
  outcomes(): Outcome[] {
    this.refresh();
    // Rows as arrays: 100,000 of them allocate far less than as objects.
    const rows = this.db
      .prepare(
        "SELECT key, sample, reward, finish_reason, COALESCE(prompt_tokens + completion_tokens, 0), COALESCE(duration_ms, 0) FROM temp.rows WHERE status = 'done' AND has_record",
      )
      .raw()
      .all() as [string, number, number | null, string, number, number][];
    return rows.map(([key, sample, reward, finish_reason, tokens, duration_ms]) => ({
      key,
      sample,
      reward,
      finish_reason,
      tokens,
      duration_ms,
    }));
  }

  runInfo(): { name: string | null; model: string | null; environment: { name: string; version: string } | null } {
    const meta = this.meta();
    const parts = parseObject(meta?.fingerprint_parts);
    const environment = parts.environment as { name?: unknown; version?: unknown } | undefined;
    return {
      name: meta?.name ?? null,
      model: typeof parts.model === 'string' ? parts.model : null,
      environment:
        typeof environment?.name === 'string' && typeof environment.version === 'string'
          ? { name: environment.name, version: environment.version }
          : null,
    };
  }
}

/**
 * A LIKE pattern matching records whose messages contain `text` (case-insensitive for ASCII), as
 * the text appears inside JSON (quotes, backslashes and newlines escaped). Records are written
 * with `messages` right before `tools`, and the keys `,"messages":[` and `],"tools":[` (their
 * quotes unescaped) cannot occur inside a JSON string: the text must lie between the two, so
 * tool schemas, the ShareGPT copy and other fields never match. One LIKE scan, no JSON parsing.
 */
export function messagesPattern(text: string): string {
  const asJson = JSON.stringify(text)
    .slice(1, -1)
    .replace(/[\\%_]/g, (character) => `\\${character}`);
  return `%,"messages":[%${asJson}%],"tools":[%`;
}

function parseObject(text: string | undefined): Record<string, unknown> {
  if (!text) return {};
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function parseList(text: string | null): string[] {
  if (!text) return [];
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) ? value.map(String) : [];
  } catch {
    return [];
  }
}
