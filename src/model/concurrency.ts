import { admitted, afterOverload, afterSuccess, initialAimdState, type AimdLimits, type AimdState } from './aimd.js';

/**
 * The gate in front of one endpoint: at most `admitted(level)` requests in flight, the level moved
 * by the AIMD controller (aimd.ts). Its state lives in a SharedArrayBuffer, so one gate serves every
 * worker thread of a run: the pool creates it for the run's endpoint and hands the buffer to each
 * task (`shareGates`); the main thread reads the same memory for the progress line and statistics.
 * Endpoints a run did not share (judges, auxiliary models, chat) get a gate of the thread's own.
 *
 * Every change happens under a spin lock (a few float operations, never an await), then waiters are
 * woken through `Atomics.notify`; each thread keeps its own queue and one `Atomics.waitAsync`.
 */

// Int32 slots.
const LOCK = 0;
const IN_FLIGHT = 1;
const WAKE = 2;
// Float64 slots, after the four Int32 ones.
const LEVEL = 0;
const CEILING = 1;
const EPOCH = 2;
const PAUSED_UNTIL = 3;
const COUNT_429 = 4;
const COUNT_503 = 5;
const MIN = 6;
const MAX = 7;
const ADAPTIVE = 8;
const INT_BYTES = 16;
const FLOAT_SLOTS = 9;

/** Node 20 has `Atomics.waitAsync` (ES2024); the ES2023 lib the project compiles against does not declare it. */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(
      array: Int32Array,
      index: number,
      value: number,
      timeout: number,
    ): { async: false; value: string } | { async: true; value: Promise<string> };
  }
).waitAsync;

/** Spins after which a held lock is taken as abandoned (tens of milliseconds; a section takes microseconds). */
const STALE_LOCK_SPINS = 10_000_000;

/** Longest a waiter sleeps before looking again, should a wake-up be missed. */
const RECHECK_MS = 1_000;

/** A slot taken: the round it started in and the requests in flight then, itself included. */
export interface GateTicket {
  epoch: number;
  load: number;
}

/** How one request through the gate ended. */
export type GateOutcome =
  | { kind: 'success' }
  | { kind: 'overload'; status: 429 | 503; retryAfterMs?: number }
  | { kind: 'other' };

export interface GateSnapshot {
  /** Requests the gate admits now. */
  level: number;
  /** The hard cap (Infinity when nothing caps the endpoint). */
  max: number;
  min: number;
  adaptive: boolean;
  inFlight: number;
  /** 429 and 503 answers seen through this gate. */
  rateLimited: number;
  unavailable: number;
}

interface Waiter {
  resolve(ticket: GateTicket): void;
  reject(reason: unknown): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class EndpointGate {
  private readonly ints: Int32Array;
  private readonly floats: Float64Array;
  private readonly waiters: Waiter[] = [];
  private armed = false;

  private constructor(readonly buffer: SharedArrayBuffer) {
    this.ints = new Int32Array(buffer, 0, INT_BYTES / 4);
    this.floats = new Float64Array(buffer, INT_BYTES, FLOAT_SLOTS);
  }

  /** A new gate at the start of its range (initialAimdState: at the cap). */
  static create(limits: AimdLimits): EndpointGate {
    const gate = new EndpointGate(new SharedArrayBuffer(INT_BYTES + FLOAT_SLOTS * 8));
    gate.store(initialAimdState(limits));
    const floats = gate.floats;
    floats[MIN] = limits.min;
    floats[MAX] = limits.max;
    floats[ADAPTIVE] = limits.adaptive ? 1 : 0;
    return gate;
  }

  /** The same gate seen from another thread. */
  static attach(buffer: SharedArrayBuffer): EndpointGate {
    return new EndpointGate(buffer);
  }

  /** Wait for a slot. An abort rejects at once. */
  acquire(signal?: AbortSignal): Promise<GateTicket> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.waiters.length === 0) {
      const ticket = this.tryAdmit(Date.now());
      if (ticket !== undefined) return Promise.resolve(ticket);
    }
    return new Promise<GateTicket>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          const index = this.waiters.indexOf(waiter);
          if (index >= 0) this.waiters.splice(index, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
      this.pump();
    });
  }

  /** The request holding `ticket` ended: free its slot and tell the controller how. */
  release(ticket: GateTicket, outcome: GateOutcome): void {
    this.locked(() => {
      const inFlight = this.ints[IN_FLIGHT]!;
      this.ints[IN_FLIGHT] = inFlight - 1;
      const limits = this.limits();
      const state = this.state();
      let next = state;
      if (outcome.kind === 'success') next = afterSuccess(state, limits, inFlight);
      else if (outcome.kind === 'overload') {
        const slot = outcome.status === 429 ? COUNT_429 : COUNT_503;
        this.floats[slot] = this.floats[slot]! + 1;
        next = afterOverload(state, limits, {
          startedEpoch: ticket.epoch,
          load: ticket.load,
          now: Date.now(),
          ...(outcome.retryAfterMs === undefined ? {} : { retryAfterMs: outcome.retryAfterMs }),
        });
      }
      if (next !== state) this.store(next);
    });
    Atomics.add(this.ints, WAKE, 1);
    Atomics.notify(this.ints, WAKE);
    this.pump();
  }

  snapshot(): GateSnapshot {
    return this.locked(() => {
      const limits = this.limits();
      return {
        level: admitted(this.state(), limits),
        max: limits.max,
        min: limits.min,
        adaptive: limits.adaptive,
        inFlight: this.ints[IN_FLIGHT]!,
        rateLimited: this.floats[COUNT_429]!,
        unavailable: this.floats[COUNT_503]!,
      };
    });
  }

  /** Take a slot if the gate is open and below its level. */
  private tryAdmit(now: number): GateTicket | undefined {
    return this.locked(() => {
      const state = this.state();
      const inFlight = this.ints[IN_FLIGHT]!;
      if (now < state.pausedUntil || inFlight >= admitted(state, this.limits())) return undefined;
      this.ints[IN_FLIGHT] = inFlight + 1;
      return { epoch: state.epoch, load: inFlight + 1 };
    });
  }

  /** Admit this thread's waiters while slots are free; otherwise sleep until a release anywhere (or a pause ends). */
  private pump(): void {
    while (this.waiters.length > 0) {
      // Read before trying, so a release between the try and the wait is not missed.
      const seen = Atomics.load(this.ints, WAKE);
      const now = Date.now();
      const ticket = this.tryAdmit(now);
      if (ticket === undefined) return this.sleep(seen, now);
      const waiter = this.waiters.shift()!;
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve(ticket);
    }
  }

  private sleep(seen: number, now: number): void {
    if (this.armed) return;
    this.armed = true;
    const pausedFor = this.floats[PAUSED_UNTIL]! - now;
    const timeout = pausedFor > 0 ? Math.min(pausedFor + 1, RECHECK_MS) : RECHECK_MS;
    const wait = waitAsync(this.ints, WAKE, seen, timeout);
    const again = () => {
      this.armed = false;
      this.pump();
    };
    if (wait.async) void wait.value.then(again);
    else queueMicrotask(again);
  }

  private locked<T>(body: () => T): T {
    // Held for a few float operations by one thread at a time, so spinning is the cheapest wait. A
    // lock held for millions of spins belongs to a thread terminated inside the section: taken over.
    for (let spins = 0; Atomics.compareExchange(this.ints, LOCK, 0, 1) !== 0; spins++) {
      if (spins > STALE_LOCK_SPINS) break;
    }
    try {
      return body();
    } finally {
      Atomics.store(this.ints, LOCK, 0);
    }
  }

  private limits(): AimdLimits {
    return { min: this.floats[MIN]!, max: this.floats[MAX]!, adaptive: this.floats[ADAPTIVE] === 1 };
  }

  private state(): AimdState {
    const floats = this.floats;
    return {
      level: floats[LEVEL]!,
      ceiling: floats[CEILING]!,
      epoch: floats[EPOCH]!,
      pausedUntil: floats[PAUSED_UNTIL]!,
    };
  }

  private store(state: AimdState): void {
    const floats = this.floats;
    floats[LEVEL] = state.level;
    floats[CEILING] = state.ceiling;
    floats[EPOCH] = state.epoch;
    floats[PAUSED_UNTIL] = state.pausedUntil;
  }
}

/**
 * This thread's gates by base URL: the run's shared ones (`shareGates`), else one created on first
 * use from the client's own endpoint settings.
 */
const gates = new Map<string, EndpointGate>();

/** The gates a run shares with this thread (a pool task carries them); a newer run's buffer replaces an older one. */
export function shareGates(buffers: Readonly<Record<string, SharedArrayBuffer>> | undefined): void {
  for (const [baseURL, buffer] of Object.entries(buffers ?? {})) {
    if (gates.get(baseURL)?.buffer !== buffer) gates.set(baseURL, EndpointGate.attach(buffer));
  }
}

export function endpointGate(baseURL: string, limits: AimdLimits): EndpointGate {
  let gate = gates.get(baseURL);
  if (!gate) {
    gate = EndpointGate.create(limits);
    gates.set(baseURL, gate);
  }
  return gate;
}

/**
 * Requests in flight, counted where a run's progress line can read them: slot 0 of a shared
 * Int32Array (a SharedArrayBuffer the pool hands every task), added to by every thread.
 */
let requestCounter: Int32Array | undefined;

export function countRequestsInto(counter: Int32Array | undefined): void {
  requestCounter = counter;
}

/** Run one HTTP exchange counted as in flight. */
export async function countedRequest<T>(task: () => Promise<T>): Promise<T> {
  const counter = requestCounter;
  if (!counter) return task();
  Atomics.add(counter, 0, 1);
  try {
    return await task();
  } finally {
    Atomics.sub(counter, 0, 1);
  }
}
