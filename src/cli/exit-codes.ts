import { errorCodeSet, isTrajError, type SerializedError } from '../errors.js';
import { RUN_FAULT_CODES } from '../run/failure-policy.js';

/** What every traj command's exit status means; docs/reference.md (generated from this table) and `traj --help` show it. */
export const EXIT_OK = 0;
/** Some prompts failed: rerun the same command to retry them (`--retry-failed` for those failed for good). */
export const EXIT_FAILED = 1;
/** A usage, config or dataset error: nothing (more) ran; fix the command or the file it names. */
export const EXIT_USAGE = 2;
/** `traj bench --agent oracle|noop` found broken tasks, or a task's environment/Dockerfile would not build. */
export const EXIT_BROKEN_TASKS = 3;
/**
 * A run-level fault (key, endpoint, model, image, Docker engine, run held by another process, a queued run no worker
 * will take): fix it and rerun.
 */
export const EXIT_RUN_FAULT = 4;
/** `--max-cost` stopped dispatch: the run's spend reached the limit (or a model's cost is unknown). */
export const EXIT_BUDGET = 5;
/** Stopped by SIGINT/SIGTERM: rerun the same command to resume. */
export const EXIT_INTERRUPTED = 130;

export const EXIT_CODE_TABLE: ReadonlyArray<readonly [number, string]> = [
  [EXIT_OK, 'every prompt done (or discarded by a filter)'],
  [EXIT_FAILED, 'some prompts failed: rerun to retry; --retry-failed gives those failed for good fresh attempts'],
  [EXIT_USAGE, 'usage, config or dataset error (bad flag, config key, missing file, malformed row)'],
  [EXIT_BROKEN_TASKS, "traj bench --agent oracle|noop found broken tasks, or a task's own image failed to build"],
  [
    EXIT_RUN_FAULT,
    'run-level fault: key, endpoint, model, sandbox image or Docker engine unusable, the run is held by another process, or every traj worker refuses a --queue run',
  ],
  [EXIT_BUDGET, '--max-cost reached (or a model has no known cost): completed work kept, rerun with a higher limit'],
  [EXIT_INTERRUPTED, 'interrupted (Ctrl-C / SIGTERM): rerun to resume'],
];

/** The table as help text, indented under a heading. */
export function exitCodeHelp(): string {
  return ['Exit codes:', ...EXIT_CODE_TABLE.map(([code, meaning]) => `  ${String(code).padEnd(4)}${meaning}`)].join(
    '\n',
  );
}

/** Codes that are a usage or config mistake whatever their error class. */
const USAGE_CODES = errorCodeSet(['cli_usage', 'fingerprint_changed']);
/** Run-level faults besides the rollout ones (failure-policy.ts): the run cannot start. */
const RUN_CODES = errorCodeSet(['run_locked']);
const BUDGET_CODES = errorCodeSet(['budget_exceeded']);
/** A task's own image would not build: the task is broken, as an oracle scoring 0 says. */
const BROKEN_TASK_CODES = errorCodeSet(['image_build_failed']);

/** The exit status for an error that ended a command (a TrajError, or one serialized from a worker thread). */
export function exitCodeFor(error: unknown): number {
  if (!isTrajError(error) && !isSerializedError(error)) return EXIT_FAILED;
  if (RUN_FAULT_CODES.has(error.code) || RUN_CODES.has(error.code)) return EXIT_RUN_FAULT;
  if (BUDGET_CODES.has(error.code)) return EXIT_BUDGET;
  if (BROKEN_TASK_CODES.has(error.code)) return EXIT_BROKEN_TASKS;
  if (USAGE_CODES.has(error.code)) return EXIT_USAGE;
  if (error.name === 'ConfigError' || error.name === 'DatasetError') return EXIT_USAGE;
  return EXIT_FAILED;
}

function isSerializedError(value: unknown): value is SerializedError {
  const candidate = value as Partial<SerializedError> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.code === 'string' &&
    typeof candidate.name === 'string' &&
    !(value instanceof Error)
  );
}
