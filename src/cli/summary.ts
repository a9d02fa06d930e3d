import type { RunStatistics } from '../run/run-statistics.js';
import { costText, usd } from '../util/cost-text.js';
import { table } from '../util/text-table.js';

export { table } from '../util/text-table.js';

/** The end-of-run summary: counts, tools, tokens, time; cumulative across resumes. */
export function formatStatistics(stats: RunStatistics): string {
  const p = stats.prompts;
  const parts = [
    table(
      ['prompts', 'total', 'done', 'discarded', 'failed', 'pending', 'bad rows'],
      [['', p.total, p.done, p.discarded, p.failed, p.pending, p.bad_rows]],
    ),
  ];
  if (stats.tools.length > 0) {
    parts.push(
      table(
        ['tool', 'calls', 'ok', 'errors', 'error rate'],
        stats.tools.map((tool) => [
          tool.name,
          tool.calls,
          tool.ok,
          tool.errors,
          `${(tool.error_rate * 100).toFixed(1)}%`,
        ]),
      ),
    );
  }
  if (stats.by_toolsets.length > 0) {
    parts.push(
      table(
        ['toolsets', 'rollouts', 'completed', 'rate'],
        stats.by_toolsets.map((row) => [
          row.toolsets.join('+') || '(none)',
          row.rollouts,
          row.completed,
          `${(row.completion_rate * 100).toFixed(1)}%`,
        ]),
      ),
    );
  }
  const failures = Object.entries(p.failures).map(
    ([code, failure]) => `  ${code} ×${failure.count} (e.g. ${failure.example_key}): ${failure.first_message}`,
  );
  const badRows = p.bad_row_examples.map((row) => `  line ${row.line}: ${row.reason}`);
  const drops = Object.entries(stats.toolset_drops)
    .map(([toolset, count]) => `${toolset} ×${count}`)
    .join(', ');
  parts.push(
    [
      `finish reasons: ${
        Object.entries(stats.finish_reasons)
          .map(([reason, count]) => `${reason} ${count}`)
          .join(', ') || '(none)'
      }`,
      `reasoning coverage: ${(stats.reasoning_coverage * 100).toFixed(1)}%`,
      `tokens: ${stats.tokens.prompt} prompt (${stats.tokens.cached} cached) + ${stats.tokens.completion} completion (${stats.tokens.reasoning} reasoning)`,
      ...costLines(stats.cost),
      `wall time: ${(stats.wall_time_ms / 1000).toFixed(1)} s over ${stats.segments} invocation(s), ${stats.rollouts_per_minute.toFixed(1)} rollouts/min`,
      ...(stats.rewards.scored > 0 || stats.rewards.errors > 0
        ? [
            `rewards: ${stats.rewards.scored} scored, mean ${stats.rewards.mean ?? '-'}, ${stats.rewards.errors} reward errors`,
          ]
        : []),
      ...(stats.concurrency.http_429 + stats.concurrency.http_503 > 0 ? [rateLimitLine(stats.concurrency)] : []),
      ...(stats.compressions.total > 0
        ? [`context compressions: ${stats.compressions.total} in ${stats.compressions.rollouts} rollout(s)`]
        : []),
      ...(stats.web.fetches + stats.web.cache_hits > 0
        ? [
            `web: ${stats.web.fetches} fetches, ${stats.web.cache_hits} served from the web cache (${stats.web.cached_entries} cached pages and searches)`,
          ]
        : []),
      ...(failures.length > 0
        ? [`failed (per code: count, an example prompt key, the first message):`, ...failures]
        : []),
      ...(badRows.length > 0
        ? [`bad rows (${p.bad_rows}${p.bad_rows > badRows.length ? `, first ${badRows.length}` : ''}):`, ...badRows]
        : []),
      ...(drops ? [`toolsets dropped as unavailable: ${drops}`] : []),
    ].join('\n'),
  );
  return parts.join('\n\n');
}

/**
 * The run's cost and where it came from; a model without a known cost is named, never counted as
 * 0 silently. Sources count stored rollouts.
 */
export function costLines(cost: RunStatistics['cost']): string[] {
  const sources = Object.entries(cost.sources)
    .filter(([source, count]) => count > 0 && source !== 'unknown')
    .map(([source, count]) => `${source === 'provider' ? 'provider-reported' : source} ×${count}`);
  const known = costText({ usd: cost.usd, unpricedModels: cost.unpriced_models });
  const from = sources.length > 0 ? ` (${sources.join(', ')})` : '';
  const spent =
    cost.spent_usd > (cost.usd ?? 0) + 1e-9
      ? ` · ${usd(cost.spent_usd)} spent in all (retried and cut-off attempts too)`
      : '';
  const lines = [`cost: ${known}${from}${spent}`];
  if (cost.unpriced_models.length > 0)
    lines.push(
      `  ${cost.rollouts_missing_price} rollout(s) have a partial or unknown cost: add ${cost.unpriced_models.join(', ')} under pricing: in the run config`,
    );
  return lines;
}

/** Only when the endpoint refused: how often, and where the adaptive level went (statistics.json has the series). */
function rateLimitLine(concurrency: RunStatistics['concurrency']): string {
  const levels = concurrency.series.map(([, level]) => level);
  const range =
    levels.length > 0
      ? `; adaptive level ${Math.min(...levels)}..${Math.max(...levels)}, at the end ${levels.at(-1)}`
      : '';
  return `rate limits: ${concurrency.http_429} × 429, ${concurrency.http_503} × 503 (all retried)${range}`;
}
