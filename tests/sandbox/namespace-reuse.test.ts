import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { createLocalSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { pidsCgroupBase } from '../../src/sandbox/process-limit.js';
import { runFileAsNobody } from '../helpers/as-nobody.js';
import { bwrapSuiteOptions } from '../helpers/bwrap.js';

/**
 * A rollout's namespaces go to the next rollout of the run (namespace-session.ts recycle). Tried as
 * an attacker in the first rollout would: leave something behind that the next one sees, or that
 * changes what it runs. Each test asks whether the next rollout got the same namespaces (the
 * identity of its PID, mount, network and IPC namespaces): where nothing could be left, it must
 * have (else the test proves nothing); where something was, it must not have, and it sees none of it.
 * As root, this file runs itself again as uid 65534.
 */

const bwrap = await bwrapSuiteOptions();
const nested = process.env.TRAJ_REUSE_NESTED === '1';
const who = process.getuid?.() === 0 ? 'as root' : `as uid ${process.getuid?.()}`;
const sandbox = (reuse = true, network = false) =>
  createLocalSandbox({ kind: 'local', local: { isolation: 'bwrap', reuse_namespaces: reuse, network } });

async function run(box: Sandbox, command: string): Promise<string> {
  const result = await box.exec(command);
  return `${result.stdout}${result.stderr}`;
}

/** The processes in a cgroup, none when it is gone. */
function pidsIn(cgroup: string): string[] {
  try {
    return readFileSync(`${cgroup}/cgroup.procs`, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

const NAMESPACES = 'readlink /proc/self/ns/pid /proc/self/ns/mnt /proc/self/ns/net /proc/self/ns/ipc';

/** Run `attack` in one sandbox, dispose it, open the next: the namespaces of both, and what `look` says in the next. */
async function afterward(
  attack: string,
  look: string,
  { reuse = true, network = false } = {},
): Promise<{ same: boolean; seen: string; attacked: string }> {
  const first = await sandbox(reuse, network);
  let before: string;
  let attacked: string;
  try {
    before = await run(first, NAMESPACES);
    attacked = await run(first, attack);
  } finally {
    await first.dispose();
  }
  const next = await sandbox(reuse, network);
  try {
    const after = await run(next, NAMESPACES);
    return { same: after === before, seen: await run(next, look), attacked };
  } finally {
    await next.dispose();
  }
}

/** Rollouts one after another, each in a sandbox of its own: the identity of its namespaces, and what its command said. */
async function rollouts(commands: string[]): Promise<{ namespaces: string; said: string }[]> {
  const results: { namespaces: string; said: string }[] = [];
  for (const command of commands) {
    const box = await sandbox();
    try {
      results.push({ namespaces: await run(box, NAMESPACES), said: await run(box, command) });
    } finally {
      await box.dispose();
    }
  }
  return results;
}

/**
 * `stat` of each private folder, one line each: its birth time (to the ns: a file system mounted
 * later is born later; a device number is reused at once), mode and modification time. Then what
 * is in /tmp, and the rollout's folder.
 */
const PRIVATE_LOOK = 'stat -c "%.9W %a %Y" /tmp /var/tmp /run /dev/shm; ls -A /tmp; echo "$PWD"';
const privateLook = (said: string) => {
  const [tmp, varTmp, run, shm, ...rest] = said.trim().split('\n');
  return { tmp, varTmp, run, shm, born: (line?: string) => line?.split(' ')[0], rest };
};

/** A one-line Perl TCP server on 127.0.0.1:PORT, in the background, that answers `hello`. */
const server = (port: number) =>
  `perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => ${port}, Listen => 5) or die "listen: $!"; while ($c = $s->accept) { print $c "hello\\n"; close $c }'`;
const probe = (port: number) =>
  `perl -MIO::Socket::INET -e '$c = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => ${port}, Timeout => 2) or do { print "REFUSED\\n"; exit }; print "ANSWERED ", scalar <$c>'`;

describe(`reused namespaces, ${who}`, bwrap, () => {
  it('the next rollout gets them only as new: no process, file, listener or folder of the last one', async () => {
    const port = 19_000 + (process.pid % 1_000);
    const attack = [
      `(${server(port)}) >/dev/null 2>&1 &`,
      // Abstract unix sockets live in the network namespace, not in a folder.
      `(perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0); bind($s, pack("S a*", AF_UNIX, "\\0traj-reuse")) or die; listen($s, 1); sleep 300') >/dev/null 2>&1 &`,
      'setsid sleep 301 >/dev/null 2>&1 < /dev/null &',
      'nohup sh -c "trap \\"\\" TERM HUP; sleep 302" >/dev/null 2>&1 &',
      '(sleep 303 >/dev/null 2>&1 &); sleep 304 >/dev/null 2>&1 & sleep 0.2; kill -STOP $!',
      'for place in /tmp /var/tmp /run /dev/shm "$PWD"; do echo left > "$place/reuse-mark"; done',
      'sleep 0.5; echo $PWD',
      // Listening, not connected to: a connection would leave a TIME_WAIT socket, which refuses the reuse.
      `grep -c ":${port.toString(16).toUpperCase()} 00000000:0000 0A" /proc/net/tcp`,
      'ps -eo args= | grep -c "^sleep 30[1-4]"',
    ].join('\n');
    const look = [
      'ps -eo pid=,comm=',
      'for place in /tmp /var/tmp /run /dev/shm; do ls -A "$place"; done',
      'cat /tmp/*/reuse-mark 2>/dev/null',
      probe(port),
      `perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0); bind($s, pack("S a*", AF_UNIX, "\\0traj-reuse")) and print "ABSTRACT-FREE\\n"'`,
      `perl -MIO::Socket::INET -e 'IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => ${port}, Listen => 1) and print "PORT-FREE\\n"'`,
    ].join('; ');
    const { same, seen, attacked } = await afterward(attack, look);
    assert.match(attacked, /^1\n4$/m, 'the control: the server listened, and all four sleepers ran');
    assert.ok(same, 'the namespaces were reused');
    // Its init, the look's bash and its ps: nothing else.
    const processes = seen.split('\n').filter((line) => /^\s*\d+ /.test(line));
    assert.deepEqual(
      processes.map((line) => line.trim().split(/\s+/)[1]),
      ['traj-sandbox-in', 'bash', 'ps'],
      seen,
    );
    assert.doesNotMatch(seen, /reuse-mark|^left$/m);
    const folder = /^(\/\S+)$/m.exec(attacked)?.[1];
    assert.ok(folder, attacked);
    assert.doesNotMatch(seen, new RegExp(folder.split('/').at(-1)!), 'the last rollout’s folder is not there');
    assert.match(seen, /REFUSED/);
    assert.match(seen, /ABSTRACT-FREE/);
    assert.match(seen, /PORT-FREE/);
  });

  // Each leaves what outlives a process, or changes the init every command is forked from.
  const refused: [string, string, string, RegExp][] = [
    ['a System V shared memory segment', 'ipcmk -M 4096', 'ipcs -m', /0x/],
    ['a System V semaphore set', 'ipcmk -S 1', 'ipcs -s', /0x/],
    ['a System V message queue', 'ipcmk -Q', 'ipcs -q', /0x/],
    [
      'a socket in TIME_WAIT on loopback',
      `(${server(19_500 + (process.pid % 400))}) >/dev/null 2>&1 & sleep 0.5; ${probe(19_500 + (process.pid % 400))}`,
      'cat /proc/net/tcp | wc -l',
      /^([2-9]|\d{2,})$/m,
    ],
    ['a lower nice value of the init', 'renice -n 7 -p 1', 'ps -o ni= -p 1', /7/],
    ['a lower limit of the init', 'prlimit --pid 1 --nofile=64:64', 'grep "open files" /proc/1/limits', /\b64\s+64\b/],
  ];
  if (availableParallelism() > 1)
    refused.push(['the init pinned to one CPU', 'taskset -p -c 0 1', 'taskset -p 1', /mask: 1$/m]);
  if (process.arch === 'x64') {
    // mq_open(2) straight through perl's syscall: no command-line tool makes one.
    refused.push([
      'a POSIX message queue',
      `perl -e 'my $fd = syscall(240, my $name = "traj-reuse", 0102, 0600, 0); print $fd >= 0 ? "MADE\\n" : "mq_open: $!\\n"'`,
      `perl -e 'my $fd = syscall(240, my $name = "traj-reuse", 0, 0, 0); print $fd >= 0 ? "FOUND\\n" : "NONE\\n"'`,
      /FOUND/,
    ]);
  }
  for (const [what, attack, look, residue] of refused) {
    it(`${what} refuses the reuse: the next rollout gets new namespaces without it`, async () => {
      const { same, seen, attacked } = await afterward(`${attack}; ${look}`, look);
      assert.match(attacked, residue, `the control: the first rollout made ${what}`);
      assert.ok(!same, `${what} was handed on: ${seen}`);
      assert.doesNotMatch(seen, residue);
    });
  }

  it('a private folder the last rollout left exactly as it was goes on; its folder and that folder’s mount point do not', async () => {
    // The second rollout takes the first's namespaces and replaces every private folder (no record of
    // them yet); the third gets what the second left.
    const [, second, third] = await rollouts(['true', PRIVATE_LOOK, `${PRIVATE_LOOK}; ps -o args= -p 1`]);
    assert.equal(third!.namespaces, second!.namespaces, 'the namespaces were reused');
    const [before, after] = [privateLook(second!.said), privateLook(third!.said)];
    assert.match(before.tmp!, /^[1-9]\d*\.\d{9} 1777 /, 'the control: stat shows when a folder was born');
    for (const folder of ['tmp', 'varTmp', 'run', 'shm'] as const)
      assert.equal(after.born(after[folder]), before.born(before[folder]), `${folder} was kept (the same file system)`);
    // /tmp's own modification time moved: the second's folder mount point went, the third's came.
    for (const folder of ['varTmp', 'run', 'shm'] as const) assert.equal(after[folder], before[folder]);
    // In /tmp: the third rollout's own folder, no trace of the second's.
    const [listing, folder, init] = after.rest;
    assert.equal(listing, folder!.split('/').at(-1), third!.said);
    assert.equal(init, `traj-sandbox-init ${folder}`, 'its init is named after the rollout that took it');
  });

  it('a private folder the last rollout changed in any way is new for the next', async () => {
    const attack = [
      // Nothing left behind, but the folder was written: a clock tick (up to 10 ms) after the
      // handover, where a kernel without fine-grained timestamps would show it.
      'sleep 0.05; touch /tmp/gone && rm /tmp/gone',
      'echo left > /dev/shm/mark',
      // Refused as nobody (root owns the folder); allowed where the commands own it.
      'chmod 700 /var/tmp 2>/dev/null; touch -d 2001-01-01 /run 2>/dev/null',
      PRIVATE_LOOK,
    ].join('; ');
    const [, second, third] = await rollouts(['true', attack, PRIVATE_LOOK]);
    assert.equal(third!.namespaces, second!.namespaces, 'the namespaces were reused');
    const [before, after] = [privateLook(second!.said), privateLook(third!.said)];
    assert.notEqual(after.born(after.tmp), before.born(before.tmp), '/tmp was written: a new one');
    assert.notEqual(after.born(after.shm), before.born(before.shm), '/dev/shm was written: a new one');
    assert.match(after.varTmp!, /^\S+ 1777 /, third!.said);
    assert.doesNotMatch(after.run!, / 978307200$/, 'the old modification time is gone');
    assert.doesNotMatch(third!.said, /gone|mark/);
  });

  it('reuse_namespaces: false makes new namespaces for every rollout', async () => {
    assert.ok((await afterward('true', 'true')).same, 'the control: reused by default');
    assert.ok(!(await afterward('true', 'true', { reuse: false })).same);
  });

  it('with the network on (the host’s, so its sockets are not the rollout’s), they are reused as new too', async () => {
    const { same, seen } = await afterward(
      'echo left > /tmp/reuse-mark; setsid sleep 305 >/dev/null 2>&1 < /dev/null &',
      'ls -A /tmp /run; ps -eo comm=',
      { network: true },
    );
    assert.ok(same, 'the namespaces were reused');
    assert.doesNotMatch(seen, /reuse-mark|sleep/);
  });

  it('namespaces waiting for reuse end with the run, their pids cgroups removed', {
    skip: !pidsCgroupBase() && 'no pids cgroup can be made here',
  }, async () => {
    // A run of its own: one sandbox, one command, dispose (its namespaces wait for reuse), exit. In
    // a folder of the user's (--workdir): prune, which any run starts with, never removes its cgroup.
    const folder = mkdtempSync(join(tmpdir(), 'traj-reuse-workdir-'));
    const script = `
      const { createLocalSandbox } = await import(${JSON.stringify(new URL('../../src/sandbox/index.js', import.meta.url).href)});
      const { existsSync } = await import('node:fs');
      const { join, basename } = await import('node:path');
      const box = await createLocalSandbox({ kind: 'local', hostFolder: ${JSON.stringify(folder)}, local: { isolation: 'bwrap' } });
      await box.exec('true');
      await box.dispose();
      const cgroup = join(${JSON.stringify(pidsCgroupBase() ?? '')}, basename(box.workdir));
      console.log(JSON.stringify({ cgroup, held: existsSync(cgroup) }));
      process.exit(0);`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
    const { cgroup, held } = JSON.parse(stdout) as { cgroup: string; held: boolean };
    assert.ok(held, 'the control: the waiting namespaces hold their cgroup');
    for (let wait = 0; wait < 50 && existsSync(cgroup); wait++) await sleep(100);
    assert.ok(!existsSync(cgroup), `${cgroup} is left`);
    assert.deepEqual(pidsIn(cgroup), []);
    rmSync(folder, { recursive: true, force: true });
  });

  if (process.getuid?.() === 0 && !nested) {
    it('the same holds when traj runs as an unprivileged user (this file again, as uid 65534)', async () => {
      await runFileAsNobody(import.meta.url, 'TRAJ_REUSE_NESTED', {
        title: /reused namespaces, as uid 65534/,
        passes: 13,
        timeoutMs: 120_000,
      });
    });
  }
});
