import { posix } from 'node:path';
import { ConfigError } from '../../src/errors.js';
import type { Sandbox } from '../../src/sandbox/sandbox.js';
import type { TerminalTask } from './task-folder.js';

/** Where a task's parts go inside the sandbox, and the variables its scripts can read them from. */
export interface TaskPaths {
  workdir: string;
  /** environment/ during setup (removed afterwards). */
  environment: string;
  /** tests/, uploaded only after the agent finished. */
  tests: string;
  /** solution/, uploaded only for the oracle. */
  solution: string;
  /** The verifier writes verifier/reward.txt under it. */
  logs: string;
}

const LOCAL_TASK_FOLDER = '.traj-task';

/**
 * The Terminal-Bench contract in a container: /task-env, /tests, /solution, /logs. A local
 * sandbox cannot write outside its workdir, so a task that declares `local_sandbox = true`
 * (its scripts read WORKDIR/TEST_DIR/LOGS_DIR) gets the same parts under `<workdir>/.traj-task/`.
 * Other tasks hard-code container paths and running their root setup scripts on the host
 * would be unsafe: they are refused.
 */
export function taskPaths(task: TerminalTask, sandbox: Pick<Sandbox, 'kind' | 'workdir'>): TaskPaths {
  if (sandbox.kind === 'docker')
    return {
      workdir: sandbox.workdir,
      environment: '/task-env',
      tests: '/tests',
      solution: '/solution',
      logs: '/logs',
    };
  assertLocalAllowed(task, sandbox.kind);
  const base = posix.join(sandbox.workdir, LOCAL_TASK_FOLDER);
  return {
    workdir: sandbox.workdir,
    environment: `${base}/environment`,
    tests: `${base}/tests`,
    solution: `${base}/solution`,
    logs: `${base}/logs`,
  };
}

export function assertLocalAllowed(task: TerminalTask, kind: string): void {
  if (kind === 'docker' || task.local_sandbox) return;
  throw new ConfigError(
    `task '${task.name}' (${task.directory}) uses container paths (${task.workdir}, /tests, /logs) and runs its setup as root; run it with --sandbox docker, or write it for a local sandbox and set [environment] local_sandbox = true in its task.toml`,
    { code: 'task_needs_docker' },
  );
}

/** The variables every task script gets (the shared tasks ignore them; local-sandbox tasks need them). */
export function scriptVariables(paths: TaskPaths): Record<string, string> {
  return { WORKDIR: paths.workdir, TEST_DIR: paths.tests, LOGS_DIR: paths.logs, SOLUTION_DIR: paths.solution };
}
