import type { CompletionTokens } from '../model/completion-tokens.js';
import type { Message, ToolSpec } from '../model/messages.js';
import type { ChatTokenizer } from './chat-tokenizer.js';

/**
 * One rollout as a trainer reads it: the template's rendering of the whole conversation, cut
 * where the first assistant turn starts. `completionMask` is 1 exactly on the tokens the policy
 * generated (each assistant turn, up to and including the end-of-turn token it sampled) and 0 on
 * everything the template or the tools wrote (tool results, later user turns, turn headers).
 */
export interface TokenTrace {
  promptIds: number[];
  completionIds: number[];
  completionMask: number[];
  /** The sampled token's logprob where the endpoint sent one; null elsewhere. */
  completionLogprobs: Array<number | null>;
  /** Assistant turns whose endpoint ids differ from re-tokenising the template's text of the turn. */
  drift: TokenDrift[];
}

/** Where an assistant turn's endpoint ids and the re-tokenised text first part. */
export interface TokenDrift {
  /** The assistant message's index in `messages`. */
  message: number;
  /** Position in the turn's ids of the first difference. */
  position: number;
  /** The endpoint's id there (null: its ids ended first). */
  endpoint: number | null;
  /** Re-tokenisation's id there (null: it ended first). */
  template: number | null;
}

export interface TraceInput {
  messages: readonly Message[];
  tools: readonly ToolSpec[];
  /** The record's per-turn tokens; a turn without ids is taken from the template's text. */
  completions: readonly CompletionTokens[];
}

export type TraceOutcome = { ok: true; trace: TokenTrace } | { ok: false; reason: string };

interface Piece {
  ids: number[];
  mask: 0 | 1;
  logprobs: Array<number | null>;
}

/**
 * Render the conversation once, find each assistant turn where the template's generation prompt
 * for it ends, and tokenise piece by piece, as a server does (the prompt is tokenised, then the
 * model adds its own tokens). The endpoint's ids, where it sent them, always stand for the turn.
 */
export function tokenTrace(tokenizer: ChatTokenizer, input: TraceInput): TraceOutcome {
  const { messages, tools } = input;
  const full = tokenizer.render(messages, tools, { addGenerationPrompt: false });
  const byMessage = new Map(input.completions.map((completion) => [completion.message, completion]));
  const pieces: Piece[] = [];
  const drift: TokenDrift[] = [];
  let cursor = 0;
  for (let index = 0; index < messages.length; index++) {
    if (messages[index]!.role !== 'assistant') continue;
    const prefix = tokenizer.render(messages.slice(0, index), tools, { addGenerationPrompt: true });
    if (prefix.length < cursor || !full.startsWith(prefix))
      return {
        ok: false,
        reason: `the chat template does not render the prompt of message ${index} as a prefix of the whole conversation`,
      };
    pieces.push(environmentPiece(tokenizer, full.slice(cursor, prefix.length)));
    const end = full.indexOf(tokenizer.eosToken, prefix.length);
    if (end < 0) return { ok: false, reason: `the template closes message ${index} without ${tokenizer.eosToken}` };
    cursor = end + tokenizer.eosToken.length;
    const turn = assistantPieces(tokenizer, full.slice(prefix.length, cursor), index, byMessage.get(index));
    pieces.push(...turn.pieces);
    if (turn.drift) drift.push(turn.drift);
  }
  if (pieces.length === 0) return { ok: false, reason: 'the conversation has no assistant turn' };
  pieces.push(environmentPiece(tokenizer, full.slice(cursor)));
  const [prompt, ...rest] = pieces;
  return {
    ok: true,
    trace: {
      promptIds: prompt!.ids,
      completionIds: rest.flatMap((piece) => piece.ids),
      completionMask: rest.flatMap((piece) => piece.ids.map(() => piece.mask)),
      completionLogprobs: rest.flatMap((piece) => piece.logprobs),
      drift,
    },
  };
}

function environmentPiece(tokenizer: ChatTokenizer, text: string): Piece {
  const ids = text === '' ? [] : tokenizer.encode(text);
  return { ids, mask: 0, logprobs: ids.map(() => null) };
}

/**
 * The turn as generated: the endpoint's ids (with their logprobs) when it sent them, else the
 * template's text re-tokenised. A turn cut by the length limit sampled no end-of-turn token: the
 * template's closing token then follows it, unmasked.
 */
function assistantPieces(
  tokenizer: ChatTokenizer,
  text: string,
  message: number,
  completion: CompletionTokens | undefined,
): { pieces: Piece[]; drift?: TokenDrift } {
  const template = tokenizer.encode(text);
  const endpoint = completion?.token_ids;
  if (!endpoint) return { pieces: [{ ids: template, mask: 1, logprobs: template.map(() => null) }] };
  const logprobs =
    completion.logprobs && completion.logprobs.length === endpoint.length
      ? completion.logprobs
      : endpoint.map(() => null);
  const pieces: Piece[] = [{ ids: [...endpoint], mask: 1, logprobs: [...logprobs] }];
  const sampledEnd = endpoint.at(-1) === tokenizer.eosId;
  const expected = !sampledEnd && template.at(-1) === tokenizer.eosId ? template.slice(0, -1) : template;
  if (!sampledEnd) pieces.push({ ids: [tokenizer.eosId], mask: 0, logprobs: [null] });
  const position = firstDifference(endpoint, expected);
  if (position === undefined) return { pieces };
  return {
    pieces,
    drift: { message, position, endpoint: endpoint[position] ?? null, template: expected[position] ?? null },
  };
}

function firstDifference(a: readonly number[], b: readonly number[]): number | undefined {
  const length = Math.max(a.length, b.length);
  for (let position = 0; position < length; position++) if (a[position] !== b[position]) return position;
  return undefined;
}

/** One line per drifted turn, for reports: where the ids part and the text of each side there. */
export function describeDrift(tokenizer: ChatTokenizer, drift: TokenDrift): string {
  const side = (id: number | null) => (id === null ? '(end)' : `${id} ${JSON.stringify(tokenizer.decode([id]))}`);
  return `message ${drift.message}, token ${drift.position}: endpoint ${side(drift.endpoint)}, re-tokenised ${side(drift.template)}`;
}
