import { z } from 'zod';
import { renderTemplate } from '../template.js';
import { normalizeText, scorerCommon, type ScoreFunction } from './scorer.js';

export const IncludesScorerSchema = z.strictObject({
  type: z.literal('includes'),
  ...scorerCommon,
  expected: z
    .union([z.string(), z.array(z.string()).min(1)])
    .describe('text the answer must contain (templates); a list: every entry, or any with `any: true`'),
  any: z.boolean().default(false).describe('a list passes when one entry is found'),
  case_sensitive: z.boolean().default(false),
});

/** 1 when the answer contains the expected text (all entries of a list, or one with `any`). */
export function includesScorer(config: z.infer<typeof IncludesScorerSchema>, where: string): ScoreFunction {
  const wanted = Array.isArray(config.expected) ? config.expected : [config.expected];
  return ({ item, answer }) => {
    const haystack = normalizeText(answer, config.case_sensitive);
    const checks = wanted.map((template, index) => {
      const expected = renderTemplate(template, item, `${where}.expected${wanted.length > 1 ? `.${index}` : ''}`);
      return { expected, found: haystack.includes(normalizeText(expected, config.case_sensitive)) };
    });
    const passed = config.any ? checks.some((check) => check.found) : checks.every((check) => check.found);
    return { score: passed ? 1 : 0, details: { checks } };
  };
}
