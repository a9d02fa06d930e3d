import { randomBytes } from 'node:crypto';
import { errorMessage, SandboxError } from '../errors.js';
import { connectDocker, withEngineRetry } from '../sandbox/docker-engine.js';
import { containerLabels } from '../sandbox/docker-labels.js';

/** A rollout's own Docker network: internal (no route out), its gateway the host's address on it. */
export interface AgentNetwork {
  name: string;
  /** The host's address on the network, where the proxy listens: the only place the container can reach. */
  gateway: string;
  remove(): Promise<void>;
}

export async function createAgentNetwork(run: string, key: string): Promise<AgentNetwork> {
  const docker = await connectDocker();
  const name = `traj-agent-${randomBytes(6).toString('hex')}`;
  try {
    const network = await withEngineRetry(() =>
      docker.createNetwork({ Name: name, Driver: 'bridge', Internal: true, Labels: containerLabels(run, key) }),
    );
    const info = (await network.inspect()) as { IPAM?: { Config?: Array<{ Gateway?: string }> } };
    const gateway = info.IPAM?.Config?.[0]?.Gateway;
    if (!gateway) throw new Error('the engine gave the network no gateway address');
    return {
      name,
      gateway,
      remove: () =>
        network.remove().then(
          () => undefined,
          () => undefined,
        ),
    };
  } catch (error) {
    throw new SandboxError(`cannot create the agent's network: ${errorMessage(error)}`, {
      code: 'agent_network_failed',
      retryable: true,
      cause: error,
    });
  }
}
