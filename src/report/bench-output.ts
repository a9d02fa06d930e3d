import type { RunStore } from '../run/store.js';
import type { BenchSuite } from './bench-suite.js';
import type { BrokenItem, FailedRollout, ReferenceCheck } from './reference-check.js';
import type { TranscriptRecord } from './report-html.js';
import { formatEstimate, formatNumber, formatPassAtK } from './report-markdown.js';
import type { EvalReport } from './report-schema.js';

// What `traj bench` prints and appends for a suite: its headline metrics and the reference agent's validation.

/** The suite's headline metrics, in the order the suite lists them. */
export function headline(suite: BenchSuite, report: EvalReport): string {
  const { summary } = report;
  const parts = suite.metrics.map((metric) => {
    switch (metric) {
      case 'pass_rate':
        return `pass rate ${formatEstimate(summary.pass_rate)}`;
      case 'mean_reward':
        return `mean reward ${formatEstimate(summary.mean_reward)}`;
      case 'pass_at_k':
        return formatPassAtK(summary.pass_at_k);
      case 'reward_errors':
        return `reward errors ${summary.reward_errors}`;
    }
  });
  return `headline: ${parts.join(' · ')}`;
}

/** Failed rollouts of a run, for the reference check. */
export function failedRollouts(store: RunStore): FailedRollout[] {
  return [...store.items({ status: 'failed' })].map((row) => ({
    key: row.key,
    sample: row.sample,
    message: row.error_message ?? row.error_code ?? 'failed',
  }));
}

export function* transcripts(store: RunStore): Generator<TranscriptRecord> {
  for (const row of store.items({ status: ['done', 'discarded'] }))
    if (row.record) yield JSON.parse(row.record) as TranscriptRecord;
}

export function validationLines(check: ReferenceCheck): string[] {
  const expected = formatNumber(check.expected_reward, 1);
  const flaky =
    check.flaky.length === 0
      ? []
      : [
          `validation (${check.agent} agent): ${check.flaky.length} FLAKY (wrong in the run, ${expected} when run again alone):`,
          ...check.flaky.map((item) => `  ${item.key}#${item.sample}: ${item.reason}`),
        ];
  if (check.broken.length === 0) {
    const good = check.checked - check.flaky.length;
    return [
      `validation (${check.agent} agent): ${check.flaky.length === 0 ? `all ${check.checked}` : `${good} of ${check.checked}`} rollouts scored ${expected} as they must`,
      ...flaky,
    ];
  }
  return [
    `validation (${check.agent} agent): ${check.broken.length} BROKEN of ${check.checked} (every rollout must score ${expected}):`,
    ...check.broken.map((item) => `  ${item.key}#${item.sample}: ${item.reason}`),
    ...flaky,
  ];
}

export function validationMarkdown(check: ReferenceCheck): string {
  const table = (items: readonly BrokenItem[]) =>
    `| item | sample | reward | why |\n| --- | --- | --- | --- |\n${items.map((item) => `| ${item.key} | ${item.sample} | ${formatNumber(item.reward)} | ${item.reason.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`).join('\n')}\n`;
  const body =
    check.broken.length === 0
      ? `${check.flaky.length === 0 ? `All ${check.checked}` : `${check.checked - check.flaky.length} of ${check.checked}`} rollouts scored ${check.expected_reward} as they must.\n`
      : `${check.broken.length} broken of ${check.checked} (every rollout must score ${check.expected_reward}):\n\n${table(check.broken)}`;
  const flaky =
    check.flaky.length === 0
      ? ''
      : `\n${check.flaky.length} flaky (wrong in the run, ${check.expected_reward} when run again alone):\n\n${table(check.flaky)}`;
  return `\n## Validation with the ${check.agent} agent\n\n${body}${flaky}`;
}
