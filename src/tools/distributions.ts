import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { parseYaml, validate } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { projectRoot } from '../util/paths.js';
import type { ToolRegistry } from './registry.js';

/**
 * A toolset distribution: per prompt, each toolset is offered independently with its
 * probability. Written as YAML in toolset-distributions/NAME.yaml.
 */
export const DistributionSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'expected lower-case letters, digits, "_" or "-"'),
  description: z.string().min(1, 'say what the distribution is for'),
  toolsets: z
    .record(
      z.string().min(1),
      z.number().min(0, 'a probability is at least 0').max(1, 'a probability is at most 1 (write 0.3, not 30)'),
    )
    .refine((toolsets) => Object.keys(toolsets).length > 0, 'name at least one toolset')
    .refine(
      (toolsets) => Object.values(toolsets).some((probability) => probability > 0),
      'at least one toolset needs a probability above 0',
    ),
});

export type Distribution = z.infer<typeof DistributionSchema> & {
  /** The file it was loaded from. */
  file: string;
  /** The file's text, for run fingerprints and `traj distributions show`. */
  text: string;
};

export function distributionsDir(): string {
  return join(projectRoot(), 'toolset-distributions');
}

/**
 * Load a distribution by name (from the project's toolset-distributions/) or by path. With a
 * registry, every toolset it names must be known there (a ConfigError lists the known ones).
 */
export function loadDistribution(nameOrPath: string, registry?: ToolRegistry): Distribution {
  const file = isPath(nameOrPath) ? nameOrPath : join(distributionsDir(), `${nameOrPath}.yaml`);
  if (!existsSync(file)) {
    const known = listDistributionNames();
    throw new ConfigError(
      `unknown toolset distribution '${nameOrPath}' (no ${file}); known distributions: ${known.join(', ') || '(none)'}`,
      {
        code: 'distribution_unknown',
        details: { name: nameOrPath, known },
      },
    );
  }
  const text = readFileSync(file, 'utf8');
  const distribution = { ...validate(DistributionSchema, parseYaml(text, file), file), file, text };
  if (!isPath(nameOrPath) && distribution.name !== nameOrPath) {
    throw new ConfigError(`${file}: name: '${distribution.name}' differs from the file name; make them equal`, {
      code: 'config_invalid',
      details: { file },
    });
  }
  registry?.assertToolsets(Object.keys(distribution.toolsets), `${file}: toolsets`);
  return distribution;
}

/** Every distribution shipped in toolset-distributions/, by name. */
export function listDistributions(registry?: ToolRegistry): Distribution[] {
  return listDistributionNames().map((name) => loadDistribution(name, registry));
}

function listDistributionNames(): string[] {
  const directory = distributionsDir();
  if (!existsSync(directory)) return [];
  return readdirSync(directory)
    .filter((entry) => entry.endsWith('.yaml'))
    .map((entry) => basename(entry, '.yaml'))
    .sort();
}

function isPath(value: string): boolean {
  return value.includes('/') || value.includes('\\') || /\.ya?ml$/i.test(value);
}

export interface SampleOptions {
  /** The run seed. */
  seed: number | string;
  /** The prompt key (src/run/prompt-key.ts). */
  key: string;
  /** `true`, or why the toolset cannot be offered on this machine (e.g. a missing API key). */
  available?: (toolset: string) => true | string;
}

export interface SampledToolsets {
  /** In the distribution's file order. */
  toolsets: string[];
  /** Toolsets left out of the draw because they are unavailable here. */
  dropped: Array<{ toolset: string; reason: string }>;
}

/**
 * Draw the toolsets for one prompt. Each toolset's draw is a uniform number derived from
 * sha256(`seed:key:toolset`), so it depends only on the run seed and the prompt key: a resume
 * or a rerun draws the same toolsets, whatever order prompts run in. When nothing is drawn,
 * the most probable available toolset is used (ties: the first in file order).
 */
export function sampleToolsets(
  distribution: Pick<Distribution, 'name' | 'toolsets'>,
  options: SampleOptions,
): SampledToolsets {
  const dropped: SampledToolsets['dropped'] = [];
  const candidates: Array<[string, number]> = [];
  for (const [toolset, probability] of Object.entries(distribution.toolsets)) {
    const verdict = options.available?.(toolset) ?? true;
    if (verdict === true) candidates.push([toolset, probability]);
    else dropped.push({ toolset, reason: verdict });
  }
  if (!candidates.some(([, probability]) => probability > 0)) {
    const reasons = dropped.map(({ toolset, reason }) => `${toolset}: ${reason}`).join('; ');
    throw new ConfigError(
      `distribution '${distribution.name}': no toolset it offers is available here (${reasons || 'all probabilities are 0'})`,
      {
        code: 'toolsets_unavailable',
        details: { distribution: distribution.name, dropped },
      },
    );
  }
  const toolsets = candidates
    .filter(([toolset, probability]) => uniform(options.seed, options.key, toolset) < probability)
    .map(([toolset]) => toolset);
  if (toolsets.length === 0) toolsets.push(mostProbable(candidates));
  return { toolsets, dropped };
}

/** A number in [0, 1) from the first 48 bits of sha256(`seed:key:toolset`). */
function uniform(seed: number | string, key: string, toolset: string): number {
  const digest = createHash('sha256').update(`${seed}:${key}:${toolset}`).digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

function mostProbable(candidates: Array<[string, number]>): string {
  let best = candidates[0]!;
  for (const candidate of candidates) if (candidate[1] > best[1]) best = candidate;
  return best[0];
}

export interface DistributionSimulation {
  draws: number;
  /** Share of draws that included each toolset, in file order. */
  inclusion: Array<{ toolset: string; probability: number; rate: number }>;
  /** Share of draws per exact combination, most frequent first. */
  combinations: Array<{ toolsets: string[]; rate: number }>;
}

/** What a distribution gives in practice over `draws` prompt keys (fallbacks included). */
export function simulateDistribution(
  distribution: Pick<Distribution, 'name' | 'toolsets'>,
  options: { seed: number | string; draws: number },
): DistributionSimulation {
  const included = new Map<string, number>(Object.keys(distribution.toolsets).map((toolset) => [toolset, 0]));
  const combinations = new Map<string, number>();
  for (let draw = 0; draw < options.draws; draw += 1) {
    const { toolsets } = sampleToolsets(distribution, { seed: options.seed, key: `simulated-${draw}` });
    for (const toolset of toolsets) included.set(toolset, included.get(toolset)! + 1);
    const combination = toolsets.join(',');
    combinations.set(combination, (combinations.get(combination) ?? 0) + 1);
  }
  return {
    draws: options.draws,
    inclusion: Object.entries(distribution.toolsets).map(([toolset, probability]) => ({
      toolset,
      probability,
      rate: included.get(toolset)! / options.draws,
    })),
    combinations: [...combinations.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([combination, count]) => ({ toolsets: combination.split(','), rate: count / options.draws })),
  };
}
