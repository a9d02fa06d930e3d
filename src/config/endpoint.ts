import { z } from 'zod';

/** 4 MiB: hundreds of thousands of tokens of text, far past any normal turn. */
export const DEFAULT_MAX_REPLY_BYTES = 4 * 1024 * 1024;

/**
 * One OpenAI-compatible endpoint. The key itself is never stored: only the variable naming it.
 * Strict: `temprature: 0.2` is an error, never a run at the default temperature.
 */
export const EndpointSchema = z.strictObject({
  base_url: z.string().url().describe('OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1'),
  model: z.string().min(1).describe('model name sent in each request'),
  api_key_env: z.string().default('OPENAI_API_KEY').describe('environment variable holding the API key'),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  max_tokens: z.number().int().positive().optional(),
  seed: z.number().int().optional(),
  extra_body: z.record(z.string(), z.unknown()).optional().describe('extra JSON fields merged into each request'),
  timeout_ms: z.number().int().positive().default(600_000),
  max_retries: z.number().int().min(0).default(6),
  // No default: a run's --concurrency already bounds its requests (one per rollout in flight); a cap
  // nobody set would silently throttle it.
  concurrency: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      'requests in flight to this endpoint at most, across the whole run: the hard cap of the adaptive level ' +
        '(default: --concurrency)',
    ),
  adaptive: z
    .boolean()
    .optional()
    .describe(
      'adapt the requests in flight to the endpoint: fewer on 429/503 (honouring retry-after), more on success, ' +
        'within [min_concurrency, the cap]; false = always the cap (default true)',
    ),
  min_concurrency: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('the adaptive level never goes below this many requests in flight (default 1)'),
  max_rate_limit_wait_ms: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      '429 answers are retried without using max_retries until their backoffs add up to this for one call; ' +
        'then the run stops with model_rate_limited, the prompt unharmed (default 600000)',
    ),
  tool_call_format: z.enum(['native', 'hermes']).default('native'),
  context_length: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("the model's context window in tokens (default: the server's /v1/models, else 128000)"),
  prompt_caching: z
    .enum(['auto', 'on', 'off'])
    .optional()
    .describe(
      'cache_control breakpoints on the system prompt and last messages; auto (the default) = Anthropic models only',
    ),
  reasoning_echo: z
    .enum(['auto', 'always', 'never'])
    .optional()
    .describe(
      'pass reasoning back on later requests: auto = the state providers need to continue a thinking model across tool ' +
        'calls (reasoning_details with signatures; reasoning_content or thinking parts of tool-calling turns); ' +
        "always = every turn's reasoning, in the form it came; never = none (default auto)",
    ),
  logprobs: z
    .boolean()
    .optional()
    .describe("ask for each completion token's log-probability (stored per assistant turn in the record)"),
  top_logprobs: z
    .number()
    .int()
    .min(0)
    .max(20)
    .optional()
    .describe('also the N most likely tokens at each position (implies logprobs: true)'),
  token_ids: z
    .enum(['vllm', 'sglang'])
    .optional()
    .describe(
      "ask the server for the completion's token ids in its own fields: vllm (return_token_ids, and " +
        'return_tokens_as_token_ids with logprobs) or sglang (return_token_ids, return_prompt_token_ids)',
    ),
  max_reply_bytes: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      `a reply (body or stream) larger than this fails with reply_too_large (default ${DEFAULT_MAX_REPLY_BYTES})`,
    ),
});
export type Endpoint = z.infer<typeof EndpointSchema>;

/** What endpoint.adaptive, min_concurrency and max_rate_limit_wait_ms mean when unset. */
export const ADAPTIVE_DEFAULTS = { adaptive: true, min_concurrency: 1, max_rate_limit_wait_ms: 600_000 } as const;
export type EndpointInput = z.input<typeof EndpointSchema>;

export const OPENROUTER_BASE_URL = 'https://openrouter.ai/api/v1';
const OPENAI_BASE_URL = 'https://api.openai.com/v1';

export interface EndpointFlags {
  baseUrl?: string;
  model?: string;
  apiKeyEnv?: string;
}

/**
 * Resolve the endpoint from flags, then the environment: OPENAI_BASE_URL + OPENAI_API_KEY, or
 * OPENROUTER_API_KEY with OpenRouter's base URL; the model from TRAJ_MODEL.
 * Returns undefined fields where nothing is configured, so callers can say what is missing.
 */
export function endpointFromEnvironment(
  flags: EndpointFlags,
  env: NodeJS.ProcessEnv = process.env,
): Partial<EndpointInput> {
  const out: Partial<EndpointInput> = {};
  if (flags.apiKeyEnv) out.api_key_env = flags.apiKeyEnv;
  if (flags.baseUrl) out.base_url = flags.baseUrl;
  else if (env.OPENAI_BASE_URL) out.base_url = env.OPENAI_BASE_URL;
  else if (!flags.apiKeyEnv && !env.OPENAI_API_KEY && env.OPENROUTER_API_KEY) {
    out.base_url = OPENROUTER_BASE_URL;
    out.api_key_env = 'OPENROUTER_API_KEY';
  } else if (env.OPENAI_API_KEY || flags.apiKeyEnv) out.base_url = OPENAI_BASE_URL;
  const model = flags.model ?? env.TRAJ_MODEL;
  if (model) out.model = model;
  return out;
}

/** True when no endpoint is configured at all (callers may fall back to the built-in scripted one). */
export function isEndpointConfigured(flags: EndpointFlags, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(
    flags.baseUrl || env.OPENAI_BASE_URL || env.OPENAI_API_KEY || env.OPENROUTER_API_KEY || flags.apiKeyEnv,
  );
}
