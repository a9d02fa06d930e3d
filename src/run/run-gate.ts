import { ADAPTIVE_DEFAULTS, type Endpoint } from '../config/endpoint.js';
import type { AimdLimits } from '../model/aimd.js';
import { EndpointGate } from '../model/concurrency.js';

/** The endpoint whose gate a run shares over its threads, and the gate's range. */
export interface RunGate {
  baseURL: string;
  limits: AimdLimits;
}

/**
 * The run's gate for its endpoint: the cap is endpoint.concurrency, never above --concurrency (a
 * rollout has one request in flight at a time, so that many is no cap at all).
 */
export function runGate(endpoint: Endpoint, concurrency: number): RunGate {
  return {
    baseURL: endpoint.base_url,
    limits: {
      min: endpoint.min_concurrency ?? ADAPTIVE_DEFAULTS.min_concurrency,
      max: Math.min(endpoint.concurrency ?? concurrency, concurrency),
      adaptive: endpoint.adaptive ?? ADAPTIVE_DEFAULTS.adaptive,
    },
  };
}

/**
 * What every thread running a run's rollouts shares, in shared memory: the count of model
 * requests in flight (progress) and the endpoint's gate (the cap is exact across threads, and its
 * level is the progress line's `conc`). See model/concurrency.ts.
 */
export class RunCounters {
  readonly requests = new Int32Array(new SharedArrayBuffer(4));
  readonly gate?: EndpointGate;
  /** The gates' buffers by base URL, as a task carries them to a thread. */
  readonly gates: Record<string, SharedArrayBuffer> = {};

  constructor(gate?: RunGate) {
    if (!gate) return;
    this.gate = EndpointGate.create(gate.limits);
    this.gates[gate.baseURL] = this.gate.buffer;
  }

  requestsInFlight(): number {
    return Atomics.load(this.requests, 0);
  }
}
