import type { Message } from '../model/messages.js';
import type { ShareGptTurn } from './record.js';

/**
 * Shaping a finished trajectory for SFT the way Hermes' trajectory_compressor.py does (pinned at
 * hermes-agent c34b29d): the first system, human, gpt and tool turns and the last N turns are kept
 * byte for byte; the turns after the protected head are replaced, from the front, by one human turn
 * holding an LLM summary, just enough of them to fit the budget. Turns are the ShareGPT view's turns
 * (`toShareGpt`): a run of tool results answering one assistant turn is one `tool` turn.
 */

/** One ShareGPT turn and the messages it comes from (`start`..`end`, end exclusive). */
export interface MessageTurn {
  from: ShareGptTurn['from'];
  start: number;
  end: number;
}

export interface CompressSettings {
  /** The training length: a record over it is compressed (Hermes' target_max_tokens). */
  maxTokens: number;
  /** What one summary is expected to cost (Hermes' summary_target_tokens, 750). */
  summaryTargetTokens: number;
  /** Turns at the end kept whole (Hermes' protect_last_n_turns, 4). */
  protectLastTurns: number;
}

export const DEFAULT_SUMMARY_TARGET_TOKENS = 750;
export const DEFAULT_PROTECT_LAST_TURNS = 4;
export const SUMMARY_PREFIX = '[CONTEXT SUMMARY]:';

/**
 * The messages behind each turn of `toShareGpt(messages)`: the system turn (always first, maybe no
 * message), then one turn per user or assistant message and per run of tool messages. A later
 * system message has no turn of its own in the view; it goes with the turn before it.
 */
export function messageTurns(messages: readonly Message[]): MessageTurn[] {
  const turns: MessageTurn[] = [{ from: 'system', start: 0, end: 0 }];
  messages.forEach((message, index) => {
    const last = turns[turns.length - 1]!;
    const from = message.role === 'user' ? 'human' : message.role === 'assistant' ? 'gpt' : message.role;
    if (from === 'system' || (from === 'tool' && last.from === 'tool')) last.end = index + 1;
    else turns.push({ from, start: index, end: index + 1 });
  });
  return turns;
}

/** Hermes' `_find_protected_indices` and head snap: the turns that may be summarised, `start`..`end`. */
export function compressibleRange(turns: readonly MessageTurn[], protectLast: number): { start: number; end: number } {
  const count = turns.length;
  const protectedTurns = new Set<number>();
  for (const from of ['system', 'human', 'gpt', 'tool'] as const) {
    const first = turns.findIndex((turn) => turn.from === from);
    if (first >= 0) protectedTurns.add(first);
  }
  for (let index = Math.max(0, count - protectLast); index < count; index++) protectedTurns.add(index);
  const head = [...protectedTurns].filter((index) => index < count / 2);
  const tail = [...protectedTurns].filter((index) => index >= count / 2);
  const start = head.length ? Math.max(...head) + 1 : 0;
  const end = tail.length ? Math.min(...tail) : count;
  return { start: snapBoundary(turns, start, start, end), end };
}

/**
 * How many turns from `start` to replace so the record saves `total - maxTokens` tokens net of the
 * summary (Hermes' accumulation), snapped so a tool turn never loses the assistant turn it answers.
 * Returns `start` when nothing can be replaced.
 */
export function regionEnd(
  turnTokens: readonly number[],
  range: { start: number; end: number },
  tokensToSave: number,
  turns: readonly MessageTurn[],
): number {
  let accumulated = 0;
  let until = range.start;
  for (let index = range.start; index < range.end && accumulated < tokensToSave; index++) {
    accumulated += turnTokens[index]!;
    until = index + 1;
  }
  return snapBoundary(turns, until, range.start, range.end);
}

/** Hermes' `_snap_boundary`: move a boundary off a tool turn, forward first, within [min, max]. */
function snapBoundary(turns: readonly MessageTurn[], index: number, min: number, max: number): number {
  const clean = (at: number) => at >= turns.length || turns[at]!.from !== 'tool';
  let forward = index;
  while (forward < max && !clean(forward)) forward++;
  if (clean(forward)) return forward;
  let backward = index;
  while (backward > min && !clean(backward)) backward--;
  return backward;
}

/** Hermes' `_extract_turn_content_for_summary`: the replaced turns as text, long values cut. */
export function summaryContent(conversations: readonly ShareGptTurn[], start: number, end: number): string {
  const parts: string[] = [];
  for (let index = start; index < end; index++) {
    const turn = conversations[index]!;
    const value =
      turn.value.length > 3000
        ? `${turn.value.slice(0, 1500)}\n...[truncated]...\n${turn.value.slice(-500)}`
        : turn.value;
    parts.push(`[Turn ${index} - ${turn.from.toUpperCase()}]:\n${value}`);
  }
  return parts.join('\n\n');
}

/** Hermes' summarisation prompt, word for word. */
export function summaryPrompt(content: string, targetTokens: number): string {
  return `Summarize the following agent conversation turns concisely. This summary will replace these turns in the conversation history.

Write the summary from a neutral perspective describing what the assistant did and learned. Include:
1. What actions the assistant took (tool calls, searches, file operations)
2. Key information or results obtained
3. Any important decisions or findings
4. Relevant data, file names, values, or outputs

Keep the summary factual and informative. Target approximately ${targetTokens} tokens.

---
TURNS TO SUMMARIZE:
${content}
---

Write only the summary, starting with "${SUMMARY_PREFIX}" prefix.`;
}

/** Hermes' `_ensure_summary_prefix`: the prefix exactly once. */
export function withSummaryPrefix(summary: string): string {
  const text = summary.trim();
  if (text.startsWith(SUMMARY_PREFIX)) return text;
  return text ? `${SUMMARY_PREFIX} ${text}` : SUMMARY_PREFIX;
}

/** The messages with turns `start`..`end` replaced by one user message holding the summary (Hermes' human turn). */
export function spliceSummary(
  messages: readonly Message[],
  turns: readonly MessageTurn[],
  start: number,
  end: number,
  summary: string,
): Message[] {
  const from = turns[start]!.start;
  const to = end < turns.length ? turns[end]!.start : messages.length;
  return [...messages.slice(0, from), { role: 'user', content: summary }, ...messages.slice(to)];
}
