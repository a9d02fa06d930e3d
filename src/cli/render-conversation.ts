import { contentText, type Message } from '../model/messages.js';
import { printable } from '../util/terminal-text.js';

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more chars)` : text;
}

/**
 * A readable transcript: each turn labelled, tool calls with their arguments, results clipped.
 * What the model and tools wrote is printed with its control characters escaped (printable()).
 */
export function renderConversation(
  messages: readonly Message[],
  options: { maxResultChars?: number; showSystem?: boolean } = {},
): string {
  const max = options.maxResultChars ?? 2_000;
  const lines: string[] = [];
  for (const message of messages) {
    if (message.role === 'system') {
      if (options.showSystem) lines.push(`[system] ${message.content}`);
    } else if (message.role === 'user') lines.push(`[user] ${contentText(message.content)}`);
    else if (message.role === 'assistant') {
      if (message.reasoning) lines.push(`[reasoning] ${clip(message.reasoning, max)}`);
      if (message.content?.trim()) lines.push(`[assistant] ${message.content}`);
      for (const call of message.tool_calls ?? [])
        lines.push(`[tool call] ${call.function.name} ${call.function.arguments}`);
    } else lines.push(`[tool result: ${message.name ?? message.tool_call_id}] ${clip(message.content, max)}`);
  }
  return printable(lines.join('\n'));
}
