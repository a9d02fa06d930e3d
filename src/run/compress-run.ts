import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Endpoint } from '../config/endpoint.js';
import { errorMessage, isTrajError, RunError } from '../errors.js';
import type { Pricing } from '../config/pricing.js';
import { createModelClient } from '../model/client.js';
import type { ModelClient } from '../model/types.js';
import {
  DEFAULT_PROTECT_LAST_TURNS,
  DEFAULT_SUMMARY_TARGET_TOKENS,
  type CompressSettings,
} from '../trajectory/compress-plan.js';
import type { TrajectoryRecord } from '../trajectory/record.js';
import { writeFileAtomically } from '../util/atomic-write.js';
import { shapeRecord, type SummaryCall } from './compress-record.js';
import { computeStatistics } from './run-statistics.js';
import { Semaphore } from './semaphore.js';
import { diffFingerprint, RunStore, type ShapingTotals, type SummaryUsage } from './store.js';
import { compressWorkers, startTokenCounter } from './token-counter.js';

export interface CompressRunInput {
  /** The run store (checkpoints/<run>.sqlite). */
  storePath: string;
  maxTokens: number;
  /** The policy's tokenizer: a Hugging Face model id or a folder with tokenizer.json. */
  tokenizer: string;
  /** `auxiliary.summarizer` filled from the main endpoint (or the main endpoint itself). */
  summarizer: Endpoint;
  /** What names the summariser in the compression's settings (the scripted endpoint's port changes every start). */
  summarizerIdentity: string;
  /** Records shaped at once: as a batch's `--concurrency`, also the cap of summary requests in flight. */
  concurrency: number;
  /** Threads counting tokens (`--workers`); default one per core, none on one core (token-counter.ts). */
  workers?: number;
  /** The run config's `pricing:`, for a summariser whose provider reports no cost. */
  pricing?: Pricing;
  summaryTargetTokens?: number;
  protectLastTurns?: number;
  /** Start over when the settings differ from the ones the store's compressed records were made with. */
  force?: boolean;
  /** Aborted on SIGINT/SIGTERM: nothing new starts; what is in flight lands. */
  stop?: AbortSignal;
  /** Where statistics.json is rewritten with the compression's totals (the run's output folder). */
  outputDirectory?: string;
  onProgress?: (progress: { done: number; total: number; failed: number }) => void;
}

export interface CompressRunSummary {
  run: string;
  /** Records this invocation set out to shape (those no earlier invocation finished). */
  todo: number;
  shaped: number;
  failed: number;
  stopped: boolean;
  /** Totals over every shaped row of the store, earlier invocations included. */
  totals: ShapingTotals | undefined;
  spec: Record<string, unknown>;
  statistics?: string;
  /** Threads that counted tokens (0: the main thread). */
  workers: number;
}

/** Faults of the run, not of one record: dispatch stops and the command fails; a rerun goes on. */
const RUN_LEVEL = new Set(['model_auth', 'model_not_found', 'model_unreachable', 'model_rate_limited']);

/**
 * `traj compress`: fit every done record of a run to a token budget (see compress-record.ts),
 * `concurrency` records at a time (their tokens counted on worker threads, token-counter.ts), each
 * result stored beside the run in its own transaction as it finishes, its summaries' cost added to the run's spend. A rerun
 * shapes only what did not land (exactly once per record); other settings are refused unless forced.
 */
export async function compressRun(input: CompressRunInput): Promise<CompressRunSummary> {
  if (!existsSync(input.storePath))
    throw new RunError(`no run store at ${input.storePath}`, { code: 'store_not_found' });
  const settings: CompressSettings = {
    maxTokens: input.maxTokens,
    summaryTargetTokens: input.summaryTargetTokens ?? DEFAULT_SUMMARY_TARGET_TOKENS,
    protectLastTurns: input.protectLastTurns ?? DEFAULT_PROTECT_LAST_TURNS,
  };
  const spec = shapingSpecOf(input, settings);
  const counter = await startTokenCounter(input.tokenizer, compressWorkers(input.workers, input.concurrency));
  const store = RunStore.open(input.storePath);
  try {
    store.acquireLock();
    useSpec(store, spec, input.force === true);
    store.startSpendCounter();
    const model = createModelClient(
      summarizerEndpoint(input.summarizer, settings, input.concurrency),
      input.pricing ? { pricing: input.pricing } : {},
    );
    const outcome = await shapeAll(
      store,
      input,
      (record, summarize) =>
        shapeRecord(record, { ...settings, countTokens: (texts) => counter.count(texts), summarize }),
      modelSummary(model),
    );
    store.flush();
    const statistics = input.outputDirectory ? writeStatistics(store, input.outputDirectory) : undefined;
    if (outcome.fault) throw outcome.fault;
    return {
      run: store.meta()?.name ?? 'run',
      ...outcome.counts,
      totals: store.shapingTotals(),
      spec,
      workers: counter.workers,
      ...(statistics ? { statistics } : {}),
    };
  } finally {
    store.releaseLock();
    store.close();
    await counter.close();
  }
}

function shapingSpecOf(input: CompressRunInput, settings: CompressSettings): Record<string, unknown> {
  return {
    max_tokens: settings.maxTokens,
    tokenizer: input.tokenizer,
    summarizer: { model: input.summarizer.model, base_url: input.summarizerIdentity },
    summary_target_tokens: settings.summaryTargetTokens,
    protect_last_turns: settings.protectLastTurns,
  };
}

/** The store's compression settings must be these, or be replaced by them with `force`. */
function useSpec(store: RunStore, spec: Record<string, unknown>, force: boolean): void {
  const existing = store.shapingSpec();
  if (existing === undefined || force) return store.setShapingSpec(spec);
  const changes = diffFingerprint(existing, spec);
  if (changes.length === 0) return;
  throw new RunError(
    `run store ${store.path} was compressed with other settings:\n  ${changes.join('\n  ')}\n` +
      'run with the same settings to finish that compression, or add --force to compress every record again with these',
    { code: 'compress_changed', details: { changes } },
  );
}

/**
 * Hermes' summariser call: its temperature (0.3) and twice the summary's target as max_tokens, unless
 * set. The endpoint's gate (model/concurrency.ts) caps its requests in flight at its `concurrency`,
 * never above the records in flight, as a batch's run gate does (run-gate.ts).
 */
function summarizerEndpoint(endpoint: Endpoint, settings: CompressSettings, concurrency: number): Endpoint {
  return {
    ...endpoint,
    concurrency: Math.min(endpoint.concurrency ?? concurrency, Math.max(1, concurrency)),
    temperature: endpoint.temperature ?? 0.3,
    max_tokens: endpoint.max_tokens ?? settings.summaryTargetTokens * 2,
  };
}

/** The summariser as one record's shaping calls it, adding each call's usage to the record's. */
type RecordSummary = (usage: SummaryUsage) => SummaryCall;

function modelSummary(model: ModelClient): RecordSummary {
  return (usage) => async (prompt) => {
    const response = await model.complete({ messages: [{ role: 'user', content: prompt }] });
    usage.summary_prompt_tokens += response.usage.prompt_tokens;
    usage.summary_completion_tokens += response.usage.completion_tokens;
    if (response.usage.cost !== null) usage.summary_cost_usd = (usage.summary_cost_usd ?? 0) + response.usage.cost;
    return { text: response.message.content ?? '', usage: response.usage };
  };
}

interface ShapeAllOutcome {
  counts: { todo: number; shaped: number; failed: number; stopped: boolean };
  fault?: Error;
}

async function shapeAll(
  store: RunStore,
  input: CompressRunInput,
  shape: (record: TrajectoryRecord, summarize: SummaryCall) => ReturnType<typeof shapeRecord>,
  summary: RecordSummary,
): Promise<ShapeAllOutcome> {
  const keys = store.unshapedKeys();
  const halt = new AbortController();
  const stop = input.stop ? AbortSignal.any([input.stop, halt.signal]) : halt.signal;
  const slots = new Semaphore(Math.max(1, input.concurrency), stop);
  const counts = { todo: keys.length, shaped: 0, failed: 0, stopped: false };
  let fault: Error | undefined;
  const running = new Set<Promise<void>>();
  const one = async (key: string, sample: number) => {
    const text = store.getItem(key, sample)?.record;
    const record = JSON.parse(text!) as TrajectoryRecord;
    const usage: SummaryUsage = { summary_prompt_tokens: 0, summary_completion_tokens: 0, summary_cost_usd: null };
    try {
      const { record: shaped, metrics } = await shape(record, summary(usage));
      const row = shaped ? JSON.stringify(shaped) : null;
      store.saveShaped({ key, sample, status: 'done', record: row, metrics: { ...metrics, ...usage } });
      counts.shaped++;
    } catch (error) {
      if (isTrajError(error) && RUN_LEVEL.has(error.code)) {
        fault ??= error;
        halt.abort();
        return;
      }
      store.saveShaped({ key, sample, status: 'failed', error: errorMessage(error), summaryCalls: 0, usage });
      counts.failed++;
    } finally {
      slots.release();
      input.onProgress?.({ done: counts.shaped, total: keys.length, failed: counts.failed });
    }
  };
  for (const { key, sample } of keys) {
    if (!(await slots.acquire())) break;
    const task = one(key, sample).finally(() => running.delete(task));
    running.add(task);
  }
  await Promise.all(running);
  counts.stopped = input.stop?.aborted === true;
  return { counts, ...(fault ? { fault } : {}) };
}

/** statistics.json with the compression's totals (`computeStatistics` reads them from the store). */
function writeStatistics(store: RunStore, directory: string): string | undefined {
  if (!existsSync(directory)) return undefined;
  const path = join(directory, 'statistics.json');
  writeFileAtomically(path, `${JSON.stringify(computeStatistics(store), null, 2)}\n`);
  return path;
}
