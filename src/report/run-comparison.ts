import { z } from 'zod';
import { mean, meanInterval, wilsonInterval, type Estimate } from '../eval/metrics.js';
import { EstimateSchema, type EvalReport, type ReportItem } from './report-schema.js';

const DifferenceSchema = z.object({
  value: z.number().nullable(),
  low: z.number().nullable(),
  high: z.number().nullable(),
});
export type Difference = z.infer<typeof DifferenceSchema>;

const RunSideSchema = z.object({ run: z.string(), model: z.string().nullable(), environment: z.string().nullable() });

export const ItemComparisonSchema = z.object({
  key: z.string(),
  a_reward: z.number().nullable().describe("mean reward of the item's scored samples in run A"),
  b_reward: z.number().nullable(),
  delta: z.number().nullable().describe('b_reward − a_reward'),
  a_passed: z.string().describe('passed/scored samples in run A, e.g. "2/3"'),
  b_passed: z.string(),
  change: z.enum(['fixed', 'regressed', 'better', 'worse', 'same', 'only_a', 'only_b']),
});
export type ItemComparison = z.infer<typeof ItemComparisonSchema>;

export const RunComparisonSchema = z.object({
  a: RunSideSchema,
  b: RunSideSchema,
  pass_rate: z.object({
    a: EstimateSchema,
    b: EstimateSchema,
    difference: DifferenceSchema.describe(
      "B − A with Newcombe's hybrid score 95% interval (from the two Wilson intervals; treats the runs as independent samples)",
    ),
  }),
  mean_reward: z.object({
    shared_items: z.number().int().nonnegative(),
    difference: DifferenceSchema.describe(
      'mean over shared items of (B − A) item mean reward, 95% paired Student-t interval (clipped to [−1, 1] when rewards lie in [0, 1])',
    ),
  }),
  items: z.array(ItemComparisonSchema),
});
export type RunComparison = z.infer<typeof RunComparisonSchema>;

/**
 * The 95% interval for p_b − p_a by Newcombe's hybrid score method (his method 10): combine the
 * Wilson interval of each proportion. Good coverage at small n and at 0 or 1, unlike the Wald
 * interval. Null when either side has no scored rollouts.
 */
export function newcombeDifference(
  a: { successes: number; n: number },
  b: { successes: number; n: number },
): Difference {
  const left = wilsonInterval(a.successes, a.n);
  const right = wilsonInterval(b.successes, b.n);
  if (left.value === null || right.value === null) return { value: null, low: null, high: null };
  const difference = right.value - left.value;
  const low = difference - Math.sqrt((right.value - right.low!) ** 2 + (left.high! - left.value) ** 2);
  const high = difference + Math.sqrt((right.high! - right.value) ** 2 + (left.value - left.low!) ** 2);
  return { value: difference, low: Math.max(-1, low), high: Math.min(1, high) };
}

interface ItemSummary {
  reward: number | null;
  passed: number;
  scored: number;
}

function summarizeItems(items: readonly ReportItem[]): Map<string, ItemSummary> {
  const groups = new Map<string, ReportItem[]>();
  for (const item of items) {
    const key = item.group ?? item.key;
    const members = groups.get(key);
    if (members) members.push(item);
    else groups.set(key, [item]);
  }
  const summaries = new Map<string, ItemSummary>();
  for (const [key, members] of groups) {
    const scored = members.filter((member) => member.reward !== null);
    summaries.set(key, {
      reward: mean(scored.map((member) => member.reward!)),
      passed: scored.filter((member) => member.passed).length,
      scored: scored.length,
    });
  }
  return summaries;
}

function change(a: ItemSummary | undefined, b: ItemSummary | undefined): ItemComparison['change'] {
  if (!a) return 'only_b';
  if (!b) return 'only_a';
  const passedA = a.scored > 0 && a.passed === a.scored;
  const passedB = b.scored > 0 && b.passed === b.scored;
  if (!passedA && passedB) return 'fixed';
  if (passedA && !passedB) return 'regressed';
  if (a.reward === null || b.reward === null || a.reward === b.reward) return 'same';
  return b.reward > a.reward ? 'better' : 'worse';
}

/** Run B against run A: per-item deltas, pass-rate difference (Newcombe), paired mean-reward difference. */
export function compareRuns(a: EvalReport, b: EvalReport): RunComparison {
  const left = summarizeItems(a.items);
  const right = summarizeItems(b.items);
  const keys = [...new Set([...left.keys(), ...right.keys()])].sort();
  const items = keys.map((key): ItemComparison => {
    const x = left.get(key);
    const y = right.get(key);
    const delta = x?.reward != null && y?.reward != null ? y.reward - x.reward : null;
    return {
      key,
      a_reward: x?.reward ?? null,
      b_reward: y?.reward ?? null,
      delta,
      a_passed: x ? `${x.passed}/${x.scored}` : '–',
      b_passed: y ? `${y.passed}/${y.scored}` : '–',
      change: change(x, y),
    };
  });
  const deltas = items.map((item) => item.delta).filter((delta): delta is number => delta !== null);
  const paired: Estimate = meanInterval(deltas);
  // Rewards in [0, 1] differ by at most 1: the t interval of few items can reach past that.
  const unitRewards = items.every((item) =>
    [item.a_reward, item.b_reward].every((reward) => reward === null || (reward >= 0 && reward <= 1)),
  );
  const clip = (value: number | null, bound: number) =>
    value === null || !unitRewards ? value : bound < 0 ? Math.max(bound, value) : Math.min(bound, value);
  const successes = (report: EvalReport) => report.items.filter((item) => item.passed === true).length;
  const scored = (report: EvalReport) => report.items.filter((item) => item.reward !== null).length;
  return {
    a: side(a),
    b: side(b),
    pass_rate: {
      a: a.summary.pass_rate,
      b: b.summary.pass_rate,
      difference: newcombeDifference(
        { successes: successes(a), n: scored(a) },
        { successes: successes(b), n: scored(b) },
      ),
    },
    mean_reward: {
      shared_items: deltas.length,
      difference: { value: paired.value, low: clip(paired.low, -1), high: clip(paired.high, 1) },
    },
    items,
  };
}

function side(report: EvalReport): RunComparison['a'] {
  return {
    run: report.run,
    model: report.model,
    environment: report.environment ? `${report.environment.name} ${report.environment.version}` : null,
  };
}
