import { EndpointSchema, type Endpoint } from '../config/endpoint.js';
import { validate } from '../config/load.js';
import { loadEnvironmentConfig, type EnvironmentConfig } from '../eval/environment-config.js';
import { loadEnvironment, resolveEnvironmentModule } from '../eval/load-environment.js';
import { ConfigError, isTrajError } from '../errors.js';
import { finishEval, type FinishedEval } from '../report/finish-eval.js';
import type { ReportFiles } from '../report/report.js';
import type { EvalReport } from '../report/report-schema.js';
import {
  applyEnvironmentDefaults,
  environmentRunDefaults,
  planEnvironmentRun,
  runEnvironment,
} from '../run/environment-run.js';
import { checkAgentCliSandbox } from '../run/agent-cli-run.js';
import { defaultOutputDirectory } from '../run/outputs.js';
import type { RunConfig } from '../run/run-config.js';
import type { EvalAgent } from '../run/stored-eval.js';
import { integerOption, stringOption, type ParsedCommand } from './command.js';
import { resolveEndpoint, type ResolvedEndpoint } from './endpoint.js';
import { agentOption } from './agent-option.js';
import { datasetLocation, judgeSettingsFrom, numberOption } from './eval-options.js';
import { formatEvalSummary } from './eval-summary.js';
import { RunProgress } from './progress.js';
import { runConfigFrom } from './run-options.js';
import { logRunStart, pipelineControls, progressHooks, runExitCode, runStopSignals } from './run-controls.js';
import { EXIT_BROKEN_TASKS, EXIT_FAILED } from './exit-codes.js';
import type { RunStatistics } from '../run/run-statistics.js';

const log = (line: string) => process.stderr.write(`${line}\n`);

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
    if (agent === 'model' || agent === 'cli' || !isTrajError(error) || error.code !== 'endpoint_missing') throw error;
    const endpoint: Endpoint = validate(
      EndpointSchema,
      { base_url: 'http://127.0.0.1:9/v1', model: agent, api_key_env: 'TRAJ_NOOP_KEY' },
      'endpoint',
    );
    return { endpoint, identity: agent };
  }
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
  /** A registry suite (bench run NAME@VERSION): named in report.json. */
  suite?: { name: string; version: string; source: string };
  /**
   * Runs once report.json and report.md are written; its lines are printed after the summary, its exit
   * code used when the run itself succeeded.
   */
  afterReport?(
    finished: FinishedEval,
  ): Promise<{ lines: string[]; exitCode: number }> | { lines: string[]; exitCode: number };
}

/**
 * Flags to an eval run (run/environment-run.ts) and its printed result: shared by `traj eval` and `traj bench`
 * (which adds its report on top through `afterReport`), so neither command imports the other.
 */
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
  const config = applyEnvironmentDefaults(
    runConfigFrom(values, environmentRunDefaults(environment, environmentConfig, options.runDefaults)),
    environment,
    environmentConfig,
  );
  const { agent, agentCli } = agentOption(values);
  if (agentCli) checkAgentCliSandbox(config, agentCli);
  const plan = await planEnvironmentRun(config, environment, agent);
  const samples = integerOption(values, 'samples') ?? environmentConfig.samples ?? 1;
  const passThreshold =
    numberOption(values, 'pass-threshold') ?? environmentConfig.pass_threshold ?? environment.passThreshold ?? 1;
  const dataset = datasetLocation(config.dataset) ?? environmentConfig.dataset;
  const resolved = await policyEndpoint(values, config, agent);
  const { endpoint } = resolved;
  const outDir = config.out ?? defaultOutputDirectory(config.run);
  const signals = runStopSignals(config, log);
  let progress: RunProgress | undefined;
  let finished: { report: EvalReport; files: ReportFiles } | undefined;
  let extras: { lines: string[]; exitCode: number } | undefined;
  try {
    const judges = judgeSettingsFrom(values, environmentConfig.judge, resolved.scripted ? undefined : endpoint);
    const result = await runEnvironment({
      kind: options.kind,
      config,
      plan,
      environment,
      modulePath,
      agent,
      agentCli,
      samples,
      passThreshold,
      dataset,
      judges,
      endpoint,
      endpointIdentity: resolved.identity,
      environmentSettings: options.environmentSettings,
      environmentSettingsFile: options.environmentSettingsFile,
      outDir,
      force: values.force === true,
      controls: {
        ...pipelineControls(config, signals),
        ...progressHooks(log, () => progress),
      },
      hooks: {
        onStart(info, survey) {
          const judged = judges ? `, judged by ${judges.endpoints.map((judge) => judge.model).join(' + ')}` : '';
          const policy = agent === 'model' ? `${endpoint.model} at ${endpoint.base_url}` : `${agent} agent`;
          const what = `${environment.name} ${environment.version}, ${survey.items} items × ${samples} samples`;
          logRunStart(log, info, `${options.kind} '${config.run}': ${what}, ${policy}${judged}`);
          progress = new RunProgress(survey.items * samples);
          progress.watchRequests(info.requestsInFlight);
          progress.watchSpend(info.spentUsd, info.maxCostUsd);
          progress.watchConcurrency(info.concurrencyLevel);
        },
        async afterPipeline(context) {
          finished = finishEval(context.store, outDir, passThreshold, environment, options.suite);
          extras = await options.afterReport?.({ ...finished, ...context });
        },
      },
    });
    progress?.stop();
    printResult(finished!, result.outputs.trajectories);
    if (extras && extras.lines.length > 0) process.stdout.write(`${extras.lines.join('\n')}\n`);
    return evalExitCode(result, extras);
  } finally {
    progress?.stop();
    signals.dispose();
    await resolved.scripted?.close();
  }
}

function evalExitCode(
  result: Awaited<ReturnType<typeof runEnvironment>>,
  extras: { exitCode: number } | undefined,
): number {
  const code = runExitCode(result.summary, result.outputs.stats, log, 'rollouts');
  // A reference agent's failed rollout (a setup.sh that fails) is a broken task: the bench's verdict wins.
  if (code === EXIT_FAILED && extras?.exitCode === EXIT_BROKEN_TASKS) return EXIT_BROKEN_TASKS;
  return code ?? everyRewardErrored(result.outputs.stats, log) ?? extras?.exitCode ?? 0;
}

export function printResult(finished: { report: EvalReport; files: ReportFiles }, trajectories: string): void {
  process.stdout.write(`${formatEvalSummary(finished.report)}\n\n`);
  process.stdout.write(
    `report: ${finished.files.json} and ${finished.files.markdown}\ntrajectories: ${trajectories}\n`,
  );
}

/** Rollouts that all ran while no reward could be computed: the environment's reward is broken, not fine. */
function everyRewardErrored(stats: RunStatistics, log: (line: string) => void): number | undefined {
  if (stats.rewards.errors === 0 || stats.rewards.scored > 0) return undefined;
  log(`[traj] every reward errored (${stats.rewards.errors}): fix the environment's reward, then rescore or rerun`);
  return EXIT_FAILED;
}
