import type { AgentDefinition } from '../bridge/index.js';
import type { Endpoint } from '../config/endpoint.js';
import type { EnvironmentConfig } from '../eval/environment-config.js';
import type { Environment, EnvironmentOptions } from '../eval/environment.js';
import type { JudgeSettings } from '../eval/judge.js';
import { ConfigError } from '../errors.js';
import { toolSpec } from '../tools/tool-spec.js';
import { DEFAULT_DOCKER_IMAGE } from '../sandbox/docker-config.js';
import { availabilityContext } from './batch.js';
import {
  environmentEntries,
  keyedItems,
  surveyItems,
  type ItemSurvey,
  type KeyedEnvironmentItem,
} from './environment-entries.js';
import type { PipelineEntry, WorkItem } from './work-item.js';
import { executeRun, storePathFor, type ExecuteRunResult, type RunStartInfo } from './execute-run.js';
import type { RolloutSettings } from './rollout.js';
import type { RunConfig } from './run-config.js';
import { rolloutSettings, runTools, type RunControls, type RunTools } from './run-setup.js';
import { runFingerprintParts } from './run-fingerprint.js';
import { judgeFingerprint, type EvalAgent, type StoredEval } from './stored-eval.js';
import { isFinished, type RunStore } from './store.js';

/**
 * An eval (or bench) run from its settings to the written outputs: what `traj eval` and `traj bench`
 * share once their flags are read. Items are surveyed in one streaming pass, then streamed again
 * into the pipeline as it pulls them.
 */

/** The run-config defaults an environment gives (config.yaml over the environment's own fields); flags go over them. */
export function environmentRunDefaults(
  environment: Environment,
  environmentConfig: EnvironmentConfig,
  runDefaults: Partial<RunConfig> = {},
): Partial<RunConfig> {
  const defaults: Partial<RunConfig> = {
    ...runDefaults,
    max_turns: environmentConfig.max_turns ?? environment.maxTurns,
    sandbox:
      environmentConfig.sandbox ?? (typeof environment.sandbox === 'object' ? environment.sandbox.kind : undefined),
    image: environmentConfig.image,
    workdir: environmentConfig.workdir,
    concurrency: environmentConfig.concurrency,
  };
  return Object.fromEntries(Object.entries(defaults).filter(([, value]) => value !== undefined));
}

/** Defaults that conflict with a flag of another name, applied only when neither was given. */
export function applyEnvironmentDefaults(
  config: RunConfig,
  environment: Environment,
  environmentConfig: EnvironmentConfig,
): RunConfig {
  if (config.toolsets === undefined && config.distribution === undefined) {
    const toolsets =
      environmentConfig.toolsets ?? (environmentConfig.distribution === undefined ? environment.toolsets : undefined);
    if (toolsets !== undefined) config.toolsets = toolsets;
    else config.distribution = environmentConfig.distribution ?? environment.distribution;
  }
  if (config.system === undefined && config.system_prompt === undefined)
    config.system_prompt = environmentConfig.system_prompt ?? environment.systemPrompt;
  return config;
}

/** What the rollouts of an environment run used, for what is done with the store afterwards (report, re-checks). */
export interface EnvironmentRunContext {
  store: RunStore;
  outDir: string;
  agent: EvalAgent;
  /** What the rollouts ran with, so a caller can run an item again (bench: re-checking broken items). */
  settings: RolloutSettings;
  environment: Environment;
  /** What items() was given, so a caller can read the items again (they are never held). */
  environmentOptions: EnvironmentOptions;
}

/**
 * A run whose items come on demand (`traj serve`): the keyed items as a trainer asks for them,
 * read from `read()` (the environment's items, again from the start each time it is called), and
 * each pipeline entry given its own settings (the policy its group was asked from).
 */
export interface EnvironmentStream {
  items(store: RunStore, read: () => AsyncIterable<KeyedEnvironmentItem>): AsyncIterable<KeyedEnvironmentItem>;
  entry(entry: WorkItem, settings: RolloutSettings): WorkItem;
}

export interface EnvironmentRunInput {
  kind: 'eval' | 'bench' | 'serve';
  /** Items on demand instead of one pass over them (serve). */
  stream?: EnvironmentStream;
  config: RunConfig;
  plan: RunTools;
  environment: Environment;
  modulePath: string;
  agent: EvalAgent;
  /** With agent 'cli': the agent CLI's definition. */
  agentCli?: AgentDefinition;
  samples: number;
  passThreshold: number;
  /** The dataset as stored for rescoring (datasetLocation), if any. */
  dataset?: string;
  judges?: JudgeSettings;
  endpoint: Endpoint;
  /** The endpoint's stable identity for the fingerprint. */
  endpointIdentity: string;
  /** Environment-specific settings handed to items() (bench: the suite's environment_settings and flags). */
  environmentSettings?: Record<string, unknown>;
  /** The file the environment settings came from (bench: the suite), named in their errors. */
  environmentSettingsFile?: string;
  outDir: string;
  force: boolean;
  /** What the caller owns (pool size, retries, filters, signals, progress), passed through to executeRun. */
  controls: RunControls;
  hooks: {
    onStart?(info: RunStartInfo, survey: ItemSurvey): void;
    /** After the rollouts, before the outputs are written (eval: advantages and the report). */
    afterPipeline?(context: EnvironmentRunContext): Promise<void> | void;
  };
}

/** The tools an environment run offers, checked before anything starts (an oracle run needs the oracle hook). */
export async function planEnvironmentRun(
  config: RunConfig,
  environment: Environment,
  agent: EvalAgent,
): Promise<RunTools> {
  if (agent === 'oracle' && !environment.oracle) {
    throw new ConfigError(`--agent oracle: environment '${environment.name}' has no oracle (reference solution) hook`, {
      code: 'oracle_missing',
    });
  }
  return runTools(config);
}

export async function runEnvironment(input: EnvironmentRunInput): Promise<ExecuteRunResult> {
  const { config, environment, agent, judges, endpoint } = input;
  const { registry, choice } = input.plan;
  const storePath = storePathFor(config.checkpoints, config.run);
  const environmentOptions = { image: config.image, sandbox: config.sandbox, settings: input.environmentSettings };
  const itemOptions: EnvironmentOptions = {
    dataset: input.dataset,
    limit: config.limit,
    ...environmentOptions,
    settingsFile: input.environmentSettingsFile,
  };
  const survey = await nonEmptySurvey(environment, itemOptions, config.image, input.dataset);
  const stored: StoredEval = {
    environment_module: input.modulePath,
    dataset: input.dataset,
    limit: config.limit,
    samples: input.samples,
    pass_threshold: input.passThreshold,
    judges,
    environment_options: environmentOptions,
  };
  const settings = rolloutSettings(config, endpoint, {
    environmentModule: input.modulePath,
    agent,
    agentCli: input.agentCli,
    judges: judges && { ...judges, cachePath: storePath },
  });
  return executeRun({
    kind: input.kind,
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
        environment: { name: environment.name, version: environment.version },
        agent: agentIdentity(input),
      }),
      ...(input.agentCli ? { agent_cli: input.agentCli } : {}),
      judges: judgeFingerprint(judges),
      ...environmentDefinition(environment),
      ...(input.environmentSettings ? { environment_settings: input.environmentSettings } : {}),
    },
    config: { ...config, endpoint: { ...endpoint }, eval: stored },
    force: input.force,
    entries: (store) => runEntries(input, settings, store, itemOptions, survey.items),
    ...input.controls,
    onStart: (info) => input.hooks.onStart?.(info, survey),
    callsModel: agent === 'model' || agent === 'cli',
    images: survey.images,
    builds: survey.builds,
    afterPipeline: (store) =>
      input.hooks.afterPipeline?.({
        store,
        outDir: input.outDir,
        agent,
        settings,
        environment,
        environmentOptions: itemOptions,
      }),
  });
}

/** The items' count and images; an environment that yields none is an error before any store exists. */
async function nonEmptySurvey(
  environment: Environment,
  options: EnvironmentOptions,
  image: string | undefined,
  dataset: string | undefined,
): Promise<ItemSurvey> {
  const survey = await surveyItems(environment, options, image ?? DEFAULT_DOCKER_IMAGE);
  if (survey.items === 0)
    throw new ConfigError(`environment '${environment.name}' yielded no items${dataset ? ` from ${dataset}` : ''}`, {
      code: 'environment_empty',
    });
  return survey;
}

/** The agent in the fingerprint: an agent CLI by its name (its whole definition is fingerprinted beside it). */
function agentIdentity(input: EnvironmentRunInput): string {
  return input.agentCli ? `cli:${input.agentCli.name}` : input.agent;
}

/** What the environment adds to a run beyond its name and version: its own tools, MCP servers and YAML text. */
function environmentDefinition(environment: Environment): Record<string, unknown> {
  return {
    ...(environment.definitionHash ? { environment_definition: environment.definitionHash } : {}),
    ...(environment.tools ? { environment_tools: environment.tools.map(toolSpec) } : {}),
    ...(environment.mcpServers ? { environment_mcp_servers: environment.mcpServers } : {}),
  };
}

/** The eval's entries, each given its own settings when the items come on demand. */
async function* streamEntries(
  stream: EnvironmentStream | undefined,
  settings: RolloutSettings,
  input: Parameters<typeof environmentEntries>[0],
): AsyncGenerator<PipelineEntry> {
  for await (const entry of environmentEntries(input)) {
    if (!stream || 'bad' in entry) yield entry;
    // A resumed group's landed rollouts are not entries: the stream is read only as far as groups are wanted.
    else if (!isFinished(input.store.lookup(entry.key, entry.sample))) yield stream.entry(entry, settings);
  }
}

/** The pipeline's entries of an environment run: K samples per item, or the stream's groups. */
function runEntries(
  input: EnvironmentRunInput,
  settings: RolloutSettings,
  store: RunStore,
  itemOptions: EnvironmentOptions,
  expectedItems: number,
): AsyncIterable<PipelineEntry> {
  const { environment, config } = input;
  const read = () => keyedItems(environment, itemOptions);
  return streamEntries(input.stream, settings, {
    environment,
    items: input.stream ? input.stream.items(store, read) : read(),
    expectedItems,
    samples: input.samples,
    choice: input.plan.choice,
    seed: config.seed,
    registry: input.plan.registry,
    store,
    dataset: input.dataset ?? `environment:${environment.name}`,
    availability: availabilityContext(settings),
  });
}
