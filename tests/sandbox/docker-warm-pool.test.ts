import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Sandbox } from '../../src/sandbox/index.js';
import { createDockerSandbox } from '../../src/sandbox/docker.js';
import { connectDocker } from '../../src/sandbox/docker-engine.js';
import { closeWarmPools } from '../../src/sandbox/docker-warm-pool.js';
import { containersLabelled, dockerSuiteOptions, uniqueRunName } from '../helpers/docker.js';

const options = await dockerSuiteOptions();

/** A sandbox of `run` from the warm pool of `size` spares. */
function warmSandbox(run: string, size: number): Promise<Sandbox> {
  return createDockerSandbox({ kind: 'docker', run, warm: size });
}

/** The container id behind a sandbox: its id is `docker-` and the container id's first 12 characters. */
async function containerIdOf(sandbox: Sandbox, run: string): Promise<string> {
  const ids = await containersLabelled({ 'traj.run': run });
  const id = ids.find((candidate) => `docker-${candidate.slice(0, 12)}` === sandbox.id);
  assert.ok(id, `no container of run ${run} behind ${sandbox.id}`);
  return id;
}

/** Poll (generously: a busy engine starts containers slowly) until `check` holds. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resume) => setTimeout(resume, 200));
  }
  assert.fail(`never happened: ${what}`);
}

/** The tokens (`traj-exec:…`) of the standby processes running in a container, seen from the engine. */
async function standbyTokens(containerId: string): Promise<string[]> {
  const docker = await connectDocker();
  const info = await docker.getContainer(containerId).inspect();
  const tokens: string[] = [];
  for (const execId of info.ExecIDs ?? []) {
    const exec = await docker
      .getExec(execId)
      .inspect()
      .catch(() => undefined);
    const token = exec?.ProcessConfig.arguments.find((argument) => argument.startsWith('traj-exec:'));
    if (exec?.Running && token) tokens.push(token);
  }
  return tokens;
}

describe('docker warm pool', options, () => {
  after(async () => {
    await closeWarmPools();
  });

  it('hands every rollout a fresh container and never hands out a used one', async () => {
    const run = uniqueRunName('warm-fresh');
    const seen = new Set<string>();
    for (let round = 1; round <= 4; round++) {
      const sandbox = await warmSandbox(run, 2);
      const id = await containerIdOf(sandbox, run);
      assert.ok(!seen.has(id), `round ${round} got a container an earlier rollout used`);
      seen.add(id);
      const earlier = await sandbox.exec('ls /app/used-by-* 2>/dev/null | wc -l');
      assert.equal(earlier.stdout.trim(), '0', `round ${round} sees an earlier rollout's file`);
      assert.equal((await sandbox.exec(`touch /app/used-by-${round}`)).exitCode, 0);
      await sandbox.dispose();
      assert.deepEqual(
        (await containersLabelled({ 'traj.run': run })).filter((candidate) => candidate === id),
        [],
        'a used container outlives its rollout',
      );
    }
    // Rollouts at once each get their own.
    const together = await Promise.all([1, 2, 3].map(() => warmSandbox(run, 2)));
    const ids = await Promise.all(together.map((sandbox) => containerIdOf(sandbox, run)));
    assert.equal(new Set(ids).size, 3);
    for (const id of ids) assert.ok(!seen.has(id), 'a rollout at once got a used container');
    await Promise.all(together.map((sandbox) => sandbox.dispose()));
    // The spares carry the run's labels (so the prune finds them) and go with the pool.
    assert.ok((await containersLabelled({ 'traj.run': run })).length > 0, 'the pool kept no spare');
    await closeWarmPools();
    assert.deepEqual(await containersLabelled({ 'traj.run': run }), []);
  });

  it("runs a spare's first command in the process started with it, before the rollout asked", async () => {
    const run = uniqueRunName('warm-standby');
    const first = await warmSandbox(run, 1);
    try {
      const firstId = await containerIdOf(first, run);
      // The first take found no spare and started one: wait until it runs its standby.
      const [spareId, token] = await eventually('a spare with its standby running', async () => {
        const spare = (await containersLabelled({ 'traj.run': run })).find((id) => id !== firstId);
        const tokens = spare ? await standbyTokens(spare) : [];
        return spare && tokens.length === 1 ? ([spare, tokens[0]!] as const) : undefined;
      });
      const second = await warmSandbox(run, 1);
      try {
        assert.equal(second.id, `docker-${spareId.slice(0, 12)}`, 'the rollout did not get the spare');
        const parent = await second.exec(`tr '\\0' ' ' < /proc/$PPID/cmdline`);
        assert.equal(parent.exitCode, 0, parent.stderr);
        assert.ok(parent.stdout.trim().endsWith(token), `the command ran under ${parent.stdout}, not ${token}`);
      } finally {
        await second.dispose();
      }
    } finally {
      await first.dispose();
      await closeWarmPools();
    }
    assert.deepEqual(await containersLabelled({ 'traj.run': run }), []);
  });
});
