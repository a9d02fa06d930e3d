import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { isAgentDefinitionPath, loadAgentDefinition } from '../bridge/index.js';
import { EndpointSchema } from '../config/endpoint.js';
import { loadConfigFile } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { EVAL_AGENTS } from '../run/stored-eval.js';
import { projectRoot } from '../util/paths.js';

export const BENCH_METRICS = ['pass_rate', 'mean_reward', 'pass_at_k', 'reward_errors'] as const;

/**
 * A benchmark suite (`benchmarks/<name>.yaml`): an environment, where its items come from, and
 * the settings a comparable run needs. Flags given to `traj bench` override every field.
 * Relative paths are relative to the suite file.
 */
export const BenchSuiteSchema = z.strictObject({
  description: z.string().optional(),
  environment: z.string().min(1).describe('a built-in environment name, or a path to a compiled environment module'),
  tasks: z.string().optional().describe('task directory for task-folder environments (--tasks overrides)'),
  dataset: z.string().optional().describe('items file for dataset environments (--dataset overrides)'),
  samples: z.number().int().positive().default(1).describe('rollouts per item (K)'),
  agent: z
    .string()
    .min(1)
    .default('model')
    .describe(
      "model (traj's own agent), oracle or noop (the reference agents), an agent CLI's name (qwen-code, codex, claude-code, TRAJ_HOME/agents/NAME.yaml) or an agent definition YAML relative to the suite file; --agent overrides",
    ),
  toolsets: z.array(z.string()).optional(),
  distribution: z.string().optional(),
  max_turns: z.number().int().positive().optional(),
  sandbox: z.enum(['local', 'docker']).optional(),
  image: z.string().optional(),
  concurrency: z.number().int().positive().optional(),
  workers: z.number().int().positive().optional(),
  system_prompt: z.string().optional(),
  pass_threshold: z.number().optional(),
  endpoint: EndpointSchema.partial()
    .optional()
    .describe('model settings (base_url, model, temperature, ...); flags and the environment win for what they set'),
  environment_settings: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('settings the environment itself validates (e.g. agent_timeout, verifier_timeout)'),
  // Not a suite setting: a known key only so that the error says where judge settings go.
  judge: z
    .never({
      error:
        "a suite has no judge section: judge settings go under `judge:` in the environment's config.yaml, or in traj bench's --judge-* flags",
    })
    .optional(),
  metrics: z
    .array(z.enum(BENCH_METRICS))
    .min(1)
    .default([...BENCH_METRICS])
    .describe('what the terminal summary headlines'),
});
export type BenchSuite = z.infer<typeof BenchSuiteSchema>;

export interface LoadedSuite {
  name: string;
  path: string;
  suite: BenchSuite;
}

/** benchmarks/registry.yaml lists registry suites (suite-registry.ts), not a suite of its own. */
export const REGISTRY_FILE = 'registry.yaml';

export function benchmarksDirectory(): string {
  return join(projectRoot(), 'benchmarks');
}

/** A suite by name (benchmarks/NAME.yaml) or by path to a YAML file; relative paths in it resolved. */
export function loadSuite(nameOrPath: string): LoadedSuite {
  const path = suitePath(nameOrPath);
  const suite = loadConfigFile(BenchSuiteSchema, path);
  const folder = dirname(path);
  const relative = (value: string | undefined) => (value === undefined ? undefined : resolve(folder, value));
  const environment = suite.environment.includes('/') ? resolve(folder, suite.environment) : suite.environment;
  return {
    name: basename(path).replace(/\.ya?ml$/, ''),
    path,
    suite: {
      ...suite,
      environment,
      agent: suiteAgent(suite.agent, path),
      tasks: relative(suite.tasks),
      dataset: relative(suite.dataset),
    },
  };
}

/**
 * A suite's (or registry entry's) `agent:`: a definition file resolved against the file naming it,
 * and any agent CLI's definition loaded now, so a mistake in it names the suite before a run starts.
 */
export function suiteAgent(agent: string, file: string): string {
  // traj's own and the reference agents by name: everything else names an agent CLI's definition.
  if ((EVAL_AGENTS as readonly string[]).includes(agent)) return agent;
  const resolved = isAgentDefinitionPath(agent) ? resolve(dirname(file), agent) : agent;
  loadAgentDefinition(resolved, `${file}: agent`);
  return resolved;
}

function suitePath(nameOrPath: string): string {
  if (/\.ya?ml$/.test(nameOrPath) || nameOrPath.includes('/')) {
    const path = resolve(nameOrPath);
    if (!existsSync(path)) throw new ConfigError(`suite file ${nameOrPath} does not exist`, { code: 'suite_missing' });
    return path;
  }
  for (const extension of ['yaml', 'yml']) {
    if (`${nameOrPath}.${extension}` === REGISTRY_FILE) continue;
    const path = join(benchmarksDirectory(), `${nameOrPath}.${extension}`);
    if (existsSync(path)) return path;
  }
  throw new ConfigError(
    `unknown suite '${nameOrPath}'; suites: ${
      listSuites()
        .map((entry) => entry.name)
        .join(', ') || '(none)'
    } (traj bench list), or pass a path to a suite YAML`,
    {
      code: 'suite_unknown',
    },
  );
}

/** Every suite in benchmarks/, loaded (a broken one is reported with its error instead). */
export function listSuites(): ({ name: string; path: string } & ({ suite: BenchSuite } | { error: string }))[] {
  const folder = benchmarksDirectory();
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((file) => /\.ya?ml$/.test(file) && file !== REGISTRY_FILE)
    .sort()
    .map((file) => {
      const path = join(folder, file);
      const name = file.replace(/\.ya?ml$/, '');
      try {
        return { name, path, suite: loadSuite(path).suite };
      } catch (error) {
        return { name, path, error: (error as Error).message };
      }
    });
}

/** What a suite sets under the flags, in the shape of an environment's config.yaml (unset fields left out). */
export function suiteDefaults(suite: BenchSuite) {
  const defined = <T extends object>(value: T) =>
    Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
  return defined({
    toolsets: suite.toolsets,
    distribution: suite.distribution,
    max_turns: suite.max_turns,
    samples: suite.samples,
    pass_threshold: suite.pass_threshold,
    dataset: suite.tasks ?? suite.dataset,
    system_prompt: suite.system_prompt,
    sandbox: suite.sandbox,
    image: suite.image,
    concurrency: suite.concurrency,
  });
}
