import { barChart, escapeHtml, fixed } from '../report/html-parts.js';
import { layout, runPath } from './layout.js';
import { columnPlot, compact, histogram, weightedHistogram } from './plots.js';
import { TURNS_SAMPLE, type RunPlots } from './run-reader.js';

/** A run's distributions and breakdowns, each an inline SVG computed from SQL aggregates. */
export function plotsPage(name: string, plots: RunPlots): string {
  const completion = plots.completionByToolsets.map((row) => {
    const share = row.rollouts === 0 ? 0 : row.completed / row.rollouts;
    const label = row.toolsets.join('+') || '(none)';
    return {
      label,
      share,
      figure: `${fixed(share)} · ${row.completed}/${row.rollouts}`,
      attributes: { 'data-toolsets': label, 'data-completion': String(share) },
    };
  });
  const mostFailures = Math.max(1, ...plots.failures.map((row) => row.count));
  const failures = plots.failures.map((row) => ({
    label: row.label,
    share: row.count / mostFailures,
    figure: String(row.count),
    attributes: { 'data-failure': row.label, 'data-count': String(row.count) },
  }));
  const width = plots.throughput.bucketSeconds;
  const unit = width >= 3_600 ? (['h', 3_600] as const) : width >= 60 ? (['min', 60] as const) : (['s', 1] as const);
  const throughput = plots.throughput.buckets.map((row) => ({
    label: `+${row.offsetSeconds / unit[1]}${unit[0]}`,
    count: row.done,
  }));
  const section = (title: string, note: string, body: string) =>
    `<section><h2>${escapeHtml(title)}</h2><p class="note">${escapeHtml(note)}</p>${body}</section>`;
  const turnsTotal = plots.turns.reduce((sum, row) => sum + row.count, 0);
  return layout(
    `traj view · ${name} · plots`,
    `<h1>${escapeHtml(name)} <small>plots</small></h1>
<div class="plots">
${section('Reward', 'finished rollouts with a numeric reward', columnPlot('reward', weightedHistogram(plots.rewards), { xLabel: 'reward' }))}
${section('Turns', `model turns per finished rollout${turnsTotal >= TURNS_SAMPLE ? ` (the newest ${TURNS_SAMPLE.toLocaleString('en-US')})` : ''}`, columnPlot('turns', weightedHistogram(plots.turns), { xLabel: 'turns' }))}
${section('Tokens', 'prompt + completion tokens per finished rollout', columnPlot('tokens', histogram(plots.tokens), { xLabel: 'tokens' }))}
${section(
  'Duration',
  'seconds per finished rollout',
  columnPlot(
    'duration',
    histogram(
      plots.durations.map((ms) => ms / 1000),
      20,
      compact,
    ),
    { xLabel: 'seconds' },
  ),
)}
${section('Throughput', `finished rollouts per ${width / unit[1]} ${unit[0]} since the first`, columnPlot('throughput', throughput, { xLabel: 'time since the first finished rollout' }))}
</div>
${section('Completion by toolset combination', 'share of finished rollouts that ended on their own (finish reason stop)', completion.length ? barChart(completion, { ariaLabel: 'completion rate per toolset combination' }) : '<p class="note">no data yet</p>')}
${section('Failures by class', 'failed and discarded rollouts by error class and code; finished rollouts that did not stop on their own by finish reason', failures.length ? barChart(failures, { ariaLabel: 'failures by class', axisMax: mostFailures }) : '<p class="note" data-plot-empty="failures">no failures</p>')}`,
    [
      [name, runPath(name)],
      ['plots', null],
    ],
  );
}
