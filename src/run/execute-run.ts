import { join, resolve } from 'node:path';
import type { Endpoint } from '../config/endpoint.js';
import type { BwrapStatus } from '../sandbox/bwrap.js';
import type { ImageBuild } from '../sandbox/docker-build.js';
import { DEFAULT_DOCKER_IMAGE, parseDockerSandboxConfig } from '../sandbox/docker-config.js';
import { writeRunOutputs, type RunOutputs } from './outputs.js';
import {
  emptyPipelineSummary,
  runPipeline,
  type PipelineEvent,
  type PipelineSummary,
  type RecordFilter,
  type RolloutRunner,
} from './pipeline.js';
import type { PipelineEntry } from './work-item.js';
import { ConcurrencySampler } from './concurrency-sampler.js';
import { startLocalPool, type LocalPool } from './pool.js';
import { runGate } from './run-gate.js';
import { preflight, type PreflightResult } from './preflight.js';
import type { RolloutSettings } from './rollout.js';
import { RunStore } from './store.js';
import { loadChatTokenizer } from '../tokens/index.js';

export interface RunStartInfo {
  storePath: string;
  /** Rollouts run by `traj worker` processes elsewhere (--queue), not on this machine. */
  queued: boolean;
  /** Worker threads on this machine: 0 when the rollouts run on the main thread. */
  workers: number;
  /** Why that many threads: `--workers`, or the rule worker-count.ts applied to the run's shape. */
  workersReason: string;
  concurrency: number;
  /** Model requests the run keeps in flight at most: --concurrency, or less under an explicit endpoint.concurrency. */
  requestCap: number;
  /** The endpoint.concurrency the user set, when it lowers the cap. */
  endpointCap?: number;
  /**
   * The adaptive range of model requests in flight ([min, requestCap]); undefined when fixed (endpoint.adaptive:
   * false).
   */
  adaptive?: { min: number; max: number };
  /** The endpoint gate's level and cap right now (the progress line's `conc 37/64`); a queued run's workers' summed. */
  concurrencyLevel?: () => { level: number; max: number };
  /** Model requests in flight right now, over every thread (a queued run: over its workers, as last reported). */
  requestsInFlight?: () => number;
  fingerprintChanges: string[];
  alreadyFinished: number;
  /** Failed prompts given fresh attempts by --retry-failed. */
  retried: number;
  /** USD earlier invocations of this run spent (known costs), and the --max-cost limit on the total. */
  spentUsd: number;
  maxCostUsd?: number;
}

/** A rollout runner on another transport than the local pool (the BullMQ queue of src/queue/). */
export interface RemoteRunner extends RolloutRunner {
  readonly workers: number;
  /** Model requests the remote workers have in flight, as last heard. */
  requestsInFlight(): number;
  /** The remote workers' endpoint gates, added up. */
  concurrencyLevel(): { level: number; max: number };
  /** Detach; `finished` when every prompt landed (its jobs can then be cleaned up). */
  close(finished: boolean): Promise<void>;
}

export interface RemoteTransport {
  open(context: {
    store: RunStore;
    settings: RolloutSettings;
    fingerprint: string;
    maxAttempts: number;
  }): Promise<RemoteRunner>;
  /** `--stop`: drain the run on the transport instead of running it; says what it did. */
  stop?(): Promise<string>;
}

export interface ExecuteRunInput {
  kind: 'batch' | 'eval' | 'bench' | 'serve';
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
  /**
   * Threads the caller started early (startLocalPool with this run's shape), so they load while it
   * loads; executeRun owns them from here and closes them, also on a fault. Unused with `remote`.
   */
  pool?: LocalPool;
  concurrency: number;
  maxAttempts: number;
  /** Give every failed prompt fresh attempts before dispatching (--retry-failed). */
  retryFailed?: boolean;
  /** `--max-cost`: USD the run may spend in total, over all its invocations. */
  maxCostUsd?: number;
  /** Whether rollouts call the policy endpoint (not for the noop and oracle agents): checked before dispatch. */
  callsModel?: boolean;
  /**
   * Every sandbox image the rollouts use (default: --image, else the default image): checked before dispatch in docker
   * runs.
   */
  images?: readonly string[];
  /** Images the items build from their own Dockerfiles: built (or found built) before the preflight checks them. */
  builds?: readonly ImageBuild[];
  graceMs: number;
  stop?: AbortSignal;
  interruptNow?: AbortSignal;
  onStart?: (info: RunStartInfo) => void;
  /** Warnings the user must see once (e.g. local sandboxes running without bubblewrap). */
  onWarning?: (line: string) => void;
  onEvent?: (event: PipelineEvent) => void;
  /** What the preflight checks before dispatch want the user to see while they wait (retries). */
  onNotice?: (message: string) => void;
  /** Told as soon as no rollout runs any more (before the eval report and outputs): stop a live progress bar. */
  onPipelineDone?: () => void;
  /** After the rollouts, before outputs are written (eval: advantages, report). */
  afterPipeline?: (store: RunStore) => Promise<void> | void;
  /** Run the rollouts on workers elsewhere (--queue) instead of the local pool. */
  remote?: RemoteTransport;
}

export interface ExecuteRunResult {
  summary: PipelineSummary;
  outputs: RunOutputs;
  storePath: string;
}

export function storePathFor(checkpointsDir: string, run: string): string {
  return resolve(checkpointsDir, `${run}.sqlite`);
}

/** Where the run's rollouts keep artifacts (browser screenshots): beside the store, `<run>.artifacts/`. */
export function artifactsDirFor(checkpointsDir: string, run: string): string {
  return resolve(checkpointsDir, `${run}.artifacts`);
}

/**
 * The pipeline shared by batch, eval and bench: lock the store → preflight → pool → pipeline →
 * outputs. Outputs are written whenever rollouts ran, also when a bad row or a run-level fault
 * stopped dispatch (the summary says which); only a fault before the first dispatch throws.
 */
export async function executeRun(input: ExecuteRunInput): Promise<ExecuteRunResult> {
  const storePath = storePathFor(input.checkpointsDir, input.run);
  if (input.remote?.stop) return stopRemoteRun(input, input.remote.stop, storePath);
  // Set when the threads (or the queue) are stopping: awaited before the store closes, on every path.
  const stopping: { closing?: Promise<void> } = {};
  let opened: RunStore | undefined;
  // Before the store, as a config error: a tokenizer that cannot load would fail every rollout, and a
  // store opened with it would refuse the corrected rerun as changed settings.
  if (input.settings.tokenizer) await loadChatTokenizer(input.settings.tokenizer);
  try {
    const store = (opened = RunStore.open(storePath));
    const { settings, changes, local } = await openRun(input, store);
    const localPool = local?.pool;
    if (localPool)
      localPool.onRetry = ({ attempt, delayMs, message }) =>
        input.onEvent?.({ type: 'retrying', attempt, delayMs, message });
    const retried = input.retryFailed ? store.resetFailedAttempts() : 0;
    const remotePool = localPool
      ? undefined
      : await input.remote!.open({
          store,
          settings,
          fingerprint: store.meta()!.fingerprint,
          maxAttempts: input.maxAttempts,
        });
    const alreadyFinished = store.finishedCount();
    store.startSpendCounter();
    input.onStart?.(
      startInfo(input, { store, settings, storePath, local, remotePool, changes, alreadyFinished, retried }),
    );
    const summary = await runSegment(input, { store, settings, localPool, remotePool }, stopping);
    await input.afterPipeline?.(store);
    const outputs = writeRunOutputs(store, input.outDir ?? join('datasets', input.run), input.maxAttempts);
    return { summary, outputs, storePath };
  } finally {
    // Also on a fault after the pipeline: the threads are stopped before the caller goes on.
    await stopping.closing;
    opened?.releaseLock();
    opened?.close();
  }
}

type LocalStart = NonNullable<ExecuteRunInput['pool']>;

/**
 * Take the store, start the pool (unless the caller did), build task images and run the
 * preflight; the settings come back with what the preflight learned. A pool started here or by
 * the caller is closed on any fault.
 */
async function openRun(
  input: ExecuteRunInput,
  store: RunStore,
): Promise<{ settings: RolloutSettings; changes: string[]; local: LocalStart | undefined }> {
  const docker = input.settings.sandbox.kind === 'docker';
  let local = input.remote ? undefined : input.pool;
  let settings = input.settings;
  try {
    store.acquireLock();
    const { changes } = store.initRun({
      name: input.run,
      kind: input.kind,
      config: input.config,
      fingerprintParts: input.fingerprintParts,
      force: input.force,
    });
    local ??= input.remote
      ? undefined
      : startLocalPool({
          workers: input.workers,
          concurrency: input.concurrency,
          endpoint: settings.endpoint,
          environment: settings.environmentModule !== undefined,
        });
    if (docker) await buildTaskImages(input.builds ?? [], settings.sandbox.docker, input.onNotice);
    settings = await preflightSettings(input, settings);
    if (docker && local) settings = withWarmPool(settings, input.concurrency, local.choice.workers);
    return { settings, changes, local };
  } catch (error) {
    await local?.pool.close();
    throw error;
  }
}

/** The endpoint and images checked, the sandboxes prepared; the window and bubblewrap probe the run learned. */
async function preflightSettings(input: ExecuteRunInput, settings: RolloutSettings): Promise<RolloutSettings> {
  const docker = settings.sandbox.kind === 'docker';
  const checked = preflight({
    endpoint: input.callsModel === false ? undefined : input.endpoint,
    images: docker ? [...new Set(input.images ?? [settings.sandbox.image ?? DEFAULT_DOCKER_IMAGE])] : [],
    onNotice: input.onNotice,
  });
  let found: PreflightResult;
  if (docker) {
    found = await checked;
    await pruneDockerLeftovers(input.run);
  } else {
    // The bubblewrap probe and the folder sweep overlap the endpoint's answer.
    const [answer, local] = await Promise.all([checked, prepareLocalSandboxes(settings.sandbox.local)]);
    found = answer;
    if (local.warning) input.onWarning?.(local.warning);
    if (local.bwrap) settings = { ...settings, sandbox: { ...settings.sandbox, bwrap: local.bwrap } };
  }
  return found.contextLength ? { ...settings, contextLength: found.contextLength } : settings;
}

/** What the command prints when the run starts: shape, caps, what is already done and spent. */
function startInfo(
  input: ExecuteRunInput,
  run: {
    store: RunStore;
    settings: RolloutSettings;
    storePath: string;
    local: LocalStart | undefined;
    remotePool: RemoteRunner | undefined;
    changes: string[];
    alreadyFinished: number;
    retried: number;
  },
): Parameters<NonNullable<ExecuteRunInput['onStart']>>[0] {
  const gate = runGate(run.settings.endpoint, input.concurrency);
  const pool = run.local?.pool ?? run.remotePool!;
  const localGate = run.local?.pool.gate;
  const remote = run.remotePool;
  return {
    storePath: run.storePath,
    queued: !run.local,
    workers: pool.workers,
    workersReason: run.local?.choice.reason ?? 'queued',
    concurrency: input.concurrency,
    requestCap: gate.limits.max,
    endpointCap: gate.limits.max < input.concurrency ? input.settings.endpoint.concurrency : undefined,
    adaptive: gate.limits.adaptive ? { min: gate.limits.min, max: gate.limits.max } : undefined,
    requestsInFlight: () => pool.requestsInFlight(),
    concurrencyLevel: remote ? () => remote.concurrencyLevel() : localGate && (() => localGate.snapshot()),
    fingerprintChanges: run.changes,
    alreadyFinished: run.alreadyFinished,
    retried: run.retried,
    spentUsd: run.store.spentUsd(),
    ...(input.maxCostUsd === undefined ? {} : { maxCostUsd: input.maxCostUsd }),
  };
}

/** One invocation's segment of the run: the pipeline, then the threads stopped and leftovers pruned. */
async function runSegment(
  input: ExecuteRunInput,
  run: {
    store: RunStore;
    settings: RolloutSettings;
    localPool: LocalStart['pool'] | undefined;
    remotePool: RemoteRunner | undefined;
  },
  stopping: { closing?: Promise<void> },
): Promise<PipelineSummary> {
  const { store, localPool, remotePool } = run;
  const segmentId = store.startSegment();
  const started = performance.now();
  const localGate = localPool?.gate;
  const sampler = localGate && new ConcurrencySampler(store, localGate, segmentId, started);
  let summary: PipelineSummary | undefined;
  try {
    summary = await runPipeline({
      store,
      runner: (localPool ?? remotePool)!,
      settings: run.settings,
      entries: input.entries(store),
      concurrency: input.concurrency,
      maxAttempts: input.maxAttempts,
      filters: input.filters,
      stop: input.stop,
      interruptNow: input.interruptNow,
      graceMs: input.graceMs,
      segment: { id: segmentId, startedAt: started },
      maxCostUsd: input.maxCostUsd,
      onEvent: input.onEvent,
    });
    return summary;
  } finally {
    sampler?.stop();
    const outcome = segmentOutcome(summary, input.stop);
    store.endSegment(segmentId, performance.now() - started, outcome);
    // No rollout runs any more: the threads stop while the outputs are written.
    stopping.closing = localPool ? localPool.close() : remotePool!.close(outcome === 'finished');
    if (run.settings.sandbox.kind === 'docker') {
      await stopping.closing;
      // Rollouts dispose their own containers; this catches any a worker thread could not.
      await pruneDockerLeftovers(input.run, true);
    }
    input.onPipelineDone?.();
  }
}

/** `--stop` on a queued run: drain it, then write outputs from what landed (the store is only read). */
async function stopRemoteRun(
  input: ExecuteRunInput,
  stop: () => Promise<string>,
  storePath: string,
): Promise<ExecuteRunResult> {
  input.onNotice?.(await stop());
  const store = RunStore.open(storePath);
  try {
    const outputs = writeRunOutputs(store, input.outDir ?? join('datasets', input.run), input.maxAttempts);
    const summary = emptyPipelineSummary();
    return { summary, outputs, storePath };
  } finally {
    store.close();
  }
}

function segmentOutcome(summary: PipelineSummary | undefined, stop: AbortSignal | undefined): string {
  if (summary?.runFault) return `run_fault:${summary.runFault.code}`;
  if (summary?.inputError) return 'dataset_error';
  if (summary?.budget) return 'budget';
  return stop?.aborted ? 'interrupted' : summary ? 'finished' : 'crashed';
}

/**
 * Folders killed invocations left behind (any run's: a dead owner's folder is nobody's), and the
 * isolation check: an error for `isolation: bwrap` without bubblewrap, a warning for the fallback.
 * The probe's answer is handed to every rollout, so worker threads never probe again.
 */
async function prepareLocalSandboxes(
  local: Record<string, unknown> | undefined,
): Promise<{ warning: string | undefined; bwrap: BwrapStatus | undefined }> {
  const { bwrapStatus, localIsolationWarning, parseLocalSandboxConfig, pruneSandboxFolders } = await import(
    '../sandbox/index.js'
  );
  await pruneSandboxFolders();
  const warning = await localIsolationWarning(local);
  // Asked already by the warning (the answer is kept), unless isolation is off.
  const bwrap = parseLocalSandboxConfig(local).isolation === 'none' ? undefined : await bwrapStatus();
  return { warning, bwrap };
}

/** The task images a run needs, built once per build context (see ensureImages); a line says what was built. */
async function buildTaskImages(
  builds: readonly ImageBuild[],
  docker: Record<string, unknown> | undefined,
  onNotice: ((message: string) => void) | undefined,
): Promise<void> {
  if (builds.length === 0) return;
  const { ensureImages } = await import('../sandbox/docker-build.js');
  const config = parseDockerSandboxConfig(docker);
  const summary = await ensureImages(builds, { concurrency: config.build_concurrency, onNotice });
  onNotice?.(`task images: ${summary.built.length} built, ${summary.reused.length} already built`);
}

/**
 * Each worker thread keeps as many started containers per image as it runs rollouts at once
 * (the run's concurrency over its threads), unless `sandbox.docker.warm_pool` is false.
 */
function withWarmPool(settings: RolloutSettings, concurrency: number, workers: number): RolloutSettings {
  if (settings.sandbox.docker?.warm_pool === false) return settings;
  const warm = Math.ceil(concurrency / Math.max(1, workers));
  return { ...settings, sandbox: { ...settings.sandbox, warm } };
}

/** Containers a previous, killed invocation of this run left behind (or, at the end, this one). */
async function pruneDockerLeftovers(run: string, ownedByThisProcess = false): Promise<void> {
  const { pruneContainers } = await import('../sandbox/docker-prune.js');
  await pruneContainers(ownedByThisProcess ? { run, ownedByThisProcess } : { run });
}
