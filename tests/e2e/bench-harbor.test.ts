import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ReferenceCheck } from '../../src/report/reference-check.js';
import type { EvalReport } from '../../src/report/report-schema.js';
import { contextTag } from '../../src/sandbox/docker-build.js';
import { connectDocker } from '../../src/sandbox/docker-engine.js';
import { projectRoot } from '../../src/util/paths.js';
import { runCli, startCli } from '../helpers/cli.js';
import { containersLabelled, dockerSuiteOptions, uniqueRunName } from '../helpers/docker.js';

/**
 * Harbor-format tasks in real containers: five tasks with their own Dockerfiles FROM the local
 * sandbox image (one with a docker-compose.yaml sidecar), built by traj, scored by their own
 * tests/test.sh through /logs/verifier/reward.txt. Each test copies the suite and stamps every
 * build context with a fresh nonce, so its images are new to the engine (and removed after).
 */
const FIXTURE = join(projectRoot(), 'examples', 'harbor-tasks');
const TASKS = ['count-lines', 'hello-file', 'offline-limits', 'online-workdir', 'sidecar-token'];

function freshSuite(t: TestContext): { cwd: string; tasks: string } {
  const cwd = mkdtempSync(join(tmpdir(), 'traj-harbor-'));
  const tasks = join(cwd, 'tasks');
  cpSync(FIXTURE, tasks, { recursive: true });
  const nonce = randomBytes(8).toString('hex');
  for (const task of readdirSync(tasks)) writeFileSync(join(tasks, task, 'environment', 'nonce'), nonce);
  t.after(async () => {
    // Tags are computed after the test changed its copy (a test may edit a Dockerfile first).
    await removeImages(readdirSync(tasks).map((task) => contextTag(task, join(tasks, task, 'environment'))));
    rmSync(cwd, { recursive: true, force: true });
  });
  return { cwd, tasks };
}

/** The images this test built (their contexts held its nonce: no other test has them). */
async function removeImages(tags: string[]): Promise<void> {
  const docker = await connectDocker();
  for (const tag of tags)
    await docker
      .getImage(tag)
      .remove({ force: true })
      .catch(() => {});
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

async function imageIds(tags: string[]): Promise<string[]> {
  const docker = await connectDocker();
  return Promise.all(tags.map(async (tag) => (await docker.getImage(tag).inspect()).Id));
}

async function networksOf(run: string): Promise<number> {
  const docker = await connectDocker();
  return (await docker.listNetworks({ filters: { label: [`traj.run=${run}`] } })).length;
}

describe('traj bench on Harbor-format tasks (Docker)', await dockerSuiteOptions(), () => {
  it('builds each task image once: the oracle scores 1.0 everywhere, the no-op 0.0, and the rerun builds nothing', async (t) => {
    const { cwd, tasks } = freshSuite(t);
    const bench = (agent: string, run: string) =>
      runCli(['bench', 'terminal-tasks', '--tasks', tasks, '--agent', agent, '--run', run, '--concurrency', '4'], {
        cwd,
      });
    const oracleRun = uniqueRunName('harbor-oracle');
    const oracle = await bench('oracle', oracleRun);
    assert.equal(oracle.code, 0, `${oracle.stdout}\n${oracle.stderr}`);
    assert.match(oracle.stderr, /task images: 5 built, 0 already built/);
    const built = [...oracle.stderr.matchAll(/building (traj-task\/\S+) for task '([^']+)'/g)];
    assert.deepEqual(built.map((match) => match[2]).sort(), TASKS);
    const report = readJson<EvalReport>(join(cwd, 'datasets', oracleRun, 'report.json'));
    assert.deepEqual(
      report.items.map((item) => [item.key, item.reward]).sort(),
      TASKS.map((task) => [task, 1]),
    );
    const before = await imageIds(built.map((match) => match[1]!));

    const noopRun = uniqueRunName('harbor-noop');
    const noop = await bench('noop', noopRun);
    assert.equal(noop.code, 0, `${noop.stdout}\n${noop.stderr}`);
    assert.match(noop.stderr, /task images: 0 built, 5 already built/);
    assert.doesNotMatch(noop.stderr, /building traj-task/);
    const check = readJson<ReferenceCheck>(join(cwd, 'datasets', noopRun, 'validation.json'));
    assert.deepEqual([check.agent, check.checked, check.broken], ['noop', 5, []]);
    assert.deepEqual(await imageIds(built.map((match) => match[1]!)), before, 'the same images, not rebuilt');
    for (const run of [oracleRun, noopRun]) {
      assert.deepEqual(await containersLabelled({ 'traj.run': run }), [], `no container of ${run} is left`);
      assert.equal(await networksOf(run), 0, `no sidecar network of ${run} is left`);
    }
  });

  it('a Dockerfile that fails to build is exit 3 naming the task, with the end of the build log', async (t) => {
    const { cwd, tasks } = freshSuite(t);
    writeFileSync(
      join(tasks, 'count-lines', 'environment', 'Dockerfile'),
      'FROM traj-sandbox:bookworm\nRUN echo "compiler says: boom-7" && exit 7\n',
    );
    const run = uniqueRunName('harbor-broken');
    const result = await runCli(['bench', 'terminal-tasks', '--tasks', tasks, '--agent', 'oracle', '--run', run], {
      cwd,
    });
    assert.equal(result.code, 3, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stderr, /task 'count-lines'.*Dockerfile: the image build failed/);
    assert.match(result.stderr, /compiler says: boom-7/);
    assert.doesNotMatch(result.stderr, /task 'hello-file':/, 'only the broken task is named');
  });

  it('offline, a FROM image that is not on the engine fails the build naming it (exit 3), never a pull', async (t) => {
    const { cwd, tasks } = freshSuite(t);
    writeFileSync(
      join(tasks, 'hello-file', 'environment', 'Dockerfile'),
      'FROM traj-absent-base:never AS base\nFROM base\nRUN true\n',
    );
    const run = uniqueRunName('harbor-from');
    const result = await runCli(['bench', 'terminal-tasks', '--tasks', tasks, '--agent', 'oracle', '--run', run], {
      cwd,
    });
    assert.equal(result.code, 3, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stderr, /task 'hello-file'.*FROM traj-absent-base:never is not on this Docker engine/);
  });

  it('a SIGKILL mid-run leaves no container, sidecar or network once the run starts again', async (t) => {
    const { cwd, tasks } = freshSuite(t);
    // The sidecar task's solution waits long enough to be killed with its containers up.
    writeFileSync(join(tasks, 'sidecar-token', 'solution', 'solve.sh'), '#!/bin/bash\nsleep 600\n');
    const run = uniqueRunName('harbor-kill');
    const args = ['bench', 'terminal-tasks', '--tasks', tasks, '--agent', 'oracle', '--run', run, '--concurrency', '2'];
    const first = startCli(args, { cwd });
    let leaked: string[] = [];
    for (let waited = 0; waited < 240; waited++) {
      leaked = await containersLabelled({ 'traj.run': run, 'traj.service': 'db' });
      if (leaked.length > 0) break;
      await sleep(500);
    }
    assert.ok(leaked.length > 0, 'the sidecar started');
    first.child.kill('SIGKILL');
    await first.done;
    const left = await containersLabelled({ 'traj.run': run });
    assert.ok(left.length >= 2, 'the killed run left its containers (main and sidecar)');
    assert.ok((await networksOf(run)) >= 1, 'and its network');

    const second = startCli(args, { cwd });
    t.after(() => {
      second.child.kill('SIGKILL');
    });
    let printed = '';
    second.child.stderr!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    // Once the second invocation dispatches (its start line), the first one's leftovers are gone.
    for (let waited = 0; waited < 240 && !/rollouts in flight/.test(printed); waited++) await sleep(500);
    assert.match(printed, /rollouts in flight/);
    const remaining = await containersLabelled({ 'traj.run': run });
    assert.deepEqual(
      remaining.filter((id) => left.includes(id)),
      [],
      'every container of the killed invocation was removed',
    );
    second.child.kill('SIGINT');
    await second.done;
    await pruneAfterInterrupt(run);
    assert.deepEqual(await containersLabelled({ 'traj.run': run }), []);
    assert.equal(await networksOf(run), 0);
  });
});

/** An interrupted run removes its own containers on the way out; this only waits for the engine to catch up. */
async function pruneAfterInterrupt(run: string): Promise<void> {
  for (let waited = 0; waited < 60; waited++) {
    if ((await containersLabelled({ 'traj.run': run })).length === 0 && (await networksOf(run)) === 0) return;
    await sleep(500);
  }
}
