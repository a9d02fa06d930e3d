import { addUsage, emptyUsage, type Message, type ToolSpec, type Usage } from '../model/messages.js';
import { readTodos } from '../tools/todo.js';
import { compressionInForce, planCompression, requestView, type Compression } from './compression.js';
import type { Summarizer } from './summarizer.js';
import { TokenCounter, type CountRequest, type CountTokens } from './token-count.js';

export interface ContextWindowOptions {
  /** The model's window in tokens (config, the server's /v1/models, or the default). */
  contextLength: number;
  /** Compress when the next request would pass this fraction of the window (default 0.8). */
  threshold?: number;
  /** Turns (an assistant message with its tool results, or a user message) kept verbatim (default 4). */
  keepLastTurns?: number;
  /** Writes the summaries; without one the conversation is never compressed. */
  summarize?: Summarizer;
  /** A real tokenizer, when one is configured; default a conservative character ratio. */
  countTokens?: CountTokens;
  /** The exact size of a request (`tokenizer:`): used instead of usage and estimates when set. */
  countRequest?: CountRequest;
  /** Compressions made earlier in this conversation (a chat session's previous messages). */
  compressions?: Compression[];
}

export const DEFAULT_COMPRESSION_THRESHOLD = 0.8;
export const DEFAULT_KEEP_LAST_TURNS = 4;

/**
 * The conversation as the model sees it: the transcript with the latest compression applied.
 * Decides when to compress and does it; the transcript itself is never rewritten.
 */
export class ContextWindow {
  readonly compressions: Compression[];
  /** Tokens the summariser used. */
  readonly usage: Usage = emptyUsage();
  private readonly counter: TokenCounter;

  constructor(private readonly options: ContextWindowOptions | undefined) {
    this.counter = new TokenCounter(options?.countTokens, options?.countRequest);
    this.compressions = [...(options?.compressions ?? [])];
  }

  view(transcript: readonly Message[]): Message[] {
    return requestView(transcript, compressionInForce(this.compressions, transcript.length));
  }

  observe(usage: Usage, requestLength: number): void {
    this.counter.observe(usage, requestLength);
  }

  /** Before a call: compress when the request would pass the threshold. Returns the new compression, if any. */
  async beforeCall(
    transcript: readonly Message[],
    call: number,
    tools: ToolSpec[] | undefined,
    state: Map<string, unknown>,
    signal: AbortSignal,
  ): Promise<Compression | undefined> {
    const window = this.options;
    if (!window?.summarize) return undefined;
    const tokens = this.counter.next(this.view(transcript), tools);
    if (tokens <= window.contextLength * (window.threshold ?? DEFAULT_COMPRESSION_THRESHOLD)) return undefined;
    return this.compress(transcript, call, tools, state, signal, { trigger: 'threshold', tokens });
  }

  /** The server said the request does not fit: compress if anything can be. */
  async afterOverflow(
    transcript: readonly Message[],
    call: number,
    tools: ToolSpec[] | undefined,
    state: Map<string, unknown>,
    signal: AbortSignal,
  ): Promise<Compression | undefined> {
    if (!this.options?.summarize) return undefined;
    const tokens = this.options.contextLength;
    return this.compress(transcript, call, tools, state, signal, { trigger: 'overflow', tokens });
  }

  /** Compress now, whatever the size (chat's /compress); undefined when nothing can be compressed. */
  async compressNow(
    transcript: readonly Message[],
    tools: ToolSpec[] | undefined,
    state: Map<string, unknown>,
    signal: AbortSignal,
  ): Promise<Compression | undefined> {
    if (!this.options?.summarize) return undefined;
    const tokens = this.estimate(transcript, tools);
    return this.compress(transcript, 0, tools, state, signal, { trigger: 'manual', tokens });
  }

  /** The size of the next request over `transcript`, in tokens, as the compression threshold counts it. */
  estimate(transcript: readonly Message[], tools: ToolSpec[] | undefined): number {
    return this.counter.next(this.view(transcript), tools);
  }

  get window(): { contextLength: number; threshold: number; compresses: boolean } {
    return {
      contextLength: this.options?.contextLength ?? 0,
      threshold: this.options?.threshold ?? DEFAULT_COMPRESSION_THRESHOLD,
      compresses: this.options?.summarize !== undefined,
    };
  }

  private async compress(
    transcript: readonly Message[],
    call: number,
    tools: ToolSpec[] | undefined,
    state: Map<string, unknown>,
    signal: AbortSignal,
    why: { trigger: Compression['trigger']; tokens: number },
  ): Promise<Compression | undefined> {
    const previous = compressionInForce(this.compressions, transcript.length);
    // One compression per transcript length: a tail that alone passes the threshold is the overflow path's business.
    if (previous?.at_message === transcript.length && why.trigger === 'threshold') return undefined;
    const plan = planCompression(transcript, this.options!.keepLastTurns ?? DEFAULT_KEEP_LAST_TURNS, previous);
    if (!plan) return undefined;
    const fresh = transcript.slice(previous?.replaced_end ?? plan.start, plan.end);
    const summary = await this.options!.summarize!({ messages: fresh, previousSummary: previous?.summary, signal });
    if (summary.usage) addUsage(this.usage, summary.usage);
    const compression: Compression = {
      at_call: call,
      at_message: transcript.length,
      trigger: why.trigger,
      tokens_before: why.tokens,
      tokens_after: 0,
      replaced_start: plan.start,
      replaced_end: plan.end,
      summary: summary.text,
      todo: todoText(state),
    };
    this.compressions.push(compression);
    this.counter.forget();
    compression.tokens_after = this.counter.next(this.view(transcript), tools);
    return compression;
  }
}

function todoText(state: Map<string, unknown>): string | null {
  const todos = readTodos(state);
  return todos.length === 0 ? null : todos.map((todo) => `- [${todo.status}] ${todo.id}: ${todo.content}`).join('\n');
}
