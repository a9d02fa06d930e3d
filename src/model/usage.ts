import type { Usage } from './messages.js';

/**
 * Usage as providers report it. The counts traj keeps and where each provider puts them:
 * - prompt / completion tokens: `prompt_tokens`/`completion_tokens` (Chat Completions),
 *   `input_tokens`/`output_tokens` (Responses-style and Anthropic-style gateways);
 * - reasoning tokens: `completion_tokens_details.reasoning_tokens` (OpenAI, OpenRouter, xAI,
 *   DeepSeek, Groq, vLLM), `output_tokens_details.reasoning_tokens`, a top-level `reasoning_tokens`;
 * - cached prompt tokens: `prompt_tokens_details.cached_tokens` (OpenAI, Azure, xAI, OpenRouter,
 *   Alibaba, GLM, Mistral, vLLM), `input_tokens_details.cached_tokens`, `prompt_cache_hit_tokens`
 *   (DeepSeek), a top-level `cached_tokens` (Moonshot), `cache_read_input_tokens` (Anthropic-style),
 *   and llama.cpp's `timings.cache_n`;
 * - cost: `cost` (OpenRouter, in credits = USD), `cost_in_usd_ticks` (xAI, 10^10 ticks a dollar),
 *   `total_cost` / `estimated_cost` (some gateways).
 */
export type WireUsage = Record<string, unknown>;

/** llama.cpp's `timings` object, sent beside `usage`. */
export type WireTimings = Record<string, unknown>;

const USD_PER_XAI_TICK = 1e-10;

export function usageOf(usage: WireUsage | undefined | null, timings?: WireTimings | null): Usage {
  const u = usage ?? {};
  const promptDetails = objectAt(u, 'prompt_tokens_details') ?? objectAt(u, 'input_tokens_details');
  const completionDetails = objectAt(u, 'completion_tokens_details') ?? objectAt(u, 'output_tokens_details');
  return {
    prompt_tokens: count(u.prompt_tokens) ?? count(u.input_tokens) ?? 0,
    completion_tokens: count(u.completion_tokens) ?? count(u.output_tokens) ?? 0,
    reasoning_tokens: count(completionDetails?.reasoning_tokens) ?? count(u.reasoning_tokens) ?? 0,
    // The variants count the same thing; a provider sending two may leave one at 0.
    cached_tokens: Math.max(
      0,
      ...[
        promptDetails?.cached_tokens,
        u.prompt_cache_hit_tokens,
        u.cached_tokens,
        u.cache_read_input_tokens,
        timings?.cache_n,
      ]
        .map(count)
        .filter((value): value is number => value !== undefined),
    ),
    ...costFields(costOf(u)),
  };
}

/** The provider's cost, when it sent one; the client settles the others (pricing.ts). */
function costFields(cost: number | null): Pick<Usage, 'cost' | 'cost_source' | 'unpriced_models'> {
  return { cost, cost_source: cost === null ? null : 'provider', unpriced_models: [] };
}

function costOf(usage: WireUsage): number | null {
  const ticks = amount(usage.cost_in_usd_ticks);
  if (ticks !== undefined) return ticks * USD_PER_XAI_TICK;
  return amount(usage.cost) ?? amount(usage.total_cost) ?? amount(usage.estimated_cost) ?? null;
}

function objectAt(value: WireUsage, key: string): Record<string, unknown> | undefined {
  const found = value[key];
  return found && typeof found === 'object' && !Array.isArray(found) ? (found as Record<string, unknown>) : undefined;
}

/** A token count: a non-negative number (rounded), else undefined so the next variant is tried. */
function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}

/** Some gateways send the cost as a numeric string. */
function amount(value: unknown): number | undefined {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) && number >= 0 ? number : undefined;
}
