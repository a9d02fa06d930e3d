import { z } from 'zod';
import { defineEnvironment, judgeReward, readItems } from '../../src/eval/index.js';
import { ConfigError } from '../../src/errors.js';

/** An open-ended prompt, optionally with a reference answer the judge may compare against. */
const ItemSchema = z.looseObject({
  id: z
    .union([z.string().min(1), z.number()])
    .transform(String)
    .optional(),
  prompt: z.string().min(1, 'must not be empty'),
  reference: z.string().optional(),
  category: z.string().optional(),
});
type Item = z.infer<typeof ItemSchema>;

export default defineEnvironment<Item>({
  name: 'rubric',
  version: '1',
  description: 'Open-ended prompts graded only by an LLM judge panel against a rubric file.',
  items({ dataset, limit }) {
    // config.yaml names the shipped prompts; the CLI passes that (or --dataset) here.
    if (!dataset)
      throw new ConfigError('rubric: no dataset; pass --dataset FILE (JSONL with "prompt" and optional "reference")', {
        code: 'dataset_missing',
      });
    return readItems(dataset, ItemSchema, { limit });
  },
  id: (item) => item.id,
  prompt: (item) => item.prompt,
  category: (item) => item.category,
  toolsets: [],
  maxTurns: 2,
  judge: { reference: (item) => item.reference },
  /** The panel's mean score is the reward; each judge's grade and reasoning are the evidence. */
  async reward(item, _result, context) {
    return judgeReward(await context.judge({ reference: item.reference }));
  },
});
