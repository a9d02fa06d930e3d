import { z } from 'zod';
import { DEFAULT_CODE_EXECUTION, type CodeExecutionConfig } from '../../config/code-execution.js';
import type { ExecResult } from '../../sandbox/sandbox.js';
import { defineTool, type ToolContext } from '../tool.js';
import { toolError } from '../execute-tool-call.js';
import { toolSpec } from '../tool-spec.js';
import { ToolFailure } from '../tool-failure.js';
import { shortenMiddle } from '../terminal.js';
import { channelPaths, runnerScript, toolsModule, type ChannelPaths } from './python-module.js';
import { ToolChannel } from './tool-channel.js';

/** Tools a script can never call, whatever the config says: no scripts in scripts, no children. */
const NEVER_INSIDE = new Set(['execute_code', 'delegate_task']);

/** The tools a script may import by default, with what each takes and gives (Hermes' list). */
const TOOL_LINES: ReadonlyArray<[string, string]> = [
  [
    'web_search',
    '  web_search(query: str, limit: int = 5) -> dict\n    Returns {"query", "backend", "results": [{"title", "url", "snippet"}, ...]}',
  ],
  [
    'web_extract',
    '  web_extract(urls: list[str], char_limit: int = None) -> dict\n    Returns {"pages": [{"url", "title", "content"} or {"url", "error"}, ...]}; long pages are head+tail cut, the full text saved in the sandbox.',
  ],
  [
    'read_file',
    '  read_file(path: str, offset: int = 1, limit: int = 500) -> str\n    Lines are 1-indexed, shown as "N|text".',
  ],
  ['write_file', '  write_file(path: str, content: str) -> dict\n    Always overwrites the entire file.'],
  [
    'search_files',
    '  search_files(pattern: str, target="content", path=".", file_glob=None, limit=50) -> str\n    target: "content" (search inside files) or "files" (find files by name).',
  ],
  [
    'patch',
    '  patch(path: str, old_string: str, new_string: str, replace_all: bool = False) -> dict\n    Replaces old_string with new_string in the file.',
  ],
  [
    'terminal',
    '  terminal(command: str, timeout=None, workdir=None) -> dict\n    Foreground only (no background/pty). Returns {"output": "...", "exit_code": N}',
  ],
];

const defaultTools = new Set(DEFAULT_CODE_EXECUTION.tools);
const toolLines = TOOL_LINES.filter(([name]) => defaultTools.has(name)).map(([, line]) => line);
const importExample = ['web_search', 'terminal'].filter((name) => defaultTools.has(name)).join(', ') || '...';

/**
 * Hermes builds this description when it runs (the tools enabled, its execution mode): traj
 * writes it in the same shape for the tools its code_execution config allows by default.
 */
export const EXECUTE_CODE_DESCRIPTION =
  'Run a Python script that can call Hermes tools programmatically. Use this when you need 3+ tool calls with processing logic between them, need to filter/reduce large tool outputs before they enter your context, need conditional branching (if X then Y else Z), or need to loop (fetch N pages, process N files, retry on failure).\n\n' +
  'Use normal tool calls instead when: single tool call with no processing, you need to see the full result and apply complex reasoning, or the task requires interactive user input.\n\n' +
  `Available via \`from hermes_tools import ...\`:\n\n${toolLines.join('\n')}\n\n` +
  'Limits: a time limit, a stdout cap and a number of tool calls per script (then hermes_tools.ToolCallLimit is raised). terminal() is foreground-only (no background or pty).\n\n' +
  "Scripts run in the session's working directory, so relative paths work like in terminal().\n\n" +
  'Print your final result to stdout. Use Python stdlib (json, re, math, csv, datetime, collections, etc.) for processing between tool calls.\n\n' +
  'Also available (no import needed — built into hermes_tools):\n' +
  '  json_parse(text: str) — json.loads with strict=False; use for terminal() output with control chars\n' +
  '  shell_quote(s: str) — shlex.quote(); use when interpolating dynamic strings into shell commands\n' +
  '  retry(fn, max_attempts=3, delay=2) — retry with exponential backoff for transient failures';

export const ExecuteCodeParameters = z.object({
  code: z
    .string()
    .describe(
      `Python code to execute. Import tools with \`from hermes_tools import ${importExample}, ...\` and print your final result to stdout.`,
    ),
});

export const executeCodeTool = defineTool({
  name: 'execute_code',
  toolset: 'code_execution',
  version: '2',
  description: EXECUTE_CODE_DESCRIPTION,
  parameters: ExecuteCodeParameters,
  run: async ({ code }, context) => {
    if (code.trim() === '') throw new ToolFailure('code is empty', 'pass a Python script');
    const config = context.services?.settings.code_execution ?? DEFAULT_CODE_EXECUTION;
    if (!context.callTool || !context.runTools) throw new ToolFailure('execute_code is not available here');
    const allowed = context.runTools.filter((tool) => config.tools.includes(tool.name) && !NEVER_INSIDE.has(tool.name));
    const paths = channelPaths(context.callId);
    await prepare(context, paths, code, allowed.map(toolSpec));
    try {
      return await runScript(context, paths, config, new Set(allowed.map((tool) => tool.name)));
    } finally {
      await context.sandbox.exec(`rm -rf ${paths.dir}`, { timeoutMs: 30_000 }).catch(() => undefined);
    }
  },
});

async function prepare(
  context: ToolContext,
  paths: ChannelPaths,
  code: string,
  specs: ReturnType<typeof toolSpec>[],
): Promise<void> {
  const { sandbox } = context;
  await sandbox.writeFile(paths.script, code);
  await sandbox.writeFile(paths.module, toolsModule(specs, paths));
  await sandbox.writeFile(paths.runner, runnerScript());
  const made = await sandbox.exec(`mkfifo ${paths.requests} ${paths.responses}`, { timeoutMs: 30_000 });
  if (made.exitCode !== 0) throw new Error(`cannot create the script's tool channel: ${made.stderr.trim()}`);
}

/** Run the script while answering its tool calls; the result is what it printed, and how it ended. */
async function runScript(
  context: ToolContext,
  paths: ChannelPaths,
  config: CodeExecutionConfig,
  allowed: Set<string>,
): Promise<Record<string, unknown>> {
  const ended = new AbortController();
  const stop = () => ended.abort();
  context.signal.addEventListener('abort', stop, { once: true });
  const script = context.sandbox
    .exec(`python3 -u ${paths.runner}`, { timeoutMs: Math.round(config.timeout * 1_000), signal: context.signal })
    .finally(stop);
  let calls = 0;
  try {
    const channel = new ToolChannel(context.sandbox, paths);
    let answer: unknown;
    for (;;) {
      const request = await channel.next(answer, ended.signal);
      if (!request || 'done' in request) break;
      if (calls >= config.max_tool_calls) {
        answer = {
          limit: true,
          error: `tool call limit reached: a script may make ${config.max_tool_calls} tool calls`,
        };
      } else if (!allowed.has(request.tool)) {
        answer = {
          content: toolError(
            `'${request.tool}' cannot be called from execute_code`,
            `allowed: ${[...allowed].join(', ') || '(none)'}`,
          ),
        };
      } else {
        calls++;
        answer = { content: (await context.callTool!(request.tool, request.arguments)).content };
      }
    }
    return outcome(await script, calls, config);
  } finally {
    context.signal.removeEventListener('abort', stop);
    stop();
  }
}

function outcome(result: ExecResult, calls: number, config: CodeExecutionConfig): Record<string, unknown> {
  if (result.aborted) throw new Error('interrupted');
  const output = shortenMiddle(result.stdout, config.max_output_chars);
  if (result.timedOut)
    return {
      output,
      tool_calls: calls,
      error: `timed out after ${config.timeout} s: the script and the processes it started were killed`,
    };
  if (result.exitCode !== 0)
    return {
      output,
      tool_calls: calls,
      exit_code: result.exitCode,
      error: result.stderr.trim() || `the script exited with code ${result.exitCode}`,
    };
  return { output, tool_calls: calls };
}
