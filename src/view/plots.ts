import { escapeHtml } from '../report/html-parts.js';

/** Vertical-bar plots as inline SVG (no script): histograms and counts over time. */

export interface Column {
  label: string;
  count: number;
}

const WIDTH = 560;
const HEIGHT = 200;
const LEFT = 44;
const BOTTOM = 36;

/**
 * Columns with a count axis. Each bar is a <rect data-label data-count> so a test can read what
 * the plot shows; labels are thinned to fit.
 */
export function columnPlot(name: string, columns: readonly Column[], options: { xLabel: string }): string {
  if (columns.length === 0) return `<p class="note" data-plot-empty="${escapeHtml(name)}">no data yet</p>`;
  const max = Math.max(...columns.map((column) => column.count), 1);
  const plotWidth = WIDTH - LEFT - 10;
  const plotHeight = HEIGHT - BOTTOM - 10;
  const step = plotWidth / columns.length;
  const every = Math.max(1, Math.ceil(columns.length / 8));
  const bars = columns
    .map((column, index) => {
      const height = (column.count / max) * plotHeight;
      const x = LEFT + index * step;
      const label =
        index % every === 0
          ? `<text class="tick" x="${(x + step / 2).toFixed(1)}" y="${HEIGHT - BOTTOM + 14}" text-anchor="middle">${escapeHtml(column.label)}</text>`
          : '';
      return `<rect class="bar" data-label="${escapeHtml(column.label)}" data-count="${column.count}" x="${(x + 1).toFixed(1)}" y="${(10 + plotHeight - height).toFixed(1)}" width="${Math.max(1, step - 2).toFixed(1)}" height="${height.toFixed(1)}"><title>${escapeHtml(`${column.label}: ${column.count}`)}</title></rect>${label}`;
    })
    .join('');
  const axis = `<line class="grid" x1="${LEFT}" x2="${WIDTH - 10}" y1="${10 + plotHeight}" y2="${10 + plotHeight}"/><text class="tick" x="${LEFT - 6}" y="16" text-anchor="end">${max}</text><text class="tick" x="${LEFT - 6}" y="${10 + plotHeight}" text-anchor="end">0</text><text class="tick" x="${LEFT + plotWidth / 2}" y="${HEIGHT - 4}" text-anchor="middle">${escapeHtml(options.xLabel)}</text>`;
  return `<svg class="chart plot" data-plot="${escapeHtml(name)}" role="img" aria-label="${escapeHtml(name)}" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" xmlns="http://www.w3.org/2000/svg">${axis}${bars}</svg>`;
}

/** Values into `bins` equal-width bins from their minimum to their maximum. */
export function histogram(values: readonly number[], bins = 20, format: (value: number) => string = compact): Column[] {
  if (values.length === 0) return [];
  let low = Infinity;
  let high = -Infinity;
  for (const value of values) {
    if (value < low) low = value;
    if (value > high) high = value;
  }
  if (low === high) return [{ label: format(low), count: values.length }];
  const width = (high - low) / bins;
  const counts = new Array<number>(bins).fill(0);
  for (const value of values) counts[Math.min(bins - 1, Math.floor((value - low) / width))]!++;
  return counts.map((count, index) => ({ label: format(low + index * width), count }));
}

/** Weighted values (value, count) into bins: for distributions SQL already grouped. */
export function weightedHistogram(rows: readonly { value: number; count: number }[], bins = 20): Column[] {
  if (rows.length === 0) return [];
  const distinct = rows.length;
  if (distinct <= bins && rows.every((row) => Number.isInteger(row.value)))
    return rows.map((row) => ({ label: String(row.value), count: row.count }));
  const low = rows[0]!.value;
  const high = rows[rows.length - 1]!.value;
  if (low === high) return [{ label: compact(low), count: rows[0]!.count }];
  const width = (high - low) / bins;
  const counts = new Array<number>(bins).fill(0);
  for (const row of rows) counts[Math.min(bins - 1, Math.floor((row.value - low) / width))]! += row.count;
  return counts.map((count, index) => ({ label: compact(low + index * width), count }));
}

export function compact(value: number): string {
  if (Math.abs(value) >= 1_000_000) return `${(value / 1_000_000).toFixed(1)}M`;
  if (Math.abs(value) >= 10_000) return `${Math.round(value / 1000)}k`;
  if (Number.isInteger(value) || Math.abs(value) >= 100) return String(Math.round(value));
  return value.toFixed(2);
}
