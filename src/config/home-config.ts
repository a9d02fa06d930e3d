import { z } from 'zod';
import { validate } from './validate.js';

/**
 * `TRAJ_HOME/config.yaml` (default ~/.traj/config.yaml), as a whole. Strict, so a typo such as
 * `mcp_server:` is an error naming the file instead of servers that silently never start. Each
 * section is validated in detail by the room that owns it (MCP servers: tools/mcp; approvals: chat).
 */
const PATTERN_IDS = 'expected a list of pattern ids (strings)';

export const HomeConfigSchema = z.strictObject({
  mcp_servers: z.record(z.string(), z.unknown()).optional().describe('MCP servers offered as toolsets'),
  approved_commands: z
    .array(z.string({ error: PATTERN_IDS }), { error: PATTERN_IDS })
    .nullable()
    .optional()
    .describe("dangerous-command patterns approved 'always' in traj chat"),
});

/** Check the top-level keys of a parsed TRAJ_HOME/config.yaml; an empty file is fine. */
export function checkHomeConfig(value: unknown, file: string): void {
  validate(HomeConfigSchema, value ?? {}, file);
}
