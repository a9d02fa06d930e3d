import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { callTool, reply, startScriptedServer } from '../../src/testing/index.js';
import { runCli, startCli, temporaryDirectory } from '../helpers/cli.js';

const sandboxFolders = (directory: string) => readdirSync(directory).filter((name) => name.startsWith('traj-sbx-'));

async function until(predicate: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !predicate(); waited += 50) {
    if (waited > 30_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('ten SIGKILLs of a batch leave no sandbox folder after the next run', async (t) => {
  const directory = temporaryDirectory(t);
  // A temp dir of its own: other tests' (and engineers') sandbox folders are not this test's business.
  const temp = join(directory, 'tmp');
  mkdirSync(temp);
  let hang = true;
  // Each rollout runs a long command, so its sandbox exists when traj is killed; the last run finishes.
  const server = await startScriptedServer((_request, context) =>
    context.turn === 0
      ? callTool('terminal', { command: hang ? 'setsid sleep 300 & sleep 300' : 'echo done' })
      : reply('finished'),
  );
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeFileSync(
    dataset,
    `${Array.from({ length: 4 }, (_, index) => JSON.stringify({ prompt: `prompt ${index}` })).join('\n')}\n`,
  );
  const args = [
    'batch',
    '--dataset',
    dataset,
    '--run',
    'killed',
    '--base-url',
    server.url,
    '--model',
    'scripted',
    '--api-key-env',
    'NO_KEY',
    '--toolsets',
    'terminal',
    '--workers',
    '1',
    '--concurrency',
    '4',
    '--max-attempts',
    '100',
  ];
  const env = { TMPDIR: temp };

  // Each run prunes the folders of the run killed before it; the last kill's stay until the next run.
  let leftBehind: string[] = [];
  for (let kill = 0; kill < 10; kill++) {
    const { child, done } = startCli(args, { cwd: directory, env });
    let exited = false;
    void done.then(() => (exited = true));
    const owned = () => sandboxFolders(temp).filter((name) => name.startsWith(`traj-sbx-${child.pid}.`));
    await until(() => owned().length > 0 || exited, 'a sandbox folder');
    if (exited) assert.fail(`traj exited before a sandbox was made: ${(await done).stderr}`);
    for (const name of leftBehind)
      assert.equal(existsSync(join(temp, name)), false, `${name} of the killed run was not pruned`);
    child.kill('SIGKILL');
    const { stderr } = await done;
    leftBehind = sandboxFolders(temp);
    assert.ok(leftBehind.length > 0, `a SIGKILL leaves its sandbox folders behind (kill ${kill}): ${stderr}`);
  }

  hang = false;
  const finished = await runCli(args, { cwd: directory, env });
  assert.equal(finished.code, 0, finished.stderr);
  assert.deepEqual(sandboxFolders(temp), []);
  assert.ok(existsSync(join(directory, 'datasets', 'killed', 'trajectories.jsonl')));
});
