import { BREAKDOWN_HEADERS, breakdownCells, formatCost, formatNumber } from '../report/report-markdown.js';
import type { EvalReport } from '../report/report-schema.js';
import { table } from './summary.js';

/** The end-of-eval table: the whole run, then per category and per toolsets when there is more than one. */
export function formatEvalSummary(report: EvalReport): string {
  const { summary } = report;
  const environment = report.environment ? `${report.environment.name} ${report.environment.version}` : 'environment';
  const parts = [
    `${environment} · run ${report.run} · model ${report.model ?? 'unknown'} · pass threshold ${report.pass_threshold}`,
    table(['', ...BREAKDOWN_HEADERS, 'failed'], [['all', ...breakdownCells(summary), summary.failed]]),
  ];
  if (report.by_category.length > 1)
    parts.push(
      table(
        ['category', ...BREAKDOWN_HEADERS],
        report.by_category.map((row) => [row.category, ...breakdownCells(row)]),
      ),
    );
  if (report.by_toolsets.length > 1)
    parts.push(
      table(
        ['toolsets', ...BREAKDOWN_HEADERS],
        report.by_toolsets.map((row) => [row.toolsets.join('+') || '(none)', ...breakdownCells(row)]),
      ),
    );
  const notes = [`tokens: ${summary.tokens.prompt} prompt + ${summary.tokens.completion} completion`];
  if (summary.cost) notes.push(`cost: ${formatCost(summary.cost)} (agent, auxiliary models and judges)`);
  if (summary.judged > 0)
    notes.push(
      `judge agreement: ${formatNumber(summary.judge_agreement)} over ${summary.judged} panel-graded rollouts`,
    );
  if (summary.reward_errors > 0) {
    const first = report.items.find((item) => item.reward_error !== null)!;
    notes.push(
      `reward errors: ${summary.reward_errors} (reward null, not 0), e.g. ${first.key}#${first.sample}: ${first.reward_error}`,
    );
  }
  parts.push(notes.join('\n'));
  return parts.join('\n\n');
}
