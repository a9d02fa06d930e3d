import type { Sandbox } from './sandbox.js';

/**
 * Every sandbox this process created and has not disposed yet, so a SIGINT/SIGTERM path can
 * clean up folders, process groups and containers before the process exits.
 */
const live = new Set<Sandbox>();

/** Called by a backend when a sandbox is created; the returned function unregisters it. */
export function registerLiveSandbox(sandbox: Sandbox): () => void {
  live.add(sandbox);
  return () => {
    live.delete(sandbox);
  };
}

export function liveSandboxCount(): number {
  return live.size;
}

/** Dispose every live sandbox at once; failures are returned, never thrown, so all get a try. */
export async function disposeAllSandboxes(): Promise<unknown[]> {
  const sandboxes = [...live];
  live.clear();
  const outcomes = await Promise.allSettled(sandboxes.map((sandbox) => sandbox.dispose()));
  return outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
}
