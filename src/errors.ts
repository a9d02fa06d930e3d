/**
 * Harness faults. Tool failures are not errors (they become tool results the model reads);
 * these are faults of the harness, its inputs or its infrastructure, each with a stable `code`,
 * a `retryable` flag the run pipeline uses to classify failures, and a message a user can act on.
 */
export type ErrorClass = 'infra' | 'agent' | 'filtered' | 'input';

/**
 * Every `code` a harness fault may carry, so a typo in a `new XError(…, { code })` or in an
 * `error.code === '…'` comparison fails to compile. Adding a code is one line here (kept sorted).
 */
export const ERROR_CODES = [
  'aborted',
  'agent_failed',
  'agent_image_failed',
  'agent_install_failed',
  'agent_limit',
  'agent_network_failed',
  'agent_timeout',
  'api_key_missing',
  'archive_failed',
  'budget_exceeded',
  'cli_usage',
  'compress_changed',
  'compress_unfinished',
  'config_invalid',
  'config_missing',
  'config_syntax',
  'container_gone',
  'context_overflow',
  'copy_failed',
  'create_failed',
  'cwd_missing',
  'dataset_all_bad',
  'dataset_bad_row',
  'dataset_duplicate_id',
  'dataset_empty',
  'dataset_format',
  'dataset_hub_access',
  'dataset_hub_not_found',
  'dataset_hub_unreachable',
  'dataset_hub_url',
  'dataset_missing',
  'dataset_row_invalid',
  'dataset_unreadable',
  'dispose_failed',
  'disposed',
  'distribution_unknown',
  'endpoint_missing',
  'engine_unreachable',
  'environment_empty',
  'environment_invalid',
  'environment_missing',
  'environment_prompt_empty',
  'environment_unknown',
  'exec_failed',
  'file_timeout',
  'file_too_large',
  'fingerprint_changed',
  'fork_item_missing',
  'fork_key_ambiguous',
  'fork_no_record',
  'fork_record_invalid',
  'fork_run_missing',
  'fork_turn',
  'hard_link',
  'hub_request_failed',
  'hub_unauthorized',
  'hub_unreachable',
  'image_build_failed',
  'image_missing',
  'init_file_exists',
  'internal',
  'invalid_command',
  'invalid_filter',
  'invalid_path',
  'invalid_record',
  'invalid_token',
  'invalid_workdir',
  'is_directory',
  'isolation_unavailable',
  'judge_invalid_output',
  'judge_missing',
  'judge_rubric_missing',
  'mcp_env_missing',
  'mcp_start_failed',
  'mcp_toolset_invalid',
  'mcp_unavailable',
  'model_auth',
  'model_failed',
  'model_missing',
  'model_not_found',
  'model_rate_limited',
  'model_request_rejected',
  'model_unavailable',
  'model_unknown',
  'model_unreachable',
  'network_policy',
  'not_found',
  'not_regular_file',
  'nothing_to_export',
  'oracle_missing',
  'output_folder_foreign',
  'path_escape',
  'path_loop',
  'policy_version_old',
  'port_in_use',
  'prune_failed',
  'queue_lost',
  'queue_refused',
  'queue_unreachable',
  'read_failed',
  'reply_too_large',
  'report_invalid',
  'report_missing',
  'rescore_no_sandbox',
  'rollout_timeout',
  'run_fault',
  'run_locked',
  'run_missing',
  'run_not_eval',
  'sandbox_kind_unknown',
  'session_ambiguous',
  'session_closed',
  'session_missing',
  'session_unknown',
  'setup_failed',
  'spawn_host_exited',
  'start_failed',
  'store_not_found',
  'suite_missing',
  'suite_unknown',
  'task_duplicate',
  'task_file_missing',
  'task_needs_docker',
  'task_setup_failed',
  'task_toml_invalid',
  'task_toml_syntax',
  'tasks_empty',
  'tasks_missing',
  'template_not_prefix',
  'tokenizer_invalid',
  'tokenizer_not_found',
  'tokenizer_unreachable',
  'tool_duplicate',
  'toolset_unknown',
  'toolsets_unavailable',
  'view_store_invalid',
  'view_store_missing',
  'worker_crashed',
  'write_failed',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/** A set of codes, checked where it is written, asked about with any string (a serialized error's code). */
export function errorCodeSet(codes: readonly ErrorCode[]): ReadonlySet<string> {
  return new Set(codes);
}

/** Whether a code that crossed a thread as data (a `SerializedError`) is one of ours. */
export function isErrorCode(code: string): code is ErrorCode {
  return KNOWN_CODES.has(code);
}

export interface TrajErrorOptions {
  code: ErrorCode;
  retryable?: boolean;
  cause?: unknown;
  details?: Record<string, unknown>;
}

export class TrajError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;

  constructor(message: string, options: TrajErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.retryable = options.retryable ?? false;
    this.details = options.details ?? {};
  }

  toJSON(): { name: string; code: ErrorCode; retryable: boolean; message: string; details: Record<string, unknown> } {
    return {
      name: this.name,
      code: this.code,
      retryable: this.retryable,
      message: this.message,
      details: this.details,
    };
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

/**
 * A plain, structured-clone-safe description of any thrown value (for worker → main thread). Its
 * `code` stays a string: a thrown Node error brings its own (`ENOENT`); `isErrorCode` narrows it.
 */
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
    return {
      name: error.name,
      code: typeof code === 'string' ? code : 'internal',
      retryable: false,
      message: error.message,
    };
  }
  return { name: 'Error', code: 'internal', retryable: false, message: String(error) };
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
