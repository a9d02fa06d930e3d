import { ModelError, serializeError, type SerializedError } from '../errors.js';
import { addUsage, contentText, emptyUsage, type Message } from '../model/messages.js';
import type { ModelClient } from '../model/types.js';
import type { RunAgentOptions } from './agent-options.js';
import { GRACE_PROMPT, runAgent } from './loop.js';
import type { AgentResult, ConversationStop, SimulatedUserResult } from './result.js';
import { TERMINAL_TOOL_REASON, whenToolCalled } from './stop-conditions.js';

/** A second model playing the user: its own client, system prompt (persona and goal) and limits. */
export interface SimulatedUser {
  model: ModelClient;
  /** The model's name, for the record. */
  name: string;
  system: string;
  stopToken: string;
  /** User replies at most. */
  maxTurns: number;
}

export interface ConversationOptions extends RunAgentOptions {
  /** Absent: one agent run (terminal tools still end it). */
  user?: SimulatedUser;
  /** Tools whose call ends the conversation once they have run. */
  terminalTools?: readonly string[];
}

/**
 * A turn driver around the agent loop: the agent runs until it answers without tools, then the
 * simulated user replies, and so on until the user says its stop token, runs out of replies, or
 * the agent calls a terminal tool (or stops for its own reasons: max turns, errors). The agent's
 * turn limit spans the whole conversation. Never throws, like runAgent.
 */
export async function runConversation(options: ConversationOptions): Promise<AgentResult> {
  const { user, terminalTools = [], ...agent } = options;
  const started = performance.now();
  const side = user && { model: user.name, turns: 0, stop: 'agent' as ConversationStop, usage: emptyUsage() };
  const stopAfterTools = terminalTools.length > 0 ? whenToolCalled(terminalTools) : undefined;
  let total: AgentResult | undefined;
  for (;;) {
    const segment = await runAgent({
      ...agent,
      messages: total?.messages ?? agent.messages,
      maxTurns: agent.maxTurns - (total?.turns ?? 0),
      stopAfterTools,
    });
    total = joined(total, segment);
    if (segment.finishReason === TERMINAL_TOOL_REASON) return ended(total, side, 'terminal_tool', started, 'stop');
    if (!user || !side || segment.finishReason !== 'stop') return ended(total, side, 'agent', started);
    if (side.turns >= user.maxTurns) return ended(total, side, 'turn_limit', started);
    let text: string;
    try {
      text = await userReply(user, total.messages, side, agent.signal);
    } catch (error) {
      return ended(
        total,
        side,
        'agent',
        started,
        agent.signal?.aborted ? 'aborted' : 'api_error',
        serializeError(error),
      );
    }
    if (!text) return ended(total, side, 'user_empty', started);
    total.messages = [...total.messages, { role: 'user', content: text }];
    if (text.includes(user.stopToken)) return ended(total, side, 'stop_token', started);
  }
}

/** The user model's next message; its usage counts on its side (and in the rollout's spend). */
async function userReply(
  user: SimulatedUser,
  messages: readonly Message[],
  side: SimulatedUserResult,
  signal: AbortSignal | undefined,
): Promise<string> {
  const response = await user.model.complete({ messages: userView(user.system, messages), signal });
  side.turns++;
  addUsage(side.usage, response.usage);
  if (response.finishReason === 'length' && !response.message.content?.trim())
    throw new ModelError('the simulated user ran out of tokens before answering', { code: 'model_failed' });
  return response.message.content?.trim() ?? '';
}

/**
 * The conversation as the user model sees it: its own system prompt, its messages as `assistant`
 * and the agent's answers as `user`; tool calls, tool results and the harness's own prompts left out.
 */
export function userView(system: string, messages: readonly Message[]): Message[] {
  const view: Message[] = [{ role: 'system', content: system }];
  for (const message of messages) {
    if (message.role === 'user' && message.content !== GRACE_PROMPT)
      view.push({ role: 'assistant', content: contentText(message.content) });
    else if (message.role === 'assistant' && message.content?.trim())
      view.push({ role: 'user', content: message.content });
  }
  return view;
}

/** Two stretches of one conversation as one result: counts and calls summed, the later messages and reason. */
function joined(total: AgentResult | undefined, segment: AgentResult): AgentResult {
  if (!total) return segment;
  const usage = addUsage(addUsage(emptyUsage(), total.usage), segment.usage);
  const compressions = [...(total.compressions ?? []), ...(segment.compressions ?? [])];
  return {
    ...segment,
    turns: total.turns + segment.turns,
    apiCalls: total.apiCalls + segment.apiCalls,
    toolCalls: [...total.toolCalls, ...segment.toolCalls],
    usage,
    ...(compressions.length > 0 ? { compressions } : {}),
    timings: {
      started_at: total.timings.started_at,
      duration_ms: 0,
      model_ms: total.timings.model_ms + segment.timings.model_ms,
      tool_ms: total.timings.tool_ms + segment.timings.tool_ms,
    },
  };
}

function ended(
  total: AgentResult,
  side: SimulatedUserResult | undefined,
  stop: ConversationStop,
  started: number,
  finishReason = total.finishReason,
  error?: SerializedError,
): AgentResult {
  const result: AgentResult = {
    ...total,
    finishReason,
    timings: { ...total.timings, duration_ms: Math.round(performance.now() - started) },
    ...(error ? { error } : {}),
  };
  if (!side) return result;
  // The user's calls are the rollout's spend too: in `usage`, and apart in `simulatedUser.usage`.
  addUsage(result.usage, side.usage);
  return { ...result, simulatedUser: { ...side, stop } };
}
