import { recordFilters } from '../run/batch.js';
import { errorMessage } from '../errors.js';
import type { ExecuteRunInput, RunStartInfo } from '../run/execute-run.js';
import type { PipelineSummary } from '../run/pipeline.js';
import type { RunConfig } from '../run/run-config.js';
import type { RunStatistics } from '../run/run-statistics.js';
import { budgetStopReason } from '../run/spend-limit.js';
import { usd } from '../util/cost-text.js';
import { EXIT_BUDGET, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_RUN_FAULT, exitCodeFor } from './exit-codes.js';
import { installStopSignals, type StopSignals } from './signals.js';
import { queueTransport } from './queue-options.js';
import type { RunProgress } from './progress.js';

export { EXIT_INTERRUPTED } from './exit-codes.js';

/** SIGINT/SIGTERM for a run: a first SIGINT stops dispatching, a second (or SIGTERM) interrupts in-flight rollouts. */
export function runStopSignals(config: RunConfig, log: (line: string) => void): StopSignals {
  return installStopSignals(
    () =>
      log(
        `\n[traj] stopping: no new rollouts; in-flight ones get ${config.grace_period} s (Ctrl-C again to interrupt them now)`,
      ),
    () => log('\n[traj] interrupting in-flight rollouts'),
  );
}

/** The pipeline settings batch, eval and bench share: pool size, retries, filters, signals. */
export function pipelineControls(
  config: RunConfig,
  signals: StopSignals,
): Pick<
  ExecuteRunInput,
  | 'filters'
  | 'workers'
  | 'concurrency'
  | 'maxAttempts'
  | 'retryFailed'
  | 'maxCostUsd'
  | 'graceMs'
  | 'stop'
  | 'interruptNow'
  | 'remote'
> {
  return {
    filters: recordFilters({ requireReasoning: config.require_reasoning, completedOnly: config.completed_only }),
    workers: config.workers,
    concurrency: config.concurrency,
    maxAttempts: config.max_attempts,
    retryFailed: config.retry_failed,
    maxCostUsd: config.max_cost,
    graceMs: config.grace_period * 1000,
    stop: signals.stop,
    interruptNow: signals.interruptNow,
    remote: queueTransport(config),
  };
}

/** The line a run starts with: what runs where, how parallel, and whether it resumes. */
export function logRunStart(log: (line: string) => void, info: RunStartInfo, what: string): void {
  if (info.fingerprintChanges.length > 0)
    log(`[traj] --force: continuing although settings changed:\n  ${info.fingerprintChanges.join('\n  ')}`);
  const resumed = info.alreadyFinished > 0 ? `, resuming (${info.alreadyFinished} already finished)` : '';
  if (info.queued) {
    // A queued run (--queue) has no local workers: `traj worker` processes elsewhere run its rollouts.
    log(`[traj] ${what}, queued, ${info.concurrency} in flight on traj workers, store ${info.storePath}${resumed}`);
    return;
  }
  log(`[traj] ${what}, store ${info.storePath}${resumed}`);
  log(`[traj] ${concurrencyLine(info)}`);
  if (info.retried > 0) log(`[traj] --retry-failed: ${info.retried} failed prompts get fresh attempts`);
  if (info.maxCostUsd !== undefined)
    log(`[traj] --max-cost ${usd(info.maxCostUsd)}: the run has spent ${usd(info.spentUsd)} so far (all invocations)`);
}

/** What runs in parallel and what bounds it: rollouts in flight, the request cap, the threads and why. */
export function concurrencyLine(info: RunStartInfo): string {
  const threads =
    info.workers === 0
      ? `on the main thread (${info.workersReason})`
      : `${info.workers} worker thread${info.workers === 1 ? '' : 's'} (${info.workersReason})`;
  const cap =
    info.endpointCap === undefined
      ? `model requests capped at ${info.requestCap} (--concurrency)`
      : `model requests capped at ${info.requestCap} by endpoint.concurrency ${info.endpointCap}`;
  const level = info.adaptive
    ? `adaptive within [${info.adaptive.min}, ${info.adaptive.max}] (429/503 lower it)`
    : 'fixed (endpoint.adaptive: false)';
  return `${info.concurrency} rollouts in flight, ${cap}, ${threads}; requests in flight ${level}`;
}

/**
 * The exit status of a finished run (exit-codes.ts) and the lines that say why: 4 after a run-level
 * fault, the dataset error's status after a bad row, 130 when interrupted, 1 when prompts failed
 * (with each failure code's first message), else undefined (the caller decides, e.g. bench's 3).
 */
export function runExitCode(
  summary: PipelineSummary,
  stats: RunStatistics,
  log: (line: string) => void,
  failedWhat: string,
): number | undefined {
  if (summary.runFault) {
    log(`[traj] stopped: run-level fault ${summary.runFault.code}: ${summary.runFault.message}`);
    log(
      `[traj] no ${failedWhat} used an attempt for it (${summary.interrupted} went back to pending). Fix the cause and run the same command again.`,
    );
    return EXIT_RUN_FAULT;
  }
  if (summary.inputError) {
    log(`[traj] stopped dispatching: ${errorMessage(summary.inputError)}`);
    log(
      `[traj] the ${failedWhat} already running landed and the outputs are written. Fix the row (or pass --skip-bad-rows) and run the same command again to continue.`,
    );
    return exitCodeFor(summary.inputError);
  }
  if (summary.budget) {
    log(`[traj] stopped dispatching: ${budgetStopReason(summary.budget)}`);
    log(
      `[traj] the run has spent ${usd(summary.budget.spentUsd)} in total (the rollouts in flight at the stop landed; their cost counts). Completed ${failedWhat} are kept: rerun with a higher --max-cost to continue.`,
    );
    return EXIT_BUDGET;
  }
  if (summary.stopped) {
    log(`[traj] interrupted: ${summary.interrupted} rollouts went back to pending. Resume with the same command.`);
    return EXIT_INTERRUPTED;
  }
  if (summary.failed > 0 || summary.exhausted > 0) {
    const forGood = stats.prompts.failed_for_good;
    log(
      `[traj] ${summary.failed + summary.exhausted} ${failedWhat} failed${forGood > 0 ? ` (${forGood} for good: attempts used up or a fault that repeats)` : ''}:`,
    );
    for (const line of failureLines(stats)) log(`  ${line}`);
    const retryable = summary.failed + summary.exhausted - forGood;
    if (retryable > 0) log(`[traj] rerun the same command to retry the ${retryable} that may succeed on another try.`);
    if (forGood > 0)
      log(
        `[traj] a rerun skips the ${forGood} failed for good: fix the cause, then rerun with --retry-failed to give them fresh attempts.`,
      );
    return EXIT_FAILED;
  }
  return undefined;
}

/** One line per failure code: how many, an example prompt key, and the first message in full. */
export function failureLines(stats: RunStatistics): string[] {
  return Object.entries(stats.prompts.failures).map(
    ([code, failure]) => `${code} ×${failure.count} (e.g. ${failure.example_key}): ${failure.first_message}`,
  );
}

/** What every run command shows while it runs: warnings and notices on stderr, events on its progress bar. */
export function progressHooks(
  log: (line: string) => void,
  progress: () => RunProgress | undefined,
): Pick<ExecuteRunInput, 'onWarning' | 'onEvent' | 'onNotice' | 'onPipelineDone'> {
  return {
    onWarning: log,
    onEvent: (event) => progress()?.onEvent(event),
    onNotice: (message) => log(`[traj] ${message}`),
    onPipelineDone: () => progress()?.stop(),
  };
}
