import { z } from 'zod';
import type { AgentResult } from '../../agent/result.js';
import type { RewardContext, RewardOutput } from '../environment.js';
import { finalAnswer } from '../transcript.js';
import { ExactScorerSchema, exactScorer } from './exact.js';
import { F1ScorerSchema, f1Scorer } from './f1.js';
import { IncludesScorerSchema, includesScorer } from './includes.js';
import { JsonSchemaScorerSchema, jsonSchemaScorer } from './json-schema.js';
import { JudgeScorerSchema, judgeScorer } from './judge.js';
import { NumericScorerSchema, numericScorer } from './numeric.js';
import { RegexScorerSchema, regexScorer } from './regex.js';
import { SandboxScorerSchema, sandboxScorer } from './sandbox.js';
import type { ScoreFunction, Scorer, ScorerOutcome } from './scorer.js';

export type { Scorer, ScorerInput, ScorerOutcome, ScoreFunction } from './scorer.js';
export { tokenF1, answerTokens } from './f1.js';

/** One entry of `scorers:`; `type` picks the scorer, the other keys are its settings. */
export const ScorerConfigSchema = z.discriminatedUnion('type', [
  ExactScorerSchema,
  IncludesScorerSchema,
  RegexScorerSchema,
  NumericScorerSchema,
  JsonSchemaScorerSchema,
  F1ScorerSchema,
  JudgeScorerSchema,
  SandboxScorerSchema,
]);
export type ScorerConfig = z.infer<typeof ScorerConfigSchema>;

export const SCORER_TYPES = ScorerConfigSchema.options.map((option) => option.shape.type.value);

/** How scorers' grades become the reward: weighted mean, the lowest grade, or 1 only when every scorer passes. */
export const ReducerSchema = z.enum(['mean', 'min', 'all']);
export type Reducer = z.infer<typeof ReducerSchema>;

function scoreFunction(config: ScorerConfig, where: string): ScoreFunction {
  switch (config.type) {
    case 'exact':
      return exactScorer(config, where);
    case 'includes':
      return includesScorer(config, where);
    case 'regex':
      return regexScorer(config, where);
    case 'numeric':
      return numericScorer(config, where);
    case 'json_schema':
      return jsonSchemaScorer(config, where);
    case 'f1':
      return f1Scorer(config, where);
    case 'judge':
      return judgeScorer(config, where);
    case 'sandbox':
      return sandboxScorer(config, where);
  }
}

/** Scorers from validated configs; `where` names the list (file: scorers). Names must be unique. */
export function buildScorers(configs: readonly ScorerConfig[], where: string): Scorer[] {
  const seen = new Set<string>();
  return configs.map((config, index) => {
    const name = config.name ?? config.type;
    if (seen.has(name))
      throw new Error(`${where}.${index}: a second scorer named '${name}'; give each scorer of one type its own name`);
    seen.add(name);
    return { name, weight: config.weight, pass: config.pass, score: scoreFunction(config, `${where}.${index}`) };
  });
}

/** The reward from the scorers' grades; a weight-0 scorer is recorded but takes no part. */
export function reduceScores(scorers: readonly Scorer[], scores: Record<string, number>, reducer: Reducer): number {
  const counted = scorers.filter((scorer) => scorer.weight > 0);
  if (counted.length === 0) return 0;
  switch (reducer) {
    case 'mean': {
      const total = counted.reduce((sum, scorer) => sum + scorer.weight, 0);
      return counted.reduce((sum, scorer) => sum + scorer.weight * scores[scorer.name]!, 0) / total;
    }
    case 'min':
      return Math.min(...counted.map((scorer) => scores[scorer.name]!));
    case 'all':
      return counted.every((scorer) => scores[scorer.name]! >= scorer.pass) ? 1 : 0;
  }
}

/**
 * Grade one rollout with every scorer (in order: a sandbox scorer sees what an earlier one left),
 * then reduce. Every scorer's grade is in `scores` under its name and its evidence in the details.
 * A scorer that throws (a judge with none configured, a bad template) fails the whole reward.
 */
export async function scoreWithScorers(
  scorers: readonly Scorer[],
  reducer: Reducer,
  item: unknown,
  result: AgentResult,
  context: RewardContext,
): Promise<RewardOutput> {
  const answer = finalAnswer(result.messages);
  const scores: Record<string, number> = {};
  const details: Record<string, ScorerOutcome['details'] & { score: number }> = {};
  for (const scorer of scorers) {
    const outcome = await scorer.score({ item, result, answer, context });
    if (!Number.isFinite(outcome.score) || outcome.score < 0 || outcome.score > 1)
      throw new Error(`scorer '${scorer.name}' gave ${outcome.score}, not a number in 0..1`);
    scores[scorer.name] = outcome.score;
    details[scorer.name] = { score: outcome.score, ...outcome.details };
  }
  return { score: reduceScores(scorers, scores, reducer), scores, details: { reducer, scorers: details } };
}
