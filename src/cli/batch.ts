import { runBatch } from '../run/batch-run.js';
import { defaultOutputDirectory } from '../run/outputs.js';
import { runTools } from '../run/run-setup.js';
import { ConfigError } from '../errors.js';
import type { CommandDefinition } from './command.js';
import { resolveEndpoint } from './endpoint.js';
import { RunProgress } from './progress.js';
import { RUN_OPTIONS, runConfigFrom } from './run-options.js';
import { logRunStart, pipelineControls, progressHooks, runExitCode, runStopSignals } from './run-controls.js';
import { exitCodeHelp } from './exit-codes.js';
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

export const command: CommandDefinition = {
  name: 'batch',
  summary: 'turn a prompt dataset into a trajectory dataset (resumable)',
  usage: 'traj batch --dataset FILE --run NAME [--distribution NAME | --toolsets a,b] [options]',
  options: RUN_OPTIONS,
  details: `Examples:
  traj batch --dataset datasets/sample/prompts.jsonl --run demo --distribution development
  traj batch --config run.yaml --concurrency 64          # flags override the config file
Resume: run the same command again; finished prompts are skipped, failed ones retried until --max-attempts
recorded failures (a kill or a run-level fault uses no attempt); --retry-failed gives those failed for good fresh attempts.
Rate limits: model requests in flight adapt per endpoint (AIMD, up to --concurrency or endpoint.concurrency): a 429/503
lowers the level, retry-after pauses new requests, successes raise it again; the progress line shows it (conc 37/64).
A 429 never uses an attempt or max_retries; one refused past endpoint.max_rate_limit_wait_ms stops the run
(model_rate_limited, exit 4). endpoint.adaptive: false keeps a fixed cap.
Before the first rollout a preflight checks the key, the endpoint (GET /models) and, for --sandbox docker, the image.
Outputs: checkpoints/NAME.sqlite (the source of truth), datasets/NAME/trajectories.jsonl and statistics.json
(or --out DIR). A datasets/NAME/ that holds other files but no run outputs (e.g. the shipped datasets/sample/)
is refused: choose another run name or --out.
${exitCodeHelp()}`,
  async run({ values }) {
    const config = runConfigFrom(values);
    if (!config.dataset)
      throw new ConfigError('missing --dataset FILE (JSONL, Parquet, Arrow or hf://datasets/...)', {
        code: 'cli_usage',
      });
    const outDir = config.out ?? defaultOutputDirectory(config.run);
    const log = (line: string) => process.stderr.write(`${line}\n`);
    const tools = runTools(config);
    const { endpoint, scripted, identity } = await resolveEndpoint(values, config.endpoint, {
      scriptedIfUnset: values['scripted-if-unset'] === true,
      log,
    });
    const signals = runStopSignals(config, log);
    let progress: RunProgress | undefined;
    try {
      const result = await runBatch({
        config: { ...config, dataset: config.dataset },
        tools,
        endpoint,
        endpointIdentity: identity,
        outDir,
        force: values.force === true,
        controls: {
          ...pipelineControls(config, signals),
          ...progressHooks(log, () => progress),
        },
        onDrop: warnOnce(log),
        onStart(info, rows) {
          logRunStart(log, info, `run '${config.run}': ${endpoint.model} at ${endpoint.base_url}`);
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
      await scripted?.close();
    }
  },
};
