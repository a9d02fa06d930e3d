import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Sandbox } from '../../src/sandbox/index.js';
import { SandboxError } from '../../src/errors.js';
import { createDockerSandbox } from '../../src/sandbox/docker.js';
import { dockerSuiteOptions, uniqueRunName } from '../helpers/docker.js';

const options = await dockerSuiteOptions();
const MEGABYTE = 1024 * 1024;

describe('docker sandbox files', options, () => {
  let sandbox: Sandbox;
  let hostDir: string;

  before(async () => {
    sandbox = await createDockerSandbox({ kind: 'docker', run: uniqueRunName('files'), key: 'files' });
    hostDir = await mkdtemp(join(tmpdir(), 'traj-docker-files-'));
  });

  after(async () => {
    await sandbox?.dispose();
    if (hostDir) await rm(hostDir, { recursive: true, force: true });
  });

  it('streams a 100 MB file in and out without holding it in memory', async () => {
    const source = join(hostDir, 'big.bin');
    const expected = await writeBigFile(source, 100);
    const peak = await peakBufferGrowth(async () => {
      await sandbox.upload(source, 'big/big.bin');
      const inside = await sandbox.exec('sha256sum big/big.bin && stat -c %s big/big.bin', { timeoutMs: 120_000 });
      assert.equal(inside.stdout.split(/\s+/)[0], expected);
      assert.match(inside.stdout, /^104857600$/m);
      await sandbox.download('big/big.bin', join(hostDir, 'back.bin'));
    });
    assert.equal(await sha256File(join(hostDir, 'back.bin')), expected);
    // A whole-file buffer would show up as 100+ MB of ArrayBuffer memory.
    assert.ok(
      peak < 40 * MEGABYTE,
      `buffer memory grew by ${(peak / MEGABYTE).toFixed(1)} MB during a 100 MB transfer`,
    );
  });

  it('reads and writes files on the tmpfs /tmp, which the archive endpoints cannot see', async () => {
    await sandbox.writeFile('/tmp/notes/a.txt', 'on tmpfs\n');
    assert.equal((await sandbox.exec('cat /tmp/notes/a.txt; findmnt -n -o FSTYPE /tmp')).stdout, 'on tmpfs\ntmpfs\n');
    assert.equal((await sandbox.exec('echo from-command > /tmp/notes/b.txt')).exitCode, 0);
    assert.equal((await sandbox.readFile('/tmp/notes/b.txt')).toString(), 'from-command\n');

    const tree = join(hostDir, 'tree');
    await mkdir(join(tree, 'sub'), { recursive: true });
    await writeFile(join(tree, 'sub', 'bytes.bin'), Buffer.from([0, 255, 10, 13, 0]));
    await sandbox.upload(tree, '/tmp/uploaded');
    assert.equal(
      (await sandbox.exec('od -An -tu1 /tmp/uploaded/sub/bytes.bin')).stdout.trim().split(/\s+/).join(','),
      '0,255,10,13,0',
    );
    await sandbox.download('/tmp/notes', join(hostDir, 'notes'));
    assert.equal(await readFile(join(hostDir, 'notes', 'b.txt'), 'utf8'), 'from-command\n');
    await assert.rejects(
      sandbox.readFile('/tmp/none.txt'),
      (error: Error) => error instanceof SandboxError && error.code === 'not_found',
    );
  });

  it('follows a symlink to read a file, and copies symlinks inside a tree as symlinks', async () => {
    await sandbox.exec('mkdir -p linked && echo target-text > linked/target.txt && ln -s target.txt linked/link.txt');
    assert.equal((await sandbox.readFile('linked/link.txt')).toString(), 'target-text\n');
    await sandbox.download('linked', join(hostDir, 'linked'));
    assert.equal(await readlink(join(hostDir, 'linked', 'link.txt')), 'target.txt');
    assert.equal(await readFile(join(hostDir, 'linked', 'link.txt'), 'utf8'), 'target-text\n');
  });

  it('refuses to read a directory as a file', async () => {
    await sandbox.exec('mkdir -p a-folder');
    await assert.rejects(
      sandbox.readFile('a-folder'),
      (error: Error) => error instanceof SandboxError && error.code === 'is_directory',
    );
  });

  it('reports a missing working directory as an error, not as the runtime’s exit 126', async () => {
    await assert.rejects(
      sandbox.exec('pwd', { cwd: 'no/such/dir' }),
      (error: Error) => error instanceof SandboxError && error.code === 'cwd_missing',
    );
  });
});

/** `megabytes` of incompressible data written in 1 MB chunks; returns its sha256. */
async function writeBigFile(path: string, megabytes: number): Promise<string> {
  const hash = createHash('sha256');
  const out = createWriteStream(path);
  for (let index = 0; index < megabytes; index++) {
    const chunk = randomBytes(MEGABYTE);
    hash.update(chunk);
    if (!out.write(chunk)) await new Promise<void>((resume) => out.once('drain', () => resume()));
  }
  await new Promise<void>((done, fail) => {
    out.on('error', fail);
    out.end(() => done());
  });
  return hash.digest('hex');
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The largest growth of Buffer/ArrayBuffer memory over the baseline while `work` runs. */
async function peakBufferGrowth(work: () => Promise<void>): Promise<number> {
  globalThis.gc?.();
  const baseline = process.memoryUsage().arrayBuffers;
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().arrayBuffers - baseline);
  }, 5);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  return Math.max(peak, process.memoryUsage().arrayBuffers - baseline);
}
