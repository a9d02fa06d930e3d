import { z } from 'zod';
import { renderTemplate } from '../template.js';
import { lastLine, normalizeText, scorerCommon, type ScoreFunction } from './scorer.js';

export const ExactScorerSchema = z.strictObject({
  type: z.literal('exact'),
  ...scorerCommon,
  expected: z.string().describe('the answer, a template over the item ({{field}})'),
  case_sensitive: z.boolean().default(false),
  last_line: z.boolean().default(false).describe('compare only the last non-empty line of the answer'),
});

/** 1 when the answer (or its last line) equals the expected text, whitespace collapsed and a final period ignored. */
export function exactScorer(config: z.infer<typeof ExactScorerSchema>, where: string): ScoreFunction {
  return ({ item, answer }) => {
    const expected = renderTemplate(config.expected, item, `${where}.expected`);
    const got = config.last_line ? lastLine(answer) : answer;
    const clean = (text: string) => normalizeText(text, config.case_sensitive).replace(/\.$/, '');
    return { score: clean(got) === clean(expected) ? 1 : 0, details: { expected, got } };
  };
}
