import { z } from 'zod';
import { JudgeSettingsSchema, type JudgeSettings } from '../eval/judge.js';

/** The agents an eval run can roll out with: the policy model, or a reference agent. */
export const EVAL_AGENTS = ['model', 'noop', 'oracle'] as const;
/** Those, or 'cli': a third-party agent CLI (an agent definition) with the policy model behind traj's proxy. */
export type EvalAgent = (typeof EVAL_AGENTS)[number] | 'cli';

/** What an eval run stores in its config, so `--rescore` can find the same items and judges again. */
export const StoredEvalSchema = z.object({
  environment_module: z.string(),
  dataset: z.string().optional(),
  limit: z.number().int().positive().optional(),
  samples: z.number().int().positive(),
  pass_threshold: z.number(),
  judges: JudgeSettingsSchema.optional(),
  /** What items() was given besides the dataset (--image, the sandbox kind, bench environment settings). */
  environment_options: z
    .object({
      image: z.string().optional(),
      sandbox: z.enum(['local', 'docker']).optional(),
      settings: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
});
export type StoredEval = z.infer<typeof StoredEvalSchema>;

/** The part of a run's fingerprint the judges make: a different panel, rubric or scale grades differently. */
export function judgeFingerprint(judges: JudgeSettings | undefined): Record<string, unknown> | null {
  return judges
    ? {
        models: judges.endpoints.map((judge) => judge.model),
        rubric: judges.rubric ?? null,
        scale: judges.scale ?? null,
      }
    : null;
}
