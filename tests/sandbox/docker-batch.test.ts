import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createEchoScript, startScriptedServer } from '../../src/testing/index.js';
import { buildRoot } from '../../src/util/paths.js';
import { containersLabelled, dockerSuiteOptions, uniqueRunName } from '../helpers/docker.js';

const options = await dockerSuiteOptions();
const CLI = join(buildRoot(), 'src', 'cli', 'main.js');
const PROMPTS = 20;

describe('traj batch --sandbox docker', options, () => {
  it('leaves no container of the run behind, also after a SIGKILL mid-run and a rerun', async () => {
    // A slow model: each rollout holds its container across the model call after its tool call.
    const server = await startScriptedServer(createEchoScript({ toolTurns: 1 }), { latencyMs: 300, record: false });
    const directory = await mkdtemp(join(tmpdir(), 'traj-docker-batch-'));
    const run = uniqueRunName('batch');
    try {
      const dataset = join(directory, 'prompts.jsonl');
      const rows = Array.from({ length: PROMPTS }, (_, index) =>
        JSON.stringify({ id: `p${index}`, prompt: `prompt number ${index}` }),
      );
      await writeFile(dataset, `${rows.join('\n')}\n`);
      const args = [
        CLI,
        'batch',
        '--dataset',
        dataset,
        '--run',
        run,
        '--toolsets',
        'terminal',
        '--sandbox',
        'docker',
        '--concurrency',
        '8',
        '--base-url',
        server.url,
        '--model',
        'traj-scripted',
        '--checkpoints',
        join(directory, 'checkpoints'),
        '--out',
        join(directory, 'out'),
      ];
      const env = { ...process.env, OPENAI_API_KEY: 'sk-traj-test' };

      const killed = spawn(process.execPath, args, { env, stdio: 'ignore' });
      const leaked = await waitForContainers(run);
      killed.kill('SIGKILL');
      await once(killed, 'exit');
      assert.ok(leaked > 0, 'the SIGKILLed run should have had containers in use');
      assert.ok((await containersLabelled({ 'traj.run': run })).length > 0, 'a SIGKILL leaves the containers behind');

      const rerun = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      rerun.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      rerun.stdout.resume();
      const [code] = (await once(rerun, 'exit')) as [number | null];
      assert.equal(code, 0, stderr);
      assert.deepEqual(
        await containersLabelled({ 'traj.run': run }),
        [],
        'containers of the run are left after the rerun',
      );
      const records = (await readFile(join(directory, 'out', 'trajectories.jsonl'), 'utf8')).trim().split('\n');
      assert.equal(records.length, PROMPTS);
    } finally {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    }
  });
});

/** Poll until the run has containers (it has started rollouts); returns how many. */
async function waitForContainers(run: string): Promise<number> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const count = (await containersLabelled({ 'traj.run': run })).length;
    if (count > 0) return count;
    await new Promise((resume) => setTimeout(resume, 200));
  }
  return 0;
}
