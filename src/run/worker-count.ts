/**
 * How many worker threads a run gets when --workers is not given. A rollout that only waits on
 * the model and on tool processes (a plain batch: no environment hooks in the thread) costs its
 * thread little CPU per model call, so one thread carries hundreds of rollouts; a second thread
 * costs start-up (loading openai, zod and the tools again) and competes with the main thread and a
 * local endpoint for the cores. Environments run setup and reward code in the thread, so those
 * runs spread over the cores as before.
 */
export interface RunShape {
  /** --workers, when given: always obeyed (bounded by the rollouts in flight); 0 runs them on the main thread. */
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

/**
 * Rollouts in flight one thread carries before a plain batch gets another thread. At 1,000 in
 * flight (`batch-4000x1-c1000`, 4 alternating runs each) one thread took 15.0 CPU-s against two
 * threads' 17.4, in the same wall time (12.2 s against 12.4 s): a second thread loads and
 * JIT-compiles the same code again and collects its own heap, while one thread was busy ~56% of the run.
 */
export const ROLLOUTS_PER_IO_THREAD = 1024;

/**
 * Rollouts in flight up to which a plain batch runs them on the main thread, beside its store:
 * one thread's worth, and when one thread is enough it is this one. That saves a thread that loads
 * openai, zod and the tools a second time and JIT-compiles the same code again, and the structured
 * clone of every task and outcome. On promptfoo's workload (500 prompts, 32 in flight, 50 ms) it
 * took the wall time from 1.22 s to 1.13 s and the CPU from 1.10 s to 0.90 s. On
 * `batch-4000x1-c1000` (1,000 in flight, 1 s endpoint, 3 alternating runs) it took the CPU from
 * 10.27 to 8.71 s, at 11.1 s of wall against 10.6 s: that workload keeps one core busy, and the
 * thread had let the store's writes run beside the rollouts. A faster endpoint at this
 * concurrency is better served by `--workers 1`.
 */
export const IN_PROCESS_ROLLOUTS = ROLLOUTS_PER_IO_THREAD;

export function chooseWorkerCount(shape: RunShape): WorkerChoice {
  const atMost = (count: number) =>
    Math.max(1, Math.min(count, shape.concurrency, shape.requestCap ?? Number.POSITIVE_INFINITY));
  if (shape.requested === 0) return { workers: 0, reason: '--workers 0' };
  if (shape.requested !== undefined) return { workers: atMost(shape.requested), reason: '--workers' };
  if (!shape.environment && shape.concurrency <= IN_PROCESS_ROLLOUTS)
    return { workers: 0, reason: `I/O-bound, at most ${IN_PROCESS_ROLLOUTS} rollouts in flight: no thread needed` };
  if (shape.environment)
    return { workers: atMost(shape.cores), reason: 'one per core: environment hooks run in the threads' };
  const workers = atMost(Math.min(shape.cores, Math.ceil(shape.concurrency / ROLLOUTS_PER_IO_THREAD)));
  return { workers, reason: `I/O-bound: one per ${ROLLOUTS_PER_IO_THREAD} rollouts in flight, at most one per core` };
}
