import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SandboxError } from '../../src/errors.js';
import type { Sandbox } from '../../src/sandbox/sandbox.js';
import type { TerminalTask } from './task-folder.js';
import { shellQuote } from '../../src/util/shell.js';
import { scriptVariables, taskPaths } from './task-paths.js';

/** Bound on a task's setup script (the shared tasks take seconds). */
export const SETUP_TIMEOUT_MS = 10 * 60_000;

/**
 * Build the task's starting state: upload environment/, run `bash setup.sh` there (as the
 * sandbox's user: root in the container), then remove the folder so the agent never sees it.
 * A failing setup is an infrastructure fault carrying the output's tail, not a 0 for the model.
 */
export async function setupTask(task: TerminalTask, sandbox: Sandbox): Promise<void> {
  const paths = taskPaths(task, sandbox);
  const environment = join(task.directory, 'environment');
  // A Harbor task's environment/ is its image's build context: nothing to upload unless it has a setup script.
  if (!existsSync(environment) || (task.layout === 'harbor' && !task.has_setup)) return;
  await sandbox.upload(environment, paths.environment);
  if (task.has_setup) {
    const result = await sandbox.exec(`cd ${shellQuote(paths.environment)} && bash setup.sh`, {
      timeoutMs: SETUP_TIMEOUT_MS,
      env: scriptVariables(paths),
    });
    if (result.exitCode !== 0 || result.timedOut) {
      const output = `${result.stdout}${result.stderr}`.trim();
      throw new SandboxError(
        `task '${task.name}': environment/setup.sh ${result.timedOut ? `timed out after ${SETUP_TIMEOUT_MS / 1000} s` : `exited with ${result.exitCode}`}; last output:\n${output.slice(-2_000)}`,
        { code: 'task_setup_failed', details: { task: task.name, exit_code: result.exitCode } },
      );
    }
  }
  const cleanup = await sandbox.exec(`rm -rf ${shellQuote(paths.environment)}`);
  if (cleanup.exitCode !== 0)
    throw new SandboxError(
      `task '${task.name}': cannot remove ${paths.environment} after setup: ${cleanup.stderr.trim()}`,
      { code: 'task_setup_failed' },
    );
}
