import { escapeHtml, STYLE } from '../report/html-parts.js';
import { COST_NONE, costText } from '../util/cost-text.js';

/** The page shell: one stylesheet from the viewer itself, no scripts, nothing from the network. */
export function layout(title: string, body: string, crumbs: [string, string | null][] = []): string {
  const trail = [['runs', '/'] as [string, string | null], ...crumbs]
    .map(([text, href]) =>
      href === null ? `<span>${escapeHtml(text)}</span>` : `<a href="${escapeHtml(href)}">${escapeHtml(text)}</a>`,
    )
    .join(' <span class="sep">/</span> ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/assets/view.css">
</head>
<body>
<nav class="crumbs">traj view · ${trail}</nav>
<main>
${body}
</main>
</body>
</html>
`;
}

/** A link with query parameters (values escaped for the URL and the attribute). */
export function href(path: string, parameters: Record<string, string | number | undefined | null> = {}): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters))
    if (value !== undefined && value !== null && value !== '') query.set(name, String(value));
  const text = query.toString();
  return `${path}${text ? `?${text}` : ''}`;
}

export function runPath(name: string): string {
  return `/runs/${encodeURIComponent(name)}`;
}

export function duration(ms: number | null): string {
  if (ms === null) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 7_200_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/** What pages show where a cost would be when the store (or an older record) records none. */
export const COST_NOT_RECORDED = `<span class="cost missing" data-field="cost" title="this run store records no cost">${COST_NONE}</span>`;

/** A cost in the one cost format (util/cost-text.ts): calls of a model with no known price are said, never shown as $0. */
export function cost(value: number | null | undefined, unpriced: readonly string[] = []): string {
  const text = escapeHtml(costText({ usd: value, unpricedModels: unpriced }));
  if (unpriced.length > 0) {
    const why = `no price known for ${unpriced.join(', ')}`;
    return `<span class="cost missing" data-field="cost" data-value="${value ? value : ''}" title="${escapeHtml(why)}">${text}</span>`;
  }
  if (value === null || value === undefined) return COST_NOT_RECORDED;
  return `<span class="cost" data-field="cost" data-value="${value}">${text}</span>`;
}

/** The viewer's stylesheet: the report's, plus the table, form and navigation rules of the app. */
export const VIEW_STYLE = `${STYLE}
main { max-width: 1320px; }
nav.crumbs { padding: 10px 28px; background: var(--panel); border-bottom: 1px solid var(--line); font-size: 13px; color: var(--muted); }
nav.crumbs a { color: var(--accent); text-decoration: none; } nav.crumbs .sep { color: var(--line); }
a { color: var(--accent); }
form.filters { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: end; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; margin: 10px 0; }
form.filters label { display: flex; flex-direction: column; font-size: 11px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; gap: 2px; }
form.filters input, form.filters select { font: 13px system-ui, sans-serif; padding: 4px 6px; border: 1px solid var(--line); border-radius: 5px; background: #fff; }
form.filters input[type=number] { width: 80px; } form.filters input[type=search] { width: 220px; }
button { font: 13px system-ui, sans-serif; padding: 5px 12px; border-radius: 5px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
th a { color: var(--ink); text-decoration: none; } th a.active { color: var(--accent); }
.pager { display: flex; gap: 12px; align-items: center; margin: 10px 0; color: var(--muted); font-size: 13px; }
.status.done { background: var(--pass); } .status.pending { background: var(--muted); } .status.discarded { background: var(--warn); }
.status.stop { background: var(--pass); }
.counts span { margin-right: 10px; white-space: nowrap; }
.fork { font: 12px ui-monospace, Menlo, monospace; background: #1d2330; color: #fff; padding: 8px 10px; border-radius: 6px; user-select: all; }
.cost.missing { color: var(--muted); font-style: italic; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(580px, 1fr)); gap: 10px 24px; }
.plot rect.bar { fill: var(--accent); }
.judge { border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; margin: 6px 0; }
.judge .verdict.pass { color: var(--pass); font-weight: 600; } .judge .verdict.fail { color: var(--fail); font-weight: 600; }
.change.fixed, .change.better { color: var(--pass); font-weight: 600; } .change.regressed, .change.worse { color: var(--fail); font-weight: 600; }
td.mono { font: 12px ui-monospace, Menlo, monospace; }
`;
