import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Sandbox } from '../../src/sandbox/index.js';
import { callTool, errorOf, toolContext } from '../tools/tool-context.js';

/**
 * The behaviour every sandbox backend must show, registered as node:test tests. Each test talks
 * to the sandbox only through the interface: paths inside it come from `sandbox.workdir`, and
 * process checks run `ps` inside the sandbox, so the same suite runs unchanged against any
 * backend (`runSandboxContract('docker', ...)` as well as `'local'`).
 *
 * Path semantics checked here: `upload(local, remote)` and `download(remote, local)` put the
 * file or directory tree AT the destination path (creating parents), like `cp -r src dest`
 * with a fresh `dest`.
 */
export function runSandboxContract(backendName: string, create: () => Promise<Sandbox>): void {
  describe(`sandbox contract: ${backendName}`, () => {
    let sandbox: Sandbox;
    let hostDir: string;

    before(async () => {
      sandbox = await create();
      hostDir = await mkdtemp(join(tmpdir(), 'traj-contract-host-'));
    });

    after(async () => {
      await sandbox?.dispose();
      if (hostDir) await rm(hostDir, { recursive: true, force: true });
    });

    it('has an id and an absolute workdir where commands start', async () => {
      assert.ok(sandbox.id.length > 0);
      assert.ok(sandbox.workdir.startsWith('/'), `workdir ${sandbox.workdir} is not absolute`);
      const result = await sandbox.exec('pwd');
      assert.equal(result.stdout.trim(), sandbox.workdir);
    });

    it('exec returns stdout, stderr and the exit code', async () => {
      const result = await sandbox.exec('echo out; echo err >&2; exit 3');
      assert.equal(result.stdout, 'out\n');
      assert.equal(result.stderr, 'err\n');
      assert.equal(result.exitCode, 3);
      assert.equal(result.timedOut, false);
      assert.equal((await sandbox.exec('true')).exitCode, 0);
    });

    it('exec honours the cwd option, relative or absolute inside the sandbox', async () => {
      assert.equal((await sandbox.exec('mkdir -p cwd-test/inner')).exitCode, 0);
      const relativeCwd = await sandbox.exec('pwd', { cwd: 'cwd-test/inner' });
      assert.equal(relativeCwd.stdout.trim(), `${sandbox.workdir}/cwd-test/inner`);
      const absoluteCwd = await sandbox.exec('pwd', { cwd: `${sandbox.workdir}/cwd-test` });
      assert.equal(absoluteCwd.stdout.trim(), `${sandbox.workdir}/cwd-test`);
    });

    it('exec passes the env option to the command verbatim', async () => {
      const value = `a b $HOME "q" 'x'`;
      const result = await sandbox.exec('printf %s "$TRAJ_CONTRACT_VALUE"', { env: { TRAJ_CONTRACT_VALUE: value } });
      assert.equal(result.stdout, value);
    });

    it('exec feeds stdin, and a command reading stdin without any gets end-of-file', async () => {
      const fed = await sandbox.exec('cat; echo "[done]"', { stdin: 'line one\nline two\n' });
      assert.equal(fed.stdout, 'line one\nline two\n[done]\n');
      const empty = await sandbox.exec('cat; echo "[done]"', { timeoutMs: 20_000 });
      assert.equal(empty.timedOut, false);
      assert.equal(empty.stdout, '[done]\n');
    });

    it('a timeout kills the command and its children', async () => {
      const marker = uniqueSleep();
      const result = await sandbox.exec(`sleep ${marker} & sleep ${marker}; echo never`, { timeoutMs: 1_000 });
      assert.equal(result.timedOut, true);
      assert.notEqual(result.exitCode, 0);
      assert.doesNotMatch(result.stdout, /never/);
      assert.deepEqual(await processesMatching(sandbox, marker), []);
    });

    it('an abort signal kills the command and its children', async () => {
      const marker = uniqueSleep();
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), 500);
      const result = await sandbox.exec(`sleep ${marker} & sleep ${marker}; echo never`, {
        signal: controller.signal,
        timeoutMs: 60_000,
      });
      clearTimeout(timer);
      assert.equal(result.aborted, true);
      assert.equal(result.timedOut, false);
      assert.doesNotMatch(result.stdout, /never/);
      assert.deepEqual(await processesMatching(sandbox, marker), []);
    });

    it('output beyond maxOutputBytes is dropped and the truncation noted', async () => {
      const result = await sandbox.exec("head -c 100000 /dev/zero | tr '\\0' a; echo tail-end >&2", {
        maxOutputBytes: 1_000,
      });
      assert.equal(result.exitCode, 0);
      assert.ok(result.stdout.startsWith('a'.repeat(1_000)));
      assert.ok(!result.stdout.includes('a'.repeat(1_001)), 'more than maxOutputBytes kept');
      assert.match(result.stdout, /truncated/i);
      assert.equal(result.stderr, 'tail-end\n');
    });

    it('writeFile and readFile round-trip text', async () => {
      const text = 'héllo wörld\nsecond line ✓\n';
      await sandbox.writeFile('text.txt', text);
      assert.equal((await sandbox.readFile('text.txt')).toString('utf8'), text);
      assert.equal((await sandbox.exec('cat text.txt')).stdout, text);
      await sandbox.writeFile(`${sandbox.workdir}/absolute.txt`, 'by absolute path');
      assert.equal((await sandbox.readFile('absolute.txt')).toString('utf8'), 'by absolute path');
    });

    it('writeFile and readFile round-trip all 256 byte values', async () => {
      const bytes = Buffer.from(Array.from({ length: 512 }, (_, index) => index % 256));
      await sandbox.writeFile('binary.bin', bytes);
      const back = await sandbox.readFile('binary.bin');
      assert.ok(Buffer.isBuffer(back));
      assert.deepEqual(back, bytes);
      assert.equal((await sandbox.exec('wc -c < binary.bin')).stdout.trim(), '512');
    });

    it('writeFile creates missing parent folders', async () => {
      await sandbox.writeFile('deep/er/still/file.txt', 'nested');
      const result = await sandbox.exec('cat deep/er/still/file.txt');
      assert.equal(result.stdout, 'nested');
    });

    it('writeFile replaces an existing file', async () => {
      await sandbox.writeFile('replace.txt', 'a much longer first version');
      await sandbox.writeFile('replace.txt', 'short');
      assert.equal((await sandbox.readFile('replace.txt')).toString(), 'short');
    });

    it('readFile of a missing file rejects with an error naming the path', async () => {
      await assert.rejects(sandbox.readFile('no/such/missing-file.txt'), (error: Error) => {
        assert.match(error.message, /missing-file\.txt/);
        assert.match(error.message, /no such file|not found|does not exist/i);
        return true;
      });
    });

    it('upload and download a single file', async () => {
      const source = join(hostDir, 'single.txt');
      await writeFile(source, 'single file content\n');
      await sandbox.upload(source, 'uploads/single-copy.txt');
      assert.equal((await sandbox.exec('cat uploads/single-copy.txt')).stdout, 'single file content\n');

      await sandbox.writeFile('made-inside.txt', 'from the sandbox');
      const target = join(hostDir, 'downloads', 'made-inside.txt');
      await sandbox.download('made-inside.txt', target);
      assert.equal(await readFile(target, 'utf8'), 'from the sandbox');
    });

    it('upload and download a directory tree', async () => {
      const tree = join(hostDir, 'tree');
      const files: Record<string, Buffer> = {
        'a.txt': Buffer.from('alpha\n'),
        'sub/b.bin': Buffer.from(Array.from({ length: 256 }, (_, index) => index)),
        'sub/deeper/c.txt': Buffer.from('gamma\n'),
        'sub/deeper/empty.txt': Buffer.alloc(0),
      };
      for (const [path, content] of Object.entries(files)) {
        await mkdir(join(tree, path, '..'), { recursive: true });
        await writeFile(join(tree, path), content);
      }
      await sandbox.upload(tree, 'project/tree');
      const listed = await sandbox.exec('find . -type f | sort', { cwd: 'project/tree' });
      assert.equal(
        listed.stdout,
        `${Object.keys(files)
          .sort()
          .map((path) => `./${path}`)
          .join('\n')}\n`,
      );
      assert.deepEqual(await sandbox.readFile('project/tree/sub/b.bin'), files['sub/b.bin']);

      assert.equal((await sandbox.exec('echo added > project/tree/sub/added.txt')).exitCode, 0);
      const back = join(hostDir, 'back');
      await sandbox.download('project/tree', back);
      const expected = { ...files, 'sub/added.txt': Buffer.from('added\n') };
      assert.deepEqual(
        await readTree(back),
        Object.fromEntries(Object.entries(expected).sort(([a], [b]) => a.localeCompare(b))),
      );
    });

    it('dispose is idempotent and later calls fail', async () => {
      const other = await create();
      assert.equal((await other.exec('echo alive')).stdout, 'alive\n');
      await other.dispose();
      await other.dispose();
      await assert.rejects(other.exec('echo after'));
    });
  });
}

/** A sleep duration no other test or process uses, so `ps` can find exactly our processes. */
function uniqueSleep(): string {
  return `${randomInt(3_000, 9_000)}.${randomInt(100_000, 999_999)}`;
}

/** Command lines of processes inside the sandbox that run `sleep <marker>` (zombies excluded). */
async function processesMatching(sandbox: Sandbox, marker: string): Promise<string[]> {
  let found: string[] = [];
  // A killed process can take a moment to leave the process table; look a few times.
  for (let attempt = 0; attempt < 20; attempt++) {
    const result = await sandbox.exec('ps -eo stat=,args=');
    assert.equal(result.exitCode, 0, `ps failed: ${result.stderr}`);
    found = result.stdout
      .split('\n')
      .filter((line) => line.includes(`sleep ${marker}`) && !line.trim().startsWith('Z'));
    if (found.length === 0) return found;
    await new Promise((done) => setTimeout(done, 100));
  }
  return found;
}

async function readTree(root: string): Promise<Record<string, Buffer>> {
  const out: Record<string, Buffer> = {};
  const walk = async (directory: string): Promise<void> => {
    for (const entry of await readdir(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if ((await stat(path)).isFile()) out[relative(root, path)] = await readFile(path);
    }
  };
  await walk(root);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** Settings an isolation test may ask of a fresh sandbox. */
export interface IsolationSettings {
  network?: boolean;
  pidsLimit?: number;
}

/**
 * What a sandbox mode promises about isolation; every `true` is tried hard below, every `false`
 * is registered as a skipped test saying that the mode does not promise it (README's table).
 */
export interface IsolationPromises {
  /** No /proc/PID/environ a command can see holds a secret of traj's environment. */
  noSecretInAnyEnviron: boolean;
  /** `setsid`, `setsid -f`, a SIGTERM-trapping child and a double fork all die with dispose. */
  noSurvivors: boolean;
  /** With network off, not even the host's loopback answers. */
  networkOff: boolean;
  /** A fork storm stops at the sandbox's process limit. */
  processLimit: boolean;
}

/** How the test can run a probe in a traj process whose environment holds planted secrets. */
export type SecretProbe = (command: string, secrets: Record<string, string>) => Promise<string>;

export function runIsolationContract(
  mode: string,
  create: (settings?: IsolationSettings) => Promise<Sandbox>,
  promises: IsolationPromises,
  probeWithSecrets: SecretProbe,
): void {
  // A mode registers only the tests of what it promises (README: isolation), so nothing is skipped.

  describe(`isolation contract: ${mode}`, () => {
    let hostDir: string;
    before(async () => {
      hostDir = await mkdtemp(join(tmpdir(), 'traj-isolation-host-'));
    });
    after(async () => {
      if (hostDir) await rm(hostDir, { recursive: true, force: true });
    });

    it('search_files cannot search outside the sandbox (absolute, .., /, a symlink out)', async () => {
      await writeFile(join(hostDir, 'config.ini'), 'db_password=hunter2-outside\n');
      const sandbox = await create();
      try {
        await sandbox.exec(`ln -s ${hostDir} link-out`);
        for (const path of [hostDir, `${hostDir}/config.ini`, '../../../..', '/', 'link-out']) {
          for (const target of ['content', 'files'] as const) {
            const outcome = await callTool(
              'search_files',
              { pattern: target === 'content' ? 'hunter2' : 'config*', path, target },
              toolContext(sandbox),
            );
            // A refusal names the path it refused; a result must name neither the file nor its content.
            assert.doesNotMatch(
              outcome.content,
              outcome.ok ? /hunter2-outside|config\.ini/ : /hunter2-outside/,
              `search_files ${target} in '${path}' saw the host file`,
            );
          }
        }
        const refused = await callTool('search_files', { pattern: 'hunter2', path: hostDir }, toolContext(sandbox));
        if (sandbox.kind === 'local') assert.match(errorOf(refused).error, /outside the sandbox workdir/);
      } finally {
        await sandbox.dispose();
      }
    });

    it('a write through a hard link to a file outside is refused or impossible', async () => {
      const outside = join(hostDir, 'victim.txt');
      await writeFile(outside, 'original\n');
      const sandbox = await create();
      try {
        const link = await sandbox.exec(`ln ${outside} hard-link`);
        if (link.exitCode === 0) {
          // The link could be made (plain processes): every way of writing it must refuse.
          assert.match(
            errorOf(await callTool('write_file', { path: 'hard-link', content: 'overwritten\n' }, toolContext(sandbox)))
              .error,
            /hard links/,
          );
          assert.match(
            errorOf(
              await callTool(
                'patch',
                { mode: 'replace', path: 'hard-link', old_string: 'original', new_string: 'patched' },
                toolContext(sandbox),
              ),
            ).error,
            /hard links/,
          );
          await assert.rejects(sandbox.writeFile('hard-link', 'overwritten\n'), /hard links/);
        } else {
          // Impossible: the outside file is not in the sandbox's view (or on another mount).
          assert.match(link.stderr, /No such file|cross-device|Invalid cross-device|not permitted/i);
        }
        assert.equal(await readFile(outside, 'utf8'), 'original\n');
      } finally {
        await sandbox.dispose();
      }
    });

    if (promises.noSecretInAnyEnviron)
      it('no secret of traj’s environment is readable from any /proc/*/environ a command sees', async () => {
        const secrets = {
          OPENAI_API_KEY: `sk-planted-${randomInt(1e9)}`,
          HF_TOKEN: `hf_planted_${randomInt(1e9)}`,
          AWS_SECRET_ACCESS_KEY: `aws-planted-${randomInt(1e9)}`,
        };
        const marker = Object.values(secrets).join('|');
        const output = await probeWithSecrets(
          `n=0; for f in /proc/[0-9]*/environ; do n=$((n+1)); if grep -aqE '${marker}' "$f" 2>/dev/null; then echo "LEAK $f"; fi; done; echo "read $n"`,
          secrets,
        );
        assert.match(output, /read [1-9]/, `the probe read no environ: ${output}`);
        assert.doesNotMatch(output, /LEAK/);
      });

    if (promises.noSurvivors)
      it('setsid, setsid -f, a SIGTERM-trapping child and a double fork all die with dispose', async () => {
        const marker = uniqueSleep();
        const sandbox = await create();
        const escapes = [
          `setsid sleep ${marker} &`,
          `setsid -f sleep ${marker}`,
          `(trap '' TERM HUP; exec -a trapper sleep ${marker}) &`,
          `(trap '' TERM; sleep ${marker}) & disown`,
          `( ( sleep ${marker} & ) & )`,
          `nohup sleep ${marker} >/dev/null 2>&1 &`,
        ].join('\n');
        const started = await sandbox.exec(`${escapes}\necho started`, { timeoutMs: 30_000 });
        assert.equal(started.stdout, 'started\n');
        assert.ok((await hostProcessesMatching(marker)) >= 5, 'the escapes must run before dispose');
        await sandbox.dispose();
        assert.equal(await hostProcessesMatching(marker, 0), 0, 'a process outlived dispose');
      });

    if (promises.networkOff)
      it('with network off no address answers, the host’s loopback included', async () => {
        const server = createServer((socket) => socket.end('hello from the host\n'));
        await new Promise<void>((done) => server.listen(0, '0.0.0.0', done));
        const port = (server.address() as AddressInfo).port;
        try {
          const probe = `timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}; cat <&3' 2>&1; echo "exit=$?"`;
          const off = await create({ network: false });
          try {
            const result = await off.exec(probe, { timeoutMs: 20_000 });
            assert.doesNotMatch(result.stdout, /hello from the host/);
            assert.doesNotMatch(result.stdout, /exit=0/);
            const interfaces = await off.exec("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
            assert.equal(interfaces.stdout.trim(), 'lo');
          } finally {
            await off.dispose();
          }
          if (mode.startsWith('local')) {
            // The same probe with the network on reaches the server: the check above can fail.
            const on = await create({ network: true });
            try {
              assert.match((await on.exec(probe, { timeoutMs: 20_000 })).stdout, /hello from the host/);
            } finally {
              await on.dispose();
            }
          }
        } finally {
          server.close();
        }
      });

    if (promises.processLimit)
      it('a fork storm is held by the process limit', async () => {
        const limit = 48;
        const sandbox = await create({ pidsLimit: limit });
        try {
          // Bounded: at most 300 children, each gone after 3 s; it counts the forks that succeeded.
          const storm = `perl -e 'my $n = 0; for (1 .. 300) { my $pid = fork; last unless defined $pid; if (!$pid) { sleep 3; exit 0 } $n++ } print "forked $n\\n"; 1 while wait > 0'`;
          const result = await sandbox.exec(storm, { timeoutMs: 60_000 });
          const forked = Number(/forked (\d+)/.exec(result.stdout)?.[1]);
          assert.ok(Number.isInteger(forked), `no count: ${result.stdout} ${result.stderr}`);
          assert.ok(forked < limit, `${forked} processes forked past a limit of ${limit}`);
          assert.ok(forked > 5, `the storm should get some way: ${forked}`);
          assert.equal((await sandbox.exec('echo still-alive')).stdout, 'still-alive\n');
        } finally {
          await sandbox.dispose();
        }
      });
  });
}

/** Live host processes running `sleep <marker>` (every backend's processes are host processes). */
async function hostProcessesMatching(marker: string, want?: number): Promise<number> {
  let count = 0;
  for (let attempt = 0; attempt < 30; attempt++) {
    const { stdout } = await promisify(execFile)('ps', ['-eo', 'stat=,args=']);
    count = stdout.split('\n').filter((line) => line.includes(marker) && !line.trim().startsWith('Z')).length;
    if (want === undefined || count === want) return count;
    await new Promise((done) => setTimeout(done, 100));
  }
  return count;
}
