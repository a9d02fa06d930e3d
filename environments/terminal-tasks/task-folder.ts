import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { z } from 'zod';
import { describeIssues } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';

const TimeoutSchema = z.object({ timeout_sec: z.number().positive().optional() }).loose();

/**
 * `task.toml` of both layouts: this project's normalised Terminal-Bench layout (`[task]`,
 * `[environment].image/workdir/setup`) and Terminal-Bench 2 / Harbor (`[metadata]`,
 * `[environment].docker_image`, `[verifier].env`). Unknown keys are kept, not refused: both
 * formats grow fields traj does not need.
 */
export const TaskTomlSchema = z
  .object({
    task: z
      .object({
        name: z.string().min(1).optional(),
        difficulty: z.string().optional(),
        category: z.string().optional(),
        tags: z.array(z.string()).optional(),
      })
      .loose()
      .optional(),
    metadata: z
      .object({
        difficulty: z.string().optional(),
        category: z.string().optional(),
        tags: z.array(z.string()).optional(),
      })
      .loose()
      .optional(),
    agent: TimeoutSchema.optional(),
    verifier: TimeoutSchema.extend({ env: z.record(z.string(), z.string()).optional() }).optional(),
    environment: z
      .object({
        image: z.string().min(1).optional(),
        docker_image: z.string().min(1).optional(),
        workdir: z.string().startsWith('/', 'expected an absolute path inside the container').optional(),
        /** traj extension: the scripts honour WORKDIR/TEST_DIR/LOGS_DIR, so a local sandbox can run the task. */
        local_sandbox: z.boolean().optional(),
      })
      .loose()
      .optional(),
  })
  .loose();
export type TaskToml = z.infer<typeof TaskTomlSchema>;

/** One task, as plain JSON (it crosses into worker threads as the environment's item). */
export const TerminalTaskSchema = z.object({
  name: z.string(),
  directory: z.string().describe('absolute path of the task folder'),
  instruction: z.string(),
  category: z.string().nullable(),
  difficulty: z.string().nullable(),
  tags: z.array(z.string()),
  layout: z.enum(['terminal-tasks', 'harbor']).describe('harbor: environment/Dockerfile is present'),
  image: z.string(),
  workdir: z.string(),
  agent_timeout_sec: z.number().positive(),
  verifier_timeout_sec: z.number().positive(),
  verifier_env: z.record(z.string(), z.string()),
  local_sandbox: z.boolean(),
  has_setup: z.boolean(),
  has_solution: z.boolean(),
});
export type TerminalTask = z.infer<typeof TerminalTaskSchema>;

export const DEFAULT_IMAGE = 'traj-sandbox:bookworm';
export const DEFAULT_WORKDIR = '/app';
export const DEFAULT_AGENT_TIMEOUT_SEC = 600;
export const DEFAULT_VERIFIER_TIMEOUT_SEC = 120;

/** What the run may override for every task (flags or the suite). */
export interface TaskOverrides {
  image?: string;
  agentTimeoutSec?: number;
  verifierTimeoutSec?: number;
}

/** The task folders of `directory` (sorted by name): every subfolder holding a task.toml. */
export function listTaskFolders(directory: string): string[] {
  const root = resolve(directory);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new ConfigError(
      `--tasks ${directory}: no such directory (expected a folder of task folders, each with task.toml, instruction.md and tests/test.sh)`,
      {
        code: 'tasks_missing',
      },
    );
  }
  const folders = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, entry.name, 'task.toml')))
    .map((entry) => join(root, entry.name))
    .sort();
  if (folders.length === 0) {
    throw new ConfigError(
      `--tasks ${directory}: no task folders found (a task folder holds task.toml, instruction.md and tests/test.sh)`,
      { code: 'tasks_empty' },
    );
  }
  return folders;
}

/** Read and check one task folder; every problem names the file and what was expected. */
export function readTaskFolder(folder: string, overrides: TaskOverrides = {}): TerminalTask {
  const directory = resolve(folder);
  const tomlPath = join(directory, 'task.toml');
  const toml = parseTaskToml(tomlPath);
  const name = toml.task?.name ?? directory.split('/').pop()!;
  const instruction = readRequired(join(directory, 'instruction.md'), 'the task text given to the agent');
  requireFile(
    join(directory, 'tests', 'test.sh'),
    "the verifier's entry point, run as bash /tests/test.sh after the agent",
  );
  const dockerfile = existsSync(join(directory, 'environment', 'Dockerfile'));
  const meta = { ...toml.metadata, ...toml.task };
  return {
    name,
    directory,
    instruction,
    category: meta.category ?? null,
    difficulty: meta.difficulty ?? null,
    tags: meta.tags ?? [],
    layout: dockerfile ? 'harbor' : 'terminal-tasks',
    image: taskImage(tomlPath, toml, dockerfile, overrides.image),
    workdir:
      toml.environment?.workdir ??
      (dockerfile ? dockerfileWorkdir(join(directory, 'environment', 'Dockerfile')) : undefined) ??
      DEFAULT_WORKDIR,
    agent_timeout_sec: overrides.agentTimeoutSec ?? toml.agent?.timeout_sec ?? DEFAULT_AGENT_TIMEOUT_SEC,
    verifier_timeout_sec: overrides.verifierTimeoutSec ?? toml.verifier?.timeout_sec ?? DEFAULT_VERIFIER_TIMEOUT_SEC,
    verifier_env: toml.verifier?.env ?? {},
    local_sandbox: toml.environment?.local_sandbox ?? false,
    has_setup: existsSync(join(directory, 'environment', 'setup.sh')),
    has_solution: existsSync(join(directory, 'solution', 'solve.sh')),
  };
}

function parseTaskToml(path: string): TaskToml {
  const text = readRequired(path, 'the task metadata');
  let parsed: unknown;
  try {
    parsed = parseToml(text);
  } catch (error) {
    const at = error instanceof TomlError ? `${path}:${error.line}:${error.column}` : path;
    throw new ConfigError(`${at}: TOML syntax error: ${(error as Error).message.split('\n')[0]}`, {
      code: 'task_toml_syntax',
    });
  }
  const result = TaskTomlSchema.safeParse(parsed);
  if (!result.success) throw new ConfigError(describeIssues(path, result.error), { code: 'task_toml_invalid' });
  return result.data;
}

/**
 * The image a task runs in. A Harbor task (environment/Dockerfile) needs a prebuilt image: traj
 * does not build Dockerfiles (the machines it targets are offline), so --image (or Harbor's
 * `docker_image`) must name one that already satisfies the Dockerfile.
 */
function taskImage(tomlPath: string, toml: TaskToml, dockerfile: boolean, override: string | undefined): string {
  if (override) return override;
  if (dockerfile) {
    const prebuilt = toml.environment?.docker_image ?? toml.environment?.image;
    if (prebuilt) return prebuilt;
    throw new ConfigError(
      `${tomlPath}: this is a Terminal-Bench 2 / Harbor task (environment/Dockerfile) and traj does not build Dockerfiles; pass --image IMAGE naming a prebuilt image that satisfies the Dockerfile (e.g. --image traj-sandbox:bookworm when its packages suffice)`,
      { code: 'task_image_missing' },
    );
  }
  return toml.environment?.image ?? DEFAULT_IMAGE;
}

/** The last WORKDIR of a Dockerfile (where Harbor starts the agent), when it is a plain absolute path. */
export function dockerfileWorkdir(path: string): string | undefined {
  const lines = readFileSync(path, 'utf8').split('\n');
  const workdirs = lines
    .map((line) => /^\s*WORKDIR\s+(\/\S*)\s*$/i.exec(line)?.[1])
    .filter((value): value is string => value !== undefined && !value.includes('$'));
  return workdirs.at(-1);
}

function readRequired(path: string, what: string): string {
  requireFile(path, what);
  return readFileSync(path, 'utf8');
}

function requireFile(path: string, what: string): void {
  if (!existsSync(path)) throw new ConfigError(`${path}: missing (expected ${what})`, { code: 'task_file_missing' });
}
