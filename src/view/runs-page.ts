import { escapeHtml, fixed } from '../report/html-parts.js';
import { cost, duration, layout, runPath } from './layout.js';
import type { RunSummary } from './run-reader.js';
import type { SessionListing } from './session-reader.js';

export type RunListing = { name: string; summary: RunSummary } | { name: string; error: string };

/** The start page: every run with its headline numbers, a compare form, the chat sessions. */
export function runsPage(
  runs: readonly RunListing[],
  sessions: readonly SessionListing[],
  sessionsPath: string,
): string {
  const rows = runs
    .map((run) => ('error' in run ? errorRow(run.name, run.error) : runRow(run.name, run.summary)))
    .join('\n');
  const options = (selected: number) =>
    runs
      .map(
        (run, index) =>
          `<option value="${escapeHtml(run.name)}"${index === selected ? ' selected' : ''}>${escapeHtml(run.name)}</option>`,
      )
      .join('');
  const compare =
    runs.length >= 2
      ? `<form class="filters" method="get" action="/compare" data-form="compare"><label>run A<select name="a">${options(1)}</select></label><label>run B<select name="b">${options(0)}</select></label><button type="submit">compare</button></form>`
      : '';
  const table =
    runs.length === 0
      ? '<p class="note">No run stores found. Run <code>traj batch</code> or <code>traj eval</code>, or name stores: <code>traj view RUN|FILE.sqlite</code>.</p>'
      : `<table class="runs"><thead><tr><th>run</th><th>kind</th><th>model</th><th>statuses</th><th>mean reward</th><th>pass rate</th><th>cost</th><th>tokens</th><th>duration</th><th>toolsets</th><th>updated</th></tr></thead><tbody>
${rows}
</tbody></table>`;
  return layout(
    'traj view · runs',
    `<h1>Runs</h1>${table}${compare ? `<h2>Compare two runs</h2>${compare}` : ''}
<h2>Chat sessions</h2>${sessionsTable(sessions, sessionsPath)}`,
  );
}

function runRow(name: string, summary: RunSummary): string {
  const counts = Object.entries(summary.statuses)
    .map(([status, count]) => `<span data-status="${escapeHtml(status)}">${escapeHtml(status)} ${count}</span>`)
    .join('');
  const pass =
    summary.pass_rate.value === null
      ? '–'
      : `${fixed(summary.pass_rate.value)} <span class="note">(≥ ${summary.pass_threshold}, n=${summary.pass_rate.n})</span>`;
  return `<tr data-run="${escapeHtml(name)}"><td><a href="${escapeHtml(runPath(name))}">${escapeHtml(name)}</a></td><td>${escapeHtml(summary.kind)}</td><td>${escapeHtml(summary.model ?? '–')}</td>
<td class="counts">${counts || '–'}</td><td class="number" data-field="mean-reward">${fixed(summary.mean_reward)}</td><td class="number" data-field="pass-rate">${pass}</td><td>${cost(summary.cost, summary.unpriced_models)}</td>
<td class="number" data-field="tokens">${summary.tokens.prompt + summary.tokens.completion}</td><td class="number">${duration(summary.wall_ms)}</td>
<td>${escapeHtml(summary.toolsets.join(', ') || '–')}</td><td>${escapeHtml(summary.updated_at ?? '–')}</td></tr>`;
}

function errorRow(name: string, error: string): string {
  return `<tr data-run="${escapeHtml(name)}" class="broken"><td>${escapeHtml(name)}</td><td colspan="10" class="note">${escapeHtml(error)}</td></tr>`;
}

function sessionsTable(sessions: readonly SessionListing[], path: string): string {
  if (sessions.length === 0) return `<p class="note">No chat sessions in ${escapeHtml(path)}.</p>`;
  const rows = sessions
    .map(
      (session) =>
        `<tr data-session="${escapeHtml(session.id)}"><td class="mono"><a href="/sessions/${encodeURIComponent(session.id)}">${escapeHtml(session.id)}</a></td><td>${escapeHtml(session.title ?? session.preview ?? '')}</td><td>${escapeHtml(session.model)}</td><td class="number">${session.messages}</td><td>${escapeHtml(session.toolsets.join(', '))}</td><td>${escapeHtml(session.updated_at)}</td></tr>`,
    )
    .join('\n');
  return `<table class="sessions"><thead><tr><th>session</th><th>title / first message</th><th>model</th><th>messages</th><th>toolsets</th><th>updated</th></tr></thead><tbody>
${rows}
</tbody></table>`;
}
