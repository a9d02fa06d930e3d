import { knowledgeFingerprint } from '../run/rollout-knowledge.js';
import { EndpointSchema, type Endpoint } from '../config/endpoint.js';
import { validate } from '../config/load.js';
import { applyAdvantages } from '../report/advantages.js';
import { loadEnvironmentConfig, type EnvironmentConfig } from '../eval/environment-config.js';
import type { Environment } from '../eval/environment.js';
import { loadEnvironment, resolveEnvironmentModule } from '../eval/load-environment.js';
import { buildReport, writeReport, type ReportFiles } from '../report/report.js';
import type { EvalReport } from '../report/report-schema.js';
import { ConfigError, isTrajError } from '../errors.js';
import { availabilityContext, fingerprintParts } from '../run/batch.js';
import { collectItems, environmentEntries, keyItems, type KeyedEnvironmentItem } from '../run/environment-entries.js';
import { executeRun, storePathFor } from '../run/execute-run.js';
import { defaultOutputDirectory } from '../run/outputs.js';
import type { RolloutSettings } from '../run/rollout.js';
import type { RunConfig } from '../run/run-config.js';
import { rolloutSettings, runRegistry, toolsetChoice } from '../run/run-setup.js';
import type { RunStore } from '../run/store.js';
import { integerOption, stringOption, type ParsedCommand } from './command.js';
import { resolveEndpoint, type ResolvedEndpoint } from './endpoint.js';
import {
  agentOption,
  datasetLocation,
  judgeSettingsFrom,
  judgeFingerprint,
  numberOption,
  type EvalAgent,
  type StoredEval,
} from './eval-options.js';
import { formatEvalSummary } from './eval-summary.js';
import { DEFAULT_DOCKER_IMAGE } from '../sandbox/docker-config.js';
import { RunProgress } from './progress.js';
import { runConfigFrom } from './run-options.js';
import { logRunStart, pipelineControls, runExitCode, runStopSignals } from './run-controls.js';

/**
 * One eval run from parsed flags to its written report: shared by `traj eval` and `traj bench`
 * (which adds its report on top through `afterReport`), so neither command imports the other.
 */
const log = (line: string) => process.stderr.write(`${line}\n`);

/** The run config: flags and --config over the environment's config.yaml over the environment's own fields. */
function evalRunConfig(
  values: ParsedCommand['values'],
  environment: Environment,
  environmentConfig: EnvironmentConfig,
  runDefaults: Partial<RunConfig> = {},
): RunConfig {
  const defaults: Partial<RunConfig> = {
    ...runDefaults,
    max_turns: environmentConfig.max_turns ?? environment.maxTurns,
    sandbox:
      environmentConfig.sandbox ?? (typeof environment.sandbox === 'object' ? environment.sandbox.kind : undefined),
    image: environmentConfig.image,
    workdir: environmentConfig.workdir,
    concurrency: environmentConfig.concurrency,
  };
  const config = runConfigFrom(
    values,
    Object.fromEntries(Object.entries(defaults).filter(([, value]) => value !== undefined)),
  );
  // Defaults that conflict with a flag of another name are applied only when neither was given.
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

/** The policy endpoint; the noop and oracle agents need none, so a placeholder stands in when nothing is configured. */
async function policyEndpoint(
  values: ParsedCommand['values'],
  config: RunConfig,
  agent: EvalAgent,
): Promise<ResolvedEndpoint> {
  try {
    return await resolveEndpoint(values, config.endpoint, {
      scriptedIfUnset: values['scripted-if-unset'] === true,
      log,
    });
  } catch (error) {
    if (agent === 'model' || !isTrajError(error) || error.code !== 'endpoint_missing') throw error;
    const endpoint: Endpoint = validate(
      EndpointSchema,
      { base_url: 'http://127.0.0.1:9/v1', model: agent, api_key_env: 'TRAJ_NOOP_KEY' },
      'endpoint',
    );
    return { endpoint, identity: agent };
  }
}

/** An eval run's report once written, for what a caller adds on top (traj bench: report.html, validation). */
export interface FinishedEval {
  report: EvalReport;
  files: ReportFiles;
  store: RunStore;
  outDir: string;
  agent: EvalAgent;
  /** What the rollouts ran with, so a caller can run an item again (bench: re-checking broken items). */
  settings: RolloutSettings;
  items: readonly KeyedEnvironmentItem[];
}

/** How `traj bench` runs "an eval, then its own report" through this same runner. */
export interface EvalRunOptions {
  kind: 'eval' | 'bench';
  /** The environment module, when the caller resolved it (bench: the suite's environment); else --env. */
  modulePath?: string;
  /** Defaults over the environment's config.yaml and under the flags (bench: the suite). */
  defaults?: EnvironmentConfig;
  /** Run-config defaults config.yaml has no field for (bench: the suite's workers and endpoint settings). */
  runDefaults?: Partial<RunConfig>;
  /** Environment-specific settings handed to items() (bench: the suite's environment_settings and flags). */
  environmentSettings?: Record<string, unknown>;
  /** The file the environment settings came from (bench: the suite), named in their errors. */
  environmentSettingsFile?: string;
  /** Runs once report.json and report.md are written; its lines are printed after the summary, its exit code used when the run itself succeeded. */
  afterReport?(
    finished: FinishedEval,
  ): Promise<{ lines: string[]; exitCode: number }> | { lines: string[]; exitCode: number };
}

export async function runEval(
  values: ParsedCommand['values'],
  options: EvalRunOptions = { kind: 'eval' },
): Promise<number> {
  const name = stringOption(values, 'env');
  if (!name && !options.modulePath)
    throw new ConfigError('missing --env NAME|PATH (built-in: gsm8k, rubric, file-task)', { code: 'cli_usage' });
  const modulePath = options.modulePath ?? resolveEnvironmentModule(name!);
  const environment = await loadEnvironment(modulePath);
  const environmentConfig: EnvironmentConfig = { ...loadEnvironmentConfig(modulePath), ...options.defaults };
  const config = evalRunConfig(values, environment, environmentConfig, options.runDefaults);
  const agent = agentOption(values);
  if (agent === 'oracle' && !environment.oracle) {
    throw new ConfigError(`--agent oracle: environment '${environment.name}' has no oracle (reference solution) hook`, {
      code: 'oracle_missing',
    });
  }
  const samples = integerOption(values, 'samples') ?? environmentConfig.samples ?? 1;
  const passThreshold =
    numberOption(values, 'pass-threshold') ?? environmentConfig.pass_threshold ?? environment.passThreshold ?? 1;
  const dataset = datasetLocation(config.dataset) ?? environmentConfig.dataset;
  const registry = runRegistry(config);
  const choice = toolsetChoice(config, registry);
  const resolved = await policyEndpoint(values, config, agent);
  const { endpoint } = resolved;
  const storePath = storePathFor(config.checkpoints, config.run);
  const judges = judgeSettingsFrom(values, environmentConfig.judge, resolved.scripted ? undefined : endpoint);
  const environmentOptions = { image: config.image, sandbox: config.sandbox, settings: options.environmentSettings };
  const items = keyItems(
    environment,
    await collectItems(environment, {
      dataset,
      limit: config.limit,
      ...environmentOptions,
      settingsFile: options.environmentSettingsFile,
    }),
  );
  if (items.length === 0)
    throw new ConfigError(`environment '${environment.name}' yielded no items${dataset ? ` from ${dataset}` : ''}`, {
      code: 'environment_empty',
    });
  const stored: StoredEval = {
    environment_module: modulePath,
    dataset,
    limit: config.limit,
    samples,
    pass_threshold: passThreshold,
    judges,
    environment_options: environmentOptions,
  };
  const settings = rolloutSettings(config, endpoint, {
    environmentModule: modulePath,
    agent,
    judges: judges && { ...judges, cachePath: storePath },
  });
  const outDir = config.out ?? defaultOutputDirectory(config.run);
  const signals = runStopSignals(config, log);
  let progress: RunProgress | undefined;
  let finished: { report: EvalReport; files: ReportFiles } | undefined;
  let extras: { lines: string[]; exitCode: number } | undefined;
  try {
    const result = await executeRun({
      kind: options.kind,
      run: config.run,
      checkpointsDir: config.checkpoints,
      outDir,
      endpoint,
      settings,
      fingerprintParts: {
        ...fingerprintParts({
          endpoint,
          endpointIdentity: resolved.identity,
          choice,
          registry,
          maxTurns: config.max_turns,
          systemPrompt: settings.systemPrompt,
          runTime: settings,
          seed: config.seed,
          environment: { name: environment.name, version: environment.version },
          agent,
          sandbox: { kind: config.sandbox, image: config.image },
          knowledge: knowledgeFingerprint(settings),
          tools: settings,
        }),
        judges: judgeFingerprint(judges),
        ...(options.environmentSettings ? { environment_settings: options.environmentSettings } : {}),
      },
      config: { ...config, endpoint: { ...endpoint }, eval: stored },
      force: values.force === true,
      entries: (store) =>
        environmentEntries({
          environment,
          items,
          samples,
          choice,
          seed: config.seed,
          registry,
          store,
          dataset: dataset ?? `environment:${environment.name}`,
          availability: availabilityContext(settings),
        }),
      ...pipelineControls(config, signals),
      onWarning: log,
      onStart(info) {
        const judged = judges ? `, judged by ${judges.endpoints.map((judge) => judge.model).join(' + ')}` : '';
        const policy = agent === 'model' ? `${endpoint.model} at ${endpoint.base_url}` : `${agent} agent`;
        logRunStart(
          log,
          info,
          `${options.kind} '${config.run}': ${environment.name} ${environment.version}, ${items.length} items × ${samples} samples, ${policy}${judged}`,
        );
        progress = new RunProgress(items.length * samples);
        progress.watchRequests(info.requestsInFlight);
        progress.watchConcurrency(info.concurrencyLevel);
      },
      onEvent: (event) => progress?.onEvent(event),
      onNotice: (message) => log(`[traj] ${message}`),
      onPipelineDone: () => progress?.stop(),
      callsModel: agent === 'model',
      images: items.map((keyed) => keyed.sandbox.image ?? settings.sandbox.image ?? DEFAULT_DOCKER_IMAGE),
      async afterPipeline(store) {
        finished = finishEval(store, outDir, passThreshold, environment);
        extras = await options.afterReport?.({ ...finished, store, outDir, agent, settings, items });
      },
    });
    progress?.stop();
    printResult(finished!, result.outputs.trajectories);
    if (extras && extras.lines.length > 0) process.stdout.write(`${extras.lines.join('\n')}\n`);
    return runExitCode(result.summary, result.outputs.stats, log, 'rollouts') ?? extras?.exitCode ?? 0;
  } finally {
    progress?.stop();
    signals.dispose();
    await resolved.scripted?.close();
  }
}

/** Advantages over every group, then the report; both from the whole store (cumulative across resumes). */
export function finishEval(
  store: RunStore,
  outDir: string,
  passThreshold: number,
  environment: Environment,
): { report: EvalReport; files: ReportFiles } {
  applyAdvantages(store);
  const report = buildReport(store, {
    passThreshold,
    environment: { name: environment.name, version: environment.version },
  });
  return { report, files: writeReport(outDir, report) };
}

export function printResult(finished: { report: EvalReport; files: ReportFiles }, trajectories: string): void {
  process.stdout.write(`${formatEvalSummary(finished.report)}\n\n`);
  process.stdout.write(
    `report: ${finished.files.json} and ${finished.files.markdown}\ntrajectories: ${trajectories}\n`,
  );
}
