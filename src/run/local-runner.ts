import type { EndpointGate } from '../model/concurrency.js';
import type { RolloutRunner } from './pipeline.js';

/** What runs a run's rollouts on this machine: worker threads (RolloutPool) or this thread (InProcessRunner). */
export interface LocalRunner extends RolloutRunner {
  /** Worker threads: 0 when the rollouts run on this thread. */
  readonly workers: number;
  /** The run endpoint's gate: its level is the progress line's `conc`. */
  readonly gate?: EndpointGate;
  /** Told when a model call failed and is being retried. */
  onRetry?: (retry: { attempt: number; delayMs: number; message: string }) => void;
  requestsInFlight(): number;
  /** Close the rollouts' services (MCP servers, sandboxes still going) and stop the threads. */
  close(): Promise<void>;
  /** Whether close() was called. */
  readonly isClosing: boolean;
}
