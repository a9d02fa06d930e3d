import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Sandbox } from '../../src/sandbox/index.js';

/**
 * What every backend's persistent shell (`execInShell`) must do, run against a real sandbox:
 * state carries over, each call's output and exit code are delimited exactly (the hard cases:
 * no final newline, binary bytes, a fake marker, a command reading stdin, `exit`), and a
 * timed-out command is killed with what it started while the shell comes back in its cwd.
 */
export function runShellContract(backendName: string, create: () => Promise<Sandbox>): void {
  describe(`persistent shell: ${backendName}`, () => {
    let sandbox: Sandbox;

    before(async () => {
      sandbox = await create();
    });
    after(async () => {
      await sandbox?.dispose();
    });

    it('carries cd, exported and plain variables and functions over to the next call', async () => {
      const first = await sandbox.execInShell(
        'mkdir -p deep/er && cd deep/er && export GREETING=hello && plain=kept && shout() { echo "${1^^}!"; }',
      );
      assert.deepEqual([first.exitCode, first.stdout, first.stderr, first.shell], [0, '', '', 'kept']);
      const second = await sandbox.execInShell(
        'pwd; echo "$GREETING $plain"; shout hi; bash -c "echo child:$GREETING"',
      );
      assert.equal(second.stdout, `${sandbox.workdir}/deep/er\nhello kept\nHI!\nchild:hello\n`);
      assert.equal(second.exitCode, 0);
      await sandbox.execInShell(`cd ${sandbox.workdir}`);
    });

    it('delimits output with no final newline, on both streams, and keeps exit codes apart', async () => {
      const first = await sandbox.execInShell('printf abc; printf def >&2; (exit 5)');
      assert.deepEqual([first.stdout, first.stderr, first.exitCode], ['abc', 'def', 5]);
      const second = await sandbox.execInShell('printf xyz');
      assert.deepEqual([second.stdout, second.stderr, second.exitCode], ['xyz', '', 0]);
    });

    it('delimits binary output exactly: the bytes a file holds come back, and nothing more', async () => {
      await sandbox.execInShell('head -c 100 /dev/urandom > random.bin');
      const expected = (await sandbox.readFile('random.bin')).toString('utf8');
      const binary = await sandbox.execInShell('cat random.bin');
      assert.equal(binary.stdout, expected);
      const next = await sandbox.execInShell('echo after');
      assert.equal(next.stdout, 'after\n');
      const noise = await sandbox.execInShell('head -c 100000 /dev/urandom; echo; echo end');
      assert.match(noise.stdout, /\nend\n$/);
      assert.equal(noise.exitCode, 0);
    });

    it('is not fooled by output that imitates the epilogue, nor by the markers of earlier calls', async () => {
      const fake = 'printf "%s %d\\n" 0123456789abcdef0123456789abcdef 0';
      const result = await sandbox.execInShell(`${fake}; ${fake} >&2; echo real`);
      assert.equal(result.stdout, '0123456789abcdef0123456789abcdef 0\nreal\n');
      assert.equal(result.stderr, '0123456789abcdef0123456789abcdef 0\n');
      assert.equal(result.exitCode, 0);
    });

    it('gives a command reading stdin an empty stdin: the next command is not eaten', async () => {
      const reader = await sandbox.execInShell('cat; read -r line; echo "read:${line}:$?"');
      assert.equal(reader.stdout, 'read::1\n');
      const next = await sandbox.execInShell('echo still here');
      assert.equal(next.stdout, 'still here\n');
    });

    it('keeps its markers when a command redirects the shell output for good', async () => {
      const hidden = await sandbox.execInShell('exec 3>&1 >/dev/null; echo gone; echo seen >&3');
      assert.equal(hidden.stdout, 'seen\n');
      const later = await sandbox.execInShell('echo quiet; exec >&3 3>&-; echo back');
      assert.equal(later.stdout, 'back\n');
    });

    it('reports `exit 3` and restarts the shell in the same cwd with exported variables kept', async () => {
      await sandbox.execInShell('mkdir -p kept-dir && cd kept-dir && export KEPT=yes; lost() { :; }');
      const exited = await sandbox.execInShell('echo bye; exit 3');
      assert.deepEqual([exited.exitCode, exited.stdout, exited.shell], [3, 'bye\n', 'restarted']);
      const after = await sandbox.execInShell('pwd; echo "$KEPT"; type lost >/dev/null 2>&1 || echo no-function');
      assert.equal(after.stdout, `${sandbox.workdir}/kept-dir\nyes\nno-function\n`);
      assert.equal(after.restored, true);
      assert.equal(after.shell, 'kept');
      await sandbox.execInShell(`cd ${sandbox.workdir}`);
    });

    it('kills a timed-out command with its process group, then runs the next call in the kept cwd', async () => {
      const marker = `${randomInt(3_000, 9_000)}.${randomInt(100_000, 999_999)}`;
      await sandbox.execInShell('mkdir -p slow && cd slow && export STAY=1');
      const slow = await sandbox.execInShell(`echo before; sleep ${marker} & sleep ${marker}; echo never`, {
        timeoutMs: 1_000,
      });
      assert.equal(slow.timedOut, true);
      assert.equal(slow.exitCode, 124);
      assert.equal(slow.stdout, 'before\n');
      assert.equal(slow.shell, 'restarted');
      const next = await sandbox.execInShell(
        `pwd; echo "$STAY"; ps -eo stat=,args= | grep -v '^Z' | grep -c '[s]leep ${marker}' || true`,
      );
      assert.equal(next.stdout, `${sandbox.workdir}/slow\n1\n0\n`);
      assert.equal(next.exitCode, 0);
      await sandbox.execInShell(`cd ${sandbox.workdir}`);
    });

    it('runs calls made at the same time one after another, each with its own output', async () => {
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, index) => sandbox.execInShell(`printf ${index}; sleep 0.0${index}`)),
      );
      assert.deepEqual(
        results.map((result) => result.stdout),
        ['0', '1', '2', '3', '4'],
      );
    });

    it('cds into the cwd option first, and stays there', async () => {
      await sandbox.execInShell('mkdir -p opt/inner');
      const inside = await sandbox.execInShell('pwd', { cwd: 'opt/inner' });
      assert.equal(inside.stdout, `${sandbox.workdir}/opt/inner\n`);
      const stays = await sandbox.execInShell('pwd');
      assert.equal(stays.stdout, `${sandbox.workdir}/opt/inner\n`);
      await sandbox.execInShell(`cd ${sandbox.workdir}`);
    });

    it('leaves exec (a fresh shell per call) untouched by the shell state', async () => {
      await sandbox.execInShell('cd /tmp && export ONLY_IN_SHELL=1');
      const fresh = await sandbox.exec('pwd; echo "[${ONLY_IN_SHELL-}]"');
      assert.equal(fresh.stdout, `${sandbox.workdir}\n[]\n`);
      await sandbox.execInShell(`cd ${sandbox.workdir}`);
    });
  });

  it(`persistent shell: ${backendName}: nothing of the shell survives the sandbox's dispose`, async () => {
    const marker = `${randomInt(3_000, 9_000)}.${randomInt(100_000, 999_999)}`;
    const sandbox = await create();
    try {
      await sandbox.execInShell(`sleep ${marker} & echo started`);
      // The background job is a forked shell until it execs sleep: wait for that (a busy machine is slow to).
      const shells = await sandbox.execInShell(
        `for i in $(seq 100); do ps -eo args= | grep -q '[s]leep ${marker}' && break; sleep 0.05; done; ps -eo args= | grep -c '[s]leep ${marker}'`,
      );
      assert.equal(shells.stdout, '1\n');
      await sandbox.dispose();
      await assert.rejects(sandbox.execInShell('true'), /disposed/);
      // Sandboxed processes are processes of this kernel: the host's table sees every backend's.
      assert.deepEqual(await hostProcesses(`sleep ${marker}`), []);
    } finally {
      await sandbox.dispose();
    }
  });
}

/** The host's processes whose command line contains `text`, after up to 2 s for the kernel to reap them. */
async function hostProcesses(text: string): Promise<string[]> {
  let found: string[] = [];
  for (let attempt = 0; attempt < 20; attempt++) {
    found = await new Promise<string[]>((resolve) =>
      execFile('pgrep', ['-f', text], (_error, stdout) => resolve(stdout.split('\n').filter(Boolean))),
    );
    if (found.length === 0) return found;
    await sleep(100);
  }
  return found;
}
