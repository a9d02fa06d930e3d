import { z } from 'zod';
import { emptyUsage, ToolSpecSchema, UsageSchema } from '../model/messages.js';

/** Where a forked session came from: a stored rollout of a run, cut after an assistant turn. */
export const ForkOriginSchema = z.object({
  run: z.string(),
  store: z.string().describe('path of the run store the record was read from'),
  key: z.string(),
  sample: z.number().int().nonnegative(),
  turn: z.number().int().nonnegative().describe('assistant turns kept'),
  turns: z.number().int().nonnegative().describe('assistant turns the stored record had'),
});
export type ForkOrigin = z.infer<typeof ForkOriginSchema>;

/** One chat session as stored in TRAJ_HOME/sessions.sqlite (without its messages). */
export const SessionSchema = z.object({
  id: z.string(),
  title: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  model: z.string(),
  base_url: z.string(),
  toolsets: z.array(z.string()),
  tools: z.array(ToolSpecSchema).describe('the tool schemas offered in this session'),
  sandbox: z.string(),
  forked_from: ForkOriginSchema.nullable(),
  usage: UsageSchema.extend({ api_calls: z.number().int().nonnegative() }),
  message_count: z.number().int().nonnegative(),
});
export type Session = z.infer<typeof SessionSchema>;
export type SessionUsage = Session['usage'];

export function emptySessionUsage(): SessionUsage {
  return { ...emptyUsage(), api_calls: 0 };
}
