import type { Message, UserMessage } from '../model/messages.js';

/**
 * One compression of the conversation, as the record keeps it. Indexes are into the full
 * transcript (the record's `messages`, never rewritten): requests from transcript length
 * `at_message` on sent `transcript[0, replaced_start)`, the summary message, then
 * `transcript[replaced_end, …)`. A later compression starts at the same place and covers the
 * earlier summary, so the latest one in force describes the request completely.
 */
export interface Compression {
  /** 1-based API call that first sent the compressed conversation. */
  at_call: number;
  /** Transcript length when it happened: every later request uses it. */
  at_message: number;
  /** `manual`: asked for (chat's /compress), whatever the size. */
  trigger: 'threshold' | 'overflow' | 'manual';
  tokens_before: number;
  /** Estimated size of the compressed request. */
  tokens_after: number;
  replaced_start: number;
  replaced_end: number;
  summary: string;
  /** The todo list re-injected after the summary, as text; null when there was none. */
  todo: string | null;
}

export const SUMMARY_MARKER = '[CONTEXT SUMMARY]';

/** The marked message that stands in for the replaced range. */
export function summaryMessage(compression: Compression): UserMessage {
  const range = `Messages ${compression.replaced_start + 1}-${compression.replaced_end} of this conversation`;
  const todo = compression.todo ? `\n\nYour todo list at this point:\n${compression.todo}` : '';
  return {
    role: 'user',
    content: `${SUMMARY_MARKER} ${range} were replaced by this summary to fit the context window; the messages after it are verbatim.\n\n${compression.summary}${todo}`,
  };
}

/** The messages a request sends: the transcript with the compression in force applied. */
export function requestView(transcript: readonly Message[], compression: Compression | undefined): Message[] {
  if (!compression) return [...transcript];
  return [
    ...transcript.slice(0, compression.replaced_start),
    summaryMessage(compression),
    ...transcript.slice(compression.replaced_end),
  ];
}

/** The latest compression whose range a request over the first `length` transcript messages used. */
export function compressionInForce(compressions: readonly Compression[], length: number): Compression | undefined {
  let found: Compression | undefined;
  for (const compression of compressions)
    if (compression.at_message <= length && compression.replaced_end <= length) found = compression;
  return found;
}

export interface CompressionPlan {
  /** Where the replaced range starts: after the system prompt and the first user message. */
  start: number;
  /** Where the kept tail starts: always an assistant or user message, so no tool call loses its result. */
  end: number;
}

/**
 * What to replace: everything between the head (system prompt, first user message) and the last
 * `keepTurns` turns, falling back to fewer kept turns when that leaves nothing new to summarise.
 * Undefined when nothing can be compressed.
 */
export function planCompression(
  transcript: readonly Message[],
  keepTurns: number,
  previous: Compression | undefined,
): CompressionPlan | undefined {
  const firstUser = transcript.findIndex((message) => message.role === 'user');
  if (firstUser < 0) return undefined;
  const start = previous?.replaced_start ?? firstUser + 1;
  const coveredUntil = previous?.replaced_end ?? start;
  const turnStarts: number[] = [];
  for (let index = start; index < transcript.length; index++)
    if (transcript[index]!.role !== 'tool') turnStarts.push(index);
  for (let keep = Math.max(1, keepTurns); keep >= 1; keep--) {
    const end = turnStarts[turnStarts.length - keep];
    // A range must hold something the summary does not cover yet, and more than one message.
    if (end !== undefined && end > coveredUntil && end - start >= 2) return { start, end };
  }
  return undefined;
}
