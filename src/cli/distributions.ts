import { relative } from 'node:path';
import { EndpointSchema, endpointFromEnvironment, type Endpoint } from '../config/endpoint.js';
import { ConfigError } from '../errors.js';
import { availabilityContext } from '../run/batch.js';
import { loadAgentConfig } from '../run/load-run-config.js';
import { builtinRegistry, loadToolRegistry } from '../tools/builtin.js';
import {
  listDistributions,
  loadDistribution,
  simulateDistribution,
  type Distribution,
} from '../tools/distributions.js';
import { projectRoot } from '../util/paths.js';
import { integerOption, stringOption, type CommandDefinition } from './command.js';

/** Stands for the built-in scripted endpoint, which is only started by a run. */
const SCRIPTED_URL = 'http://127.0.0.1/v1';

export const command: CommandDefinition = {
  name: 'distributions',
  summary: 'list the toolset distributions, or show one with what it draws in practice',
  usage: 'traj distributions list | traj distributions show NAME|FILE [--seed N] [--draws N]',
  allowPositionals: true,
  options: {
    seed: { type: 'string', value: 'N', description: 'show: run seed for the simulated draws', default: '0' },
    draws: { type: 'string', value: 'N', description: 'show: how many prompt keys to simulate', default: '10000' },
  },
  details: [
    'A distribution (toolset-distributions/NAME.yaml) gives each toolset a probability; per prompt,',
    'each toolset is offered independently with it, and the most probable one when none is drawn.',
    'The draw depends only on the run seed and the prompt key, so resumes and reruns match.',
    "The shipped distributions are Hermes Agent's 17 (same names, its probabilities / 100) plus file_only.",
    "'list' marks with * each toolset a run could not offer on this machine (with default settings and",
    'the endpoint from the environment), and says why; a batch drops such toolsets from the draw and',
    'counts them.',
    '',
    'examples:',
    '  traj distributions list',
    '  traj distributions show development',
    '  traj distributions show ./my-distribution.yaml --seed 7',
  ].join('\n'),
  async run({ values, positionals }) {
    const [action, target, ...extra] = positionals;
    if (action === 'list' && !target) {
      const registry = await loadToolRegistry();
      const context = availabilityContext({ endpoint: runEndpoint(), tools: loadAgentConfig().tools });
      const unavailable = (toolset: string) => registry.unavailableReason(toolset, context);
      process.stdout.write(formatList(listDistributions(registry), unavailable));
      return 0;
    }
    if (action === 'show' && target && extra.length === 0) {
      const distribution = loadDistribution(target, builtinRegistry());
      const seed = stringOption(values, 'seed') ?? '0';
      const draws = integerOption(values, 'draws') ?? 10_000;
      process.stdout.write(formatShow(distribution, seed, draws));
      return 0;
    }
    throw new ConfigError(
      `traj distributions: expected 'list' or 'show NAME', got '${positionals.join(' ')}' (see 'traj distributions --help')`,
      {
        code: 'cli_usage',
      },
    );
  },
};

/**
 * The main endpoint a run started here would have: the configured one, else the built-in scripted
 * one. Only its presence matters: vision tools fall back to it, as they do in a run.
 */
function runEndpoint(): Endpoint {
  const configured = endpointFromEnvironment({});
  return EndpointSchema.parse({ model: 'traj-scripted', ...configured, base_url: configured.base_url ?? SCRIPTED_URL });
}

/** Each distribution with its probabilities; toolsets that cannot be offered here are marked, with why. */
function formatList(distributions: Distribution[], unavailable: (toolset: string) => string | undefined): string {
  if (distributions.length === 0) return 'no distributions in toolset-distributions/\n';
  const width = Math.max(...distributions.map((distribution) => distribution.name.length)) + 2;
  const blocks = distributions.map((distribution) => {
    const reasons = Object.keys(distribution.toolsets).flatMap((toolset) => {
      const reason = unavailable(toolset);
      return reason === undefined ? [] : [{ toolset, reason }];
    });
    const toolsets = Object.entries(distribution.toolsets)
      .map(
        ([toolset, probability]) =>
          `${toolset} ${probability}${reasons.some((item) => item.toolset === toolset) ? '*' : ''}`,
      )
      .join(' · ');
    const description = wrap(distribution.description, 96 - width).map((line) => `${' '.repeat(width)}${line}\n`);
    const marks = reasons.map(
      ({ toolset, reason }) => `${' '.repeat(width)}* ${toolset} unavailable here: ${reason}\n`,
    );
    return `${distribution.name.padEnd(width)}${toolsets}\n${description.join('')}${marks.join('')}`;
  });
  return blocks.join('');
}

function formatShow(distribution: Distribution, seed: string, draws: number): string {
  const simulation = simulateDistribution(distribution, { seed, draws });
  const width = Math.max('toolset'.length, ...simulation.inclusion.map(({ toolset }) => toolset.length)) + 2;
  const lines = [
    `# ${displayPath(distribution.file)}`,
    distribution.text.trimEnd(),
    '',
    `what you get over ${draws.toLocaleString('en-US')} prompt keys with seed ${seed} (the most probable toolset when none is drawn):`,
    `  ${'toolset'.padEnd(width)}probability  included`,
    ...simulation.inclusion.map(
      ({ toolset, probability, rate }) =>
        `  ${toolset.padEnd(width)}${probability.toFixed(2).padStart(11)}  ${percent(rate).padStart(8)}`,
    ),
    '',
    'combinations:',
    ...simulation.combinations.map(({ toolsets, rate }) => `  ${percent(rate).padStart(6)}  ${toolsets.join(' + ')}`),
  ];
  return `${lines.join('\n')}\n`;
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

function percent(rate: number): string {
  return `${(rate * 100).toFixed(1)}%`;
}

function displayPath(file: string): string {
  const inProject = relative(projectRoot(), file);
  return inProject.startsWith('..') ? file : inProject;
}
