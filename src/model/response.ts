import type { Endpoint } from '../config/endpoint.js';
import { parseHermesToolCalls } from './hermes.js';
import type { AssistantMessage, ToolCall, Usage } from './messages.js';
import { extractReasoning } from './reasoning.js';
import type { FinishReason, ModelResponse, ParsedToolCall } from './types.js';
import type { WireCompletion, WireToolCall, WireUsage } from './wire.js';

/**
 * Turn a wire completion (returned whole or assembled from a stream) into traj's response:
 * reasoning apart from content, tool calls parsed, usage counted. One function for both paths
 * is what makes a streamed and a non-streamed call give the same response.
 */
export function toModelResponse(
  completion: WireCompletion,
  format: Endpoint['tool_call_format'],
  call: { durationMs: number; attempts: number },
): ModelResponse {
  const extracted = extractReasoning(completion.message);
  let content = extracted.content;
  const toolCalls = (completion.message.tool_calls ?? []).map(nativeToolCall);
  if (format === 'hermes' && content !== null) {
    const parsed = parseHermesToolCalls(content);
    content = parsed.content;
    toolCalls.push(...parsed.toolCalls);
  }
  const message: AssistantMessage = { role: 'assistant', content };
  if (extracted.reasoning !== undefined) message.reasoning = extracted.reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls.map(withoutParseError);
  return {
    message,
    toolCalls,
    finishReason: finishReasonOf(completion.finishReason, toolCalls.length > 0),
    usage: usageOf(completion.usage),
    durationMs: call.durationMs,
    attempts: call.attempts,
  };
}

/** Arguments pass through as sent, valid JSON or not: the tool registry reports bad ones. */
function nativeToolCall(call: WireToolCall, index: number): ParsedToolCall {
  return {
    id: call.id || `call_${index}`,
    type: 'function',
    function: { name: call.function?.name ?? '', arguments: call.function?.arguments ?? '' },
  };
}

function withoutParseError(call: ParsedToolCall): ToolCall {
  return { id: call.id, type: call.type, function: call.function };
}

/** Servers differ in what they report beside tool calls ('stop' is common): calls decide. */
export function finishReasonOf(reason: string | null, hasToolCalls: boolean): FinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'stop':
    case 'eos':
    case null:
      return hasToolCalls ? 'tool_calls' : 'stop';
    default:
      return hasToolCalls ? 'tool_calls' : 'other';
  }
}

export function usageOf(usage: WireUsage | undefined): Usage {
  return {
    prompt_tokens: usage?.prompt_tokens ?? 0,
    completion_tokens: usage?.completion_tokens ?? 0,
    reasoning_tokens: usage?.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}
