import { createReadStream, existsSync } from 'node:fs';
import { DEFAULT_BUDGET } from '../tools/budget.js';
import { createToolRegistry } from '../tools/builtin.js';
import { loadDistribution } from '../tools/distributions.js';
import type { ToolRegistry } from '../tools/registry.js';
import { resolveAuxiliary } from '../config/auxiliary.js';
import { availabilityContext, batchEntries, fingerprintParts, type ToolsetChoice } from '../run/batch.js';
import { artifactsDirFor, executeRun, storePathFor } from '../run/execute-run.js';
import { defaultOutputDirectory } from '../run/outputs.js';
import type { RunConfig } from '../run/run-config.js';
import type { RolloutSettings } from '../run/rollout.js';
import { ConfigError } from '../errors.js';
import type { CommandDefinition } from './command.js';
import { resolveEndpoint } from './endpoint.js';
import { RunProgress } from './progress.js';
import { RUN_OPTIONS, runConfigFrom, systemPromptFrom } from './run-options.js';
import { logRunStart, pipelineControls, runExitCode, runStopSignals } from './run-controls.js';
import { exitCodeHelp } from './exit-codes.js';
import { formatStatistics } from './summary.js';

/** The registry for choosing tools on the main thread: built-ins plus the configured MCP servers' toolsets. */
export function runRegistry(config: RunConfig): ToolRegistry {
  const registry = createToolRegistry();
  for (const name of Object.keys(config.mcp_servers ?? {})) registry.declareToolset(`mcp:${name}`);
  return registry;
}

export function toolsetChoice(config: RunConfig, registry: ToolRegistry, fallbackDistribution = 'default'): ToolsetChoice {
  if (config.toolsets) {
    registry.assertToolsets(config.toolsets, '--toolsets');
    return { toolsets: config.toolsets };
  }
  return { distribution: loadDistribution(config.distribution ?? fallbackDistribution, registry) };
}

export function rolloutSettings(config: RunConfig, endpoint: RolloutSettings['endpoint'], extra: Partial<RolloutSettings> = {}): RolloutSettings {
  return {
    run: config.run,
    endpoint,
    maxTurns: config.max_turns,
    systemPrompt: systemPromptFrom(config),
    sandbox: { kind: config.sandbox, image: config.image, workdir: config.workdir, docker: config.docker },
    budget: { ...DEFAULT_BUDGET, ...config.budget },
    agent: 'model',
    rolloutTimeoutMs: config.rollout_timeout ? config.rollout_timeout * 1000 : undefined,
    toolConcurrency: config.tool_concurrency,
    mcpServers: config.mcp_servers,
    web: config.web,
    auxiliary: resolveAuxiliary(config.auxiliary, endpoint),
    browser: config.browser,
    delegation: config.delegation,
    codeExecution: config.code_execution,
    artifactsDir: artifactsDirFor(config.checkpoints, config.run),
    webCache: { path: storePathFor(config.checkpoints, config.run), mode: config.web_cache },
    ...extra,
  };
}

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
    log(`[traj] warning: toolset '${toolset}' is unavailable here (${reason}); it is dropped from the draws (counted in statistics.json "toolset_drops")`);
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
Before the first rollout a preflight checks the key, the endpoint (GET /models) and, for --sandbox docker, the image.
Outputs: checkpoints/NAME.sqlite (the source of truth), datasets/NAME/trajectories.jsonl and statistics.json
(or --out DIR). A datasets/NAME/ that holds other files but no run outputs (e.g. the shipped datasets/sample/)
is refused: choose another run name or --out.
${exitCodeHelp()}`,
  async run({ values }) {
    const config = runConfigFrom(values);
    if (!config.dataset) throw new ConfigError('missing --dataset FILE (JSONL, Parquet, Arrow or hf://datasets/...)', { code: 'cli_usage' });
    const outDir = config.out ?? defaultOutputDirectory(config.run);
    const log = (line: string) => process.stderr.write(`${line}\n`);
    const registry = runRegistry(config);
    const choice = toolsetChoice(config, registry);
    const { endpoint, scripted, identity } = await resolveEndpoint(values, config.endpoint, { scriptedIfUnset: values['scripted-if-unset'] === true, log });
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
          seed: config.seed,
          environment: { name: 'prompts', version: '1' },
          agent: 'model',
          sandbox: { kind: config.sandbox, image: config.image },
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
        onStart(info) {
          logRunStart(log, info, `run '${config.run}': ${endpoint.model} at ${endpoint.base_url}`);
          progress = new RunProgress(total !== undefined ? Math.min(total, config.limit ?? total) : undefined);
          progress.watchRequests(info.requestsInFlight);
        },
        onEvent: (event) => progress?.onEvent(event),
        onNotice: (message) => log(`[traj] ${message}`),
        onPipelineDone: () => progress?.stop(),
      });
      progress?.stop();
      process.stdout.write(`${formatStatistics(result.outputs.stats)}\n\n`);
      process.stdout.write(`wrote ${result.outputs.rows} trajectories to ${result.outputs.trajectories}\nstatistics: ${result.outputs.statistics}\n`);
      return runExitCode(result.summary, result.outputs.stats, log, 'prompts') ?? 0;
    } finally {
      progress?.stop();
      signals.dispose();
      await scripted?.close();
    }
  },
};
