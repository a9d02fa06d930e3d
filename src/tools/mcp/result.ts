import { isDeepStrictEqual } from 'node:util';
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { ToolFailure } from '../tool-failure.js';

function base64Bytes(data: string): number {
  return Buffer.byteLength(data, 'base64');
}

/** One content block as text: binary content is described (type, size), never inlined. */
export function renderContentBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type} ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
    case 'resource_link':
      return `[resource ${block.uri}${block.mimeType ? ` ${block.mimeType}` : ''}${block.name ? ` "${block.name}"` : ''}]`;
    case 'resource': {
      const { resource } = block;
      if ('text' in resource) return `[resource ${resource.uri}]\n${resource.text}`;
      return `[resource ${resource.uri}${resource.mimeType ? ` ${resource.mimeType}` : ''}, ${base64Bytes(resource.blob)} bytes]`;
    }
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

function parsesTo(text: string, value: unknown): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(text), value);
  } catch {
    return false;
  }
}

/** True when every leaf of `value` is a string found verbatim in `text` (e.g. `{"content": <the text>}`). */
function stringsWithin(value: unknown, text: string): boolean {
  if (typeof value === 'string') return text.includes(value);
  if (Array.isArray(value)) return value.every((item) => stringsWithin(item, text));
  if (value && typeof value === 'object') return Object.values(value).every((item) => stringsWithin(item, text));
  return false;
}

/**
 * The text the model reads for a call result: content blocks joined by newlines, then the
 * structured content as JSON unless the text already carries it — as the same JSON (the spec asks
 * servers to send both) or as its strings — since once is enough for the context window.
 */
export function renderCallToolResult(result: CallToolResult | { toolResult: unknown }): string {
  if ('toolResult' in result) return JSON.stringify(result.toolResult);
  const blocks = result.content ?? [];
  const text = blocks.map(renderContentBlock).join('\n');
  const structured = result.structuredContent;
  if (structured === undefined) return text;
  const carried =
    blocks.some((block) => block.type === 'text' && parsesTo(block.text, structured)) ||
    stringsWithin(structured, text);
  if (carried) return text;
  return text ? `${text}\n${JSON.stringify(structured)}` : JSON.stringify(structured);
}

/** The result as the tool output; an `isError` result fails the call so the model sees an error. */
export function toolOutputOf(result: CallToolResult | { toolResult: unknown }, tool: string): string {
  const text = renderCallToolResult(result);
  if ('isError' in result && result.isError)
    throw new ToolFailure(text || `${tool} reported an error without a message`);
  return text;
}
