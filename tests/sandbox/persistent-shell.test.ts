import { describe, it } from 'node:test';
import { createDockerSandbox } from '../../src/sandbox/docker.js';
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
}
