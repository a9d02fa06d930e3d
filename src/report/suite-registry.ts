import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { loadConfigFile } from '../config/load.js';
import { downloadHubFolder } from '../dataset/hub.js';
import { ConfigError } from '../errors.js';
import { trajHome } from '../util/paths.js';
import { BenchSuiteSchema, benchmarksDirectory, REGISTRY_FILE, suiteAgent, type LoadedSuite } from './bench-suite.js';

const SourceSchema = z.union([
  z.strictObject({ path: z.string().min(1).describe('a folder of task folders, relative to the registry file') }),
  z.strictObject({
    hub: z
      .string()
      .regex(/^[\w.-]+\/[\w.-]+$/, 'expected a Hugging Face dataset repository, ORG/NAME')
      .describe('a Hugging Face Hub dataset repository holding task folders'),
    revision: z.string().min(1).default('main').describe('branch, tag or commit of the repository'),
    folder: z
      .string()
      .min(1)
      .optional()
      .describe('the folder of task folders inside the repository (default: its root)'),
  }),
]);

/** One runnable suite of a registry: a name, a version, where its tasks come from, and bench settings. */
export const RegistryEntrySchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'expected letters, digits, dots, dashes, underscores'),
  version: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'expected letters, digits, dots, dashes, underscores'),
  description: z.string().optional(),
  source: SourceSchema,
  environment: z.string().min(1).default('terminal-tasks'),
  samples: z.number().int().positive().optional(),
  concurrency: z.number().int().positive().optional(),
  agent: z
    .string()
    .min(1)
    .optional()
    .describe(
      "model, oracle, noop, an agent CLI's name (qwen-code, codex, ...) or an agent definition YAML relative to the registry file (default model; --agent overrides)",
    ),
  environment_settings: z.record(z.string(), z.unknown()).optional(),
});
export type RegistryEntry = z.infer<typeof RegistryEntrySchema>;

export const RegistrySchema = z.strictObject({ suites: z.array(RegistryEntrySchema) });

/** What every result of a registry suite names: the suite, its version and where it came from. */
export interface SuiteReference {
  name: string;
  version: string;
  source: string;
}

export interface RegistryListing {
  file: string;
  entry: RegistryEntry;
}

/**
 * The registry files read, in order: the project's benchmarks/registry.yaml, then
 * TRAJ_HOME/registry.yaml, then each --registry FILE; a later entry of the same NAME@VERSION wins.
 */
export function registryFiles(extra: readonly string[] = []): string[] {
  const defaults = [join(benchmarksDirectory(), REGISTRY_FILE), join(trajHome(), 'registry.yaml')];
  for (const file of extra)
    if (!existsSync(file))
      throw new ConfigError(`--registry ${file}: no such file (expected a YAML file with a suites: list)`, {
        code: 'suite_missing',
      });
  return [...defaults.filter((file) => existsSync(file)), ...extra.map((file) => resolve(file))];
}

export function listRegistry(extra: readonly string[] = []): RegistryListing[] {
  const entries = new Map<string, RegistryListing>();
  for (const file of registryFiles(extra))
    for (const entry of loadConfigFile(RegistrySchema, file).suites)
      entries.set(`${entry.name}@${entry.version}`, { file, entry });
  return [...entries.values()].sort((a, b) =>
    `${a.entry.name}@${a.entry.version}`.localeCompare(`${b.entry.name}@${b.entry.version}`),
  );
}

export function describeSource(listing: RegistryListing): string {
  const { source } = listing.entry;
  if ('path' in source) return resolve(dirname(listing.file), source.path);
  return `hf://datasets/${source.hub}@${source.revision}${source.folder ? `/${source.folder}` : ''}`;
}

/** NAME@VERSION (or NAME when the registries hold one version of it) → the entry. */
export function findRegistrySuite(reference: string, extra: readonly string[] = []): RegistryListing {
  const [name, version] = reference.split('@');
  const listings = listRegistry(extra);
  const matching = listings.filter(
    (listing) => listing.entry.name === name && (version === undefined || listing.entry.version === version),
  );
  if (matching.length === 1) return matching[0]!;
  const known = listings.map((listing) => `${listing.entry.name}@${listing.entry.version}`).join(', ') || '(none)';
  throw new ConfigError(
    matching.length === 0
      ? `no registry suite '${reference}'; registry suites: ${known} (traj bench list)`
      : `'${reference}' has several versions (${matching.map((listing) => listing.entry.version).join(', ')}): name one as ${name}@VERSION`,
    { code: 'suite_unknown' },
  );
}

/** Where a Hub suite's version is kept once downloaded: TRAJ_HOME/cache/suites/NAME/VERSION. */
export function suiteCacheDir(entry: RegistryEntry): string {
  return join(trajHome(), 'cache', 'suites', entry.name, entry.version);
}

/**
 * The suite's task folder on this machine: a local source as it is; a Hub source downloaded once
 * per version (a later run uses the copy and needs no network), completed copies only.
 */
export async function materializeSuite(
  listing: RegistryListing,
  log: (line: string) => void,
): Promise<{ loaded: LoadedSuite; reference: SuiteReference }> {
  const { entry } = listing;
  const source = entry.source;
  // Checked before a download: a mistake in the agent costs no network.
  const agent = entry.agent === undefined ? undefined : suiteAgent(entry.agent, listing.file);
  let tasks: string;
  if ('path' in source) tasks = resolve(dirname(listing.file), source.path);
  else {
    tasks = join(suiteCacheDir(entry), 'tasks');
    const done = join(suiteCacheDir(entry), '.complete');
    if (!existsSync(done)) {
      log(`[traj] downloading ${entry.name}@${entry.version} from ${describeSource(listing)}`);
      const partial = `${tasks}.partial-${process.pid}`;
      rmSync(partial, { recursive: true, force: true });
      mkdirSync(dirname(partial), { recursive: true });
      await downloadHubFolder(source.hub, source.revision, partial, source.folder ? { folder: source.folder } : {});
      rmSync(tasks, { recursive: true, force: true });
      renameSync(partial, tasks);
      writeFileSync(done, `${new Date().toISOString()}\n`);
    }
  }
  const suite = BenchSuiteSchema.parse({
    environment: entry.environment,
    tasks,
    ...(entry.description === undefined ? {} : { description: entry.description }),
    ...(entry.samples === undefined ? {} : { samples: entry.samples }),
    ...(entry.concurrency === undefined ? {} : { concurrency: entry.concurrency }),
    ...(agent === undefined ? {} : { agent }),
    ...(entry.environment_settings === undefined ? {} : { environment_settings: entry.environment_settings }),
    sandbox: 'docker',
  });
  const name = `${entry.name}@${entry.version}`;
  return {
    loaded: { name, path: listing.file, suite },
    reference: { name: entry.name, version: entry.version, source: describeSource(listing) },
  };
}
