import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const SCAFFOLD = [
  'README.md',
  'environment/config.yaml',
  'environment/index.mjs',
  'environment/items.jsonl',
  'prompts.jsonl',
  'run.yaml',
  'suite.yaml',
];

const lines = (file: string) => readFileSync(file, 'utf8').trim().split('\n');

test('traj init scaffolds a project whose run config, environment and suite work at once with the scripted endpoint', async (t) => {
  const parent = temporaryDirectory(t, 'traj-init-');
  const made = await runCli(['init', 'my-project'], { cwd: parent });
  assert.equal(made.code, 0, made.stderr);
  const project = join(parent, 'my-project');
  for (const file of SCAFFOLD) assert.ok(existsSync(join(project, file)), `${file} written`);
  for (const file of ['run.yaml', 'suite.yaml', 'environment/config.yaml', 'environment/index.mjs'])
    assert.match(readFileSync(join(project, file), 'utf8'), /^(#|\/\/) /m, `${file} is commented`);

  const batch = await runCli(['batch', '--config', 'run.yaml', '--scripted-if-unset'], { cwd: project });
  assert.equal(batch.code, 0, batch.stderr);
  assert.equal(lines(join(project, 'datasets', 'my-first-run', 'trajectories.jsonl')).length, 3);

  const evaluated = await runCli(['eval', '--env', './environment', '--run', 'my-eval', '--scripted-if-unset'], {
    cwd: project,
  });
  assert.equal(evaluated.code, 0, evaluated.stderr);
  const records = lines(join(project, 'datasets', 'my-eval', 'trajectories.jsonl')).map((line) => JSON.parse(line));
  assert.deepEqual(records.map((record) => record.id).sort(), ['greeting', 'sum']);
  // The scripted model only echoes: the reward read the sandbox and found no file.
  assert.deepEqual(
    records.map((record) => [record.reward, record.reward_error]),
    [
      [0, null],
      [0, null],
    ],
  );

  const oracle = await runCli(['bench', './suite.yaml', '--agent', 'oracle', '--run', 'my-bench'], { cwd: project });
  assert.equal(oracle.code, 0, oracle.stderr + oracle.stdout);
  assert.match(oracle.stdout + oracle.stderr, /validation \(oracle agent\): all 2 rollouts scored 1\.0/);
  const report = JSON.parse(readFileSync(join(project, 'datasets', 'my-bench', 'report.json'), 'utf8'));
  assert.ok(JSON.stringify(report).includes('my-environment'), 'the report names the scaffold environment');
});

test('traj init never overwrites: a second init into the same folder writes nothing and exits 2', async (t) => {
  const folder = temporaryDirectory(t, 'traj-init-');
  writeFileSync(join(folder, 'notes.txt'), 'mine\n');
  const first = await runCli(['init'], { cwd: folder });
  assert.equal(first.code, 0, first.stderr);
  assert.equal(readFileSync(join(folder, 'notes.txt'), 'utf8'), 'mine\n', 'other files are left alone');
  writeFileSync(join(folder, 'run.yaml'), '# edited\n');
  const second = await runCli(['init', '.'], { cwd: folder });
  assert.equal(second.code, 2);
  assert.match(second.stderr, /already holds README\.md, .*run\.yaml.*; nothing was written/);
  assert.equal(readFileSync(join(folder, 'run.yaml'), 'utf8'), '# edited\n');
});
