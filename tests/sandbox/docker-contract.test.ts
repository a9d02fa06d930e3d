import { describe, it } from 'node:test';
import { createDockerSandbox } from '../../src/sandbox/docker.js';
import { dockerSuiteOptions, uniqueRunName } from '../helpers/docker.js';
import { runSandboxContract } from './contract.js';

const options = await dockerSuiteOptions();
const run = uniqueRunName('contract');

if (options.skip) {
  describe('sandbox contract: docker', options, () => {
    it('runs against a real engine', () => {});
  });
} else {
  runSandboxContract('docker', () => createDockerSandbox({ kind: 'docker', run, key: 'contract' }));
}
