import { resolve } from 'node:path';
import { benchReport } from '../report/bench-validation.js';
import { listSuites, loadSuite, suiteDefaults, type BenchSuite, type LoadedSuite } from '../report/bench-suite.js';
import { formatComparison, readRunReport } from '../report/comparison-text.js';
import {
  describeSource,
  findRegistrySuite,
  listRegistry,
  materializeSuite,
  type SuiteReference,
} from '../report/suite-registry.js';
import { isAgentDefinitionPath, loadAgentDefinition } from '../bridge/index.js';
import { resolveEnvironmentModule } from '../eval/load-environment.js';
import { compareRuns } from '../report/run-comparison.js';
import { ConfigError } from '../errors.js';
import { table } from '../util/text-table.js';
import { integerOption, stringOption, type CommandDefinition, type OptionSpec, type ParsedCommand } from './command.js';
import { EVAL_OPTIONS, numberOption } from './eval-options.js';
import { runEval } from './eval-run.js';
import { EXIT_BROKEN_TASKS, exitCodeHelp } from './exit-codes.js';

/** `traj bench NAME` found reference-agent rollouts that broke the rule (oracle 1.0, no-op 0.0). */
export { EXIT_BROKEN_TASKS } from './exit-codes.js';

const { env: _env, rescore: _rescore, ...RUN_AND_EVAL_OPTIONS } = EVAL_OPTIONS;

const BENCH_OPTIONS: Record<string, OptionSpec> = {
  tasks: {
    type: 'string',
    value: 'DIR',
    description:
      'task directory for task-folder suites (terminal-tasks: default ../shared/benchmarks/terminal-tasks/dev)',
  },
  'agent-timeout': {
    type: 'string',
    value: 'S',
    description: 'seconds the agent gets per task, for every task (default: each task.toml [agent].timeout_sec)',
  },
  'verifier-timeout': {
    type: 'string',
    value: 'S',
    description: 'seconds the tests get per task (default: each task.toml [verifier].timeout_sec)',
  },
  recheck: {
    type: 'string',
    value: 'N',
    description:
      'with --agent oracle|noop: run each broken item again alone up to N times; one that then passes is reported as flaky, not broken (default 1; 0 = off)',
  },
  json: { type: 'boolean', description: 'compare: print the comparison as JSON' },
  registry: {
    type: 'string',
    multiple: true,
    value: 'FILE',
    description:
      'list/run: a suite registry file read after benchmarks/registry.yaml and TRAJ_HOME/registry.yaml (repeatable)',
  },
  ...RUN_AND_EVAL_OPTIONS,
  agent: {
    type: 'string',
    value: 'model|oracle|noop|NAME|FILE',
    description:
      "oracle replays each task's reference solution, noop does nothing: both validate the suite; NAME (qwen-code, codex, claude-code, TRAJ_HOME/agents/NAME.yaml) or an agent YAML runs that agent CLI in Docker behind traj's recording proxy (docs/agents.md) (default: the suite's agent:, else model)",
  },
  run: {
    type: 'string',
    value: 'NAME',
    description: 'run name (default SUITE-AGENT or SUITE-MODEL); rerunning the same name resumes it',
  },
};

const log = (line: string) => process.stderr.write(`${line}\n`);

export const command: CommandDefinition = {
  name: 'bench',
  summary:
    'run a benchmark suite (an environment + its items + settings), then write report.json, report.md and a self-contained report.html',
  usage:
    'traj bench NAME [--tasks DIR | --dataset FILE] [--samples K] [--agent model|oracle|noop|NAME|FILE] [--run NAME] [endpoint and batch options]\n       traj bench list [--registry FILE]\n       traj bench run NAME@VERSION [--registry FILE] [--agent model|oracle|noop|NAME|FILE] [--run NAME] [endpoint and batch options]\n       traj bench compare RUN_A RUN_B [--json]',
  options: BENCH_OPTIONS,
  allowPositionals: true,
  details: `Suites are YAML files in benchmarks/ (traj bench list): terminal-tasks, gsm8k, demo.
Examples:
  traj bench demo --agent oracle --sandbox local              # no Docker: the shipped demo tasks
  traj bench terminal-tasks --agent oracle                    # every dev task must score 1.0
  traj bench terminal-tasks --agent noop                      # ... and 0.0 doing nothing
  traj bench terminal-tasks --base-url URL --model M --run m1
  traj bench demo --agent codex --base-url URL --model M      # Codex CLI is the policy (a suite may say agent: codex)
  traj bench compare m1 m2                                    # per-task deltas, pass-rate difference with a 95% CI
Outputs: checkpoints/RUN.sqlite, datasets/RUN/ (trajectories.jsonl, statistics.json, report.json, report.md, report.html; validation.json with --agent oracle|noop).
A missing sandbox image or an unreachable Docker engine stops the run before any task runs (exit 4), never every task BROKEN.
${exitCodeHelp()}`,
  async run({ values, positionals }) {
    const [first, ...rest] = positionals;
    if (!first)
      throw new ConfigError("missing the suite name: traj bench NAME (see 'traj bench list')", { code: 'cli_usage' });
    if (first === 'list') return listCommand(rest, registryOption(values));
    if (first === 'run') return registryRunCommand(rest, values);
    if (first === 'compare') return compareCommand(rest, values.json === true);
    if (rest.length > 0)
      throw new ConfigError(`traj bench ${first}: unexpected argument '${rest[0]}'`, { code: 'cli_usage' });
    return benchCommand(loadSuite(first), values);
  },
};

function registryOption(values: ParsedCommand['values']): string[] {
  const value = values.registry;
  return Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : [];
}

function listCommand(rest: string[], registries: string[]): number {
  if (rest.length > 0)
    throw new ConfigError(`traj bench list: unexpected argument '${rest[0]}'`, { code: 'cli_usage' });
  const suites = listSuites();
  const registered = listRegistry(registries);
  if (registered.length > 0) {
    const rows = registered.map((listing) => [
      `${listing.entry.name}@${listing.entry.version}`,
      listing.entry.environment,
      describeSource(listing),
      listing.entry.description ?? '',
    ]);
    process.stdout.write(`${table(['registry suite', 'environment', 'source', 'description'], rows)}\n\n`);
  }
  if (suites.length === 0) {
    process.stdout.write('no suites in benchmarks/\n');
    return 0;
  }
  const rows = suites.map((entry) =>
    'suite' in entry
      ? [entry.name, entry.suite.environment, entry.suite.agent, entry.suite.samples, entry.suite.description ?? '']
      : [entry.name, '(invalid)', '', '', entry.error.split('\n').join(' ')],
  );
  process.stdout.write(`${table(['suite', 'environment', 'agent', 'samples', 'description'], rows)}\n`);
  return suites.some((entry) => 'error' in entry) ? 1 : 0;
}

/** `traj bench run NAME@VERSION`: a registry suite, downloaded once per version when it lives on the Hub. */
async function registryRunCommand(rest: string[], values: ParsedCommand['values']): Promise<number> {
  const [reference, ...extra] = rest;
  if (!reference)
    throw new ConfigError("missing the suite: traj bench run NAME@VERSION (see 'traj bench list')", {
      code: 'cli_usage',
    });
  if (extra.length > 0)
    throw new ConfigError(`traj bench run ${reference}: unexpected argument '${extra[0]}'`, { code: 'cli_usage' });
  const listing = findRegistrySuite(reference, registryOption(values));
  const { loaded, reference: suite } = await materializeSuite(listing, log);
  return benchCommand(loaded, values, suite);
}

/** The suite's settings under the flags, then an eval run with bench's report on top. */
async function benchCommand(
  loaded: LoadedSuite,
  values: ParsedCommand['values'],
  registrySuite?: SuiteReference,
): Promise<number> {
  const { suite } = loaded;
  const tasks = stringOption(values, 'tasks');
  if (tasks !== undefined && values.dataset !== undefined)
    throw new ConfigError('give either --tasks DIR or --dataset FILE, not both', { code: 'cli_usage' });
  const agent = stringOption(values, 'agent') ?? suite.agent;
  const merged: ParsedCommand['values'] = {
    ...values,
    agent,
    run:
      stringOption(values, 'run') ??
      defaultRunName(
        loaded.name,
        agent,
        stringOption(values, 'model') ?? suite.endpoint?.model ?? process.env.TRAJ_MODEL,
      ),
    dataset: tasks !== undefined ? resolve(tasks) : values.dataset,
  };
  return runEval(merged, {
    kind: 'bench',
    modulePath: resolveEnvironmentModule(suite.environment),
    defaults: suiteDefaults(suite),
    runDefaults: {
      ...(suite.workers === undefined ? {} : { workers: suite.workers }),
      ...(suite.endpoint === undefined ? {} : { endpoint: suite.endpoint }),
    },
    environmentSettings: environmentSettings(suite, values),
    environmentSettingsFile: loaded.path,
    ...(registrySuite ? { suite: registrySuite } : {}),
    afterReport: async (finished) => {
      const outcome = await benchReport(loaded, finished, integerOption(values, 'recheck', { min: 0 }) ?? 1, log);
      return { lines: outcome.lines, exitCode: outcome.broken > 0 ? EXIT_BROKEN_TASKS : 0 };
    },
  });
}

function environmentSettings(suite: BenchSuite, values: ParsedCommand['values']): Record<string, unknown> | undefined {
  const settings: Record<string, unknown> = { ...suite.environment_settings };
  const agentTimeout = numberOption(values, 'agent-timeout');
  const verifierTimeout = numberOption(values, 'verifier-timeout');
  if (agentTimeout !== undefined) settings.agent_timeout = positive(agentTimeout, 'agent-timeout');
  if (verifierTimeout !== undefined) settings.verifier_timeout = positive(verifierTimeout, 'verifier-timeout');
  return Object.keys(settings).length > 0 ? settings : undefined;
}

function positive(value: number, flag: string): number {
  if (value <= 0) throw new ConfigError(`flag --${flag}: expected seconds > 0, got ${value}`, { code: 'cli_usage' });
  return value;
}

export function defaultRunName(suite: string, agent: string, model: string | undefined): string {
  // An agent definition file goes by its own name.
  const who =
    agent === 'model' ? (model ?? 'model') : isAgentDefinitionPath(agent) ? loadAgentDefinition(agent).name : agent;
  return `${suite}-${who}`.replace(/[^A-Za-z0-9._-]+/g, '-');
}

function compareCommand(runs: string[], json: boolean): number {
  if (runs.length !== 2)
    throw new ConfigError('usage: traj bench compare RUN_A RUN_B (run names, run folders or report.json paths)', {
      code: 'cli_usage',
    });
  const comparison = compareRuns(readRunReport(runs[0]!), readRunReport(runs[1]!));
  process.stdout.write(json ? `${JSON.stringify(comparison, null, 2)}\n` : `${formatComparison(comparison)}\n`);
  return 0;
}
