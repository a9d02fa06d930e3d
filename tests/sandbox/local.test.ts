import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ConfigError, SandboxError } from '../../src/errors.js';
import {
  createLocalSandbox,
  createSandbox,
  liveSandboxCount,
  type Sandbox,
  type SandboxOptions,
} from '../../src/sandbox/index.js';
import { runSandboxContract } from './contract.js';

// The default (isolation auto): bubblewrap where usable; local-isolation.test.ts runs each mode by name.
runSandboxContract('local', () => createLocalSandbox());

function isPathEscape(error: unknown): boolean {
  assert.ok(error instanceof SandboxError, `expected a SandboxError, got ${String(error)}`);
  assert.equal(error.code, 'path_escape');
  return true;
}

describe('local sandbox: paths that escape the workdir are refused', () => {
  let sandbox: Sandbox;
  let outside: string;

  before(async () => {
    sandbox = await createLocalSandbox();
    outside = await mkdtemp(join(tmpdir(), 'traj-outside-'));
    await writeFile(join(outside, 'secret.txt'), 'outside content');
  });

  after(async () => {
    await sandbox.dispose();
    await rm(outside, { recursive: true, force: true });
  });

  it('refuses .. in reads, writes, uploads, downloads and cwd', async () => {
    await assert.rejects(sandbox.readFile('../x.txt'), isPathEscape);
    await assert.rejects(sandbox.writeFile('sub/../../x.txt', 'no'), isPathEscape);
    await assert.rejects(sandbox.upload(join(outside, 'secret.txt'), '../copied.txt'), isPathEscape);
    await assert.rejects(sandbox.download('..', join(outside, 'copy')), isPathEscape);
    await assert.rejects(sandbox.exec('pwd', { cwd: '..' }), isPathEscape);
    assert.equal(existsSync(join(dirname(sandbox.workdir), 'x.txt')), false);
  });

  it('refuses absolute paths outside the workdir', async () => {
    await assert.rejects(sandbox.readFile(join(outside, 'secret.txt')), isPathEscape);
    await assert.rejects(sandbox.writeFile(join(outside, 'planted.txt'), 'no'), isPathEscape);
    await assert.rejects(sandbox.readFile('/etc/passwd'), isPathEscape);
    assert.equal(existsSync(join(outside, 'planted.txt')), false);
  });

  it('refuses symlinks pointing out, also dangling ones and links in the middle of a path', async () => {
    const links = [
      `ln -s ${outside}/secret.txt file-link`,
      `ln -s ${outside} dir-link`,
      `ln -s ${outside}/not-yet-there.txt dangling-link`,
      'mkdir -p inner && ln -s ../dir-link inner/hop',
    ].join(' && ');
    assert.equal((await sandbox.exec(links)).exitCode, 0);
    await assert.rejects(sandbox.readFile('file-link'), isPathEscape);
    await assert.rejects(sandbox.readFile('dir-link/secret.txt'), isPathEscape);
    await assert.rejects(sandbox.writeFile('dir-link/planted.txt', 'no'), isPathEscape);
    await assert.rejects(sandbox.writeFile('dangling-link', 'no'), isPathEscape);
    await assert.rejects(sandbox.writeFile('inner/hop/new/planted.txt', 'no'), isPathEscape);
    await assert.rejects(sandbox.download('dir-link', join(outside, 'copy')), isPathEscape);
    assert.equal(existsSync(join(outside, 'not-yet-there.txt')), false);
    assert.equal(existsSync(join(outside, 'planted.txt')), false);
    assert.equal(existsSync(join(outside, 'new')), false);
    assert.equal(await readFile(join(outside, 'secret.txt'), 'utf8'), 'outside content');
  });

  it('follows symlinks that stay inside, and allows names that merely start with dots', async () => {
    assert.equal(
      (
        await sandbox.exec(
          'echo inside > real.txt && ln -s real.txt inside-link && ln -s missing-target.txt inside-dangling',
        )
      ).exitCode,
      0,
    );
    assert.equal((await sandbox.readFile('inside-link')).toString(), 'inside\n');
    await sandbox.writeFile('inside-dangling', 'created through the link');
    assert.equal((await sandbox.readFile('missing-target.txt')).toString(), 'created through the link');
    await sandbox.writeFile('..dots/..file', 'ok');
    assert.equal((await sandbox.readFile(`${sandbox.workdir}/..dots/..file`)).toString(), 'ok');
  });
});

describe('local sandbox: environment', () => {
  const planted: Record<string, string> = {
    OPENAI_API_KEY: 'sk-test-openai-0000',
    OPENROUTER_API_KEY: 'sk-test-openrouter-0000',
    HF_TOKEN: 'hf_test_0000',
    GITHUB_TOKEN: 'ghp_test_0000',
    AWS_SECRET: 'aws-test-0000',
    TRAJ_VISIBLE_CANARY: 'not-inherited',
  };
  const saved: Record<string, string | undefined> = {};

  before(() => {
    for (const [name, value] of Object.entries(planted)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  });

  after(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('no secret reaches a command, even one passed explicitly; HOME is the workdir', async () => {
    const sandbox = await createLocalSandbox({
      kind: 'local',
      env: { DEPLOY_TOKEN: 'tok-test-0000', SAFE_SETTING: 'kept' },
    });
    try {
      const result = await sandbox.exec('env', {
        env: { DB_PASSWORD: 'pw-test-0000', hf_token: 'hf-lower-0000', PER_CALL: 'kept-too' },
      });
      const names = result.stdout.split('\n').map((line) => line.split('=')[0]);
      assert.deepEqual(
        names.filter((name) => /(_API_KEY|_TOKEN|_SECRET|PASSWORD)$/i.test(name ?? '')),
        [],
      );
      for (const value of [...Object.values(planted), 'tok-test-0000', 'pw-test-0000', 'hf-lower-0000']) {
        assert.ok(!result.stdout.includes(value), `${value} leaked into the sandbox environment`);
      }
      assert.match(result.stdout, /^SAFE_SETTING=kept$/m);
      assert.match(result.stdout, /^PER_CALL=kept-too$/m);
      assert.match(result.stdout, new RegExp(`^HOME=${sandbox.workdir}$`, 'm'));
      assert.match(result.stdout, /^PATH=/m);
    } finally {
      await sandbox.dispose();
    }
  });

  // Under bubblewrap the init sets a command's environment before its fork, and leaves it as is
  // when the next command's is the same: nothing of one command's may reach another's.
  it('each command gets exactly its own environment, however the one before differed', async () => {
    const sandbox = await createLocalSandbox({ kind: 'local' });
    const variables = async (env: Record<string, string>) => {
      const result = await sandbox.exec('env', { env });
      return result.stdout
        .split('\n')
        .filter((line) => line.startsWith('ONLY_'))
        .sort();
    };
    try {
      assert.deepEqual(await variables({ ONLY_FIRST: 'a=b', ONLY_EMPTY: '' }), ['ONLY_EMPTY=', 'ONLY_FIRST=a=b']);
      assert.deepEqual(await variables({ ONLY_SECOND: '2' }), ['ONLY_SECOND=2']);
      assert.deepEqual(await variables({ ONLY_SECOND: '2' }), ['ONLY_SECOND=2']);
      assert.deepEqual(await variables({}), []);
      assert.deepEqual(await variables({ ONLY_SECOND: 'changed' }), ['ONLY_SECOND=changed']);
    } finally {
      await sandbox.dispose();
    }
  });
});

describe('local sandbox: lifecycle', () => {
  it('creates a fresh folder under the temp dir per sandbox and dispose removes it', async () => {
    const first = await createLocalSandbox();
    const second = await createLocalSandbox();
    assert.notEqual(first.workdir, second.workdir);
    assert.notEqual(first.id, second.id);
    assert.match(basename(first.workdir), /^traj-sbx-/);
    // A subfolder (the recursive removal) and plain files only (the one-readdir removal).
    await first.writeFile('sub/file.txt', 'x');
    await second.writeFile('a.txt', 'a');
    await second.writeFile('b.txt', 'b');
    await first.dispose();
    await second.dispose();
    assert.equal(existsSync(first.workdir), false);
    assert.equal(existsSync(second.workdir), false);
  });

  it('dispose removes what a rollout left and nothing it points at: many files, a FIFO, a link out, a link to a folder out', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'traj-outside-'));
    await writeFile(join(outside, 'keep.txt'), 'keep');
    try {
      for (const files of [3, 200]) {
        const sandbox = await createLocalSandbox();
        const made = await sandbox.exec(
          `for i in $(seq ${files}); do echo $i > f$i; done; mkfifo pipe; ln -s ${outside}/keep.txt link; ln -s ${outside} folder`,
        );
        assert.equal(made.exitCode, 0, made.stderr);
        await sandbox.dispose();
        assert.equal(existsSync(sandbox.workdir), false, `${files} files: the folder is gone`);
        assert.equal(
          await readFile(join(outside, 'keep.txt'), 'utf8'),
          'keep',
          `${files} files: the link's target stays`,
        );
      }
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('a workdir option becomes a subfolder of the fresh folder, removed on dispose', async () => {
    const sandbox = await createLocalSandbox({ kind: 'local', workdir: '/app/project' });
    const root = dirname(dirname(sandbox.workdir));
    assert.ok(sandbox.workdir.endsWith('/app/project'));
    assert.match(basename(root), /^traj-sbx-/);
    assert.equal((await sandbox.exec('pwd')).stdout.trim(), sandbox.workdir);
    await sandbox.dispose();
    assert.equal(existsSync(root), false);
  });

  it('a background job holding stdout does not block exec, and dispose kills it', async () => {
    const sandbox = await createLocalSandbox();
    const marker = `${randomInt(3_000, 9_000)}.${randomInt(100_000, 999_999)}`;
    const result = await sandbox.exec(`sleep ${marker} & echo started`, { timeoutMs: 30_000 });
    assert.equal(result.timedOut, false);
    assert.equal(result.stdout, 'started\n');
    assert.equal(await hostProcesses(marker), 1);
    await sandbox.dispose();
    assert.equal(await hostProcessesAfterKill(marker), 0);
  });

  it('is tracked as live until disposed', async () => {
    const before = liveSandboxCount();
    const sandbox = await createLocalSandbox();
    assert.equal(liveSandboxCount(), before + 1);
    await sandbox.dispose();
    assert.equal(liveSandboxCount(), before);
  });

  it('a missing cwd is a SandboxError naming it', async () => {
    const sandbox = await createLocalSandbox();
    try {
      await assert.rejects(sandbox.exec('pwd', { cwd: 'nowhere' }), (error: unknown) => {
        assert.ok(error instanceof SandboxError);
        assert.equal(error.code, 'cwd_missing');
        assert.match(error.message, /nowhere/);
        return true;
      });
    } finally {
      await sandbox.dispose();
    }
  });
});

describe('createSandbox', () => {
  it('makes a local sandbox for kind local', async () => {
    const sandbox = await createSandbox({ kind: 'local' });
    try {
      assert.equal(sandbox.kind, 'local');
      assert.equal((await sandbox.exec('echo ok')).stdout, 'ok\n');
    } finally {
      await sandbox.dispose();
    }
  });

  it('rejects an unknown kind with a ConfigError listing the known kinds', async () => {
    await assert.rejects(createSandbox({ kind: 'vm' } as unknown as SandboxOptions), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /'vm'/);
      assert.match(error.message, /local, docker/);
      return true;
    });
  });
});

/** Live (non-zombie) host processes running `sleep <marker>`. */
async function hostProcesses(marker: string): Promise<number> {
  const { stdout } = await promisify(execFile)('ps', ['-eo', 'stat=,args=']);
  return stdout.split('\n').filter((line) => line.includes(`sleep ${marker}`) && !line.trim().startsWith('Z')).length;
}

/** The same count after a kill, looked up a few times while the processes leave the table. */
async function hostProcessesAfterKill(marker: string): Promise<number> {
  let count = await hostProcesses(marker);
  for (let attempt = 0; attempt < 20 && count > 0; attempt++) {
    await new Promise((done) => setTimeout(done, 100));
    count = await hostProcesses(marker);
  }
  return count;
}
