import { z } from 'zod';
import { defineTool, type Tool, type ToolContext, type ToolOutput } from './registry.js';
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

const BACKGROUND_HINT =
  'To leave a server running, pass background: true: you get an id at once, and process_manage polls, reads the log, waits, writes to stdin or kills it. ';
const OUTPUT_HINT = `Output longer than ${TERMINAL_OUTPUT_MAX_CHARS} characters is shortened in the middle.`;

/** The terminal tool: in the rollout's persistent shell (the default) or in a fresh shell per call. */
export function terminalToolFor(persistent: boolean): Tool {
  return persistent ? terminalTool : freshTerminalTool;
}

export const terminalTool = defineTool({
  name: 'terminal',
  toolset: 'terminal',
  version: '3',
  description:
    'Run a bash command in the sandbox and get its exit code and output (stdout, then stderr). ' +
    'Every call runs in the same long-lived shell, one call at a time: cd, exported and plain variables and shell functions carry over to the next call. ' +
    'If a command exits the shell or times out, the next call gets a new shell in the same folder with the exported variables kept (functions and other variables are lost); the result says so. ' +
    BACKGROUND_HINT +
    OUTPUT_HINT,
  parameters: TerminalParameters.extend({
    workdir: TerminalParameters.shape.workdir.describe(
      'Folder to cd into before the command, relative to the working directory or absolute inside the sandbox; the shell stays there.',
    ),
  }),
  run: (args, context) => runTerminal(args, context, true),
});

const freshTerminalTool = defineTool({
  name: 'terminal',
  toolset: 'terminal',
  version: '2',
  description:
    'Run a bash command in the sandbox and get its exit code and output (stdout, then stderr). ' +
    'Each call starts a fresh shell in the working directory: cd and variables do not carry over, so use workdir or chain with &&. ' +
    BACKGROUND_HINT +
    OUTPUT_HINT,
  parameters: TerminalParameters,
  run: (args, context) => runTerminal(args, context, false),
});

async function runTerminal(
  { command, timeout, workdir, background }: z.infer<typeof TerminalParameters>,
  { sandbox, signal, state }: ToolContext,
  persistent: boolean,
): Promise<ToolOutput> {
  if (background) {
    const started = await inSandbox(() => ProcessTable.of(state, sandbox).start(command, workdir));
    return {
      id: started.id,
      state: 'running',
      hint: `process_manage with id '${started.id}': poll, log, wait, write or kill`,
    };
  }
  const options = { timeoutMs: Math.round(timeout * 1_000), cwd: workdir, signal };
  const result = await inSandbox(() =>
    persistent ? sandbox.execInShell(command, options) : sandbox.exec(command, options),
  );
  if (result.aborted) throw new Error('interrupted');
  let output = shortenMiddle(mergeOutput(result.stdout, result.stderr));
  const notes: string[] = [];
  if (result.timedOut) notes.push(`timed out after ${timeout} s: the command and the processes it started were killed`);
  const restarted = 'shell' in result && result.shell === 'restarted';
  if (restarted) {
    notes.push(
      `${result.timedOut ? 'the shell was killed with it' : `the shell exited (code ${result.exitCode})`}; ` +
        'the next call starts a new shell in the same folder with the exported variables kept (functions and other variables are lost)',
    );
  }
  if (notes.length > 0) output += `${output === '' || output.endsWith('\n') ? '' : '\n'}[${notes.join('; ')}]`;
  return {
    exit_code: result.exitCode,
    output,
    ...(result.timedOut ? { timed_out: true } : {}),
    ...(restarted ? { shell: 'restarted' } : {}),
  };
}
