import { addUsage, contentText, type Usage } from '../model/messages.js';
import type { DelegateFunction } from '../tools/nested.js';
import { ToolFailure } from '../tools/tool-failure.js';
import type { AgentEventHandler } from './events.js';
import type { AgentResult, ToolCallRecord } from './result.js';
import type { RunAgentOptions } from './agent-options.js';

/** Parent, child, grandchild: a run at this depth may not delegate again. */
export const MAX_DELEGATION_DEPTH = 2;
export const DEFAULT_CHILD_MAX_TURNS = 20;

export const CHILD_SYSTEM_PROMPT =
  'You are a sub-agent working on one goal for another agent. Use your tools to reach the goal, then reply with a ' +
  'concise final answer: what you found or did, with the facts the other agent needs. It sees only that answer.';

type RunChild = (options: RunAgentOptions) => Promise<AgentResult>;

/**
 * The delegate function a run hands its tools: each request becomes a fresh run of the same
 * model on the same sandbox, with its own system prompt, the parent's tools (a leaf without delegate_task), the
 * parent's abort signal, and its own turn limit. Progress goes to the parent's handler nested.
 */
export function childRunner(parent: RunAgentOptions, depth: number, runChild: RunChild): DelegateFunction {
  return async (request) => {
    if (depth >= MAX_DELEGATION_DEPTH) {
      throw new ToolFailure(
        `delegation depth limit reached: this agent is already a sub-agent of a sub-agent (limit ${MAX_DELEGATION_DEPTH})`,
        'do this part yourself with your own tools',
      );
    }
    // Hermes' delegate_task names no toolsets: a child gets its parent's, less delegation for a leaf.
    const tools =
      request.role === 'orchestrator' ? parent.tools : parent.tools.filter((tool) => tool.toolset !== 'delegation');
    const toolsets = [...new Set(tools.map((tool) => tool.toolset))];
    const result = await runChild({
      ...parent,
      tools,
      messages: [
        { role: 'system', content: CHILD_SYSTEM_PROMPT },
        { role: 'user', content: request.context ? `${request.goal}\n\nContext:\n${request.context}` : request.goal },
      ],
      maxTurns: parent.services?.settings.delegation.max_turns ?? DEFAULT_CHILD_MAX_TURNS,
      stopWhen: undefined,
      state: new Map(),
      depth: depth + 1,
      onEvent: nestedEvents(parent.onEvent, request.goal),
    });
    const last = result.messages.at(-1);
    const answer = last?.role === 'assistant' && last.content ? contentText(last.content) || null : null;
    return {
      answer,
      record: {
        goal: request.goal,
        toolsets,
        messages: result.messages,
        usage: result.usage,
        finish_reason: result.finishReason,
        ...childSubagents(result.toolCalls),
      },
    };
  };
}

function childSubagents(calls: readonly ToolCallRecord[]): { subagents?: ReturnType<typeof flat> } {
  const subagents = flat(calls);
  return subagents.length > 0 ? { subagents } : {};
}

const flat = (calls: readonly ToolCallRecord[]) => calls.flatMap((call) => call.subagents ?? []);

function nestedEvents(onEvent: AgentEventHandler | undefined, goal: string): AgentEventHandler | undefined {
  return onEvent && ((event) => onEvent({ type: 'subagent', goal, event }));
}

/** The usage of the children a tool step ran, to add to the parent's. */
export function childUsage(calls: readonly ToolCallRecord[], into: Usage): void {
  for (const child of flat(calls)) addUsage(into, child.usage);
}
