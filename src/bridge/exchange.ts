import type { Message, ToolSpec, Usage } from '../model/messages.js';
import type { FinishReason, ModelResponse } from '../model/types.js';

/** A request an agent made, in traj's message format whatever API it spoke. */
export interface AgentRequest {
  messages: Message[];
  tools: ToolSpec[];
  stream: boolean;
  /** Chat completions: the agent asked for a usage chunk at the end of the stream. */
  includeUsage?: boolean;
  /** Responses API: tools of type `custom` (free text input), offered to the model as functions of one `input` string. */
  customTools?: string[];
}

/** One model call the proxy forwarded: what the model saw and what it said. */
export interface Exchange {
  messages: Message[];
  tools: ToolSpec[];
  response: ModelResponse;
}

/** How each API the proxy speaks is read and answered. */
export interface WireDialect {
  /** The agent's body as traj messages and tools; a ProxyRequestError when it cannot be read. */
  parse(body: unknown): AgentRequest;
  /** The whole answer as one JSON body. */
  reply(response: ModelResponse, model: string, request: AgentRequest): unknown;
  /** The answer as server-sent events, each a complete `event:`/`data:` block. */
  stream(response: ModelResponse, model: string, request: AgentRequest): string[];
  /** An error body in this API's format. */
  error(message: string, type: string): unknown;
}

/** A request body the proxy cannot read: answered with HTTP 400 naming the field. */
export class ProxyRequestError extends Error {}

export function usageTokens(usage: Usage): { input: number; output: number } {
  return { input: usage.prompt_tokens, output: usage.completion_tokens };
}

export function sse(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

/** The text of OpenAI or Anthropic content: a string, or parts whose `text` fields are joined. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (part && typeof part === 'object' && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

export function objectOf(value: unknown, where: string): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new ProxyRequestError(`${where}: expected a JSON object`);
  return value as Record<string, unknown>;
}

export function arrayOf(value: unknown, where: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new ProxyRequestError(`${where}: expected an array`);
  return value;
}

export function finishOf(reason: FinishReason, hasCalls: boolean): FinishReason {
  return hasCalls ? 'tool_calls' : reason;
}

let counter = 0;
export function newId(prefix: string): string {
  counter += 1;
  return `${prefix}_traj${Date.now().toString(36)}${counter}`;
}
