import { CompressionSettingsSchema, type CompressionSettings } from '../config/compression.js';
import { readHomeLayer, type ConfigLayer } from '../config/home-config.js';
import { readConfigFile } from '../config/load.js';
import {
  mergeSection,
  mergeToolSections,
  ToolSettingsSchema,
  TOOL_SECTION_NAMES,
  type ToolSettings,
} from '../config/tool-settings.js';
import { ConfigIssues, validate } from '../config/validate.js';
import { ConfigError } from '../errors.js';
import { loadMcpServers } from '../tools/mcp/config.js';
import { RunConfigSchema, type RunConfig, type RunConfigValues } from './run-config.js';

/**
 * The one loader of configuration, for every command. Precedence, lowest first:
 * TRAJ_HOME/config.yaml, then the run config (an environment's config.yaml under the --config
 * file), then flags. Tool sections and `compression:` merge key by key (see mergeToolSections); MCP
 * servers merge by name; any other key is replaced whole. Every mistake in every file and section
 * is reported in one message, each line naming its file and key path.
 */
export interface ConfigSources {
  /** --config FILE. */
  file?: string;
  /** Flags as run-config keys; undefined means not given. */
  flags?: Record<string, unknown>;
  /** Lowest run-config values (an environment's config.yaml). */
  defaults?: Partial<RunConfigValues>;
}

/** What chat and ask read: any run-config key, no run name needed. */
export type AgentConfig = Partial<Omit<RunConfig, 'tools'>> & { tools: ToolSettings };

/** batch, eval and bench: the run config whole, with `run` required. */
export function loadRunConfig(sources: ConfigSources): RunConfig {
  const { values, tools, compression, mcpServers } = gather(sources);
  if (!values.run)
    throw new ConfigError('missing --run NAME (the run store is checkpoints/NAME.sqlite)', { code: 'cli_usage' });
  if (values.distribution && values.toolsets)
    throw new ConfigError('give either --distribution or --toolsets, not both', { code: 'cli_usage' });
  const config = validate(RunConfigSchema, values, sources.file ? `${sources.file} + flags` : 'flags');
  return assemble(config, tools, compression, mcpServers) as RunConfig;
}

/** chat and ask: the same files and precedence; a run name is not needed. */
export function loadAgentConfig(file?: string): AgentConfig {
  const { values, tools, compression, mcpServers } = gather({ file });
  return assemble(values, tools, compression, mcpServers);
}

interface Gathered {
  values: Partial<RunConfigValues>;
  tools: ToolSettings;
  compression: CompressionSettings | undefined;
  mcpServers: Record<string, unknown>;
}

function gather(sources: ConfigSources): Gathered {
  const issues = new ConfigIssues();
  const home = readHomeLayer(issues);
  const file = sources.file ? readRunConfigLayer(sources.file, issues) : undefined;
  const flags = Object.fromEntries(Object.entries(sources.flags ?? {}).filter(([, value]) => value !== undefined));
  issues.check(RunConfigSchema.partial(), flags, 'flags');
  // MCP servers need their own loader: relative `cwd`s resolve against the file naming them.
  const mcp = issues.attempt(() => loadMcpServers(sources.file));
  issues.throwIfAny();
  const layers = [home?.value, sources.defaults, file?.value];
  const where = [home?.file, file?.file].filter(Boolean).join(' + ') || 'defaults';
  return {
    values: { ...sources.defaults, ...withoutToolSections(file?.value), ...flags } as Partial<RunConfigValues>,
    tools: validate(ToolSettingsSchema, mergeToolSections(layers), where),
    compression: mergedCompression(layers, where),
    mcpServers: mcp?.servers ?? {},
  };
}

/** The --config file, parsed and checked into `issues` (a run config may leave out `run`). */
function readRunConfigLayer(file: string, issues: ConfigIssues): ConfigLayer {
  const value = (readConfigFile(file) ?? {}) as Record<string, unknown>;
  issues.check(RunConfigSchema.partial(), value, file);
  return { file, value };
}

function withoutToolSections(value: Record<string, unknown> | undefined): Record<string, unknown> {
  const sections = new Set<string>([...TOOL_SECTION_NAMES, 'compression', 'mcp_servers']);
  return Object.fromEntries(Object.entries(value ?? {}).filter(([key]) => !sections.has(key)));
}

function mergedCompression(
  layers: ReadonlyArray<Record<string, unknown> | undefined>,
  where: string,
): CompressionSettings | undefined {
  const merged = mergeSection(layers, 'compression');
  return merged && validate(CompressionSettingsSchema, merged, `${where}: compression`);
}

function assemble(
  values: Partial<RunConfigValues>,
  tools: ToolSettings,
  compression: CompressionSettings | undefined,
  mcpServers: Record<string, unknown>,
): AgentConfig {
  const rest = withoutToolSections(values) as Partial<RunConfigValues>;
  return {
    ...rest,
    tools,
    ...(compression ? { compression } : {}),
    ...(Object.keys(mcpServers).length > 0 ? { mcp_servers: mcpServers } : {}),
  };
}
