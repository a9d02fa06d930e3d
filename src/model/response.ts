import type { Endpoint } from '../config/endpoint.js';
import { parseHermesToolCalls } from './hermes.js';
import type { AssistantMessage, ToolCall } from './messages.js';
import { extractReasoning } from './reasoning.js';
import { reasoningEcho } from './reasoning-echo.js';
import type { FinishReason, ModelResponse, ParsedToolCall } from './types.js';
import { usageOf } from './usage.js';
import type { WireCompletion, WireToolCall } from './wire.js';

export interface ResponseSettings {
  tool_call_format: Endpoint['tool_call_format'];
  reasoning_echo: NonNullable<Endpoint['reasoning_echo']>;
}

/**
 * Turn a wire completion (returned whole or assembled from a stream) into traj's response:
 * reasoning apart from content, tool calls parsed, usage counted. One function for both paths
 * is what makes a streamed and a non-streamed call give the same response.
 */
export function toModelResponse(
  completion: WireCompletion,
  settings: ResponseSettings,
  call: { durationMs: number; attempts: number },
): ModelResponse {
  const wire = completion.message;
  const extracted = extractReasoning(wire);
  // A refusal (OpenAI) comes with a null content: it is what the user reads.
  let content = extracted.content ?? (typeof wire.refusal === 'string' && wire.refusal !== '' ? wire.refusal : null);
  const toolCalls = (wire.tool_calls ?? []).map(nativeToolCall);
  if (settings.tool_call_format === 'hermes' && content !== null) {
    const parsed = parseHermesToolCalls(content);
    content = parsed.content;
    toolCalls.push(...parsed.toolCalls);
  }
  const message: AssistantMessage = { role: 'assistant', content };
  if (extracted.reasoning !== undefined) message.reasoning = extracted.reasoning;
  const details = wire.reasoning_details?.filter(isRecord);
  if (details && details.length > 0) message.reasoning_details = details;
  const images = [...extracted.images, ...imagesField(wire.images)];
  if (images.length > 0) message.images = images;
  if (toolCalls.length > 0) message.tool_calls = toolCalls.map(withoutParseError);
  const echo = reasoningEcho(settings.reasoning_echo, wire, extracted, content, toolCalls.length > 0);
  if (echo) message.echo = echo;
  return {
    message,
    toolCalls,
    finishReason: finishReasonOf(completion.finishReason, toolCalls.length > 0),
    usage: usageOf(completion.usage, completion.timings),
    durationMs: call.durationMs,
    attempts: call.attempts,
    ...(completion.tokens ? { tokens: completion.tokens } : {}),
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

/**
 * Servers differ in what they report beside tool calls ('stop' is common): calls decide. Any
 * other reason (`content_filter`, a provider's own) is kept as sent, never rewritten to `stop`.
 */
export function finishReasonOf(reason: string | null, hasToolCalls: boolean): FinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    case 'tool_calls':
    case 'function_call':
    case 'tool_use':
      return 'tool_calls';
    case 'stop':
    case 'eos':
    case null:
    case '':
      return hasToolCalls ? 'tool_calls' : 'stop';
    default:
      return hasToolCalls ? 'tool_calls' : reason;
  }
}

/** OpenRouter's image models put their images beside the content: `images: [{type: 'image_url', image_url: {url}}]`. */
function imagesField(images: unknown): string[] {
  if (!Array.isArray(images)) return [];
  return images
    .map((image) => (isRecord(image) && isRecord(image.image_url) ? image.image_url.url : undefined))
    .filter((url): url is string => typeof url === 'string');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
