import pLimit from 'p-limit';
import { errorMessage, SandboxError } from '../errors.js';
import { connectDocker, engineStatus, withEngineRetry } from './docker-engine.js';
import { LABELS, ownedByThisProcess, ownerAlive } from './docker-labels.js';

export interface PruneOptions {
  /** Only containers labelled with this run name. */
  run?: string;
  /** Remove traj's containers even when their owning process still runs. */
  all?: boolean;
  /**
   * Remove the containers this very process created (its shutdown path: sandboxes held by
   * worker threads are out of reach of the main thread's registry, but carry its pid).
   */
  ownedByThisProcess?: boolean;
}

/**
 * Remove leaked traj containers: those whose owning traj process is gone (crashed, SIGKILLed),
 * optionally only of one run, or all of traj's with `all`. Returns how many this call removed.
 */
export async function pruneContainers(options: PruneOptions = {}): Promise<number> {
  const docker = await connectDocker();
  const filters = [`${LABELS.managed}=1`, ...(options.run !== undefined ? [`${LABELS.run}=${options.run}`] : [])];
  const containers = await withEngineRetry(() => docker.listContainers({ all: true, filters: { label: filters } }));
  const doomed = containers.filter((container) => {
    const labels = container.Labels ?? {};
    if (options.all) return true;
    if (options.ownedByThisProcess) return ownedByThisProcess(labels);
    return !ownerAlive(labels);
  });
  const limit = pLimit(8);
  const removed = await Promise.all(
    doomed.map((info) =>
      limit(async () => {
        try {
          await withEngineRetry(() => docker.getContainer(info.Id).remove({ force: true, v: true }), {
            alsoRetry: (error) => engineStatus(error) === 409,
          });
          return 1;
        } catch (error) {
          // Gone already, or being removed by its owner right now: not ours to count.
          if (engineStatus(error) === 404 || engineStatus(error) === 409) return 0;
          throw new SandboxError(`cannot remove leaked container ${info.Id.slice(0, 12)}: ${errorMessage(error)}`, {
            code: 'prune_failed',
            retryable: true,
            cause: error,
          });
        }
      }),
    ),
  );
  // Sidecars' networks go once their containers are gone (a network with members cannot be removed).
  await pruneNetworks(docker, filters, options);
  return removed.reduce<number>((sum, count) => sum + count, 0);
}

/** traj's private networks (of sandboxes with sidecar services) whose owner the same rule dooms. */
async function pruneNetworks(
  docker: Awaited<ReturnType<typeof connectDocker>>,
  filters: string[],
  options: PruneOptions,
): Promise<void> {
  const networks = await withEngineRetry(() => docker.listNetworks({ filters: { label: filters } }));
  for (const info of networks) {
    const labels = info.Labels ?? {};
    const doomed = options.all || (options.ownedByThisProcess ? ownedByThisProcess(labels) : !ownerAlive(labels));
    if (!doomed) continue;
    await docker
      .getNetwork(info.Id)
      .remove()
      .catch((error: unknown) => {
        // Gone already, or still in use by a container its live owner is removing: not ours.
        if (engineStatus(error) === 404 || engineStatus(error) === 409 || engineStatus(error) === 403) return;
        throw new SandboxError(`cannot remove leaked network ${info.Name}: ${errorMessage(error)}`, {
          code: 'prune_failed',
          retryable: true,
          cause: error,
        });
      });
  }
}
