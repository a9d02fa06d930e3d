import { serializeError, type SerializedError } from '../errors.js';
import { buildRecord } from '../trajectory/build-record.js';
import type { TrajectoryRecord } from '../trajectory/record.js';
import type { RolloutOutcome, RolloutSettings, RolloutTask } from './rollout.js';
import { Semaphore } from './semaphore.js';
import type { ErrorClass, ItemStatus, RunStore } from './store.js';

/** One rollout to run: the key it is stored under and everything the worker needs. */
export interface WorkItem {
  key: string;
  sample: number;
  rowIndex: number | null;
  group: string | null;
  task: Omit<RolloutTask, 'key' | 'sample' | 'settings'>;
  source: TrajectoryRecord['source'];
}

export interface BadRowEntry {
  bad: true;
  line: number;
  reason: string;
}

export type PipelineEntry = WorkItem | BadRowEntry;

/** Returns why a record is discarded, or undefined to keep it. */
export type RecordFilter = (record: TrajectoryRecord) => string | undefined;

export type PipelineEvent =
  | { type: 'skipped'; key: string; status: ItemStatus | 'exhausted' }
  | { type: 'dispatched'; key: string; sample: number }
  | { type: 'finished'; key: string; sample: number; status: Exclude<ItemStatus, 'pending'>; record: TrajectoryRecord | null; error?: SerializedError }
  | { type: 'interrupted'; key: string; sample: number }
  | { type: 'bad_row'; line: number; reason: string };

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
  /** The store segment of this invocation and when it started (performance.now()). */
  segment?: { id: number; startedAt: number };
  onEvent?: (event: PipelineEvent) => void;
}

export interface PipelineSummary {
  dispatched: number;
  skipped: number;
  exhausted: number;
  done: number;
  discarded: number;
  failed: number;
  interrupted: number;
  badRows: number;
  stopped: boolean;
}

/**
 * Stream entries through the pool: skip finished keys, dispatch the rest with backpressure (the
 * reader is pulled only when a slot is free), and land each result with its status in one transaction.
 */
export async function runPipeline(options: PipelineOptions): Promise<PipelineSummary> {
  const { store, runner, stop } = options;
  const summary: PipelineSummary = { dispatched: 0, skipped: 0, exhausted: 0, done: 0, discarded: 0, failed: 0, interrupted: 0, badRows: 0, stopped: false };
  const slots = new Semaphore(options.concurrency, stop);
  const inFlight = new Set<Promise<void>>();
  const emit = options.onEvent ?? (() => {});

  for await (const entry of options.entries) {
    if (stop?.aborted) break;
    if ('bad' in entry) {
      store.addBadRow(entry.line, entry.reason);
      summary.badRows++;
      emit({ type: 'bad_row', line: entry.line, reason: entry.reason });
      continue;
    }
    const state = store.lookup(entry.key, entry.sample);
    if (state?.status === 'done' || state?.status === 'discarded') {
      summary.skipped++;
      emit({ type: 'skipped', key: entry.key, status: state.status });
      continue;
    }
    if (state && state.attempts >= options.maxAttempts) {
      summary.exhausted++;
      emit({ type: 'skipped', key: entry.key, status: 'exhausted' });
      continue;
    }
    if (!(await slots.acquire())) break;
    store.markDispatched(entry.key, entry.sample, entry.rowIndex, entry.task.toolsets);
    summary.dispatched++;
    emit({ type: 'dispatched', key: entry.key, sample: entry.sample });
    const rollout = runner
      .run({ ...entry.task, key: entry.key, sample: entry.sample, settings: options.settings })
      .then(
        (outcome) => land(options, entry, outcome, summary),
        (error: unknown) => landCrash(options, entry, error, summary),
      )
      .finally(() => {
        slots.release();
        inFlight.delete(rollout);
      });
    inFlight.add(rollout);
  }
  summary.stopped = Boolean(stop?.aborted);
  if (summary.stopped && inFlight.size > 0) await graceThenInterrupt(options, inFlight);
  await Promise.allSettled([...inFlight]);
  return summary;
}

async function graceThenInterrupt(options: PipelineOptions, inFlight: Set<Promise<void>>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, options.graceMs ?? 30_000);
    options.interruptNow?.addEventListener('abort', () => resolve(), { once: true });
  });
  await Promise.race([Promise.allSettled([...inFlight]), graceOver]);
  clearTimeout(timer);
  if (inFlight.size > 0) options.runner.interrupt();
}

function land(options: PipelineOptions, entry: WorkItem, outcome: RolloutOutcome, summary: PipelineSummary): void {
  const { store } = options;
  if (outcome.interrupted && !outcome.error) {
    store.release(entry.key, entry.sample);
    summary.interrupted++;
    options.onEvent?.({ type: 'interrupted', key: entry.key, sample: entry.sample });
    return;
  }
  const record = buildRecord({
    key: entry.key,
    sample: entry.sample,
    result: outcome.result,
    tools: outcome.tools,
    toolsets: entry.task.toolsets,
    model: options.settings.endpoint.model,
    source: entry.source,
    reward: outcome.reward,
    group: entry.group,
    artifacts: outcome.artifacts,
  });
  const error = outcome.error ?? (record.finish_reason === 'api_error' ? (record.error ?? undefined) : undefined);
  let status: Exclude<ItemStatus, 'pending'>;
  let errorClass: ErrorClass | null = null;
  let message: string | null = null;
  if (error) {
    status = 'failed';
    errorClass = 'infra';
    message = error.message;
    record.error = error;
  } else {
    message = (options.filters ?? []).map((filter) => filter(record)).find((reason) => reason !== undefined) ?? null;
    status = message ? 'discarded' : 'done';
    errorClass = message ? 'filtered' : record.finish_reason === 'stop' ? null : 'agent';
    if (!message && errorClass === 'agent') message = `finished with ${record.finish_reason}`;
  }
  store.saveResult(
    {
      key: entry.key,
      sample: entry.sample,
      status,
      record,
      errorClass,
      errorCode: error?.code ?? (status === 'discarded' ? 'filtered' : errorClass === 'agent' ? record.finish_reason : null),
      errorMessage: message,
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
}

/** A worker that died (out of memory, a native crash): the rollout is failed as infra and retried later. */
function landCrash(options: PipelineOptions, entry: WorkItem, error: unknown, summary: PipelineSummary): void {
  const serialized = serializeError(error);
  options.store.saveResult(
    { key: entry.key, sample: entry.sample, status: 'failed', record: null, errorClass: 'infra', errorCode: 'worker_crashed', errorMessage: serialized.message },
    segmentOf(options),
  );
  summary.failed++;
  options.onEvent?.({ type: 'finished', key: entry.key, sample: entry.sample, status: 'failed', record: null, error: serialized });
}

function segmentOf(options: PipelineOptions): { id: number; elapsedMs: number } | undefined {
  return options.segment ? { id: options.segment.id, elapsedMs: performance.now() - options.segment.startedAt } : undefined;
}
