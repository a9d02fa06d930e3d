import { z } from 'zod';
import { renderTemplate } from '../template.js';
import { normalizeText, scorerCommon, type ScoreFunction } from './scorer.js';

export const RegexScorerSchema = z.strictObject({
  type: z.literal('regex'),
  ...scorerCommon,
  pattern: z.string().min(1).describe('a JavaScript regular expression'),
  flags: z
    .string()
    .regex(/^[imsu]*$/, 'flags are any of i, m, s, u')
    .default(''),
  expected: z
    .string()
    .optional()
    .describe('when set, the first capture group (or the whole match) of the last match must equal it (a template)'),
});

/** 1 when the pattern matches the answer; with `expected`, when the last match's capture equals it. */
export function regexScorer(config: z.infer<typeof RegexScorerSchema>, where: string): ScoreFunction {
  let pattern: RegExp;
  try {
    pattern = new RegExp(config.pattern, `${config.flags}g`);
  } catch (error) {
    throw new Error(`${where}.pattern: not a valid regular expression (${(error as Error).message})`);
  }
  return ({ item, answer }) => {
    const match = [...answer.matchAll(pattern)].at(-1);
    const captured = match ? (match[1] ?? match[0]) : null;
    if (config.expected === undefined) return { score: match ? 1 : 0, details: { match: captured } };
    const expected = renderTemplate(config.expected, item, `${where}.expected`);
    const same = captured !== null && normalizeText(captured, true) === normalizeText(expected, true);
    return { score: same ? 1 : 0, details: { expected, got: captured } };
  };
}
