import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { bwrapSuiteOptions } from '../helpers/bwrap.js';

const bwrap = await bwrapSuiteOptions();

/** Past the low numbers, which Node marks close-on-exec as it starts. */
const INHERITED_FD = 30;

/**
 * A traj process started with an extra open descriptor, not close-on-exec (a shell's redirection,
 * as a CI runner or a user's shell may leave one), runs `ls /proc/self/fd` in a sandbox. What the
 * command sees, one number per line.
 */
async function descriptorsSeenInside(isolation: 'bwrap' | 'none'): Promise<number[]> {
  const sandboxModule = new URL('../../src/sandbox/index.js', import.meta.url).href;
  const spawnerModule = new URL('../../src/sandbox/spawner.js', import.meta.url).href;
  const script = `
    const { createLocalSandbox } = await import(${JSON.stringify(sandboxModule)});
    const { closeSpawner } = await import(${JSON.stringify(spawnerModule)});
    const sandbox = await createLocalSandbox({ kind: 'local', local: { isolation: ${JSON.stringify(isolation)} } });
    const result = await sandbox.exec('ls /proc/self/fd');
    process.stdout.write(result.stdout);
    await sandbox.dispose();
    await closeSpawner();
  `;
  const child = spawn(
    'bash',
    ['-c', `exec "$@" ${INHERITED_FD}</dev/null`, 'bash', process.execPath, '--input-type=module', '-e', script],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const [code] = await once(child, 'exit');
  assert.equal(code, 0, output);
  return output.split('\n').filter(Boolean).map(Number);
}

/** `ls` holds one descriptor of its own (the folder it lists): at most stdio and that one. */
function assertOnlyOwnDescriptors(seen: number[]): void {
  assert.ok(seen.includes(0) && seen.includes(1) && seen.includes(2), `stdio missing: ${seen.join(' ')}`);
  assert.ok(!seen.includes(INHERITED_FD), `the inherited descriptor reached the command: ${seen.join(' ')}`);
  assert.ok(seen.length <= 4, `descriptors beyond stdio and ls's own: ${seen.join(' ')}`);
}

describe('descriptors traj inherited never reach a sandboxed command', () => {
  it('local+bwrap: only the command stdio (and ls its own folder)', bwrap, async () => {
    assertOnlyOwnDescriptors(await descriptorsSeenInside('bwrap'));
  });

  it('local+none: only the command stdio (and ls its own folder)', async () => {
    assertOnlyOwnDescriptors(await descriptorsSeenInside('none'));
  });
});
