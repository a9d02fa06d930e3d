import { DatasetError, errorMessage, isTrajError, serializeError, type SerializedError } from '../errors.js';
import { buildRecord } from '../trajectory/build-record.js';
import type { Usage } from '../model/messages.js';
import type { TrajectoryRecord } from '../trajectory/record.js';
import type { RolloutOutcome, RolloutSettings, RolloutTask } from './rollout.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { decideFailure, type FailureDecision } from './failure-policy.js';
import { Semaphore } from './semaphore.js';
import { budgetStopReason, SpendMeter, type BudgetStop } from './spend-limit.js';
import { isFinished, type ErrorClass, type ItemStatus, type RunStore } from './store.js';
import { withStoredStates } from './stored-states.js';
import type { PipelineEntry, WorkItem } from './work-item.js';

/** Returns why a record is discarded, or undefined to keep it. */
export type RecordFilter = (record: TrajectoryRecord) => string | undefined;

export type PipelineEvent =
  | { type: 'skipped'; key: string; status: ItemStatus | 'exhausted' }
  | { type: 'dispatched'; key: string; sample: number }
  | {
      type: 'finished';
      key: string;
      sample: number;
      status: Exclude<ItemStatus, 'pending'>;
      record: TrajectoryRecord | null;
      error?: SerializedError;
    }
  | { type: 'interrupted'; key: string; sample: number }
  | { type: 'bad_row'; line: number; reason: string }
  /** A model call failed and is being retried (from a worker thread): what the server said. */
  | { type: 'retrying'; message: string; attempt: number; delayMs: number }
  /** Dispatch stopped: a run-level fault, or a dataset error (in-flight rollouts still land). */
  | { type: 'halted'; reason: string };

export interface RolloutRunner {
  run(task: RolloutTask): Promise<RolloutOutcome>;
  interrupt(): void;
}

export interface PipelineOptions {
  store: RunStore;
  runner: RolloutRunner;
  settings: RolloutSettings;
  entries: AsyncIterable<PipelineEntry>;
  concurrency: number;
  maxAttempts: number;
  filters?: RecordFilter[];
  /** Aborted on the first SIGINT/SIGTERM: stop dispatching, let in-flight rollouts finish within the grace period. */
  stop?: AbortSignal;
  /** Aborted when the grace period is over (or on a second signal): interrupt what is still running. */
  interruptNow?: AbortSignal;
  graceMs?: number;
  /** Consecutive `model_unavailable` failures (nothing landing in between) that stop the run (default 5). */
  breakerThreshold?: number;
  /** The store segment of this invocation and when it started (performance.now()). */
  segment?: { id: number; startedAt: number };
  /** `--max-cost`: USD the run may spend in total (earlier invocations included); reaching it stops dispatch. */
  maxCostUsd?: number;
  onEvent?: (event: PipelineEvent) => void;
}

export interface PipelineSummary {
  dispatched: number;
  skipped: number;
  /** Failed for good before this run (attempts used up, or not retryable): skipped, but not done. */
  exhausted: number;
  done: number;
  discarded: number;
  failed: number;
  interrupted: number;
  badRows: number;
  /** Stopped by the user (SIGINT/SIGTERM). */
  stopped: boolean;
  /** The run-level fault that stopped dispatch; its prompts went back to pending. */
  runFault?: SerializedError;
  /** The dataset error (a malformed row, an unreadable file) that stopped dispatch after in-flight rollouts landed. */
  inputError?: Error;
  /**
   * `--max-cost` stopped dispatch: the limit and the run's spend (in-flight rollouts landed after the stop included).
   */
  budget?: BudgetStop;
}

/** A summary with nothing counted yet. */
export function emptyPipelineSummary(): PipelineSummary {
  return {
    dispatched: 0,
    skipped: 0,
    exhausted: 0,
    done: 0,
    discarded: 0,
    failed: 0,
    interrupted: 0,
    badRows: 0,
    stopped: false,
  };
}

/**
 * Stream entries through the pool: skip finished keys, dispatch the rest with backpressure (the
 * reader is pulled only when a slot is free), and land each result with its status in one transaction.
 * A run-level fault or a dataset error stops dispatch; rollouts in flight still land (or, after a
 * run-level fault, are interrupted and go back to pending without using an attempt).
 */
export async function runPipeline(options: PipelineOptions): Promise<PipelineSummary> {
  const { store, runner } = options;
  const summary = emptyPipelineSummary();
  const halt = new AbortController();
  const stop = options.stop ? AbortSignal.any([options.stop, halt.signal]) : halt.signal;
  const slots = new Semaphore(options.concurrency, stop);
  const inFlight = new Set<Promise<void>>();
  const emit = options.onEvent ?? (() => {});
  const context: LandingContext = {
    options,
    summary,
    breaker: new CircuitBreaker(options.breakerThreshold ?? 5),
    spend: new SpendMeter(options.maxCostUsd, store.spentUsd()),
    halt: (reason, interrupt) => {
      if (!halt.signal.aborted) {
        halt.abort();
        emit({ type: 'halted', reason });
      }
      if (interrupt) runner.interrupt();
    },
  };

  const alreadyOver = context.spend.check();
  if (alreadyOver) stopForBudget(context, alreadyOver);
  try {
    for await (const { entry, state } of withStoredStates(options.entries, store)) {
      if (stop.aborted) break;
      if ('bad' in entry) {
        store.addBadRow(entry.line, entry.reason);
        summary.badRows++;
        emit({ type: 'bad_row', line: entry.line, reason: entry.reason });
        continue;
      }
      if (isFinished(state)) {
        summary.skipped++;
        emit({ type: 'skipped', key: entry.key, status: state.status });
        continue;
      }
      if (state?.status === 'failed' && (state.attempts >= options.maxAttempts || state.retryable === 0)) {
        summary.exhausted++;
        emit({ type: 'skipped', key: entry.key, status: 'exhausted' });
        continue;
      }
      if (!(await slots.acquire())) break;
      store.markDispatched(entry.key, entry.sample, entry.rowIndex, entry.task.toolsets);
      summary.dispatched++;
      emit({ type: 'dispatched', key: entry.key, sample: entry.sample });
      let released = false;
      const rollout = runner
        .run({ ...entry.task, key: entry.key, sample: entry.sample, settings: entry.settings ?? options.settings })
        .then(
          async (outcome) => {
            if (landsAfterDispatch(context, outcome)) {
              released = true;
              slots.release();
              await nextTurn();
            }
            land(context, entry, outcome);
          },
          (error: unknown) => landCrash(context, entry, error),
        )
        .finally(() => {
          if (!released) slots.release();
          inFlight.delete(rollout);
        });
      inFlight.add(rollout);
    }
  } catch (error) {
    // A bad row (or an unreadable dataset) stops dispatch, never the rollouts already running.
    summary.inputError =
      error instanceof Error ? error : new DatasetError(errorMessage(error), { code: 'dataset_unreadable' });
    context.halt(`dataset error: ${summary.inputError.message}`, false);
  }
  // Every row may be out before the user stops: the stop must still reach what is in flight.
  await settledOrStopped([...inFlight], options.stop);
  summary.stopped = Boolean(options.stop?.aborted);
  if (summary.stopped && inFlight.size > 0) await graceThenInterrupt(options, inFlight);
  await Promise.allSettled([...inFlight]);
  return summary;
}

async function settledOrStopped(rollouts: Promise<void>[], stop: AbortSignal | undefined): Promise<void> {
  if (!stop) return;
  const stopped = untilAborted(stop);
  await Promise.race([Promise.allSettled(rollouts), stopped.aborted]);
  stopped.cancel();
}

/**
 * A clean outcome frees its slot before it lands: the next rollout is dispatched at once, and the
 * record is built and queued for the store on the next turn of the event loop. When hundreds of
 * rollouts end together (1,000 in flight), each replacement so waits for the dispatches before it,
 * not for their landings too. An outcome that can stop dispatch (an error, a spend limit) lands
 * before its slot is freed, so the stop stays exact. Until it lands its prompt is pending in the
 * store, as any rollout in flight is: a kill in between re-runs it.
 */
function landsAfterDispatch(context: LandingContext, outcome: RolloutOutcome): boolean {
  return (
    !outcome.error &&
    !outcome.interrupted &&
    outcome.result.finishReason !== 'api_error' &&
    context.options.maxCostUsd === undefined
  );
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

interface LandingContext {
  options: PipelineOptions;
  summary: PipelineSummary;
  breaker: CircuitBreaker;
  spend: SpendMeter;
  halt(reason: string, interrupt: boolean): void;
}

/** Count a rollout's spend; at the limit, dispatch stops and what is in flight still lands. */
function countSpend(context: LandingContext, usage: Usage | undefined): void {
  const stop = context.spend.add(usage);
  if (stop) stopForBudget(context, stop);
}

function stopForBudget(context: LandingContext, stop: BudgetStop): void {
  context.summary.budget = stop;
  context.halt(budgetStopReason(stop), false);
}

async function graceThenInterrupt(options: PipelineOptions, inFlight: Set<Promise<void>>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, options.graceMs ?? 30_000);
  });
  const now = untilAborted(options.interruptNow);
  await Promise.race([Promise.allSettled([...inFlight]), graceOver, now.aborted]);
  clearTimeout(timer);
  now.cancel();
  if (inFlight.size > 0) options.runner.interrupt();
}

/**
 * Resolves when `signal` aborts, at once when it already has (SIGTERM aborts the stop and the
 * interrupt together, and an aborted signal fires no event); never without one. `cancel` drops the listener.
 */
function untilAborted(signal: AbortSignal | undefined): { aborted: Promise<void>; cancel(): void } {
  let onAbort = () => {};
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve;
    if (signal?.aborted) resolve();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
  return { aborted, cancel: () => signal?.removeEventListener('abort', onAbort) };
}

/** Back to pending without using an attempt: the rollout was cut off, it did not fail. */
function release(context: LandingContext, entry: WorkItem): void {
  context.options.store.release(entry.key, entry.sample);
  context.summary.interrupted++;
  context.options.onEvent?.({ type: 'interrupted', key: entry.key, sample: entry.sample });
}

/**
 * Stop the run for a run-level fault: no more dispatch, in-flight rollouts interrupted, the streak's attempts given
 * back.
 */
function tripBreaker(
  context: LandingContext,
  error: SerializedError,
  streak: readonly { key: string; sample: number }[],
): void {
  context.summary.runFault ??= error;
  for (const item of streak) {
    context.options.store.refund(item.key, item.sample);
    context.summary.failed--;
    context.summary.interrupted++;
  }
  context.halt(`run-level fault ${error.code}: ${error.message}`, true);
}

function land(context: LandingContext, entry: WorkItem, outcome: RolloutOutcome): void {
  const { options, summary } = context;
  const { store } = options;
  if (outcome.interrupted && !outcome.error) {
    // Cut off, yet its calls were made: their cost is spent (the record is not kept).
    store.addSpend(outcome.result.usage.cost ?? 0);
    countSpend(context, outcome.result.usage);
    return release(context, entry);
  }
  const record = buildRecord({
    key: entry.key,
    sample: entry.sample,
    result: outcome.result,
    tools: outcome.tools,
    toolsets: entry.task.toolsets,
    model: (entry.settings ?? options.settings).endpoint.model,
    source: entry.source,
    reward: outcome.reward,
    group: entry.group,
    artifacts: outcome.artifacts,
  });
  const error = outcome.error ?? (record.finish_reason === 'api_error' ? (record.error ?? undefined) : undefined);
  const decision = error ? decideFailure(error) : undefined;
  // After a run-level fault, what ends in an error was cut off by the stop, not failed on its own.
  if (error && (decision!.action === 'run_fault' || context.summary.runFault)) {
    if (decision!.action === 'run_fault') context.summary.runFault ??= error;
    store.addSpend(record.usage.cost ?? 0);
    context.spend.add(record.usage);
    release(context, entry);
    context.halt(`run-level fault ${error.code}: ${error.message}`, true);
    return;
  }
  const { status, errorClass, errorCode, message } = resultStatus(record, error, decision, options.filters ?? []);
  if (status === 'failed') record.error = error!;
  store.saveResult(
    {
      key: entry.key,
      sample: entry.sample,
      status,
      record,
      errorClass,
      errorCode,
      errorMessage: message,
      retryable: decision?.action === 'retry',
      reward: record.reward,
      finishReason: record.finish_reason,
      durationMs: record.timing.duration_ms,
      judgeCache: outcome.judgeCache,
      webCache: outcome.webCache,
      webCounts: outcome.webCounts,
    },
    segmentOf(options),
  );
  summary[status]++;
  options.onEvent?.({ type: 'finished', key: entry.key, sample: entry.sample, status, record, error });
  countSpend(context, record.usage);
  const tripped = context.breaker.observe(status === 'failed' ? errorCode : null, entry);
  if (tripped) tripBreaker(context, error!, tripped);
}

interface ResultStatus {
  status: Exclude<ItemStatus, 'pending'>;
  errorClass: ErrorClass | null;
  errorCode: string | null;
  message: string | null;
}

/**
 * How a landed rollout is stored: failed (infra or input), discarded by a filter, or done (an agent outcome is done
 * too).
 */
function resultStatus(
  record: TrajectoryRecord,
  error: SerializedError | undefined,
  decision: FailureDecision | undefined,
  filters: RecordFilter[],
): ResultStatus {
  if (error && decision && decision.action !== 'agent') {
    return {
      status: 'failed',
      errorClass: decision.errorClass === 'input' ? 'input' : 'infra',
      errorCode: error.code,
      message: error.message,
    };
  }
  const filtered = filters.map((filter) => filter(record)).find((reason) => reason !== undefined);
  if (filtered) return { status: 'discarded', errorClass: 'filtered', errorCode: 'filtered', message: filtered };
  if (record.finish_reason === 'stop' && !error)
    return { status: 'done', errorClass: null, errorCode: null, message: null };
  return {
    status: 'done',
    errorClass: 'agent',
    errorCode: error?.code ?? record.finish_reason,
    message: error?.message ?? `finished with ${record.finish_reason}`,
  };
}

/** A worker that died (out of memory, a native crash): the rollout is failed as infra and retried later. */
function landCrash(context: LandingContext, entry: WorkItem, error: unknown): void {
  const { options } = context;
  const serialized = isTrajError(error)
    ? serializeError(error)
    : { ...serializeError(error), code: 'worker_crashed', retryable: true };
  if (context.summary.runFault) return release(context, entry);
  options.store.saveResult(
    {
      key: entry.key,
      sample: entry.sample,
      status: 'failed',
      record: null,
      errorClass: 'infra',
      errorCode: 'worker_crashed',
      errorMessage: serialized.message,
      retryable: true,
    },
    segmentOf(options),
  );
  context.summary.failed++;
  options.onEvent?.({
    type: 'finished',
    key: entry.key,
    sample: entry.sample,
    status: 'failed',
    record: null,
    error: serialized,
  });
}

function segmentOf(options: PipelineOptions): { id: number; elapsedMs: number } | undefined {
  return options.segment
    ? { id: options.segment.id, elapsedMs: performance.now() - options.segment.startedAt }
    : undefined;
}
