import { escapeHtml, fixed } from '../report/html-parts.js';
import { PAGE_SIZES, queryParameters } from './item-query.js';
import { cost, duration, href, layout, runPath } from './layout.js';
import type { Facets, ItemPage, ItemQuery, ItemRow, RunSummary, SortKey } from './run-reader.js';
import type { ServingStats } from './serving-reader.js';

export interface RunPageInput {
  name: string;
  summary: RunSummary;
  facets: Facets;
  query: ItemQuery;
  page: ItemPage;
  problems: string[];
  /** Milliseconds the page's queries took, shown in the footer. */
  queryMs: number;
}

/** One run: its numbers, the filter form, the sortable paged trajectory table. */
export function runPage(input: RunPageInput): string {
  const { name, summary, query, page } = input;
  const base = runPath(name);
  const pages = Math.max(1, Math.ceil(page.total / query.pageSize));
  const problems =
    input.problems.length > 0
      ? `<p class="check broken" data-problems>${input.problems.map(escapeHtml).join('<br>')}</p>`
      : '';
  return layout(
    `traj view · ${name}`,
    `<h1>${escapeHtml(name)} <small>${escapeHtml(headline(summary))}</small></h1>
${facts(summary)}
${summary.serving ? servingSection(summary.serving) : ''}
<p><a href="${escapeHtml(`${base}/plots`)}" data-link="plots">plots</a></p>
${filterForm(base, input.facets, query)}
${problems}
${pager(base, query, page, pages)}
${table(base, query, page.rows)}
${pager(base, query, page, pages)}
<footer>Queried in ${input.queryMs.toFixed(0)} ms from ${escapeHtml(summary.name)}'s run store (read-only).</footer>`,
    [[name, null]],
  );
}

function facts(summary: RunSummary): string {
  const counts = Object.entries(summary.statuses)
    .map(([status, count]) => `${escapeHtml(status)} ${count}`)
    .join(' · ');
  const list: [string, string][] = [
    ['rollouts', `${summary.total} (${counts || 'none'})`],
    ['mean reward', `${fixed(summary.mean_reward)} over ${summary.scored} scored`],
    [
      'pass rate',
      summary.pass_rate.value === null
        ? '–'
        : `${fixed(summary.pass_rate.value)} [${fixed(summary.pass_rate.low)}, ${fixed(summary.pass_rate.high)}] at ≥ ${summary.pass_threshold}`,
    ],
    ['tokens', `${summary.tokens.prompt} prompt + ${summary.tokens.completion} completion`],
    ['wall time', duration(summary.wall_ms)],
    ['rollout time', `${duration(summary.rollout_ms)} summed`],
  ];
  const items = list
    .map(
      ([label, value]) =>
        `<div><dt>${escapeHtml(label)}</dt><dd data-fact="${escapeHtml(label)}">${escapeHtml(value)}</dd></div>`,
    )
    .join('');
  return `<dl class="facts">${items}<div><dt>cost</dt><dd>${cost(summary.cost, summary.unpriced_models)}</dd></div></dl>`;
}

/** `traj serve`: how fast groups come, reward by the policy version that produced them, and staleness. */
function servingSection(serving: ServingStats): string {
  const statuses = Object.entries(serving.statuses)
    .map(([status, count]) => `${escapeHtml(status)} ${count}`)
    .join(' · ');
  const rate = `${serving.perMinuteRecent.toFixed(1)} in the last 10 min; ${serving.perMinuteOverall === null ? '–' : serving.perMinuteOverall.toFixed(1)} over the run`;
  const versions = serving.byVersion
    .map(
      (row) =>
        `<tr data-version="${row.version}"><td>${row.version}</td><td>${row.groups}</td><td>${fixed(row.mean_reward)}</td><td>${row.stale}</td></tr>`,
    )
    .join('');
  const staleness = serving.staleness.map((row) => `${row.behind ?? '?'} behind: ${row.groups}`).join(' · ');
  return `<section data-serving><h2>serving</h2>
<dl class="facts"><div><dt>groups</dt><dd data-fact="groups">${statuses}</dd></div><div><dt>groups per minute</dt><dd data-fact="groups per minute">${escapeHtml(rate)}</dd></div><div><dt>policy version</dt><dd data-fact="policy version">${serving.currentVersion ?? '–'}</dd></div><div><dt>staleness at delivery</dt><dd data-fact="staleness">${escapeHtml(staleness || '–')}</dd></div></dl>
<table><thead><tr><th>policy version</th><th>groups</th><th>mean reward</th><th>dropped stale</th></tr></thead><tbody>${versions}</tbody></table></section>`;
}

function select(
  name: string,
  label: string,
  current: string | undefined,
  options: readonly [string, string][],
): string {
  const list = [['', 'any'] as [string, string], ...options]
    .map(
      ([value, text]) =>
        `<option value="${escapeHtml(value)}"${value === (current ?? '') ? ' selected' : ''}>${escapeHtml(text)}</option>`,
    )
    .join('');
  return `<label>${escapeHtml(label)}<select name="${name}">${list}</select></label>`;
}

function filterForm(base: string, facets: Facets, query: ItemQuery): string {
  const counted = (rows: [string, number][]) =>
    rows.map(([value, count]) => [value, `${value} (${count})`] as [string, string]);
  const combinations = facets.toolsetCombinations.map(
    ([json, count]) => [json, `${parseNames(json).join('+') || '(none)'} (${count})`] as [string, string],
  );
  return `<form class="filters" method="get" action="${escapeHtml(base)}" data-form="filters">
${select('status', 'status', query.status, counted(facets.statuses))}
${select('finish', 'finish reason', query.finish, counted(facets.finishReasons))}
${select('toolsets', 'toolset combination', query.toolsets, combinations)}
${select(
  'toolset',
  'includes toolset',
  query.toolset,
  facets.toolsets.map((name) => [name, name]),
)}
${select('error', 'error class', query.errorClass, [...counted(facets.errorClasses), ['(none)', '(none)']])}
<label>reward ≥<input type="number" step="any" name="min" value="${query.rewardMin ?? ''}"></label>
<label>reward ≤<input type="number" step="any" name="max" value="${query.rewardMax ?? ''}"></label>
<label>search messages<input type="search" name="q" value="${escapeHtml(query.search ?? '')}" placeholder="text in any message"></label>
${select(
  'size',
  'per page',
  String(query.pageSize),
  PAGE_SIZES.map((size) => [String(size), String(size)]),
)}
<input type="hidden" name="sort" value="${query.sort}">${query.descending ? '<input type="hidden" name="order" value="desc">' : ''}
<button type="submit">apply</button> <a href="${escapeHtml(base)}">clear</a>
</form>`;
}

function pager(base: string, query: ItemQuery, page: ItemPage, pages: number): string {
  const at = (number: number) => href(base, { ...queryParameters(query), page: number === 1 ? undefined : number });
  const first = (query.page - 1) * query.pageSize + 1;
  const last = (query.page - 1) * query.pageSize + page.rows.length;
  const total = String(page.total);
  const previous =
    query.page > 1 ? `<a href="${escapeHtml(at(query.page - 1))}" data-link="previous">← previous</a>` : '';
  const next = query.page < pages ? `<a href="${escapeHtml(at(query.page + 1))}" data-link="next">next →</a>` : '';
  const shown = page.rows.length === 0 ? `0 of ${total}` : `${first}–${last} of ${total}`;
  return `<div class="pager"><span data-field="shown">${shown}</span>${previous}${next}<span>page ${query.page} of ${pages}</span></div>`;
}

const COLUMNS: [string, SortKey | null][] = [
  ['item', 'key'],
  ['sample', null],
  ['row', 'row'],
  ['status', null],
  ['finish', null],
  ['reward', 'reward'],
  ['turns', null],
  ['tokens', 'tokens'],
  ['duration', 'duration'],
  ['attempts', 'attempts'],
  ['toolsets', null],
  ['error', null],
  ['updated', 'updated'],
];

function table(base: string, query: ItemQuery, rows: readonly ItemRow[]): string {
  const header = COLUMNS.map(([label, sort]) => {
    if (sort === null) return `<th>${label}</th>`;
    const active = query.sort === sort;
    const descending = active ? !query.descending : sort === 'reward' || sort === 'duration' || sort === 'tokens';
    const link = href(base, {
      ...queryParameters(query),
      sort: sort === 'row' ? undefined : sort,
      order: descending ? 'desc' : undefined,
      page: undefined,
    });
    return `<th><a href="${escapeHtml(link)}" data-sort="${sort}"${active ? ' class="active"' : ''}>${label}${active ? (query.descending ? ' ↓' : ' ↑') : ''}</a></th>`;
  }).join('');
  if (rows.length === 0)
    return `<table class="items"><thead><tr>${header}</tr></thead></table><p class="note" data-empty>No rollouts match.</p>`;
  const body = rows
    .map((row) => {
      const link = href(`${base}/item`, { key: row.key, sample: row.sample });
      const error = row.error_class ? `${row.error_class}${row.error_code ? `: ${row.error_code}` : ''}` : '';
      return `<tr data-key="${escapeHtml(row.key)}" data-sample="${row.sample}"><td class="mono"><a href="${escapeHtml(link)}">${escapeHtml(shorten(row.key))}</a></td><td class="number">${row.sample}</td><td class="number">${row.row_index ?? '–'}</td>
<td><span class="status ${escapeHtml(row.status)}" data-field="status">${escapeHtml(row.status)}</span></td><td data-field="finish">${escapeHtml(row.finish_reason ?? '–')}</td>
<td class="number" data-field="reward">${fixed(row.reward)}</td><td class="number" data-field="turns">${row.turns ?? '–'}</td><td class="number" data-field="tokens">${row.tokens ?? '–'}</td>
<td class="number" data-field="duration">${duration(row.duration_ms)}</td><td class="number">${row.attempts}</td><td data-field="toolsets">${escapeHtml(row.toolsets.join('+'))}</td>
<td data-field="error" title="${escapeHtml(row.error_message ?? '')}">${escapeHtml(error)}</td><td>${escapeHtml(row.updated_at.slice(0, 19))}</td></tr>`;
    })
    .join('\n');
  return `<table class="items"><thead><tr>${header}</tr></thead><tbody>
${body}
</tbody></table>`;
}

function shorten(key: string): string {
  return key.length > 40 ? `${key.slice(0, 20)}…${key.slice(-12)}` : key;
}

function parseNames(json: string): string[] {
  try {
    const value = JSON.parse(json) as unknown;
    return Array.isArray(value) ? value.map(String) : [];
  } catch {
    return [];
  }
}

/** Kind, model, then the environment (eval, bench) or the number of prompts (batch). */
function headline(summary: RunSummary): string {
  const what =
    summary.environment ??
    (summary.kind === 'batch' ? `${summary.total} prompt${summary.total === 1 ? '' : 's'}` : null);
  return [summary.kind, summary.model ?? 'unknown model', ...(what ? [what] : [])].join(' · ');
}
