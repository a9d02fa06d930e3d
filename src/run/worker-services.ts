import { createModelClient } from '../model/client.js';
import type { ModelClient } from '../model/types.js';
import { createSandbox } from '../sandbox/index.js';
import { createToolRegistry } from '../tools/builtin.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { RolloutServices, RolloutSettings } from './rollout.js';

/**
 * The services of one thread (a piscina worker, or the main thread for `traj ask`): model clients
 * and tool registries are built once and shared by every rollout the thread runs.
 */
export function createThreadServices(): RolloutServices & { close(): Promise<void> } {
  const models = new Map<string, ModelClient>();
  let registry: Promise<ToolRegistry> | undefined;
  return {
    model(settings: RolloutSettings) {
      const id = JSON.stringify(settings.endpoint);
      let client = models.get(id);
      if (!client) {
        client = createModelClient(settings.endpoint);
        models.set(id, client);
      }
      return client;
    },
    registry(settings: RolloutSettings, toolsets: readonly string[]) {
      void settings;
      void toolsets;
      registry ??= Promise.resolve(createToolRegistry());
      return registry;
    },
    createSandbox: (options) => createSandbox(options),
    async close() {
    },
  };
}
