import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { NAMESPACE_INIT_SCRIPT } from '../../src/sandbox/namespace-init.js';
import { COMPILE_INIT, zygoteSystemCalls } from '../../src/sandbox/zygote-script.js';
import { bwrapSuiteOptions } from '../helpers/bwrap.js';

/**
 * A command's exit must reach the spawn host however fast the command is. The init and the zygote
 * used to learn of exits from a SIGCHLD handler writing to a pipe; perl runs a handler only between
 * statements, so an exit that landed after the last of them and before select stayed unnoticed until
 * the next frame came in (a command then waited for its timeout's kill). On the old scripts the mask
 * test below failed every time; the stress test, a race, failed in 1 run of 6.
 */

const bwrap = await bwrapSuiteOptions();
const SIGCHLD_BIT = 1n << 16n;

function signalMask(status: string, field: 'SigBlk' | 'SigCgt'): bigint {
  const line = status.split('\n').find((entry) => entry.startsWith(`${field}:`));
  assert.ok(line, `${field} in ${status}`);
  return BigInt(`0x${line.split(/\s+/)[1]}`);
}

describe('a sandbox’s child exits', bwrap, () => {
  it('the init reads SIGCHLD as a descriptor, and its commands start with SIGCHLD unblocked', async () => {
    const box = await createLocalSandbox({ kind: 'local', local: { isolation: 'bwrap' } });
    try {
      const mine = await box.exec('cat /proc/self/status');
      const init = await box.exec('cat /proc/1/status');
      assert.equal(signalMask(mine.stdout, 'SigBlk') & SIGCHLD_BIT, 0n, 'a command inherits no blocked SIGCHLD');
      assert.equal(signalMask(init.stdout, 'SigBlk') & SIGCHLD_BIT, SIGCHLD_BIT, 'the init keeps SIGCHLD blocked');
      assert.equal(signalMask(init.stdout, 'SigCgt') & SIGCHLD_BIT, 0n, 'and has no handler that could miss it');
      const waited = await box.exec('sleep 0.05 & wait $!; echo waited $?');
      assert.equal(waited.stdout.trim(), 'waited 0');
    } finally {
      await box.dispose();
    }
  });
});

/**
 * The init run as a plain process (no namespace: its frames and exits do not need one), as the zygote
 * compiles it, driven through `exec` of /bin/true then `forget`, one after another. Four at once on
 * a 2-core machine: an init descheduled just before its select is what let the old one miss an exit.
 */
it('four inits report the exit of each of 1,000 back-to-back commands', { timeout: 120_000 }, async () => {
  const numbers = zygoteSystemCalls();
  if (!numbers) return; // no numbers written for this machine: the zygote does not run here either
  await Promise.all([1, 2, 3, 4].map(() => driveInit(numbers, 1000)));
});

async function driveInit(numbers: string, commands: number): Promise<void> {
  const harness = [
    'my ($numbers, $INIT) = @ARGV;',
    'our %SYSCALL = map { split /=/ } split /,/, $numbers;',
    'sub quit { CORE::exit($_[0]) }',
    COMPILE_INIT,
    '$INIT_MAIN->(1);',
  ].join('\n');
  const init = spawn('perl', ['-e', harness, numbers, NAMESPACE_INIT_SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
  const frames = frameReader(init.stdout);
  try {
    await frames.next('ready', 10_000);
    const env = ['PATH=/usr/bin:/bin'];
    for (let id = 1; id <= commands; id++) {
      const payload = ['/', '/bin/true', String(env.length), ...env, ''].join('\0');
      init.stdin.write(`exec ${id} ${Buffer.byteLength(payload)}\n${payload}`);
      await frames.next('started', 10_000);
      assert.equal(await frames.next('exit', 10_000, `the exit of command ${id}`), '0');
      init.stdin.write(`forget ${id} 0\n`);
    }
  } finally {
    init.kill('SIGKILL');
  }
}

/** The init's output frames (`TYPE ID LENGTH\n` then the payload), awaited one type at a time. */
function frameReader(stream: NodeJS.ReadableStream) {
  let buffer = Buffer.alloc(0);
  const arrived: { type: string; payload: string }[] = [];
  let wake: (() => void) | undefined;
  stream.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      const end = buffer.indexOf(10);
      if (end < 0) break;
      const [type = '', , length = '0'] = buffer.subarray(0, end).toString().split(' ');
      if (buffer.length < end + 1 + Number(length)) break;
      arrived.push({ type, payload: buffer.subarray(end + 1, end + 1 + Number(length)).toString() });
      buffer = buffer.subarray(end + 1 + Number(length));
    }
    wake?.();
  });
  return {
    async next(type: string, timeoutMs: number, what = type): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const index = arrived.findIndex((frame) => frame.type === type);
        if (index >= 0) return arrived.splice(index, 1)[0]!.payload;
        const left = deadline - Date.now();
        if (left <= 0) assert.fail(`${what}: no ${type} frame within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    },
  };
}
