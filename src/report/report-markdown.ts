import { costText } from '../util/cost-text.js';
import type { Breakdown, EvalReport, ReportCost, ReportItem } from './report-schema.js';

/** Rows of the "not passed" table in report.md; report.json always has every item. */
const MAX_LISTED_ITEMS = 50;

export function formatNumber(value: number | null, digits = 3): string {
  return value === null ? '–' : value.toFixed(digits);
}

/** "0.800 [0.490, 0.943]" or "0.800" when there is no interval. */
export function formatEstimate(estimate: Breakdown['mean_reward']): string {
  if (estimate.value === null) return '–';
  if (estimate.low === null || estimate.high === null) return formatNumber(estimate.value);
  return `${formatNumber(estimate.value)} [${formatNumber(estimate.low)}, ${formatNumber(estimate.high)}]`;
}

export function formatPassAtK(passAtK: Record<string, number>): string {
  return (
    Object.entries(passAtK)
      .map(([k, value]) => `pass@${k} ${formatNumber(value)}`)
      .join(', ') || '–'
  );
}

function markdownTable(headers: string[], rows: (string | number)[][]): string {
  const escapeCell = (cell: string | number) => String(cell).replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return [
    `| ${headers.join(' | ')} |`,
    `| ${headers.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(escapeCell).join(' | ')} |`),
  ].join('\n');
}

/** The columns of one breakdown row, shared by report.md and the terminal summary. */
export const BREAKDOWN_HEADERS = [
  'rollouts',
  'items',
  'mean reward [95% CI]',
  'pass rate [95% CI]',
  'pass@k',
  'reward errors',
];

export function breakdownCells(row: Breakdown): (string | number)[] {
  return [
    row.rollouts,
    row.items,
    formatEstimate(row.mean_reward),
    formatEstimate(row.pass_rate),
    formatPassAtK(row.pass_at_k),
    row.reward_errors,
  ];
}

function shortDetails(item: ReportItem): string {
  const text =
    item.reward_error ?? (item.details === null || item.details === undefined ? '' : JSON.stringify(item.details));
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}

/** A report's cost in the one cost format (util/cost-text.ts). */
export function formatCost(cost: ReportCost): string {
  return costText({ usd: cost.usd, unpricedModels: cost.unpriced_models });
}

/** The human-readable report: summary, breakdowns, and the items that did not pass. */
export function formatReportMarkdown(report: EvalReport): string {
  const { summary } = report;
  const environment = report.environment ? `${report.environment.name} ${report.environment.version}` : '(none)';
  const notPassed = report.items.filter((item) => item.passed !== true);
  const sections = [
    `# Eval report: ${report.run}`,
    `Environment **${environment}**, model **${report.model ?? 'unknown'}**, ${summary.items} items × up to ${summary.samples_per_item} samples, pass threshold ${report.pass_threshold}. Generated ${report.generated_at}.`,
    '## Summary',
    markdownTable(
      [...BREAKDOWN_HEADERS, 'failed (infra)', 'judge agreement'],
      [
        [
          ...breakdownCells(summary),
          summary.failed,
          summary.judged > 0 ? `${formatNumber(summary.judge_agreement)} over ${summary.judged}` : '–',
        ],
      ],
    ),
    `Tokens: ${summary.tokens.prompt} prompt + ${summary.tokens.completion} completion. ${summary.cost ? `Cost: ${formatCost(summary.cost)}. ` : ''}Mean reward: mean of per-item means, Student-t interval over items; pass rate: Wilson interval over scored rollouts; pass@k: unbiased estimator (Chen et al. 2021).`,
  ];
  if (report.by_category.length > 1 || report.by_category[0]?.category !== '(none)') {
    sections.push(
      '## By category',
      markdownTable(
        ['category', ...BREAKDOWN_HEADERS],
        report.by_category.map((row) => [row.category, ...breakdownCells(row)]),
      ),
    );
  }
  sections.push(
    '## By toolsets',
    markdownTable(
      ['toolsets', ...BREAKDOWN_HEADERS],
      report.by_toolsets.map((row) => [row.toolsets.join('+') || '(none)', ...breakdownCells(row)]),
    ),
  );
  if (notPassed.length > 0) {
    const listed = notPassed.slice(0, MAX_LISTED_ITEMS);
    sections.push(
      `## Not passed (${notPassed.length}${notPassed.length > listed.length ? `, first ${listed.length} shown; all in report.json` : ''})`,
      markdownTable(
        ['key', 'sample', 'reward', 'finish', 'turns', 'reward error / details'],
        listed.map((item) => [
          item.key,
          item.sample,
          formatNumber(item.reward),
          item.finish_reason,
          item.turns,
          shortDetails(item),
        ]),
      ),
    );
  }
  return `${sections.join('\n\n')}\n`;
}
