import { contentText, type Message } from '../model/messages.js';

/** The text of the last assistant message that has any: the answer a reward or judge grades. */
export function finalAnswer(messages: readonly Message[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role === 'assistant' && message.content?.trim()) return message.content;
  }
  return '';
}

/** The task as the agent was given it: its first user message. */
export function taskPrompt(messages: readonly Message[]): string {
  const first = messages.find((message) => message.role === 'user');
  return first ? contentText(first.content) : '';
}

/**
 * The conversation as plain text for a judge: each user and assistant turn with text, labelled
 * (tool calls and results are left out; a simulated user's turns are USER turns).
 */
export function conversationText(messages: readonly Message[]): string {
  return messages
    .flatMap((message) => {
      if (message.role === 'user') return [`USER: ${contentText(message.content).trim()}`];
      if (message.role === 'assistant' && message.content?.trim()) return [`ASSISTANT: ${message.content.trim()}`];
      return [];
    })
    .join('\n\n');
}
