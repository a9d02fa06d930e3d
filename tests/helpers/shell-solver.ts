import type { ChatRequest, ScriptedResponse } from '../../src/testing/index.js';

/** The scripted model's last answer, once the agent's shell tool has answered. */
export const SOLVED = 'Done: report.txt holds 100.';

/**
 * A scripted model for third-party agents: it calls whichever shell tool the agent offers (whatever
 * it names it) with `command`, then answers SOLVED once the tool has answered; a side call without
 * tools gets 'ok'. examples/agents/shell-solver.mjs is the same script for `traj mock-server`.
 */
export function shellSolver(command: string): (request: ChatRequest) => ScriptedResponse {
  return (request) => {
    if (!request.tools?.length) return { content: 'ok' };
    if (request.messages.at(-1)?.role === 'tool') return { content: SOLVED };
    const call = shellCall(request.tools, command);
    if (!call) return { content: `no shell tool among ${request.tools.map((tool) => tool.function.name).join(', ')}` };
    return { tool_calls: [call] };
  };
}

function shellCall(
  tools: NonNullable<ChatRequest['tools']>,
  command: string,
): { name: string; arguments: Record<string, unknown> } | undefined {
  for (const tool of tools) {
    const properties =
      (tool.function.parameters as { properties?: Record<string, { type?: string }> })?.properties ?? {};
    if (properties.command?.type === 'string') return { name: tool.function.name, arguments: { command } };
    if (properties.command?.type === 'array')
      return { name: tool.function.name, arguments: { command: ['bash', '-lc', command] } };
    if (properties.cmd?.type === 'string') return { name: tool.function.name, arguments: { cmd: command } };
  }
  return undefined;
}
