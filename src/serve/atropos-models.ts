import { z } from 'zod';

/**
 * The request bodies of Atropos' API server (NousResearch/atropos, atroposlib/api/server.py) that
 * an environment sends, as its pydantic models define them: field names, types and optionality.
 * What traj posts is checked against these before it leaves.
 */
export const AtroposRegisterEnvSchema = z.strictObject({
  max_token_length: z.number().int(),
  desired_name: z.string(),
  weight: z.number(),
  group_size: z.number().int(),
  min_batch_allocation: z.number().nullable().optional(),
});
export type AtroposRegisterEnv = z.infer<typeof AtroposRegisterEnvSchema>;

const Matrix = <T extends z.ZodType>(cell: T) => z.array(z.array(cell));

/** `ScoredData`: one group. `messages` entries must each have `role` and `content` (its validator). */
export const AtroposScoredDataSchema = z.strictObject({
  tokens: Matrix(z.number().int()),
  masks: Matrix(z.number().int()),
  scores: z.array(z.number()),
  advantages: Matrix(z.number()).nullable().optional(),
  ref_logprobs: Matrix(z.number()).nullable().optional(),
  messages: z
    .array(z.array(z.looseObject({ role: z.unknown(), content: z.unknown() })))
    .nullable()
    .optional(),
  generation_params: z.record(z.string(), z.unknown()).nullable().optional(),
  inference_logprobs: Matrix(z.number()).nullable().optional(),
  overrides: z.array(z.record(z.string(), z.unknown())).nullable().optional(),
  group_overrides: z.record(z.string(), z.unknown()).nullable().optional(),
  images: z.unknown().optional(),
  env_id: z.number().int().nullable().optional(),
  distill_token_ids: z.array(Matrix(z.number().int())).nullable().optional(),
  distill_logprobs: z.array(Matrix(z.number())).nullable().optional(),
});
export type AtroposScoredData = z.infer<typeof AtroposScoredDataSchema>;

/** POST /register-env's answer once the trainer has started (`status: "success"`). */
export const AtroposRegisteredSchema = z.looseObject({
  status: z.string(),
  env_id: z.number().int().optional(),
  wandb_name: z.string().optional(),
});

/** GET /status-env's answer (the fields traj reads). */
export const AtroposEnvStatusSchema = z.looseObject({
  current_step: z.number(),
  queue_size: z.number(),
});
