import { loadEnvironmentConfig } from '../eval/environment-config.js';
import { loadEnvironment, resolveEnvironmentModule } from '../eval/load-environment.js';
import { ConfigError } from '../errors.js';
import { applyEnvironmentDefaults, environmentRunDefaults, planEnvironmentRun } from '../run/environment-run.js';
import { defaultOutputDirectory } from '../run/outputs.js';
import { serveEnvironment, type Policy, type ServeInput } from '../serve/index.js';
import { loadChatTokenizer } from '../tokens/index.js';
import { integerOption, stringOption, type CommandDefinition, type OptionSpec, type ParsedCommand } from './command.js';
import { resolveEndpoint } from './endpoint.js';
import { datasetLocation, judgeSettingsFrom } from './eval-options.js';
import { exitCodeHelp } from './exit-codes.js';
import { QUEUE_OPTIONS } from './queue-options.js';
import { RUN_OPTIONS, runConfigFrom } from './run-options.js';
import { logRunStart, pipelineControls, runExitCode, runStopSignals } from './run-controls.js';

const log = (line: string) => process.stderr.write(`${line}\n`);

/** The batch flags without the queue's: a serving run's rollouts run in this process's pool. */
const SERVE_RUN_OPTIONS = Object.fromEntries(
  Object.entries(RUN_OPTIONS).filter(([name]) => !(name in QUEUE_OPTIONS)),
) as Record<string, OptionSpec>;

export const SERVE_OPTIONS: Record<string, OptionSpec> = {
  env: { type: 'string', value: 'NAME|PATH', description: 'the environment, as for traj eval (also --environment)' },
  environment: { type: 'string', value: 'NAME|PATH', description: 'the same as --env' },
  port: {
    type: 'string',
    value: 'N',
    description: 'the HTTP port trainers pull from (0: any free port; default 8400)',
  },
  host: { type: 'string', value: 'ADDRESS', description: 'the address to listen on (default 127.0.0.1)' },
  samples: { type: 'string', value: 'K', description: 'rollouts per group (default: config.yaml, else 4)' },
  'max-ahead': {
    type: 'string',
    value: 'N',
    description: 'groups produced ahead of what trainers wait for (default 4)',
  },
  'max-staleness': {
    type: 'string',
    value: 'S',
    description: 'drop (and count) groups more than S policy versions behind the current one (default 1)',
  },
  'policy-version': {
    type: 'string',
    value: 'V',
    description: "the starting policy's weight version (default 0); trainers send new ones",
  },
  tokenizer: {
    type: 'string',
    value: 'ID|DIR',
    description:
      "the policy's tokenizer and chat template: groups carry tokens, masks and logprobs (needed by --atropos)",
  },
  'max-tokens': { type: 'string', value: 'N', description: 'with --tokenizer: truncate rollouts to N tokens' },
  atropos: {
    type: 'string',
    value: 'URL',
    description: 'register with this Atropos API server and post ScoredData to it',
  },
  'atropos-name': {
    type: 'string',
    value: 'NAME',
    description: 'the desired_name to register (default: the environment name)',
  },
  'atropos-weight': { type: 'string', value: 'W', description: 'the weight to register (default 1.0)' },
  ...SERVE_RUN_OPTIONS,
};

function numberFlag(values: ParsedCommand['values'], name: string, fallback: number): number {
  return integerOption(values, name, { min: 0 }) ?? fallback;
}

function atroposOptions(values: ParsedCommand['values'], url: string, environment: string): ServeInput['atropos'] {
  return {
    url: url.replace(/\/+$/, ''),
    name: stringOption(values, 'atropos-name') ?? environment,
    weight: Number(stringOption(values, 'atropos-weight') ?? 1),
    maxTokenLength: integerOption(values, 'max-tokens', { min: 1 }) ?? 8192,
    maxQueued: numberFlag(values, 'max-ahead', 4),
  };
}

async function serve(values: ParsedCommand['values']): Promise<number> {
  const name = stringOption(values, 'env') ?? stringOption(values, 'environment');
  if (!name)
    throw new ConfigError('missing --env NAME|PATH (built-in: gsm8k, rubric, file-task)', { code: 'cli_usage' });
  const modulePath = resolveEnvironmentModule(name);
  const environment = await loadEnvironment(modulePath);
  const environmentConfig = loadEnvironmentConfig(modulePath);
  const config = applyEnvironmentDefaults(
    runConfigFrom(values, environmentRunDefaults(environment, environmentConfig)),
    environment,
    environmentConfig,
  );
  const plan = await planEnvironmentRun(config, environment, 'model');
  const tokenizerName = stringOption(values, 'tokenizer') ?? config.tokenizer;
  const atropos = stringOption(values, 'atropos');
  if (atropos && !tokenizerName)
    throw new ConfigError("--atropos needs --tokenizer: Atropos' ScoredData requires tokens and masks", {
      code: 'cli_usage',
    });
  const tokenizer = tokenizerName ? await loadChatTokenizer(tokenizerName) : undefined;
  const samples = integerOption(values, 'samples', { min: 1 }) ?? environmentConfig.samples ?? 4;
  const resolved = await resolveEndpoint(values, config.endpoint, {
    scriptedIfUnset: values['scripted-if-unset'] === true,
    log,
  });
  const { endpoint } = resolved;
  const policy: Policy = {
    base_url: endpoint.base_url,
    model: endpoint.model,
    version: numberFlag(values, 'policy-version', 0),
    api_key_env: endpoint.api_key_env,
  };
  const signals = runStopSignals(config, log);
  try {
    const result = await serveEnvironment({
      run: {
        config,
        plan,
        environment,
        modulePath,
        agent: 'model',
        samples,
        passThreshold: environmentConfig.pass_threshold ?? environment.passThreshold ?? 1,
        dataset: datasetLocation(config.dataset) ?? environmentConfig.dataset,
        judges: judgeSettingsFrom(values, environmentConfig.judge, resolved.scripted ? undefined : endpoint),
        endpoint,
        // The policy changes under a serving run: its identity is the run's, not one endpoint's.
        endpointIdentity: 'served policy',
        outDir: config.out ?? defaultOutputDirectory(config.run),
        force: values.force === true,
        controls: { ...pipelineControls(config, signals), remote: undefined },
        hooks: {
          onStart(info, survey) {
            const what = `serve '${config.run}': ${environment.name} ${environment.version}, ${survey.items} items, groups of ${samples}`;
            logRunStart(log, info, what);
          },
        },
      },
      policy,
      host: stringOption(values, 'host') ?? '127.0.0.1',
      port: numberFlag(values, 'port', 8400),
      maxAhead: numberFlag(values, 'max-ahead', 4),
      maxStaleness: numberFlag(values, 'max-staleness', 1),
      tokenizer,
      maxTokens: integerOption(values, 'max-tokens', { min: 1 }),
      atropos: atropos ? atroposOptions(values, atropos, environment.name) : undefined,
      onListening: (url) => log(`[traj] serving on ${url} (POST /v1/groups, PUT /v1/policy, GET /v1/status)`),
      onNotice: (line) => log(`[traj] ${line}`),
    });
    return runExitCode(result.summary, result.outputs.stats, log, 'rollouts') ?? 0;
  } finally {
    signals.dispose();
    await resolved.scripted?.close();
  }
}

export const command: CommandDefinition = {
  name: 'serve',
  summary: 'serve scored groups to an online RL trainer over HTTP (and to Atropos), from a policy it names',
  usage:
    'traj serve --env NAME|PATH --run NAME [--port N] [--samples K] [--max-ahead N] [--max-staleness S] [--tokenizer ID] [--atropos URL] [batch options]',
  options: SERVE_OPTIONS,
  details: `A trainer asks for groups: POST /v1/groups {"request_id": "step-12", "count": 8, "policy": {"base_url": "http://127.0.0.1:8000/v1", "model": "policy", "version": 12}}.
Every group is stored in checkpoints/NAME.sqlite: stop and run the same command again to resume. See docs/serve.md.
${exitCodeHelp()}`,
  run: ({ values }) => serve(values),
};
