import type { Sandbox } from '../sandbox/sandbox.js';
import { inSandbox } from './sandbox-failure.js';

/**
 * The confinement check of the file toolset, applied by the registry before a file tool runs
 * (search_files, and any tool added later, included): every argument named `path` must resolve
 * inside the sandbox (Sandbox.resolvePath: no `..` out, no absolute path outside, no symlink
 * pointing out). Tools marked `confinesOwnPaths` skip it: Sandbox.readFile/writeFile make the
 * same check. A refusal is a ToolFailure the model can read and fix.
 */
export async function confinePaths(args: Record<string, unknown>, sandbox: Sandbox): Promise<void> {
  for (const [name, value] of Object.entries(args)) {
    if ((name === 'path' || name.endsWith('_path')) && typeof value === 'string')
      await inSandbox(() => sandbox.resolvePath(value));
  }
}
