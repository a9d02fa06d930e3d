import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import pLimit from 'p-limit';
import { ConfigError, SandboxError } from '../../src/errors.js';
import { createDockerSandbox } from '../../src/sandbox/docker.js';
import { parseDockerSandboxConfig } from '../../src/sandbox/docker-config.js';
import { connectDocker, isTransientEngineError, withEngineRetry } from '../../src/sandbox/docker-engine.js';
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

  it('retries dropped connections and engine 5xx, and not answers such as 404', async () => {
    const engineError = (message: string, fields: Record<string, unknown>) => Object.assign(new Error(message), fields);
    assert.equal(isTransientEngineError(engineError('socket hang up', { code: 'ECONNRESET' })), true);
    assert.equal(
      isTransientEngineError(
        engineError('(HTTP code 500) server error - context deadline exceeded', { statusCode: 500 }),
      ),
      true,
    );
    assert.equal(
      isTransientEngineError(
        engineError('(HTTP code 404) no such container - No such container: abc', { statusCode: 404 }),
      ),
      false,
    );
    assert.equal(
      isTransientEngineError(
        engineError('(HTTP code 500) server error - Container abc is not running', { statusCode: 500 }),
      ),
      false,
    );

    let calls = 0;
    const value = await withEngineRetry(async () => {
      calls++;
      if (calls < 3) throw engineError('socket hang up', { code: 'ECONNRESET' });
      return 'answered';
    });
    assert.equal(value, 'answered');
    assert.equal(calls, 3);

    calls = 0;
    const missing = withEngineRetry(async () => {
      calls++;
      throw engineError('(HTTP code 404) no such image', { statusCode: 404 });
    });
    await assert.rejects(missing, /no such image/);
    assert.equal(calls, 1);
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
  it('talks to the engine named by DOCKER_HOST', async (t) => {
    const current = process.env.DOCKER_HOST;
    const socket =
      current === undefined
        ? '/var/run/docker.sock'
        : current.startsWith('unix://')
          ? current.slice('unix://'.length)
          : undefined;
    if (!socket || !existsSync(socket)) return t.skip('the engine is not on a local unix socket here');
    // A TCP relay to the engine's socket: only DOCKER_HOST can lead traj to it.
    let connections = 0;
    const relay = createServer((client) => {
      connections++;
      const engine = connect(socket);
      client.pipe(engine).pipe(client);
      client.on('error', () => engine.destroy());
      engine.on('error', () => client.destroy());
    });
    await new Promise<void>((listening) => relay.listen(0, '127.0.0.1', listening));
    process.env.DOCKER_HOST = `tcp://127.0.0.1:${(relay.address() as AddressInfo).port}`;
    try {
      const sandbox = await createDockerSandbox({ kind: 'docker', run: uniqueRunName('docker-host'), key: 'relay' });
      assert.equal((await sandbox.exec('echo through-the-relay')).stdout, 'through-the-relay\n');
      await sandbox.dispose();
      assert.ok(connections > 0, 'no request went through DOCKER_HOST');
    } finally {
      if (current === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = current;
      relay.close();
    }
  });

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
    // A command still running when the rollout ends is cut off with a typed error.
    const running = sandbox.exec('sleep 30', { timeoutMs: 60_000 }).then(
      (result) => result,
      (error: unknown) => error,
    );
    await new Promise((resume) => setTimeout(resume, 300));
    await sandbox.dispose();
    const outcome = await running;
    assert.ok(
      outcome instanceof SandboxError && outcome.code === 'disposed',
      `expected a 'disposed' SandboxError, got ${JSON.stringify(outcome)}`,
    );
    assert.deepEqual(await containersLabelled({ 'traj.run': run }), []);
    await sandbox.dispose();

    const other = await createDockerSandbox({ kind: 'docker', run, key: 'two' });
    const [id] = await containersLabelled({ 'traj.run': run });
    await (await connectDocker()).getContainer(id!).remove({ force: true });
    await other.dispose();
    await assert.rejects(
      other.exec('true'),
      (error: Error) => error instanceof SandboxError && error.code === 'disposed',
    );
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
    assert.deepEqual(
      outputs,
      Array.from({ length: 20 }, (_, index) => String(index)),
    );
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
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(child.signal, 'SIGKILL', `the leaking process should die by SIGKILL: ${child.stderr}`);
  return child.stdout;
}
