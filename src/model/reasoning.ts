/**
 * Reasoning comes back in many shapes: a `reasoning_content` field (DeepSeek, vLLM, SGLang), a
 * `reasoning` field or `reasoning_details[]` (OpenRouter), or inline tags in the content
 * (`<think>` from Qwen/DeepSeek templates, `<REASONING_SCRATCHPAD>` from Hermes). Whatever the
 * source, traj keeps it apart from the visible content.
 */

import { readContent } from './content-parts.js';

/** The reasoning-bearing fields of an assistant message as it arrives on the wire. */
export interface WireReasoningFields {
  /** A string, null, or an array of parts (text, thinking/reasoning, image_url). */
  content?: unknown;
  reasoning_content?: string | null;
  reasoning?: string | null;
  reasoning_details?: unknown;
}

export interface ExtractedReasoning {
  /** The visible content with every reasoning block removed; null when nothing visible is left. */
  content: string | null;
  /** All reasoning found, joined by blank lines; undefined when there was none. */
  reasoning: string | undefined;
  /** Where the reasoning came from (the first source that had text). */
  source: ReasoningSource | undefined;
  /** The URLs of image parts of the content. */
  images: string[];
}

export type ReasoningSource = 'reasoning_content' | 'reasoning' | 'reasoning_details' | 'content_parts' | 'tags';

const TAGS = ['think', 'REASONING_SCRATCHPAD'];
const CLOSED_BLOCK = new RegExp(`<(${TAGS.join('|')})>([\\s\\S]*?)</\\1>`, 'g');
const UNCLOSED_LEADING_THINK = /^\s*<think>([\s\S]*)$/;
// Templates that put `<think>` into the prompt leave only the closing tag in the output.
const ORPHAN_CLOSING_THINK = /^([\s\S]*?)<\/think>/;

export function extractReasoning(message: WireReasoningFields): ExtractedReasoning {
  const read = readContent(message.content);
  const sources: Array<[ReasoningSource, string]> = [];
  const fromField = reasoningFromFields(message);
  if (fromField) sources.push(fromField);
  for (const text of read.thinking) sources.push(['content_parts', text]);
  const inline = extractInlineReasoning(read.text ?? '');
  for (const text of inline.reasoning) sources.push(['tags', text]);
  const kept = sources.map(([source, text]) => [source, text.trim()] as const).filter(([, text]) => text !== '');
  const reasoning = kept.map(([, text]) => text).join('\n\n');
  return { content: inline.content, reasoning: reasoning || undefined, source: kept[0]?.[0], images: read.images };
}

/** The first reasoning field that has text: some providers send the same text in several. */
function reasoningFromFields(message: WireReasoningFields): [ReasoningSource, string] | undefined {
  if (message.reasoning_content) return ['reasoning_content', message.reasoning_content];
  if (message.reasoning) return ['reasoning', message.reasoning];
  if (Array.isArray(message.reasoning_details)) {
    const texts = message.reasoning_details.map(detailText).filter((text): text is string => Boolean(text));
    if (texts.length > 0) return ['reasoning_details', texts.join('\n')];
  }
  return undefined;
}

function detailText(detail: unknown): string | undefined {
  if (!detail || typeof detail !== 'object') return undefined;
  const { text, summary } = detail as { text?: unknown; summary?: unknown };
  if (typeof text === 'string') return text;
  if (typeof summary === 'string') return summary;
  return undefined;
}

/** Remove `<think>`/`<REASONING_SCRATCHPAD>` blocks from content, returning what they held. */
export function extractInlineReasoning(content: string): { content: string | null; reasoning: string[] } {
  const reasoning: string[] = [];
  let visible = content;
  const orphan = ORPHAN_CLOSING_THINK.exec(visible);
  if (orphan && !orphan[1]!.includes('<think>')) {
    reasoning.push(orphan[1]!);
    visible = visible.slice(orphan[0].length);
  }
  let found = reasoning.length > 0;
  visible = visible.replace(CLOSED_BLOCK, (_block, _tag, inner: string) => {
    reasoning.push(inner);
    found = true;
    return '';
  });
  const unclosed = UNCLOSED_LEADING_THINK.exec(visible);
  if (unclosed) {
    reasoning.push(unclosed[1]!);
    visible = '';
    found = true;
  }
  if (found) visible = visible.trim();
  return { content: visible === '' ? null : visible, reasoning };
}
