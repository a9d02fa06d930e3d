import type { ModelResponse } from '../model/types.js';
import type { AgentFinishReason } from './result.js';

/** What a stop condition may look at after each model response and tool round. */
export interface LoopState {
  turns: number;
  lastResponse: ModelResponse;
  signal: AbortSignal;
}

/** A predicate that ends the loop with a finish reason, or lets it go on (undefined). */
export type StopCondition = (state: LoopState) => AgentFinishReason | undefined;

export const whenAborted: StopCondition = (state) => (state.signal.aborted ? 'aborted' : undefined);

export const whenTruncated: StopCondition = (state) =>
  state.lastResponse.finishReason === 'length' ? 'length' : undefined;

/** `content_filter` or a finish reason traj does not know: the model's turn did not end normally. */
export const whenStoppedOtherwise: StopCondition = (state) => {
  const reason = state.lastResponse.finishReason;
  return reason === 'stop' || reason === 'tool_calls' || reason === 'length' ? undefined : reason;
};

export const whenNoToolCalls: StopCondition = (state) =>
  state.lastResponse.toolCalls.length === 0 ? 'stop' : undefined;

/** The first condition that fires wins. */
export function anyOf(...conditions: StopCondition[]): StopCondition {
  return (state) => {
    for (const condition of conditions) {
      const reason = condition(state);
      if (reason) return reason;
    }
    return undefined;
  };
}

/** Checked right after each model response, before its tool calls run. */
export const defaultStopAfterResponse: StopCondition = anyOf(
  whenAborted,
  whenTruncated,
  whenStoppedOtherwise,
  whenNoToolCalls,
);

/** The finish reason of a run ended by a terminal tool (a simulated conversation maps it to its own stop). */
export const TERMINAL_TOOL_REASON = 'terminal_tool';

/** For `stopAfterTools`: the last response called one of these tools (which have now run). */
export function whenToolCalled(names: readonly string[]): StopCondition {
  const terminal = new Set(names);
  return (state) =>
    state.lastResponse.toolCalls.some((call) => terminal.has(call.function.name)) ? TERMINAL_TOOL_REASON : undefined;
}
