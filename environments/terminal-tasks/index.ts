import { join } from 'node:path';
import { z } from 'zod';
import { validate } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { defineEnvironment, type EnvironmentOptions } from '../../src/eval/environment.js';
import { sharedDir } from '../../src/util/paths.js';
import { listTaskFolders, readTaskFolder, type TerminalTask } from './task-folder.js';
import { TERMINAL_FOREGROUND_MAX_TIMEOUT } from '../../src/tools/terminal.js';
import { shellQuote } from '../../src/util/shell.js';
import { assertLocalAllowed, taskPaths } from './task-paths.js';
import { setupTask } from './task-setup.js';
import { runVerifier } from './verifier.js';

/** Time the reward gets beyond the verifier's own timeout (uploading tests/, reading the reward file). */
const REWARD_MARGIN_MS = 60_000;
/** Settings a run (flags or a bench suite) can give this environment. */
export const TerminalTasksSettingsSchema = z.strictObject({
  agent_timeout: z
    .number()
    .positive()
    .optional()
    .describe('seconds the agent gets per task (default: [agent].timeout_sec of each task.toml)'),
  verifier_timeout: z
    .number()
    .positive()
    .optional()
    .describe('seconds tests/test.sh gets (default: [verifier].timeout_sec)'),
});

export function defaultTasksDirectory(): string {
  return join(sharedDir(), 'benchmarks', 'terminal-tasks', 'dev');
}

/** The task folders of --tasks DIR (default: the shared dev split), with the run's overrides applied. */
export function loadTasks(options: EnvironmentOptions): TerminalTask[] {
  // Validated as the suite's `environment_settings:` section, so an error names the file and key path.
  const { environment_settings: settings } = validate(
    z.strictObject({ environment_settings: TerminalTasksSettingsSchema }),
    { environment_settings: options.settings ?? {} },
    options.settingsFile ?? 'terminal-tasks settings',
  );
  const directory = options.dataset ?? defaultTasksDirectory();
  const tasks = listTaskFolders(directory).map((folder) =>
    readTaskFolder(folder, {
      image: options.image,
      agentTimeoutSec: settings.agent_timeout,
      verifierTimeoutSec: settings.verifier_timeout,
    }),
  );
  if (options.sandbox) for (const task of tasks) assertLocalAllowed(task, options.sandbox);
  const names = new Map<string, string>();
  for (const task of tasks) {
    const other = names.get(task.name);
    if (other)
      throw new ConfigError(
        `two task folders are both named '${task.name}' (${other} and ${task.directory}); task names must be unique`,
        { code: 'task_duplicate' },
      );
    names.set(task.name, task.directory);
  }
  return options.limit === undefined ? tasks : tasks.slice(0, options.limit);
}

/**
 * Terminal-Bench style tasks: a folder per task (task.toml, instruction.md, environment/,
 * tests/, solution/), run in a container with the task's image and workdir, scored by the
 * task's own verifier over the rollout's sandbox. See README.md beside this file.
 */
export default defineEnvironment<TerminalTask>({
  name: 'terminal-tasks',
  version: '1',
  description: 'Terminal-Bench style shell tasks scored by their own tests',
  items: (options) => loadTasks(options),
  id: (task) => task.name,
  prompt: (task) => task.instruction,
  toolsets: ['terminal', 'file'],
  sandbox: (task) => ({
    image: task.image,
    workdir: task.workdir,
    ...(Object.keys(task.docker).length > 0 ? { docker: task.docker } : {}),
    ...(task.services.length > 0 ? { services: task.services } : {}),
    ...(task.builds.length > 0 ? { builds: task.builds } : {}),
  }),
  category: (task) => task.category ?? undefined,
  fields: (task) => ({ task: task.name, difficulty: task.difficulty, tags: task.tags, layout: task.layout }),
  agentTimeoutMs: (task) => Math.round(task.agent_timeout_sec * 1000),
  setup: (task, sandbox) => setupTask(task, sandbox),
  reward: (task, _result, context) => runVerifier(task, context),
  rewardTimeoutMs: (task) => Math.round(task.verifier_timeout_sec * 1000) + REWARD_MARGIN_MS,
  // The tests read the sandbox: `traj eval --rescore` rebuilds it (setup, then the recorded tool calls).
  rescore: 'replay',
  /** Replays solution/solve.sh from the workdir through the real terminal tool. */
  async oracle(task, context) {
    if (!task.has_solution)
      throw new ConfigError(`task '${task.name}' has no solution/solve.sh; the oracle cannot run it`, {
        code: 'oracle_missing',
      });
    const paths = taskPaths(task, context.sandbox);
    await context.sandbox.upload(join(task.directory, 'solution'), paths.solution);
    // The terminal's foreground limit (Hermes' 600 s) bounds the solution too: a longer one is refused.
    const timeout = Math.min(task.agent_timeout_sec, TERMINAL_FOREGROUND_MAX_TIMEOUT);
    const result = await context.callTool('terminal', {
      command: `bash ${shellQuote(`${paths.solution}/solve.sh`)}`,
      timeout,
    });
    const exitCode = result.ok ? (JSON.parse(result.content) as { exit_code?: unknown }).exit_code : undefined;
    return `Ran the reference solution (solution/solve.sh): ${typeof exitCode === 'number' ? `exit code ${exitCode}` : 'the terminal tool reported an error'}.`;
  },
});
