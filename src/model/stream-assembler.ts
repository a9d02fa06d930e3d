import type { ModelDelta } from './types.js';
import type { WireCompletion, WireMessage, WireToolCall, WireUsage } from './wire.js';

/** One streamed chunk, read loosely (compatible servers add reasoning fields to the delta). */
export interface WireChunk {
  choices?: Array<{
    delta?: Omit<WireMessage, 'tool_calls'> & { tool_calls?: Array<WireToolCall & { index?: number }> | null };
    finish_reason?: string | null;
  }>;
  usage?: WireUsage | null;
}

type ReasoningSource = 'reasoning_content' | 'reasoning' | 'reasoning_details';

interface ReasoningDetail {
  index?: number;
  text?: string;
  summary?: string;
  [key: string]: unknown;
}

/**
 * Folds streamed chunks into the same wire message a non-streamed call returns, reporting each
 * piece as a delta on the way. Inline `<think>` tags are left in the content here: extraction
 * runs on the assembled message, so both paths give an identical response.
 */
export class StreamAssembler {
  private content = '';
  private reasoningContent = '';
  private reasoning = '';
  private readonly details: ReasoningDetail[] = [];
  private readonly toolCalls = new Map<number, { id?: string; name?: string; arguments: string }>();
  private finishReason: string | null = null;
  private reasoningSource: ReasoningSource | undefined;
  private usage: WireUsage | undefined;

  constructor(private readonly onDelta: (delta: ModelDelta) => void) {}

  add(chunk: WireChunk): void {
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    const delta = choice.delta;
    if (!delta) return;
    this.addReasoning(delta);
    if (delta.content) {
      this.content += delta.content;
      this.onDelta({ type: 'content', text: delta.content });
    }
    for (const [position, call] of (delta.tool_calls ?? []).entries()) this.addToolCall(call.index ?? position, call);
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

  /** Pieces of one reasoning detail share an `index`: their text is concatenated. */
  private addDetail(piece: ReasoningDetail): string | undefined {
    const existing = piece.index === undefined ? undefined : this.details.find((detail) => detail.index === piece.index);
    if (!existing) {
      this.details.push({ ...piece });
    } else {
      if (piece.text) existing.text = (existing.text ?? '') + piece.text;
      if (piece.summary) existing.summary = (existing.summary ?? '') + piece.summary;
    }
    return piece.text ?? piece.summary;
  }

  /** The id and name arrive once, in the first piece of a call; later pieces carry arguments. */
  private addToolCall(index: number, piece: WireToolCall): void {
    let call = this.toolCalls.get(index);
    if (!call) {
      call = { arguments: '' };
      this.toolCalls.set(index, call);
    }
    if (piece.id && !call.id) call.id = piece.id;
    const name = piece.function?.name;
    if (name && !call.name) call.name = name;
    const argumentsDelta = piece.function?.arguments ?? '';
    call.arguments += argumentsDelta;
    this.onDelta({
      type: 'tool_call',
      index,
      ...(piece.id ? { id: piece.id } : {}),
      ...(name ? { name } : {}),
      ...(argumentsDelta ? { argumentsDelta } : {}),
    });
  }

  result(): WireCompletion {
    const message: WireMessage = { content: this.content === '' ? null : this.content };
    if (this.reasoningContent) message.reasoning_content = this.reasoningContent;
    if (this.reasoning) message.reasoning = this.reasoning;
    if (this.details.length > 0) message.reasoning_details = this.details;
    const calls = [...this.toolCalls.entries()].sort(([a], [b]) => a - b);
    if (calls.length > 0) {
      message.tool_calls = calls.map(([, call]) => ({
        ...(call.id ? { id: call.id } : {}),
        type: 'function',
        function: { name: call.name ?? '', arguments: call.arguments },
      }));
    }
    return { message, finishReason: this.finishReason, usage: this.usage };
  }
}
