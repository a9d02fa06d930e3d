import type { Endpoint } from '../config/endpoint.js';

/**
 * Explicit prompt-cache breakpoints for models that need them (Anthropic models, also through
 * OpenRouter): `cache_control` on the system prompt and on the last three messages, the four
 * breakpoints Anthropic allows. Other servers cache prefixes on their own and get the messages
 * untouched. `prompt_caching: auto` marks only models named like Anthropic's.
 */
const MARKED_TAIL = 3;

export function wantsCacheMarks(endpoint: Pick<Endpoint, 'model' | 'prompt_caching'>): boolean {
  if (endpoint.prompt_caching === 'on') return true;
  if (endpoint.prompt_caching === 'off') return false;
  return /anthropic|claude/i.test(endpoint.model);
}

type WireMessage = Record<string, unknown>;

/** The wire messages with breakpoints added (new objects; the input is not changed). */
export function withCacheMarks(
  endpoint: Pick<Endpoint, 'model' | 'prompt_caching'>,
  messages: WireMessage[],
): WireMessage[] {
  if (!wantsCacheMarks(endpoint)) return messages;
  const marked = new Set<number>();
  const system = messages.findIndex((message) => message.role === 'system');
  if (system >= 0) marked.add(system);
  for (let index = messages.length - 1; index >= 0 && marked.size < MARKED_TAIL + (system >= 0 ? 1 : 0); index--) {
    if (typeof messages[index]!.content === 'string' && messages[index]!.content !== '') marked.add(index);
  }
  return messages.map((message, index) => (marked.has(index) ? mark(message) : message));
}

function mark(message: WireMessage): WireMessage {
  return {
    ...message,
    content: [{ type: 'text', text: message.content as string, cache_control: { type: 'ephemeral' } }],
  };
}
