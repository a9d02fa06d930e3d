import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { errorMessage, SandboxError } from '../errors.js';
import type { DockerSandboxConfig } from './docker-config.js';
import { engineStatus, withEngineRetry } from './docker-engine.js';
import type { SidecarService } from './sandbox.js';

export type { SidecarService } from './sandbox.js';

/** The sidecars of one sandbox and the network they share with its main container. */
export interface ServiceGroup {
  network: string;
  remove(): Promise<void>;
}

/**
 * A private network for the sandbox (internal — no route out — when the sandbox has no
 * network), with each sidecar started on it under its service name, so the main container
 * reaches `db:5432` as under Compose. Everything carries traj's labels: the prune removes a
 * killed run's sidecars and networks like its containers.
 */
export async function startServices(
  docker: Docker,
  services: readonly SidecarService[],
  config: DockerSandboxConfig,
  labels: Record<string, string>,
): Promise<ServiceGroup> {
  const name = `traj-${randomBytes(6).toString('hex')}`;
  const network = await withEngineRetry(() =>
    docker.createNetwork({ Name: name, Internal: config.network === 'none', Labels: labels }),
  );
  const started: Docker.Container[] = [];
  const remove = async () => {
    await Promise.all(started.map((container) => container.remove({ force: true, v: true }).catch(() => {})));
    await network.remove().catch((error: unknown) => {
      if (engineStatus(error) !== 404) throw error;
    });
  };
  try {
    for (const service of services) started.push(await startSidecar(docker, service, name, config, labels));
  } catch (error) {
    await remove().catch(() => {});
    throw error;
  }
  return { network: name, remove };
}

async function startSidecar(
  docker: Docker,
  service: SidecarService,
  network: string,
  config: DockerSandboxConfig,
  labels: Record<string, string>,
): Promise<Docker.Container> {
  let container: Docker.Container | undefined;
  try {
    container = await withEngineRetry(() =>
      docker.createContainer({
        Image: service.image,
        ...(service.command ? { Cmd: service.command } : {}),
        Env: Object.entries(service.environment ?? {}).map(([key, value]) => `${key}=${value}`),
        Labels: { ...labels, 'traj.service': service.name },
        HostConfig: { Init: true, NetworkMode: network, PidsLimit: config.pids_limit },
        NetworkingConfig: { EndpointsConfig: { [network]: { Aliases: [service.name] } } },
      }),
    );
    await withEngineRetry(() => container!.start());
    return container;
  } catch (error) {
    await container?.remove({ force: true }).catch(() => {});
    throw new SandboxError(
      `cannot start the '${service.name}' service (image ${service.image}) of docker-compose.yaml: ${errorMessage(error)}`,
      { code: 'start_failed', retryable: true, cause: error },
    );
  }
}
