import { recordFilters } from '../run/batch.js';
import type { ExecuteRunInput, RunStartInfo } from '../run/execute-run.js';
import type { PipelineSummary } from '../run/pipeline.js';
import type { RunConfig } from '../run/run-config.js';
import { installStopSignals, type StopSignals } from './signals.js';

export const EXIT_INTERRUPTED = 130;

/** SIGINT/SIGTERM for a run: the first stops dispatching, the second interrupts in-flight rollouts. */
export function runStopSignals(config: RunConfig, log: (line: string) => void): StopSignals {
  return installStopSignals(
    () => log(`\n[traj] stopping: no new rollouts; in-flight ones get ${config.grace_period} s (Ctrl-C again to interrupt them now)`),
    () => log('\n[traj] interrupting in-flight rollouts'),
  );
}

/** The pipeline settings batch, eval and bench share: pool size, retries, filters, signals. */
export function pipelineControls(
  config: RunConfig,
  signals: StopSignals,
): Pick<ExecuteRunInput, 'filters' | 'workers' | 'concurrency' | 'maxAttempts' | 'graceMs' | 'stop' | 'interruptNow'> {
  return {
    filters: recordFilters({ requireReasoning: config.require_reasoning, completedOnly: config.completed_only }),
    workers: config.workers,
    concurrency: config.concurrency,
    maxAttempts: config.max_attempts,
    graceMs: config.grace_period * 1000,
    stop: signals.stop,
    interruptNow: signals.interruptNow,
  };
}

/** The line a run starts with: what runs where, how parallel, and whether it resumes. */
export function logRunStart(log: (line: string) => void, info: RunStartInfo, what: string): void {
  if (info.fingerprintChanges.length > 0) log(`[traj] --force: continuing although settings changed:\n  ${info.fingerprintChanges.join('\n  ')}`);
  const resumed = info.alreadyFinished > 0 ? `, resuming (${info.alreadyFinished} already finished)` : '';
  log(`[traj] ${what}, ${info.workers} workers × ${Math.ceil(info.concurrency / info.workers)} rollouts, store ${info.storePath}${resumed}`);
}

/** 130 when interrupted, 1 when rollouts failed (a rerun retries them), else undefined (the caller decides). */
export function runExitCode(summary: PipelineSummary, log: (line: string) => void, failedWhat: string): number | undefined {
  if (summary.stopped) {
    log(`[traj] interrupted: ${summary.interrupted} rollouts went back to pending. Resume with the same command.`);
    return EXIT_INTERRUPTED;
  }
  if (summary.failed > 0) {
    log(`[traj] ${summary.failed} ${failedWhat} failed (see statistics.json "failed_by_code"); rerun the same command to retry them.`);
    return 1;
  }
  return undefined;
}
