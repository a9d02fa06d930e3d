import { errorCodeSet } from '../errors.js';

/**
 * What the run pipeline does with a rollout that ended in an error, decided from the error's
 * class (`name`), `code` and `retryable` flag alone — one pure function, so the rules are
 * read and tested in one place.
 *
 * - `run_fault`: the run cannot make progress (bad key, unknown model, endpoint or Docker engine
 *   gone, missing image, an endpoint that keeps rate-limiting). Dispatch stops; the prompt goes back to pending without
 *   using an attempt.
 * - `agent`: the agent's own outcome (its context overflowed). The record is kept as done, with
 *   the error as its finish, and never retried as an infrastructure fault.
 * - `retry`: a transient infrastructure fault. The prompt is failed, uses one attempt and is
 *   retried by the next run until `--max-attempts`.
 * - `fail`: a fault that would repeat on every try (a rejected request, a config or dataset
 *   error inside the rollout). Failed for good at once; `--retry-failed` gives it fresh attempts.
 */
export type FailureAction = 'run_fault' | 'agent' | 'retry' | 'fail';

export interface FailureDecision {
  action: FailureAction;
  /** What the store's error_class says. */
  errorClass: 'infra' | 'agent' | 'input' | 'run';
}

/** A thrown error or a `SerializedError`: its code is a string (a Node error brings `ENOENT`). */
export interface ClassifiableError {
  name: string;
  code: string;
  retryable: boolean;
}

/** Faults that stop the run the first time they are seen: no other prompt can succeed either. */
export const RUN_FAULT_CODES = errorCodeSet([
  'model_auth',
  'api_key_missing',
  'model_not_found',
  'model_unreachable',
  // The endpoint answered 429 for max_rate_limit_wait_ms: a quota used up. Rate limiting never uses an attempt.
  'model_rate_limited',
  'image_missing',
  'engine_unreachable',
  // `local: {isolation: bwrap}` where bubblewrap cannot run: no rollout would be isolated as asked.
  'isolation_unavailable',
  // A queued run (--queue): Redis does not answer, or lost the run's jobs (restarted without persistence, --stop),
  // or every worker refuses the run (another sandbox, code version or environment module).
  'queue_unreachable',
  'queue_lost',
  'queue_refused',
]);

/**
 * Faults that stop the run only when they repeat with nothing succeeding in between: one 503 after
 * retries is bad luck, a streak of them is an endpoint that is down.
 */
export const STREAK_FAULT_CODES = errorCodeSet(['model_unavailable']);

/** Outcomes of the agent itself, recorded as finished rollouts. */
export const AGENT_OUTCOME_CODES = errorCodeSet(['context_overflow']);

/** Error classes whose faults repeat on every try: the input, not the infrastructure, is wrong. */
const INPUT_ERROR_NAMES: ReadonlySet<string> = new Set(['ConfigError', 'DatasetError']);

export function decideFailure(error: ClassifiableError): FailureDecision {
  if (RUN_FAULT_CODES.has(error.code)) return { action: 'run_fault', errorClass: 'run' };
  if (AGENT_OUTCOME_CODES.has(error.code)) return { action: 'agent', errorClass: 'agent' };
  if (INPUT_ERROR_NAMES.has(error.name)) return { action: 'fail', errorClass: 'input' };
  return { action: error.retryable ? 'retry' : 'fail', errorClass: 'infra' };
}

export function isRunFaultCode(code: string): boolean {
  return RUN_FAULT_CODES.has(code) || STREAK_FAULT_CODES.has(code);
}
