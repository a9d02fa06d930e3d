import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Sandbox } from '../../src/sandbox/index.js';
import { createDockerSandbox } from '../../src/sandbox/docker.js';
import { connectDocker } from '../../src/sandbox/docker-engine.js';
import { containersLabelled, dockerSuiteOptions, uniqueRunName } from '../helpers/docker.js';

const options = await dockerSuiteOptions();
const run = uniqueRunName('fork-bomb');
/** Small, so each bomb reaches the limit at once even on a slow machine. */
const PIDS_LIMIT = 64;
/** Short: the bombs are at the limit long before it; nothing here waits on the machine's speed. */
const BOMB_TIMEOUT_MS = 2_000;
/** Generous: after a bomb, the next command may wait for a restart on a busy engine. */
const NEXT_TIMEOUT_MS = 60_000;

/**
 * Bombs that keep their command running until the timeout: the classic bomb (its command then
 * waits in `sleep`, without a fork), a bomb in the foreground, and a loop of background sleeps.
 */
const HOLDING_BOMBS = [
  ':(){ :|:& };:; exec sleep 600',
  'bomb() { bomb | bomb; }; bomb',
  'while :; do sleep 600 & done',
];
/** The classic bomb alone: its command exits at once, leaving the bomb running without a leader. */
const LEADERLESS_BOMB = ':(){ :|:& };:';
const RESTART_NOTE = /\[traj: the container was restarted/;

async function containerOf(key: string) {
  const [id] = await containersLabelled({ 'traj.run': run, 'traj.key': key });
  assert.ok(id, `no container labelled traj.run=${run} traj.key=${key}`);
  return (await connectDocker()).getContainer(id).inspect();
}

/** The files written so far and the processes left, from a command that must run. */
async function afterBomb(sandbox: Sandbox, shell: boolean): Promise<{ files: number; processes: number }> {
  const probe = 'ls round-*.txt | wc -l; ps -e --no-headers | wc -l';
  const next = shell
    ? await sandbox.execInShell(probe, { timeoutMs: NEXT_TIMEOUT_MS })
    : await sandbox.exec(probe, { timeoutMs: NEXT_TIMEOUT_MS });
  assert.equal(next.exitCode, 0, `the command after the bomb failed: ${next.stderr.slice(-500)}`);
  const [files, processes] = next.stdout.trim().split('\n').map(Number);
  return { files: files!, processes: processes! };
}

describe('docker sandbox: fork bombs', options, () => {
  it('ends a fork bomb at its timeout 10 times in a row; each next command runs and sees the files', async () => {
    const sandbox = await createDockerSandbox({ kind: 'docker', run, key: 'exec', docker: { pids_limit: PIDS_LIMIT } });
    try {
      const before = await containerOf('exec');
      let restarts = 0;
      for (let round = 1; round <= 10; round++) {
        assert.equal((await sandbox.exec(`echo ${round} > round-${round}.txt`)).exitCode, 0);
        const leaderless = round % 4 === 0;
        const command = leaderless ? LEADERLESS_BOMB : HOLDING_BOMBS[(round - 1) % HOLDING_BOMBS.length]!;
        const startedAt = (await containerOf('exec')).State.StartedAt;
        const bomb = await sandbox.exec(command, { timeoutMs: BOMB_TIMEOUT_MS });
        // The leaderless bomb's command may end before its timeout (the engine closes its output).
        if (!leaderless) assert.equal(bomb.exitCode, 124, `round ${round}: ${command}`);
        if (!leaderless) assert.equal(bomb.timedOut, true);
        const restarted = (await containerOf('exec')).State.StartedAt !== startedAt;
        if (restarted) restarts++;
        assert.equal(RESTART_NOTE.test(bomb.stderr), restarted, `round ${round}: the note tells of a restart`);
        const { files, processes } = await afterBomb(sandbox, false);
        assert.equal(files, round, `round ${round}: the files written before the bomb`);
        // init, sleep, the probe's bash, ls/ps/wc and a few being reaped: the bomb is gone.
        assert.ok(processes < 10, `round ${round} (${command}): ${processes} processes left`);
      }
      // A bomb without a leader is beyond the kill from inside: the restart path ran. (At least once:
      // on a loaded machine the kill from inside can catch a leaderless bomb before it spreads.)
      assert.ok(restarts >= 1, `restarts: ${restarts}`);
      const after = await containerOf('exec');
      assert.equal(after.Id, before.Id);
      assert.deepEqual(after.Config.Labels, before.Config.Labels);
      assert.equal(after.HostConfig.PidsLimit, PIDS_LIMIT);
      assert.equal(after.HostConfig.Memory, before.HostConfig.Memory);
      assert.equal(after.HostConfig.NetworkMode, 'none');
      assert.deepEqual(after.HostConfig.CapDrop, before.HostConfig.CapDrop);
    } finally {
      await sandbox.dispose();
    }
  });

  it('ends a fork bomb in the persistent shell at its timeout; the new shell keeps its folder and exports', async () => {
    const sandbox = await createDockerSandbox({
      kind: 'docker',
      run,
      key: 'shell',
      docker: { pids_limit: PIDS_LIMIT },
    });
    try {
      await sandbox.execInShell('mkdir -p work && cd work && export KEPT=yes');
      for (let round = 1; round <= HOLDING_BOMBS.length * 2; round++) {
        await sandbox.execInShell(`echo ${round} > round-${round}.txt`);
        const command = HOLDING_BOMBS[(round - 1) % HOLDING_BOMBS.length]!;
        const bomb = await sandbox.execInShell(command, { timeoutMs: BOMB_TIMEOUT_MS });
        assert.equal(bomb.exitCode, 124, `round ${round}: ${command}`);
        assert.equal(bomb.timedOut, true);
        assert.equal(bomb.shell, 'restarted');
        const where = await sandbox.execInShell('echo "$PWD $KEPT"', { timeoutMs: NEXT_TIMEOUT_MS });
        assert.equal(where.stdout, `${sandbox.workdir}/work yes\n`, where.stderr);
        assert.equal(where.restored, true);
        const { files, processes } = await afterBomb(sandbox, true);
        assert.equal(files, round, `round ${round}: the files written before the bomb`);
        assert.ok(processes < 10, `round ${round} (${command}): ${processes} processes left`);
      }
    } finally {
      await sandbox.dispose();
    }
  });
});
