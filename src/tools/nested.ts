import type { Message, Usage } from '../model/messages.js';

/**
 * Work a tool call did beyond its own result, kept in the record under that call: the child
 * agents of a delegate_task call and the tool calls an execute_code script made. Tools never run
 * the loop themselves; the loop hands them the functions below through the tool context.
 */

/** One sub-goal for a child agent. */
export interface DelegateRequest {
  goal: string;
  context?: string;
  /** Hermes' roles: a leaf (the default) cannot delegate; an orchestrator can, to the depth limit. */
  role?: 'leaf' | 'orchestrator';
}

/** A child agent's transcript, nested under the delegate_task call that started it. */
export interface SubagentRecord {
  /** The delegate_task call (in the parent's messages) that started this child. */
  call_id?: string;
  goal: string;
  toolsets: string[];
  /** The exact messages the child saw and produced, its own system prompt first. */
  messages: Message[];
  usage: Usage;
  finish_reason: string;
  /** The children this child started in turn (depth 2), kept for the flattened record. */
  subagents?: SubagentRecord[];
}

export interface DelegateOutcome {
  /** The child's final answer (null when it stopped without one). */
  answer: string | null;
  record: SubagentRecord;
}

/** Runs a child agent on the parent's sandbox; throws a ToolFailure when delegation is refused. */
export type DelegateFunction = (request: DelegateRequest) => Promise<DelegateOutcome>;

/** One tool call an execute_code script made, as the record keeps it. */
export interface NestedCallRecord {
  name: string;
  arguments: string;
  ok: boolean;
  ms: number;
  /** What the script received (the tool's result text). */
  result: string;
}

/** Calls one of the run's tools by name, as the loop would; never throws. */
export type CallToolFunction = (
  name: string,
  args: Record<string, unknown>,
) => Promise<{ ok: boolean; content: string }>;
