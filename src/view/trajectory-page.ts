import { MessageSchema, type Message } from '../model/messages.js';
import { conversationBlock, detailsBlock, escapeHtml, fixed } from '../report/html-parts.js';
import { cost, duration, href, layout, runPath } from './layout.js';
import type { StoredRow } from './run-reader.js';

interface JudgeEntry {
  model: string;
  score: number;
  pass: boolean;
  reasoning: string;
  cached?: boolean;
}

/** The parts of a record this page reads; every one is checked, since stores outlive record versions. */
type LooseRecord = Record<string, unknown>;

/**
 * One rollout: what it cost and how it ended, reward and judge evidence, the messages as the model
 * saw them (reasoning collapsed, each tool call with its arguments and result), and the command
 * that continues it in chat.
 */
export function trajectoryPage(run: string, forkRun: string, row: StoredRow): string {
  const record = (row.record ?? {}) as LooseRecord;
  const messages = parseMessages(record.messages);
  const forkKey = row.sample === 0 ? row.key : `${row.key}:${row.sample}`;
  const fork = `traj chat --fork ${shellWord(forkRun)} ${shellWord(forkKey)}`;
  const title = `${row.key} #${row.sample}`;
  return layout(
    `traj view · ${run} · ${title}`,
    `<h1><span class="mono">${escapeHtml(row.key)}</span> <small>sample ${row.sample} · run ${escapeHtml(run)}</small></h1>
${factsList(row, record)}
<h2>Continue in chat</h2><pre class="fork" data-field="fork">${escapeHtml(fork)}</pre>
${errorSection(row, record)}
${rewardSection(record)}
${toolStatsSection(record)}
<h2>Messages <small class="note">${messages.length} as the model saw them</small></h2>
${conversationBlock(messages)}`,
    [
      [run, runPath(run)],
      [title, null],
    ],
  );
}

function factsList(row: StoredRow, record: LooseRecord): string {
  const usage = (record.usage ?? {}) as Record<string, unknown>;
  const timing = (record.timing ?? {}) as Record<string, unknown>;
  const number = (value: unknown) => (typeof value === 'number' ? value : null);
  const facts: [string, string][] = [
    ['status', row.status],
    ['finish reason', row.finish_reason ?? '–'],
    ['reward', fixed(row.reward)],
    ['turns', String(record.turns ?? '–')],
    ['api calls', String(record.api_calls ?? '–')],
    [
      'tokens',
      `${number(usage.prompt_tokens) ?? '–'} prompt + ${number(usage.completion_tokens) ?? '–'} completion (${number(usage.reasoning_tokens) ?? 0} reasoning)`,
    ],
    [
      'duration',
      `${duration(number(timing.duration_ms) ?? row.duration_ms)} (model ${duration(number(timing.model_ms))}, tools ${duration(number(timing.tool_ms))})`,
    ],
    ['model', String(record.model ?? '–')],
    ['toolsets', row.toolsets.join(', ') || '(none)'],
    ['attempts', String(row.attempts)],
  ];
  const list = facts
    .map(
      ([name, value]) =>
        `<div><dt>${escapeHtml(name)}</dt><dd data-fact="${escapeHtml(name)}">${escapeHtml(value)}</dd></div>`,
    )
    .join('');
  // Agent, auxiliary models and judges; where it came from (provider, pricing) beside it.
  const recorded = number(usage.cost) ?? number(record.cost);
  const unpriced = Array.isArray(usage.unpriced_models) ? usage.unpriced_models.map(String) : [];
  const source =
    typeof usage.cost_source === 'string' && recorded !== undefined && recorded !== null
      ? ` <span class="note" data-field="cost-source">(${escapeHtml(usage.cost_source)})</span>`
      : '';
  return `<dl class="facts">${list}<div><dt>cost</dt><dd>${cost(recorded, unpriced)}${source}</dd></div></dl>`;
}

function errorSection(row: StoredRow, record: LooseRecord): string {
  const error = record.error as { name?: string; code?: string; message?: string } | null | undefined;
  const parts: string[] = [];
  if (row.error_class || row.error_message)
    parts.push(
      `<p><b>${escapeHtml(row.error_class ?? 'error')}${row.error_code ? ` · ${escapeHtml(row.error_code)}` : ''}</b></p><pre>${escapeHtml(row.error_message ?? '')}</pre>`,
    );
  if (error && typeof error === 'object')
    parts.push(
      `<p>agent error <b>${escapeHtml(String(error.code ?? error.name ?? ''))}</b></p><pre>${escapeHtml(String(error.message ?? ''))}</pre>`,
    );
  return parts.length === 0
    ? ''
    : `<section class="evidence error" data-section="error"><h2>Error</h2>${parts.join('')}</section>`;
}

function rewardSection(record: LooseRecord): string {
  const rewardError = typeof record.reward_error === 'string' ? record.reward_error : null;
  const details = record.reward_details;
  const scores =
    record.scores && typeof record.scores === 'object' ? Object.entries(record.scores as Record<string, unknown>) : [];
  if (rewardError === null && (details === null || details === undefined) && scores.length === 0) return '';
  const parts: string[] = [];
  if (rewardError !== null)
    parts.push(`<div class="evidence error"><h4>reward error</h4><pre>${escapeHtml(rewardError)}</pre></div>`);
  if (scores.length > 0)
    parts.push(
      `<p class="counts">${scores.map(([name, value]) => `<span data-score="${escapeHtml(name)}">${escapeHtml(name)} ${escapeHtml(String(value))}</span>`).join('')}</p>`,
    );
  const judges = judgesOf(details);
  if (judges) {
    const verdict = (details as { pass?: unknown }).pass;
    parts.push(
      `<p>panel verdict: <b data-field="panel-verdict">${verdict === true ? 'pass' : verdict === false ? 'fail' : '–'}</b></p>`,
    );
    parts.push(
      judges
        .map(
          (judge) =>
            `<div class="judge" data-judge="${escapeHtml(judge.model)}"><b>${escapeHtml(judge.model)}</b> · score ${fixed(judge.score)} · <span class="verdict ${judge.pass ? 'pass' : 'fail'}">${judge.pass ? 'pass' : 'fail'}</span>${judge.cached ? ' · <span class="note">cached</span>' : ''}<pre>${escapeHtml(judge.reasoning)}</pre></div>`,
        )
        .join(''),
    );
  } else if (details !== null && details !== undefined) {
    parts.push(`<div class="evidence"><h4>reward details</h4>${detailsBlock(details)}</div>`);
  }
  return `<section data-section="reward"><h2>Reward</h2>${parts.join('\n')}</section>`;
}

function judgesOf(details: unknown): JudgeEntry[] | undefined {
  const judges = (details as { judges?: unknown } | null | undefined)?.judges;
  if (!Array.isArray(judges)) return undefined;
  return judges.filter(
    (judge): judge is JudgeEntry =>
      judge && typeof judge === 'object' && typeof (judge as JudgeEntry).model === 'string',
  );
}

function toolStatsSection(record: LooseRecord): string {
  const stats = Array.isArray(record.tool_stats)
    ? (record.tool_stats as { name: string; calls: number; ok: number; errors: number }[])
    : [];
  if (stats.length === 0) return '';
  const rows = stats
    .map(
      (stat) =>
        `<tr data-tool="${escapeHtml(stat.name)}"><td>${escapeHtml(stat.name)}</td><td class="number">${stat.calls}</td><td class="number">${stat.ok}</td><td class="number">${stat.errors}</td></tr>`,
    )
    .join('');
  return `<h2>Tool calls</h2><table class="compact"><thead><tr><th>tool</th><th>calls</th><th>ok</th><th>errors</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function parseMessages(value: unknown): Message[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((message) => {
    const parsed = MessageSchema.safeParse(message);
    return parsed.success ? [parsed.data] : [];
  });
}

/** A word a POSIX shell reads back as itself. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

export function itemHref(run: string, key: string, sample: number): string {
  return href(`${runPath(run)}/item`, { key, sample });
}
