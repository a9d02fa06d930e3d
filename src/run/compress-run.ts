import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Endpoint } from '../config/endpoint.js';
import { errorMessage, isTrajError, RunError } from '../errors.js';
import { createModelClient } from '../model/client.js';
import type { ModelClient } from '../model/types.js';
import { loadChatTokenizer } from '../tokens/index.js';
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
import { diffFingerprint, RunStore, type ShapingTotals } from './store.js';

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
}

/** Faults of the run, not of one record: dispatch stops and the command fails; a rerun goes on. */
const RUN_LEVEL = new Set(['model_auth', 'model_not_found', 'model_unreachable', 'model_rate_limited']);

/**
 * `traj compress`: fit every done record of a run to a token budget (see compress-record.ts),
 * `concurrency` records at a time, each result stored beside the run in one transaction. A rerun
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
  const tokenizer = await loadChatTokenizer(input.tokenizer);
  const store = RunStore.open(input.storePath);
  try {
    store.acquireLock();
    useSpec(store, spec, input.force === true);
    const model = createModelClient(summarizerEndpoint(input.summarizer, settings));
    const summarize = modelSummary(model);
    const outcome = await shapeAll(store, input, (record) =>
      shapeRecord(record, { ...settings, countTokens: (text) => tokenizer.encode(text).length, summarize }),
    );
    store.flush();
    const statistics = input.outputDirectory ? writeStatistics(store, input.outputDirectory) : undefined;
    if (outcome.fault) throw outcome.fault;
    return {
      run: store.meta()?.name ?? 'run',
      ...outcome.counts,
      totals: store.shapingTotals(),
      spec,
      ...(statistics ? { statistics } : {}),
    };
  } finally {
    store.releaseLock();
    store.close();
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

/** Hermes' summariser call: its temperature (0.3) and twice the summary's target as max_tokens, unless set. */
function summarizerEndpoint(endpoint: Endpoint, settings: CompressSettings): Endpoint {
  return {
    ...endpoint,
    temperature: endpoint.temperature ?? 0.3,
    max_tokens: endpoint.max_tokens ?? settings.summaryTargetTokens * 2,
  };
}

function modelSummary(model: ModelClient): SummaryCall {
  return async (prompt) => {
    const response = await model.complete({ messages: [{ role: 'user', content: prompt }] });
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
  shape: (record: TrajectoryRecord) => ReturnType<typeof shapeRecord>,
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
    try {
      const { record: shaped, metrics } = await shape(record);
      store.saveShaped({ key, sample, status: 'done', record: shaped ? JSON.stringify(shaped) : null, metrics });
      counts.shaped++;
    } catch (error) {
      if (isTrajError(error) && RUN_LEVEL.has(error.code)) {
        fault ??= error;
        halt.abort();
        return;
      }
      store.saveShaped({ key, sample, status: 'failed', error: errorMessage(error), summaryCalls: 0 });
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
