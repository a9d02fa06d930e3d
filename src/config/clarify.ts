import { z } from 'zod';

export const DEFAULT_CLARIFY_ANSWER =
  'No one is available to answer. Make the most reasonable assumption, say which one you made, and continue.';

/** The `clarify:` section of a config: what clarify answers where no person is asked (batch, eval, bench). */
export const ClarifyConfigSchema = z.strictObject({
  answer: z
    .string()
    .min(1)
    .default(DEFAULT_CLARIFY_ANSWER)
    .describe("clarify's answer when no person is asked (batch, eval, bench); chat asks the person"),
});
export type ClarifyConfig = z.infer<typeof ClarifyConfigSchema>;
