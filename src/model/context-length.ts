import { z } from 'zod';
import type { Endpoint } from '../config/endpoint.js';
import { exchange, httpTarget, type HttpReply } from './http-exchange.js';

/** Used when neither the config nor the server states the window; the overflow path catches a wrong guess. */
export const DEFAULT_CONTEXT_LENGTH = 128_000;

export const ContextLengthSchema = z.object({
  tokens: z.number().int().positive(),
  source: z.enum(['config', 'server', 'default']),
});
export type ContextLength = z.infer<typeof ContextLengthSchema>;
export type ContextLengthSource = ContextLength['source'];

/**
 * The model's window as `/v1/models` reports it: vLLM `max_model_len`, OpenRouter `context_length`
 * (or `top_provider.context_length`), llama.cpp `meta.n_ctx_train`, others `context_window`.
 * Undefined when the listing names no such model or no length.
 */
export function contextLengthFromModels(listing: unknown, model: string): number | undefined {
  const data = (listing as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return undefined;
  const entry = data.find((item) => (item as { id?: unknown })?.id === model) as Record<string, unknown> | undefined;
  if (!entry) return undefined;
  const meta = entry.meta as Record<string, unknown> | undefined;
  const provider = entry.top_provider as Record<string, unknown> | undefined;
  for (const value of [
    entry.max_model_len,
    entry.context_length,
    provider?.context_length,
    entry.context_window,
    meta?.n_ctx_train,
  ]) {
    if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  }
  return undefined;
}

/**
 * The window from `endpoint.context_length`, else from a `/models` listing (undefined when the
 * server gave none), else the default: one rule for a worker thread's own ask and a run's preflight.
 */
export function contextLengthOf(endpoint: Endpoint, listing: unknown): ContextLength {
  if (endpoint.context_length) return { tokens: endpoint.context_length, source: 'config' };
  const tokens = contextLengthFromModels(listing, endpoint.model);
  return tokens ? { tokens, source: 'server' } : { tokens: DEFAULT_CONTEXT_LENGTH, source: 'default' };
}

const known = new Map<string, Promise<ContextLength>>();

/**
 * The endpoint's window: `endpoint.context_length`, else the server's `/v1/models`, else the default.
 * Asked once per base URL and model in this thread; a server that does not answer within two
 * seconds counts as saying nothing.
 */
export function resolveContextLength(endpoint: Endpoint, env: NodeJS.ProcessEnv = process.env): Promise<ContextLength> {
  if (endpoint.context_length) return Promise.resolve(contextLengthOf(endpoint, undefined));
  const key = `${endpoint.base_url}\n${endpoint.model}`;
  let answer = known.get(key);
  if (!answer) {
    answer = askServer(endpoint, env).then((listing) => contextLengthOf(endpoint, listing));
    known.set(key, answer);
  }
  return answer;
}

/** The server's `/models` listing, or undefined when it gave none. */
async function askServer(endpoint: Endpoint, env: NodeJS.ProcessEnv): Promise<unknown> {
  const key = env[endpoint.api_key_env];
  try {
    const reply = await requestModelsListing(endpoint.base_url, key, 2000);
    return reply.ok ? JSON.parse(reply.text) : undefined;
  } catch {
    return undefined;
  }
}

/** Where an endpoint lists its models. */
export function modelsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/models`;
}

/** A model list can be long (a gateway lists hundreds, a few MB); past this it is not read. */
const MODELS_REPLY_BYTES = 64 * 1024 * 1024;

/**
 * `GET <base_url>/models`, whatever its status. Over node:http like the completions, not the
 * global fetch or a web Response: their first use in a thread loads undici, ~20 ms of start-up.
 */
export function requestModelsListing(baseUrl: string, key: string | undefined, timeoutMs: number): Promise<HttpReply> {
  const target = httpTarget(new URL(modelsUrl(baseUrl)), key ? { authorization: `Bearer ${key}` } : {}, 'GET');
  return exchange(target, [], {
    timeoutMs,
    timeoutError: () => new Error(`no answer within ${timeoutMs} ms`),
    maxReplyBytes: MODELS_REPLY_BYTES,
  });
}
