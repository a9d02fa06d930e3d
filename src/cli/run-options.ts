import { readFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { loadRunConfig } from '../run/load-run-config.js';
import type { RunConfig, RunConfigValues } from '../run/run-config.js';
import { QUEUE_OPTIONS, queueFlags } from './queue-options.js';
import {
  ENDPOINT_OPTIONS,
  integerOption,
  listOption,
  stringOption,
  type OptionSpec,
  type ParsedCommand,
} from './command.js';

/** Flags shared by batch, eval and bench; each maps onto a run-config key. */
export const RUN_OPTIONS: Record<string, OptionSpec> = {
  config: {
    type: 'string',
    value: 'FILE',
    description:
      'YAML run config holding any of these settings (flags override it); an unknown key is an error. Also: pricing: { MODEL: { input, output, cached_input } } in USD per 1M tokens, used for calls whose provider reports no cost (cached_input defaults to input; a model with neither is reported as unpriced, never as $0)',
  },
  run: {
    type: 'string',
    value: 'NAME',
    description: 'run name: the store is checkpoints/NAME.sqlite, outputs go to datasets/NAME/',
  },
  dataset: {
    type: 'string',
    value: 'FILE',
    description: 'JSONL, Parquet or Arrow file, or hf://datasets/ORG/NAME/PATH',
  },
  distribution: {
    type: 'string',
    value: 'NAME',
    description: 'toolset distribution drawn per prompt (traj distributions list)',
  },
  toolsets: { type: 'string', value: 'a,b', description: 'fixed toolsets for every prompt instead of a distribution' },
  workers: {
    type: 'string',
    value: 'N',
    description:
      'worker threads; 0 runs the rollouts on the main thread (default: from the run: a plain batch runs up to 1,024 rollouts in flight on the main thread, past that 1 thread per 1,024, at most 1 per core; an eval or bench 1 per core)',
  },
  concurrency: {
    type: 'string',
    value: 'N',
    description:
      'rollouts in flight in total (default 32), and the hard cap of model requests in flight: below it the level ' +
      'adapts to the endpoint (fewer on 429/503, honouring retry-after; more on success; endpoint.adaptive, ' +
      'min_concurrency, concurrency in the run config)',
  },
  'max-turns': {
    type: 'string',
    value: 'N',
    description: 'model calls per rollout before the final-answer call (default 10)',
  },
  sandbox: { type: 'string', value: 'local|docker', description: 'where tool commands run (default local)' },
  image: {
    type: 'string',
    value: 'IMAGE',
    description: 'docker image (default traj-sandbox:bookworm; a row\'s "image" wins)',
  },
  seed: { type: 'string', value: 'N', description: 'seed of the per-prompt toolset draw (default 0)' },
  system: { type: 'string', value: 'FILE', description: 'file holding the system prompt' },
  'ephemeral-system-prompt': {
    type: 'string',
    value: 'TEXT|@FILE',
    description:
      'appended to the system prompt at run time only: records do not hold it (Hermes semantics); the run fingerprint does',
  },
  prefill: {
    type: 'string',
    value: 'FILE',
    description:
      'JSON array of messages sent before each prompt at run time only (few-shot priming), not saved in records',
  },
  'require-reasoning': { type: 'boolean', description: 'discard rollouts without reasoning' },
  'completed-only': { type: 'boolean', description: 'discard rollouts that did not finish on their own' },
  'max-attempts': {
    type: 'string',
    value: 'N',
    description:
      'recorded failures per prompt across reruns before it is failed for good (default 3); a kill or a run-level fault uses none',
  },
  'retry-failed': {
    type: 'boolean',
    description: 'give prompts failed for good (attempts used up, or a fault that repeats) fresh attempts in this run',
  },
  'rollout-timeout': {
    type: 'string',
    value: 'S',
    description: 'abort a rollout after S seconds (recorded as failed, infra)',
  },
  force: { type: 'boolean', description: 'continue a run whose settings changed (the change is recorded)' },
  limit: { type: 'string', value: 'N', description: 'only the first N dataset rows' },
  'skip-bad-rows': {
    type: 'boolean',
    description: 'skip malformed dataset rows (counted in the statistics) instead of stopping',
  },
  'hub-url': { type: 'string', value: 'URL', description: 'Hugging Face Hub endpoint for hf:// datasets' },
  'grace-period': {
    type: 'string',
    value: 'S',
    description: 'seconds in-flight rollouts get after Ctrl-C (default 30)',
  },
  'max-cost': {
    type: 'string',
    value: 'USD',
    description:
      "stop dispatching once the run's total spend reaches USD: every invocation of the run counts (a resume starts from what was spent), judges and auxiliary models included; rollouts in flight still land, exit 5; rerun with a higher limit to continue. Cost is the provider's (usage.cost) or computed from the config's pricing: { MODEL: { input, output, cached_input } } (USD per 1M tokens)",
  },
  out: { type: 'string', value: 'DIR', description: 'output folder (default datasets/<run>)' },
  checkpoints: { type: 'string', value: 'DIR', description: 'folder of run stores (default checkpoints)' },
  'web-cache': {
    type: 'string',
    value: 'MODE',
    description: 'readwrite (default): reuse and store web fetches in the run store; read: reuse only; off',
  },
  'scripted-if-unset': {
    type: 'boolean',
    description: 'with no endpoint configured, use the built-in scripted endpoint (what npm start does)',
  },
  memory: {
    type: 'string',
    value: 'DIR',
    description: 'memory tool on: each rollout works on a private copy of DIR; the record keeps its final state',
  },
  skills: {
    type: 'string',
    value: 'DIR[,DIR]',
    description: 'skill folders for the skills toolset (read-only unless --skills-writable)',
  },
  'skills-writable': {
    type: 'boolean',
    description: 'let skill_manage create and change skills in the --skills folders',
  },
  ...QUEUE_OPTIONS,
  ...ENDPOINT_OPTIONS,
};

/** The run config: TRAJ_HOME/config.yaml, the --config file and flags, loaded as one (load-run-config.ts). */
export function runConfigFrom(values: ParsedCommand['values'], defaults: Partial<RunConfigValues> = {}): RunConfig {
  const file = stringOption(values, 'config');
  const flags: Record<string, unknown> = {
    run: stringOption(values, 'run'),
    dataset: stringOption(values, 'dataset'),
    distribution: stringOption(values, 'distribution'),
    toolsets: listOption(values, 'toolsets'),
    workers: integerOption(values, 'workers', { min: 0 }),
    concurrency: integerOption(values, 'concurrency'),
    max_turns: integerOption(values, 'max-turns'),
    sandbox: stringOption(values, 'sandbox'),
    image: stringOption(values, 'image'),
    seed: integerOption(values, 'seed', { min: 0 }),
    system: stringOption(values, 'system'),
    ephemeral_system_prompt: ephemeralText(stringOption(values, 'ephemeral-system-prompt')),
    prefill: stringOption(values, 'prefill'),
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
    memory: stringOption(values, 'memory'),
    skills: listOption(values, 'skills'),
    skills_writable: values['skills-writable'] === true ? true : undefined,
    web_cache: stringOption(values, 'web-cache'),
    max_cost: dollarsOption(values, 'max-cost'),
    queue: queueFlags(values),
  };
  return loadRunConfig({ file, flags, defaults });
}

/** An amount in USD: a decimal number greater than 0 (`--max-cost 2.50`). */
function dollarsOption(values: ParsedCommand['values'], name: string): number | undefined {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  const value = /^\$?\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw.trim().replace('$', '')) : Number.NaN;
  if (!(value > 0))
    throw new ConfigError(`flag --${name}: expected an amount in USD greater than 0 (e.g. 2.50), got '${raw}'`, {
      code: 'cli_usage',
    });
  return value;
}

/** `--ephemeral-system-prompt TEXT`, or `@FILE` for the text of a file. */
function ephemeralText(value: string | undefined): string | undefined {
  if (value === undefined || !value.startsWith('@')) return value;
  try {
    return readFileSync(value.slice(1), 'utf8');
  } catch (error) {
    throw new ConfigError(
      `--ephemeral-system-prompt ${value}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      { code: 'config_missing' },
    );
  }
}
