import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { z } from 'zod';
import { describeIssues } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { contextTag, type ImageBuild } from '../../src/sandbox/docker-build.js';
import type { SidecarService } from '../../src/sandbox/docker-services.js';
import { readCompose, type ComposeServices } from './compose-file.js';

const SIZE_PATTERN = /^\s*\d+(\.\d+)?\s*[KMG]\s*$/i;
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
        // Harbor's EnvironmentConfig: resources, network and the build's time limit.
        build_timeout_sec: z.number().positive().optional(),
        cpus: z.number().positive().optional(),
        memory_mb: z.number().int().min(6).optional(),
        storage_mb: z.number().int().positive().optional(),
        allow_internet: z.boolean().optional(),
        /** Harbor's deprecated spellings of memory_mb / storage_mb ('2G', '512M'). */
        memory: z.string().regex(SIZE_PATTERN, "expected a size like '2G' or '512M'").optional(),
        storage: z.string().regex(SIZE_PATTERN, "expected a size like '10G' or '512M'").optional(),
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
  layout: z
    .enum(['terminal-tasks', 'harbor'])
    .describe('harbor: environment/Dockerfile or environment/docker-compose.yaml is present'),
  image: z.string(),
  /** Images built before the run: the task's own Dockerfile (and its sidecars'), unless a prebuilt image is named. */
  builds: z.array(z.custom<ImageBuild>()),
  /** Harbor: the task's resources and network over the run's docker settings (cpus, memory, network, storage). */
  docker: z.record(z.string(), z.unknown()),
  /** Harbor: docker-compose.yaml services beside the task's container. */
  services: z.array(z.custom<SidecarService>()),
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
  const compose = readCompose(join(directory, 'environment'), name, toml.environment?.build_timeout_sec);
  const harbor = dockerfile || compose !== undefined;
  const meta = { ...toml.metadata, ...toml.task };
  const image = harbor
    ? harborImage({ directory, name, toml, dockerfile, compose, override: overrides.image })
    : { image: overrides.image ?? toml.environment?.image ?? DEFAULT_IMAGE, builds: [] };
  return {
    name,
    directory,
    instruction,
    category: meta.category ?? null,
    difficulty: meta.difficulty ?? null,
    tags: meta.tags ?? [],
    layout: harbor ? 'harbor' : 'terminal-tasks',
    ...image,
    docker: harbor ? harborResources(tomlPath, toml) : {},
    services: compose?.sidecars ?? [],
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
 * The image a Harbor task runs in: `--image`, else a prebuilt `[environment].docker_image` (used
 * as given, never built), else its own image built from environment/ (or the compose file's
 * `main` service), tagged by a hash of the build context so it is built once and reused.
 */
function harborImage(task: {
  directory: string;
  name: string;
  toml: TaskToml;
  dockerfile: boolean;
  compose: ComposeServices | undefined;
  override: string | undefined;
}): { image: string; builds: ImageBuild[] } {
  const sidecarBuilds = task.compose?.builds ?? [];
  const prebuilt = task.override ?? task.toml.environment?.docker_image ?? task.toml.environment?.image;
  if (prebuilt) return { image: prebuilt, builds: sidecarBuilds };
  const main = task.compose?.main;
  if (main && 'image' in main) return { image: main.image, builds: sidecarBuilds };
  const build: ImageBuild = main
    ? main.build
    : {
        tag: contextTag(task.name, join(task.directory, 'environment')),
        context: join(task.directory, 'environment'),
        task: task.name,
        ...(task.toml.environment?.build_timeout_sec ? { timeoutSec: task.toml.environment.build_timeout_sec } : {}),
      };
  return { image: build.tag, builds: [build, ...sidecarBuilds] };
}

/**
 * Harbor's resources as docker settings over the run's: cpus (default 1), memory_mb (default
 * 2048), allow_internet (default true: a bridge network; false: none) and storage_mb when the
 * task sets it (Harbor's default of 10 GiB is not applied: most engines cannot enforce it).
 */
function harborResources(tomlPath: string, toml: TaskToml): Record<string, unknown> {
  const environment = toml.environment ?? {};
  const memory = environment.memory_mb ?? (environment.memory ? sizeMb(environment.memory) : 2048);
  const storage = environment.storage_mb ?? (environment.storage ? sizeMb(environment.storage) : undefined);
  if (memory < 6)
    throw new ConfigError(`${tomlPath}: [environment] memory is ${memory} MB; Docker needs at least 6`, {
      code: 'task_toml_invalid',
    });
  return {
    cpus: environment.cpus ?? 1,
    memory: `${memory}m`,
    network: environment.allow_internet === false ? 'none' : 'bridge',
    ...(storage === undefined ? {} : { storage: `${storage}m` }),
  };
}

/** '2G' → 2048, '512M' → 512 (Harbor's deprecated memory/storage strings). */
function sizeMb(size: string): number {
  const value = Number.parseFloat(size);
  const unit = size.trim().slice(-1).toUpperCase();
  return Math.floor(unit === 'G' ? value * 1024 : unit === 'K' ? value / 1024 : value);
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
