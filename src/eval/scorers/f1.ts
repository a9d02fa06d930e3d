import { z } from 'zod';
import { renderTemplate } from '../template.js';
import { scorerCommon, type ScoreFunction } from './scorer.js';

export const F1ScorerSchema = z.strictObject({
  type: z.literal('f1'),
  ...scorerCommon,
  expected: z
    .union([z.string(), z.array(z.string()).min(1)])
    .describe('the reference answer (a template); a list: the best F1 over them'),
});

/** SQuAD's answer normalisation: lower case, no punctuation, no articles, single spaces. */
export function answerTokens(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\b(a|an|the)\b/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/** Token-overlap F1 between an answer and a reference (both normalised); 1 when both are empty. */
export function tokenF1(answer: string, reference: string): number {
  const got = answerTokens(answer);
  const want = answerTokens(reference);
  if (got.length === 0 || want.length === 0) return got.length === want.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const token of want) counts.set(token, (counts.get(token) ?? 0) + 1);
  let common = 0;
  for (const token of got) {
    const left = counts.get(token) ?? 0;
    if (left > 0) {
      common++;
      counts.set(token, left - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / got.length;
  const recall = common / want.length;
  return (2 * precision * recall) / (precision + recall);
}

/** The token F1 of the answer against the reference (the best over several references). */
export function f1Scorer(config: z.infer<typeof F1ScorerSchema>, where: string): ScoreFunction {
  const references = Array.isArray(config.expected) ? config.expected : [config.expected];
  return ({ item, answer }) => {
    const expected = references.map((template) => renderTemplate(template, item, `${where}.expected`));
    const score = Math.max(...expected.map((reference) => tokenF1(answer, reference)));
    return { score: Math.round(score * 1e6) / 1e6, details: { expected } };
  };
}
