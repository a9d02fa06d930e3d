import type { Message } from '../model/messages.js';

/**
 * A conversation prefix the model can continue: it ends with a user message or tool results,
 * and every tool call is answered (and only those) before the conversation moves on.
 * Returns why not, or undefined when the prefix is sound.
 */
export function checkPrefix(messages: readonly Message[], field: string): string | undefined {
  if (messages.length === 0) return `${field}: holds no user message (only a system prompt)`;
  let pending = new Set<string>();
  for (const message of messages) {
    if (message.role === 'tool') {
      if (!pending.delete(message.tool_call_id))
        return `${field}: a tool result answers unknown tool_call_id "${message.tool_call_id}"`;
      continue;
    }
    if (pending.size > 0) return unanswered(field, pending);
    if (message.role === 'assistant') pending = new Set((message.tool_calls ?? []).map((call) => call.id));
  }
  if (pending.size > 0) return unanswered(field, pending);
  const last = messages[messages.length - 1]!;
  if (last.role === 'assistant') {
    return `${field}: a conversation prefix must end with a user message or tool results (the model answers next); it ends with an assistant message`;
  }
  return undefined;
}

function unanswered(field: string, pending: Set<string>): string {
  return `${field}: tool call${pending.size > 1 ? 's' : ''} ${[...pending].map((id) => `"${id}"`).join(', ')} ha${pending.size > 1 ? 've' : 's'} no tool result`;
}
