import pLimit from 'p-limit';
import { toolServicesFor } from '../agent/agent-settings.js';
import type { Endpoint } from '../config/endpoint.js';
import type { Pricing } from '../config/pricing.js';
import { createModelClient, type ModelClientOptions } from '../model/client.js';
import type { ModelClient } from '../model/types.js';
import { createSandbox } from '../sandbox/index.js';
import { closeWarmPools } from '../sandbox/docker-warm-pool.js';
import { closeSpawner } from '../sandbox/spawner.js';
import { closeBrowserEngines } from '../tools/browser/engine.js';
import { builtinRegistry } from '../tools/builtin.js';
import type { McpClientPool } from '../tools/mcp/client-pool.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ToolServices } from '../tools/services.js';
import type { RolloutServices, RolloutSettings } from './rollout.js';

export interface TeardownLimits {
  /** Teardowns running at once in a thread. */
  atOnce: number;
  /** Teardowns waiting or running past which a rollout waits for its own. */
  mostPending: number;
}

/**
 * Namespace teardowns running together contend in the kernel: in `batch-1000x3` (one thread, 64
 * in flight) 2–4 at once finished in 33.4–34.2 s, unlimited in 34.4–35.0 s. Waiting sandboxes
 * still hold their folders, namespaces or containers, so past `mostPending` rollouts wait again.
 */
const TEARDOWN_LIMITS: TeardownLimits = { atOnce: 4, mostPending: 64 };

export interface ThreadServices extends RolloutServices {
  /**
   * Import the built-in tools of `toolsets` (a rollout's `registry` call does too): a pool thread
   * does it before pacing a rollout's start, see worker.ts.
   */
  loadTools(settings: RolloutSettings, toolsets: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * The services of one thread (a piscina worker, or the main thread for `traj ask`): model clients,
 * the tool registry and MCP server connections are built once and shared by every rollout the
 * thread runs. MCP servers start lazily, only when a rollout draws their toolset.
 */
export function createThreadServices(
  options: Pick<ModelClientOptions, 'onRetry'> & {
    /**
     * Rollouts hand their teardown to the services (see RolloutServices.deferTeardown) and close()
     * waits for them: a pool thread's slots then do not wait for a namespace or a folder to go.
     * The numbers are for tests; pool threads take the defaults.
     */
    deferTeardowns?: boolean | Partial<TeardownLimits>;
  } = {},
): ThreadServices {
  const models = new Map<string, ModelClient>();
  const teardowns = new Set<Promise<void>>();
  const limits = { ...TEARDOWN_LIMITS, ...(typeof options.deferTeardowns === 'object' ? options.deferTeardowns : {}) };
  const teardownSlots = pLimit(limits.atOnce);
  // One registry per terminal mode (the settings of a run choose one; a thread may serve several runs).
  const registries = new Map<boolean, ToolRegistry>();
  let mcpPool: McpClientPool | undefined;
  const clientFor = (endpoint: Endpoint, pricing: Pricing | undefined): ModelClient => {
    // The model's price is part of the client: a thread serving two runs keeps each run's prices.
    const id = JSON.stringify([endpoint, pricing?.[endpoint.model] ?? null]);
    let client = models.get(id);
    if (!client) {
      client = createModelClient(endpoint, { ...options, pricing });
      models.set(id, client);
    }
    return client;
  };
  const builtins = async (settings: RolloutSettings, toolsets: readonly string[]): Promise<ToolRegistry> => {
    const { persistent } = settings.tools.terminal;
    let registry = registries.get(persistent);
    if (!registry) {
      registry = builtinRegistry({ terminal: { persistent } });
      registries.set(persistent, registry);
    }
    return registry.load(toolsets);
  };
  return {
    model: (settings: RolloutSettings) => clientFor(settings.endpoint, settings.pricing),
    tools: (settings: RolloutSettings): ToolServices =>
      toolServicesFor(settings, (endpoint) => clientFor(endpoint, settings.pricing)),
    async loadTools(settings: RolloutSettings, toolsets: readonly string[]) {
      await builtins(settings, toolsets);
    },
    async registry(settings: RolloutSettings, toolsets: readonly string[]) {
      const registry = await builtins(settings, toolsets);
      if (toolsets.some((toolset) => toolset.startsWith('mcp:'))) {
        const mcp = await import('../tools/mcp/index.js');
        mcpPool ??= new mcp.McpClientPool();
        await mcp.attachMcpServers(registry, settings.mcpServers ?? {}, mcpPool, toolsets);
      }
      return registry;
    },
    async mcpTools(servers: unknown, where: string) {
      const mcp = await import('../tools/mcp/index.js');
      mcpPool ??= new mcp.McpClientPool();
      return mcp.environmentMcpTools(mcp.parseMcpServers(servers, where), mcpPool);
    },
    createSandbox: (options) => createSandbox(options),
    ...(options.deferTeardowns
      ? {
          deferTeardown(teardown: () => Promise<void>) {
            const settled = teardownSlots(teardown)
              .catch(() => {})
              .finally(() => teardowns.delete(settled));
            teardowns.add(settled);
            return teardowns.size > limits.mostPending ? settled : undefined;
          },
        }
      : {}),
    async close() {
      // Sandboxes first: their namespaces run through the spawn host closed below.
      await Promise.all([...teardowns]);
      await Promise.all([mcpPool?.closeAll(), closeSpawner(), closeBrowserEngines(), closeWarmPools()]);
    },
  };
}
