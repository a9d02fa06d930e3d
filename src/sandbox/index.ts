import { ConfigError } from '../errors.js';
import { createLocalSandbox } from './local.js';
import type { Sandbox, SandboxOptions } from './sandbox.js';

export * from './sandbox.js';
export { createLocalSandbox, localIsolationWarning, resolveLocalIsolation, type LocalIsolation } from './local.js';
export { LocalSandboxConfigSchema, parseLocalSandboxConfig, type LocalSandboxConfig } from './local-config.js';
export { pruneSandboxFolders, type LocalPruneOptions } from './local-prune.js';
export { disposeAllSandboxes, liveSandboxCount, registerLiveSandbox } from './live-sandboxes.js';
export { isSecretName, scrubEnvironment } from './scrub-environment.js';
// Light modules: dockerode itself loads only when an engine is contacted.
export { DockerSandboxConfigSchema, parseDockerSandboxConfig, type DockerSandboxConfig } from './docker-config.js';
export { pruneContainers, type PruneOptions } from './docker-prune.js';

export const SANDBOX_KINDS = ['local', 'docker'] as const;

/** A sandbox of the requested kind; the docker backend (and dockerode) loads only when asked for. */
export async function createSandbox(options: SandboxOptions): Promise<Sandbox> {
  switch (options.kind) {
    case 'local':
      return createLocalSandbox(options);
    case 'docker':
      return (await import('./docker.js')).createDockerSandbox(options);
    default:
      throw new ConfigError(
        `unknown sandbox kind '${String((options as { kind: unknown }).kind)}'; expected one of: ${SANDBOX_KINDS.join(', ')}`,
        {
          code: 'sandbox_kind_unknown',
        },
      );
  }
}
export { LazySandbox } from './lazy-sandbox.js';
export { bwrapStatus, BwrapStatusSchema, type BwrapStatus } from './bwrap.js';
