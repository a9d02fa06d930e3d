import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import terminalTasks, { defaultTasksDirectory, loadTasks } from '../../environments/terminal-tasks/index.js';
import { dockerfileWorkdir, readTaskFolder } from '../../environments/terminal-tasks/task-folder.js';
import { parseRewardJson, parseRewardText, pytestOutcomes } from '../../environments/terminal-tasks/verifier.js';
import { ConfigError } from '../../src/errors.js';
import { projectRoot } from '../../src/util/paths.js';
import { temporaryDirectory } from '../helpers/cli.js';

const DEMO_TASKS = join(projectRoot(), 'benchmarks', 'tasks');

/** A task folder written for the test; `files` maps relative paths to contents. */
function writeTask(root: string, name: string, files: Record<string, string>): string {
  const folder = join(root, name);
  for (const [path, text] of Object.entries({
    'instruction.md': `do ${name}\n`,
    'tests/test.sh': 'exit 0\n',
    ...files,
  })) {
    mkdirSync(join(folder, path, '..'), { recursive: true });
    writeFileSync(join(folder, path), text);
  }
  return folder;
}

describe('terminal task folders', () => {
  it('reads the shipped demo tasks: prompt, category, timeouts, workdir and the local-sandbox flag', () => {
    const tasks = loadTasks({ dataset: DEMO_TASKS });
    assert.deepEqual(
      tasks.map((task) => task.name),
      ['count-log-errors', 'create-greeting-file', 'fix-broken-script'],
    );
    const greeting = tasks.find((task) => task.name === 'create-greeting-file')!;
    assert.match(greeting.instruction, /Hello from traj!/);
    assert.equal(greeting.category, 'file-operations');
    assert.equal(greeting.difficulty, 'easy');
    assert.equal(greeting.image, 'traj-sandbox:bookworm');
    assert.equal(greeting.workdir, '/app');
    assert.equal(greeting.agent_timeout_sec, 120);
    assert.equal(greeting.verifier_timeout_sec, 30);
    assert.equal(greeting.layout, 'terminal-tasks');
    assert.equal(greeting.local_sandbox, true);
    assert.equal(greeting.has_setup, true);
    assert.equal(greeting.has_solution, true);
    assert.equal(terminalTasks.id!(greeting), 'create-greeting-file');
    assert.equal(terminalTasks.prompt(greeting), greeting.instruction);
    assert.equal(terminalTasks.agentTimeoutMs!(greeting), 120_000);
    assert.equal((terminalTasks.rewardTimeoutMs as (task: unknown) => number)(greeting), 90_000);
    assert.deepEqual(terminalTasks.sandbox instanceof Function ? terminalTasks.sandbox(greeting) : undefined, {
      image: 'traj-sandbox:bookworm',
      workdir: '/app',
    });
  });

  it('applies the run overrides: --image and the agent/verifier timeouts of every task', () => {
    const tasks = loadTasks({
      dataset: DEMO_TASKS,
      image: 'my-image:1',
      settings: { agent_timeout: 7, verifier_timeout: 9 },
    });
    for (const task of tasks) {
      assert.equal(task.image, 'my-image:1');
      assert.equal(task.agent_timeout_sec, 7);
      assert.equal(task.verifier_timeout_sec, 9);
    }
    assert.throws(() => loadTasks({ dataset: DEMO_TASKS, settings: { agent_timeout: -1 } }), /agent_timeout/);
    assert.throws(() => loadTasks({ dataset: DEMO_TASKS, settings: { verifier_timout: 3 } }), /verifier_timout/);
  });

  it('refuses the shared tasks in a local sandbox (they run root setup scripts on container paths)', (t) => {
    if (!existsSync(defaultTasksDirectory()))
      return t.skip(`skipped: ${defaultTasksDirectory()} is absent (../shared beside the checkout)`);
    assert.throws(
      () => loadTasks({ sandbox: 'local' }),
      (error: unknown) =>
        error instanceof ConfigError && error.code === 'task_needs_docker' && /--sandbox docker/.test(error.message),
    );
    assert.equal(loadTasks({ sandbox: 'docker' }).length, 14);
  });

  it('reads every task of the shared dev split with its category and timeouts from task.toml', (t) => {
    if (!existsSync(defaultTasksDirectory()))
      return t.skip(`skipped: ${defaultTasksDirectory()} is absent (../shared beside the checkout)`);
    const tasks = loadTasks({});
    assert.equal(tasks.length, 14);
    const entropy = tasks.find((task) => task.name === 'cross-entropy-method')!;
    assert.equal(entropy.category, 'software-engineering');
    assert.equal(entropy.difficulty, 'hard');
    assert.equal(entropy.agent_timeout_sec, 600);
    assert.equal(entropy.verifier_timeout_sec, 120);
    assert.ok(tasks.every((task) => task.has_solution && task.layout === 'terminal-tasks' && task.workdir === '/app'));
  });

  it('reads a Harbor task: its image built from environment/ (tag = context hash), its resources and network, its workdir from the Dockerfile', (t) => {
    const root = temporaryDirectory(t);
    const folder = writeTask(root, 'harbor-task', {
      'task.toml':
        'version = "1.0"\n[metadata]\ncategory = "debugging"\ndifficulty = "hard"\ntags = ["x"]\n[agent]\ntimeout_sec = 300.0\n[verifier]\ntimeout_sec = 50.0\nenv = { STRICT = "1" }\n[environment]\ncpus = 2\nmemory = "1G"\nallow_internet = false\nbuild_timeout_sec = 90.0\n',
      'environment/Dockerfile': 'FROM debian:bookworm\nWORKDIR /srv\nRUN apt-get install -y x\nWORKDIR /srv/project\n',
      'solution/solve.sh': 'true\n',
    });
    const built = readTaskFolder(folder);
    assert.match(built.image, /^traj-task\/harbor-task:[0-9a-f]{16}$/);
    assert.deepEqual(built.builds, [
      { tag: built.image, context: join(folder, 'environment'), task: 'harbor-task', timeoutSec: 90 },
    ]);
    assert.deepEqual(built.docker, { cpus: 2, memory: '1024m', network: 'none' });
    assert.equal(readTaskFolder(folder).image, built.image, 'the same context, the same tag');
    writeFileSync(join(folder, 'environment', 'Dockerfile'), 'FROM debian:bookworm\nRUN true\n');
    assert.notEqual(readTaskFolder(folder).image, built.image, 'an edited Dockerfile is another image');
    writeFileSync(
      join(folder, 'environment', 'Dockerfile'),
      'FROM debian:bookworm\nWORKDIR /srv\nRUN apt-get install -y x\nWORKDIR /srv/project\n',
    );
    const task = readTaskFolder(folder, { image: 'prebuilt:1' });
    assert.equal(task.layout, 'harbor');
    assert.equal(task.name, 'harbor-task');
    assert.equal(task.image, 'prebuilt:1');
    assert.equal(task.workdir, '/srv/project');
    assert.equal(task.category, 'debugging');
    assert.deepEqual(task.verifier_env, { STRICT: '1' });
    assert.equal(task.has_setup, false);
    const named = writeTask(root, 'harbor-named', {
      'task.toml': '[environment]\ndocker_image = "org/task:2"\n',
      'environment/Dockerfile': 'FROM x\n',
    });
    assert.equal(readTaskFolder(named).image, 'org/task:2', 'a prebuilt docker_image is used as given');
    assert.deepEqual(readTaskFolder(named).builds, []);
    assert.deepEqual(
      readTaskFolder(named).docker,
      { cpus: 1, memory: '2048m', network: 'bridge' },
      "Harbor's defaults",
    );
    assert.equal(readTaskFolder(named).workdir, '/app');
    assert.equal(dockerfileWorkdir(join(named, 'environment', 'Dockerfile')), undefined);
  });

  it('names the file, line and field of a broken task', (t) => {
    const root = temporaryDirectory(t);
    const syntax = writeTask(root, 'bad-syntax', { 'task.toml': '[task]\nname = "x"\ndifficulty = \n' });
    assert.throws(
      () => readTaskFolder(syntax),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.startsWith(`${join(syntax, 'task.toml')}:3:`) &&
        /TOML syntax error/.test(error.message),
    );
    const field = writeTask(root, 'bad-field', { 'task.toml': '[agent]\ntimeout_sec = "soon"\n' });
    assert.throws(
      () => readTaskFolder(field),
      (error: unknown) =>
        error instanceof ConfigError && error.message.includes(`${join(field, 'task.toml')}: agent.timeout_sec:`),
    );
    const workdir = writeTask(root, 'bad-workdir', { 'task.toml': '[environment]\nworkdir = "app"\n' });
    assert.throws(() => readTaskFolder(workdir), /environment\.workdir: expected an absolute path/);
    const missing = join(root, 'missing-instruction');
    mkdirSync(join(missing, 'tests'), { recursive: true });
    writeFileSync(join(missing, 'task.toml'), '');
    writeFileSync(join(missing, 'tests', 'test.sh'), '');
    assert.throws(
      () => readTaskFolder(missing),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message === `${join(missing, 'instruction.md')}: missing (expected the task text given to the agent)`,
    );
  });

  it('says what a task directory must hold when it holds none, and refuses duplicate task names', (t) => {
    const root = temporaryDirectory(t);
    assert.throws(
      () => loadTasks({ dataset: join(root, 'nowhere') }),
      /no such directory .*task\.toml, instruction\.md and tests\/test\.sh/,
    );
    assert.throws(() => loadTasks({ dataset: root }), /no task folders found/);
    writeTask(root, 'one', { 'task.toml': '[task]\nname = "same"\n' });
    writeTask(root, 'two', { 'task.toml': '[task]\nname = "same"\n' });
    assert.throws(
      () => loadTasks({ dataset: root }),
      (error: unknown) => error instanceof ConfigError && error.code === 'task_duplicate',
    );
  });
});

describe('verifier output', () => {
  it('reads pytest -rA summaries: passes counted, failures named without the rootdir-relative path', () => {
    const output = [
      '============================= test session starts ==============================',
      'PASSED ../tests/test_outputs.py::test_hello_file_exists',
      'FAILED ../tests/test_outputs.py::test_hello_file_content - AssertionError: wrong',
      'ERROR ../tests/test_outputs.py::test_setup[param/with/slash]',
      'FAILED ../tests/test_outputs.py::test_hello_file_content - AssertionError: wrong',
      '  PASSED not at the line start',
    ].join('\n');
    assert.deepEqual(pytestOutcomes(output), {
      passed: 1,
      failed: ['test_outputs.py::test_hello_file_content', 'test_outputs.py::test_setup[param/with/slash]'],
    });
  });

  it('takes reward.txt as a number and reward.json as {"reward": x} with named scores; anything else is an error', () => {
    assert.equal(parseRewardText('1\n'), 1);
    assert.equal(parseRewardText(' 0.25 '), 0.25);
    assert.throws(() => parseRewardText('yes'), /not a number/);
    assert.throws(() => parseRewardText(''), /not a number/);
    assert.deepEqual(parseRewardJson('{"reward": 0.5, "tests_passed": 3, "note": "x"}'), {
      score: 0.5,
      scores: { reward: 0.5, tests_passed: 3 },
    });
    assert.deepEqual(parseRewardJson('{"accuracy": 0.75}'), { score: 0.75, scores: { accuracy: 0.75 } });
    assert.deepEqual(parseRewardJson('1'), { score: 1, scores: {} });
    assert.throws(() => parseRewardJson('{"a": 1, "b": 2}'), /no numeric "reward"/);
    assert.throws(() => parseRewardJson('{oops'), /not JSON/);
  });
});
