import { SandboxError } from '../errors.js';
import { ToolFailure } from './tool-failure.js';

/** What the model can do about a sandbox refusal, by SandboxError code. */
const HINTS: Record<string, string> = {
  path_escape: 'use a path inside the working directory; relative paths start there',
  path_loop: 'the path goes through a symbolic link loop; use a different path',
  not_found: 'check the path; search_files with target "files" lists what exists',
  is_directory: 'pass a file path; search_files with target "files" lists what a folder holds',
  cwd_missing: 'create the folder first (mkdir -p) or leave workdir out',
  invalid_command: 'remove the NUL byte: a command is text',
  hard_link: 'write a new file instead (a file with several hard links may live outside the sandbox)',
};

/**
 * Run a sandbox operation for a tool: refusals the model caused (a path outside the workdir, a
 * missing file) become a ToolFailure with a hint; other faults pass through unchanged.
 */
export async function inSandbox<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof SandboxError && HINTS[error.code] !== undefined)
      throw new ToolFailure(error.message, HINTS[error.code]);
    throw error;
  }
}
