import { countRequestsInto, shareGates } from '../model/concurrency.js';
import { executeRollout, type RolloutOutcome, type RolloutTask } from './rollout.js';
import type { StartPacer } from './start-pacer.js';
import type { ThreadServices } from './worker-services.js';

/**
 * One rollout as a thread runs it (a pool thread, or the main thread when one is enough): its tools
 * loaded, its start paced, its model requests counted and gated with the rest of its run's.
 */
export async function runThreadRollout(
  task: RolloutTask,
  run: { requests?: Int32Array; gates?: Record<string, SharedArrayBuffer> },
  thread: { services: ThreadServices; pacer: StartPacer },
  signal: AbortSignal,
): Promise<RolloutOutcome> {
  // Tools load before the pacer, not after it: a first wave waiting on one import would wake as
  // one and be set up all at once. A failed import is met again, and reported, by the rollout.
  await thread.services.loadTools(task.settings, task.toolsets).catch(() => undefined);
  await thread.pacer.slot();
  countRequestsInto(run.requests);
  shareGates(run.gates);
  return executeRollout(task, thread.services, signal);
}
