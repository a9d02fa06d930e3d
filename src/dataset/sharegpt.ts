import { z } from 'zod';
import { parseHermesToolCalls } from '../model/hermes.js';
import type { AssistantMessage, Message, ToolMessage } from '../model/messages.js';
import { extractInlineReasoning } from '../model/reasoning.js';
import type { ConvertedMessages } from './openai-messages.js';

const ROLES = {
  system: 'system',
  human: 'user',
  user: 'user',
  gpt: 'assistant',
  assistant: 'assistant',
  tool: 'tool',
} as const;

/** A ShareGPT turn (Hermes format); `user`/`assistant` are accepted as aliases of `human`/`gpt`. */
export const ShareGptTurnSchema = z.object({
  from: z.enum(Object.keys(ROLES) as [keyof typeof ROLES, ...(keyof typeof ROLES)[]]),
  value: z.string(),
});
export type ShareGptTurn = z.infer<typeof ShareGptTurnSchema>;

const TOOL_RESPONSE = /<tool_response>([\s\S]*?)<\/tool_response>/g;

interface PendingCall {
  id: string;
  name: string;
}

/**
 * The inverse of the Hermes ShareGPT view: `<think>` blocks become reasoning, `<tool_call>`
 * blocks become tool calls (with fresh ids) and `<tool_response>` blocks become tool messages
 * answering them, matched by name, else in order.
 */
export function messagesFromShareGpt(turns: readonly ShareGptTurn[]): ConvertedMessages {
  const messages: Message[] = [];
  const systemParts: string[] = [];
  let pending: PendingCall[] = [];
  for (const [index, turn] of turns.entries()) {
    const role = ROLES[turn.from];
    const where = `conversations.${index}`;
    if (role === 'system') {
      if (messages.length > 0)
        return { reason: `${where}: a system turn is only allowed at the start of the conversation` };
      systemParts.push(turn.value);
    } else if (role === 'user') {
      messages.push({ role: 'user', content: turn.value });
    } else if (role === 'assistant') {
      const converted = assistantTurn(turn.value, index);
      if ('reason' in converted) return { reason: `${where}: ${converted.reason}` };
      messages.push(converted.message);
      pending = (converted.message.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name }));
    } else {
      const answered = toolTurn(turn.value, pending);
      if ('reason' in answered) return { reason: `${where}: ${answered.reason}` };
      messages.push(...answered.messages);
    }
  }
  return systemParts.length > 0 ? { messages, system: systemParts.join('\n\n') } : { messages };
}

function assistantTurn(value: string, turnIndex: number): { message: AssistantMessage } | { reason: string } {
  const thought = extractInlineReasoning(value);
  const parsed = parseHermesToolCalls(thought.content ?? '');
  const broken = parsed.toolCalls.find((call) => call.parseError);
  if (broken) return { reason: broken.parseError! };
  const message: AssistantMessage = { role: 'assistant', content: parsed.content };
  const reasoning = thought.reasoning
    .map((part) => part.trim())
    .filter(Boolean)
    .join('\n\n');
  if (reasoning) message.reasoning = reasoning;
  if (parsed.toolCalls.length > 0) {
    message.tool_calls = parsed.toolCalls.map((call, k) => ({
      id: `call_${turnIndex}_${k}`,
      type: 'function',
      function: call.function,
    }));
  }
  return { message };
}

function toolTurn(value: string, pending: PendingCall[]): { messages: ToolMessage[] } | { reason: string } {
  const blocks = [...value.matchAll(TOOL_RESPONSE)].map((match) => match[1]!.trim());
  const responses = blocks.length > 0 ? blocks.map(parseResponse) : [{ content: value }];
  const messages: ToolMessage[] = [];
  for (const response of responses) {
    const at = response.name === undefined ? 0 : pending.findIndex((call) => call.name === response.name);
    const call = pending[at];
    if (!call) {
      const what = response.name === undefined ? 'a tool result' : `a result of '${response.name}'`;
      return { reason: `${what} with no matching <tool_call> in the preceding gpt turn` };
    }
    pending.splice(at, 1);
    messages.push({ role: 'tool', tool_call_id: call.id, name: call.name, content: response.content });
  }
  return { messages };
}

/** A `<tool_response>` block: JSON `{name, content}` as Hermes writes it, else plain text. */
function parseResponse(block: string): { name?: string; content: string } {
  let value: unknown;
  try {
    value = JSON.parse(block);
  } catch {
    return { content: block };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { content: block };
  const { name, content } = value as { name?: unknown; content?: unknown };
  const text = content === undefined ? block : typeof content === 'string' ? content : JSON.stringify(content);
  return typeof name === 'string' ? { name, content: text } : { content: text };
}
