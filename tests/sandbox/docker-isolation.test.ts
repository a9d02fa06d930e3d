import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Sandbox } from '../../src/sandbox/index.js';
import { createDockerSandbox } from '../../src/sandbox/docker.js';
import { connectDocker } from '../../src/sandbox/docker-engine.js';
import { containersLabelled, dockerSuiteOptions, uniqueRunName } from '../helpers/docker.js';

const options = await dockerSuiteOptions();
const run = uniqueRunName('isolation');
const SECRET = 'sk-traj-test-secret-value-0123456789';

/** The container behind a sandbox, found by the labels it must carry. */
async function inspectByKey(key: string) {
  const [id] = await containersLabelled({ 'traj.run': run, 'traj.key': key });
  assert.ok(id, `no container labelled traj.run=${run} traj.key=${key}`);
  return (await connectDocker()).getContainer(id).inspect();
}

describe('docker sandbox isolation', options, () => {
  let sandbox: Sandbox;
  const saved = { OPENAI_API_KEY: process.env.OPENAI_API_KEY, HF_TOKEN: process.env.HF_TOKEN };

  before(async () => {
    // Host secrets that must never reach the container.
    process.env.OPENAI_API_KEY = SECRET;
    process.env.HF_TOKEN = `hf_${SECRET}`;
    sandbox = await createDockerSandbox({
      kind: 'docker',
      run,
      key: 'limits',
      env: { VISIBLE_SETTING: 'shown', GITHUB_TOKEN: SECRET },
      // Small limits so the memory and fork-bomb checks are quick on a shared 2-core machine.
      docker: { memory: '256m', pids_limit: 96 },
    });
  });

  after(async () => {
    await sandbox?.dispose();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('carries the traj labels and the isolation settings', async () => {
    const info = await inspectByKey('limits');
    const labels = info.Config.Labels;
    assert.equal(labels['traj.managed'], '1');
    assert.equal(labels['traj.run'], run);
    assert.equal(labels['traj.key'], 'limits');
    assert.equal(labels['traj.pid'], String(process.pid));
    const host = info.HostConfig;
    assert.equal(host.NetworkMode, 'none');
    assert.equal(host.Memory, 256 * 1024 ** 2);
    assert.equal(host.PidsLimit, 96);
    assert.equal(host.Init, true);
    assert.deepEqual(host.CapDrop, ['ALL']);
    assert.ok(host.CapAdd?.includes('CHOWN'));
    assert.ok(!host.CapAdd?.includes('NET_RAW'));
    assert.deepEqual(host.SecurityOpt, ['no-new-privileges']);
    assert.ok(host.Tmpfs && '/tmp' in host.Tmpfs);
    assert.equal(
      (await sandbox.exec('cat /proc/1/cmdline | tr "\\0" " "')).stdout.trim(),
      '/sbin/docker-init -- sleep infinity',
    );
  });

  it('has no route out with network none', async () => {
    const interfaces = await sandbox.exec('ls /sys/class/net');
    assert.equal(interfaces.stdout.trim(), 'lo');
    const routes = await sandbox.exec('tail -n +2 /proc/net/route');
    assert.equal(routes.stdout, '', 'the routing table must be empty');
    const curl = await sandbox.exec('curl -sS --max-time 5 http://1.1.1.1/', { timeoutMs: 20_000 });
    assert.notEqual(curl.exitCode, 0);
    assert.match(curl.stderr, /network is unreachable|couldn't connect|failed to connect/i);
    const dns = await sandbox.exec('getent hosts deb.debian.org', { timeoutMs: 20_000 });
    assert.notEqual(dns.exitCode, 0);
  });

  it('stops an allocation beyond the memory limit, and allows one below it', async () => {
    const small = await sandbox.exec('python3 -c "b = bytearray(64 * 1024 * 1024); print(\'allocated\', len(b))"', {
      timeoutMs: 60_000,
    });
    assert.equal(small.exitCode, 0, small.stderr);
    assert.match(small.stdout, /allocated 67108864/);
    const large = await sandbox.exec(
      // Touch every page, so the kernel must really provide the memory.
      "python3 -c \"b = bytearray(600 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); print('allocated')\"",
      { timeoutMs: 60_000 },
    );
    assert.equal(large.timedOut, false);
    assert.notEqual(large.exitCode, 0, 'a 600 MB allocation in a 256 MB container must fail');
    assert.doesNotMatch(large.stdout, /allocated/);
  });

  it('kills a fork bomb at the timeout, and the next command still runs', async () => {
    const bomb = await sandbox.exec('bomb() { bomb | bomb; }; bomb', { timeoutMs: 3_000 });
    assert.equal(bomb.timedOut, true);
    assert.match(bomb.stderr, /fork: retry: Resource temporarily unavailable/, 'the bomb must hit the pids limit');
    const next = await sandbox.exec('echo still-alive; ps -e --no-headers | wc -l', { timeoutMs: 30_000 });
    assert.equal(next.exitCode, 0, next.stderr);
    const [line, count] = next.stdout.trim().split('\n');
    assert.equal(line, 'still-alive');
    // init, sleep, this bash and ps (a few more while reaping): the bomb's processes are gone.
    assert.ok(Number(count) < 10, `processes left after the bomb: ${count}`);
  });

  it('kills a timed-out sleep 600 and leaves no sleep behind', async () => {
    const result = await sandbox.exec('sleep 600', { timeoutMs: 1_000 });
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, 124);
    const ps = await sandbox.exec('ps -eo args=');
    assert.doesNotMatch(ps.stdout, /sleep 600/);
  });

  it('shows no host secret, and no secret passed as env, to commands', async () => {
    const result = await sandbox.exec('env', { env: { PER_COMMAND: 'yes', HF_TOKEN: SECRET } });
    assert.match(result.stdout, /^VISIBLE_SETTING=shown$/m);
    assert.match(result.stdout, /^PER_COMMAND=yes$/m);
    assert.doesNotMatch(result.stdout, /OPENAI_API_KEY|HF_TOKEN|GITHUB_TOKEN/);
    assert.ok(!result.stdout.includes(SECRET), 'a secret value reached the container');
    const inspected = await inspectByKey('limits');
    assert.ok(!JSON.stringify(inspected.Config.Env).includes(SECRET));
  });

  it('ends a fork bomb that its command left running in the background, and the next command runs', async () => {
    // Its command exits at once: the bomb lives on without the leader the kill looks for. The
    // command ends at its timeout or when the engine closes the output the bomb inherited; either
    // way traj restarts the container (docker-fork-bomb.test.ts repeats this).
    const bomb = await sandbox.exec(':(){ :|:& };:', { timeoutMs: 5_000 });
    assert.match(bomb.stderr, /\[traj: the container was restarted/);
    const next = await sandbox.exec('echo still-alive; ps -e --no-headers | wc -l', { timeoutMs: 60_000 });
    assert.equal(next.exitCode, 0, next.stderr);
    const [line, count] = next.stdout.trim().split('\n');
    assert.equal(line, 'still-alive');
    assert.ok(Number(count) < 10, `processes left after the bomb: ${count}`);
  });
});
