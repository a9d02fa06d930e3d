import type { AgentDefinition } from '../bridge/index.js';
import type { Endpoint } from '../config/endpoint.js';
import { countJsonlRows } from '../dataset/count-rows.js';
import { checkDatasetSource } from '../dataset/index.js';
import { availabilityContext, batchEntries } from './batch.js';
import { executeRun, type ExecuteRunResult, type RunStartInfo } from './execute-run.js';
import type { RunConfig } from './run-config.js';
import { rolloutSettings, type RunControls, type RunTools } from './run-setup.js';
import { runFingerprintParts } from './run-fingerprint.js';

export interface BatchRunInput {
  config: RunConfig & { dataset: string };
  tools: RunTools;
  endpoint: Endpoint;
  /** The endpoint's stable identity for the fingerprint. */
  endpointIdentity: string;
  /** The policy when it is an agent CLI (`--agent qwen-code`; config from agentCliBatchConfig); else traj's own agent. */
  agentCli?: AgentDefinition;
  outDir: string;
  force: boolean;
  /** What the caller owns (pool size, retries, filters, signals, progress), passed through to executeRun. */
  controls: RunControls;
  /** Called once per toolset dropped from a draw because it is unavailable here. */
  onDrop?: (toolset: string, reason: string) => void;
  /** `rows`: the dataset's rows when known up front (a local JSONL file's lines, under --limit). */
  onStart?(info: RunStartInfo, rows: number | undefined): void;
}

/** A batch run from its run config: the prompt dataset streamed through the pipeline into trajectories. */
export async function runBatch(input: BatchRunInput): Promise<ExecuteRunResult> {
  const { config, endpoint } = input;
  const { registry, choice } = input.tools;
  const { agentCli } = input;
  const settings = rolloutSettings(config, endpoint, agentCli ? { agent: 'cli', agentCli } : {});
  const dataset = config.dataset;
  // Before the store: a missing, empty or unreadable-by-name dataset leaves no run behind.
  await checkDatasetSource(dataset);
  const total = await countJsonlRows(dataset);
  return executeRun({
    kind: 'batch',
    run: config.run,
    checkpointsDir: config.checkpoints,
    outDir: input.outDir,
    endpoint,
    settings,
    fingerprintParts: {
      ...runFingerprintParts(config, settings, {
        endpointIdentity: input.endpointIdentity,
        choice,
        registry,
        environment: { name: 'prompts', version: '1' },
        agent: agentCli ? `cli:${agentCli.name}` : 'model',
      }),
      // The whole definition: another version, command or limit makes another run.
      ...(agentCli ? { agent_cli: agentCli } : {}),
    },
    config: { ...config, endpoint: { ...endpoint } },
    force: input.force,
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
        onDrop: input.onDrop,
        availability: availabilityContext(settings),
      }),
    ...input.controls,
    onStart: (info) => input.onStart?.(info, total !== undefined ? Math.min(total, config.limit ?? total) : undefined),
  });
}
