import { resolve } from 'node:path';
import { fetchGsm8k, fetchTerminalTasks, GSM8K_SOURCE } from '../dataset/index.js';
import { ConfigError } from '../errors.js';
import { sharedDir } from '../util/paths.js';
import { stringOption, type CommandDefinition } from './command.js';

const WHAT = ['gsm8k', 'terminal-tasks'];

export const command: CommandDefinition = {
  name: 'data',
  summary: 'fetch the bundled third-party data (GSM8K, terminal tasks) from the Hugging Face Hub into ../shared',
  usage: 'traj data fetch gsm8k|terminal-tasks [--repo ORG/NAME] [--root DIR] [--force]',
  allowPositionals: true,
  options: {
    repo: {
      type: 'string',
      value: 'ORG/NAME',
      description:
        'terminal-tasks: the Hub dataset repository holding the task folders (required: there is no default)',
    },
    revision: { type: 'string', value: 'REV', description: 'terminal-tasks: branch, tag or commit', default: 'main' },
    root: {
      type: 'string',
      value: 'DIR',
      description: 'the data folder, laid out as ../shared (default: ../shared beside the checkout)',
    },
    force: { type: 'boolean', description: 'replace data that is there already' },
    'hub-url': {
      type: 'string',
      value: 'URL',
      description: 'Hub endpoint (else $HF_ENDPOINT, else https://huggingface.co)',
    },
  },
  details: [
    `gsm8k:          the first 300 problems of ${GSM8K_SOURCE}, as ROOT/datasets/gsm8k/test-dev.jsonl`,
    '                ({id, question, answer, final}: what traj eval --env gsm8k and traj bench gsm8k read by default)',
    'terminal-tasks: every file of --repo, as ROOT/benchmarks/terminal-tasks/ (traj bench terminal-tasks reads dev/)',
    'A token comes from $HF_TOKEN when set. Where there is no network, ../shared is handed out beside the checkout.',
    '',
    'examples:',
    '  traj data fetch gsm8k',
    '  traj data fetch terminal-tasks --repo my-org/terminal-tasks',
  ].join('\n'),
  async run({ values, positionals }) {
    const [action, what, ...extra] = positionals;
    if (action !== 'fetch' || !what || !WHAT.includes(what) || extra.length > 0)
      throw new ConfigError(
        `traj data: expected 'fetch ${WHAT.join('|')}', got '${positionals.join(' ') || '(nothing)'}' (see 'traj data --help')`,
        { code: 'cli_usage' },
      );
    const root = resolve(stringOption(values, 'root') ?? sharedDir());
    const options = { root, force: values.force === true, hubUrl: stringOption(values, 'hub-url') };
    if (what === 'gsm8k') {
      const { file, items } = await fetchGsm8k(options);
      process.stdout.write(`wrote ${items} GSM8K problems to ${file}\n`);
      return 0;
    }
    const repository = stringOption(values, 'repo');
    if (!repository || !/^[\w.-]+\/[\w.-]+$/.test(repository))
      throw new ConfigError(
        'traj data fetch terminal-tasks: give --repo ORG/NAME (no default Hub repository is known)',
        {
          code: 'cli_usage',
        },
      );
    const revision = stringOption(values, 'revision') ?? 'main';
    const { folder, files } = await fetchTerminalTasks(repository, { ...options, revision });
    process.stdout.write(`wrote ${files} files of ${repository}@${revision} to ${folder}\n`);
    return 0;
  },
};
