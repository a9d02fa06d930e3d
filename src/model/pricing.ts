import type { ModelPrice, Pricing } from '../config/pricing.js';
import type { Usage } from './messages.js';

const TOKENS_PER_PRICE_UNIT = 1_000_000;

/**
 * One call's usage with its cost settled: the provider's figure when it reported one; otherwise
 * the model's price from `pricing:` applied to the tokens; otherwise unknown, naming the model so
 * outputs can say which price is missing instead of showing 0.
 */
export function pricedUsage(usage: Usage, model: string, pricing: Pricing | undefined): Usage {
  if (usage.cost !== null) return { ...usage, cost_source: 'provider', unpriced_models: [] };
  const price = pricing?.[model];
  if (!price) return { ...usage, cost_source: 'unknown', unpriced_models: [model] };
  return { ...usage, cost: costOf(usage, price), cost_source: 'pricing', unpriced_models: [] };
}

/**
 * USD for the tokens: cached prompt tokens (part of prompt_tokens) at `cached_input`, the rest at
 * `input`; completion tokens (reasoning included, as providers count them) at `output`.
 */
export function costOf(
  usage: Pick<Usage, 'prompt_tokens' | 'completion_tokens' | 'cached_tokens'>,
  price: ModelPrice,
): number {
  const cached = Math.min(usage.cached_tokens ?? 0, usage.prompt_tokens);
  const dollars =
    (usage.prompt_tokens - cached) * price.input +
    cached * (price.cached_input ?? price.input) +
    usage.completion_tokens * price.output;
  // Twelve decimals, like summed usage: 0.1 + 0.2 style drift never shows in a cost.
  return Math.round((dollars / TOKENS_PER_PRICE_UNIT) * 1e12) / 1e12;
}
