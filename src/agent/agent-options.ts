import type { ModelClient } from '../model/types.js';
import type { Message } from '../model/messages.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { Budget } from '../tools/budget.js';
import type { Tool } from '../tools/tool.js';
import type { ToolServices } from '../tools/services.js';
import type { ContextWindowOptions } from './context-window.js';
import type { AgentEventHandler } from './events.js';
import type { StopCondition } from './stop-conditions.js';

/** Everything one runAgent call is given. */
export interface RunAgentOptions {
  model: ModelClient;
  tools: Tool[];
  /** The starting conversation: the system prompt, then the user turn(s) or a conversation prefix. */
  messages: Message[];
  sandbox: Sandbox;
  maxTurns: number;
  budget?: Budget;
  signal?: AbortSignal;
  onEvent?: AgentEventHandler;
  /** Stream model output (deltas reach `onEvent`); the result is the same either way. */
  stream?: boolean;
  /** Tool calls of one assistant message run concurrently, at most this many at once. */
  toolConcurrency?: number;
  stopWhen?: StopCondition;
  /** Checked after each tool step (e.g. a terminal tool was called: the conversation is over). */
  stopAfterTools?: StopCondition;
  /** Retries of an empty answer (no content, no tool calls) before finishing with `empty`. */
  emptyRetries?: number;
  /** Per-run tool state (the todo list); pass one to keep it across runs of one chat session. */
  state?: Map<string, unknown>;
  env?: NodeJS.ProcessEnv;
  /** The model's window and how to compress when a request would pass it; absent: never compressed. */
  context?: ContextWindowOptions;
  /** Settings, auxiliary models and the web cache for tools that reach outside services. */
  services?: ToolServices;
  /** 0 for a top-level run; a delegate_task child runs one deeper (see subagent.ts). */
  depth?: number;
}
