import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import pLimit from 'p-limit';
import { ConfigError, SandboxError } from '../../src/errors.js';
import { createDockerSandbox } from '../../src/sandbox/docker.js';
import { parseDockerSandboxConfig } from '../../src/sandbox/docker-config.js';
import { connectDocker } from '../../src/sandbox/docker-engine.js';
import { pruneContainers } from '../../src/sandbox/docker-prune.js';
import { disposeAllSandboxes, liveSandboxCount } from '../../src/sandbox/live-sandboxes.js';
import { containersLabelled, dockerSuiteOptions, uniqueRunName } from '../helpers/docker.js';

// Before any test runs: one of them points DOCKER_HOST elsewhere for a moment.
const options = await dockerSuiteOptions();

describe('docker sandbox settings and engine errors (no engine needed)', () => {
  it('rejects a bad isolation setting naming the field and what was expected', async () => {
    assert.throws(
      () => parseDockerSandboxConfig({ memory: 'lots', pids_limit: 3 }),
      (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /sandbox\.docker: memory: expected a size like '2g'/);
        assert.match(error.message, /sandbox\.docker: pids_limit: .*16/);
        return true;
      },
    );
    await assert.rejects(createDockerSandbox({ kind: 'docker', docker: { network_mode: 'host' } }), /network_mode/);
    const defaults = parseDockerSandboxConfig(undefined);
    assert.equal(defaults.network, 'none');
    assert.equal(defaults.memory, '2g');
    assert.deepEqual(defaults.cap_drop, ['ALL']);
  });

  it('says where it looked when no engine answers', async () => {
    const saved = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = 'unix:///tmp/traj-no-such-docker.sock';
    try {
      await assert.rejects(createDockerSandbox({ kind: 'docker' }), (error: Error) => {
        assert.ok(error instanceof SandboxError);
        assert.equal(error.code, 'engine_unreachable');
        assert.match(error.message, /DOCKER_HOST=unix:\/\/\/tmp\/traj-no-such-docker\.sock/);
        assert.match(error.message, /dockerd/);
        return true;
      });
    } finally {
      if (saved === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved;
    }
  });
});

describe('docker sandbox lifecycle', options, () => {
  it('names the image and the build script when the image is missing', async () => {
    await assert.rejects(createDockerSandbox({ kind: 'docker', image: 'traj-sandbox:no-such-tag' }), (error: Error) => {
      assert.ok(error instanceof SandboxError);
      assert.equal(error.code, 'image_missing');
      assert.match(error.message, /traj-sandbox:no-such-tag/);
      assert.match(error.message, /scripts\/build-sandbox-image\.sh/);
      return true;
    });
  });

  it('dispose removes the container, twice is fine, and so is a container removed behind its back', async () => {
    const run = uniqueRunName('dispose');
    const sandbox = await createDockerSandbox({ kind: 'docker', run, key: 'one' });
    assert.equal((await containersLabelled({ 'traj.run': run })).length, 1);
    await sandbox.dispose();
    assert.deepEqual(await containersLabelled({ 'traj.run': run }), []);
    await sandbox.dispose();

    const other = await createDockerSandbox({ kind: 'docker', run, key: 'two' });
    const [id] = await containersLabelled({ 'traj.run': run });
    await (await connectDocker()).getContainer(id!).remove({ force: true });
    await other.dispose();
    await assert.rejects(other.exec('true'), (error: Error) => error instanceof SandboxError && error.code === 'disposed');
  });

  it('prune removes a leaked container whose process died and keeps a live one', async () => {
    const run = uniqueRunName('prune');
    const live = await createDockerSandbox({ kind: 'docker', run, key: 'live' });
    try {
      const leaked = await createLeakedContainer(run);
      assert.equal((await containersLabelled({ 'traj.run': run })).length, 2);
      assert.equal(await pruneContainers({ run }), 1);
      assert.deepEqual(await containersLabelled({ 'traj.run': run, 'traj.key': 'leaked' }), []);
      assert.equal((await containersLabelled({ 'traj.run': run, 'traj.key': 'live' })).length, 1);
      assert.equal((await live.exec('echo alive')).stdout, 'alive\n');
      assert.ok(leaked.length > 0);
      assert.equal(await pruneContainers({ run }), 0, 'a second prune finds nothing');
    } finally {
      await live.dispose();
    }
  });

  it('disposeAllSandboxes removes every container this process still holds', async () => {
    const run = uniqueRunName('dispose-all');
    const before = liveSandboxCount();
    await Promise.all([1, 2, 3].map((index) => createDockerSandbox({ kind: 'docker', run, key: `k${index}` })));
    assert.equal(liveSandboxCount(), before + 3);
    assert.deepEqual(await disposeAllSandboxes(), []);
    assert.deepEqual(await containersLabelled({ 'traj.run': run }), []);
  });

  it('creates and disposes 20 sandboxes at concurrency 8 and leaves no container behind', async () => {
    const run = uniqueRunName('twenty');
    const limit = pLimit(8);
    const outputs = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        limit(async () => {
          const sandbox = await createDockerSandbox({ kind: 'docker', run, key: `row-${index}` });
          try {
            return (await sandbox.exec(`echo ${index}`)).stdout.trim();
          } finally {
            await sandbox.dispose();
          }
        }),
      ),
    );
    assert.deepEqual(outputs, Array.from({ length: 20 }, (_, index) => String(index)));
    assert.deepEqual(await containersLabelled({ 'traj.run': run }), []);
  });
});

/**
 * A container left behind by a traj process that was SIGKILLed: another node process creates
 * a sandbox, prints its id, and is killed before it can dispose.
 */
async function createLeakedContainer(run: string): Promise<string> {
  const module = new URL('../../src/sandbox/docker.js', import.meta.url).href;
  const script = `const { createDockerSandbox } = await import(${JSON.stringify(module)});
const sandbox = await createDockerSandbox({ kind: 'docker', run: ${JSON.stringify(run)}, key: 'leaked' });
process.stdout.write(sandbox.id);
process.kill(process.pid, 'SIGKILL');`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(child.signal, 'SIGKILL', `the leaking process should die by SIGKILL: ${child.stderr}`);
  return child.stdout;
}
