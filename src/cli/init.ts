import { cpSync, existsSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { projectRoot } from '../util/paths.js';
import type { CommandDefinition } from './command.js';

/** The scaffold is the project example the docs use, so what `traj init` writes is tested as an example too. */
const TEMPLATE = ['examples', 'project'];

export const command: CommandDefinition = {
  name: 'init',
  summary: 'scaffold a project folder: a run config, a dataset, an environment and a suite, each commented',
  usage: 'traj init [DIR]',
  allowPositionals: true,
  options: {},
  details: [
    'Writes into DIR (default: the current folder, which may exist) and never overwrites a file:',
    '  run.yaml       a run config for traj batch (dataset, toolsets, limits, endpoint)',
    '  prompts.jsonl  the dataset it names',
    '  environment/   an environment for traj eval: items, a reward over the sandbox, a reference solution',
    '  suite.yaml     a benchmark suite over that environment, for traj bench',
    'Each works at once against the built-in scripted endpoint (--scripted-if-unset).',
    '',
    'examples:',
    '  traj init my-project && cd my-project',
    '  traj batch --config run.yaml --scripted-if-unset',
    '  traj eval --env ./environment --run my-eval --scripted-if-unset',
    '  traj bench ./suite.yaml --agent oracle --run my-bench',
  ].join('\n'),
  async run({ positionals }) {
    if (positionals.length > 1)
      throw new ConfigError(`traj init: one folder at most, got ${positionals.length}`, { code: 'cli_usage' });
    const target = resolve(positionals[0] ?? '.');
    const files = scaffold(target);
    const shown = relative(process.cwd(), target) || '.';
    process.stdout.write(`created ${shown}/ with:\n${files.map((file) => `  ${file}\n`).join('')}`);
    const enter = shown === '.' ? '' : `cd ${shown} && `;
    process.stdout.write(`next: ${enter}traj batch --config run.yaml --scripted-if-unset   (see README.md there)\n`);
    return 0;
  },
};

/** Copy the template into `target`; refuses before writing anything when a file it would write exists. */
function scaffold(target: string): string[] {
  const template = join(projectRoot(), ...TEMPLATE);
  const files = (readdirSync(template, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => relative(template, join(entry.parentPath, entry.name)))
    .sort();
  const existing = files.filter((file) => existsSync(join(target, file)));
  if (existing.length > 0)
    throw new ConfigError(
      `traj init: ${target} already holds ${existing.join(', ')}; nothing was written (choose another folder, or move them away)`,
      { code: 'init_file_exists' },
    );
  cpSync(template, target, { recursive: true, errorOnExist: true, force: false });
  return files;
}
