import type { AgentDefinition } from '../bridge/index.js';
import type { RunConfig } from '../run/run-config.js';
import { runBatch } from '../run/batch-run.js';
import { defaultOutputDirectory } from '../run/outputs.js';
import type { LocalPool } from '../run/pool.js';
import { runTools } from '../run/run-setup.js';
import type { ParsedCommand } from './command.js';
import type { ResolvedEndpoint } from './endpoint.js';
import { RunProgress } from './progress.js';
import { logRunStart, pipelineControls, progressHooks, runExitCode, runStopSignals } from './run-controls.js';
import { formatStatistics } from './summary.js';

/** A warning the first time each toolset is dropped from a draw; statistics.json counts every drop. */
export function warnOnce(log: (line: string) => void): (toolset: string, reason: string) => void {
  const warned = new Set<string>();
  return (toolset, reason) => {
    if (warned.has(toolset)) return;
    warned.add(toolset);
    log(
      `[traj] warning: toolset '${toolset}' is unavailable here (${reason}); it is dropped from the draws (counted in statistics.json "toolset_drops")`,
    );
  };
}

export interface BatchCommandInput {
  values: ParsedCommand['values'];
  config: RunConfig & { dataset: string };
  /** The agent CLI that is the policy (--agent NAME|FILE), when it is not traj's own agent. */
  agentCli?: AgentDefinition;
  resolved: ResolvedEndpoint;
  /** The threads `traj batch` started before loading this module (none for a queued run). */
  pool?: LocalPool;
  log: (line: string) => void;
}

/** `traj batch` once its endpoint is known and its threads are loading: run the prompts, print the statistics. */
export async function executeBatch(input: BatchCommandInput): Promise<number> {
  const { values, config, log } = input;
  const { endpoint, identity } = input.resolved;
  const outDir = config.out ?? defaultOutputDirectory(config.run);
  const tools = await runTools(config);
  const signals = runStopSignals(config, log);
  let progress: RunProgress | undefined;
  try {
    const result = await runBatch({
      config,
      tools,
      endpoint,
      endpointIdentity: identity,
      agentCli: input.agentCli,
      outDir,
      force: values.force === true,
      controls: {
        ...pipelineControls(config, signals),
        ...progressHooks(log, () => progress),
        pool: input.pool,
      },
      onDrop: warnOnce(log),
      onStart(info, rows) {
        const agent = input.agentCli ? `agent ${input.agentCli.name}, model ` : '';
        logRunStart(log, info, `run '${config.run}': ${agent}${endpoint.model} at ${endpoint.base_url}`);
        progress = new RunProgress(rows);
        progress.watchRequests(info.requestsInFlight);
        progress.watchSpend(info.spentUsd, info.maxCostUsd);
        progress.watchConcurrency(info.concurrencyLevel);
      },
    });
    progress?.stop();
    process.stdout.write(`${formatStatistics(result.outputs.stats)}\n\n`);
    process.stdout.write(
      `wrote ${result.outputs.rows} trajectories to ${result.outputs.trajectories}\nstatistics: ${result.outputs.statistics}\n`,
    );
    return runExitCode(result.summary, result.outputs.stats, log, 'prompts') ?? 0;
  } finally {
    progress?.stop();
    signals.dispose();
  }
}
