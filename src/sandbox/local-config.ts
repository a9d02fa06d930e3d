import { z } from 'zod';
import { validate } from '../config/validate.js';

/** Isolation settings of the local backend (`local:` in a run config, `sandbox.local` in code). */
export const LocalSandboxConfigSchema = z
  .object({
    isolation: z
      .enum(['auto', 'bwrap', 'none'])
      .default('auto')
      .describe(
        "'bwrap': bubblewrap namespaces, an error when unavailable; 'none': plain processes; 'auto': bwrap when usable, else none with a warning",
      ),
    network: z
      .boolean()
      .default(false)
      .describe('let commands reach the network (bwrap only; without bwrap they always can)'),
    pids_limit: z
      .number()
      .int()
      .min(16)
      .default(512)
      .describe('most processes per sandbox (bwrap, where a pids cgroup can be made)'),
    reuse_namespaces: z
      .boolean()
      .default(true)
      .describe(
        "bwrap: hand a rollout's namespaces to the next once every process in them is gone, nothing is left and every writable folder it changed is replaced; false makes new ones per rollout",
      ),
  })
  .strict();

export type LocalSandboxConfig = z.infer<typeof LocalSandboxConfigSchema>;

/** Validate `options.local`; a bad field is a ConfigError naming `sandbox.local.<field>`. */
export function parseLocalSandboxConfig(value: unknown, where = 'sandbox.local'): LocalSandboxConfig {
  return validate(LocalSandboxConfigSchema, value ?? {}, where);
}
