import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createLocalSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runFileAsNobody } from '../helpers/as-nobody.js';
import { bwrapSuiteOptions } from '../helpers/bwrap.js';

/**
 * The local sandbox tried as an attacker would, as root and as an unprivileged user (as root,
 * this file runs itself again as uid 65534): kernel settings, a symlink swapped while the file
 * tools work, files that block or never end. Every assertion counts what got through.
 */

const bwrap = await bwrapSuiteOptions();
const nested = process.env.TRAJ_ATTACKS_NESTED === '1';
const who = process.getuid?.() === 0 ? 'as root' : `as uid ${process.getuid?.()}`;
const withBwrap = () => createLocalSandbox({ kind: 'local', local: { isolation: 'bwrap' } });
const plain = () => createLocalSandbox({ kind: 'local', local: { isolation: 'none' } });

/** A host folder outside every sandbox with a secret (0600) and a file a write must not reach. */
function hostFolder(): { folder: string; secret: string; marker: string; target: string } {
  const folder = mkdtempSync(join(tmpdir(), 'traj-attack-host-'));
  const marker = `HOST-SECRET-${process.pid}-${Date.now()}`;
  const secret = join(folder, 'secret.txt');
  writeFileSync(secret, marker);
  chmodSync(secret, 0o600);
  const target = join(folder, 'target.txt');
  writeFileSync(target, 'untouched');
  return { folder, secret, marker, target };
}

/**
 * The background swapper, a tight Perl loop of renames: `x` flips between a regular file and a
 * link to the host secret, `d` between a folder inside and a link to the host folder.
 */
function swapperScript(host: { folder: string; secret: string }): string {
  const loop = [
    'while (1) {',
    `  symlink("${host.secret}", "x.new"); rename("x.new", "x");`,
    '  open(my $f, ">", "x.new"); print $f "inside"; close($f); rename("x.new", "x");',
    `  symlink("${host.folder}", "d.new"); rename("d.new", "d");`,
    '  symlink("realdir", "d.new"); rename("d.new", "d");',
    '}',
  ].join(' ');
  return [
    'printf inside > real.txt; mkdir -p realdir; printf inside > realdir/secret.txt; printf inside > realdir/target.txt',
    `(perl -e '${loop}') >/dev/null 2>&1 &`,
    'sleep 0.2',
  ].join('\n');
}

function runRaceAttack(label: string, make: () => Promise<Sandbox>): void {
  it(`${label}: a symlink swapper plus 200 reads and 200 writes gives 0 host reads and 0 writes outside`, async () => {
    const host = hostFolder();
    const box = await make();
    const tally = { hostReads: 0, insideReads: 0, refused: 0, writes: 0 };
    try {
      await box.exec(swapperScript(host), { timeoutMs: 10_000 });
      for (let round = 0; round < 100; round++) {
        for (const path of ['x', 'd/secret.txt']) {
          const text = await box.readFile(path).then(String, () => undefined);
          if (text === undefined) tally.refused++;
          else if (text.includes(host.marker)) tally.hostReads++;
          else tally.insideReads++;
        }
        for (const path of ['x', 'd/target.txt']) {
          await box.writeFile(path, `payload ${round}`).then(
            () => tally.writes++,
            () => tally.refused++,
          );
        }
      }
    } finally {
      await box.dispose();
    }
    const outside = readdirSync(host.folder).sort();
    const target = readFileSync(host.target, 'utf8');
    rmSync(host.folder, { recursive: true, force: true });
    assert.equal(tally.hostReads, 0, `host reads: ${JSON.stringify(tally)}`);
    assert.equal(target, 'untouched', 'the host file was written through a swapped link');
    assert.deepEqual(outside, ['secret.txt', 'target.txt'], 'a file was created outside the sandbox');
    // The attack ran: some calls met the regular file, some met the link.
    assert.ok(tally.insideReads > 0 && tally.writes > 0, JSON.stringify(tally));
    assert.ok(tally.refused > 0, `the swapper never showed a link: ${JSON.stringify(tally)}`);
  });
}

function runBlockingFileAttacks(label: string, make: () => Promise<Sandbox>): void {
  // Before the fix a FIFO blocked the read for good: the timeout turns that into a failure.
  it(`${label}: reading a FIFO, a socket or a device fails at once, naming what it is`, {
    timeout: 60_000,
  }, async () => {
    const box = await make();
    const server = createServer();
    try {
      await box.exec('mkfifo pipe && ln -s /dev/zero zero');
      await new Promise<void>((resolve) => server.listen(join(box.workdir, 'socket'), resolve));
      if (process.getuid?.() === 0) execFileSync('mknod', [join(box.workdir, 'device'), 'c', '1', '5']);
      for (const [path, code] of [
        ['pipe', 'not_regular_file'],
        ['socket', 'not_regular_file'],
        ['zero', 'path_escape'],
        ['/dev/zero', 'path_escape'],
        ...(process.getuid?.() === 0 ? [['device', 'not_regular_file']] : []),
      ] as const) {
        await assert.rejects(box.readFile(path), { code }, path);
      }
      await assert.rejects(box.writeFile('pipe', 'x'), { code: 'not_regular_file' }, 'a FIFO with no reader');
    } finally {
      server.close();
      await box.dispose();
    }
  });

  it(`${label}: a link through a missing folder that climbs out with .. is refused by every path check`, async () => {
    const box = await make();
    try {
      await box.exec("ln -s 'missing/../../../../../etc' climb && mkdir -p real && ln -s ../real/../.. up");
      for (const path of ['climb/passwd', 'climb', 'up/etc/passwd']) {
        await assert.rejects(box.resolvePath(path), { code: 'path_escape' }, path);
        // A read stops where the kernel would, at the missing folder; a write makes it and then climbs.
        await assert.rejects(box.readFile(path), (error: { code?: string }) =>
          ['path_escape', 'not_found'].includes(error.code ?? ''),
        );
        await assert.rejects(box.writeFile(path, 'x'), { code: 'path_escape' }, path);
      }
    } finally {
      await box.dispose();
    }
  });

  it(`${label}: three reads of a 2 GB sparse file are refused unread, RSS within 50 MB`, async () => {
    const box = await make();
    try {
      await box.exec('truncate -s 2G big');
      const before = process.memoryUsage().rss;
      const results = await Promise.allSettled([box.readFile('big'), box.readFile('big'), box.readFile('big')]);
      const grown = process.memoryUsage().rss - before;
      for (const result of results) {
        assert.equal(result.status, 'rejected');
        assert.match(String(result.reason), /2147483648 bytes, over the \d+-byte limit/);
      }
      assert.ok(grown < 50 * 1024 * 1024, `RSS grew ${grown} bytes`);
    } finally {
      await box.dispose();
    }
  });
}

/** Writes every readable file under /proc/sys and /sys back with its own value; prints what it wrote. */
const WRITE_BACK = [
  'tried=0',
  'for f in $(find /proc/sys /sys -type f 2>/dev/null); do',
  '  v=$(cat "$f" 2>/dev/null) || continue',
  '  tried=$((tried+1))',
  '  if (printf "%s\\n" "$v" > "$f") 2>/dev/null; then echo "WROTE $f"; fi',
  'done',
  'echo "TRIED $tried"',
  '(echo h > /proc/sysrq-trigger) 2>/dev/null && echo "WROTE /proc/sysrq-trigger"',
  'true',
].join('\n');

async function assertKernelReadOnly(box: Sandbox): Promise<void> {
  const { stdout } = await box.exec(WRITE_BACK, { timeoutMs: 120_000 });
  const wrote = stdout.split('\n').filter((line) => line.startsWith('WROTE'));
  assert.deepEqual(wrote, [], 'kernel settings written from the sandbox');
  assert.ok(Number(/TRIED (\d+)/.exec(stdout)?.[1]) > 100, `too few settings tried: ${stdout.slice(-200)}`);
}

describe(`local+bwrap under attack, ${who}`, bwrap, () => {
  it('no file under /proc/sys or /sys takes a write, even of its current value', async () => {
    const box = await withBwrap();
    try {
      await assertKernelReadOnly(box);
      const { stdout } = await box.exec('id -u; grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status; unshare -U true');
      const [uid] = stdout.split('\n');
      if (process.getuid?.() === 0) assert.notEqual(uid, '0', 'as root, commands run as an unprivileged user');
      assert.match(stdout, /NoNewPrivs:\s+1/);
      assert.match(stdout, /Seccomp:\s+2/, 'a seccomp filter is loaded');
    } finally {
      await box.dispose();
    }
  });

  if (process.getuid?.() === 0) {
    it('a root-owned --workdir keeps root inside, and still no kernel setting takes a write', async () => {
      const folder = mkdtempSync(join(tmpdir(), 'traj-attack-workdir-'));
      const box = await createLocalSandbox({ kind: 'local', hostFolder: folder, local: { isolation: 'bwrap' } });
      try {
        assert.equal((await box.exec('id -u')).stdout, '0\n');
        await assertKernelReadOnly(box);
        const mounted = await box.exec('mount -t tmpfs none /tmp');
        assert.notEqual(mounted.exitCode, 0, 'mount is refused');
      } finally {
        await box.dispose();
        rmSync(folder, { recursive: true, force: true });
      }
    });
  }

  it("files traj writes before and after the first command are the command user's to change", async () => {
    const box = await withBwrap();
    try {
      await box.writeFile('before/a.txt', 'one\n');
      const first = await box.exec('echo two >> before/a.txt && touch before/b && mkdir before/c && id -u');
      assert.equal(first.exitCode, 0, first.stderr);
      await box.writeFile('after/d.txt', 'three\n');
      // A new name straight in the root: the one-open write.
      await box.writeFile('top.txt', 'five\n');
      const second = await box.exec(
        'echo four >> after/d.txt && echo six >> top.txt && touch after/e && stat -c %u before/a.txt after/d.txt top.txt',
      );
      assert.equal(second.exitCode, 0, second.stderr);
      const [, ...owners] = [first.stdout.trim(), ...second.stdout.trim().split('\n')];
      for (const owner of owners) assert.equal(owner, first.stdout.trim(), 'owned by the user commands run as');
    } finally {
      await box.dispose();
    }
  });

  runRaceAttack('local+bwrap', withBwrap);
  runBlockingFileAttacks('local+bwrap', withBwrap);

  if (process.getuid?.() === 0 && !nested) {
    it('the same attacks hold when traj runs as an unprivileged user (this file again, as uid 65534)', async () => {
      await runFileAsNobody(import.meta.url, 'TRAJ_ATTACKS_NESTED', {
        title: /under attack, as uid 65534/,
        passes: 5,
        timeoutMs: 300_000,
      });
    });
  }
});

describe(`local+none under attack, ${who}`, () => {
  runRaceAttack('local+none', plain);
  runBlockingFileAttacks('local+none', plain);
});
