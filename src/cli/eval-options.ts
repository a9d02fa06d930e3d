import { resolve } from 'node:path';
import { EndpointSchema, type Endpoint } from '../config/endpoint.js';
import { validate } from '../config/load.js';
import { readRubric, type JudgeConfig } from '../eval/environment-config.js';
import { JudgeSettingsSchema, type JudgeSettings } from '../eval/judge.js';
import { ConfigError } from '../errors.js';
import { listOption, stringOption, type OptionSpec, type ParsedCommand } from './command.js';
import { RUN_OPTIONS } from './run-options.js';

/** `traj eval` flags: the batch flags plus the environment, samples, agent, judge and rescoring. */
export const EVAL_OPTIONS: Record<string, OptionSpec> = {
  env: {
    type: 'string',
    value: 'NAME|PATH',
    description: 'a built-in environment (gsm8k, rubric, file-task) or a path to a compiled environment module',
  },
  samples: {
    type: 'string',
    value: 'K',
    description: 'rollouts per item; the K samples of an item form its group (default: config.yaml, else 1)',
  },
  agent: {
    type: 'string',
    value: 'model|noop|oracle|NAME|FILE',
    description:
      "noop answers nothing, oracle replays the reference solution: checks that rewards fail without an agent and pass with the solution; NAME (qwen-code, codex, claude-code, TRAJ_HOME/agents/NAME.yaml) or an agent YAML runs that agent CLI in Docker with the model behind traj's recording proxy (docs/agents.md) (default model)",
  },
  'pass-threshold': {
    type: 'string',
    value: 'X',
    description: "a rollout passes when its reward is ≥ X (default: the environment's, else 1)",
  },
  'judge-model': {
    type: 'string',
    value: 'M[,M2,...]',
    description: 'LLM judge model(s); several form a panel (mean score, majority pass, agreement)',
  },
  'judge-base-url': {
    type: 'string',
    value: 'URL',
    description: 'judge endpoint (default: config.yaml judge.base_url, else the policy endpoint)',
  },
  'judge-api-key-env': { type: 'string', value: 'VAR', description: "variable holding the judge endpoint's API key" },
  'judge-rubric': {
    type: 'string',
    value: 'FILE',
    description: "rubric file for the judge (default: config.yaml judge.rubric_file, else the environment's)",
  },
  'judge-structured': {
    type: 'string',
    value: 'auto|json_schema|text',
    description: 'structured judge output; auto falls back to JSON in text on HTTP 400 (default auto)',
  },
  rescore: {
    type: 'string',
    value: 'RUN',
    description: "re-run only rewards and judging on RUN's stored trajectories (no rollouts, no policy calls)",
  },
  ...RUN_OPTIONS,
};

const DECIMAL = /^-?\d+(\.\d+)?$/;

export function numberOption(values: ParsedCommand['values'], name: string): number | undefined {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  if (!DECIMAL.test(raw))
    throw new ConfigError(`flag --${name}: expected a number, got '${raw}'`, { code: 'cli_usage' });
  return Number(raw);
}

/** A dataset argument as stored for rescoring: local paths absolute, URLs (hf://…) as given. */
export function datasetLocation(dataset: string | undefined): string | undefined {
  if (dataset === undefined || /^[a-z][a-z0-9+.-]*:\/\//i.test(dataset)) return dataset;
  return resolve(dataset);
}

const JUDGE_FLAGS = ['judge-base-url', 'judge-api-key-env', 'judge-rubric', 'judge-structured'] as const;

/**
 * The judge panel from --judge-* flags over config.yaml's `judge:`; undefined when neither names
 * a model. The endpoint defaults to the policy endpoint's; judges sample at temperature 0.
 */
export function judgeSettingsFrom(
  values: ParsedCommand['values'],
  config: JudgeConfig | undefined,
  policy: Endpoint | undefined,
): JudgeSettings | undefined {
  const models = listOption(values, 'judge-model') ?? config?.models;
  if (!models || models.length === 0) {
    const stray = JUDGE_FLAGS.find((flag) => values[flag] !== undefined);
    if (stray)
      throw new ConfigError(`--${stray} needs --judge-model M (or judge.models in the environment's config.yaml)`, {
        code: 'cli_usage',
      });
    return undefined;
  }
  const baseUrl = stringOption(values, 'judge-base-url') ?? config?.base_url ?? policy?.base_url;
  if (!baseUrl)
    throw new ConfigError(
      '--judge-model needs a judge endpoint: pass --judge-base-url URL (or judge.base_url in config.yaml)',
      { code: 'cli_usage' },
    );
  const samePlace = baseUrl === policy?.base_url;
  const apiKeyEnv =
    stringOption(values, 'judge-api-key-env') ??
    config?.api_key_env ??
    (samePlace ? policy?.api_key_env : undefined) ??
    'OPENAI_API_KEY';
  const rubricFile = stringOption(values, 'judge-rubric');
  const endpoints = models.map((model) =>
    validate(
      EndpointSchema,
      { base_url: baseUrl, model, api_key_env: apiKeyEnv, temperature: 0 },
      'judge endpoint (--judge-* flags, config.yaml judge)',
    ),
  );
  return validate(
    JudgeSettingsSchema,
    {
      endpoints,
      rubric: rubricFile ? readRubric(rubricFile, '--judge-rubric') : config?.rubric,
      scale: config?.scale,
      structured: stringOption(values, 'judge-structured') ?? config?.structured,
      maxAttempts: config?.max_attempts,
    },
    '--judge-* flags / config.yaml judge',
  );
}

/**
 * The judges of a rescore: a new panel when --judge-model is given; otherwise the run's own,
 * with --judge-rubric / --judge-structured applied over it (regrade with a revised rubric).
 */
export function rescoreJudgeSettings(
  values: ParsedCommand['values'],
  stored: JudgeSettings | undefined,
  config: JudgeConfig | undefined,
  policy: Endpoint | undefined,
): JudgeSettings | undefined {
  if (values['judge-model'] !== undefined || !stored) return judgeSettingsFrom(values, config, policy);
  const rubricFile = stringOption(values, 'judge-rubric');
  const structured = stringOption(values, 'judge-structured');
  return validate(
    JudgeSettingsSchema,
    {
      ...stored,
      ...(rubricFile ? { rubric: readRubric(rubricFile, '--judge-rubric') } : {}),
      ...(structured ? { structured } : {}),
    },
    "--judge-* flags over the run's judges",
  );
}
