import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from './openai-sdk.js';
import { ModelError, type ErrorCode } from '../errors.js';
import { isContextOverflow } from './context-overflow.js';
import { errorBodyMessage, errorTextMessage, rememberedErrorBody } from './error-body.js';
import { ReplyTooLargeError } from './reply-body.js';
import type { GateOutcome } from './concurrency.js';
import { parseRetryAfter, type AttemptFailure } from './retry.js';

/**
 * A 200 answer the client cannot use (malformed JSON, no choices, a null message, an error object
 * instead of a completion): retried like other transport faults.
 */
export class BadResponseError extends Error {}

/** Raised when the attempt's own deadline (endpoint timeout_ms) passed. */
export class AttemptTimeoutError extends Error {}

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** Decide whether one failed attempt is retried: 429, 5xx, timeouts and broken connections are. */
export function classifyFailure(error: unknown, signal: AbortSignal | undefined): AttemptFailure {
  if (signal?.aborted || error instanceof APIUserAbortError)
    return { kind: 'aborted', message: 'aborted', cause: error };
  if (error instanceof AttemptTimeoutError || error instanceof APIConnectionTimeoutError) {
    return { kind: 'retryable', message: error.message || 'timed out', cause: error };
  }
  if (error instanceof APIConnectionError) {
    return { kind: 'retryable', message: connectionMessage(error), cause: error };
  }
  if (error instanceof APIError) {
    const status = error.status;
    const message = serverMessage(error);
    if (status === undefined) return { kind: 'retryable', message, cause: error };
    const retryAfterMs = parseRetryAfter(error.headers);
    return {
      kind: isRetryableStatus(status) ? 'retryable' : 'fatal',
      status,
      message,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      cause: error,
    };
  }
  if (error instanceof BadResponseError) return { kind: 'retryable', message: error.message, cause: error };
  if (error instanceof ReplyTooLargeError) return { kind: 'fatal', message: error.message, cause: error };
  if (isNetworkError(error)) return { kind: 'retryable', message: connectionMessage(error as Error), cause: error };
  return { kind: 'fatal', message: error instanceof Error ? error.message : String(error), cause: error };
}

/** A 429 is the endpoint pacing us: retried without using max_retries (see retry.ts `rateLimit`). */
export function isRateLimit(failure: AttemptFailure): boolean {
  return failure.status === 429;
}

/**
 * What an attempt's error tells the concurrency gate: 429 and 503 are overload, with any retry-after
 * (up to `maxDelayMs`, as the retry's own wait: a far-off date never stalls the endpoint for hours).
 */
export function gateOutcomeOf(error: unknown, maxDelayMs: number): GateOutcome {
  if (!(error instanceof APIError) || (error.status !== 429 && error.status !== 503)) return { kind: 'other' };
  const asked = parseRetryAfter(error.headers);
  const retryAfterMs = asked === undefined ? undefined : Math.min(asked, maxDelayMs);
  return { kind: 'overload', status: error.status, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** The server's own words from the error body, whatever its shape (see error-body.ts), else the SDK's summary. */
function serverMessage(error: APIError): string {
  const raw = rememberedErrorBody(error.headers);
  const fromBody = raw === undefined ? errorBodyMessage(error.error) : errorTextMessage(raw);
  return fromBody ?? error.message.replace(/^\d{3} /, '');
}

function connectionMessage(error: Error): string {
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const detail = cause ? ` (${(cause as NodeJS.ErrnoException).code ?? cause.message})` : '';
  return `${error.message}${detail}`;
}

/** A stream cut mid-body surfaces from undici as a bare TypeError('terminated') or an errno error. */
function isNetworkError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 4; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if ((code && NETWORK_CODES.has(code)) || current.message === 'terminated') return true;
    current = current.cause;
  }
  return false;
}

export interface FailureContext {
  baseURL: string;
  model: string;
}

/** Failures to connect at all (no server answered), as opposed to a server that answered badly. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);

/**
 * The typed error a caller sees: names the endpoint, the model, the status and the server's message.
 * Its code says what the run pipeline does with it (src/run/failure-policy.ts): `model_auth`,
 * `model_not_found`, `model_unreachable` and `model_rate_limited` stop the run; `context_overflow` is the agent's
 * outcome.
 */
export function modelErrorFor(failure: AttemptFailure, attempts: number, context: FailureContext): ModelError {
  const where = `model endpoint ${context.baseURL} (model '${context.model}')`;
  const status = failure.status === undefined ? '' : `HTTP ${failure.status}: `;
  const details = { baseURL: context.baseURL, model: context.model, status: failure.status, attempts };
  const fault = (message: string, code: ErrorCode, retryable: boolean) =>
    new ModelError(message, { code, retryable, cause: failure.cause, details });
  if (failure.kind === 'aborted') return fault(`request to ${where} aborted`, 'aborted', false);
  if (failure.kind === 'rate_limited') {
    return fault(
      `${where} kept rate-limiting one request past endpoint.max_rate_limit_wait_ms: ${status}${failure.message} ` +
        '(its quota may be used up; rerun to resume, or raise max_rate_limit_wait_ms)',
      'model_rate_limited',
      true,
    );
  }
  if (failure.kind === 'retryable') {
    const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
    if (failure.status === undefined && isUnreachable(failure.cause)) {
      return fault(`${where} unreachable after ${tries}: ${failure.message}`, 'model_unreachable', true);
    }
    return fault(`${where} unavailable after ${tries}: ${status}${failure.message}`, 'model_unavailable', true);
  }
  if (failure.status === undefined) return fault(`${where} failed: ${failure.message}`, 'model_failed', false);
  if (failure.status === 401 || failure.status === 403) {
    return fault(
      `${where} refused the credentials: ${status}${failure.message} (check the API key variable, --api-key-env)`,
      'model_auth',
      false,
    );
  }
  if (failure.status === 404) {
    return fault(
      `${where} does not know this model or route: ${status}${failure.message} (check --model and --base-url)`,
      'model_not_found',
      false,
    );
  }
  // The same test the agent loop applies (context-overflow.ts), so both agree on what an overflow is.
  if (isContextOverflow({ status: failure.status, message: failure.message, code: errorCodeOf(failure.cause) })) {
    return fault(
      `${where}: the conversation exceeds the model's context: ${status}${failure.message}`,
      'context_overflow',
      false,
    );
  }
  return fault(`${where} rejected the request: ${status}${failure.message}`, 'model_request_rejected', false);
}

/** The server's error code (`context_length_exceeded`, llama.cpp's error type) where the SDK kept one. */
function errorCodeOf(cause: unknown): string | undefined {
  if (!(cause instanceof APIError)) return undefined;
  const body = cause.error as { type?: unknown } | undefined;
  if (typeof cause.code === 'string') return cause.code;
  return typeof body?.type === 'string' ? body.type : undefined;
}

function isUnreachable(cause: unknown): boolean {
  if (cause instanceof APIConnectionTimeoutError || cause instanceof AttemptTimeoutError) return false;
  let current: unknown = cause;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (code && UNREACHABLE_CODES.has(code)) return true;
    current = current.cause;
  }
  return false;
}
