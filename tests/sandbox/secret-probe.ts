/**
 * Run one command in a fresh sandbox from a separate process, so the secrets the test planted
 * are in this process's *initial* environment, the one /proc/PID/environ shows (setting
 * process.env later does not change it). Usage: node secret-probe.js MODE COMMAND; prints stdout.
 */
import { createSandbox } from '../../src/sandbox/index.js';
import { closeSpawner } from '../../src/sandbox/spawner.js';

const [mode, command] = process.argv.slice(2);
const sandbox = await createSandbox(
  mode === 'docker'
    ? { kind: 'docker', run: `traj-test-secret-probe-${process.pid}`, key: 'probe' }
    : { kind: 'local', local: { isolation: mode === 'local+bwrap' ? 'bwrap' : 'none' } },
);
try {
  const result = await sandbox.exec(command ?? 'true', { timeoutMs: 60_000 });
  process.stdout.write(result.stdout);
} finally {
  await sandbox.dispose();
  await closeSpawner();
}
