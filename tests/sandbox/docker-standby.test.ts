import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { SandboxError } from '../../src/errors.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { createDockerSandbox } from '../../src/sandbox/docker.js';
import { connectDocker } from '../../src/sandbox/docker-engine.js';
import { containersLabelled, dockerSuiteOptions, uniqueRunName } from '../helpers/docker.js';

const options = await dockerSuiteOptions();
const run = uniqueRunName('standby');

/** Run argv in the container straight through the engine (not through traj): its stdout and exit code. */
async function engineExec(containerId: string, argv: string[]): Promise<{ stdout: string; exitCode: number }> {
  const docker = await connectDocker();
  const exec = await docker.getContainer(containerId).exec({ Cmd: argv, AttachStdout: true, AttachStderr: true });
  const stream = (await exec.start({})) as Duplex;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  await new Promise((done) => stream.on('end', done));
  // The engine's framing: an 8-byte header per chunk of output.
  const raw = Buffer.concat(chunks);
  let stdout = '';
  for (let at = 0; at + 8 <= raw.length; at += 8 + raw.readUInt32BE(at + 4)) {
    if (raw[at] === 1) stdout += raw.subarray(at + 8, at + 8 + raw.readUInt32BE(at + 4)).toString('utf8');
  }
  return { stdout, exitCode: (await exec.inspect()).ExitCode ?? -1 };
}

/** Variable names of `env` output, one `NAME=value` a line (values without newlines). */
function names(envOutput: string): string[] {
  return envOutput
    .split('\n')
    .filter((line) => line.includes('='))
    .map((line) => line.slice(0, line.indexOf('=')))
    .sort();
}

describe('docker sandbox: commands in standby processes', options, () => {
  let sandbox: Sandbox;
  let containerId: string;

  before(async () => {
    sandbox = await createDockerSandbox({ kind: 'docker', run, key: 'standby', env: { SANDBOX_SETTING: 'set' } });
    [containerId] = (await containersLabelled({ 'traj.run': run, 'traj.key': 'standby' })) as [string];
  });

  after(async () => {
    await sandbox?.dispose();
  });

  it('gives a command the environment a plain exec gets, plus its own, and nothing of the standby', async () => {
    const plain = await engineExec(containerId, ['env']);
    // The standby's own variable names and OLDPWD (its cd sets one), asked for; bash keeps an
    // OLDPWD only when it names a folder.
    const asked = { m: '1', d: '2', c: '3', n: '4', e: '5', OLDPWD: '/tmp', PER_COMMAND: 'x y' };
    const withEnv = await sandbox.exec('env', { env: asked });
    assert.deepEqual(
      names(withEnv.stdout),
      [...new Set([...names(plain.stdout), 'PWD', 'SHLVL', '_', 'SANDBOX_SETTING', ...Object.keys(asked)])].sort(),
    );
    for (const [name, value] of Object.entries(asked))
      assert.match(withEnv.stdout, new RegExp(`^${name}=${value}$`, 'm'));
    const bare = await sandbox.exec('env');
    assert.deepEqual(
      names(bare.stdout),
      [...new Set([...names(plain.stdout), 'PWD', 'SHLVL', '_', 'SANDBOX_SETTING'])].sort(),
    );
  });

  it('passes names bash cannot export (not identifiers, readonly in bash) as the engine does', async () => {
    const result = await sandbox.exec('env', { env: { 'ODD-NAME': 'odd', UID: '4242', 'with.dot': 'dotted' } });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stdout, /^ODD-NAME=odd$/m);
    assert.match(result.stdout, /^UID=4242$/m);
    assert.match(result.stdout, /^with\.dot=dotted$/m);
    assert.match(result.stdout, /^SANDBOX_SETTING=set$/m);
  });

  it('refuses a command with a NUL byte, naming it, instead of running part of it', async () => {
    await assert.rejects(sandbox.exec('touch /app/before\0touch /app/after'), (error: Error) => {
      assert.ok(error instanceof SandboxError);
      assert.equal(error.code, 'invalid_command');
      assert.match(error.message, /NUL byte/);
      return true;
    });
    assert.equal((await sandbox.exec('ls /app/before /app/after 2>&1 | grep -c "No such"')).stdout.trim(), '2');
  });

  it('runs the next command once when the process waiting for it was killed', async () => {
    assert.equal((await sandbox.exec('true')).exitCode, 0);
    // The next command's standby starts after this one; kill it once it waits (from outside traj).
    const pattern = 'traj-exec:[0-9a-f]{16}$';
    for (let attempt = 0; ; attempt++) {
      if ((await engineExec(containerId, ['pkill', '-KILL', '-f', pattern])).exitCode === 0) break;
      assert.ok(attempt < 300, 'no standby ever waited in the container');
      await new Promise((resume) => setTimeout(resume, 200));
    }
    const result = await sandbox.exec('echo ran >> /app/runs; wc -l < /app/runs', { timeoutMs: 60_000 });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(result.stdout.trim(), '1');
  });

  it('keeps no process alive with a standby waiting in a sandbox it did not dispose', async () => {
    const sandboxModule = new URL('../../src/sandbox/docker.js', import.meta.url).href;
    const engineModule = new URL('../../src/sandbox/docker-engine.js', import.meta.url).href;
    const key = 'left-behind';
    // The child returns once the next command's standby waits in the container, and never disposes.
    const script = `const { createDockerSandbox } = await import(${JSON.stringify(sandboxModule)});
const { connectDocker } = await import(${JSON.stringify(engineModule)});
const sandbox = await createDockerSandbox({ kind: 'docker', run: ${JSON.stringify(run)}, key: ${JSON.stringify(key)} });
await sandbox.exec('true');
const container = (await connectDocker()).getContainer(sandbox.id.slice('docker-'.length));
for (;;) {
  const top = await container.top({ ps_args: '-o pid,args' });
  if (top.Processes.some(([, args]) => /traj-exec:[0-9a-f]{16}$/.test(args))) break;
  await new Promise((resume) => setTimeout(resume, 200));
}
process.stdout.write('waiting');`;
    try {
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        timeout: 180_000,
      });
      assert.equal(child.signal, null, 'the process did not exit on its own');
      assert.equal(child.status, 0, child.stderr);
      assert.equal(child.stdout, 'waiting');
    } finally {
      const docker = await connectDocker();
      for (const id of await containersLabelled({ 'traj.run': run, 'traj.key': key }))
        await docker.getContainer(id).remove({ force: true });
    }
  });

  it('lets a process that used and disposed sandboxes exit (no start left waiting on the engine)', () => {
    const module = new URL('../../src/sandbox/docker.js', import.meta.url).href;
    // Dispose right after a command, while the next command's standby is starting: without the
    // abort, a start the removal overtook held the process in 4 of 5 runs of these 10 rounds.
    const script = `const { createDockerSandbox } = await import(${JSON.stringify(module)});
for (let round = 0; round < 10; round++) {
  const sandbox = await createDockerSandbox({ kind: 'docker', run: ${JSON.stringify(run)}, key: 'exit-' + round });
  await sandbox.exec('true');
  await sandbox.dispose();
}`;
    // Far above the seconds this takes; a start left waiting held the process for five minutes.
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 180_000,
    });
    assert.equal(child.signal, null, 'the process did not exit on its own');
    assert.equal(child.status, 0, child.stderr);
  });
});
