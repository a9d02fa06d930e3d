import { z } from 'zod';
import { renderTemplate } from '../template.js';
import { scorerCommon, type ScoreFunction } from './scorer.js';

export const SandboxScorerSchema = z.strictObject({
  type: z.literal('sandbox'),
  ...scorerCommon,
  command: z.string().min(1).describe("a shell command run in the rollout's sandbox after the agent (a template)"),
  exit_code: z.number().int().default(0).describe('the exit code that passes'),
  stdout: z.string().optional().describe('the exact output that passes, trimmed (a template)'),
  stdout_includes: z.string().optional().describe('text the output must contain (a template)'),
  stdout_regex: z.string().optional().describe('a regular expression the output must match'),
  score_from_stdout: z
    .boolean()
    .default(false)
    .describe('the score is the number the command prints (0..1); exit code and output checks still apply'),
  timeout_ms: z.number().int().positive().default(60_000),
});

/** Runs the command in the sandbox the agent left; every check given must hold. */
export function sandboxScorer(config: z.infer<typeof SandboxScorerSchema>, where: string): ScoreFunction {
  const regex = config.stdout_regex === undefined ? undefined : compile(config.stdout_regex, `${where}.stdout_regex`);
  return async ({ item, context }) => {
    const command = renderTemplate(config.command, item, `${where}.command`);
    const run = await context.exec(command, { timeoutMs: config.timeout_ms });
    const stdout = run.stdout.trim();
    const checks: Record<string, boolean> = { exit_code: run.exitCode === config.exit_code && !run.timedOut };
    if (config.stdout !== undefined)
      checks.stdout = stdout === renderTemplate(config.stdout, item, `${where}.stdout`).trim();
    if (config.stdout_includes !== undefined)
      checks.stdout_includes = stdout.includes(
        renderTemplate(config.stdout_includes, item, `${where}.stdout_includes`),
      );
    if (regex) checks.stdout_regex = regex.test(stdout);
    const passed = Object.values(checks).every(Boolean);
    const details = {
      command,
      exit_code: run.exitCode,
      stdout: stdout.slice(0, 2000),
      stderr: run.stderr.trim().slice(0, 2000),
      checks,
    };
    if (!config.score_from_stdout) return { score: passed ? 1 : 0, details };
    const printed = Number(stdout.split('\n').at(-1));
    if (!Number.isFinite(printed) || printed < 0 || printed > 1)
      throw new Error(
        `${where}: score_from_stdout: the command's last line '${stdout.split('\n').at(-1)}' is not a number in 0..1`,
      );
    return { score: passed ? printed : 0, details };
  };
}

function compile(pattern: string, where: string): RegExp {
  try {
    return new RegExp(pattern, 'm');
  } catch (error) {
    throw new Error(`${where}: not a valid regular expression (${(error as Error).message})`);
  }
}
