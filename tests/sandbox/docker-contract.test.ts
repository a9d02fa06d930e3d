import { describe, it } from 'node:test';
import { createDockerSandbox } from '../../src/sandbox/docker.js';
import { dockerSuiteOptions, uniqueRunName } from '../helpers/docker.js';
import { secretProbe } from '../helpers/secret-probe.js';
import { runIsolationContract, runSandboxContract, type IsolationSettings } from './contract.js';

const options = await dockerSuiteOptions();
const run = uniqueRunName('contract');

if (options.skip) {
  describe('sandbox contract: docker', options, () => {
    it('runs against a real engine', () => {});
  });
} else {
  runSandboxContract('docker', () => createDockerSandbox({ kind: 'docker', run, key: 'contract' }));
  const isolated = (settings: IsolationSettings = {}) =>
    createDockerSandbox({
      kind: 'docker',
      run,
      key: 'isolation',
      docker: {
        network: settings.network ? 'bridge' : 'none',
        ...(settings.pidsLimit ? { pids_limit: settings.pidsLimit } : {}),
      },
    });
  // A container per rollout: network none, a pids limit, an environment of its own.
  runIsolationContract(
    'docker',
    isolated,
    { noSecretInAnyEnviron: true, noSurvivors: true, networkOff: true, processLimit: true },
    secretProbe('docker'),
  );
}
