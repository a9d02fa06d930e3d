import type { RunStore } from './store.js';

export interface ToolTableRow {
  name: string;
  calls: number;
  ok: number;
  errors: number;
  error_rate: number;
}

export interface RunStatistics {
  run: string;
  model: string | null;
  prompts: {
    total: number;
    done: number;
    discarded: number;
    failed: number;
    pending: number;
    failed_by_class: Record<string, number>;
    failed_by_code: Record<string, number>;
    /** Per failure code: how many, the first message in full and an example prompt key to look it up by. */
    failures: Record<string, FailureSummary>;
    /** Failed prompts that no rerun retries (attempts used up, or a fault that repeats): `--retry-failed` does. */
    failed_for_good: number;
    bad_rows: number;
    /** The first bad rows (line and reason), so the summary can name them. */
    bad_row_examples: Array<{ line: number; reason: string }>;
  };
  finish_reasons: Record<string, number>;
  tools: ToolTableRow[];
  reasoning_coverage: number;
  /** cached: prompt tokens served from the provider's cache; cost: provider-reported, null when none reported. */
  tokens: { prompt: number; completion: number; reasoning: number; cached: number; total: number; cost: number | null };
  /** Context compressions: how many rollouts were compressed, and how many times in all. */
  compressions: { rollouts: number; total: number };
  wall_time_ms: number;
  segments: number;
  rollouts_per_minute: number;
  by_toolsets: Array<{ toolsets: string[]; rollouts: number; completed: number; completion_rate: number }>;
  toolset_drops: Record<string, number>;
  rewards: { scored: number; mean: number | null; errors: number };
  /** Network fetches (pages and searches) web tools made, and answers served from the web cache. */
  web: { fetches: number; cache_hits: number; cached_entries: number };
  generated_at: string;
}

export interface FailureSummary {
  count: number;
  first_message: string;
  example_key: string;
}

const RECORDED = `status IN ('done','discarded')`;

/**
 * Statistics over everything the store holds, so they are cumulative across resumes by
 * construction. Aggregated inside SQLite over columns kept beside each record, so no record JSON is parsed.
 */
export function computeStatistics(store: RunStore, extraWallMs = 0, maxAttempts?: number): RunStatistics {
  store.flush();
  const db = store.db;
  const meta = store.meta();
  const count = (sql: string, ...params: unknown[]) => (db.prepare(sql).pluck().get(...params) as number | null) ?? 0;
  const grouped = (sql: string) => Object.fromEntries((db.prepare(sql).raw().all() as [string, number][]).map(([key, value]) => [key ?? 'unknown', value]));

  const byStatus = grouped('SELECT status, COUNT(*) FROM items GROUP BY status');
  const recorded = (byStatus.done ?? 0) + (byStatus.discarded ?? 0);
  const tools = (db
    .prepare(
      `SELECT json_extract(t.value, '$.name') AS name, SUM(json_extract(t.value, '$.calls')) AS calls,
              SUM(json_extract(t.value, '$.ok')) AS ok, SUM(json_extract(t.value, '$.errors')) AS errors
       FROM items, json_each(items.tool_stats) AS t WHERE ${RECORDED} GROUP BY name ORDER BY calls DESC, name`,
    )
    .all() as Omit<ToolTableRow, 'error_rate'>[]).map((row) => ({ ...row, error_rate: row.calls ? round(row.errors / row.calls) : 0 }));
  const tokens = db
    .prepare(
      `SELECT COALESCE(SUM(prompt_tokens), 0) AS prompt, COALESCE(SUM(completion_tokens), 0) AS completion,
              COALESCE(SUM(reasoning_tokens), 0) AS reasoning,
              COALESCE(SUM(json_extract(record, '$.usage.cached_tokens')), 0) AS cached,
              SUM(json_extract(record, '$.usage.cost')) AS cost FROM items WHERE record IS NOT NULL`,
    )
    .get() as { prompt: number; completion: number; reasoning: number; cached: number; cost: number | null };
  const wallMs = count('SELECT COALESCE(SUM(wall_ms), 0) FROM segments') + extraWallMs;
  const finished = recorded + (byStatus.failed ?? 0);
  const byToolsets = (db
    .prepare(`SELECT toolsets, COUNT(*) AS rollouts, SUM(completed) AS completed FROM items WHERE ${RECORDED} GROUP BY toolsets ORDER BY rollouts DESC`)
    .all() as { toolsets: string; rollouts: number; completed: number }[]).map((row) => ({
    toolsets: JSON.parse(row.toolsets) as string[],
    rollouts: row.rollouts,
    completed: row.completed ?? 0,
    completion_rate: row.rollouts ? round((row.completed ?? 0) / row.rollouts) : 0,
  }));
  const counters = store.counters();
  const scored = count(`SELECT COUNT(*) FROM items WHERE ${RECORDED} AND reward IS NOT NULL`);
  return {
    run: meta?.name ?? '',
    model: (meta?.fingerprint_parts.model as string | undefined) ?? null,
    prompts: {
      total: Math.max(counters.dataset_rows ?? 0, count('SELECT COUNT(*) FROM items')),
      done: byStatus.done ?? 0,
      discarded: byStatus.discarded ?? 0,
      failed: byStatus.failed ?? 0,
      pending: byStatus.pending ?? 0,
      failed_by_class: grouped(`SELECT error_class, COUNT(*) FROM items WHERE status = 'failed' GROUP BY error_class`),
      failed_by_code: grouped(`SELECT error_code, COUNT(*) FROM items WHERE status = 'failed' GROUP BY error_code`),
      failures: failureSummaries(store),
      failed_for_good: count(`SELECT COUNT(*) FROM items WHERE status = 'failed' AND (retryable = 0 OR attempts >= ?)`, maxAttempts ?? Number.MAX_SAFE_INTEGER),
      bad_rows: count('SELECT COUNT(*) FROM bad_rows'),
      bad_row_examples: db.prepare('SELECT line, reason FROM bad_rows ORDER BY line LIMIT 5').all() as Array<{ line: number; reason: string }>,
    },
    finish_reasons: grouped(`SELECT finish_reason, COUNT(*) FROM items WHERE ${RECORDED} GROUP BY finish_reason`),
    tools,
    reasoning_coverage: recorded ? round(count(`SELECT COUNT(*) FROM items WHERE ${RECORDED} AND has_reasoning = 1`) / recorded) : 0,
    tokens: { ...tokens, total: tokens.prompt + tokens.completion, cost: tokens.cost === null ? null : round(tokens.cost, 1e8) },
    compressions: compressionCounts(count),
    wall_time_ms: wallMs,
    segments: count('SELECT COUNT(*) FROM segments'),
    rollouts_per_minute: wallMs > 0 ? round(finished / (wallMs / 60_000)) : 0,
    by_toolsets: byToolsets,
    toolset_drops: Object.fromEntries(Object.entries(counters).filter(([name]) => name.startsWith('dropped:')).map(([name, value]) => [name.slice(8), value])),
    rewards: {
      scored,
      mean: scored ? round(count(`SELECT AVG(reward) FROM items WHERE ${RECORDED} AND reward IS NOT NULL`)) : null,
      errors: count(`SELECT COUNT(*) FROM items WHERE ${RECORDED} AND reward_error = 1`),
    },
    web: { fetches: counters['web:fetches'] ?? 0, cache_hits: counters['web:cache_hits'] ?? 0, cached_entries: count('SELECT COUNT(*) FROM web_cache') },
    generated_at: new Date().toISOString(),
  };
}

/**
 * Counted in the record text without parsing it: the key `"replaced_start":` occurs once per
 * compression and nowhere else unescaped (inside message strings its quotes are escaped).
 */
function compressionCounts(count: (sql: string) => number): RunStatistics['compressions'] {
  const key = `'"replaced_start":'`;
  const occurrences = `(length(record) - length(replace(record, ${key}, ''))) / length(${key})`;
  return {
    rollouts: count(`SELECT COUNT(*) FROM items WHERE ${RECORDED} AND instr(record, ${key}) > 0`),
    total: count(`SELECT COALESCE(SUM(${occurrences}), 0) FROM items WHERE ${RECORDED} AND instr(record, ${key}) > 0`),
  };
}

/** The earliest failure of each code, in full: what the user reads to fix the cause. */
function failureSummaries(store: RunStore): Record<string, FailureSummary> {
  const rows = store.db
    .prepare(
      `SELECT COALESCE(error_code, 'unknown') AS code, COUNT(*) AS count,
              (SELECT error_message FROM items AS first WHERE first.status = 'failed' AND COALESCE(first.error_code, 'unknown') = COALESCE(items.error_code, 'unknown') ORDER BY first.updated_at, first.id LIMIT 1) AS message,
              (SELECT key || CASE WHEN sample > 0 THEN '#s' || sample ELSE '' END FROM items AS first WHERE first.status = 'failed' AND COALESCE(first.error_code, 'unknown') = COALESCE(items.error_code, 'unknown') ORDER BY first.updated_at, first.id LIMIT 1) AS example
       FROM items WHERE status = 'failed' GROUP BY code ORDER BY count DESC, code`,
    )
    .all() as { code: string; count: number; message: string | null; example: string }[];
  return Object.fromEntries(rows.map((row) => [row.code, { count: row.count, first_message: row.message ?? '(no message)', example_key: row.example }]));
}

function round(value: number, scale = 10_000): number {
  return Math.round(value * scale) / scale;
}
