import { setMaxListeners } from 'node:events';
import type { EndpointGate } from '../model/concurrency.js';
import type { LocalRunner } from './local-runner.js';
import type { RolloutOutcome, RolloutTask } from './rollout.js';
import { ROLLOUT_STARTS_PER_TURN, StartPacer } from './start-pacer.js';
import { retryText } from './retry-text.js';
import { RunCounters, type RunGate } from './run-gate.js';
import { ToolSpecsMemo } from './tool-specs-memo.js';
import type { ThreadServices } from './worker-services.js';

/**
 * A run's rollouts on this thread, beside its store and progress: when one thread can carry them
 * (see worker-count.ts) this saves starting a thread that loads openai, zod and the tools a second
 * time and compiles the same code again, and a round trip between threads for every rollout. What it runs is what a pool thread
 * runs (worker.ts, through thread-rollout.ts): the same services, start pacing, request counting
 * and gate.
 */
export class InProcessRunner implements LocalRunner {
  readonly workers = 0;
  onRetry?: (retry: { attempt: number; delayMs: number; message: string }) => void;
  private readonly counters: RunCounters;
  private readonly interrupts = new AbortController();
  private readonly pacer = new StartPacer(ROLLOUT_STARTS_PER_TURN);
  private readonly tools = new ToolSpecsMemo();
  /** Loading starts at once, as a pool's threads do, so it overlaps the caller's own start-up. */
  private readonly loaded: Promise<Loaded>;
  private closing?: Promise<void>;

  constructor(options: { gate?: RunGate }) {
    this.counters = new RunCounters(options.gate);
    // Every rollout in flight listens to it: hundreds at once is expected, not a leak.
    setMaxListeners(0, this.interrupts.signal);
    this.loaded = load((retry) => this.onRetry?.(retry));
    // A run that fails before its first rollout must not leave an unhandled rejection behind.
    this.loaded.catch(() => undefined);
  }

  async run(task: RolloutTask): Promise<RolloutOutcome> {
    const { runThreadRollout, services } = await this.loaded;
    const outcome = await runThreadRollout(
      task,
      this.counters,
      { services, pacer: this.pacer },
      this.interrupts.signal,
    );
    return this.tools.shared(outcome);
  }

  interrupt(): void {
    this.interrupts.abort(new Error('interrupted by the user'));
  }

  get gate(): EndpointGate | undefined {
    return this.counters.gate;
  }

  requestsInFlight(): number {
    return this.counters.requestsInFlight();
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
  runThreadRollout: typeof import('./thread-rollout.js').runThreadRollout;
  services: ThreadServices;
}

async function load(onRetry: NonNullable<InProcessRunner['onRetry']>): Promise<Loaded> {
  const [{ runThreadRollout }, { createThreadServices }] = await Promise.all([
    import('./thread-rollout.js'),
    import('./worker-services.js'),
  ]);
  const services = createThreadServices({
    deferTeardowns: true,
    onRetry: (event) => onRetry({ attempt: event.attempt, delayMs: event.delayMs, message: retryText(event.failure) }),
  });
  return { runThreadRollout, services };
}
