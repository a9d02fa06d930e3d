import { join, resolve } from 'node:path';
import type { Endpoint } from '../config/endpoint.js';
import { writeRunOutputs, type RunOutputs } from './outputs.js';
import { runPipeline, type PipelineEntry, type PipelineEvent, type PipelineSummary, type RecordFilter } from './pipeline.js';
import { RolloutPool } from './pool.js';
import type { RolloutSettings } from './rollout.js';
import { RunStore } from './store.js';

export interface RunStartInfo {
  storePath: string;
  workers: number;
  concurrency: number;
  fingerprintChanges: string[];
  alreadyFinished: number;
}

export interface ExecuteRunInput {
  kind: 'batch' | 'eval' | 'bench';
  run: string;
  checkpointsDir: string;
  outDir?: string;
  endpoint: Endpoint;
  settings: RolloutSettings;
  /** Settings whose change makes a resume a different run. */
  fingerprintParts: Record<string, unknown>;
  config: Record<string, unknown>;
  force: boolean;
  /** Built once the store is open, so the stream can consult it (e.g. counters). */
  entries: (store: RunStore) => AsyncIterable<PipelineEntry>;
  filters: RecordFilter[];
  workers?: number;
  concurrency: number;
  maxAttempts: number;
  graceMs: number;
  stop?: AbortSignal;
  interruptNow?: AbortSignal;
  onStart?: (info: RunStartInfo) => void;
  /** Warnings the user must see once (e.g. local sandboxes running without bubblewrap). */
  onWarning?: (line: string) => void;
  onEvent?: (event: PipelineEvent) => void;
  /** After the rollouts, before outputs are written (eval: advantages, report). */
  afterPipeline?: (store: RunStore) => Promise<void> | void;
}

export interface ExecuteRunResult {
  summary: PipelineSummary;
  outputs: RunOutputs;
  storePath: string;
}

export function storePathFor(checkpointsDir: string, run: string): string {
  return resolve(checkpointsDir, `${run}.sqlite`);
}

/** The pipeline shared by batch, eval and bench: store → pool → pipeline → outputs. */
export async function executeRun(input: ExecuteRunInput): Promise<ExecuteRunResult> {
  const storePath = storePathFor(input.checkpointsDir, input.run);
  const store = RunStore.open(storePath);
  try {
    const { changes } = store.initRun({ name: input.run, kind: input.kind, config: input.config, fingerprintParts: input.fingerprintParts, force: input.force });
    if (input.settings.sandbox.kind === 'docker') await pruneDockerLeftovers(input.run);
    else await prepareLocalSandboxes(input);
    const pool = new RolloutPool({ workers: input.workers, concurrency: input.concurrency });
    const alreadyFinished = (store.db.prepare(`SELECT COUNT(*) FROM items WHERE status IN ('done','discarded')`).pluck().get() as number) ?? 0;
    input.onStart?.({ storePath, workers: pool.workers, concurrency: input.concurrency, fingerprintChanges: changes, alreadyFinished });
    const segmentId = store.startSegment();
    const started = performance.now();
    let summary: PipelineSummary;
    try {
      summary = await runPipeline({
        store,
        runner: pool,
        settings: input.settings,
        entries: input.entries(store),
        concurrency: input.concurrency,
        maxAttempts: input.maxAttempts,
        filters: input.filters,
        stop: input.stop,
        interruptNow: input.interruptNow,
        graceMs: input.graceMs,
        segment: { id: segmentId, startedAt: started },
        onEvent: input.onEvent,
      });
    } finally {
      store.endSegment(segmentId, performance.now() - started, input.stop?.aborted ? 'interrupted' : 'finished');
      await pool.close();
      // Rollouts dispose their own containers; this catches any a worker thread could not.
      if (input.settings.sandbox.kind === 'docker') await pruneDockerLeftovers(input.run, true);
    }
    await input.afterPipeline?.(store);
    const outputs = writeRunOutputs(store, input.outDir ?? join('datasets', input.run));
    return { summary, outputs, storePath };
  } finally {
    store.close();
  }
}

/**
 * Folders killed invocations left behind (any run's: a dead owner's folder is nobody's), and the
 * isolation check: an error for `isolation: bwrap` without bubblewrap, a warning for the fallback.
 */
async function prepareLocalSandboxes(input: ExecuteRunInput): Promise<void> {
  const { localIsolationWarning, pruneSandboxFolders } = await import('../sandbox/index.js');
  await pruneSandboxFolders();
  const warning = await localIsolationWarning(input.settings.sandbox.local);
  if (warning) input.onWarning?.(warning);
}

/** Containers a previous, killed invocation of this run left behind (or, at the end, this one). */
async function pruneDockerLeftovers(run: string, ownedByThisProcess = false): Promise<void> {
  const { pruneContainers } = await import('../sandbox/docker-prune.js');
  await pruneContainers(ownedByThisProcess ? { run, ownedByThisProcess } : { run });
}
