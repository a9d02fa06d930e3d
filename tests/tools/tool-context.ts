import type { Sandbox } from '../../src/sandbox/index.js';
import { loadToolRegistry, executeToolCall, type ToolCallOutcome, type ToolContext } from '../../src/tools/index.js';

/** A tool context over a real sandbox, as the agent loop builds it. */
export function toolContext(sandbox: Sandbox, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    sandbox,
    signal: new AbortController().signal,
    state: new Map(),
    callId: 'call_test',
    env: {},
    ...overrides,
  };
}

const builtin = (await loadToolRegistry()).all();
/** The built-ins under `terminal.persistent: false`: a fresh shell per terminal call. */
export const freshShellTools = (await loadToolRegistry({ terminal: { persistent: false } })).all();

/** Call a built-in tool the way the loop does: JSON arguments in, the model-visible outcome back. */
export function callTool(name: string, args: unknown, context: ToolContext, tools = builtin): Promise<ToolCallOutcome> {
  return executeToolCall(tools, { id: context.callId, name, arguments: JSON.stringify(args) }, context);
}

/** The `{error, hint}` object of a failed call. */
export function errorOf(outcome: ToolCallOutcome): { error: string; hint?: string } {
  if (outcome.ok) throw new Error(`expected a failed call, got: ${outcome.content.slice(0, 300)}`);
  return JSON.parse(outcome.content) as { error: string; hint?: string };
}

export function jsonOf<T = Record<string, unknown>>(outcome: ToolCallOutcome): T {
  if (!outcome.ok) throw new Error(`expected a successful call, got: ${outcome.content.slice(0, 300)}`);
  return JSON.parse(outcome.content) as T;
}
