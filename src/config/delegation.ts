import { z } from 'zod';

/** The `delegation:` section of a config: how delegate_task's child agents run. */
export const DelegationConfigSchema = z.strictObject({
  max_turns: z
    .number()
    .int()
    .positive()
    .default(20)
    .describe("each child agent's turn limit (its own, not the parent's)"),
});
export type DelegationConfig = z.infer<typeof DelegationConfigSchema>;
