import { z } from 'zod';
import { extractJsonObject } from '../judge-prompt.js';
import { scorerCommon, type ScoreFunction } from './scorer.js';

export const JsonSchemaScorerSchema = z.strictObject({
  type: z.literal('json_schema'),
  ...scorerCommon,
  schema: z.record(z.string(), z.unknown()).describe('a JSON Schema the answer must satisfy'),
});

/** The JSON in an answer: the whole text, else a ```json block or the last {...} that parses. */
function answerJson(answer: string): unknown {
  try {
    return JSON.parse(answer.trim());
  } catch {
    return extractJsonObject(answer);
  }
}

/** 1 when the answer holds JSON that satisfies the schema; the details list what did not. */
export function jsonSchemaScorer(config: z.infer<typeof JsonSchemaScorerSchema>, where: string): ScoreFunction {
  let schema: z.ZodType;
  try {
    schema = z.fromJSONSchema(config.schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (error) {
    throw new Error(`${where}.schema: not a usable JSON Schema (${(error as Error).message})`);
  }
  return ({ answer }) => {
    const value = answerJson(answer);
    if (value === undefined) return { score: 0, details: { problems: ['no JSON found in the answer'] } };
    const result = schema.safeParse(value);
    if (result.success) return { score: 1, details: { problems: [] } };
    const problems = result.error.issues.map((issue) => `${issue.path.join('.') || '(value)'}: ${issue.message}`);
    return { score: 0, details: { problems } };
  };
}
