import type { ModelDelta, ModelResponse } from '../model/types.js';
import type { Compression } from './compression.js';
import type { ToolCallInput, ToolCallOutcome } from '../tools/execute-tool-call.js';

/** Progress of one agent run, for progress bars, chat rendering and logs. */
export type AgentEvent =
  | { type: 'model_start'; turn: number }
  | { type: 'model_delta'; turn: number; delta: ModelDelta }
  | { type: 'model_end'; turn: number; response: ModelResponse }
  | { type: 'tool_start'; turn: number; call: ToolCallInput }
  | { type: 'tool_end'; turn: number; call: ToolCallInput; outcome: ToolCallOutcome }
  | { type: 'compression'; turn: number; compression: Compression }
  | { type: 'turn_end'; turn: number }
  /** Progress of a delegate_task child, nested under the call that started it. */
  | { type: 'subagent'; goal: string; event: AgentEvent }
  /** A tool call an execute_code script made, as it ends. */
  | { type: 'inner_call'; turn: number; call: ToolCallInput; name: string; ok: boolean; ms: number };

export type AgentEventHandler = (event: AgentEvent) => void;
