import { z } from 'zod';
import { extractFinalNumber } from '../final-number.js';
import { renderTemplate } from '../template.js';
import { scorerCommon, type ScoreFunction } from './scorer.js';

export const NumericScorerSchema = z.strictObject({
  type: z.literal('numeric'),
  ...scorerCommon,
  expected: z
    .union([z.string(), z.number()])
    .transform(String)
    .describe('the number, or text ending in it ("#### 18"), a template'),
  tolerance: z.number().nonnegative().default(0).describe('largest accepted absolute difference'),
  relative: z.boolean().default(false).describe('tolerance is a fraction of the expected value'),
});

/**
 * 1 when the answer's final number (a `#### N` line, `\boxed{N}`, "the answer is N", else the last
 * number; commas and `$` ignored) is within the tolerance of the expected one.
 */
export function numericScorer(config: z.infer<typeof NumericScorerSchema>, where: string): ScoreFunction {
  return ({ item, answer }) => {
    const reference = renderTemplate(config.expected, item, `${where}.expected`);
    const expected = extractFinalNumber(reference);
    if (expected === undefined) throw new Error(`${where}.expected: no number in '${reference}'`);
    const got = extractFinalNumber(answer) ?? null;
    const allowed = config.relative ? config.tolerance * Math.abs(Number(expected)) : config.tolerance;
    const within = got !== null && Math.abs(Number(got) - Number(expected)) <= allowed;
    return { score: within ? 1 : 0, details: { expected, got } };
  };
}
