import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * Run a test file again as uid 65534 (from root), with `flag=1` in its environment so it does not
 * recurse, and check that its suite `title` ran with no failure and at least `passes` passes.
 */
export async function runFileAsNobody(
  url: string,
  flag: string,
  expected: { title: RegExp; passes: number; timeoutMs: number },
): Promise<void> {
  const { NODE_TEST_CONTEXT: _, ...environment } = process.env;
  const result = await promisify(execFile)(
    'setpriv',
    ['--reuid=65534', '--regid=65534', '--clear-groups', '--', process.execPath, fileURLToPath(url)],
    { env: { ...environment, [flag]: '1', HOME: tmpdir() }, timeout: expected.timeoutMs },
  ).catch((error: { stdout?: string; stderr?: string }) => error);
  const out = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  assert.match(out, /^# fail 0$/m, out.slice(-3_000));
  assert.match(out, expected.title, out.slice(-3_000));
  assert.ok(Number(/^# pass (\d+)$/m.exec(out)?.[1]) >= expected.passes, out.slice(-3_000));
}
