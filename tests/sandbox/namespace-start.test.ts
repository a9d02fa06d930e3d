import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { bwrapSuiteOptions } from '../helpers/bwrap.js';

const bwrap = await bwrapSuiteOptions();

/** bubblewrap processes whose command line binds this sandbox folder (its monitor and the namespace's pid 1). */
function bwrapProcessesFor(folder: string): number {
  try {
    const out = execFileSync('pgrep', ['-f', '-x', `bwrap .*--bind ${folder} ${folder} .*`], { encoding: 'utf8' });
    return out.split('\n').filter(Boolean).length;
  } catch {
    return 0; // pgrep exits 1 when nothing matches
  }
}

async function eventually(check: () => boolean): Promise<boolean> {
  for (let tries = 0; tries < 100; tries++) {
    if (check()) return true;
    await sleep(50);
  }
  return check();
}

const sandbox = () => createLocalSandbox({ kind: 'local', local: { isolation: 'bwrap' } });

describe('local+bwrap: when the namespace starts', bwrap, () => {
  it('file operations alone never start bubblewrap', async () => {
    const box = await sandbox();
    try {
      await box.writeFile('notes.txt', 'hello');
      assert.equal((await box.readFile('notes.txt')).toString(), 'hello');
      await sleep(200);
      assert.equal(bwrapProcessesFor(box.workdir), 0);
      // The control: a command does start it, so the probe can see one.
      assert.equal((await box.exec('cat notes.txt')).stdout, 'hello');
      assert.ok(bwrapProcessesFor(box.workdir) > 0);
    } finally {
      await box.dispose();
    }
    assert.equal(bwrapProcessesFor(box.workdir), 0);
  });

  it('prepareCommands starts it before any command, and dispose still ends it', async () => {
    const box = await sandbox();
    box.prepareCommands?.();
    try {
      assert.ok(await eventually(() => bwrapProcessesFor(box.workdir) > 0), 'a namespace before the first command');
      const before = bwrapProcessesFor(box.workdir);
      assert.equal((await box.execInShell('echo ready')).stdout, 'ready\n');
      assert.equal(bwrapProcessesFor(box.workdir), before, 'the first command reuses it');
    } finally {
      await box.dispose();
    }
    assert.equal(bwrapProcessesFor(box.workdir), 0);
  });

  it('a sandbox disposed while its namespace is starting leaves nothing running', async () => {
    const box = await sandbox();
    box.prepareCommands?.();
    await box.dispose();
    await sleep(300);
    assert.equal(bwrapProcessesFor(box.workdir), 0);
    await assert.rejects(box.exec('true'), /disposed/);
  });
});

/** Pids of the persistent-shell protocol's shells working in `folder` (seen from here, namespace or not). */
function shellPidsIn(folder: string): number[] {
  let pids: string[];
  try {
    pids = execFileSync('pgrep', ['-f', 'traj-exec:local'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
  return pids
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/cwd`) === folder;
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
}

const shellsIn = (folder: string) => shellPidsIn(folder).length;

for (const isolation of ['none', 'bwrap'] as const) {
  describe(`local+${isolation}: the persistent shell starts early`, isolation === 'bwrap' ? bwrap : {}, () => {
    it('prepareCommands({shell: true}) starts it before any call; the first call runs in it', async () => {
      const box = await createLocalSandbox({ kind: 'local', local: { isolation } });
      try {
        box.prepareCommands?.();
        await sleep(200);
        assert.equal(shellsIn(box.workdir), 0, 'without shell: true, no shell');
        box.prepareCommands?.({ shell: true });
        assert.ok(await eventually(() => shellsIn(box.workdir) === 1), 'a shell before the first call');
        const result = await box.execInShell('pwd');
        assert.equal(result.stdout, `${box.workdir}\n`);
        assert.equal(result.shell, 'kept');
        assert.equal(result.restored, undefined, 'the first call is not told of a restart');
        assert.equal(shellsIn(box.workdir), 1, 'the same shell, not a second one');
      } finally {
        await box.dispose();
      }
      assert.ok(await eventually(() => shellsIn(box.workdir) === 0), 'dispose ends it');
    });

    it('a shell started early and killed before any call: the first call gets a new one, not told of a restart', async () => {
      const box = await createLocalSandbox({ kind: 'local', local: { isolation } });
      try {
        box.prepareCommands?.({ shell: true });
        assert.ok(await eventually(() => shellsIn(box.workdir) === 1));
        const [early] = shellPidsIn(box.workdir);
        process.kill(early!, 'SIGKILL');
        assert.ok(await eventually(() => shellsIn(box.workdir) === 0), 'the early shell is gone');
        // Its end reaches the sandbox once the spawn host gave its pipes up to 200 ms to drain
        // (SHELL_DRAIN_MS); a call made before that meets the dying shell, as any call would.
        await sleep(1_000);
        const result = await box.execInShell('echo fresh');
        assert.equal(result.stdout, 'fresh\n');
        assert.equal(result.restored, undefined, 'nothing was lost: no call had run');
        assert.notDeepEqual(shellPidsIn(box.workdir), [early], 'a new shell ran the call');
      } finally {
        await box.dispose();
      }
    });
  });
}
