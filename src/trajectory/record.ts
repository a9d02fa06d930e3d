import { z } from 'zod';
import { CompletionTokensSchema } from '../model/completion-tokens.js';
import { MessageSchema, ToolSpecSchema, UsageSchema } from '../model/messages.js';

export const ShareGptTurnSchema = z.object({
  from: z.enum(['system', 'human', 'gpt', 'tool']),
  value: z.string(),
});
export type ShareGptTurn = z.infer<typeof ShareGptTurnSchema>;

export const ToolStatSchema = z.object({
  name: z.string(),
  calls: z.number().int().nonnegative(),
  ok: z.number().int().nonnegative(),
  errors: z.number().int().nonnegative(),
});
export type ToolStat = z.infer<typeof ToolStatSchema>;

/** traj's own reasons, plus any model finish reason other than stop/tool_calls/length, kept as sent. */
export const FinishReasonSchema = z
  .string()
  .min(1)
  .describe(
    'stop, max_turns, length, context_length, api_error, aborted, empty, content_filter, or another reason the model sent',
  );

/** One compression of the conversation (see agent/compression.ts); the messages above stay whole. */
export const CompressionSchema = z.object({
  at_call: z.number().int().positive(),
  at_message: z.number().int().nonnegative(),
  trigger: z.enum(['threshold', 'overflow', 'manual']),
  tokens_before: z.number().int().nonnegative(),
  tokens_after: z.number().int().nonnegative(),
  replaced_start: z.number().int().nonnegative(),
  replaced_end: z.number().int().nonnegative(),
  summary: z.string(),
  todo: z.string().nullable(),
});

export const RecordErrorSchema = z.object({
  name: z.string(),
  code: z.string(),
  retryable: z.boolean(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/** A delegate_task child's transcript; `call_id` is the delegate_task call in the parent's messages. */
export const SubagentSchema = z.object({
  call_id: z.string(),
  depth: z.number().int().positive().describe('1 for a child of the rollout, 2 for a child of a child'),
  goal: z.string(),
  toolsets: z.array(z.string()),
  messages: z.array(MessageSchema),
  usage: UsageSchema,
  finish_reason: FinishReasonSchema,
});
export type Subagent = z.infer<typeof SubagentSchema>;

/** A tool call an execute_code script made; `call_id` is the execute_code call in the messages. */
export const CodeCallSchema = z.object({
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  ok: z.boolean(),
  ms: z.number().nonnegative(),
  result: z.string(),
});
export type CodeCall = z.infer<typeof CodeCallSchema>;

/** The simulated user of a multi-turn environment; its usage is also in the record's `usage` (the whole spend). */
export const SimulatedUserSchema = z.object({
  model: z.string(),
  turns: z.number().int().nonnegative(),
  stop: z.string().describe('stop_token, turn_limit, terminal_tool, user_empty, or agent (see finish_reason)'),
  usage: UsageSchema,
});

/**
 * One trajectory: the Hermes-compatible ShareGPT view, the exact OpenAI messages, and everything
 * needed to filter, grade and train on it. Every field is always present (null when unknown) so
 * rows with and without tool calls, reasoning or rewards share one schema.
 */
export const TrajectoryRecordSchema = z.object({
  id: z.string().describe('prompt key'),
  sample: z.number().int().nonnegative(),
  conversations: z.array(ShareGptTurnSchema).min(2),
  messages: z.array(MessageSchema).min(2),
  tools: z.array(ToolSpecSchema),
  toolsets: z.array(z.string()),
  model: z.string(),
  completed: z.boolean(),
  partial: z.boolean(),
  finish_reason: FinishReasonSchema,
  turns: z.number().int().nonnegative(),
  api_calls: z.number().int().nonnegative(),
  tool_stats: z.array(ToolStatSchema),
  usage: UsageSchema,
  compressions: z.array(CompressionSchema).default([]).describe('compressions of the context, in order; [] when none'),
  memory: z
    .object({ memory: z.array(z.string()), user: z.array(z.string()) })
    .nullable()
    .default(null)
    .describe('the memory files as the rollout left them (--memory); null when memory was off'),
  skills_viewed: z.array(z.string()).default([]).describe('skills loaded with skill_view'),
  has_reasoning: z.boolean(),
  reward: z.number().nullable(),
  scores: z.record(z.string(), z.number()),
  reward_details: z.unknown().nullable(),
  reward_error: z.string().nullable(),
  group: z.string().nullable().describe('the item a set of samples belongs to (eval)'),
  advantage: z.number().nullable(),
  source: z.object({
    dataset: z.string(),
    row: z.number().int().nonnegative().nullable(),
    fields: z.record(z.string(), z.unknown()),
  }),
  timing: z.object({
    started_at: z.string(),
    duration_ms: z.number().nonnegative(),
    model_ms: z.number().nonnegative(),
    tool_ms: z.number().nonnegative(),
  }),
  error: RecordErrorSchema.nullable(),
  /** Images of the user messages (URLs or data URLs), in order; the ShareGPT view marks each with <image>. */
  images: z.array(z.string()).default([]),
  /** Files tools kept beyond the rollout (browser screenshots), as absolute paths, in the order written. */
  artifacts: z.array(z.string()).default([]),
  /** delegate_task children (and their children), flattened in start order; their usage is in `usage`. */
  subagents: z.array(SubagentSchema).default([]),
  /** The tool calls execute_code scripts made, in order; counted in tool_stats, absent from messages. */
  code_calls: z.array(CodeCallSchema).default([]),
  /**
   * Each assistant turn's sampled token ids, logprobs and finish reason, by message index, when the
   * endpoint returned them (endpoint.logprobs, endpoint.token_ids); absent otherwise. Not a column
   * of the parquet/jsonl/arrow exports: `--format tokens` and `--format atropos` carry it.
   */
  completions: z.array(CompletionTokensSchema).optional(),
  /** A simulated user's side (its turns are the `user` messages): model, replies, why it ended, its own usage. */
  simulated_user: SimulatedUserSchema.nullable().default(null),
});
export type TrajectoryRecord = z.infer<typeof TrajectoryRecordSchema>;

export function validateRecord(record: unknown): TrajectoryRecord {
  return TrajectoryRecordSchema.parse(record);
}
