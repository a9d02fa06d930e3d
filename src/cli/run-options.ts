import { readFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { readConfigFile, validate } from '../config/load.js';
import { RunConfigSchema, type RunConfig } from '../run/run-config.js';
import { parseDockerSandboxConfig } from '../sandbox/docker-config.js';
import { loadMcpServers } from '../tools/mcp/config.js';
import { QUEUE_OPTIONS, queueFlags } from './queue-options.js';
import { ENDPOINT_OPTIONS, integerOption, listOption, stringOption, type OptionSpec, type ParsedCommand } from './command.js';

/** Flags shared by batch, eval and bench; each maps onto a run-config key. */
export const RUN_OPTIONS: Record<string, OptionSpec> = {
  config: { type: 'string', value: 'FILE', description: 'YAML run config holding any of these settings (flags override it)' },
  run: { type: 'string', value: 'NAME', description: 'run name: the store is checkpoints/NAME.sqlite, outputs go to datasets/NAME/' },
  dataset: { type: 'string', value: 'FILE', description: 'JSONL, Parquet or Arrow file, or hf://datasets/ORG/NAME/PATH' },
  distribution: { type: 'string', value: 'NAME', description: 'toolset distribution drawn per prompt (traj distributions list)' },
  toolsets: { type: 'string', value: 'a,b', description: 'fixed toolsets for every prompt instead of a distribution' },
  workers: { type: 'string', value: 'N', description: 'worker threads (default: CPU cores)' },
  concurrency: { type: 'string', value: 'N', description: 'rollouts in flight in total (default 32)' },
  'max-turns': { type: 'string', value: 'N', description: 'model calls per rollout before the final-answer call (default 10)' },
  sandbox: { type: 'string', value: 'local|docker', description: 'where tool commands run (default local)' },
  image: { type: 'string', value: 'IMAGE', description: 'docker image (default traj-sandbox:bookworm; a row\'s "image" wins)' },
  seed: { type: 'string', value: 'N', description: 'seed of the per-prompt toolset draw (default 0)' },
  system: { type: 'string', value: 'FILE', description: 'file holding the system prompt' },
  'require-reasoning': { type: 'boolean', description: 'discard rollouts without reasoning' },
  'completed-only': { type: 'boolean', description: 'discard rollouts that did not finish on their own' },
  'max-attempts': { type: 'string', value: 'N', description: 'recorded failures per prompt across reruns before it is failed for good (default 3); a kill or a run-level fault uses none' },
  'retry-failed': { type: 'boolean', description: 'give prompts failed for good (attempts used up, or a fault that repeats) fresh attempts in this run' },
  'rollout-timeout': { type: 'string', value: 'S', description: 'abort a rollout after S seconds (recorded as failed, infra)' },
  force: { type: 'boolean', description: 'continue a run whose settings changed (the change is recorded)' },
  limit: { type: 'string', value: 'N', description: 'only the first N dataset rows' },
  'skip-bad-rows': { type: 'boolean', description: 'skip malformed dataset rows (counted in the statistics) instead of stopping' },
  'hub-url': { type: 'string', value: 'URL', description: 'Hugging Face Hub endpoint for hf:// datasets' },
  'grace-period': { type: 'string', value: 'S', description: 'seconds in-flight rollouts get after Ctrl-C (default 30)' },
  out: { type: 'string', value: 'DIR', description: 'output folder (default datasets/<run>)' },
  checkpoints: { type: 'string', value: 'DIR', description: 'folder of run stores (default checkpoints)' },
  'scripted-if-unset': { type: 'boolean', description: 'with no endpoint configured, use the built-in scripted endpoint (what npm start does)' },
  ...QUEUE_OPTIONS,
  ...ENDPOINT_OPTIONS,
};

/** The run config: the --config file (validated on its own so errors name it), then flags over it. */
export function runConfigFrom(values: ParsedCommand['values'], defaults: Partial<RunConfig> = {}): RunConfig {
  const file = stringOption(values, 'config');
  const fromFile = file ? validate(RunConfigSchema.partial(), readConfigFile(file), file) : {};
  const flags: Record<string, unknown> = {
    run: stringOption(values, 'run'),
    dataset: stringOption(values, 'dataset'),
    distribution: stringOption(values, 'distribution'),
    toolsets: listOption(values, 'toolsets'),
    workers: integerOption(values, 'workers'),
    concurrency: integerOption(values, 'concurrency'),
    max_turns: integerOption(values, 'max-turns'),
    sandbox: stringOption(values, 'sandbox'),
    image: stringOption(values, 'image'),
    seed: integerOption(values, 'seed', { min: 0 }),
    system: stringOption(values, 'system'),
    require_reasoning: values['require-reasoning'] === true ? true : undefined,
    completed_only: values['completed-only'] === true ? true : undefined,
    max_attempts: integerOption(values, 'max-attempts'),
    retry_failed: values['retry-failed'] === true ? true : undefined,
    rollout_timeout: integerOption(values, 'rollout-timeout'),
    limit: integerOption(values, 'limit'),
    skip_bad_rows: values['skip-bad-rows'] === true ? true : undefined,
    hub_url: stringOption(values, 'hub-url'),
    grace_period: integerOption(values, 'grace-period', { min: 0 }),
    out: stringOption(values, 'out'),
    checkpoints: stringOption(values, 'checkpoints'),
    queue: queueFlags(values),
  };
  const merged = { ...defaults, ...fromFile, ...Object.fromEntries(Object.entries(flags).filter(([, value]) => value !== undefined)) };
  if (!merged.run) throw new ConfigError('missing --run NAME (the run store is checkpoints/NAME.sqlite)', { code: 'cli_usage' });
  if (merged.distribution && merged.toolsets) throw new ConfigError('give either --distribution or --toolsets, not both', { code: 'cli_usage' });
  const config = validate(RunConfigSchema, merged, file ? `${file} + flags` : 'flags');
  // MCP servers: TRAJ_HOME/config.yaml overlaid by the run config, validated here so a mistake
  // names its file before any worker starts (and relative `cwd`s resolve against that file).
  const mcp = loadMcpServers(file);
  if (Object.keys(mcp.servers).length > 0) config.mcp_servers = mcp.servers;
  // Likewise the docker isolation settings: a typo fails the command, not every rollout.
  if (config.docker) parseDockerSandboxConfig(config.docker, `${file ?? 'run config'}: docker`);
  return config;
}

/** The system prompt text: `system_prompt` itself, or the file `system` names. */
export function systemPromptFrom(config: RunConfig): string | undefined {
  if (config.system_prompt !== undefined) return config.system_prompt;
  if (!config.system) return undefined;
  try {
    return readFileSync(config.system, 'utf8');
  } catch (error) {
    throw new ConfigError(`--system ${config.system}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { code: 'config_missing' });
  }
}
