import { z } from 'zod';
import { defineTool } from './registry.js';
import { ProcessTable } from './process/process-table.js';
import { inSandbox } from './sandbox-failure.js';

export const TERMINAL_OUTPUT_MAX_CHARS = 50_000;
/** Share of a shortened output kept from the start; the rest comes from the end, where errors usually are. */
const HEAD_SHARE = 0.4;

export const TerminalParameters = z.object({
  command: z
    .string()
    .min(1)
    .describe('The bash command to run. Non-interactive: stdin is empty. Chain steps with && or ;.'),
  timeout: z
    .number()
    .positive()
    .max(3_600)
    .default(120)
    .describe('Seconds before the command and every process it started are killed (default 120, at most 3600).'),
  workdir: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Folder to run the command in, relative to the working directory or absolute inside the sandbox (default: the working directory).',
    ),
  background: z
    .boolean()
    .default(false)
    .describe('Start the command in the background and return its id at once; check on it with process_manage.'),
});

/** Keep the first 40% and the last 60% of `max` characters, saying how much was cut between. */
export function shortenMiddle(text: string, max = TERMINAL_OUTPUT_MAX_CHARS): string {
  if (text.length <= max) return text;
  const head = Math.floor(max * HEAD_SHARE);
  const tail = max - head;
  const omitted = text.length - head - tail;
  return `${text.slice(0, head)}\n\n[... ${omitted} characters omitted from the middle of the output ...]\n\n${text.slice(text.length - tail)}`;
}

/** stdout, then stderr on its own line when there is any. */
export function mergeOutput(stdout: string, stderr: string): string {
  if (stderr === '') return stdout;
  if (stdout === '' || stdout.endsWith('\n')) return stdout + stderr;
  return `${stdout}\n${stderr}`;
}

export const terminalTool = defineTool({
  name: 'terminal',
  toolset: 'terminal',
  version: '2',
  description:
    'Run a bash command in the sandbox and get its exit code and output (stdout, then stderr). ' +
    'Each call starts a fresh shell in the working directory: cd and variables do not carry over, so use workdir or chain with &&. ' +
    'To leave a server running, pass background: true: you get an id at once, and process_manage polls, reads the log, waits, writes to stdin or kills it. ' +
    `Output longer than ${TERMINAL_OUTPUT_MAX_CHARS} characters is shortened in the middle.`,
  parameters: TerminalParameters,
  run: async ({ command, timeout, workdir, background }, { sandbox, signal, state }) => {
    if (background) {
      const started = await inSandbox(() => ProcessTable.of(state, sandbox).start(command, workdir));
      return {
        id: started.id,
        state: 'running',
        hint: `process_manage with id '${started.id}': poll, log, wait, write or kill`,
      };
    }
    const result = await inSandbox(() =>
      sandbox.exec(command, { timeoutMs: Math.round(timeout * 1_000), cwd: workdir, signal }),
    );
    if (result.aborted) throw new Error('interrupted');
    let output = shortenMiddle(mergeOutput(result.stdout, result.stderr));
    if (!result.timedOut) return { exit_code: result.exitCode, output };
    output += `${output === '' || output.endsWith('\n') ? '' : '\n'}[timed out after ${timeout} s: the command and the processes it started were killed]`;
    return { exit_code: result.exitCode, output, timed_out: true };
  },
});
