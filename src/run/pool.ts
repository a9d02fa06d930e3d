import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { BroadcastChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Endpoint } from '../config/endpoint.js';
import type { EndpointGate } from '../model/concurrency.js';
import type { RolloutOutcome, RolloutTask } from './rollout.js';
import type { ControlMessage, PoolTask, PoolWorkerData } from './worker.js';
import { InProcessRunner } from './in-process-runner.js';
import type { LocalRunner } from './local-runner.js';
import { RunCounters, runGate, type RunGate } from './run-gate.js';
import { ToolSpecsMemo } from './tool-specs-memo.js';
import { chooseWorkerCount, type WorkerChoice } from './worker-count.js';

export interface PoolOptions {
  /** Worker threads (chosen by the caller, see worker-count.ts). */
  workers: number;
  /** Rollouts in flight in total, spread over the threads. */
  concurrency: number;
  /** The run's endpoint: one concurrency gate shared by every thread (see runGate). */
  gate?: RunGate;
}

/** A run's local pool, and why it has that many threads (for the start line). */
export interface LocalPool {
  pool: LocalRunner;
  choice: WorkerChoice;
}

/**
 * Start a run's threads, or its runner on this thread when the shape needs none (worker-count.ts).
 * A thread loads openai, zod and the tools (~0.1 s) before its first rollout, so callers start the
 * pool as soon as they know the run's shape: the threads load while the caller loads its own
 * modules, opens the store and runs the preflight checks.
 */
export function startLocalPool(shape: {
  /** --workers, when given. */
  workers?: number;
  concurrency: number;
  endpoint: Endpoint;
  /** The run loads an environment module (eval/bench). */
  environment: boolean;
}): LocalPool {
  const choice = chooseWorkerCount({
    requested: shape.workers,
    concurrency: shape.concurrency,
    environment: shape.environment,
    cores: availableParallelism(),
    requestCap: shape.endpoint.concurrency,
  });
  // One gate for the endpoint, shared by every thread (model/concurrency.ts): the cap is exact, not split.
  const gate = runGate(shape.endpoint, shape.concurrency);
  const pool =
    choice.workers === 0
      ? new InProcessRunner({ gate })
      : new RolloutPool({ workers: choice.workers, concurrency: shape.concurrency, gate });
  return { pool, choice };
}

/**
 * A piscina pool of worker threads, each running many rollouts at once. Interrupts go over a
 * BroadcastChannel rather than piscina's abort (which terminates the thread): rollouts then end
 * through their own abort path and dispose their sandboxes.
 */
export class RolloutPool implements LocalRunner {
  private readonly piscina: Piscina<PoolTask, RolloutOutcome>;
  private readonly channelName = `traj-control-${randomUUID()}`;
  private readonly channel = new BroadcastChannel(this.channelName);
  /** Threads that ran a rollout of this pool and so may hold services to close. */
  private readonly joined = new Set<number>();
  private readonly closed = new Set<number>();
  private onClosed?: () => void;
  private closing?: Promise<void>;
  /** Threads whose modules have loaded (see worker.ts, announceLoaded). */
  private loadedThreads = 0;
  private onLoaded?: () => void;
  /** Told when a model call in some thread failed and is being retried. */
  onRetry?: (retry: { attempt: number; delayMs: number; message: string }) => void;
  /** Model requests in flight and the endpoint's gate, shared with every thread. */
  private readonly counters: RunCounters;
  readonly workers: number;

  constructor(options: PoolOptions) {
    this.counters = new RunCounters(options.gate);
    this.workers = Math.max(1, Math.min(options.workers, options.concurrency));
    this.piscina = new Piscina({
      filename: new URL('./worker.js', import.meta.url).href,
      minThreads: this.workers,
      maxThreads: this.workers,
      concurrentTasksPerWorker: Math.ceil(options.concurrency / this.workers),
      atomics: 'disabled',
      idleTimeout: 60_000,
      workerData: { control: this.channelName } satisfies PoolWorkerData,
      resourceLimits: youngGenerationLimits(Math.ceil(options.concurrency / this.workers)),
    });
    this.channel.onmessage = (event: unknown) => {
      const message = (event as { data: ControlMessage }).data;
      if (message.type === 'loaded' && ++this.loadedThreads >= this.workers) this.onLoaded?.();
      if (message.type === 'joined') this.joined.add(message.thread);
      if (message.type === 'retry') this.onRetry?.(message);
      if (message.type === 'closed') {
        this.closed.add(message.thread);
        if ([...this.joined].every((thread) => this.closed.has(thread))) this.onClosed?.();
      }
    };
  }

  async run(task: RolloutTask): Promise<RolloutOutcome> {
    const outcome = await this.piscina.run({
      ...task,
      control: this.channelName,
      requests: this.counters.requests,
      gates: this.counters.gates,
    });
    return this.withTools(outcome);
  }

  get gate(): EndpointGate | undefined {
    return this.counters.gate;
  }

  requestsInFlight(): number {
    return this.counters.requestsInFlight();
  }

  /** Tool specs by their key: each thread sends them with its first outcome (see worker.ts). */
  private readonly tools = new ToolSpecsMemo();

  private withTools(outcome: RolloutOutcome): RolloutOutcome {
    return outcome.toolsKey === undefined ? outcome : this.tools.shared(outcome);
  }

  /** Ask every in-flight rollout to stop (their sandboxes are disposed by the rollouts themselves). */
  interrupt(): void {
    this.channel.postMessage({ type: 'interrupt' } satisfies ControlMessage);
  }

  /**
   * Let every thread close its services (MCP servers), waiting up to 10 s, then stop the threads.
   * Later calls wait for the first: a caller that started the pool closes it too on its error paths.
   */
  close(): Promise<void> {
    this.closing ??= this.closeThreads();
    return this.closing;
  }

  /** Whether close() was called. */
  get isClosing(): boolean {
    return this.closing !== undefined;
  }

  private async closeThreads(): Promise<void> {
    // A pool closed right after it started (a config error found meanwhile) still has threads
    // loading their modules: stopping one then aborts the process (see worker.ts).
    if (this.loadedThreads < this.workers)
      await signalOrTimeout(10_000, (signal) => {
        this.onLoaded = signal;
      });
    if (this.joined.size > 0) {
      await signalOrTimeout(10_000, (signal) => {
        this.onClosed = signal;
        this.channel.postMessage({ type: 'close' } satisfies ControlMessage);
      });
    }
    this.channel.close();
    await this.piscina.destroy();
  }
}

/** Resolves when `listen`'s callback is called, or after `timeoutMs`, whichever comes first. */
function signalOrTimeout(timeoutMs: number, listen: (signal: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    listen(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Young-generation MB per rollout in flight in a thread (see youngGenerationLimits). */
const YOUNG_MB_PER_ROLLOUT = 0.3;
/** V8's default young generation (16 MB semi-spaces) is kept up to this many rollouts per thread. */
const DEFAULT_YOUNG_UP_TO = 128;

/**
 * A thread carrying hundreds of rollouts keeps each one's request, reply and messages alive for a
 * model call's latency. With V8's default young generation a scavenge comes every fraction of a
 * second, so most of that state is copied, then promoted and marked later; a young generation
 * sized from the rollouts in flight lets it die young instead (at 1,000 in flight: 166 → 94
 * collections and 365 → 221 MB promoted, `--trace-gc-nvp`).
 */
function youngGenerationLimits(rolloutsPerThread: number): { maxYoungGenerationSizeMb: number } | undefined {
  if (rolloutsPerThread <= DEFAULT_YOUNG_UP_TO) return undefined;
  return { maxYoungGenerationSizeMb: Math.min(192, Math.ceil(rolloutsPerThread * YOUNG_MB_PER_ROLLOUT)) };
}
