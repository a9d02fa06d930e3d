import { contentText, type Message } from '../model/messages.js';
import type { Breakdown } from './report-schema.js';

/**
 * The HTML pieces the bench report (report.html) and the viewer (`traj view`) both draw with:
 * escaping, numbers with their raw values, cards, bar charts, messages, reward evidence and the
 * stylesheet. One copy, so a fix to escaping or to how a tool call looks reaches both.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Every piece of text that reaches a page goes through this: model output is untrusted. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character]!);
}

export function fixed(value: number | null, digits = 3): string {
  return value === null ? '–' : value.toFixed(digits);
}

/** A number with its raw value in data-value, so a test (or a script) can read what the page shows. */
export function metric(name: string, value: number | null, text = fixed(value)): string {
  return `<span class="value" data-metric="${escapeHtml(name)}" data-value="${value === null ? '' : String(value)}">${escapeHtml(text)}</span>`;
}

export function interval(name: string, estimate: Breakdown['mean_reward']): string {
  if (estimate.low === null || estimate.high === null)
    return `<span class="ci" data-metric="${escapeHtml(name)}_ci">no interval (n=${estimate.n})</span>`;
  return `<span class="ci" data-metric="${escapeHtml(name)}_ci" data-low="${estimate.low}" data-high="${estimate.high}">95% CI [${fixed(estimate.low)}, ${fixed(estimate.high)}]</span>`;
}

/** A summary card; `body` is HTML already (a metric), label and note are text. */
export function card(label: string, body: string, note: string): string {
  return `<div class="card"><div class="label">${escapeHtml(label)}</div><div class="body">${body}</div><div class="note">${escapeHtml(note)}</div></div>`;
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export interface Bar {
  label: string;
  /** The bar's length as a share of the track, 0..1. */
  share: number;
  /** The figure written after the bar. */
  figure: string;
  /** An optional whisker (an interval), as shares of the track. */
  low?: number | null;
  high?: number | null;
  /** Extra attributes of the bar's <g>, e.g. { 'data-category': 'x' } (values are escaped). */
  attributes?: Record<string, string>;
}

const BAR_WIDTH = 420;
const ROW_HEIGHT = 30;
const LABEL_WIDTH = 190;

/** Horizontal bars as inline SVG (no script), with an axis from 0 to `axisMax` and optional whiskers. */
export function barChart(
  bars: readonly Bar[],
  options: { ariaLabel: string; axisMax?: number } = { ariaLabel: 'bar chart' },
): string {
  const height = bars.length * ROW_HEIGHT + 28;
  const width = LABEL_WIDTH + BAR_WIDTH + 150;
  const x = (share: number) => LABEL_WIDTH + Math.max(0, Math.min(1, share)) * BAR_WIDTH;
  const groups = bars
    .map((bar, index) => {
      const y = 8 + index * ROW_HEIGHT;
      const attributes = Object.entries(bar.attributes ?? {})
        .map(([name, value]) => ` ${name}="${escapeHtml(value)}"`)
        .join('');
      const whisker =
        bar.low !== undefined && bar.low !== null && bar.high !== undefined && bar.high !== null
          ? `<line class="whisker" x1="${x(bar.low)}" x2="${x(bar.high)}" y1="${y + 10}" y2="${y + 10}"/><line class="whisker" x1="${x(bar.low)}" x2="${x(bar.low)}" y1="${y + 5}" y2="${y + 15}"/><line class="whisker" x1="${x(bar.high)}" x2="${x(bar.high)}" y1="${y + 5}" y2="${y + 15}"/>`
          : '';
      return `<g${attributes}>
<text class="label" x="${LABEL_WIDTH - 8}" y="${y + 14}" text-anchor="end">${escapeHtml(truncate(bar.label, 28))}</text>
<rect class="track" x="${LABEL_WIDTH}" y="${y + 2}" width="${BAR_WIDTH}" height="16" rx="3"/>
<rect class="bar" x="${LABEL_WIDTH}" y="${y + 2}" width="${(Math.max(0, Math.min(1, bar.share)) * BAR_WIDTH).toFixed(1)}" height="16" rx="3"/>
${whisker}
<text class="figure" x="${LABEL_WIDTH + BAR_WIDTH + 10}" y="${y + 14}">${escapeHtml(bar.figure)}</text>
</g>`;
    })
    .join('\n');
  const axisMax = options.axisMax ?? 1;
  const axis = [0, 0.25, 0.5, 0.75, 1]
    .map((tick) => {
      const label = Number.isInteger(tick * axisMax) ? String(tick * axisMax) : (tick * axisMax).toFixed(2);
      return `<line class="grid" x1="${x(tick)}" x2="${x(tick)}" y1="4" y2="${height - 20}"/><text class="tick" x="${x(tick)}" y="${height - 6}" text-anchor="middle">${label}</text>`;
    })
    .join('');
  return `<svg class="chart" role="img" aria-label="${escapeHtml(options.ariaLabel)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg">${axis}${groups}</svg>`;
}

/** Characters of one message shown; the full text stays in the run's records. */
const MESSAGE_MAX_CHARS = 20_000;

export function clip(text: string): string {
  return text.length <= MESSAGE_MAX_CHARS
    ? text
    : `${text.slice(0, MESSAGE_MAX_CHARS)}\n[... ${text.length - MESSAGE_MAX_CHARS} more characters in trajectories.jsonl]`;
}

/** Reward evidence: the details as JSON, a verifier's output tail as text. */
export function detailsBlock(details: unknown): string {
  if (details === null || typeof details !== 'object' || Array.isArray(details))
    return `<pre>${escapeHtml(clip(JSON.stringify(details, null, 2)))}</pre>`;
  const { output_tail: tail, ...rest } = details as Record<string, unknown>;
  const summary = `<pre>${escapeHtml(clip(JSON.stringify(rest, null, 2)))}</pre>`;
  return typeof tail === 'string'
    ? `${summary}<h4>verifier output (tail)</h4><pre>${escapeHtml(clip(tail))}</pre>`
    : summary;
}

export interface MessageOptions {
  /** The tool result answering each call id, shown under the call (the viewer pairs them). */
  results?: ReadonlyMap<string, string>;
}

/**
 * One message as the model saw or wrote it. Reasoning sits behind a <details> (collapsed), the
 * system prompt too; tool calls show their name, id and pretty-printed arguments.
 */
export function messageBlock(message: Message, options: MessageOptions = {}): string {
  switch (message.role) {
    case 'system':
      return `<details class="message system"><summary>system prompt (${message.content.length} characters)</summary><pre>${escapeHtml(clip(message.content))}</pre></details>`;
    case 'user':
      return `<div class="message user"><div class="role">user</div><pre>${escapeHtml(clip(contentText(message.content)))}</pre></div>`;
    case 'assistant': {
      const reasoning = message.reasoning
        ? `<details class="reasoning"><summary>reasoning (${message.reasoning.length} characters)</summary><pre>${escapeHtml(clip(message.reasoning))}</pre></details>`
        : '';
      const content = message.content ? `<pre>${escapeHtml(clip(message.content))}</pre>` : '';
      const calls = (message.tool_calls ?? []).map((call) => toolCallBlock(call, options)).join('');
      return `<div class="message assistant"><div class="role">assistant</div>${reasoning}${content}${calls}${!content && !calls && !reasoning ? '<pre class="empty">(empty answer)</pre>' : ''}</div>`;
    }
    case 'tool':
      return `<div class="message tool" data-tool-call-id="${escapeHtml(message.tool_call_id)}"><div class="role">tool · ${escapeHtml(message.name ?? message.tool_call_id)}</div><pre>${escapeHtml(clip(prettyToolResult(message.content)))}</pre></div>`;
  }
}

/**
 * A conversation: each tool call is shown with its result beneath it (matched by tool_call_id,
 * never by position); a result with no matching call stays where it was.
 */
export function conversationBlock(messages: readonly Message[]): string {
  const results = new Map<string, string>();
  for (const message of messages) if (message.role === 'tool') results.set(message.tool_call_id, message.content);
  const called = new Set(
    messages.flatMap((message) =>
      message.role === 'assistant' ? (message.tool_calls ?? []).map((call) => call.id) : [],
    ),
  );
  return messages
    .filter((message) => message.role !== 'tool' || !called.has(message.tool_call_id))
    .map((message) => messageBlock(message, { results }))
    .join('\n');
}

function toolCallBlock(
  call: NonNullable<Extract<Message, { role: 'assistant' }>['tool_calls']>[number],
  options: MessageOptions,
): string {
  const result = options.results?.get(call.id);
  const resultBlock =
    result === undefined
      ? ''
      : `<div class="result"><span class="role">result</span><pre>${escapeHtml(clip(prettyToolResult(result)))}</pre></div>`;
  return `<div class="call" data-call-id="${escapeHtml(call.id)}"><span class="tool">${escapeHtml(call.function.name)}</span> <span class="note mono">${escapeHtml(call.id)}</span><pre>${escapeHtml(clip(prettyArguments(call.function.arguments)))}</pre>${resultBlock}</div>`;
}

function prettyArguments(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** The terminal tool answers {"exit_code", "output"}: show the output as text, not as a JSON string. */
function prettyToolResult(text: string): string {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (
      parsed &&
      typeof parsed === 'object' &&
      !Array.isArray(parsed) &&
      typeof (parsed as { output?: unknown }).output === 'string'
    ) {
      const { output, ...rest } = parsed as { output: string } & Record<string, unknown>;
      return `${JSON.stringify(rest)}\n${output}`;
    }
    return JSON.stringify(parsed, null, 2);
  } catch {
    return text;
  }
}

/** The stylesheet both pages use (the viewer adds its own rules after it). */
export const STYLE = `
:root { --ink: #1d2330; --muted: #5b6475; --line: #dfe3ea; --panel: #f6f7f9; --accent: #2f6fdf; --pass: #1f8a4c; --fail: #c0392b; --warn: #b7791f; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: #fff; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 24px; margin: 0 0 8px; } h1 small { color: var(--muted); font-weight: 400; font-size: 15px; }
h2 { font-size: 17px; margin: 28px 0 10px; border-bottom: 1px solid var(--line); padding-bottom: 6px; }
h4 { margin: 10px 0 4px; font-size: 13px; color: var(--muted); }
.facts { display: flex; flex-wrap: wrap; gap: 6px 22px; margin: 0; }
.facts div { display: flex; gap: 6px; } .facts dt { color: var(--muted); } .facts dd { margin: 0; font-weight: 600; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 12px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .value { display: block; font-size: 26px; font-weight: 650; margin: 2px 0; }
.card .ci { display: block; color: var(--muted); font-size: 12px; } .card .note { color: var(--muted); font-size: 12px; margin-top: 4px; }
.pass-at-k { list-style: none; padding: 0; display: flex; gap: 18px; color: var(--muted); } .pass-at-k .value { color: var(--ink); font-weight: 600; }
.chart text { font-size: 12px; fill: var(--ink); } .chart .tick { fill: var(--muted); font-size: 11px; }
.chart .track { fill: var(--panel); stroke: var(--line); } .chart .bar { fill: var(--accent); } .chart .grid { stroke: var(--line); stroke-dasharray: 2 3; }
.chart .whisker { stroke: var(--ink); stroke-width: 1.5; } .chart .figure { fill: var(--muted); }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--panel); font-weight: 600; } td.number { text-align: right; font-variant-numeric: tabular-nums; }
table.compact { width: auto; margin-top: 8px; }
.status { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; color: #fff; }
.status.passed { background: var(--pass); } .status.failed { background: var(--fail); } .status.error { background: var(--warn); }
.check { border-radius: 8px; padding: 4px 16px 12px; margin-top: 20px; border: 1px solid; }
.check h2 { border: none; margin: 12px 0 4px; } .check.ok { background: #eef8f1; border-color: #b9e0c6; } .check.broken { background: #fdf0ee; border-color: #f0c2bb; } .check.flaky { background: #fdf7e8; border-color: #ecd9a6; }
.check h3 { font-size: 14px; margin: 14px 0 4px; }
details.transcript { border: 1px solid var(--line); border-radius: 8px; margin: 8px 0; background: #fff; }
details.transcript > summary { cursor: pointer; padding: 8px 12px; background: var(--panel); border-radius: 8px; }
details.transcript[open] > summary { border-bottom: 1px solid var(--line); border-radius: 8px 8px 0 0; }
details.transcript .key { font-weight: 600; }
.message { margin: 10px 12px; border-left: 3px solid var(--line); padding-left: 10px; }
.message .role { font-size: 11px; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); }
.message.user { border-color: var(--accent); } .message.assistant { border-color: #8e44ad; } .message.tool { border-color: var(--pass); }
details.message.system > summary, details.reasoning > summary { cursor: pointer; color: var(--muted); font-size: 12px; }
details.reasoning { margin: 4px 0; } details.reasoning pre { background: #f4eefa; }
.call .result { margin-left: 14px; border-left: 2px solid var(--pass); padding-left: 8px; }
.call .tool { font-weight: 600; font-size: 12px; color: #8e44ad; }
pre { margin: 4px 0; padding: 8px 10px; background: var(--panel); border-radius: 6px; white-space: pre-wrap; word-break: break-word; font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; max-height: 420px; overflow: auto; }
pre.empty { color: var(--muted); }
.evidence { margin: 10px 12px 14px; } .evidence.error pre { background: #fdf0ee; }
.note { color: var(--muted); font-size: 12px; }
footer { margin-top: 36px; color: var(--muted); font-size: 12px; }
`;
