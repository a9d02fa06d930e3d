import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/util/paths.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  });

/** A fresh git checkout holding what the quick start needs: .gitignore, the sample dataset, checkpoints/. */
function sampleCheckout(t: { after(fn: () => void): void }): string {
  const directory = temporaryDirectory(t, 'traj-readme-');
  for (const file of ['.gitignore', 'datasets/sample/prompts.jsonl', 'checkpoints/.gitkeep']) {
    mkdirSync(join(directory, file, '..'), { recursive: true });
    copyFileSync(join(projectRoot(), file), join(directory, file));
  }
  git(directory, 'init', '--quiet');
  git(directory, 'add', '.');
  git(directory, '-c', 'user.name=test', '-c', 'user.email=test@localhost', 'commit', '--quiet', '-m', 'checkout');
  return directory;
}

/** The arguments of the `npm start` script (package.json), after `node dist/src/cli/main.js`. */
function npmStartArguments(): string[] {
  const start = JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')).scripts.start as string;
  const [, ...rest] = start.split(' ').slice(1);
  return rest;
}

test("the quick start and the README's batch + export example leave git status clean", async (t) => {
  const checkout = sampleCheckout(t);
  const start = await runCli([...npmStartArguments(), '--workers', '1'], { cwd: checkout });
  assert.equal(start.code, 0, start.stderr);
  assert.ok(existsSync(join(checkout, 'datasets', 'demo', 'trajectories.jsonl')), 'npm start wrote its outputs');
  // The export section's example, verbatim but for the run name it shares with npm start.
  const exported = await runCli(['export', 'demo', '--format', 'jsonl'], { cwd: checkout });
  assert.equal(exported.code, 0, exported.stderr);
  assert.ok(existsSync(join(checkout, 'datasets', 'demo', 'README.md')), 'the card was written');
  assert.equal(
    git(checkout, 'status', '--porcelain', '--untracked-files=all'),
    '',
    'nothing new or changed outside ignored paths',
  );
  assert.deepEqual(
    readdirSync(join(checkout, 'datasets', 'sample')),
    ['prompts.jsonl'],
    'the input folder is untouched',
  );
});

test('--run sample is refused before any work: datasets/sample/ is an input folder, not an output folder', async (t) => {
  const checkout = sampleCheckout(t);
  const result = await runCli(
    ['batch', '--dataset', 'datasets/sample/prompts.jsonl', '--run', 'sample', '--scripted-if-unset'],
    { cwd: checkout },
  );
  assert.notEqual(result.code, 0);
  assert.match(
    result.stderr,
    /run 'sample': its default output folder datasets\/sample\/ already holds files no run wrote \(prompts\.jsonl\)/,
  );
  assert.match(result.stderr, /--out DIR/);
  assert.doesNotMatch(result.stderr, /\[traj\] run 'sample'/, 'no run started');
  assert.equal(git(checkout, 'status', '--porcelain', '--untracked-files=all'), '');
  // With --out, the user chose the folder: the run goes ahead.
  const elsewhere = await runCli(
    [
      'batch',
      '--dataset',
      'datasets/sample/prompts.jsonl',
      '--run',
      'sample',
      '--scripted-if-unset',
      '--workers',
      '1',
      '--out',
      'datasets/sample-out',
    ],
    { cwd: checkout },
  );
  assert.equal(elsewhere.code, 0, elsewhere.stderr);
  assert.equal(git(checkout, 'status', '--porcelain', '--untracked-files=all'), '');
  // A second run of the same name resumes into its own folder (it holds run outputs).
  const again = await runCli(
    ['batch', '--dataset', 'datasets/sample/prompts.jsonl', '--run', 'demo', '--scripted-if-unset', '--workers', '1'],
    { cwd: checkout },
  );
  assert.equal(again.code, 0, again.stderr);
  const resumed = await runCli(
    ['batch', '--dataset', 'datasets/sample/prompts.jsonl', '--run', 'demo', '--scripted-if-unset', '--workers', '1'],
    { cwd: checkout },
  );
  assert.equal(resumed.code, 0, resumed.stderr);
});

test('no example in README.md or docs/ names a git-tracked folder as its output', () => {
  const pages = [
    'README.md',
    ...readdirSync(join(projectRoot(), 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ];
  const readme = pages.map((page) => readFileSync(join(projectRoot(), page), 'utf8')).join('\n');
  const tracked = new Set(
    git(projectRoot(), 'ls-files')
      .split('\n')
      .filter(Boolean)
      .map((file) => file.split('/').slice(0, -1).join('/')),
  );
  const outputs: string[] = [];
  const lines = readme.split('\n');
  lines.forEach((line, index) => {
    const command = /(?:^|\$ )traj (batch|eval|bench|export)\b(.*)$/.exec(line.trim());
    // The example of the refusal itself writes nothing: its shown output (the next few lines) says so.
    const shown = lines.slice(index + 1, index + 8).join('\n');
    if (!command || /its default output folder .* already holds files no run wrote/.test(shown)) return;
    const out = /--out (\S+)/.exec(command[2]!)?.[1];
    const run =
      /--run (\S+)/.exec(command[2]!)?.[1] ??
      (command[1] === 'export' ? /^\s+([A-Za-z0-9][\w.-]*)/.exec(command[2]!)?.[1] : undefined);
    if (out) outputs.push(out.replace(/\/$/, ''));
    else if (run) outputs.push(`datasets/${run}`);
  });
  assert.ok(outputs.length > 10, `found the docs' run examples (${outputs.length})`);
  const offending = outputs.filter((folder) => tracked.has(folder));
  assert.deepEqual(offending, [], 'examples writing into git-tracked folders');
});
