/**
 * How many worker threads a run gets when --workers is not given. A rollout that only waits on
 * the model and on tool processes (a plain batch: no environment hooks in the thread) costs its
 * thread little CPU per model call, so one thread carries hundreds of rollouts; a second thread
 * costs start-up (loading openai, zod and the tools again) and competes with the main thread and a
 * local endpoint for the cores. Environments run setup and reward code in the thread, so those
 * runs spread over the cores as before.
 */
export interface RunShape {
  /** --workers, when given: always obeyed (bounded by the rollouts in flight). */
  requested?: number;
  /** Rollouts in flight in total (--concurrency). */
  concurrency: number;
  /** The run loads an environment module (eval/bench): setup and reward hooks run in the threads. */
  environment: boolean;
  /** CPU cores available to this process. */
  cores: number;
  /** An explicit endpoint.concurrency: no more threads than requests allowed (more could only wait on the gate). */
  requestCap?: number;
}

export interface WorkerChoice {
  workers: number;
  /** Why this many, for the start line. */
  reason: string;
}

/** Rollouts in flight one thread carries before a plain batch gets another thread. */
export const ROLLOUTS_PER_IO_THREAD = 512;

export function chooseWorkerCount(shape: RunShape): WorkerChoice {
  const atMost = (count: number) =>
    Math.max(1, Math.min(count, shape.concurrency, shape.requestCap ?? Number.POSITIVE_INFINITY));
  if (shape.requested !== undefined) return { workers: atMost(shape.requested), reason: '--workers' };
  if (shape.environment)
    return { workers: atMost(shape.cores), reason: 'one per core: environment hooks run in the threads' };
  const workers = atMost(Math.min(shape.cores, Math.ceil(shape.concurrency / ROLLOUTS_PER_IO_THREAD)));
  return { workers, reason: `I/O-bound: one per ${ROLLOUTS_PER_IO_THREAD} rollouts in flight, at most one per core` };
}
