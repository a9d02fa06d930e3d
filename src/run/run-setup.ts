import { readFileSync } from 'node:fs';
import type { AgentSettings } from '../agent/agent-settings.js';
import { resolveAuxiliary } from '../config/auxiliary.js';
import type { Endpoint } from '../config/endpoint.js';
import { z } from 'zod';
import { validate } from '../config/validate.js';
import { ConfigError } from '../errors.js';
import { MessageSchema, type Message } from '../model/messages.js';
import { DEFAULT_BUDGET } from '../tools/budget.js';
import { builtinRegistry } from '../tools/builtin.js';
import { loadDistribution } from '../tools/distributions.js';
import type { ToolRegistry } from '../tools/registry.js';
import { candidateToolsets, type ToolsetChoice } from './batch.js';
import { artifactsDirFor, storePathFor, type ExecuteRunInput } from './execute-run.js';
import type { RolloutSettings } from './rollout.js';
import type { RunConfig } from './run-config.js';
import { knowledgeFolder } from './rollout-knowledge.js';
import type { AgentConfig } from './load-run-config.js';

/** A run config's defaults, for configurations that leave them out (chat, ask). */
export const DEFAULT_MAX_TURNS = 10;
export const DEFAULT_TOOL_CONCURRENCY = 8;

/**
 * What assembles a run from its run config, shared by batch, eval and bench (and chat's system
 * prompt): the tool registry, the toolset choice, the rollout settings and the system prompt.
 */

/**
 * The registry for choosing tools on the main thread: the built-in toolsets plus the configured MCP
 * servers' toolsets, all known by name; no tool is loaded yet.
 */
export function runRegistry(config: RunConfig): ToolRegistry {
  const registry = builtinRegistry({ terminal: config.tools.terminal });
  for (const name of Object.keys(config.mcp_servers ?? {})) registry.declareToolset(`mcp:${name}`);
  return registry;
}

/**
 * The tools a run may offer: the registry, with the tools of every toolset the run may draw
 * loaded, and the toolset choice, checked before anything starts.
 */
export interface RunTools {
  registry: ToolRegistry;
  choice: ToolsetChoice;
}

export async function runTools(config: RunConfig): Promise<RunTools> {
  const registry = runRegistry(config);
  const choice = toolsetChoice(config, registry);
  await registry.load(candidateToolsets(choice));
  return { registry, choice };
}

export function toolsetChoice(
  config: RunConfig,
  registry: ToolRegistry,
  fallbackDistribution = 'default',
): ToolsetChoice {
  if (config.toolsets) {
    registry.assertToolsets(config.toolsets, '--toolsets');
    return { toolsets: config.toolsets };
  }
  return { distribution: loadDistribution(config.distribution ?? fallbackDistribution, registry) };
}

/** The agent core's settings from a configuration: the same for batch, eval, bench, ask and chat. */
export function agentSettingsFrom(config: AgentConfig, endpoint: Endpoint): AgentSettings {
  // Resolved once here so that a bad auxiliary model fails the command, not every rollout.
  resolveAuxiliary(config.tools.auxiliary, endpoint);
  return {
    endpoint,
    maxTurns: config.max_turns ?? DEFAULT_MAX_TURNS,
    systemPrompt: systemPromptFrom(config),
    budget: { ...DEFAULT_BUDGET, ...config.budget },
    toolConcurrency: config.tool_concurrency ?? DEFAULT_TOOL_CONCURRENCY,
    tools: config.tools,
    ...(config.compression ? { compression: config.compression } : {}),
    ...(config.tokenizer ? { tokenizer: config.tokenizer } : {}),
    ...(config.pricing ? { pricing: config.pricing } : {}),
  };
}

/** A run's rollout settings: the agent's, plus what a run adds (sandbox, knowledge, caches, limits). */
export function rolloutSettings(
  config: RunConfig,
  endpoint: RolloutSettings['endpoint'],
  extra: Partial<RolloutSettings> = {},
): RolloutSettings {
  return {
    ...agentSettingsFrom(config, endpoint),
    run: config.run,
    ...runTimePromptFrom(config),
    sandbox: {
      kind: config.sandbox,
      image: config.image,
      workdir: config.workdir,
      docker: config.docker,
      local: config.local,
    },
    agent: 'model',
    rolloutTimeoutMs: config.rollout_timeout ? config.rollout_timeout * 1000 : undefined,
    mcpServers: config.mcp_servers,
    ...(config.memory ? { memory: knowledgeFolder(config.memory, '--memory') } : {}),
    ...(config.skills?.length
      ? {
          skills: config.skills.map((folder) => knowledgeFolder(folder, '--skills')),
          skillsWritable: config.skills_writable,
        }
      : {}),
    artifactsDir: artifactsDirFor(config.checkpoints, config.run),
    webCache: { path: storePathFor(config.checkpoints, config.run), mode: config.web_cache },
    ...extra,
  };
}

/** The system prompt text: `system_prompt` itself, or the file `system` names. */
export function systemPromptFrom(config: Pick<AgentConfig, 'system' | 'system_prompt'>): string | undefined {
  if (config.system_prompt !== undefined) return config.system_prompt;
  if (!config.system) return undefined;
  try {
    return readFileSync(config.system, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `--system ${config.system}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      { code: 'config_missing' },
    );
  }
}

/** The run-time-only prompt material: the ephemeral system prompt and the prefill messages, checked. */
export function runTimePromptFrom(config: RunConfig): { ephemeralSystemPrompt?: string; prefill?: Message[] } {
  const result: { ephemeralSystemPrompt?: string; prefill?: Message[] } = {};
  if (config.ephemeral_system_prompt?.trim()) result.ephemeralSystemPrompt = config.ephemeral_system_prompt;
  if (config.prefill === undefined) return result;
  let text: string;
  try {
    text = readFileSync(config.prefill, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `--prefill ${config.prefill}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      { code: 'config_missing' },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `--prefill ${config.prefill}: not JSON (${errorText(error)}); expected an array of {"role", "content"} messages`,
      { code: 'config_invalid' },
    );
  }
  result.prefill = validate(z.array(MessageSchema).min(1, 'give at least one message'), parsed, config.prefill);
  return result;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * What a command passes through a run flow (runBatch, runEnvironment) to executeRun: pool size,
 * retries, filters, signals, progress. The flow sets the rest itself.
 */
export type RunControls = Omit<
  ExecuteRunInput,
  | 'kind'
  | 'run'
  | 'checkpointsDir'
  | 'outDir'
  | 'endpoint'
  | 'settings'
  | 'fingerprintParts'
  | 'config'
  | 'force'
  | 'entries'
  | 'callsModel'
  | 'images'
  | 'onStart'
  | 'afterPipeline'
>;
