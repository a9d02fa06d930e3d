import { describe, it } from 'node:test';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { bwrapSuiteOptions } from '../helpers/bwrap.js';
import { secretProbe } from '../helpers/secret-probe.js';
import { runIsolationContract, runSandboxContract, type IsolationSettings } from './contract.js';

const bwrap = await bwrapSuiteOptions();
const withBwrap = (settings: IsolationSettings = {}) =>
  createLocalSandbox({
    kind: 'local',
    local: {
      isolation: 'bwrap',
      network: settings.network ?? false,
      ...(settings.pidsLimit ? { pids_limit: settings.pidsLimit } : {}),
    },
  });
const plain = () => createLocalSandbox({ kind: 'local', local: { isolation: 'none' } });

if (bwrap.skip) {
  describe('sandbox contract: local+bwrap', bwrap, () => {
    it('runs under bubblewrap', () => {});
  });
} else {
  runSandboxContract('local+bwrap', () => withBwrap());
  // bubblewrap: its own PID, mount and network namespaces, a pids cgroup, a scrubbed environment.
  runIsolationContract(
    'local+bwrap',
    withBwrap,
    { noSecretInAnyEnviron: true, noSurvivors: true, networkOff: true, processLimit: true },
    secretProbe('local+bwrap'),
  );
}

runSandboxContract('local+none', plain);
// Plain processes: only the file tools' confinement and the hard-link refusal hold.
runIsolationContract(
  'local+none',
  plain,
  { noSecretInAnyEnviron: false, noSurvivors: false, networkOff: false, processLimit: false },
  secretProbe('local+none'),
);
