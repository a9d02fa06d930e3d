import { RATE_LIMITED_COUNTER, UNAVAILABLE_COUNTER } from './concurrency-sampler.js';
import type { RunStore, ShapingTotals } from './store.js';

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
  /** cached: prompt tokens served from the provider's cache; cost: as `cost.usd`. */
  tokens: { prompt: number; completion: number; reasoning: number; cached: number; total: number; cost: number | null };
  cost: CostStatistics;
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
  /**
   * The run endpoint's gate: 429 and 503 answers, and its level over the cumulative wall time as
   * [seconds, requests in flight allowed] pairs, one per change (at most SERIES_POINTS, thinned evenly).
   */
  concurrency: { http_429: number; http_503: number; series: Array<[number, number]> };
  /** `traj compress`: its settings and totals over the shaped records; absent until the run is compressed. */
  compress?: ShapingTotals & { settings: Record<string, unknown> };
  generated_at: string;
}

/** What the run cost (USD): agent, subagents, auxiliary models and judges. Never a silent 0. */
export interface CostStatistics {
  /** Over the stored rollouts (each prompt's latest attempt); null when no rollout's cost is known. */
  usd: number | null;
  /**
   * Everything the run spent, every invocation and attempt (retried and interrupted rollouts too): what --max-cost
   * limits.
   */
  spent_usd: number;
  /** Stored rollouts by where their cost came from (provider's usage.cost, the config's pricing, both, neither). */
  sources: { provider: number; pricing: number; mixed: number; unknown: number };
  /** Stored rollouts whose cost leaves out calls of a model with no known cost (their `usd` is partial or null). */
  rollouts_missing_price: number;
  /** Models called with no cost reported by the provider and no entry in `pricing:`. */
  unpriced_models: string[];
}

export interface FailureSummary {
  count: number;
  first_message: string;
  example_key: string;
}

/**
 * Statistics over everything the store holds, so they are cumulative across resumes by
 * construction. Aggregated inside SQLite over columns kept beside each record, so no record JSON is parsed.
 */
export function computeStatistics(store: RunStore, extraWallMs = 0, maxAttempts?: number): RunStatistics {
  const totals = store.aggregates(maxAttempts);
  const meta = store.meta();
  const byStatus = totals.byStatus;
  const recorded = (byStatus.done ?? 0) + (byStatus.discarded ?? 0);
  const tools = totals.tools.map((row) => ({ ...row, error_rate: row.calls ? round(row.errors / row.calls) : 0 }));
  const tokens = totals.tokens;
  const wallMs = totals.wallMs + extraWallMs;
  const finished = recorded + (byStatus.failed ?? 0);
  const byToolsets = totals.byToolsets.map((row) => ({
    toolsets: JSON.parse(row.toolsets) as string[],
    rollouts: row.rollouts,
    completed: row.completed ?? 0,
    completion_rate: row.rollouts ? round((row.completed ?? 0) / row.rollouts) : 0,
  }));
  const counters = store.counters();
  const scored = totals.scored;
  const total = Math.max(counters.dataset_rows ?? 0, totals.itemCount);
  return {
    run: meta?.name ?? '',
    model: (meta?.fingerprint_parts.model as string | undefined) ?? null,
    prompts: {
      total,
      done: byStatus.done ?? 0,
      discarded: byStatus.discarded ?? 0,
      failed: byStatus.failed ?? 0,
      // Rows a stopped run never read are not in the store, but they are still to do.
      pending: Math.max(byStatus.pending ?? 0, total - finished - totals.badRows),
      failed_by_class: totals.failedByClass,
      failed_by_code: totals.failedByCode,
      failures: Object.fromEntries(
        totals.failures.map((row) => [
          row.code,
          { count: row.count, first_message: row.message ?? '(no message)', example_key: row.example },
        ]),
      ),
      failed_for_good: totals.failedForGood,
      bad_rows: totals.badRows,
      bad_row_examples: totals.badRowExamples,
    },
    finish_reasons: totals.finishReasons,
    tools,
    reasoning_coverage: recorded ? round(totals.withReasoning / recorded) : 0,
    tokens: {
      ...tokens,
      total: tokens.prompt + tokens.completion,
      cost: tokens.cost === null ? null : round(tokens.cost, 1e8),
    },
    cost: {
      usd: tokens.cost === null ? null : round(tokens.cost, 1e8),
      spent_usd: round(store.spentUsd(), 1e8),
      sources: totals.cost.sources,
      rollouts_missing_price: totals.cost.missingPrice,
      unpriced_models: totals.cost.unpricedModels,
    },
    compressions: totals.compressions,
    wall_time_ms: wallMs,
    segments: totals.segments,
    rollouts_per_minute: wallMs > 0 ? round(finished / (wallMs / 60_000)) : 0,
    by_toolsets: byToolsets,
    toolset_drops: store.toolsetDrops(),
    rewards: { scored, mean: scored ? round(totals.rewardMean) : null, errors: totals.rewardErrors },
    web: {
      fetches: counters['web:fetches'] ?? 0,
      cache_hits: counters['web:cache_hits'] ?? 0,
      cached_entries: totals.webCacheEntries,
    },
    concurrency: {
      http_429: counters[RATE_LIMITED_COUNTER] ?? 0,
      http_503: counters[UNAVAILABLE_COUNTER] ?? 0,
      series: thinned(store.concurrencySeries(), SERIES_POINTS),
    },
    ...compressStatistics(store),
    generated_at: new Date().toISOString(),
  };
}

function compressStatistics(store: RunStore): Pick<RunStatistics, 'compress'> {
  const totals = store.shapingTotals();
  const settings = store.shapingSpec();
  return totals && settings ? { compress: { ...totals, settings } } : {};
}

/** Points of the concurrency series statistics.json keeps at most. */
export const SERIES_POINTS = 500;

/** Every k-th point, the last one kept, so a long run's series stays a few kilobytes. */
function thinned<T>(points: T[], limit: number): T[] {
  if (points.length <= limit) return points;
  const step = Math.ceil(points.length / limit);
  const kept = points.filter((_, index) => index % step === 0);
  if (kept.at(-1) !== points.at(-1)) kept.push(points.at(-1)!);
  return kept;
}

function round(value: number, scale = 10_000): number {
  return Math.round(value * scale) / scale;
}
