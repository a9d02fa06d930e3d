import { z } from 'zod';

/** The report's shape: report.json is validated against it, and bench reads it back. */
export const EstimateSchema = z.object({
  value: z.number().nullable(),
  low: z.number().nullable(),
  high: z.number().nullable(),
  n: z.number().int().nonnegative(),
});

/** Metrics of a set of rollouts (the whole run, one category, one toolset combination). */
export const BreakdownSchema = z.object({
  rollouts: z.number().int().nonnegative().describe('finished rollouts (status done)'),
  items: z.number().int().nonnegative().describe('distinct items (groups) among them'),
  scored: z.number().int().nonnegative().describe('rollouts with a numeric reward'),
  mean_reward: EstimateSchema.describe(
    'mean of the per-item mean rewards, 95% Student-t interval over items (clipped to [0, 1] when every reward lies there)',
  ),
  pass_rate: EstimateSchema.describe('share of scored rollouts with reward ≥ pass_threshold, 95% Wilson interval'),
  pass_at_k: z
    .record(z.string(), z.number())
    .describe('unbiased pass@k for k = 1..K, averaged over items with ≥ k scored samples'),
  reward_errors: z.number().int().nonnegative().describe('rollouts whose reward hook threw or timed out (reward null)'),
});
export type Breakdown = z.infer<typeof BreakdownSchema>;

export const ReportItemSchema = z.object({
  key: z.string(),
  sample: z.number().int().nonnegative(),
  group: z.string().nullable(),
  category: z.string().nullable(),
  toolsets: z.array(z.string()),
  reward: z.number().nullable(),
  passed: z.boolean().nullable(),
  advantage: z.number().nullable(),
  finish_reason: z.string(),
  turns: z.number().int().nonnegative(),
  tokens: z.number().int().nonnegative(),
  duration_ms: z.number().nonnegative(),
  reward_error: z.string().nullable(),
  /** USD of the rollout (agent, auxiliary models, judges); null when unknown. Absent in older reports. */
  cost: z.number().nullable().optional(),
  details: z.unknown(),
});
export type ReportItem = z.infer<typeof ReportItemSchema>;

/** What the reported rollouts cost: never a silent 0 when a model's price is unknown. */
export const ReportCostSchema = z.object({
  usd: z.number().nullable().describe('USD over the rollouts whose cost is known; null when none is'),
  rollouts_missing_price: z
    .number()
    .int()
    .nonnegative()
    .describe('rollouts whose cost leaves out calls of unpriced models'),
  unpriced_models: z.array(z.string()).describe('models with no provider-reported cost and no entry in pricing:'),
});
export type ReportCost = z.infer<typeof ReportCostSchema>;

export const EvalReportSchema = z.object({
  run: z.string(),
  environment: z.object({ name: z.string(), version: z.string() }).nullable(),
  suite: z
    .object({ name: z.string(), version: z.string(), source: z.string() })
    .optional()
    .describe('the registry suite run (traj bench run NAME@VERSION): its version and where its tasks came from'),
  model: z.string().nullable(),
  pass_threshold: z.number(),
  summary: BreakdownSchema.extend({
    samples_per_item: z.number().int().nonnegative().describe('K: the most samples any item has'),
    failed: z
      .number()
      .int()
      .nonnegative()
      .describe('rollouts that failed for infrastructure reasons (no record; rerun to retry)'),
    judged: z.number().int().nonnegative().describe('rollouts graded by a panel of two or more judges'),
    judge_agreement: z
      .number()
      .nullable()
      .describe('mean share of judges agreeing with the majority, over judged rollouts'),
    tokens: z.object({ prompt: z.number().int().nonnegative(), completion: z.number().int().nonnegative() }),
    cost: ReportCostSchema.optional().describe('absent in reports written before cost accounting'),
  }),
  by_category: z.array(BreakdownSchema.extend({ category: z.string() })),
  by_toolsets: z.array(BreakdownSchema.extend({ toolsets: z.array(z.string()) })),
  items: z.array(ReportItemSchema),
  generated_at: z.string(),
});
export type EvalReport = z.infer<typeof EvalReportSchema>;
