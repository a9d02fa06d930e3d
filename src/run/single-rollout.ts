import type { AgentSettings } from '../agent/agent-settings.js';
import { loadToolRegistry } from '../tools/builtin.js';
import { availabilityContext } from './batch.js';
import { executeRollout, type RolloutOutcome, type RolloutServices, type RolloutSettings } from './rollout.js';
import { createThreadServices } from './worker-services.js';

export interface SingleRolloutInput {
  prompt: string;
  toolsets: string[];
  /** The agent's settings, built like every other surface's (run-setup.ts agentSettingsFrom). */
  settings: AgentSettings;
  sandbox: RolloutSettings['sandbox'];
  /** What the rollout's tools run on, made from this thread's services (traj ask: the terminal behind an approver). */
  services?: (services: RolloutServices) => RolloutServices;
  /** A tool of the asked toolsets that cannot be offered here, and why. */
  onUnavailable?: (tool: { name: string; toolset: string; reason: string }) => void;
  signal: AbortSignal;
}

/** One prompt through one rollout on this thread (`traj ask`): no run store, no pool, nothing recorded. */
export async function runSingleRollout(input: SingleRolloutInput): Promise<RolloutOutcome> {
  const registry = await loadToolRegistry({ toolsets: input.toolsets });
  for (const tool of registry.unavailableTools(input.toolsets, availabilityContext(input.settings)))
    input.onUnavailable?.(tool);
  const threadServices = createThreadServices();
  const services = input.services ? input.services(threadServices) : threadServices;
  try {
    return await executeRollout(
      {
        key: 'ask',
        sample: 0,
        toolsets: input.toolsets,
        messages: [{ role: 'user', content: input.prompt }],
        settings: { ...input.settings, run: 'ask', sandbox: input.sandbox, agent: 'model' },
      },
      services,
      input.signal,
    );
  } finally {
    await threadServices.close();
  }
}
