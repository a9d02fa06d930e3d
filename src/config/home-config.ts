import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { trajHome } from '../util/paths.js';
import { CompressionSettingsSchema } from './compression.js';
import { readConfigFile } from './load.js';
import { TOOL_SECTION_NAMES, ToolSettingsSchema, type ToolSectionName } from './tool-settings.js';
import { type ConfigIssues, validate } from './validate.js';

const PATTERN_IDS = 'expected a list of pattern ids (strings)';

/**
 * The tool sections as a file gives them: each optional, checked by its own schema, and absent
 * when the file leaves it out (the section's defaults are ToolSettingsSchema's, applied once to
 * the merged layers, not to each file).
 */
export const TOOL_SECTIONS_SHAPE = Object.fromEntries(
  TOOL_SECTION_NAMES.map((name) => {
    const section = ToolSettingsSchema.shape[name];
    const inner = section instanceof z.ZodPrefault ? section.unwrap() : section;
    return [name, inner.optional().describe(section.description ?? name)];
  }),
) as { [Name in ToolSectionName]: z.ZodOptional<WithoutPrefault<(typeof ToolSettingsSchema.shape)[Name]>> };

type WithoutPrefault<Schema> = Schema extends z.ZodPrefault<infer Inner> ? Inner : Schema;

/**
 * `TRAJ_HOME/config.yaml` (default ~/.traj/config.yaml), as a whole: every tool section (composed
 * from ToolSettingsSchema, so a new section is accepted here by construction), compression, MCP
 * servers and chat's approvals. Strict, so a typo such as `mcp_server:` is an error naming the file
 * instead of servers that silently never start. MCP servers are checked in detail by tools/mcp.
 */
export const HomeConfigSchema = z.strictObject({
  ...TOOL_SECTIONS_SHAPE,
  compression: CompressionSettingsSchema.optional().describe('context compression (over the defaults)'),
  mcp_servers: z.record(z.string(), z.unknown()).optional().describe('MCP servers offered as toolsets'),
  approved_commands: z
    .array(z.string({ error: PATTERN_IDS }), { error: PATTERN_IDS })
    .nullable()
    .optional()
    .describe("dangerous-command patterns approved 'always' in traj chat"),
});

export function homeConfigFile(): string {
  return join(trajHome(), 'config.yaml');
}

/** Check a parsed TRAJ_HOME/config.yaml whole; an empty file is fine. */
export function checkHomeConfig(value: unknown, file: string): void {
  validate(HomeConfigSchema, value ?? {}, file);
}

/** A config file's parsed content and where it came from; its checks go into `issues`. */
export interface ConfigLayer {
  file: string;
  value: Record<string, unknown>;
}

/** TRAJ_HOME/config.yaml when it exists, checked into `issues` (so its mistakes join the run config's). */
export function readHomeLayer(issues: ConfigIssues): ConfigLayer | undefined {
  const file = homeConfigFile();
  if (!existsSync(file)) return undefined;
  const value = (readConfigFile(file) ?? {}) as Record<string, unknown>;
  issues.check(HomeConfigSchema, value, file);
  return { file, value };
}
