import { join } from 'node:path';
import { z } from 'zod';
import { defineEnvironment, extractFinalNumber, finalAnswer, judgeReward, readItems } from '../../src/eval/index.js';
import { DatasetError } from '../../src/errors.js';
import { sharedDir } from '../../src/util/paths.js';

/** A GSM8K row: the question, the worked answer ending in `#### N`, and (when present) the final number alone. */
const ItemSchema = z.looseObject({
  id: z
    .union([z.string().min(1), z.number()])
    .transform(String)
    .optional(),
  question: z.string().min(1, 'must not be empty'),
  answer: z.string().min(1, 'must not be empty'),
  final: z.union([z.string(), z.number()]).transform(String).optional(),
});
type Item = z.infer<typeof ItemSchema>;

export const DEFAULT_DATASET = join(sharedDir(), 'datasets', 'gsm8k', 'test-dev.jsonl');

const INSTRUCTION = 'Solve the problem step by step. End your reply with a last line of the form "#### <number>".';

/** The reference number: `final` when the row has it, else what follows `####` in the worked answer. */
export function referenceNumber(item: Item): string | undefined {
  return extractFinalNumber(item.final !== undefined ? `#### ${item.final}` : item.answer);
}

export default defineEnvironment<Item>({
  name: 'gsm8k',
  version: '1',
  description: 'Grade-school math word problems; reward = exact match of the final number.',
  async *items({ dataset, limit }) {
    const path = dataset ?? DEFAULT_DATASET;
    try {
      yield* readItems(path, ItemSchema, { limit });
    } catch (error) {
      if (error instanceof DatasetError && error.code === 'dataset_missing' && dataset === undefined) {
        throw new DatasetError(
          `gsm8k: the default dataset ${path} is absent (it lives in ../shared beside the checkout); pass --dataset FILE with "question" and "answer" fields`,
          {
            code: 'dataset_missing',
          },
        );
      }
      throw error;
    }
  },
  id: (item) => item.id,
  prompt: (item) => `${item.question.trim()}\n\n${INSTRUCTION}`,
  toolsets: [],
  maxTurns: 2,
  fields: (item) => ({ reference: referenceNumber(item) ?? null }),
  /** The reference agent (`--agent oracle`): answers the reference number, validating the reward. */
  oracle(item) {
    const expected = referenceNumber(item);
    if (expected === undefined)
      throw new Error(
        `item ${item.id ?? '(no id)'}: no reference number to answer (expected a "#### N" line in "answer", or "final")`,
      );
    return `The answer is ${expected}.\n#### ${expected}`;
  },
  judge: {
    rubric:
      'The response solves the math problem with correct reasoning and reaches the reference answer. Arithmetic slips or unjustified steps lower the score.',
    reference: (item) => item.answer,
  },
  /**
   * Exact match of the final number (commas, `$`, a trailing `.0` and "The answer is 18." all
   * tolerated). With a judge configured, its grade of the reasoning is kept as evidence and in
   * `scores`, without changing the reward.
   */
  async reward(item, result, context) {
    const expected = referenceNumber(item);
    if (expected === undefined)
      throw new Error(
        `item ${item.id ?? '(no id)'}: no reference number in "answer" (expected a "#### N" line) or "final"`,
      );
    const answer = finalAnswer(result.messages);
    const got = extractFinalNumber(answer) ?? null;
    const score = got === expected ? 1 : 0;
    if (!context.judgeAvailable) return { score, details: { expected, got } };
    const verdict = await context.judge();
    return { score, details: { expected, got, judge: judgeReward(verdict).details } };
  },
});
