import { z } from 'zod';
import { DEFAULT_CODE_EXECUTION, type CodeExecutionConfig } from '../../config/code-execution.js';
import type { ExecResult } from '../../sandbox/sandbox.js';
import { defineTool, toolError, toolSpec, ToolFailure, type ToolContext } from '../registry.js';
import { shortenMiddle } from '../terminal.js';
import { channelPaths, runnerScript, toolsModule, type ChannelPaths } from './python-module.js';
import { ToolChannel } from './tool-channel.js';

/** Tools a script can never call, whatever the config says: no scripts in scripts, no children. */
const NEVER_INSIDE = new Set(['execute_code', 'delegate_task']);

export const ExecuteCodeParameters = z.object({
  code: z
    .string()
    .min(1)
    .describe(
      'A Python 3 script. `from traj_tools import terminal, read_file, ...` calls the tools; print() what you want to see.',
    ),
});

export const executeCodeTool = defineTool({
  name: 'execute_code',
  toolset: 'code_execution',
  version: '1',
  description:
    'Run a Python 3 script in the sandbox that can call tools in a loop: `from traj_tools import terminal, read_file, write_file, ...` ' +
    "(each function takes the tool's parameters, required ones first, and returns its result, parsed when it is JSON). " +
    'Only what the script prints comes back, so print just what you need. Use it for many similar tool calls or to filter ' +
    'large outputs; a script error returns its traceback. Limits: a number of tool calls per script (then traj_tools.ToolCallLimit ' +
    'is raised) and a time limit after which the script is killed.',
  parameters: ExecuteCodeParameters,
  run: async ({ code }, context) => {
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
