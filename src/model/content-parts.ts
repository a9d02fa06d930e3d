/**
 * An assistant message's `content` arrives as a string, as null, or as an array of parts:
 * `text` parts, reasoning parts (Mistral's magistral: `{"type": "thinking", "thinking":
 * [{"type": "text", "text": ...}]}`; others send `thinking`/`reasoning` with the text as a string),
 * `image_url` parts and `refusal` parts. traj keeps the text as the visible content, the
 * reasoning parts as the turn's reasoning and the images' URLs beside them.
 */
export interface ContentRead {
  /** The text parts concatenated (a string content as is); null when there is none. */
  text: string | null;
  /** The text of each reasoning part, in order. */
  thinking: string[];
  /** The URL (or data URL) of each image part. */
  images: string[];
  /** True when the content was an array of parts. */
  parts: boolean;
}

const THINKING_TYPES = new Set(['thinking', 'reasoning', 'reasoning_text', 'reasoning_content']);
const TEXT_TYPES = new Set(['text', 'output_text', 'refusal']);

export function readContent(content: unknown): ContentRead {
  if (content === null || content === undefined) return { text: null, thinking: [], images: [], parts: false };
  if (typeof content === 'string') return { text: content, thinking: [], images: [], parts: false };
  if (!Array.isArray(content)) return { text: nestedText(content) || null, thinking: [], images: [], parts: false };
  let text = '';
  let hasText = false;
  const thinking: string[] = [];
  const images: string[] = [];
  for (const part of content) {
    const kind = partKind(part);
    if (kind === 'text') {
      text += partText(part);
      hasText = true;
    } else if (kind === 'thinking') thinking.push(thinkingText(part as Record<string, unknown>));
    else if (kind === 'image') {
      const url = imageUrl(part as Record<string, unknown>);
      if (url) images.push(url);
    }
  }
  return { text: hasText && text !== '' ? text : null, thinking, images, parts: true };
}

export type PartKind = 'text' | 'thinking' | 'image' | 'other';

export function partKind(part: unknown): PartKind {
  if (typeof part === 'string') return 'text';
  if (!part || typeof part !== 'object') return 'other';
  const type = (part as { type?: unknown }).type;
  if (typeof type !== 'string') return typeof (part as { text?: unknown }).text === 'string' ? 'text' : 'other';
  if (TEXT_TYPES.has(type)) return 'text';
  if (THINKING_TYPES.has(type)) return 'thinking';
  if (type === 'image_url' || type === 'image') return 'image';
  return 'other';
}

/** The text of a text part (a `refusal` part's refusal). */
export function partText(part: unknown): string {
  if (typeof part === 'string') return part;
  const { text, refusal } = part as { text?: unknown; refusal?: unknown };
  if (typeof text === 'string') return text;
  return typeof refusal === 'string' ? refusal : '';
}

/** A reasoning part's text: in `thinking`, `reasoning`, `text` or `summary`, a string or nested text parts. */
export function thinkingText(part: Record<string, unknown>): string {
  for (const field of ['thinking', 'reasoning', 'text', 'content', 'summary']) {
    const value = part[field];
    if (value !== undefined && value !== null && (typeof value === 'string' || Array.isArray(value)))
      return nestedText(value);
  }
  return '';
}

function nestedText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(nestedText).join('');
  if (value && typeof value === 'object') {
    const { text, thinking } = value as { text?: unknown; thinking?: unknown };
    if (typeof text === 'string') return text;
    if (thinking !== undefined) return nestedText(thinking);
  }
  return '';
}

function imageUrl(part: Record<string, unknown>): string | undefined {
  const image = part.image_url ?? part.url;
  if (typeof image === 'string') return image;
  if (image && typeof image === 'object' && typeof (image as { url?: unknown }).url === 'string')
    return (image as { url: string }).url;
  return undefined;
}
