import { ConfigError, errorMessage } from '../errors.js';
import { pruneSandboxFolders } from '../sandbox/local-prune.js';
import { stringOption, type CommandDefinition } from './command.js';

const SUBCOMMANDS = ['prune'];
const BACKENDS = ['local', 'docker'];

export const command: CommandDefinition = {
  name: 'sandbox',
  summary: "manage traj's sandboxes (prune leaked local folders and Docker containers)",
  usage: 'traj sandbox prune [--backend local|docker] [--run NAME] [--all]',
  allowPositionals: true,
  options: {
    backend: {
      type: 'string',
      value: 'local|docker',
      description: 'only this backend (default: both; docker is skipped when no engine answers)',
    },
    run: {
      type: 'string',
      value: 'NAME',
      description: 'only containers of this run (local folders carry no run name)',
    },
    all: { type: 'boolean', description: 'also sandboxes whose traj process is still running (kills them)' },
  },
  details: [
    'prune removes what traj processes that are gone (crashed or killed) left behind:',
    '  local:  traj-sbx-* folders in the temp directory (and their pids cgroups), by owner pid;',
    '  docker: containers labelled traj.managed=1, by owner pid.',
    '--all removes them even while their process runs. Only sandboxes traj created are touched.',
    "Runs (batch, eval, bench) prune dead invocations' leftovers of their backend when they start.",
    '',
    'examples:',
    '  traj sandbox prune',
    '  traj sandbox prune --backend local',
    '  traj sandbox prune --run gsm8k-eval',
    '  traj sandbox prune --all',
  ].join('\n'),
  async run({ values, positionals }) {
    const [action, ...extra] = positionals;
    if (action !== 'prune' || extra.length > 0) {
      throw new ConfigError(
        `traj sandbox: expected one of: ${SUBCOMMANDS.join(', ')}, got '${positionals.join(' ') || '(nothing)'}' (see 'traj sandbox --help')`,
        { code: 'cli_usage' },
      );
    }
    const backend = stringOption(values, 'backend');
    if (backend !== undefined && !BACKENDS.includes(backend)) {
      throw new ConfigError(`--backend: expected one of: ${BACKENDS.join(', ')}, got '${backend}'`, {
        code: 'cli_usage',
      });
    }
    const run = stringOption(values, 'run');
    const all = values.all === true;
    if (backend !== 'docker' && run === undefined) {
      const removed = await pruneSandboxFolders({ all });
      process.stdout.write(`removed ${removed} local sandbox folder${removed === 1 ? '' : 's'}\n`);
    }
    if (backend !== 'local') await pruneDocker(run, all, backend === 'docker');
    return 0;
  },
};

/** Docker's share; without an engine it is skipped with a note, unless docker was asked for by name. */
async function pruneDocker(run: string | undefined, all: boolean, required: boolean): Promise<void> {
  const { pruneContainers } = await import('../sandbox/docker-prune.js');
  let removed: number;
  try {
    removed = await pruneContainers({ ...(run !== undefined ? { run } : {}), all });
  } catch (error) {
    if (required) throw error;
    process.stdout.write(`docker: skipped (${errorMessage(error)})\n`);
    return;
  }
  const scope = run !== undefined ? ` of run '${run}'` : '';
  process.stdout.write(`removed ${removed} container${removed === 1 ? '' : 's'}${scope}\n`);
}
