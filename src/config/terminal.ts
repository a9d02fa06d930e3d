import { z } from 'zod';

/** The `terminal:` section of a config: how the terminal tool runs commands. */
export const TerminalConfigSchema = z.strictObject({
  persistent: z
    .boolean()
    .default(true)
    .describe(
      "true: every call runs in the rollout's one long-lived shell (cd, variables and functions carry over); " +
        'false: each call starts a fresh shell in the working directory',
    ),
});
export type TerminalConfig = z.infer<typeof TerminalConfigSchema>;
export const DEFAULT_TERMINAL: TerminalConfig = TerminalConfigSchema.parse({});
