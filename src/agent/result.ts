import type { SerializedError } from '../errors.js';
import type { CompletionTokens } from '../model/completion-tokens.js';
import type { Message, Usage } from '../model/messages.js';
import type { Compression } from './compression.js';
import type { NestedCallRecord, SubagentRecord } from '../tools/nested.js';

/**
 * Why the agent stopped. Beyond traj's own reasons, a model's finish reason other than stop,
 * tool_calls or length (`content_filter`, a provider's own) ends the run and is kept as sent.
 */
// `string & {}` keeps the named reasons visible to editors while admitting a provider's own.
export type AgentFinishReason =
  | 'stop'
  | 'max_turns'
  | 'length'
  | 'context_length'
  | 'api_error'
  | 'aborted'
  | 'empty'
  | 'content_filter'
  | (string & {});

export interface ToolCallRecord {
  name: string;
  ok: boolean;
  ms: number;
  /** The call's id in the messages, when it did nested work (below). */
  id?: string;
  /** Child agents a delegate_task call ran. */
  subagents?: SubagentRecord[];
  /** Tool calls an execute_code script made. */
  inner?: NestedCallRecord[];
}

/** Why a conversation with a simulated user ended. */
export type ConversationStop = 'stop_token' | 'turn_limit' | 'terminal_tool' | 'user_empty' | 'agent';

/** The simulated user's side of a conversation: its model, replies, why it ended, and its own usage. */
export interface SimulatedUserResult {
  model: string;
  /** User replies (its model calls). */
  turns: number;
  /** `agent`: the agent ended it (max turns, an error, …), see the finish reason. */
  stop: ConversationStop;
  /** The user model's calls only (the result's `usage` holds them too, being the rollout's whole spend). */
  usage: Usage;
}

export interface AgentTimings {
  started_at: string;
  duration_ms: number;
  model_ms: number;
  tool_ms: number;
}

/** Everything a rollout produced; plain JSON so it crosses the worker boundary as is. */
export interface AgentResult {
  /** The exact messages the model saw and produced, the real system prompt first. */
  messages: Message[];
  finishReason: AgentFinishReason;
  /** Model calls that counted against maxTurns. */
  turns: number;
  /** All model calls, including the max-turns grace call and empty-answer retries. */
  apiCalls: number;
  toolCalls: ToolCallRecord[];
  /** The usage of every call, the summariser's included. */
  usage: Usage;
  /** Each assistant turn's token ids and logprobs, when the endpoint sent them (absent: none). */
  completions?: CompletionTokens[];
  /** Compressions of the conversation, in order (absent: none); the transcript above is never rewritten. */
  compressions?: Compression[];
  /** The memory files as the run left them (batch/eval --memory); absent when memory was off. */
  memory?: { memory: string[]; user: string[] };
  /** Skills loaded with skill_view, sorted. */
  skillsViewed?: string[];
  timings: AgentTimings;
  error?: SerializedError;
  /** Set when a simulated user answered the agent (environments with `user:`). */
  simulatedUser?: SimulatedUserResult;
}
