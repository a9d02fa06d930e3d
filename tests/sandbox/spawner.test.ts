import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { closeSpawner } from '../../src/sandbox/spawner.js';
import { buildRoot } from '../../src/util/paths.js';

test('closing the spawn host is awaited to the end (an idle, unref’d host must not let the process exit mid-await)', async () => {
  // Plain processes: a bubblewrap sandbox's namespace dies with the host that started it.
  const sandbox = await createLocalSandbox({ kind: 'local', local: { isolation: 'none' } });
  const result = await sandbox.exec('echo from the host');
  assert.equal(result.stdout, 'from the host\n');
  await closeSpawner();
  // Reaching this line is the assertion's point: before the fix the process exited inside closeSpawner().
  const again = await sandbox.exec('echo a new host starts on demand');
  assert.equal(again.stdout, 'a new host starts on demand\n');
  await sandbox.dispose();
  await closeSpawner();
});

test('when traj is SIGKILLed, the spawn host kills the commands it started', async (t) => {
  const marker = `traj-orphan-check-${process.pid}-${Date.now()}`;
  const script = `
    import { createLocalSandbox } from ${JSON.stringify(join(buildRoot(), 'src', 'sandbox', 'index.js'))};
    const sandbox = await createLocalSandbox({ kind: 'local' });
    sandbox.exec('exec -a ${marker} sleep 300', { timeoutMs: 600000 });
    setTimeout(() => process.stdout.write('running\\n'), 500);
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => child.kill('SIGKILL'));
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  const running = () =>
    execFileSync('ps', ['-eo', 'args'])
      .toString()
      .split('\n')
      .filter((line) => line.startsWith(marker)).length;
  assert.equal(running(), 1, 'the command runs while traj lives');
  child.kill('SIGKILL');
  for (let tries = 0; tries < 50 && running() > 0; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(running(), 0, 'the command died with traj');
});
