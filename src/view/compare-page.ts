import { wilsonInterval } from '../eval/metrics.js';
import { escapeHtml, fixed } from '../report/html-parts.js';
import { compareRuns, type Difference, type RunComparison } from '../report/run-comparison.js';
import type { EvalReport, ReportItem } from '../report/report-schema.js';
import { layout, runPath } from './layout.js';
import type { RunReader } from './run-reader.js';
import { itemHref } from './trajectory-page.js';

/** Tolerance of the pass test, as in report.ts: float noise must not decide a pass. */
const PASS_TOLERANCE = 1e-9;

/**
 * The report `bench compare` reads, built from the store's columns instead of report.json:
 * enough for compareRuns (items, pass rate), without parsing a record.
 */
export function reportFromStore(name: string, reader: RunReader): EvalReport {
  return reader.memo(`compare-report:${name}`, () => buildReport(name, reader));
}

function buildReport(name: string, reader: RunReader): EvalReport {
  const info = reader.runInfo();
  const threshold = reader.passThreshold();
  const items: ReportItem[] = [];
  for (const row of reader.outcomes()) {
    items.push({
      key: row.key,
      sample: row.sample,
      group: null,
      category: null,
      toolsets: [],
      reward: row.reward,
      passed: row.reward === null ? null : row.reward >= threshold - PASS_TOLERANCE,
      advantage: null,
      finish_reason: row.finish_reason,
      turns: 0,
      tokens: row.tokens,
      duration_ms: row.duration_ms,
      reward_error: null,
      details: null,
    });
  }
  // compareRuns reads the pass rate of the summary; the rest of a report's breakdown is not needed here.
  const scored = items.filter((item) => item.reward !== null);
  const passRate = wilsonInterval(scored.filter((item) => item.passed).length, scored.length);
  const summary = {
    rollouts: items.length,
    items: new Set(items.map((item) => item.key)).size,
    scored: scored.length,
    mean_reward: { value: null, low: null, high: null, n: 0 },
    pass_rate: passRate,
    pass_at_k: {},
    reward_errors: 0,
  };
  return {
    run: info.name ?? name,
    environment: info.environment,
    model: info.model,
    pass_threshold: threshold,
    summary: {
      ...summary,
      samples_per_item: 0,
      failed: 0,
      judged: 0,
      judge_agreement: null,
      tokens: { prompt: 0, completion: 0 },
    },
    by_category: [],
    by_toolsets: [],
    items,
    generated_at: new Date().toISOString(),
  };
}

/** Rows of the items table: a 100,000-item comparison lists its most changed items. */
const MAX_ROWS = 500;
const CHANGE_ORDER: Record<string, number> = {
  regressed: 0,
  fixed: 1,
  worse: 2,
  better: 3,
  only_a: 4,
  only_b: 5,
  same: 6,
};

function byInterest(a: RunComparison['items'][number], b: RunComparison['items'][number]): number {
  return (
    CHANGE_ORDER[a.change]! - CHANGE_ORDER[b.change]! ||
    Math.abs(b.delta ?? 0) - Math.abs(a.delta ?? 0) ||
    a.key.localeCompare(b.key)
  );
}

function signed(value: number | null): string {
  return value === null ? '–' : `${value >= 0 ? '+' : ''}${value.toFixed(3)}`;
}

function difference(name: string, value: Difference): string {
  const interval =
    value.low === null || value.high === null ? 'no interval' : `95% CI [${signed(value.low)}, ${signed(value.high)}]`;
  return `<span class="value" data-metric="${name}" data-value="${value.value ?? ''}">${signed(value.value)}</span><span class="ci" data-metric="${name}_ci">${interval}</span>`;
}

/** Two runs over the same items: the statistics of `traj bench compare`, and each item's change. */
export function comparePage(names: { a: string; b: string }, comparison: RunComparison): string {
  const counts = new Map<string, number>();
  for (const item of comparison.items) counts.set(item.change, (counts.get(item.change) ?? 0) + 1);
  const shown = [...comparison.items].sort(byInterest).slice(0, MAX_ROWS);
  const rows = shown
    .map(
      (item) =>
        `<tr data-compare-key="${escapeHtml(item.key)}"><td class="mono">${escapeHtml(item.key)}</td><td class="number">${fixed(item.a_reward)}</td><td class="number">${fixed(item.b_reward)}</td><td class="number">${signed(item.delta)}</td><td>${escapeHtml(item.a_passed)}</td><td>${escapeHtml(item.b_passed)}</td><td class="change ${item.change}" data-field="change">${item.change}</td>
<td>${item.change === 'only_b' ? '' : `<a href="${escapeHtml(itemHref(names.a, item.key, 0))}">A</a>`} ${item.change === 'only_a' ? '' : `<a href="${escapeHtml(itemHref(names.b, item.key, 0))}">B</a>`}</td></tr>`,
    )
    .join('\n');
  const side = (label: string, run: RunComparison['a'], name: string) =>
    `<div><dt>${label}</dt><dd data-fact="${label}"><a href="${escapeHtml(runPath(name))}">${escapeHtml(name)}</a> (${escapeHtml(run.model ?? 'unknown model')}${run.environment ? `, ${escapeHtml(run.environment)}` : ''})</dd></div>`;
  const summary = [...counts.entries()].map(([change, count]) => `${change} ${count}`).join(' · ');
  return layout(
    `traj view · compare ${names.a} vs ${names.b}`,
    `<h1>Compare <small>B − A</small></h1>
<dl class="facts">${side('A', comparison.a, names.a)}${side('B', comparison.b, names.b)}</dl>
<div class="cards">
<div class="card"><div class="label">pass rate A</div><div class="body"><span class="value" data-metric="pass_rate_a">${fixed(comparison.pass_rate.a.value)}</span></div><div class="note">n=${comparison.pass_rate.a.n}</div></div>
<div class="card"><div class="label">pass rate B</div><div class="body"><span class="value" data-metric="pass_rate_b">${fixed(comparison.pass_rate.b.value)}</span></div><div class="note">n=${comparison.pass_rate.b.n}</div></div>
<div class="card"><div class="label">pass rate B − A</div><div class="body">${difference('pass_rate_difference', comparison.pass_rate.difference)}</div><div class="note">Newcombe hybrid score interval</div></div>
<div class="card"><div class="label">mean reward B − A</div><div class="body">${difference('mean_reward_difference', comparison.mean_reward.difference)}</div><div class="note">paired over ${comparison.mean_reward.shared_items} shared items, Student-t</div></div>
</div>
<h2>Items <small class="note" data-field="changes">${escapeHtml(summary)}</small></h2>
${shown.length < comparison.items.length ? `<p class="note">The ${shown.length} most changed of ${comparison.items.length} items: fixed and regressed first, then by the size of the change.</p>` : ''}
<table class="items"><thead><tr><th>item</th><th>A reward</th><th>B reward</th><th>Δ</th><th>A passed</th><th>B passed</th><th>change</th><th>open</th></tr></thead><tbody>
${rows}
</tbody></table>`,
    [[`compare ${names.a} · ${names.b}`, null]],
  );
}

export function compareStores(names: { a: string; b: string }, a: RunReader, b: RunReader): RunComparison {
  return compareRuns(reportFromStore(names.a, a), reportFromStore(names.b, b));
}
