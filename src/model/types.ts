import type { ResponseTokens } from './completion-tokens.js';
import type { AssistantMessage, Message, ToolCall, ToolSpec, Usage } from './messages.js';

/** The model's finish reason; any reason a provider sends beyond these is kept as sent. */
// `string & {}` keeps the named reasons visible to editors while admitting any other string.
export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | (string & {});

/** A tool call parsed from the response; `parseError` marks a malformed one (hermes format). */
export interface ParsedToolCall extends ToolCall {
  parseError?: string;
}

/** One model response, the same shape whether it was streamed or not. */
export interface ModelResponse {
  message: AssistantMessage;
  /** The calls of `message.tool_calls`, with parse errors kept (never sent back to the model). */
  toolCalls: ParsedToolCall[];
  finishReason: FinishReason;
  usage: Usage;
  /** Wall time of the call including retries. */
  durationMs: number;
  /** How many HTTP attempts the call took (1 = no retry). */
  attempts: number;
  /** Token ids and logprobs (endpoint.logprobs, endpoint.token_ids), when the server sent them. */
  tokens?: ResponseTokens;
}

/** Incremental output while streaming (chat shows it as it arrives). */
export type ModelDelta =
  | { type: 'content'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool_call'; index: number; id?: string; name?: string; argumentsDelta?: string };

export interface CompletionRequest {
  messages: Message[];
  tools?: ToolSpec[];
  signal?: AbortSignal;
  /** Stream the response and report deltas; the resolved response is identical either way. */
  onDelta?: (delta: ModelDelta) => void;
}

/** What the agent loop needs from a model: one chat completion. */
export interface ModelClient {
  readonly model: string;
  readonly baseURL: string;
  complete(request: CompletionRequest): Promise<ModelResponse>;
}
