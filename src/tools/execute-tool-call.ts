import { errorMessage } from '../errors.js';
import { confinePaths } from './confined-path.js';
import { FILE_TOOLSET, isZodTool, type Tool, type ToolContext, type ToolOutput } from './tool.js';
import { ToolFailure } from './tool-failure.js';

/** Render any tool output as the string the model reads. */
export function renderOutput(output: ToolOutput): string {
  return typeof output === 'string' ? output : JSON.stringify(output);
}

export function toolError(message: string, hint?: string): string {
  return JSON.stringify(hint ? { error: message, hint } : { error: message });
}

export interface ToolCallInput {
  id: string;
  name: string;
  /** Raw JSON text as the model produced it. */
  arguments: string;
  /** Set when the call itself could not be parsed (hermes `<tool_call>` block). */
  parseError?: string;
}

export interface ToolCallOutcome {
  content: string;
  ok: boolean;
  ms: number;
}

/**
 * Run one call. Never throws: an unknown tool, arguments that are not JSON, a schema violation
 * and a throwing tool all become an error result the model can read and fix.
 */
export async function executeToolCall(
  tools: readonly Tool[],
  call: ToolCallInput,
  context: ToolContext,
): Promise<ToolCallOutcome> {
  const started = performance.now();
  const finish = (content: string, ok: boolean): ToolCallOutcome => ({
    content,
    ok,
    ms: Math.round(performance.now() - started),
  });

  if (call.parseError) {
    return finish(
      toolError(
        `malformed tool call: ${call.parseError}`,
        'emit <tool_call>{"name": "<tool>", "arguments": {...}}</tool_call> with valid JSON',
      ),
      false,
    );
  }
  const tool = tools.find((candidate) => candidate.name === call.name);
  if (!tool) {
    const names = tools.map((candidate) => candidate.name).join(', ') || '(none)';
    return finish(toolError(`unknown tool '${call.name}'`, `available tools: ${names}`), false);
  }
  let args: unknown;
  try {
    args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (error) {
    return finish(
      toolError(
        `arguments for '${call.name}' are not valid JSON: ${errorMessage(error)}`,
        'send the arguments as one JSON object',
      ),
      false,
    );
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    return finish(toolError(`arguments for '${call.name}' must be a JSON object`), false);
  }
  if (isZodTool(tool)) {
    const parsed = tool.parameters.safeParse(args);
    if (!parsed.success) {
      const fields = parsed.error.issues
        .map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`)
        .join('; ');
      return finish(
        toolError(`invalid arguments for '${call.name}': ${fields}`, 'fix the named fields and call again'),
        false,
      );
    }
    args = parsed.data;
  }
  try {
    if (tool.toolset === FILE_TOOLSET && !tool.confinesOwnPaths)
      await confinePaths(args as Record<string, unknown>, context.sandbox);
    const output = await tool.run(args as Record<string, unknown>, context);
    return finish(renderOutput(output), true);
  } catch (error) {
    if (context.signal.aborted) return finish(toolError('[interrupted]'), false);
    if (error instanceof ToolFailure) return finish(toolError(error.message, error.hint), false);
    return finish(toolError(`${call.name} failed: ${errorMessage(error)}`), false);
  }
}
