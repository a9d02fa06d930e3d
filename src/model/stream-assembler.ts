import { TokenCollector } from './completion-tokens.js';
import { partKind, partText, thinkingText } from './content-parts.js';
import type { ModelDelta } from './types.js';
import type { WireCompletion, WireMessage, WireTimings, WireToolCall, WireUsage } from './wire.js';

/** One streamed tool-call piece: `index`, `id`, both, or (a continuation) neither. */
export type WireToolCallDelta = WireToolCall & { index?: number };

/** One streamed chunk, read loosely (compatible servers add reasoning fields to the delta). */
export interface WireChunk {
  choices?: Array<{
    delta?: Omit<WireMessage, 'tool_calls'> & { tool_calls?: WireToolCallDelta[] | null };
    finish_reason?: string | null;
  }>;
  usage?: WireUsage | null;
  timings?: WireTimings | null;
}

type ReasoningSource = 'reasoning_content' | 'reasoning' | 'reasoning_details' | 'content_parts';

interface ReasoningDetail {
  index?: number;
  [key: string]: unknown;
}

interface ToolCallSlot {
  index: number | undefined;
  id?: string;
  name?: string;
  arguments: string;
}

/** Text-bearing fields of a streamed reasoning detail: pieces of one detail are concatenated. */
const APPENDED_DETAIL_FIELDS = ['text', 'summary', 'data'];

/**
 * Folds streamed chunks into the same wire message a non-streamed call returns, reporting each
 * piece as a delta on the way. Inline `<think>` tags are left in the content here: extraction
 * runs on the assembled message, so both paths give an identical response.
 */
export class StreamAssembler {
  private content = '';
  /** Set once the content arrives as parts (magistral): the parts, merged piece by piece. */
  private parts: Array<Record<string, unknown>> | undefined;
  private refusal = '';
  private readonly images: unknown[] = [];
  private reasoningContent = '';
  private reasoning = '';
  private readonly details: ReasoningDetail[] = [];
  private readonly toolCalls: ToolCallSlot[] = [];
  private finishReason: string | null = null;
  private reasoningSource: ReasoningSource | undefined;
  private usage: WireUsage | undefined;
  private timings: WireTimings | undefined;
  private readonly tokens = new TokenCollector();

  constructor(private readonly onDelta: (delta: ModelDelta) => void) {}

  add(chunk: WireChunk): void {
    if (chunk.usage) this.usage = chunk.usage;
    if (chunk.timings) this.timings = chunk.timings;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    // vLLM sends prompt_token_ids on the first chunk and each chunk's new token ids and logprobs.
    this.tokens.add(choice as Record<string, unknown>, chunk as Record<string, unknown>);
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    const delta = choice.delta;
    if (!delta) return;
    this.addReasoning(delta);
    this.addContent(delta.content);
    if (typeof delta.refusal === 'string') this.refusal += delta.refusal;
    if (Array.isArray(delta.images)) this.images.push(...(delta.images as unknown[]));
    for (const call of delta.tool_calls ?? []) this.addToolCall(call);
  }

  private addContent(content: unknown): void {
    if (typeof content === 'string') {
      if (content === '') return;
      if (this.parts) this.appendPart({ type: 'text', text: content });
      else this.content += content;
      this.onDelta({ type: 'content', text: content });
      return;
    }
    if (!Array.isArray(content)) return;
    if (!this.parts) {
      this.parts = this.content === '' ? [] : [{ type: 'text', text: this.content }];
      this.content = '';
    }
    for (const part of content) {
      const kind = partKind(part);
      if (kind === 'text') {
        const text = partText(part);
        this.appendPart({ type: 'text', text });
        if (text) this.onDelta({ type: 'content', text });
      } else if (kind === 'thinking') {
        const text = thinkingText(part as Record<string, unknown>);
        this.appendPart(part as Record<string, unknown>, text);
        if (text) this.reportReasoning('content_parts', text);
      } else if (part && typeof part === 'object') this.parts.push({ ...(part as Record<string, unknown>) });
    }
  }

  /** Consecutive pieces of one kind form one part; a thinking part keeps its nested form. */
  private appendPart(piece: Record<string, unknown>, thinking?: string): void {
    const parts = this.parts!;
    const last = parts.at(-1);
    if (thinking === undefined) {
      if (last && last.type === 'text' && typeof last.text === 'string') last.text += String(piece.text ?? '');
      else parts.push({ type: 'text', text: String(piece.text ?? '') });
      return;
    }
    if (last && partKind(last) === 'thinking' && last.type === piece.type) {
      const merged = thinkingText(last) + thinking;
      last[thinkingField(last)] = Array.isArray(last[thinkingField(last)]) ? [{ type: 'text', text: merged }] : merged;
      return;
    }
    const field = thinkingField(piece);
    parts.push({ ...piece, [field]: Array.isArray(piece[field]) ? [{ type: 'text', text: thinking }] : thinking });
  }

  /**
   * Providers may send the same reasoning in several fields (OpenRouter: `reasoning` and
   * `reasoning_details`): all are kept for the final message, but deltas come from the first
   * field seen, so a viewer shows the text once.
   */
  private addReasoning(delta: Omit<WireMessage, 'tool_calls'>): void {
    if (delta.reasoning_content) {
      this.reasoningContent += delta.reasoning_content;
      this.reportReasoning('reasoning_content', delta.reasoning_content);
    }
    if (delta.reasoning) {
      this.reasoning += delta.reasoning;
      this.reportReasoning('reasoning', delta.reasoning);
    }
    for (const detail of delta.reasoning_details ?? []) {
      const text = this.addDetail(detail as ReasoningDetail);
      if (text) this.reportReasoning('reasoning_details', text);
    }
  }

  private reportReasoning(source: ReasoningSource, text: string): void {
    this.reasoningSource ??= source;
    if (this.reasoningSource === source) this.onDelta({ type: 'reasoning', text });
  }

  /**
   * Pieces of one reasoning detail share an `index`: their text is concatenated, and fields that
   * arrive later (the `signature` in the last piece) are kept.
   */
  private addDetail(piece: ReasoningDetail): string | undefined {
    const existing =
      piece.index === undefined ? undefined : this.details.find((detail) => detail.index === piece.index);
    if (!existing) {
      this.details.push({ ...piece });
    } else {
      for (const [field, value] of Object.entries(piece)) {
        if (APPENDED_DETAIL_FIELDS.includes(field) && typeof value === 'string') {
          existing[field] = (typeof existing[field] === 'string' ? existing[field] : '') + value;
        } else if (value !== null && value !== undefined) existing[field] = value;
      }
    }
    const text = piece.text ?? piece.summary;
    return typeof text === 'string' ? text : undefined;
  }

  /**
   * Servers differ in how they mark which call a piece belongs to: by `index` (OpenAI), by `id`
   * only (some send every piece of a call with its id and no index), or both. A piece with a new
   * id starts a new call even when it reuses an index; a piece with neither continues the last call.
   */
  private addToolCall(piece: WireToolCallDelta): void {
    const call = this.slotFor(piece);
    if (piece.id && !call.id) call.id = piece.id;
    const name = piece.function?.name;
    if (name && !call.name) call.name = name;
    const argumentsDelta = piece.function?.arguments ?? '';
    call.arguments += argumentsDelta;
    this.onDelta({
      type: 'tool_call',
      index: this.toolCalls.indexOf(call),
      ...(piece.id ? { id: piece.id } : {}),
      ...(name ? { name } : {}),
      ...(argumentsDelta ? { argumentsDelta } : {}),
    });
  }

  private slotFor(piece: WireToolCallDelta): ToolCallSlot {
    const index = typeof piece.index === 'number' ? piece.index : undefined;
    if (piece.id) {
      const byId = this.toolCalls.find((call) => call.id === piece.id);
      if (byId) return byId;
    }
    if (index !== undefined) {
      const byIndex = findLast(this.toolCalls, (call) => call.index === index);
      // The same index with another id (some servers number every call 0) is another call.
      if (byIndex && !(piece.id && byIndex.id && byIndex.id !== piece.id)) return byIndex;
    } else if (!piece.id && this.toolCalls.length > 0) return this.toolCalls.at(-1)!;
    const slot: ToolCallSlot = { index, arguments: '' };
    this.toolCalls.push(slot);
    return slot;
  }

  result(): WireCompletion {
    const message: WireMessage = { content: this.parts ?? (this.content === '' ? null : this.content) };
    if (this.refusal) message.refusal = this.refusal;
    if (this.images.length > 0) message.images = this.images;
    if (this.reasoningContent) message.reasoning_content = this.reasoningContent;
    if (this.reasoning) message.reasoning = this.reasoning;
    if (this.details.length > 0) message.reasoning_details = this.details;
    // Calls keep the order they began in; indexes only group pieces.
    if (this.toolCalls.length > 0) {
      message.tool_calls = this.toolCalls.map((call) => ({
        ...(call.id ? { id: call.id } : {}),
        type: 'function',
        function: { name: call.name ?? '', arguments: call.arguments },
      }));
    }
    const tokens = this.tokens.result();
    return {
      message,
      finishReason: this.finishReason,
      usage: this.usage,
      ...(this.timings ? { timings: this.timings } : {}),
      ...(tokens ? { tokens } : {}),
    };
  }
}

/** The field a reasoning part keeps its text in. */
function thinkingField(part: Record<string, unknown>): string {
  for (const field of ['thinking', 'reasoning', 'text']) if (part[field] !== undefined) return field;
  return 'thinking';
}

function findLast<T>(items: T[], predicate: (item: T) => boolean): T | undefined {
  for (let position = items.length - 1; position >= 0; position--)
    if (predicate(items[position]!)) return items[position];
  return undefined;
}
