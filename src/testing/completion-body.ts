import type { ChatRequest, ScriptedReply } from './script.js';
import type { VllmTokens } from './vllm-tokens.js';

/**
 * The bodies the scripted server sends for a reply: a whole completion, or the same completion
 * as SSE chunks (reasoning, content and tool-call arguments each split into several pieces).
 * Kept cheap: the throughput benchmark runs this in the harness's own process.
 */
interface RenderedReply {
  message: Record<string, unknown>;
  toolCalls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  finishReason: string;
  usage: Record<string, unknown>;
  /** vLLM's token fields, when the server has a tokenizer and the request asked for them. */
  tokens?: VllmTokens;
}

const CHARACTERS_PER_TOKEN = 4;
const PIECES = 3;

export function renderReply(reply: ScriptedReply, request: ChatRequest, index: number): RenderedReply {
  const toolCalls = (reply.tool_calls ?? []).map((call, position) => ({
    id: call.id ?? `call_${index}_${position}`,
    type: 'function' as const,
    function: {
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    },
  }));
  const message: Record<string, unknown> = { role: 'assistant', content: reply.content ?? null };
  if (reply.reasoning_content !== undefined) message.reasoning_content = reply.reasoning_content;
  if (reply.reasoning !== undefined) message.reasoning = reply.reasoning;
  // Each detail carries its index in both forms, as OpenRouter's do (streamed pieces are grouped by it).
  if (reply.reasoning_details !== undefined) {
    message.reasoning_details = reply.reasoning_details.map((detail, position) => ({
      ...detail,
      index: typeof detail.index === 'number' ? detail.index : position,
    }));
  }
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    message,
    toolCalls,
    finishReason: reply.finish_reason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    usage: usageFor(reply, request, toolCalls),
  };
}

function usageFor(
  reply: ScriptedReply,
  request: ChatRequest,
  toolCalls: RenderedReply['toolCalls'],
): Record<string, unknown> {
  const reasoningCharacters = (reply.reasoning_content ?? reply.reasoning ?? '').length;
  let completionCharacters = (reply.content ?? '').length + reasoningCharacters;
  for (const call of toolCalls) completionCharacters += call.function.name.length + call.function.arguments.length;
  const prompt = reply.usage?.prompt_tokens ?? estimatePromptTokens(request);
  const completion = reply.usage?.completion_tokens ?? Math.ceil(completionCharacters / CHARACTERS_PER_TOKEN);
  const reasoning = reply.usage?.reasoning_tokens ?? Math.ceil(reasoningCharacters / CHARACTERS_PER_TOKEN);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    completion_tokens_details: { reasoning_tokens: reasoning },
    ...(reply.usage?.cached_tokens === undefined
      ? {}
      : { prompt_tokens_details: { cached_tokens: reply.usage.cached_tokens } }),
    ...(reply.usage?.cost === undefined ? {} : { cost: reply.usage.cost }),
  };
}

/** From the message texts alone, so the streamed and the plain request of one script agree. */
function estimatePromptTokens(request: ChatRequest): number {
  let characters = 0;
  for (const message of request.messages) {
    if (typeof message.content === 'string') characters += message.content.length;
  }
  return Math.ceil(characters / CHARACTERS_PER_TOKEN);
}

export function completionBody(rendered: RenderedReply, model: string, index: number): string {
  const tokens = rendered.tokens;
  return JSON.stringify({
    id: `chatcmpl-scripted-${index}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: rendered.message,
        finish_reason: rendered.finishReason,
        logprobs: tokens?.logprobs ? { content: tokens.logprobs } : null,
        ...(tokens?.tokenIds ? { token_ids: tokens.tokenIds } : {}),
      },
    ],
    usage: rendered.usage,
    ...(tokens?.promptTokenIds ? { prompt_token_ids: tokens.promptTokenIds } : {}),
  });
}

/** The whole SSE body, `data: [DONE]` included. */
export function streamBody(rendered: RenderedReply, model: string, index: number, includeUsage: boolean): string {
  const header = {
    id: `chatcmpl-scripted-${index}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
  };
  const events: string[] = [];
  const emit = (delta: Record<string, unknown>, finishReason: string | null = null) => {
    events.push(
      `data: ${JSON.stringify({ ...header, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`,
    );
  };
  const tokens = rendered.tokens;
  events.push(
    `data: ${JSON.stringify({
      ...header,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      ...(tokens?.promptTokenIds ? { prompt_token_ids: tokens.promptTokenIds } : {}),
    })}\n\n`,
  );
  const { message } = rendered;
  for (const field of ['reasoning_content', 'reasoning'] as const) {
    const text = message[field];
    if (typeof text === 'string') for (const piece of split(text)) emit({ [field]: piece });
  }
  streamReasoningDetails(message.reasoning_details, emit);
  if (typeof message.content === 'string') for (const piece of split(message.content)) emit({ content: piece });
  rendered.toolCalls.forEach((call, position) => {
    emit({
      tool_calls: [
        { index: position, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
      ],
    });
    for (const piece of split(call.function.arguments))
      emit({ tool_calls: [{ index: position, function: { arguments: piece } }] });
  });
  if (tokens) streamTokens(tokens, header, events);
  emit({}, rendered.finishReason);
  if (includeUsage) events.push(`data: ${JSON.stringify({ ...header, choices: [], usage: rendered.usage })}\n\n`);
  events.push('data: [DONE]\n\n');
  return events.join('');
}

/** vLLM streams each chunk's new token ids and logprobs with it: here in two chunks, halves of the turn's. */
function streamTokens(tokens: VllmTokens, header: Record<string, unknown>, events: string[]): void {
  const length = tokens.tokenIds?.length ?? tokens.logprobs?.length ?? 0;
  const middle = Math.ceil(length / 2);
  for (const [start, end] of [
    [0, middle],
    [middle, length],
  ] as const) {
    const choice = {
      index: 0,
      delta: {},
      finish_reason: null,
      ...(tokens.tokenIds ? { token_ids: tokens.tokenIds.slice(start, end) } : {}),
      ...(tokens.logprobs ? { logprobs: { content: tokens.logprobs.slice(start, end) } } : {}),
    };
    events.push(`data: ${JSON.stringify({ ...header, choices: [choice] })}\n\n`);
  }
}

/** Each detail's text streams in pieces that carry the detail's index, as OpenRouter does. */
function streamReasoningDetails(details: unknown, emit: (delta: Record<string, unknown>) => void): void {
  if (!Array.isArray(details)) return;
  details.forEach((detail: Record<string, unknown>, position) => {
    const { text, ...rest } = detail;
    const index = typeof detail.index === 'number' ? detail.index : position;
    if (typeof text !== 'string') {
      emit({ reasoning_details: [{ ...rest, index }] });
      return;
    }
    split(text).forEach((piece, number) =>
      emit({ reasoning_details: [number === 0 ? { ...rest, index, text: piece } : { index, text: piece }] }),
    );
  });
}

/** Up to three pieces, never cutting a surrogate pair. */
function split(text: string): string[] {
  if (text.length <= 1) return text === '' ? [] : [text];
  const size = Math.ceil(text.length / PIECES);
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    const code = text.charCodeAt(end - 1);
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end++;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}
