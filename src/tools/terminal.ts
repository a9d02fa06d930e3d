import { z } from 'zod';
import { defineTool, type Tool, type ToolContext, type ToolOutput } from './tool.js';
import { ToolFailure } from './tool-failure.js';
import { ProcessTable } from './process/process-table.js';
import { inSandbox } from './sandbox-failure.js';

export const TERMINAL_OUTPUT_MAX_CHARS = 50_000;
/** Share of a shortened output kept from the start; the rest comes from the end, where errors usually are. */
const HEAD_SHARE = 0.4;

/** Hermes' default and foreground cap (terminal_tool.py, TERMINAL_MAX_FOREGROUND_TIMEOUT unset). */
export const TERMINAL_DEFAULT_TIMEOUT = 180;
export const TERMINAL_FOREGROUND_MAX_TIMEOUT = 600;

export const TerminalParameters = z.object({
  command: z.string().describe('The command to execute on the VM'),
  background: z
    .boolean()
    .default(false)
    .describe(
      "Run the command in the background. Almost always pair with notify_on_complete=true — without it, the process runs silently and you'll have no way to learn it finished short of calling process(action='poll') yourself (easy to forget, leading to silent blindness on long jobs). Two legitimate patterns: (1) Long-lived processes that never exit (servers, watchers, daemons) — these stay silent because there's no exit to notify on. (2) Long-running bounded tasks (tests, builds, deploys, CI pollers, batch jobs) — these MUST set notify_on_complete=true. For short commands, prefer foreground with a generous timeout instead.",
    ),
  timeout: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      "Max seconds to wait (default: 180, foreground max: 600). Returns INSTANTLY when command finishes — set high for long tasks, you won't wait unnecessarily. Foreground timeout above 600s is rejected; use background=true for longer commands.",
    ),
  workdir: z
    .string()
    .optional()
    .describe('Working directory for this command (absolute path). Defaults to the session working directory.'),
  pty: z
    .boolean()
    .default(false)
    .describe(
      'Run in pseudo-terminal (PTY) mode for interactive CLI tools like Codex, Claude Code, or Python REPL. Only works with local and SSH backends. Default: false.',
    ),
  notify_on_complete: z
    .boolean()
    .default(false)
    .describe(
      "When true (and background=true), you'll be automatically notified exactly once when the process finishes. **This is the right choice for almost every long-running task** — tests, builds, deployments, multi-item batch jobs, anything that takes over a minute and has a defined end. Use this and keep working on other things; the system notifies you on exit. MUTUALLY EXCLUSIVE with watch_patterns — when both are set, watch_patterns is dropped.",
    ),
  watch_patterns: z
    .array(z.string())
    .optional()
    .describe(
      "Strings to watch for in background process output. HARD RATE LIMIT: at most 1 notification per 15 seconds per process — matches arriving inside the cooldown are dropped. After 3 consecutive 15-second windows with dropped matches, watch_patterns is automatically disabled for that process and promoted to notify_on_complete behavior (one notification on exit, no more mid-process spam). USE ONLY for truly rare, one-shot mid-process signals on LONG-LIVED processes that will never exit on their own — e.g. ['Application startup complete'] on a server so you know when to hit its endpoint, or ['migration done'] on a daemon. DO NOT use for: (1) end-of-run markers like 'DONE'/'PASS' — use notify_on_complete instead; (2) error patterns like 'ERROR'/'Traceback' in loops or multi-item batch jobs — they fire on every iteration and you'll hit the strike limit fast; (3) anything you'd ever combine with notify_on_complete. When in doubt, choose notify_on_complete. MUTUALLY EXCLUSIVE with notify_on_complete — set one, not both.",
    ),
});
type TerminalArguments = z.infer<typeof TerminalParameters>;

/** Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json). */
const TERMINAL_DESCRIPTION =
  "Execute shell commands on a Linux environment. Filesystem, current working directory, and exported environment variables persist between calls.\n\nDo NOT use cat/head/tail to read files — use read_file instead.\nDo NOT use grep/rg/find to search — use search_files instead.\nDo NOT use ls to list directories — use search_files(target='files') instead.\nDo NOT use sed/awk to edit files — use patch instead.\nDo NOT use echo/cat heredoc to create files — use write_file instead.\nReserve terminal for: builds, installs, git, processes, scripts, network, package managers, and anything that needs a shell.\nBecause exported environment state persists, activate a virtualenv or export setup variables once per session; do not re-source the same environment before every command unless a command proves the shell state was reset.\n\nForeground (default): Commands return INSTANTLY when done, even if the timeout is high. Set timeout=300 for long builds/scripts — you'll still get the result in seconds if it's fast. Prefer foreground for short commands.\nBackground: Set background=true to get a session_id. Almost always pair with notify_on_complete=true — bg without notify runs SILENTLY and you have no way to learn it finished short of calling process(action='poll') yourself. Two legitimate uses:\n  (1) Long-lived processes that never exit (servers, watchers, daemons) — silent is correct, there's no exit to notify on.\n  (2) Long-running bounded tasks (tests, builds, deploys, CI pollers, batch jobs) — MUST set notify_on_complete=true. Without it you'll either forget to poll or sit blocked waiting for the user to surface the result.\nFor servers/watchers, do NOT use shell-level background wrappers (nohup/disown/setsid/trailing '&') in foreground mode. Use background=true so Hermes can track lifecycle and output.\nAfter starting a server, verify readiness with a health check or log signal, then run tests in a separate terminal() call. Avoid blind sleep loops.\nUse process(action=\"poll\") for progress checks, process(action=\"wait\") to block until done.\nWorking directory: Use 'workdir' for per-command cwd.\nPTY mode: Set pty=true for interactive CLI tools (Codex, Claude Code, Python REPL).\n\nDo NOT use vim/nano/interactive tools without pty=true — they hang without a pseudo-terminal. Pipe git output to cat if it might page.\n";

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

/** The terminal tool: in the rollout's persistent shell (the default) or in a fresh shell per call. */
export function terminalToolFor(persistent: boolean): Tool {
  return persistent ? terminalTool : freshTerminalTool;
}

export const terminalTool = defineTool({
  name: 'terminal',
  toolset: 'terminal',
  version: '4',
  description: TERMINAL_DESCRIPTION,
  parameters: TerminalParameters,
  run: (args, context) => runTerminal(args, context, true),
});

/** The same schema (the model sees Hermes' tool); each result says the shell was fresh. */
const freshTerminalTool = defineTool({
  name: 'terminal',
  toolset: 'terminal',
  version: '3',
  description: TERMINAL_DESCRIPTION,
  parameters: TerminalParameters,
  run: (args, context) => runTerminal(args, context, false),
});

/** What traj cannot do of what the call asked, said in the result instead of refusing the call. */
function limits(args: TerminalArguments, persistent: boolean): string[] {
  const notes: string[] = [];
  if (args.pty) notes.push('pty: the sandbox has no terminal, so the command ran without one (stdin is empty)');
  if (args.background && (args.notify_on_complete || args.watch_patterns?.length))
    notes.push(
      `${args.notify_on_complete ? 'notify_on_complete' : 'watch_patterns'}: this harness sends no notifications; ` +
        "use process(action='wait') or process(action='poll') with the session_id",
    );
  if (!persistent) notes.push('this run starts a fresh shell per call: cd and variables do not carry over');
  return notes;
}

async function runTerminal(args: TerminalArguments, context: ToolContext, persistent: boolean): Promise<ToolOutput> {
  const { command, workdir, background } = args;
  const { sandbox, signal, state } = context;
  if (command.trim() === '') throw new ToolFailure('command is empty', 'pass the shell command to run');
  const notes = limits(args, persistent);
  if (background) {
    const started = await inSandbox(() => ProcessTable.of(state, sandbox).start(command, workdir));
    return {
      output: 'Background process started',
      session_id: started.id,
      hint: `process with session_id '${started.id}': poll, log, wait, write, submit, close or kill`,
      ...(notes.length > 0 ? { notes } : {}),
    };
  }
  const timeout = args.timeout ?? TERMINAL_DEFAULT_TIMEOUT;
  if (timeout > TERMINAL_FOREGROUND_MAX_TIMEOUT)
    throw new ToolFailure(
      `foreground timeout ${timeout} s is above the ${TERMINAL_FOREGROUND_MAX_TIMEOUT} s limit`,
      'use background=true for longer commands, then process(action="wait")',
    );
  const options = { timeoutMs: Math.round(timeout * 1_000), cwd: workdir, signal };
  const result = await inSandbox(() =>
    persistent ? sandbox.execInShell(command, options) : sandbox.exec(command, options),
  );
  if (result.aborted) throw new Error('interrupted');
  let output = shortenMiddle(mergeOutput(result.stdout, result.stderr));
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
