import { z } from 'zod';
import { JudgeScaleSchema } from '../judge.js';
import { renderTemplate } from '../template.js';
import { conversationText } from '../transcript.js';
import { scorerCommon, type ScoreFunction } from './scorer.js';

export const JudgeScorerSchema = z.strictObject({
  type: z.literal('judge'),
  ...scorerCommon,
  rubric: z.string().min(1).describe('what the judge checks'),
  reference: z.string().optional().describe('a reference answer shown to the judge (a template)'),
  samples: z.number().int().positive().default(1).describe('independent gradings; the majority decides'),
  response: z
    .enum(['final', 'conversation'])
    .default('final')
    .describe('what is graded: the final answer, or the whole conversation (a simulated user)'),
  scale: JudgeScaleSchema.optional(),
  score: z.enum(['pass', 'mean']).default('pass').describe('pass: 1 on a majority pass; mean: the mean grade'),
});

/**
 * The run's LLM judge panel (--judge-model) graded `samples` times: each grading is its own
 * cached verdict, the majority of passes decides (a tie fails). Without a judge the reward errors.
 */
export function judgeScorer(config: z.infer<typeof JudgeScorerSchema>, where: string): ScoreFunction {
  return async ({ item, result, answer, context }) => {
    const reference =
      config.reference === undefined ? undefined : renderTemplate(config.reference, item, `${where}.reference`);
    const response = config.response === 'conversation' ? conversationText(result.messages) : answer;
    const verdicts = await Promise.all(
      Array.from({ length: config.samples }, (_, sample) =>
        context.judge({ rubric: config.rubric, response, reference, scale: config.scale, sample }),
      ),
    );
    const passes = verdicts.filter((verdict) => verdict.pass).length;
    const pass = passes * 2 > verdicts.length;
    const mean = verdicts.reduce((sum, verdict) => sum + verdict.score, 0) / verdicts.length;
    return {
      score: config.score === 'pass' ? (pass ? 1 : 0) : mean,
      details: {
        pass,
        passes,
        samples: verdicts.length,
        mean,
        reasoning: verdicts.flatMap((verdict) => verdict.verdicts.map((one) => one.reasoning)),
      },
    };
  };
}
