import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ReferenceCheck } from '../../src/report/reference-check.js';
import type { EvalReport } from '../../src/report/report-schema.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { projectRoot, sharedDir } from '../../src/util/paths.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

/** The suites themselves, the reference agents on GSM8K, a broken task caught, and the errors a user meets first. */
const GSM8K = join(sharedDir(), 'datasets', 'gsm8k', 'test-dev.jsonl');
const DEMO_TASKS = join(projectRoot(), 'benchmarks', 'tasks');

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

test('traj bench list shows the shipped suites with their environments', async () => {
  const result = await runCli(['bench', 'list']);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.split('\n');
  for (const [suite, environment] of [
    ['demo', 'terminal-tasks'],
    ['gsm8k', 'gsm8k'],
    ['terminal-tasks', 'terminal-tasks'],
  ]) {
    assert.ok(
      lines.some((line) => new RegExp(`^${suite}\\s+${environment}\\s+model\\s+1\\s`).test(line)),
      `${suite} → ${environment} in:\n${result.stdout}`,
    );
  }
});

test('traj bench gsm8k: the oracle answers every reference number (300 × 1.0), the no-op none (300 × 0.0)', async (t) => {
  if (!existsSync(GSM8K)) return t.skip(`skipped: ${GSM8K} is absent (../shared beside the checkout)`);
  const directory = temporaryDirectory(t);
  for (const [agent, expected] of [
    ['oracle', 1],
    ['noop', 0],
  ] as const) {
    const result = await runCli(['bench', 'gsm8k', '--agent', agent, '--workers', '1'], { cwd: directory });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    const run = `gsm8k-${agent}`;
    const report = readJson<EvalReport>(join(directory, 'datasets', run, 'report.json'));
    assert.equal(report.items.length, 300);
    assert.ok(report.items.every((item) => item.reward === expected));
    assert.deepEqual(readJson<ReferenceCheck>(join(directory, 'datasets', run, 'validation.json')).broken, []);
    assert.match(result.stdout, new RegExp(`validation \\(${agent} agent\\): all 300 rollouts scored ${expected}\\.0`));
  }
  const oracle = readFileSync(join(directory, 'datasets', 'gsm8k-oracle', 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TrajectoryRecord);
  const first = oracle.find((record) => record.id === 'gsm8k-test-0000')!;
  assert.deepEqual(first.messages.at(-1), { role: 'assistant', content: 'The answer is 18.\n#### 18' });
  assert.equal(first.api_calls, 0);
});

test('a task whose reference solution does not pass is reported as broken: exit 3, terminal, validation.json, report.md and report.html', async (t) => {
  const directory = temporaryDirectory(t);
  const tasks = join(directory, 'tasks');
  cpSync(DEMO_TASKS, tasks, { recursive: true });
  // Break one solution: the right file, the wrong text.
  writeFileSync(
    join(tasks, 'create-greeting-file', 'solution', 'solve.sh'),
    "#!/bin/bash\nprintf 'Hello from somewhere else\\n' > greeting.txt\n",
  );
  const result = await runCli(
    ['bench', 'demo', '--tasks', tasks, '--agent', 'oracle', '--sandbox', 'local', '--run', 'broken'],
    { cwd: directory },
  );
  assert.equal(result.code, 3, `${result.stdout}\n${result.stderr}`);
  assert.match(
    result.stdout,
    /validation \(oracle agent\): 1 BROKEN of 3 \(every rollout must score 1\.0\):\n {2}create-greeting-file#0: the reference solution scored 0, expected 1; again when run alone \(1×\): scored 0/,
  );
  const check = readJson<ReferenceCheck>(join(directory, 'datasets', 'broken', 'validation.json'));
  assert.deepEqual(
    check.broken.map((item) => [item.key, item.reward]),
    [['create-greeting-file', 0]],
  );
  assert.match(
    readFileSync(join(directory, 'datasets', 'broken', 'report.md'), 'utf8'),
    /## Validation with the oracle agent\n\n1 broken of 3[^\n]*\n\n\| item \| sample \| reward \| why \|\n\| --- \| --- \| --- \| --- \|\n\| create-greeting-file \| 0 \| 0\.000 \|/,
  );
  const html = readFileSync(join(directory, 'datasets', 'broken', 'report.html'), 'utf8');
  assert.match(html, /<section class="check broken" data-broken="1" data-flaky="0">/);
  assert.match(html, /<tr data-broken-key="create-greeting-file">/);
});

test('a task whose environment setup.sh fails is broken too: exit 3, not 1', async (t) => {
  const directory = temporaryDirectory(t);
  const tasks = join(directory, 'tasks');
  cpSync(DEMO_TASKS, tasks, { recursive: true });
  writeFileSync(
    join(tasks, 'create-greeting-file', 'environment', 'setup.sh'),
    '#!/bin/bash\necho cannot set up >&2\nexit 7\n',
  );
  const result = await runCli(
    ['bench', 'demo', '--tasks', tasks, '--agent', 'oracle', '--sandbox', 'local', '--run', 'setup-broken'],
    { cwd: directory },
  );
  assert.equal(result.code, 3, `${result.stdout}\n${result.stderr}`);
  assert.match(result.stdout, /BROKEN/);
  assert.match(result.stdout, /create-greeting-file/);
});

test('a task that fails in the run but passes when run again alone is reported as flaky, not broken (exit 0)', async (t) => {
  const directory = temporaryDirectory(t);
  const tasks = join(directory, 'tasks');
  cpSync(join(DEMO_TASKS, 'create-greeting-file'), join(tasks, 'create-greeting-file'), { recursive: true });
  const flaky = join(tasks, 'flaky-task');
  mkdirSync(join(flaky, 'tests'), { recursive: true });
  mkdirSync(join(flaky, 'solution'));
  writeFileSync(
    join(flaky, 'task.toml'),
    '[task]\nname = "flaky-task"\ncategory = "timing"\n[environment]\nlocal_sandbox = true\n',
  );
  writeFileSync(join(flaky, 'instruction.md'), 'Nothing to do.\n');
  writeFileSync(join(flaky, 'solution', 'solve.sh'), 'true\n');
  // Fails the first time it runs, passes afterwards: a timing test losing its first race.
  const marker = join(directory, 'ran-once');
  writeFileSync(
    join(flaky, 'tests', 'test.sh'),
    `mkdir -p "$LOGS_DIR/verifier"\nif [ -f ${marker} ]; then echo 1 > "$LOGS_DIR/verifier/reward.txt"; exit 0; fi\ntouch ${marker}\necho "FAILED timing::race - too slow"\necho 0 > "$LOGS_DIR/verifier/reward.txt"\nexit 1\n`,
  );
  // The marker lives on the host, outside every sandbox: only plain processes (isolation none) reach it.
  const plain = join(directory, 'plain-processes.yaml');
  writeFileSync(plain, 'local:\n  isolation: none\n');
  const result = await runCli(
    ['bench', 'demo', '--config', plain, '--tasks', tasks, '--agent', 'oracle', '--sandbox', 'local', '--run', 'flaky'],
    { cwd: directory },
  );
  assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
  assert.match(result.stderr, /re-checking 1 broken item alone/);
  assert.match(
    result.stdout,
    /validation \(oracle agent\): 1 of 2 rollouts scored 1\.0 as they must\nvalidation \(oracle agent\): 1 FLAKY \(wrong in the run, 1\.0 when run again alone\):\n {2}flaky-task#0: /,
  );
  const check = readJson<ReferenceCheck>(join(directory, 'datasets', 'flaky', 'validation.json'));
  assert.deepEqual([check.broken, check.flaky.map((item) => item.key), check.rechecks], [[], ['flaky-task'], 1]);
  const report = readJson<EvalReport>(join(directory, 'datasets', 'flaky', 'report.json'));
  assert.equal(
    report.items.find((item) => item.key === 'flaky-task')?.reward,
    0,
    'the report keeps what the run measured',
  );
  assert.match(
    readFileSync(join(directory, 'datasets', 'flaky', 'report.html'), 'utf8'),
    /<section class="check flaky" data-broken="0" data-flaky="1">/,
  );
  const off = await runCli(
    [
      'bench',
      'demo',
      '--config',
      plain,
      '--tasks',
      tasks,
      '--agent',
      'oracle',
      '--sandbox',
      'local',
      '--run',
      'flaky-again',
      '--recheck',
      '0',
    ],
    { cwd: directory },
  );
  assert.equal(off.code, 0, 'the marker exists now: the task passes at once');
});

test('what a user gets wrong first is named: unknown suite, missing task folder, a Harbor task whose FROM is absent offline, oracle without a solution hook, a bad suite file', async (t) => {
  const directory = temporaryDirectory(t);
  const unknown = await runCli(['bench', 'nope'], { cwd: directory });
  assert.equal(unknown.code, 2, 'a usage or config error exits 2');
  assert.match(unknown.stderr, /unknown suite 'nope'; suites: demo, gsm8k, terminal-tasks/);

  const missing = await runCli(['bench', 'demo', '--tasks', join(directory, 'absent'), '--agent', 'noop'], {
    cwd: directory,
  });
  assert.equal(missing.code, 2, 'a usage or config error exits 2');
  assert.match(missing.stderr, /--tasks .*absent: no such directory/);

  const harbor = join(directory, 'harbor', 'tb2-task');
  mkdirSync(join(harbor, 'environment'), { recursive: true });
  mkdirSync(join(harbor, 'tests'));
  writeFileSync(join(harbor, 'task.toml'), 'version = "1.0"\n[metadata]\ncategory = "x"\n');
  writeFileSync(join(harbor, 'instruction.md'), 'do it\n');
  writeFileSync(join(harbor, 'tests', 'test.sh'), 'exit 0\n');
  writeFileSync(join(harbor, 'environment', 'Dockerfile'), 'FROM debian\nWORKDIR /app\n');
  const noImage = await runCli(['bench', 'terminal-tasks', '--tasks', join(directory, 'harbor'), '--agent', 'noop'], {
    cwd: directory,
  });
  // A Harbor task's image is built from its Dockerfile, offline: a FROM the engine lacks is a task setup failure.
  assert.equal(noImage.code, 3, 'a task that cannot be set up exits 3');
  assert.match(
    noImage.stderr,
    /task 'tb2-task': .*Dockerfile: FROM debian is not on this Docker engine, and traj builds offline/,
  );

  const suite = join(directory, 'rubric-oracle.yaml');
  writeFileSync(suite, 'environment: rubric\ndataset: prompts.jsonl\n');
  writeFileSync(join(directory, 'prompts.jsonl'), '{"prompt": "write a haiku"}\n');
  const noOracle = await runCli(['bench', suite, '--agent', 'oracle'], { cwd: directory });
  assert.equal(noOracle.code, 2, 'a usage or config error exits 2');
  assert.match(noOracle.stderr, /--agent oracle: environment 'rubric' has no oracle/);

  const bad = join(directory, 'bad.yaml');
  writeFileSync(bad, 'environment: gsm8k\nsamples: two\nconcurrancy: 4\n');
  const invalid = await runCli(['bench', bad], { cwd: directory });
  assert.equal(invalid.code, 2, 'a usage or config error exits 2');
  assert.match(invalid.stderr, new RegExp(`${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: samples: `));
  assert.match(invalid.stderr, /concurrancy/);

  const usage = await runCli(['bench'], { cwd: directory });
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /missing the suite name/);
});
