import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createDockerSandbox } from '../../src/sandbox/docker.js';
import { connectDocker } from '../../src/sandbox/docker-engine.js';
import { SandboxError } from '../../src/errors.js';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { dockerSuiteOptions, uniqueRunName } from '../helpers/docker.js';
import { runShellContract } from './shell-contract.js';

runShellContract('local, isolation bwrap', () => createLocalSandbox({ kind: 'local', local: { isolation: 'bwrap' } }));
runShellContract('local, isolation none', () => createLocalSandbox({ kind: 'local', local: { isolation: 'none' } }));

const options = await dockerSuiteOptions();
if (options.skip) {
  describe('persistent shell: docker', options, () => {
    it('runs against a real engine', () => {});
  });
} else {
  const run = uniqueRunName('shell');
  runShellContract('docker', () => createDockerSandbox({ kind: 'docker', run, key: 'shell' }));

  it('persistent shell: docker: a container removed behind its back is a retryable SandboxError, not a result', async () => {
    const sandbox = await createDockerSandbox({ kind: 'docker', run, key: 'gone' });
    try {
      assert.equal((await sandbox.execInShell('echo up')).stdout, 'up\n');
      const docker = await connectDocker();
      await docker.getContainer(sandbox.id.replace(/^docker-/, '')).remove({ force: true });
      // The shell that was running ends with the container; starting a new one then fails.
      await sandbox.execInShell('true').catch(() => undefined);
      await assert.rejects(sandbox.execInShell('true'), (error: unknown) => {
        assert.ok(error instanceof SandboxError, String(error));
        assert.equal(error.retryable, true);
        assert.match(error.message, /shell ended: .*no such container|no running container/i);
        return true;
      });
    } finally {
      await sandbox.dispose().catch(() => undefined);
    }
  });
}
