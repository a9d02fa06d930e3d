import { z } from 'zod';

const dollarsPerMillion = (what: string) =>
  z
    .number({ error: `${what}: a price in USD per 1M tokens (a number ≥ 0, e.g. 0.15)` })
    .nonnegative(`${what}: a price in USD per 1M tokens cannot be negative`)
    .describe(`USD per 1M ${what} tokens`);

/**
 * One model's price in USD per 1M tokens. `cached_input` (prompt tokens the provider served from
 * its cache) defaults to `input`: without a cache discount stated, a cached token is billed as any
 * other prompt token, so the computed cost never comes out lower than the bill.
 */
export const ModelPriceSchema = z.strictObject({
  input: dollarsPerMillion('input'),
  output: dollarsPerMillion('output'),
  cached_input: dollarsPerMillion('cached_input').optional(),
});
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/**
 * The `pricing:` section of a run config: the model name as the endpoint sends it (`model:`) →
 * its price. Used for a call only when the provider reports no cost itself (OpenRouter's `usage.cost`).
 */
export const PricingSchema = z.record(z.string().min(1, 'a model name'), ModelPriceSchema);
export type Pricing = z.infer<typeof PricingSchema>;
