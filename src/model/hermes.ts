import type { ParsedToolCall } from './types.js';

/**
 * The Hermes tool-call format: endpoints without a tool parser (a plain vLLM, llama.cpp or a
 * fine-tune served raw) return calls inside the content as
 * `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks.
 */
export interface HermesParseResult {
  /** The content outside the blocks, trimmed; null when nothing is left. */
  content: string | null;
  toolCalls: ParsedToolCall[];
}

// A block may be unclosed (generation often stops right after the JSON): it then ends at the
// next block or at the end of the content.
const BLOCK = /<tool_call>([\s\S]*?)(?:<\/tool_call>|(?=<tool_call>)|$)/g;
const RECOVERABLE_NAME = /"name"\s*:\s*"([^"\\]+)"/;

export const INVALID_TOOL_CALL_NAME = 'invalid_tool_call';

export function parseHermesToolCalls(content: string): HermesParseResult {
  const toolCalls: ParsedToolCall[] = [];
  const outside = content.replace(BLOCK, (_block, inner: string) => {
    toolCalls.push(parseBlock(inner.trim(), toolCalls.length));
    return '';
  });
  if (toolCalls.length === 0) return { content, toolCalls };
  const visible = outside.trim();
  return { content: visible === '' ? null : visible, toolCalls };
}

function parseBlock(text: string, index: number): ParsedToolCall {
  const id = `hermes_${index}`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return malformed(
      id,
      text,
      `tool call block ${index + 1} is not valid JSON (${(error as Error).message}); expected {"name": "<tool>", "arguments": {...}}`,
    );
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return malformed(
      id,
      text,
      `tool call block ${index + 1} is not a JSON object; expected {"name": "<tool>", "arguments": {...}}`,
    );
  }
  const { name, arguments: args } = value as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string' || name === '') {
    return malformed(
      id,
      text,
      `tool call block ${index + 1} has no "name" string; expected {"name": "<tool>", "arguments": {...}}`,
    );
  }
  return { id, type: 'function', function: { name, arguments: argumentsText(args) } };
}

/** Arguments given as a JSON string are passed through as-is: the registry reports them if bad. */
function argumentsText(args: unknown): string {
  if (args === undefined || args === null) return '{}';
  if (typeof args === 'string') return args;
  return JSON.stringify(args);
}

function malformed(id: string, text: string, parseError: string): ParsedToolCall {
  const name = RECOVERABLE_NAME.exec(text)?.[1] ?? INVALID_TOOL_CALL_NAME;
  return { id, type: 'function', function: { name, arguments: text }, parseError };
}
