import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomically } from '../util/atomic-write.js';
import type { RunStore, StoredItem } from '../run/store.js';
import type { TrajectoryRecord } from '../trajectory/record.js';
import { mean, meanInterval, passAtKTable, wilsonInterval, type ItemOutcomes } from '../eval/metrics.js';
import { formatReportMarkdown } from './report-markdown.js';
import {
  EvalReportSchema,
  type Breakdown,
  type EvalReport,
  type ReportCost,
  type ReportItem,
} from './report-schema.js';

export interface BuildReportOptions {
  /** A rollout passes when its reward is at least this (default 1). */
  passThreshold?: number;
  /** Overrides what the store's fingerprint says. */
  environment?: { name: string; version: string };
  /** A registry suite's name, version and source (traj bench run NAME@VERSION). */
  suite?: { name: string; version: string; source: string };
}

/** Build the report from everything the store holds (cumulative across resumes and rescoring). */
export function buildReport(store: RunStore, options: BuildReportOptions = {}): EvalReport {
  const threshold = options.passThreshold ?? 1;
  const meta = store.meta();
  const rows: ReportItem[] = [];
  const agreements: number[] = [];
  const tokens = { prompt: 0, completion: 0 };
  const cost = new CostTotal();
  let failed = 0;
  for (const stored of store.items({ status: ['done', 'failed'] })) {
    if (stored.status === 'failed' || stored.record === null) {
      failed++;
      continue;
    }
    const record = JSON.parse(stored.record) as TrajectoryRecord;
    tokens.prompt += record.usage.prompt_tokens;
    tokens.completion += record.usage.completion_tokens;
    cost.add(record.usage);
    const agreement = record.scores.judge_agreement;
    if (typeof agreement === 'number' && (record.scores.judges ?? 0) >= 2) agreements.push(agreement);
    rows.push(reportItem(stored, record, threshold));
  }
  const environment = options.environment ?? environmentOf(meta?.fingerprint_parts);
  return {
    run: meta?.name ?? '',
    environment,
    ...(options.suite ? { suite: options.suite } : {}),
    model: typeof meta?.fingerprint_parts.model === 'string' ? meta.fingerprint_parts.model : null,
    pass_threshold: threshold,
    summary: {
      ...breakdown(rows),
      samples_per_item: Math.max(0, ...[...countBy(rows, groupOf).values()]),
      failed,
      judged: agreements.length,
      judge_agreement: mean(agreements),
      tokens,
      cost: cost.total(),
    },
    by_category: groupRows(rows, (row) => row.category ?? '(none)').map(([category, members]) => ({
      category,
      ...breakdown(members),
    })),
    by_toolsets: groupRows(rows, (row) => row.toolsets.join('+'))
      .sort(([, a], [, b]) => b.length - a.length)
      .map(([, members]) => ({ toolsets: members[0]!.toolsets, ...breakdown(members) })),
    items: rows,
    generated_at: new Date().toISOString(),
  };
}

/** Float noise (a panel mean of 0.9, 0.8 and 0.4 is 0.7000000000000001) must not decide a pass. */
const PASS_TOLERANCE = 1e-9;

function reportItem(stored: StoredItem, record: TrajectoryRecord, threshold: number): ReportItem {
  const category = record.source.fields.category;
  return {
    key: stored.key,
    sample: stored.sample,
    group: record.group,
    category: typeof category === 'string' ? category : null,
    toolsets: record.toolsets,
    reward: record.reward,
    passed: record.reward === null ? null : record.reward >= threshold - PASS_TOLERANCE,
    advantage: record.advantage,
    finish_reason: record.finish_reason,
    turns: record.turns,
    tokens: record.usage.prompt_tokens + record.usage.completion_tokens,
    duration_ms: record.timing.duration_ms,
    reward_error: record.reward_error,
    cost: record.usage.cost ?? null,
    details: record.reward_details ?? null,
  };
}

/** Costs summed as records hold them, with the models whose calls have no known cost. */
class CostTotal {
  private usd: number | null = null;
  private missing = 0;
  private readonly unpriced = new Set<string>();

  add(usage: TrajectoryRecord['usage']): void {
    if (usage.cost !== null && usage.cost !== undefined)
      this.usd = Math.round(((this.usd ?? 0) + usage.cost) * 1e12) / 1e12;
    const models = usage.unpriced_models ?? [];
    if (models.length > 0) this.missing++;
    for (const model of models) this.unpriced.add(model);
  }

  total(): ReportCost {
    return { usd: this.usd, rollouts_missing_price: this.missing, unpriced_models: [...this.unpriced].sort() };
  }
}

function environmentOf(parts: Record<string, unknown> | undefined): EvalReport['environment'] {
  const value = parts?.environment as { name?: unknown; version?: unknown } | undefined;
  return typeof value?.name === 'string' && typeof value.version === 'string'
    ? { name: value.name, version: value.version }
    : null;
}

const groupOf = (row: ReportItem) => row.group ?? row.key;

/** Metrics of some rollouts; items are the groups (K samples of one item). */
export function breakdown(rows: readonly ReportItem[]): Breakdown {
  const scored = rows.filter((row) => row.reward !== null);
  const byItem = new Map<string, ReportItem[]>();
  for (const row of scored) byItem.set(groupOf(row), [...(byItem.get(groupOf(row)) ?? []), row]);
  const itemMeans = [...byItem.values()].map((members) => mean(members.map((row) => row.reward!))!);
  const outcomes: ItemOutcomes[] = [...byItem.values()].map((members) => ({
    n: members.length,
    passed: members.filter((row) => row.passed).length,
  }));
  return {
    rollouts: rows.length,
    items: new Set(rows.map(groupOf)).size,
    scored: scored.length,
    mean_reward: meanInterval(itemMeans, itemMeans.every((value) => value >= 0 && value <= 1) ? [0, 1] : undefined),
    pass_rate: wilsonInterval(scored.filter((row) => row.passed).length, scored.length),
    pass_at_k: passAtKTable(outcomes),
    reward_errors: rows.filter((row) => row.reward_error !== null).length,
  };
}

function countBy<T>(values: readonly T[], keyOf: (value: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(keyOf(value), (counts.get(keyOf(value)) ?? 0) + 1);
  return counts;
}

function groupRows(rows: readonly ReportItem[], keyOf: (row: ReportItem) => string): [string, ReportItem[]][] {
  const groups = new Map<string, ReportItem[]>();
  for (const row of rows) {
    const key = keyOf(row);
    let members = groups.get(key);
    if (!members) groups.set(key, (members = []));
    members.push(row);
  }
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b));
}

export interface ReportFiles {
  json: string;
  markdown: string;
}

/** `report.json` (validated against EvalReportSchema) and `report.md` in `directory`, each written atomically. */
export function writeReport(directory: string, report: EvalReport): ReportFiles {
  mkdirSync(directory, { recursive: true });
  const files = { json: join(directory, 'report.json'), markdown: join(directory, 'report.md') };
  writeFileAtomically(files.json, `${JSON.stringify(EvalReportSchema.parse(report), null, 2)}\n`);
  writeFileAtomically(files.markdown, formatReportMarkdown(report));
  return files;
}
