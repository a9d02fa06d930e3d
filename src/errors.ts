/**
 * Harness faults. Tool failures are not errors (they become tool results the model reads);
 * these are faults of the harness, its inputs or its infrastructure, each with a stable `code`,
 * a `retryable` flag the run pipeline uses to classify failures, and a message a user can act on.
 */
export type ErrorClass = 'infra' | 'agent' | 'filtered' | 'input';

export interface TrajErrorOptions {
  code: string;
  retryable?: boolean;
  cause?: unknown;
  details?: Record<string, unknown>;
}

export class TrajError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;

  constructor(message: string, options: TrajErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.retryable = options.retryable ?? false;
    this.details = options.details ?? {};
  }

  toJSON(): { name: string; code: string; retryable: boolean; message: string; details: Record<string, unknown> } {
    return { name: this.name, code: this.code, retryable: this.retryable, message: this.message, details: this.details };
  }
}

/** A user-written file or flag is wrong: names the file, the path inside it and what was expected. */
export class ConfigError extends TrajError {}
/** A dataset row or file is unusable: names the file and line (or row index). */
export class DatasetError extends TrajError {}
/** The model endpoint failed: names the endpoint, the model, the status and the server's message. */
export class ModelError extends TrajError {}
/** A sandbox could not be created, used or cleaned up. */
export class SandboxError extends TrajError {}
/** The run store or the run pipeline refused to continue (e.g. a changed fingerprint). */
export class RunError extends TrajError {}

export function isTrajError(value: unknown): value is TrajError {
  return value instanceof TrajError;
}

/** A plain, structured-clone-safe description of any thrown value (for worker → main thread). */
export interface SerializedError {
  name: string;
  code: string;
  retryable: boolean;
  message: string;
  details?: Record<string, unknown>;
}

export function serializeError(error: unknown): SerializedError {
  if (error instanceof TrajError) return error.toJSON();
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { name: error.name, code: typeof code === 'string' ? code : 'internal', retryable: false, message: error.message };
  }
  return { name: 'Error', code: 'internal', retryable: false, message: String(error) };
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
