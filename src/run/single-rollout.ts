import type { Endpoint } from '../config/endpoint.js';
import { resolveAuxiliary } from '../config/auxiliary.js';
import type { ToolConfig } from '../config/tool-config.js';
import { DEFAULT_BUDGET } from '../tools/budget.js';
import { loadToolRegistry } from '../tools/builtin.js';
import { availabilityContext } from './batch.js';
import { executeRollout, type RolloutOutcome, type RolloutServices, type RolloutSettings } from './rollout.js';
import { createThreadServices } from './worker-services.js';

export interface SingleRolloutInput {
  prompt: string;
  toolsets: string[];
  endpoint: Endpoint;
  /** web:, auxiliary: and browser: (loadToolConfig). */
  toolConfig: Pick<ToolConfig, 'web' | 'auxiliary' | 'browser'>;
  maxTurns: number;
  system?: string;
  sandbox: RolloutSettings['sandbox'];
  /** What the rollout's tools run on, made from this thread's services (traj ask: the terminal behind an approver). */
  services?: (services: RolloutServices) => RolloutServices;
  /** A tool of the asked toolsets that cannot be offered here, and why. */
  onUnavailable?: (tool: { name: string; toolset: string; reason: string }) => void;
  signal: AbortSignal;
}

/** One prompt through one rollout on this thread (`traj ask`): no run store, no pool, nothing recorded. */
export async function runSingleRollout(input: SingleRolloutInput): Promise<RolloutOutcome> {
  const { endpoint } = input;
  const toolSettings = {
    web: input.toolConfig.web,
    auxiliary: resolveAuxiliary(input.toolConfig.auxiliary, endpoint),
    browser: input.toolConfig.browser,
  };
  const registry = await loadToolRegistry({ toolsets: input.toolsets });
  for (const tool of registry.unavailableTools(input.toolsets, availabilityContext({ endpoint, ...toolSettings })))
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
        system: input.system,
        settings: {
          run: 'ask',
          endpoint,
          maxTurns: input.maxTurns,
          sandbox: input.sandbox,
          budget: DEFAULT_BUDGET,
          agent: 'model',
          toolConcurrency: 8,
          ...toolSettings,
        },
      },
      services,
      input.signal,
    );
  } finally {
    await threadServices.close();
  }
}
