import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { table } from '../util/text-table.js';
import { formatEstimate, formatNumber } from './report-markdown.js';
import { EvalReportSchema, type EvalReport } from './report-schema.js';
import type { RunComparison } from './run-comparison.js';

/** A run's report.json: a run name (datasets/RUN/report.json), a run folder, or the file itself. */
export function readRunReport(reference: string): EvalReport {
  const candidates = [reference, join(reference, 'report.json'), join('datasets', reference, 'report.json')];
  const path = candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
  if (!path)
    throw new ConfigError(
      `no report for '${reference}': looked for ${candidates.join(', ')} (run traj bench/eval first, or pass the report's path)`,
      { code: 'report_missing' },
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`${path}: not JSON (${(error as Error).message})`, { code: 'report_invalid' });
  }
  const result = EvalReportSchema.safeParse(parsed);
  if (!result.success)
    throw new ConfigError(
      `${path}: not a traj report (${result.error.issues[0]?.path.join('.')}: ${result.error.issues[0]?.message})`,
      { code: 'report_invalid' },
    );
  return result.data;
}

function signed(value: number | null): string {
  if (value === null) return '–';
  return `${value > 0 ? '+' : ''}${value.toFixed(3)}`;
}

function formatDifference(difference: RunComparison['mean_reward']['difference']): string {
  if (difference.value === null) return '–';
  if (difference.low === null || difference.high === null) return signed(difference.value);
  return `${signed(difference.value)} [${signed(difference.low)}, ${signed(difference.high)}]`;
}

export function formatComparison(comparison: RunComparison): string {
  const who = (side: RunComparison['a']) =>
    `${side.run} (${side.model ?? 'unknown model'}${side.environment ? `, ${side.environment}` : ''})`;
  const changed = comparison.items.filter((item) => item.change !== 'same');
  const counts = ['fixed', 'regressed', 'better', 'worse', 'only_a', 'only_b'].map(
    (change) => `${change} ${comparison.items.filter((item) => item.change === change).length}`,
  );
  return [
    `A = ${who(comparison.a)}`,
    `B = ${who(comparison.b)}`,
    '',
    table(
      ['', 'A', 'B', 'B − A [95% CI]'],
      [
        [
          'pass rate',
          formatEstimate(comparison.pass_rate.a),
          formatEstimate(comparison.pass_rate.b),
          formatDifference(comparison.pass_rate.difference),
        ],
        [
          `mean reward (paired, ${comparison.mean_reward.shared_items} shared items)`,
          '',
          '',
          formatDifference(comparison.mean_reward.difference),
        ],
      ],
    ),
    'pass-rate CI: Newcombe hybrid score (Wilson) interval, runs treated as independent; mean-reward CI: paired Student-t over per-item differences.',
    '',
    changed.length === 0
      ? 'per item: no differences'
      : table(
          ['item', 'A reward', 'B reward', 'delta', 'A passed', 'B passed', 'change'],
          changed.map((item) => [
            item.key,
            formatNumber(item.a_reward),
            formatNumber(item.b_reward),
            signed(item.delta),
            item.a_passed,
            item.b_passed,
            item.change,
          ]),
        ),
    `items: ${comparison.items.length} (${counts.join(', ')}, same ${comparison.items.length - changed.length})`,
  ].join('\n');
}
