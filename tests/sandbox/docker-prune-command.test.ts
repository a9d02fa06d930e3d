import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createDockerSandbox } from '../../src/sandbox/docker.js';
import { buildRoot } from '../../src/util/paths.js';
import { containersLabelled, dockerSuiteOptions, uniqueRunName } from '../helpers/docker.js';

const options = await dockerSuiteOptions();
const CLI = join(buildRoot(), 'src', 'cli', 'main.js');

function traj(args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
}

describe('traj sandbox prune', options, () => {
  it('removes the containers of a SIGKILLed traj process and keeps those of a live one', async () => {
    const run = uniqueRunName('cli-prune');
    const live = await createDockerSandbox({ kind: 'docker', run, key: 'live' });
    try {
      // A traj process that holds a sandbox and is SIGKILLed: no finally, no signal handler runs.
      const module = new URL('../../src/sandbox/docker.js', import.meta.url).href;
      const holder = spawn(process.execPath, [
        '--input-type=module',
        '-e',
        `const { createDockerSandbox } = await import(${JSON.stringify(module)});
await createDockerSandbox({ kind: 'docker', run: ${JSON.stringify(run)}, key: 'leaked' });
process.stdout.write('ready\\n');
setInterval(() => {}, 60_000);`,
      ]);
      const [ready] = (await once(holder.stdout, 'data')) as [Buffer];
      assert.equal(ready.toString(), 'ready\n');
      assert.equal((await containersLabelled({ 'traj.run': run })).length, 2);

      const whileAlive = traj(['sandbox', 'prune', '--run', run]);
      assert.equal(whileAlive.status, 0, whileAlive.stderr);
      assert.equal(whileAlive.stdout, `removed 0 containers of run '${run}'\n`);

      holder.kill('SIGKILL');
      await once(holder, 'exit');
      const afterDeath = traj(['sandbox', 'prune', '--run', run]);
      assert.equal(afterDeath.status, 0, afterDeath.stderr);
      assert.equal(afterDeath.stdout, `removed 1 container of run '${run}'\n`);
      assert.deepEqual(await containersLabelled({ 'traj.run': run, 'traj.key': 'leaked' }), []);
      assert.equal((await containersLabelled({ 'traj.run': run, 'traj.key': 'live' })).length, 1);

      const all = traj(['sandbox', 'prune', '--run', run, '--all']);
      assert.equal(all.stdout, `removed 1 container of run '${run}'\n`);
      assert.deepEqual(await containersLabelled({ 'traj.run': run }), []);
    } finally {
      await live.dispose();
    }
  });

  it('rejects an unknown action with usage exit code 2', () => {
    const result = traj(['sandbox', 'purge']);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /expected one of: prune, got 'purge'/);
  });
});
