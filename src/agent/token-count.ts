import { contentImages, contentText, type Message, type ToolSpec, type Usage } from '../model/messages.js';

/**
 * Token counts without a tokenizer: a conservative characters-per-token ratio (English prose runs
 * near four, code and JSON nearer three), so the estimate errs towards compressing early rather
 * than overflowing. A real tokenizer can stand in through `countTokens`.
 */
export const CHARS_PER_TOKEN = 3;
/** Per-message framing (role markers, separators) that chat templates add. */
const MESSAGE_OVERHEAD = 4;
/**
 * An image part: providers charge a few hundred to about a thousand tokens for one; its URL (often
 * a long data URL) says nothing about that, so a fixed upper figure stands in.
 */
const IMAGE_TOKENS = 1_000;

export type CountTokens = (text: string) => number;
/** The exact size of a request (the model's tokenizer over its chat template's rendering). */
export type CountRequest = (messages: readonly Message[], tools: readonly ToolSpec[] | undefined) => number;

export const estimateTextTokens: CountTokens = (text) => Math.ceil(text.length / CHARS_PER_TOKEN);

export function estimateMessageTokens(messages: readonly Message[], count: CountTokens = estimateTextTokens): number {
  let total = 0;
  for (const message of messages) {
    const content = message.content ?? '';
    total += MESSAGE_OVERHEAD + count(contentText(content, '')) + contentImages(content).length * IMAGE_TOKENS;
    if (message.role === 'assistant' && message.tool_calls) total += count(JSON.stringify(message.tool_calls));
  }
  return total;
}

/** Each spec's JSON length: specs are built once per tool, so every rollout's first estimate reuses them. */
const specLengths = new WeakMap<ToolSpec, number>();

export function estimateToolTokens(
  tools: readonly ToolSpec[] | undefined,
  count: CountTokens = estimateTextTokens,
): number {
  if (!tools || tools.length === 0) return 0;
  if (count !== estimateTextTokens) return count(JSON.stringify(tools));
  // The length of JSON.stringify(tools): brackets, commas, and each spec's own JSON.
  let length = 2 + tools.length - 1;
  for (const spec of tools) {
    let own = specLengths.get(spec);
    if (own === undefined) {
      own = JSON.stringify(spec).length;
      specLengths.set(spec, own);
    }
    length += own;
  }
  return Math.ceil(length / CHARS_PER_TOKEN);
}

/**
 * The size of the next request: the last response's usage (prompt plus completion, which is the
 * request it answered plus the answer) and an estimate for the messages added since. Without a
 * usable last response, an estimate of the whole request.
 */
export class TokenCounter {
  /** Usage-measured tokens of the first `viewLength` messages of the current view. */
  private measured: { tokens: number; viewLength: number } | undefined;

  constructor(
    private readonly count: CountTokens = estimateTextTokens,
    private readonly countRequest?: CountRequest,
  ) {}

  /** A response arrived for a request of `requestLength` messages; its answer is the next message. */
  observe(usage: Usage, requestLength: number): void {
    const tokens = usage.prompt_tokens + usage.completion_tokens;
    this.measured = tokens > 0 ? { tokens, viewLength: requestLength + 1 } : undefined;
  }

  /** The view changed under the measurement (a compression): estimate from scratch until the next usage. */
  forget(): void {
    this.measured = undefined;
  }

  next(view: readonly Message[], tools: readonly ToolSpec[] | undefined): number {
    // A tokenizer renders and counts the whole request: exact, so no usage is needed.
    if (this.countRequest) return this.countRequest(view, tools);
    if (this.measured && this.measured.viewLength <= view.length) {
      return this.measured.tokens + estimateMessageTokens(view.slice(this.measured.viewLength), this.count);
    }
    return estimateMessageTokens(view, this.count) + estimateToolTokens(tools, this.count);
  }
}
