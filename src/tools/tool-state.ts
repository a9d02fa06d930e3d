/**
 * Per-rollout tool state (`ToolContext.state`) may hold resources that outlive a call: a browser
 * context, say. Whoever owns the state (a rollout, a chat session) disposes it when it ends, on
 * every path: done, aborted, timed out, interrupted.
 */
export interface ToolResource {
  dispose(): Promise<void>;
}

function isResource(value: unknown): value is ToolResource {
  return typeof value === 'object' && value !== null && typeof (value as { dispose?: unknown }).dispose === 'function';
}

/**
 * Dispose every resource in the state and drop it; never throws (a failing close must not hide the rollout's result).
 */
export async function disposeToolState(state: Map<string, unknown>): Promise<void> {
  const resources = [...state.entries()].filter(([, value]) => isResource(value));
  for (const [key] of resources) state.delete(key);
  await Promise.all(resources.map(([, value]) => (value as ToolResource).dispose().catch(() => undefined)));
}
