import type { AgentDefinition } from '../bridge/index.js';
import { ConfigError } from '../errors.js';
import type { RunConfig } from './run-config.js';

/**
 * Run settings only traj's own agent uses. An agent CLI brings its own tools and system prompt and
 * is sent the prompt's user turns alone, so in a batch, where nothing but the user sets them, one of
 * these is a mistake to report, not a setting to drop in silence. (An eval's environment sets its
 * toolsets for traj's agent; those are ignored for an agent CLI, as docs/agents.md says.)
 */
const OWN_AGENT_SETTINGS: ReadonlyArray<readonly [keyof RunConfig, string]> = [
  ['toolsets', '--toolsets'],
  ['distribution', '--distribution'],
  ['system', '--system'],
  ['system_prompt', 'system_prompt:'],
  ['ephemeral_system_prompt', '--ephemeral-system-prompt'],
  ['prefill', '--prefill'],
  ['memory', '--memory'],
  ['skills', '--skills'],
  ['skills_writable', '--skills-writable'],
];

/** An agent CLI runs in a Docker container on a network of its own; another sandbox is refused before anything runs. */
export function checkAgentCliSandbox(config: Pick<RunConfig, 'sandbox'>, definition: AgentDefinition): void {
  const problem = sandboxProblem(config, definition);
  if (problem) throw new ConfigError(problem, { code: 'cli_usage' });
}

/**
 * A batch whose policy is an agent CLI: Docker, none of traj's own agent settings, and no toolsets
 * drawn (a record's `toolsets` is [], its `tools` what the agent offered its model). Every problem
 * is reported at once.
 */
export function agentCliBatchConfig(config: RunConfig, definition: AgentDefinition): RunConfig {
  const given = OWN_AGENT_SETTINGS.filter(([key]) => isSet(config[key])).map(([, flag]) => flag);
  const one = given.length === 1;
  const problems = [
    sandboxProblem(config, definition),
    given.length > 0
      ? `--agent ${definition.name}: ${given.join(', ')} ${one ? 'is' : 'are'} for traj's own agent; the agent CLI brings its own tools and system prompt and is sent the prompt's user turns. Remove ${one ? 'it' : 'them'} (flags or the --config file; see docs/agents.md)`
      : undefined,
  ].filter((problem) => problem !== undefined);
  if (problems.length > 0) throw new ConfigError(problems.join('\n'), { code: 'cli_usage' });
  return { ...config, toolsets: [] };
}

function sandboxProblem(config: Pick<RunConfig, 'sandbox'>, definition: AgentDefinition): string | undefined {
  if (config.sandbox === 'docker') return undefined;
  return `--agent ${definition.name} runs the agent CLI in a Docker container, behind traj's recording proxy: add --sandbox docker (the run has --sandbox ${config.sandbox}; see docs/agents.md)`;
}

function isSet(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return value !== undefined && value !== false && value !== '';
}
