import { z } from 'zod';
import { resolveAuxiliary } from '../config/auxiliary.js';
import { CompressionSettingsSchema } from '../config/compression.js';
import { EndpointSchema, type Endpoint } from '../config/endpoint.js';
import { PricingSchema } from '../config/pricing.js';
import { ToolSettingsSchema } from '../config/tool-settings.js';
import { ContextLengthSchema, resolveContextLength } from '../model/context-length.js';
import type { ModelClient } from '../model/types.js';
import { loadChatTokenizer } from '../tokens/index.js';
import { BudgetSchema } from '../tools/budget.js';
import type { ToolServices } from '../tools/services.js';
import type { RunAgentOptions } from './agent-options.js';
import type { Compression } from './compression.js';
import { summarizerFor } from './summarizer.js';

/**
 * What the agent core is configured with, the same for a batch rollout, an eval, `traj ask` and a
 * chat session: the model, limits, compression and the tool settings whole. The run's rollout
 * settings extend it; a chat's settings are it plus the session's toolsets.
 */
export const AgentSettingsSchema = z.object({
  endpoint: EndpointSchema,
  maxTurns: z.number().int().positive(),
  /** The instructions part of the system prompt (DEFAULT_SYSTEM_PROMPT when absent). */
  systemPrompt: z.string().optional(),
  budget: BudgetSchema,
  toolConcurrency: z.number().int().positive().default(8),
  /** Absent: the defaults (on, threshold 0.8 of the window). */
  compression: CompressionSettingsSchema.optional(),
  /** The policy's tokenizer (`tokenizer:` HF id or folder): exact request sizes for compression. */
  tokenizer: z.string().optional(),
  /** The model's window when already known (a run's preflight learned it): no server is asked. */
  contextLength: ContextLengthSchema.optional(),
  tools: ToolSettingsSchema.prefault({}),
  /** Model prices for calls whose provider reports no cost: agent, auxiliary models, judges. */
  pricing: PricingSchema.optional(),
});
export type AgentSettings = z.infer<typeof AgentSettingsSchema>;

const DEFAULT_COMPRESSION = CompressionSettingsSchema.parse({});

/** What tools reach outside services with: the tool settings whole, auxiliary models resolved against the main endpoint. */
export function toolServicesFor(
  settings: Pick<AgentSettings, 'endpoint' | 'tools'>,
  model: (endpoint: Endpoint) => ModelClient,
): ToolServices {
  return { settings: settings.tools, auxiliary: resolveAuxiliary(settings.tools.auxiliary, settings.endpoint), model };
}

export type AgentLoopOptions = Pick<
  RunAgentOptions,
  'model' | 'context' | 'maxTurns' | 'budget' | 'toolConcurrency' | 'services'
>;

/**
 * The loop options every surface gives runAgent from the same settings: the window, compression
 * (summarised by auxiliary.summarizer when set), limits and tool services. `compressions` carries a
 * chat session's earlier ones over to its next message.
 */
export async function agentLoopOptions(
  settings: AgentSettings,
  model: ModelClient,
  services: ToolServices,
  compressions?: Compression[],
): Promise<AgentLoopOptions> {
  const compression = settings.compression ?? DEFAULT_COMPRESSION;
  const window = settings.contextLength ?? (await resolveContextLength(settings.endpoint));
  const tokenizer = settings.tokenizer ? await loadChatTokenizer(settings.tokenizer) : undefined;
  return {
    model,
    context: {
      contextLength: window.tokens,
      ...(tokenizer ? { countRequest: (messages, tools) => tokenizer.countRequest(messages, tools) } : {}),
      threshold: compression.threshold,
      keepLastTurns: compression.keep_last_turns,
      ...(compression.enabled ? { summarize: summarizerFor(model, services) } : {}),
      ...(compressions ? { compressions } : {}),
    },
    maxTurns: settings.maxTurns,
    budget: settings.budget,
    toolConcurrency: settings.toolConcurrency,
    services,
  };
}
