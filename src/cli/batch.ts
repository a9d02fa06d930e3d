import { createReadStream, existsSync } from 'node:fs';
import { availabilityContext, batchEntries, fingerprintParts } from '../run/batch.js';
import { executeRun } from '../run/execute-run.js';
import { defaultOutputDirectory } from '../run/outputs.js';
import { knowledgeFingerprint } from '../run/rollout-knowledge.js';
import { rolloutSettings, runRegistry, toolsetChoice } from '../run/run-setup.js';
import { ConfigError } from '../errors.js';
import type { CommandDefinition } from './command.js';
import { resolveEndpoint } from './endpoint.js';
import { RunProgress } from './progress.js';
import { RUN_OPTIONS, runConfigFrom } from './run-options.js';
import { logRunStart, pipelineControls, runExitCode, runStopSignals } from './run-controls.js';
import { exitCodeHelp } from './exit-codes.js';
import { formatStatistics } from './summary.js';

/** Rows of a local JSONL file, counted by newlines (cheap) so the progress bar knows its total. */
export async function countJsonlRows(path: string): Promise<number | undefined> {
  if (!/\.(jsonl|ndjson)$/.test(path) || !existsSync(path)) return undefined;
  let count = 0;
  let last = 10;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    for (let index = chunk.indexOf(10); index !== -1; index = chunk.indexOf(10, index + 1)) count++;
    last = chunk[chunk.length - 1] ?? last;
  }
  return last === 10 ? count : count + 1;
}

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
    const registry = runRegistry(config);
    const choice = toolsetChoice(config, registry);
    const { endpoint, scripted, identity } = await resolveEndpoint(values, config.endpoint, {
      scriptedIfUnset: values['scripted-if-unset'] === true,
      log,
    });
    const settings = rolloutSettings(config, endpoint);
    const dataset = config.dataset;
    const total = await countJsonlRows(dataset);
    const signals = runStopSignals(config, log);
    let progress: RunProgress | undefined;
    try {
      const result = await executeRun({
        kind: 'batch',
        run: config.run,
        checkpointsDir: config.checkpoints,
        outDir,
        endpoint,
        settings,
        fingerprintParts: fingerprintParts({
          endpoint,
          endpointIdentity: identity,
          choice,
          registry,
          maxTurns: config.max_turns,
          systemPrompt: settings.systemPrompt,
          runTime: settings,
          seed: config.seed,
          environment: { name: 'prompts', version: '1' },
          agent: 'model',
          sandbox: { kind: config.sandbox, image: config.image },
          knowledge: knowledgeFingerprint(settings),
          tools: settings,
        }),
        config: { ...config, endpoint: { ...endpoint } },
        force: values.force === true,
        entries: (store) =>
          batchEntries({
            dataset,
            reader: { skipBadRows: config.skip_bad_rows, hubUrl: config.hub_url },
            choice,
            seed: config.seed,
            limit: config.limit,
            registry,
            store,
            expectedRows: total,
            onDrop: warnOnce(log),
            availability: availabilityContext(settings),
          }),
        ...pipelineControls(config, signals),
        onWarning: log,
        onStart(info) {
          logRunStart(log, info, `run '${config.run}': ${endpoint.model} at ${endpoint.base_url}`);
          progress = new RunProgress(total !== undefined ? Math.min(total, config.limit ?? total) : undefined);
          progress.watchRequests(info.requestsInFlight);
          progress.watchConcurrency(info.concurrencyLevel);
        },
        onEvent: (event) => progress?.onEvent(event),
        onNotice: (message) => log(`[traj] ${message}`),
        onPipelineDone: () => progress?.stop(),
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
