import { z } from 'zod';
import type { AgentResult } from '../../agent/result.js';
import type { RewardContext } from '../environment.js';

/** What every scorer sees: the item, the whole rollout, its final answer and the rollout's sandbox and judge. */
export interface ScorerInput {
  item: unknown;
  result: AgentResult;
  /** The last assistant text (what most scorers grade). */
  answer: string;
  context: RewardContext;
}

/** A scorer's grade: a number in 0..1 and the evidence kept in the record's reward_details. */
export interface ScorerOutcome {
  score: number;
  details?: Record<string, unknown>;
}

export type ScoreFunction = (input: ScorerInput) => Promise<ScorerOutcome> | ScorerOutcome;

/** One configured scorer, ready to grade. */
export interface Scorer {
  name: string;
  /** Its share of the `mean` reducer (0: recorded in scores, no part of the reward). */
  weight: number;
  /** The score at or above which it passes, for the `all` reducer. */
  pass: number;
  score: ScoreFunction;
}

/** Keys every scorer accepts beside its own. */
export const scorerCommon = {
  name: z
    .string()
    .regex(/^[A-Za-z_][\w-]*$/, 'use letters, digits, _ and -')
    .optional()
    .describe('default: the type'),
  weight: z.number().nonnegative().default(1).describe("share in the 'mean' reducer; 0 records it only"),
  pass: z.number().min(0).max(1).default(1).describe("the score at which it passes, for the 'all' reducer"),
};

/** Whitespace collapsed and trimmed; lower-cased unless case matters. */
export function normalizeText(text: string, caseSensitive: boolean): string {
  const collapsed = text.replace(/\s+/g, ' ').trim();
  return caseSensitive ? collapsed : collapsed.toLowerCase();
}

/** The last line with any text on it (answers often end with the result alone on a line). */
export function lastLine(text: string): string {
  return (
    text
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .at(-1) ?? ''
  );
}
