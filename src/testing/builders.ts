import type { DelayFault, DropFault, HttpFault, ScriptedReply, ScriptedResponse, ScriptedToolCall } from './script.js';

/** Small builders so a test reads like the conversation it scripts. */

type ReplyExtras = Omit<ScriptedReply, 'content' | 'tool_calls' | 'fault'>;

/** A final text answer. */
export function reply(content: string, extras: ReplyExtras = {}): ScriptedReply {
  return { content, ...extras };
}

/** One tool call (arguments as an object, or a raw string sent as-is). */
export function callTool(
  name: string,
  args: ScriptedToolCall['arguments'] = {},
  extras: ReplyExtras & { content?: string; id?: string } = {},
): ScriptedReply {
  const { id, content, ...rest } = extras;
  return {
    ...(content === undefined ? {} : { content }),
    tool_calls: [{ name, arguments: args, ...(id ? { id } : {}) }],
    ...rest,
  };
}

/** Several tool calls in one assistant message. */
export function callTools(calls: ScriptedToolCall[], extras: ReplyExtras & { content?: string } = {}): ScriptedReply {
  return { ...extras, tool_calls: calls };
}

/** A call whose arguments are not valid JSON (the harness must report it to the model). */
export function malformedToolCall(name: string, rawArguments = '{"command": "ls", '): ScriptedReply {
  return { tool_calls: [{ name, arguments: rawArguments }] };
}

/** No content, no tool calls: the loop's empty-answer handling. */
export function emptyReply(): ScriptedReply {
  return { content: '' };
}

/** A reply cut off by the token limit (`finish_reason: length`). */
export function truncatedReply(content = 'The answer is'): ScriptedReply {
  return { content, finish_reason: 'length' };
}

/** An HTTP error; `retryAfter` (seconds) sets the retry-after header. */
export function httpError(
  status: number,
  options: { message?: string; retryAfter?: number; headers?: Record<string, string> } = {},
): HttpFault {
  const headers = {
    ...options.headers,
    ...(options.retryAfter === undefined ? {} : { 'retry-after': String(options.retryAfter) }),
  };
  return {
    fault: 'http',
    status,
    ...(options.message === undefined
      ? {}
      : { body: { error: { message: options.message, type: 'scripted_fault', code: status } } }),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
  };
}

/** 429 Too Many Requests with a retry-after in seconds. */
export function rateLimited(retryAfterSeconds = 0, message = 'Rate limit reached, retry later'): HttpFault {
  return httpError(429, { message, retryAfter: retryAfterSeconds });
}

/** Destroy the socket without answering. */
export function dropConnection(): DropFault {
  return { fault: 'drop' };
}

/** Wait `ms`, then answer `then`. */
export function delayed(ms: number, then: ScriptedResponse): DelayFault {
  return { fault: 'delay', ms, then };
}
