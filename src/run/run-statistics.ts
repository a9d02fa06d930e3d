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
    bad_rows: number;
  };
  finish_reasons: Record<string, number>;
  tools: ToolTableRow[];
  reasoning_coverage: number;
  tokens: { prompt: number; completion: number; reasoning: number; total: number };
  /** Context compressions: how many rollouts were compressed, and how many times in all. */
  compressions: { rollouts: number; total: number };
  wall_time_ms: number;
  segments: number;
  rollouts_per_minute: number;
  by_toolsets: Array<{ toolsets: string[]; rollouts: number; completed: number; completion_rate: number }>;
  toolset_drops: Record<string, number>;
  rewards: { scored: number; mean: number | null; errors: number };
  generated_at: string;
}

const RECORDED = `status IN ('done','discarded')`;

/**
 * Statistics over everything the store holds, so they are cumulative across resumes by
 * construction. Aggregated inside SQLite over columns kept beside each record, so no record JSON is parsed.
 */
export function computeStatistics(store: RunStore, extraWallMs = 0): RunStatistics {
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
              COALESCE(SUM(reasoning_tokens), 0) AS reasoning FROM items WHERE record IS NOT NULL`,
    )
    .get() as { prompt: number; completion: number; reasoning: number };
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
      bad_rows: count('SELECT COUNT(*) FROM bad_rows'),
    },
    finish_reasons: grouped(`SELECT finish_reason, COUNT(*) FROM items WHERE ${RECORDED} GROUP BY finish_reason`),
    tools,
    reasoning_coverage: recorded ? round(count(`SELECT COUNT(*) FROM items WHERE ${RECORDED} AND has_reasoning = 1`) / recorded) : 0,
    tokens: { ...tokens, total: tokens.prompt + tokens.completion },
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

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
