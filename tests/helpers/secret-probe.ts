import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildRoot } from '../../src/util/paths.js';

/** Run `command` in a sandbox of `mode` made by a process started with `secrets` in its environment. */
export function secretProbe(mode: string): (command: string, secrets: Record<string, string>) => Promise<string> {
  return async (command, secrets) => {
    const script = join(buildRoot(), 'tests', 'sandbox', 'secret-probe.js');
    const { stdout } = await promisify(execFile)(process.execPath, [script, mode, command], {
      env: { ...process.env, ...secrets },
      timeout: 120_000,
    });
    return stdout;
  };
}
