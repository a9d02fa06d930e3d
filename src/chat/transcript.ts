import { contentText, type Message } from '../model/messages.js';
import { describeCall, describeResult } from './renderer.js';
import { oneLine, type Style } from './style.js';

/** A compact, readable view of stored messages (for /resume, /fork and `traj sessions show`). */
export function formatTranscript(
  messages: readonly Message[],
  style: Style,
  options: { showSystem?: boolean; width?: number } = {},
): string {
  const width = options.width ?? 400;
  const lines: string[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        if (options.showSystem) lines.push(style.dim(`[system] ${oneLine(message.content, width)}`));
        break;
      case 'user':
        lines.push(`${style.bold('[user]')} ${contentText(message.content)}`);
        break;
      case 'assistant':
        if (message.reasoning?.trim()) lines.push(style.dim(`(thinking) ${oneLine(message.reasoning, width)}`));
        if (message.content?.trim()) lines.push(`[assistant] ${message.content}`);
        for (const call of message.tool_calls ?? []) {
          lines.push(
            `${style.cyan(`  ⚙ ${call.function.name}`)}  ${describeCall({ id: call.id, name: call.function.name, arguments: call.function.arguments })}`,
          );
        }
        break;
      case 'tool':
        lines.push(`  ↳ ${message.name ?? message.tool_call_id}  ${describeResult(message.content)}`);
        break;
    }
  }
  return lines.join('\n');
}

/** The tail of a conversation: the messages from the `exchanges`-th last user message on. */
export function lastExchanges(messages: readonly Message[], exchanges: number): { shown: Message[]; hidden: number } {
  let start = messages.length;
  let seen = 0;
  for (let index = messages.length - 1; index >= 0 && seen < exchanges; index--) {
    start = index;
    if (messages[index]!.role === 'user') seen++;
  }
  const from = Math.max(1, start);
  return { shown: messages.slice(from), hidden: Math.max(0, from - 1) };
}
