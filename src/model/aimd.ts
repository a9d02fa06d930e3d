/**
 * The adaptive concurrency controller of one endpoint: additive increase, multiplicative decrease
 * (AIMD, as TCP congestion control), as pure functions over a small state so the rules are read and
 * tested in one place. `concurrency.ts` keeps this state in shared memory for every thread of a run.
 *
 * - A success while the window is in use adds 1/level (one more request per round of `level`
 *   answers). Close under the level where the endpoint last refused (`ceiling`), growth is four
 *   times slower: the endpoint refused there before, so it is probed gently (fewer 429s).
 * - An overload (429, 503) cuts the level to `DECREASE` × the load the endpoint refused, once per
 *   round (`epoch`); refusals of requests sent before that cut lower it further only when their
 *   load was lower still.
 * - `retry-after` closes the gate until that time: no request starts before it.
 * - The level stays within [min, max]; max is the hard cap (--concurrency, endpoint.concurrency).
 */
export interface AimdLimits {
  min: number;
  max: number;
  /** false: a fixed level at `max`, never moved (endpoint.adaptive: false). */
  adaptive: boolean;
}

export interface AimdState {
  /** Requests allowed in flight; fractional, the gate admits floor(level). */
  level: number;
  /** The level at the last decrease (0: none yet): probed slowly once reached again. */
  ceiling: number;
  /** Decreases so far; a request remembers the epoch it started in. */
  epoch: number;
  /** Epoch milliseconds (Date.now) before which no request starts; 0 = open. */
  pausedUntil: number;
}

/**
 * Kept from each decrease: 0.9 keeps the sawtooth between 90% and 100% of the endpoint's limit
 * (0.8 measured 0.87 of the best fixed throughput in the adaptive-concurrency benchmark).
 */
export const DECREASE = 0.9;
/** How much slower the level grows within one request of the last ceiling. */
const PROBE_SLOWDOWN = 4;

/** Start at the cap: an endpoint that never refuses costs nothing, the first 429 brings the level down. */
export function initialAimdState(limits: AimdLimits): AimdState {
  return { level: limits.max, ceiling: 0, epoch: 0, pausedUntil: 0 };
}

/** Requests the gate lets in flight now: never past the cap, even when min_concurrency is set above it. */
export function admitted(state: AimdState, limits: AimdLimits): number {
  return Math.min(limits.max, Math.max(limits.min, Math.floor(state.level)));
}

/**
 * One request answered. `inFlight` counts the requests in flight when it ended, itself included:
 * the level grows only while the window is used, so an idle stretch never lifts it untested.
 */
export function afterSuccess(state: AimdState, limits: AimdLimits, inFlight: number): AimdState {
  if (!limits.adaptive || state.level >= limits.max || inFlight < admitted(state, limits)) return state;
  const nearCeiling = state.ceiling > 0 && state.level >= state.ceiling - 1;
  const step = 1 / (Math.max(1, state.level) * (nearCeiling ? PROBE_SLOWDOWN : 1));
  return { ...state, level: Math.min(limits.max, state.level + step) };
}

export interface Overload {
  /** The epoch the refused request started in. */
  startedEpoch: number;
  /** Requests in flight when the refused one was let through, itself included: a load the endpoint refused. */
  load: number;
  /** What the server asked for (retry-after), in milliseconds. */
  retryAfterMs?: number;
  /** Date.now() when the answer came. */
  now: number;
}

/**
 * A 429 or 503. The refused request's `load` is a load the endpoint would not take, so the level
 * goes below it: the first refusal of a round cuts to DECREASE × min(level, load) and starts a new
 * round; a refusal of an earlier round lowers the level only when its load says less than that
 * (a burst at start-up sent at 64 against a limit of 16 settles at DECREASE × 17 in one round,
 * not after a cascade of halvings). retry-after closes the gate until then.
 */
export function afterOverload(state: AimdState, limits: AimdLimits, overload: Overload): AimdState {
  const pausedUntil =
    overload.retryAfterMs === undefined
      ? state.pausedUntil
      : Math.max(state.pausedUntil, overload.now + overload.retryAfterMs);
  if (!limits.adaptive) return { ...state, pausedUntil };
  const load = Math.max(1, overload.load);
  if (overload.startedEpoch < state.epoch) {
    if (load * DECREASE >= state.level) return { ...state, pausedUntil };
    return { ...state, level: Math.max(limits.min, load * DECREASE), ceiling: load, pausedUntil };
  }
  const refused = Math.min(state.level, limits.max, load);
  return {
    level: Math.max(limits.min, refused * DECREASE),
    ceiling: refused,
    epoch: state.epoch + 1,
    pausedUntil,
  };
}
