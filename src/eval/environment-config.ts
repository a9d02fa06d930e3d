import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { loadConfigFile, readConfigFile, validate } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { buildRoot, projectRoot } from '../util/paths.js';
import { JudgeScaleSchema } from './judge.js';

/** An environment's judge defaults in config.yaml; flags (--judge-*) override each. */
export const JudgeConfigSchema = z.strictObject({
  models: z.array(z.string().min(1)).min(1).optional().describe('judge model names; several form a panel'),
  base_url: z.string().url().optional().describe("the judge endpoint (default: the policy endpoint's base URL)"),
  api_key_env: z.string().optional().describe("variable holding the judge endpoint's key"),
  rubric: z.string().optional().describe('the rubric text'),
  rubric_file: z.string().optional().describe('file holding the rubric, relative to config.yaml'),
  scale: JudgeScaleSchema.optional().describe('the score range the judge uses (default 0..10)'),
  structured: z
    .enum(['auto', 'json_schema', 'text'])
    .optional()
    .describe('auto: response_format json_schema, text fallback on HTTP 400'),
  max_attempts: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('judge calls per verdict when the output is invalid (default 3)'),
});
export type JudgeConfig = z.infer<typeof JudgeConfigSchema>;

/** `environments/<name>/config.yaml`: the environment's default run settings (flags and --config win). */
export const EnvironmentConfigSchema = z.strictObject({
  toolsets: z.array(z.string()).optional().describe('fixed toolsets ([] = no tools)'),
  distribution: z.string().optional().describe('a toolset distribution drawn per item'),
  max_turns: z.number().int().positive().optional(),
  samples: z.number().int().positive().optional().describe('rollouts per item (K)'),
  pass_threshold: z.number().optional().describe('a rollout passes when its reward is at least this'),
  dataset: z.string().optional().describe('default items file, relative to config.yaml'),
  system_prompt: z.string().optional(),
  sandbox: z.enum(['local', 'docker']).optional(),
  image: z.string().optional(),
  workdir: z.string().optional(),
  concurrency: z.number().int().positive().optional(),
  judge: JudgeConfigSchema.optional(),
});
export type EnvironmentConfig = z.infer<typeof EnvironmentConfigSchema>;

/**
 * Where an environment module's config.yaml is: beside the module, or for a compiled module
 * under the build folder, beside its source in the checkout.
 */
export function environmentConfigPath(modulePath: string): string | undefined {
  // A YAML environment carries its run settings itself.
  if (/\.ya?ml$/i.test(modulePath)) return modulePath;
  const beside = join(dirname(modulePath), 'config.yaml');
  if (existsSync(beside)) return beside;
  const fromBuild = relative(buildRoot(), dirname(modulePath));
  if (fromBuild.startsWith('..') || isAbsolute(fromBuild)) return undefined;
  const source = join(projectRoot(), fromBuild, 'config.yaml');
  return existsSync(source) ? source : undefined;
}

/** The config (paths in it made absolute, the rubric file read), or an empty one when there is no file. */
export function loadEnvironmentConfig(modulePath: string): EnvironmentConfig & { path?: string } {
  const path = environmentConfigPath(modulePath);
  if (!path) return {};
  const config = path === modulePath ? runSettingsOf(path) : loadConfigFile(EnvironmentConfigSchema, path);
  const folder = dirname(path);
  if (config.dataset !== undefined) config.dataset = resolve(folder, config.dataset);
  if (config.judge?.rubric_file !== undefined) {
    if (config.judge.rubric !== undefined)
      throw new ConfigError(`${path}: judge: give rubric or rubric_file, not both`, { code: 'config_invalid' });
    config.judge = {
      ...config.judge,
      rubric: readRubric(resolve(folder, config.judge.rubric_file), `${path}: judge.rubric_file`),
    };
  }
  return { ...config, path };
}

/** The run-settings keys of a YAML environment (the whole file is checked when the environment loads). */
function runSettingsOf(path: string): EnvironmentConfig {
  const value = readConfigFile(path);
  const keys = Object.keys(EnvironmentConfigSchema.shape);
  const picked =
    value && typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).filter(([key]) => keys.includes(key)))
      : value;
  return validate(EnvironmentConfigSchema, picked, path);
}

/** A rubric file's text, with an error naming who asked for it when it cannot be read. */
export function readRubric(file: string, where: string): string {
  try {
    const text = readFileSync(file, 'utf8');
    if (!text.trim()) throw new ConfigError(`${where}: ${file} is empty`, { code: 'config_invalid' });
    return text;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`${where}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`, {
      code: 'config_missing',
    });
  }
}
