import type { Endpoint } from '../config/endpoint.js';
import type { ExtractedReasoning } from './reasoning.js';
import type { WireMessage } from './wire.js';

/**
 * What an assistant message sends back with itself on later requests (`endpoint.reasoning_echo`).
 *
 * Thinking models served through some providers continue a tool loop only when they get their
 * reasoning back, in the form they sent it:
 * - OpenRouter asks for `reasoning_details` unmodified (Anthropic and Gemini models sign them,
 *   or send them encrypted);
 * - DeepSeek's thinking mode, Moonshot's Kimi thinking models, GLM's preserved thinking and
 *   Qwen3 chat templates read `reasoning_content` of the turns that called tools;
 * - Mistral's magistral reads its `thinking` parts in the content.
 *
 * `auto` sends exactly that state; `always` sends every turn's reasoning in the form it came
 * (inline tags go back inside the content); `never` sends none. The result is stored on the
 * message as `echo`, so the record shows exactly what was sent.
 */
export function reasoningEcho(
  policy: NonNullable<Endpoint['reasoning_echo']>,
  wire: WireMessage,
  extracted: ExtractedReasoning,
  content: string | null,
  hasToolCalls: boolean,
): Record<string, unknown> | undefined {
  if (policy === 'never') return undefined;
  const details =
    Array.isArray(wire.reasoning_details) && wire.reasoning_details.length > 0 ? wire.reasoning_details : undefined;
  if (details) return { reasoning_details: details };
  const eager = policy === 'always' || hasToolCalls;
  if (!eager) return undefined;
  if (typeof wire.reasoning_content === 'string' && wire.reasoning_content !== '')
    return { reasoning_content: wire.reasoning_content };
  if (Array.isArray(wire.content) && extracted.source === 'content_parts') return { content: wire.content };
  if (policy !== 'always' || extracted.reasoning === undefined) return undefined;
  if (typeof wire.reasoning === 'string' && wire.reasoning !== '') return { reasoning: wire.reasoning };
  if (extracted.source === 'tags') return { content: `<think>\n${extracted.reasoning}\n</think>\n${content ?? ''}` };
  return undefined;
}
