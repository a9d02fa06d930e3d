import { z } from 'zod';
import type { Endpoint } from '../config/endpoint.js';

/**
 * Token-level output of one completion, as vLLM and SGLang send it: the sampled token ids
 * (`choices[0].token_ids`), their log-probabilities (`choices[0].logprobs.content[]`, OpenAI's
 * shape) and the prompt's ids (`prompt_token_ids`, top level in vLLM, on the choice in SGLang).
 */
export const TopLogprobSchema = z.object({ token: z.string(), logprob: z.number() });
export type TopLogprob = z.infer<typeof TopLogprobSchema>;

/** One assistant turn's tokens, kept in the record beside its message (`message` is its index). */
export const CompletionTokensSchema = z.object({
  message: z.number().int().nonnegative().describe("the assistant message's index in `messages`"),
  finish_reason: z.string().describe("the model's finish reason for this turn"),
  token_ids: z.array(z.number().int().nonnegative()).nullable().describe('the sampled ids, as the server sent them'),
  logprobs: z.array(z.number()).nullable().describe("each sampled token's log-probability"),
  top_logprobs: z
    .array(z.array(TopLogprobSchema))
    .nullable()
    .describe('per position, the most likely tokens (endpoint.top_logprobs)'),
});
export type CompletionTokens = z.infer<typeof CompletionTokensSchema>;

/** What a response carried, before the loop knows the message's index. */
export interface ResponseTokens {
  tokenIds: number[] | null;
  logprobs: number[] | null;
  topLogprobs: TopLogprob[][] | null;
  promptTokenIds: number[] | null;
}

/** The request fields that ask for tokens, in the dialect the endpoint names. */
export function tokenRequestFields(endpoint: Endpoint): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const logprobs = endpoint.logprobs === true || endpoint.top_logprobs !== undefined;
  if (logprobs) fields.logprobs = true;
  if (endpoint.top_logprobs !== undefined) fields.top_logprobs = endpoint.top_logprobs;
  if (endpoint.token_ids === 'vllm') {
    fields.return_token_ids = true;
    // Token strings that cannot be JSON-encoded (partial UTF-8) come back as `token_id:N`, unambiguous.
    if (logprobs) fields.return_tokens_as_token_ids = true;
  } else if (endpoint.token_ids === 'sglang') {
    fields.return_token_ids = true;
    fields.return_prompt_token_ids = true;
  }
  return fields;
}

/** A `logprobs.content[]` entry as servers send it. */
interface WireLogprob {
  token?: unknown;
  logprob?: unknown;
  top_logprobs?: unknown;
}

/** Collects token fields from a whole body or from stream chunks (where each chunk carries its delta). */
export class TokenCollector {
  private ids: number[] | undefined;
  private entries: WireLogprob[] | undefined;
  private promptIds: number[] | undefined;

  /** A choice (whole or streamed) and the body it came in. */
  add(choice: Record<string, unknown>, body: Record<string, unknown>): void {
    const ids = intArray(choice.token_ids);
    if (ids) (this.ids ??= []).push(...ids);
    const prompt = intArray(body.prompt_token_ids) ?? intArray(choice.prompt_token_ids);
    if (prompt && !this.promptIds) this.promptIds = prompt;
    const logprobs = choice.logprobs;
    if (isRecord(logprobs) && Array.isArray(logprobs.content))
      (this.entries ??= []).push(...logprobs.content.filter(isRecord));
  }

  result(): ResponseTokens | undefined {
    if (!this.ids && !this.entries && !this.promptIds) return undefined;
    const entries = this.entries;
    const logprobs = entries?.map((entry) => (typeof entry.logprob === 'number' ? entry.logprob : Number.NaN)) ?? null;
    const tops = entries?.some((entry) => Array.isArray(entry.top_logprobs) && entry.top_logprobs.length > 0)
      ? entries.map(topOf)
      : null;
    return {
      // Without return_token_ids, `token_id:N` strings (return_tokens_as_token_ids) still name the ids.
      tokenIds: this.ids ?? idsFromTokens(entries),
      logprobs: logprobs?.some(Number.isNaN) ? null : logprobs,
      topLogprobs: tops,
      promptTokenIds: this.promptIds ?? null,
    };
  }
}

function topOf(entry: WireLogprob): TopLogprob[] {
  if (!Array.isArray(entry.top_logprobs)) return [];
  return entry.top_logprobs
    .filter(isRecord)
    .filter((top) => typeof top.token === 'string' && typeof top.logprob === 'number')
    .map((top) => ({ token: top.token as string, logprob: top.logprob as number }));
}

const TOKEN_ID = /^token_id:(\d+)$/;

function idsFromTokens(entries: WireLogprob[] | undefined): number[] | null {
  if (!entries || entries.length === 0) return null;
  const ids: number[] = [];
  for (const entry of entries) {
    const match = typeof entry.token === 'string' ? TOKEN_ID.exec(entry.token) : null;
    if (!match) return null;
    ids.push(Number(match[1]));
  }
  return ids;
}

function intArray(value: unknown): number[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.every((item) => Number.isInteger(item) && item >= 0) ? (value as number[]) : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
