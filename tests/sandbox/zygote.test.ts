import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLocalSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { zygoteOptions } from '../../src/sandbox/bwrap.js';
import { NamespaceSession } from '../../src/sandbox/namespace-session.js';
import { runInProcessGroup } from '../../src/sandbox/process-group.js';
import { Zygote, type ZygoteSpec } from '../../src/sandbox/zygote.js';
import { ZYGOTE_SCRIPT } from '../../src/sandbox/zygote-script.js';
import { runFileAsNobody } from '../helpers/as-nobody.js';
import { bwrapSuiteOptions } from '../helpers/bwrap.js';

/**
 * The zygote (zygote-script.ts) forks every sandbox of a run from one process that holds
 * capabilities and sees every sandbox folder. Tried as an attacker in one sandbox would: reach
 * the zygote, another sandbox, or anything shared. As root, this file runs itself again as uid
 * 65534, so the same holds when traj is an unprivileged user.
 */

const bwrap = await bwrapSuiteOptions();
const nested = process.env.TRAJ_ZYGOTE_NESTED === '1';
const who = process.getuid?.() === 0 ? 'as root' : `as uid ${process.getuid?.()}`;
const sandbox = (network = false) => createLocalSandbox({ kind: 'local', local: { isolation: 'bwrap', network } });

async function run(box: Sandbox, command: string): Promise<string> {
  const result = await box.exec(command);
  return `${result.stdout}${result.stderr}`;
}

/** Pids of processes whose command line matches `pattern` exactly (pgrep -f -x), none when pgrep finds none. */
function pids(pattern: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', '-x', pattern], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** This process's spawn hosts (spawn-host.ts), which start every command of its sandboxes. */
function spawnHosts(): number[] {
  const found = spawnSync('pgrep', ['-f', String.raw`/spawn-host\.js$`], { encoding: 'utf8' }).stdout;
  return found.split('\n').filter(Boolean).map(Number).filter(ours);
}

/** What each open descriptor of `pid` is (`pipe:[INODE]` for a pipe), gone ones left out. */
function descriptorTargets(pid: number): string[] {
  return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/${pid}/fd/${fd}`)];
    } catch {
      return [];
    }
  });
}

/** Whether `pid` descends from this process (another test file's zygotes are not ours to kill). */
function ours(pid: number): boolean {
  for (let current = pid; current > 1; ) {
    if (current === process.pid) return true;
    const stat = readFileSync(`/proc/${current}/stat`, 'utf8');
    current = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  }
  return false;
}

describe(`the sandbox zygote, ${who}`, bwrap, () => {
  it('nothing one sandbox writes anywhere it can is seen by another, and neither sees the other’s folder', async () => {
    const [first, second] = await Promise.all([sandbox(), sandbox()]);
    try {
      const places = ['/tmp', '/var/tmp', '/run', '/dev/shm', first.workdir];
      const wrote = await run(
        first,
        places.map((place) => `touch ${place}/zygote-mark 2>/dev/null && echo WROTE ${place}`).join('; '),
      );
      assert.equal(wrote.match(/^WROTE /gm)?.length, places.length, wrote);
      // Everything else the shared view holds takes no write at all.
      const shared = ['/', '/dev', '/.traj', '/etc', '/usr', '/proc/sys/kernel'];
      const refused = await run(
        first,
        shared.map((place) => `touch ${place}/zygote-mark 2>/dev/null && echo WROTE ${place}`).join('; '),
      );
      assert.doesNotMatch(refused, /WROTE/);
      const seen = await run(
        second,
        [
          ...places.map((place) => `test -e ${place}/zygote-mark && echo SEEN ${place}`),
          `test -e ${first.workdir} && echo SEEN-FOLDER`,
          'ls -a /tmp',
          'ls /.traj 2>&1',
        ].join('; '),
      );
      assert.doesNotMatch(seen, /SEEN/);
      // The second sees its own folder in /tmp and nothing else of the host's or the other's.
      const listed = seen.split('\n').filter((line) => /^traj-sbx-/.test(line));
      assert.deepEqual(listed, [second.workdir.split('/').at(-1)]);
      assert.match(seen, /Permission denied/, 'the folder holding every sandbox folder is covered');
    } finally {
      await Promise.all([first.dispose(), second.dispose()]);
    }
  });

  it('a command sees no zygote, cannot trace or open its init, and holds no capability', async () => {
    const box = await sandbox();
    try {
      const out = await run(
        box,
        [
          'ps -eo pid=,args=',
          'ls /proc/1/fd 2>&1',
          'grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status',
          'unshare -U true 2>&1 || echo NO-USERNS',
          'unshare -n true 2>&1 || echo NO-NETNS',
          'mount -t tmpfs none /tmp 2>&1 || echo NO-MOUNT',
        ].join('; '),
      );
      assert.doesNotMatch(out, /zygote/);
      assert.match(out, /^\s*1 traj-sandbox-init /m, 'PID 1 is the sandbox’s own init');
      assert.match(out, /ls: cannot open directory '\/proc\/1\/fd': Permission denied/);
      for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'])
        assert.match(out, new RegExp(`^${set}:\\s+0+$`, 'm'), `${set} is empty`);
      assert.match(out, /^NoNewPrivs:\s+1$/m);
      if (process.arch === 'x64') assert.match(out, /^Seccomp:\s+2$/m);
      assert.match(out, /NO-USERNS/);
      assert.match(out, /NO-NETNS/);
      assert.match(out, /NO-MOUNT/);
    } finally {
      await box.dispose();
    }
  });

  it('each sandbox has a loopback of its own: a server in one is not reachable from another', async () => {
    const [first, second] = await Promise.all([sandbox(), sandbox()]);
    try {
      const port = 18_000 + (process.pid % 1_000);
      const server = `perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => ${port}, Listen => 5, ReuseAddr => 1) or die; while ($c = $s->accept) { print $c "hello\\n"; close $c }'`;
      await first.exec(`(${server}) >/dev/null 2>&1 &`);
      const probe = `perl -MIO::Socket::INET -e '$c = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => ${port}, Timeout => 2) or do { print "REFUSED\\n"; exit }; print scalar <$c>'`;
      let own = '';
      for (let attempt = 0; attempt < 50 && !own.includes('hello'); attempt++) {
        own = await run(first, probe);
        if (!own.includes('hello')) await sleep(100);
      }
      assert.match(own, /hello/, 'the control: the server answers inside its own sandbox');
      assert.match(await run(second, probe), /REFUSED/);
    } finally {
      await Promise.all([first.dispose(), second.dispose()]);
    }
  });

  it('each init talks to the spawn host straight: the zygote keeps none of a sandbox’s pipes', async () => {
    const descriptors = () =>
      pids('traj-sandbox-zygote')
        .filter(ours)
        .map((pid) => readdirSync(`/proc/${pid}/fd`).length);
    const boxes = [await sandbox()];
    try {
      assert.equal((await boxes[0]!.exec('echo one')).stdout, 'one\n');
      const before = descriptors();
      assert.ok(before.length > 0, 'a zygote runs');
      boxes.push(...(await Promise.all([sandbox(), sandbox(), sandbox()])));
      const said = await Promise.all(boxes.map((box, index) => box.exec(`echo ${index}`)));
      assert.deepEqual(
        said.map((result) => result.stdout),
        ['0\n', '1\n', '2\n', '3\n'],
      );
      // A relaying zygote holds two pipe ends per live sandbox: three more sandboxes, six more.
      assert.deepEqual(descriptors(), before);
    } finally {
      await Promise.all(boxes.map((box) => box.dispose()));
    }
  });

  it('a persistent shell’s pipes go straight to the spawn host, else the init relays them', async () => {
    const box = await sandbox();
    try {
      const result = await box.execInShell('echo out; echo err >&2');
      assert.deepEqual([result.stdout, result.stderr], ['out\n', 'err\n']);
      // The pipe the shell writes to is the same inside and out (pipefs). As root the spawn host
      // holds its other end; as another user the init is not dumpable to it, and relays instead.
      const pipes = (await box.execInShell('readlink /proc/$$/fd/1 /proc/$$/fd/2')).stdout;
      assert.match(pipes, /^(pipe:\[\d+\]\n){2}$/, pipes);
      const held = new Set(spawnHosts().flatMap((host) => descriptorTargets(host)));
      const root = process.getuid?.() === 0;
      for (const pipe of pipes.trim().split('\n')) assert.equal(held.has(pipe), root, `the spawn host holds ${pipe}`);
      assert.equal((await box.execInShell('cat <<EOF\nfed\nEOF')).stdout, 'fed\n', 'input reaches it too');
    } finally {
      await box.dispose();
    }
  });

  it('where the spawn host may not open the pipes, the zygote relays them: output, exit code and end', async () => {
    const staging = mkdtempSync(join(tmpdir(), 'traj-zygote-relay-'));
    const spec: ZygoteSpec = { bwrap: zygoteOptions({ staging }), env: { PATH: '/usr/bin:/bin' }, seccomp: true };
    const zygote = new Zygote(spec, { direct: false });
    const open = async () => {
      const session = new NamespaceSession(
        zygote,
        { zygote: spec, network: false, reuse: false },
        { takePipes: false },
      );
      await session.ready;
      return session;
    };
    try {
      const first = await open();
      const held = () => readdirSync(`/proc/${zygote.processId}/fd`).length;
      const withOne = held();
      const second = await open();
      assert.equal(held(), withOne + 2, 'the relaying zygote holds each live sandbox’s two pipe ends');
      const result = await runInProcessGroup(
        { command: 'echo relayed; echo to-stderr >&2; exit 3', cwd: '/', env: { PATH: '/usr/bin:/bin' } },
        {},
        second.launch,
      );
      assert.deepEqual([result.exitCode, result.stdout, result.stderr], [3, 'relayed\n', 'to-stderr\n']);
      // A persistent shell's pipes, relayed by the init as well.
      const shell = second.launch({
        command: '',
        argv: ['bash'],
        keepStdin: true,
        cwd: '/',
        env: { PATH: '/usr/bin:/bin' },
      });
      let said = '';
      shell.stdout.on('data', (chunk: Buffer) => {
        said += chunk.toString();
      });
      const code = new Promise((resolve) => shell.once('exit', resolve));
      shell.write(Buffer.from('echo relayed-shell; exit 4\n'));
      assert.equal(await code, 4);
      for (let wait = 0; wait < 50 && !said; wait++) await sleep(20);
      assert.equal(said, 'relayed-shell\n');
      await Promise.all([first.close(), second.close()]);
      assert.equal(held(), withOne - 2, 'both ends are let go with the sandboxes');
    } finally {
      zygote.kill();
      rmSync(staging, { recursive: true, force: true });
    }
  });

  it('a killed zygote takes every sandbox with it, says so, and the next sandbox gets a new one', async () => {
    const box = await sandbox();
    const marker = `zygote-kill-${process.pid}`;
    try {
      await box.exec(`(exec -a ${marker} sleep 300) >/dev/null 2>&1 &`);
      // The command returns once its bash exits; the background job's exec may come a moment later.
      for (let wait = 0; wait < 50 && pids(`${marker} 300`).length === 0; wait++) await sleep(100);
      assert.equal(pids(`${marker} 300`).length, 1, 'the control: the background job runs');
      const zygotes = pids('traj-sandbox-zygote').filter(ours);
      assert.ok(zygotes.length > 0, 'a zygote runs');
      const waiting = box.exec('sleep 30');
      await sleep(200);
      for (const pid of zygotes) process.kill(pid, 'SIGKILL');
      const ended = await waiting.then(
        (result) => `${result.exitCode} ${result.stderr}`,
        (error: Error) => error.message,
      );
      assert.match(ended, /namespace exited|zygote exited/);
      for (let wait = 0; wait < 50 && pids(`${marker} 300`).length > 0; wait++) await sleep(100);
      assert.deepEqual(pids(`${marker} 300`), [], 'nothing of the sandbox outlives its zygote');
    } finally {
      await box.dispose();
    }
    const next = await sandbox();
    try {
      assert.equal((await next.exec('echo again')).stdout, 'again\n');
    } finally {
      await next.dispose();
    }
  });

  if (process.getuid?.() === 0 && !nested) {
    it('the same holds when traj runs as an unprivileged user (this file again, as uid 65534)', async () => {
      await runFileAsNobody(import.meta.url, 'TRAJ_ZYGOTE_NESTED', {
        title: /the sandbox zygote, as uid 65534/,
        passes: 4,
        timeoutMs: 120_000,
      });
    });
  }
});

it('the zygote compiles under strict and warnings (it loads neither at run time)', () => {
  assert.doesNotMatch(ZYGOTE_SCRIPT, /^\s*(use|no|require)\s/m, 'no module is loaded at run time');
  assert.doesNotMatch(ZYGOTE_SCRIPT, /\$!\{/, '%! would load Errno');
  const checked = spawnSync('perl', ['-c', '-e', `use strict; use warnings FATAL => 'all';\n${ZYGOTE_SCRIPT}`], {
    encoding: 'utf8',
  });
  assert.equal(checked.status, 0, checked.stderr);
  assert.match(checked.stderr, /syntax OK/);
});
