import type Database from 'better-sqlite3';

/**
 * The SQL behind `RunStore.aggregates()`: kept beside the store (and imported only by it) so the
 * store stays the one place that knows its tables, without store.ts growing by every statistic.
 */

/** A tool's totals over the recorded rows. */
export interface ToolTotals {
  name: string;
  calls: number;
  ok: number;
  errors: number;
}

export interface FailureRow {
  code: string;
  count: number;
  message: string | null;
  example: string;
}

/** Raw aggregates over every stored row; run-statistics shapes and rounds them. */
export interface StoreAggregates {
  itemCount: number;
  byStatus: Record<string, number>;
  failedByClass: Record<string, number>;
  failedByCode: Record<string, number>;
  /** Per failure code, the earliest failure's message and key (ordered by count, then code). */
  failures: FailureRow[];
  failedForGood: number;
  badRows: number;
  badRowExamples: Array<{ line: number; reason: string }>;
  finishReasons: Record<string, number>;
  tools: ToolTotals[];
  withReasoning: number;
  tokens: { prompt: number; completion: number; reasoning: number; cached: number; cost: number | null };
  cost: CostAggregates;
  compressions: { rollouts: number; total: number };
  wallMs: number;
  segments: number;
  byToolsets: Array<{ toolsets: string; rollouts: number; completed: number | null }>;
  scored: number;
  rewardMean: number;
  rewardErrors: number;
  webCacheEntries: number;
}

/** Stored rollouts by where their cost came from, and the models no cost was known for. */
export interface CostAggregates {
  sources: { provider: number; pricing: number; mixed: number; unknown: number };
  missingPrice: number;
  unpricedModels: string[];
}

const RECORDED = `status IN ('done','discarded')`;

export function aggregateStore(db: Database.Database, maxAttempts?: number): StoreAggregates {
  const count = (sql: string, ...params: unknown[]) =>
    (db
      .prepare(sql)
      .pluck()
      .get(...params) as number | null) ?? 0;
  const grouped = (sql: string) =>
    Object.fromEntries(
      (db.prepare(sql).raw().all() as [string, number][]).map(([key, value]) => [key ?? 'unknown', value]),
    );
  const totals = scalarTotals(db);
  return {
    itemCount: totals.itemCount,
    byStatus: grouped('SELECT status, COUNT(*) FROM items GROUP BY status'),
    failedByClass: grouped(`SELECT error_class, COUNT(*) FROM items WHERE status = 'failed' GROUP BY error_class`),
    failedByCode: grouped(`SELECT error_code, COUNT(*) FROM items WHERE status = 'failed' GROUP BY error_code`),
    failures: failureRows(db),
    failedForGood: count(
      `SELECT COUNT(*) FROM items WHERE status = 'failed' AND (retryable = 0 OR attempts >= ?)`,
      maxAttempts ?? Number.MAX_SAFE_INTEGER,
    ),
    badRows: count('SELECT COUNT(*) FROM bad_rows'),
    badRowExamples: db.prepare('SELECT line, reason FROM bad_rows ORDER BY line LIMIT 5').all() as Array<{
      line: number;
      reason: string;
    }>,
    finishReasons: grouped(`SELECT finish_reason, COUNT(*) FROM items WHERE ${RECORDED} GROUP BY finish_reason`),
    tools: db
      .prepare(
        `SELECT json_extract(t.value, '$.name') AS name, SUM(json_extract(t.value, '$.calls')) AS calls,
                SUM(json_extract(t.value, '$.ok')) AS ok, SUM(json_extract(t.value, '$.errors')) AS errors
         FROM items, json_each(items.tool_stats) AS t WHERE ${RECORDED} GROUP BY name ORDER BY calls DESC, name`,
      )
      .all() as ToolTotals[],
    withReasoning: totals.withReasoning,
    tokens: {
      prompt: totals.prompt,
      completion: totals.completion,
      reasoning: totals.reasoning,
      cached: totals.cached,
      cost: totals.cost,
    },
    cost: {
      sources: { provider: totals.provider, pricing: totals.pricing, mixed: totals.mixed, unknown: totals.unknown },
      missingPrice: totals.missingPrice,
      unpricedModels: unpricedModels(db),
    },
    compressions: { rollouts: totals.compressedRollouts, total: totals.compressions },
    wallMs: count('SELECT COALESCE(SUM(wall_ms), 0) FROM segments'),
    segments: count('SELECT COUNT(*) FROM segments'),
    byToolsets: db
      .prepare(
        `SELECT toolsets, COUNT(*) AS rollouts, SUM(completed) AS completed FROM items WHERE ${RECORDED} GROUP BY toolsets ORDER BY rollouts DESC`,
      )
      .all() as StoreAggregates['byToolsets'],
    scored: totals.scored,
    rewardMean: totals.rewardMean ?? 0,
    rewardErrors: totals.rewardErrors,
    webCacheEntries: count('SELECT COUNT(*) FROM web_cache'),
  };
}

interface ScalarTotals {
  itemCount: number;
  withReasoning: number;
  prompt: number;
  completion: number;
  reasoning: number;
  cached: number;
  cost: number | null;
  provider: number;
  pricing: number;
  mixed: number;
  unknown: number;
  missingPrice: number;
  compressedRollouts: number;
  compressions: number;
  scored: number;
  rewardMean: number | null;
  rewardErrors: number;
}

/**
 * Every total that is one number, in one pass over the items table. A row's record makes its
 * leaf cell up to a page long, so each pass reads about as many pages as there are rows: the
 * thirteen separate queries this replaces read the table thirteen times at the end of each run.
 */
function scalarTotals(db: Database.Database): ScalarTotals {
  const stored = 'record IS NOT NULL';
  return db
    .prepare(
      `SELECT COUNT(*) AS itemCount,
              COUNT(*) FILTER (WHERE ${RECORDED} AND has_reasoning = 1) AS withReasoning,
              COALESCE(SUM(prompt_tokens) FILTER (WHERE ${stored}), 0) AS prompt,
              COALESCE(SUM(completion_tokens) FILTER (WHERE ${stored}), 0) AS completion,
              COALESCE(SUM(reasoning_tokens) FILTER (WHERE ${stored}), 0) AS reasoning,
              COALESCE(SUM(cached_tokens) FILTER (WHERE ${stored}), 0) AS cached,
              SUM(cost) FILTER (WHERE ${stored}) AS cost,
              COUNT(*) FILTER (WHERE ${stored} AND cost_source = 'provider') AS provider,
              COUNT(*) FILTER (WHERE ${stored} AND cost_source = 'pricing') AS pricing,
              COUNT(*) FILTER (WHERE ${stored} AND cost_source = 'mixed') AS mixed,
              COUNT(*) FILTER (WHERE ${stored} AND cost_source = 'unknown') AS unknown,
              COUNT(*) FILTER (WHERE ${stored} AND unpriced_models IS NOT NULL) AS missingPrice,
              COUNT(*) FILTER (WHERE ${RECORDED} AND compressions > 0) AS compressedRollouts,
              COALESCE(SUM(compressions) FILTER (WHERE ${RECORDED}), 0) AS compressions,
              COUNT(*) FILTER (WHERE ${RECORDED} AND reward IS NOT NULL) AS scored,
              AVG(reward) FILTER (WHERE ${RECORDED}) AS rewardMean,
              COUNT(*) FILTER (WHERE ${RECORDED} AND reward_error = 1) AS rewardErrors
       FROM items`,
    )
    .get() as ScalarTotals;
}

/** The models no price was known for, over the stored records. */
function unpricedModels(db: Database.Database): string[] {
  return db
    .prepare(
      `SELECT DISTINCT m.value FROM items, json_each(items.unpriced_models) AS m
       WHERE record IS NOT NULL AND unpriced_models IS NOT NULL ORDER BY m.value`,
    )
    .pluck()
    .all() as string[];
}

/** The earliest failure of each code, in full: what the user reads to fix the cause. */
function failureRows(db: Database.Database): FailureRow[] {
  return db
    .prepare(
      `SELECT COALESCE(error_code, 'unknown') AS code, COUNT(*) AS count,
              (SELECT error_message FROM items AS first WHERE first.status = 'failed' AND COALESCE(first.error_code, 'unknown') = COALESCE(items.error_code, 'unknown') ORDER BY first.updated_at, first.id LIMIT 1) AS message,
              (SELECT key || CASE WHEN sample > 0 THEN '#s' || sample ELSE '' END FROM items AS first WHERE first.status = 'failed' AND COALESCE(first.error_code, 'unknown') = COALESCE(items.error_code, 'unknown') ORDER BY first.updated_at, first.id LIMIT 1) AS example
       FROM items WHERE status = 'failed' GROUP BY code ORDER BY count DESC, code`,
    )
    .all() as FailureRow[];
}
