import type Database from 'better-sqlite3';

/**
 * The tables of `traj compress` (see docs/compress.md), kept beside the store and imported only by
 * it: `shaping` holds the settings the compression was made with, `shaped` one row per record
 * shaped (the compressed record when one was made, and its metrics). A row lands in one
 * transaction, so a kill loses only rows not yet written, which a rerun shapes; a landed row is
 * never shaped again.
 */
export const SHAPED_SCHEMA = `
CREATE TABLE IF NOT EXISTS shaping (id INTEGER PRIMARY KEY CHECK (id = 1), spec TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS shaped (
  shaped_key TEXT NOT NULL, shaped_sample INTEGER NOT NULL,
  shaped_status TEXT NOT NULL, shaped_record TEXT,
  compressed INTEGER NOT NULL DEFAULT 0, over_limit INTEGER NOT NULL DEFAULT 0,
  tokens_before INTEGER, tokens_after INTEGER, turns_before INTEGER, turns_after INTEGER,
  turns_summarised INTEGER NOT NULL DEFAULT 0, summary_calls INTEGER NOT NULL DEFAULT 0,
  error TEXT, shaped_at TEXT NOT NULL,
  PRIMARY KEY (shaped_key, shaped_sample)
);
`;

/** What one record's shaping found (Hermes' TrajectoryMetrics, in traj's words). */
export interface ShapingMetrics {
  tokens_before: number;
  tokens_after: number;
  turns_before: number;
  turns_after: number;
  turns_summarised: number;
  summary_calls: number;
  /** A summary replaced some turns. */
  compressed: boolean;
  /** Still over the budget after shaping: marked, never cut, and left out of a compressed export. */
  over_limit: boolean;
}

export type ShapedRow =
  | { key: string; sample: number; status: 'done'; record: string | null; metrics: ShapingMetrics }
  | { key: string; sample: number; status: 'failed'; error: string; summaryCalls: number };

/** Totals over the shaped rows (the statistics' `compress` section). */
export interface ShapingTotals {
  records: number;
  compressed: number;
  under_budget: number;
  over_limit: number;
  failed: number;
  tokens_before: number;
  tokens_after: number;
  turns_summarised: number;
  summary_calls: number;
}

export function saveShaped(db: Database.Database, row: ShapedRow): void {
  const now = new Date().toISOString();
  const base = { key: row.key, sample: row.sample, now };
  const values =
    row.status === 'done'
      ? {
          ...base,
          status: 'done',
          record: row.record,
          ...row.metrics,
          compressed: row.metrics.compressed ? 1 : 0,
          over_limit: row.metrics.over_limit ? 1 : 0,
          error: null,
        }
      : {
          ...base,
          status: 'failed',
          record: null,
          compressed: 0,
          over_limit: 0,
          tokens_before: null,
          tokens_after: null,
          turns_before: null,
          turns_after: null,
          turns_summarised: 0,
          summary_calls: row.summaryCalls,
          error: row.error,
        };
  db.prepare(
    `INSERT OR REPLACE INTO shaped (shaped_key, shaped_sample, shaped_status, shaped_record, compressed, over_limit, tokens_before, tokens_after,
       turns_before, turns_after, turns_summarised, summary_calls, error, shaped_at)
     VALUES (@key, @sample, @status, @record, @compressed, @over_limit, @tokens_before, @tokens_after,
       @turns_before, @turns_after, @turns_summarised, @summary_calls, @error, @now)`,
  ).run(values);
}

/** Done rows with a record that no earlier compression finished (failed ones are tried again). */
export function unshapedKeys(db: Database.Database): Array<{ key: string; sample: number }> {
  return db
    .prepare(
      `SELECT items.key AS key, items.sample AS sample FROM items LEFT JOIN shaped
       ON shaped.shaped_key = items.key AND shaped.shaped_sample = items.sample
       WHERE items.status = 'done' AND items.record IS NOT NULL AND (shaped.shaped_status IS NULL OR shaped.shaped_status = 'failed')
       ORDER BY items.row_index, items.key, items.sample`,
    )
    .all() as Array<{ key: string; sample: number }>;
}

export function shapingTotals(db: Database.Database): ShapingTotals | undefined {
  const row = db
    .prepare(
      `SELECT COUNT(*) AS records, COALESCE(SUM(compressed), 0) AS compressed,
         COALESCE(SUM(shaped_status = 'done' AND compressed = 0 AND over_limit = 0), 0) AS under_budget,
         COALESCE(SUM(over_limit), 0) AS over_limit, COALESCE(SUM(shaped_status = 'failed'), 0) AS failed,
         COALESCE(SUM(tokens_before), 0) AS tokens_before, COALESCE(SUM(tokens_after), 0) AS tokens_after,
         COALESCE(SUM(turns_summarised), 0) AS turns_summarised, COALESCE(SUM(summary_calls), 0) AS summary_calls
       FROM shaped`,
    )
    .get() as ShapingTotals;
  return row.records > 0 ? row : undefined;
}

export function shapingSpec(db: Database.Database): Record<string, unknown> | undefined {
  const text = db.prepare('SELECT spec FROM shaping WHERE id = 1').pluck().get() as string | undefined;
  return text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>);
}

/** Record the settings of a compression; a new spec drops the rows shaped under the old one. */
export function setShapingSpec(db: Database.Database, spec: Record<string, unknown>): void {
  db.transaction(() => {
    db.prepare('DELETE FROM shaped').run();
    db.prepare('INSERT OR REPLACE INTO shaping (id, spec, created_at) VALUES (1, ?, ?)').run(
      JSON.stringify(spec),
      new Date().toISOString(),
    );
  })();
}

/** The compressed export's source: a shaped record where one was made, else the record; over-limit rows left out. */
export const SHAPED_JOIN = `LEFT JOIN shaped ON shaped.shaped_key = items.key AND shaped.shaped_sample = items.sample`;
export const SHAPED_TEXT = `COALESCE(shaped.shaped_record, items.record)`;
export const SHAPED_KEEP = `(shaped.over_limit IS NULL OR shaped.over_limit = 0)`;
