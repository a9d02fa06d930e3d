import { loadAgentDefinition, type AgentDefinition } from '../bridge/index.js';
import { ConfigError } from '../errors.js';
import { EVAL_AGENTS, type EvalAgent } from '../run/stored-eval.js';
import { stringOption, type ParsedCommand } from './command.js';

/** --agent: traj's own agent, a reference agent, or an agent CLI's definition (loaded and checked now). */
export function agentOption(values: ParsedCommand['values']): { agent: EvalAgent; agentCli?: AgentDefinition } {
  const agent = stringOption(values, 'agent') ?? 'model';
  if ((EVAL_AGENTS as readonly string[]).includes(agent)) return { agent: agent as EvalAgent };
  return { agent: 'cli', agentCli: loadAgentDefinition(agent) };
}

/**
 * `traj batch --agent`: traj's own agent (model) or an agent CLI. The reference agents need an
 * environment to hold a solution and a reward to check it, which a prompt dataset has not.
 */
export function batchAgentOption(values: ParsedCommand['values']): AgentDefinition | undefined {
  const { agent, agentCli } = agentOption(values);
  if (agent === 'noop' || agent === 'oracle')
    throw new ConfigError(
      `traj batch --agent ${agent}: the reference agents check an environment's rewards (traj eval, traj bench); a batch runs --agent model or an agent CLI (qwen-code, codex, claude-code, or a YAML file)`,
      { code: 'cli_usage' },
    );
  return agentCli;
}
