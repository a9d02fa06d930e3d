import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/util/paths.js';
import { CLI, cliEnvironment, runCli, temporaryDirectory } from '../helpers/cli.js';

const COMMANDS = [
  'batch',
  'eval',
  'bench',
  'chat',
  'sessions',
  'export',
  'ask',
  'distributions',
  'mcp',
  'sandbox',
  'mock-server',
];

test('traj help CMD prints exactly what traj CMD --help prints, for every command', async () => {
  for (const name of COMMANDS) {
    const [viaHelp, viaFlag] = await Promise.all([runCli(['help', name]), runCli([name, '--help'])]);
    assert.equal(viaHelp.code, 0, `${name}: ${viaHelp.stderr}`);
    assert.equal(viaHelp.stderr, '');
    assert.match(viaHelp.stdout, new RegExp(`^usage: traj ${name}`, 'm'), name);
    assert.equal(viaHelp.stdout, viaFlag.stdout, name);
  }
});

test('traj help alone is the command list; an unknown command says which one was meant', async () => {
  const list = await runCli(['help']);
  assert.equal(list.code, 0);
  assert.match(list.stdout, /traj help <command>/);
  for (const name of COMMANDS) assert.match(list.stdout, new RegExp(`^  ${name} `, 'm'));

  const typo = await runCli(['bacth', '--run', 'x']);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /^traj: unknown command 'bacth' \(did you mean 'batch'\?\)/m);
  const helpTypo = await runCli(['help', 'sesions']);
  assert.equal(helpTypo.code, 2);
  assert.match(helpTypo.stderr, /unknown command 'sesions' \(did you mean 'sessions'\?\)/);
  const far = await runCli(['frobnicate']);
  assert.equal(far.code, 2);
  assert.match(far.stderr, /unknown command 'frobnicate'; commands: batch, eval, /);
});

test('an unknown flag names the nearest real flag of that command', async () => {
  const batch = await runCli(['batch', '--run', 'x', '--modle', 'm']);
  assert.equal(batch.code, 2);
  assert.match(
    batch.stderr,
    /^traj: traj batch: unknown flag --modle \(did you mean --model\?\) \(see 'traj batch --help'\)$/m,
  );
  const chat = await runCli(['chat', '--toolset', 'terminal'], { stdin: '' });
  assert.equal(chat.code, 2);
  assert.match(chat.stderr, /unknown flag --toolset \(did you mean --toolsets\?\)/);
  const far = await runCli(['batch', '--zzzzzzzz']);
  assert.equal(far.code, 2);
  assert.match(far.stderr, /unknown flag --zzzzzzzz \(see 'traj batch --help'\)/);
  assert.doesNotMatch(far.stderr, /did you mean/);
});

/** Run traj with its stdout on a pipe whose reading end is closed before traj writes to it. */
function runWithClosedStdout(
  args: string[],
  cwd: string,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: cliEnvironment(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.destroy();
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })));
}

test('traj batch | (a reader that is gone): no EPIPE, the run completes and writes its outputs, exit 0', async (t) => {
  const directory = temporaryDirectory(t);
  const dataset = join(projectRoot(), 'datasets', 'sample', 'prompts.jsonl');
  const out = join(directory, 'out');
  const args = [
    'batch',
    '--run',
    'pipe',
    '--dataset',
    dataset,
    '--toolsets',
    'terminal',
    '--scripted-if-unset',
    '--out',
    out,
    '--checkpoints',
    join(directory, 'checkpoints'),
    '--workers',
    '1',
  ];
  const result = await runWithClosedStdout(args, directory);
  assert.equal(result.signal, null);
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stderr, /EPIPE|internal error|Unhandled/);
  const lines = readFileSync(join(out, 'trajectories.jsonl'), 'utf8').trim().split('\n');
  assert.equal(lines.length, 12, 'every prompt of the sample landed');
  assert.ok(existsSync(join(out, 'statistics.json')));
});

test('traj batch ... | head -n 1 through a real shell pipeline: traj exits 0 with no EPIPE', async (t) => {
  const directory = temporaryDirectory(t);
  const dataset = join(projectRoot(), 'datasets', 'sample', 'prompts.jsonl');
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  const command = [
    process.execPath,
    CLI,
    'batch',
    '--run',
    'head',
    '--dataset',
    dataset,
    '--toolsets',
    'terminal',
    '--scripted-if-unset',
    '--out',
    join(directory, 'out'),
    '--checkpoints',
    join(directory, 'checkpoints'),
    '--workers',
    '1',
  ]
    .map(quote)
    .join(' ');
  /** Run a shell pipeline; what it printed, ending with traj's own exit status. */
  const pipeline = async (script: string): Promise<string> => {
    const shell = spawn('bash', ['-c', `${script}; echo "traj exit: \${PIPESTATUS[0]}"`], {
      cwd: directory,
      env: cliEnvironment(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    shell.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await new Promise((resolve) => shell.on('close', resolve));
    return stdout;
  };
  // `true` closes the pipe at once; head -n 1 closes it after the first line of the summary.
  for (const reader of ['true', 'head -n 1']) {
    const stdout = await pipeline(`${command} 2>${quote(join(directory, 'stderr.txt'))} | ${reader}`);
    assert.match(stdout, /traj exit: 0$/m, `${reader}: ${stdout}`);
    const stderr = readFileSync(join(directory, 'stderr.txt'), 'utf8');
    assert.doesNotMatch(stderr, /EPIPE|internal error/, reader);
  }
  // Both streams into the pipe: stderr's reader goes away too, mid-run.
  for (const [run, reader] of [
    ['both-true', 'true'],
    ['both-head', 'head -n 1'],
  ] as const) {
    const stdout = await pipeline(`${command.replace("'head'", quote(run))} 2>&1 | ${reader}`);
    assert.match(stdout, /traj exit: 0$/m, `2>&1 | ${reader}: ${stdout}`);
  }
  assert.ok(existsSync(join(directory, 'out', 'trajectories.jsonl')));
});
