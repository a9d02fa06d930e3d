import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { rmdirSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SandboxError } from '../../src/errors.js';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { NAMESPACE_INIT_SCRIPT } from '../../src/sandbox/namespace-init.js';
import { bwrapSuiteOptions } from '../helpers/bwrap.js';

const bwrap = await bwrapSuiteOptions();

/** The init of this sandbox's namespace (its PID 1, named after the folder). */
function namespaceProcessesFor(folder: string): number {
  try {
    const out = execFileSync('pgrep', ['-f', '-x', `traj-sandbox-init ${folder}`], { encoding: 'utf8' });
    return out.split('\n').filter(Boolean).length;
  } catch {
    return 0; // pgrep exits 1 when nothing matches
  }
}

const sandbox = () => createLocalSandbox({ kind: 'local', local: { isolation: 'bwrap' } });

describe('local+bwrap: when the namespace starts', bwrap, () => {
  it('file operations alone never start a namespace', async () => {
    const box = await sandbox();
    try {
      await box.writeFile('notes.txt', 'hello');
      assert.equal((await box.readFile('notes.txt')).toString(), 'hello');
      await sleep(200);
      assert.equal(namespaceProcessesFor(box.workdir), 0);
      // The control: a command does start it, so the probe can see one.
      assert.equal((await box.exec('cat notes.txt')).stdout, 'hello');
      assert.ok(namespaceProcessesFor(box.workdir) > 0);
    } finally {
      await box.dispose();
    }
    assert.equal(namespaceProcessesFor(box.workdir), 0);
  });

  // A shell is asked for right behind its namespace, while that is still being made.
  for (const how of ['exec', 'execInShell'] as const) {
    it(`a sandbox disposed while its first command (${how}) starts the namespace leaves nothing running`, async () => {
      const box = await sandbox();
      const first = box[how]('sleep 30').catch((error: unknown) => error);
      await box.dispose();
      await first;
      await sleep(300);
      assert.equal(namespaceProcessesFor(box.workdir), 0);
      await assert.rejects(box[how]('true'), /disposed/);
    });
  }

  it('a namespace that cannot be made fails the shell and commands as a retryable create_failed', async () => {
    const box = await sandbox();
    try {
      // The control: its shell runs, asked for before its namespace was made.
      assert.equal((await box.execInShell('echo ready')).stdout, 'ready\n');
    } finally {
      await box.dispose();
    }
    const broken = await sandbox();
    try {
      // A file where its folder was: nothing can be bound there.
      rmdirSync(broken.workdir);
      writeFileSync(broken.workdir, 'not a folder');
      for (const attempt of [() => broken.execInShell('true'), () => broken.exec('true')]) {
        await assert.rejects(attempt(), (error: unknown) => {
          assert.ok(error instanceof SandboxError, String(error));
          assert.deepEqual([error.code, error.retryable], ['create_failed', true]);
          assert.match(error.message, /cannot start bubblewrap/);
          return true;
        });
      }
    } finally {
      await broken.dispose();
    }
    assert.equal(namespaceProcessesFor(broken.workdir), 0);
  });
});

it('the namespace init compiles under strict and warnings (it loads neither at run time)', () => {
  const checked = spawnSync(
    'perl',
    ['-c', '-e', `use strict; use warnings FATAL => 'all';\n${NAMESPACE_INIT_SCRIPT}`],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(checked.status, 0, checked.stderr);
  assert.match(checked.stderr, /syntax OK/);
  assert.doesNotMatch(NAMESPACE_INIT_SCRIPT, /^\s*(use|no|require)\s/m, 'no module is loaded at run time');
  assert.doesNotMatch(NAMESPACE_INIT_SCRIPT, /\$!\{/, '%! would load Errno');
});
