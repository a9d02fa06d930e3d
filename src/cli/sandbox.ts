import { ConfigError } from '../errors.js';
import { pruneContainers } from '../sandbox/docker-prune.js';
import { stringOption, type CommandDefinition } from './command.js';

const SUBCOMMANDS = ['prune'];

export const command: CommandDefinition = {
  name: 'sandbox',
  summary: "manage traj's sandboxes (prune leaked Docker containers)",
  usage: 'traj sandbox prune [--run NAME] [--all]',
  allowPositionals: true,
  options: {
    run: { type: 'string', value: 'NAME', description: 'only containers of this run' },
    all: { type: 'boolean', description: 'also containers whose traj process is still running' },
  },
  details: [
    'prune removes containers labelled traj.managed=1 whose traj process is gone (crashed or',
    'killed); --all removes them even while their process runs. Only containers traj created',
    'are touched.',
    '',
    'examples:',
    '  traj sandbox prune',
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
    const run = stringOption(values, 'run');
    const removed = await pruneContainers({ ...(run !== undefined ? { run } : {}), all: values.all === true });
    const scope = run !== undefined ? ` of run '${run}'` : '';
    process.stdout.write(`removed ${removed} container${removed === 1 ? '' : 's'}${scope}\n`);
    return 0;
  },
};
