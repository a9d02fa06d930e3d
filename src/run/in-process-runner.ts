import { setMaxListeners } from 'node:events';
import { countRequestsInto, EndpointGate, shareGates } from '../model/concurrency.js';
import type { LocalRunner, RunGate } from './pool.js';
import type { RolloutOutcome, RolloutTask } from './rollout.js';
import { ROLLOUT_STARTS_PER_TURN, StartPacer } from './start-pacer.js';
import { retryText } from './retry-text.js';
import { ToolSpecsMemo } from './tool-specs-memo.js';
import type { ThreadServices } from './worker-services.js';

/**
 * A run's rollouts on this thread, beside its store and progress: for a light run (see
 * worker-count.ts) this saves starting a thread that loads openai, zod and the tools a second
 * time, and a round trip between threads for every rollout. What it runs is what a pool thread
 * runs (worker.ts): the same services, start pacing, request counting and gate.
 */
export class InProcessRunner implements LocalRunner {
  readonly workers = 0;
  readonly gate?: EndpointGate;
  onRetry?: (retry: { attempt: number; delayMs: number; message: string }) => void;
  private readonly requests = new Int32Array(new SharedArrayBuffer(4));
  private readonly gates: Record<string, SharedArrayBuffer> = {};
  private readonly interrupts = new AbortController();
  private readonly pacer = new StartPacer(ROLLOUT_STARTS_PER_TURN);
  private readonly tools = new ToolSpecsMemo();
  /** Loading starts at once, as a pool's threads do, so it overlaps the caller's own start-up. */
  private readonly loaded: Promise<Loaded>;
  private closing?: Promise<void>;

  constructor(options: { gate?: RunGate }) {
    if (options.gate) {
      this.gate = EndpointGate.create(options.gate.limits);
      this.gates[options.gate.baseURL] = this.gate.buffer;
    }
    // Every rollout in flight listens to it: hundreds at once is expected, not a leak.
    setMaxListeners(0, this.interrupts.signal);
    this.loaded = load((retry) => this.onRetry?.(retry));
    // A run that fails before its first rollout must not leave an unhandled rejection behind.
    this.loaded.catch(() => undefined);
  }

  async run(task: RolloutTask): Promise<RolloutOutcome> {
    const { executeRollout, services } = await this.loaded;
    await services.loadTools(task.settings, task.toolsets).catch(() => undefined);
    await this.pacer.slot();
    countRequestsInto(this.requests);
    shareGates(this.gates);
    return this.tools.shared(await executeRollout(task, services, this.interrupts.signal));
  }

  interrupt(): void {
    this.interrupts.abort(new Error('interrupted by the user'));
  }

  requestsInFlight(): number {
    return Atomics.load(this.requests, 0);
  }

  get isClosing(): boolean {
    return this.closing !== undefined;
  }

  close(): Promise<void> {
    this.closing ??= this.loaded.then(
      ({ services }) => services.close(),
      () => undefined,
    );
    return this.closing;
  }
}

interface Loaded {
  executeRollout: typeof import('./rollout.js').executeRollout;
  services: ThreadServices;
}

async function load(onRetry: NonNullable<InProcessRunner['onRetry']>): Promise<Loaded> {
  const [{ executeRollout }, { createThreadServices }] = await Promise.all([
    import('./rollout.js'),
    import('./worker-services.js'),
  ]);
  const services = createThreadServices({
    deferTeardowns: true,
    onRetry: (event) => onRetry({ attempt: event.attempt, delayMs: event.delayMs, message: retryText(event.failure) }),
  });
  return { executeRollout, services };
}
