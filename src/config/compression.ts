import { z } from 'zod';

/** When and how a long conversation is compressed (`compression:` in a run config). */
export const CompressionSettingsSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(true)
    .describe('compress the middle of the conversation when it nears the context window'),
  threshold: z
    .number()
    .gt(0)
    .lt(1)
    .default(0.8)
    .describe('compress when the next request would pass this fraction of the window'),
  keep_last_turns: z.number().int().positive().default(4).describe('turns at the end kept verbatim'),
});
export type CompressionSettings = z.infer<typeof CompressionSettingsSchema>;
