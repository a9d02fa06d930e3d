import { z } from 'zod';
import { EndpointSchema, type Endpoint } from '../config/endpoint.js';
import { errorMessage, ModelError } from '../errors.js';
import { createModelClient } from '../model/client.js';
import { PricingSchema, type Pricing } from '../config/pricing.js';
import type { Message, Usage } from '../model/messages.js';
import type { ModelClient } from '../model/types.js';
import { canonicalJson, sha256 } from '../util/hash.js';
import { majorityAgreement } from './metrics.js';
import { correctionMessage, extractJsonObject, judgeMessages, type JudgeRequest } from './judge-prompt.js';

/** What a judge must answer: the single source of the response_format schema and of validation. */
export const VerdictSchema = z.strictObject({
  reasoning: z.string().describe('why, in a few sentences, citing the rubric'),
  score: z.number().describe('the grade on the scale given in the instructions'),
  pass: z.boolean().describe('true when the response satisfies the rubric'),
});

export const JudgeScaleSchema = z
  .strictObject({ min: z.number(), max: z.number() })
  .refine((scale) => scale.max > scale.min, 'max must be greater than min');

/** Judge settings of a run (plain JSON: they travel to worker threads inside RolloutSettings). */
export const JudgeSettingsSchema = z.object({
  /** One endpoint per judge; several judges form a panel (mean score, majority pass). */
  endpoints: z.array(EndpointSchema).min(1),
  /** The rubric text (a config's rubric_file is read on the main thread); an environment's own rubric otherwise. */
  rubric: z.string().optional(),
  scale: JudgeScaleSchema.optional(),
  /** auto: json_schema response_format, falling back to JSON in text when the endpoint rejects it (HTTP 400). */
  structured: z.enum(['auto', 'json_schema', 'text']).default('auto'),
  /** Judge calls per verdict when the answer is not a valid verdict (the judge is told what was wrong). */
  maxAttempts: z.number().int().positive().default(3),
  /** The run store, opened read-only in workers for cached verdicts. */
  cachePath: z.string().optional(),
  /** The run's model prices, for judge calls whose provider reports no cost. */
  pricing: PricingSchema.optional(),
});
export type JudgeSettings = z.infer<typeof JudgeSettingsSchema>;
export type JudgeSettingsInput = z.input<typeof JudgeSettingsSchema>;

export const DEFAULT_JUDGE_SCALE = { min: 0, max: 10 } as const;

/** One judge's verdict, the score normalised to 0..1. */
export const JudgeVerdictSchema = z.object({
  model: z.string(),
  score: z.number().min(0).max(1),
  pass: z.boolean(),
  reasoning: z.string(),
  /** The judge's answer as it came (the last, valid attempt). */
  raw: z.string(),
});
export type JudgeVerdict = z.infer<typeof JudgeVerdictSchema>;

/** A panel's grade: mean score, majority pass, share of judges agreeing with the majority. */
export interface PanelVerdict {
  score: number;
  pass: boolean;
  agreement: number;
  verdicts: (JudgeVerdict & { cached: boolean })[];
}

/** Where verdicts are remembered; keys are judgeCacheKey(...). */
export interface JudgeCache {
  get(key: string): JudgeVerdict | undefined;
  put(key: string, verdict: JudgeVerdict): void;
}

/** sha256 of everything that decides a verdict: the judge model, rubric, reference, scale, prompt and response. */
export function judgeCacheKey(model: string, request: JudgeRequest): string {
  return sha256(
    canonicalJson({
      model,
      rubric: request.rubric,
      reference: request.reference ?? null,
      scale: request.scale,
      prompt: request.prompt,
      response: request.response,
      // Absent for the first grading, so verdicts cached before samples existed are still found.
      ...(request.sample ? { sample: request.sample } : {}),
    }),
  );
}

/** The response_format that asks for a verdict (strict JSON Schema generated from VerdictSchema). */
export function verdictResponseFormat(): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(VerdictSchema) as Record<string, unknown>;
  return { type: 'json_schema', json_schema: { name: 'verdict', schema, strict: true } };
}

type Mode = 'json_schema' | 'text';

/** Per-thread clients (one per endpoint and mode) and endpoints known to reject response_format. */
const clients = new Map<string, ModelClient>();
const rejectsStructured = new Set<string>();
/** Identical judge calls in flight in this thread share one request. */
const inFlight = new Map<string, Promise<JudgeVerdict>>();

function clientFor(endpoint: Endpoint, mode: Mode, pricing: Pricing | undefined): ModelClient {
  const id = `${mode}:${canonicalJson(endpoint)}:${canonicalJson(pricing?.[endpoint.model] ?? null)}`;
  let client = clients.get(id);
  if (!client) {
    const extra =
      mode === 'json_schema'
        ? { ...endpoint.extra_body, response_format: verdictResponseFormat() }
        : endpoint.extra_body;
    client = createModelClient({ ...endpoint, extra_body: extra }, { pricing });
    clients.set(id, client);
  }
  return client;
}

function isResponseFormatRejection(error: unknown): boolean {
  return error instanceof ModelError && error.code === 'model_request_rejected' && error.details.status === 400;
}

/**
 * One judge's verdict: structured output when the endpoint takes it, otherwise JSON read from the
 * text; an unusable answer is retried (with what was wrong) up to `maxAttempts` times, then fails.
 */
export async function gradeWithEndpoint(
  endpoint: Endpoint,
  request: JudgeRequest,
  settings: Pick<JudgeSettings, 'structured' | 'maxAttempts' | 'pricing'>,
  signal?: AbortSignal,
  onUsage?: (usage: Usage) => void,
): Promise<JudgeVerdict> {
  const endpointId = canonicalJson(endpoint);
  const messages: Message[] = judgeMessages(request);
  const problems: string[] = [];
  for (let attempt = 1; attempt <= settings.maxAttempts; ) {
    const mode: Mode =
      settings.structured === 'text' || (settings.structured === 'auto' && rejectsStructured.has(endpointId))
        ? 'text'
        : 'json_schema';
    let raw: string;
    try {
      const response = await clientFor(endpoint, mode, settings.pricing).complete({ messages, signal });
      onUsage?.(response.usage);
      raw = response.message.content ?? '';
    } catch (error) {
      if (mode === 'json_schema' && settings.structured === 'auto' && isResponseFormatRejection(error)) {
        rejectsStructured.add(endpointId);
        continue;
      }
      throw error;
    }
    attempt++;
    const parsed = parseVerdict(raw, mode, request.scale);
    if (typeof parsed !== 'string') return { model: endpoint.model, ...parsed, raw };
    problems.push(parsed);
    messages.push({ role: 'assistant', content: raw }, correctionMessage(parsed));
  }
  throw new ModelError(
    `judge ${endpoint.model} at ${endpoint.base_url} gave no valid verdict in ${settings.maxAttempts} attempts: ${problems.join('; ')}`,
    {
      code: 'judge_invalid_output',
      retryable: false,
      details: { model: endpoint.model, problems },
    },
  );
}

/** A verdict normalised to 0..1, or what is wrong with the answer. */
function parseVerdict(
  raw: string,
  mode: Mode,
  scale: JudgeRequest['scale'],
): Omit<JudgeVerdict, 'model' | 'raw'> | string {
  let value: unknown;
  if (mode === 'json_schema') {
    try {
      value = JSON.parse(raw);
    } catch (error) {
      value = extractJsonObject(raw);
      if (value === undefined) return `not JSON (${errorMessage(error)})`;
    }
  } else {
    value = extractJsonObject(raw);
    if (value === undefined) return 'no JSON object found in the reply';
  }
  const result = VerdictSchema.safeParse(value);
  if (!result.success)
    return result.error.issues.map((issue) => `${issue.path.join('.') || '(object)'}: ${issue.message}`).join(', ');
  const { score, pass, reasoning } = result.data;
  if (score < scale.min || score > scale.max) return `score ${score} is outside the scale ${scale.min}..${scale.max}`;
  return { score: (score - scale.min) / (scale.max - scale.min), pass, reasoning };
}

/**
 * Grade with every judge of the panel (cached verdicts are reused, new ones stored). `onUsage` is
 * told each judge call made for this grade; a cached verdict, or one shared with an identical
 * grade already in flight, made none here.
 */
export async function gradeWithPanel(
  settings: JudgeSettings,
  request: JudgeRequest,
  cache: JudgeCache,
  signal?: AbortSignal,
  onUsage?: (usage: Usage) => void,
): Promise<PanelVerdict> {
  const verdicts = await Promise.all(
    settings.endpoints.map(async (endpoint) => {
      const key = judgeCacheKey(endpoint.model, request);
      const cached = cache.get(key);
      if (cached) return { ...cached, cached: true };
      let pending = inFlight.get(key);
      if (!pending) {
        pending = gradeWithEndpoint(endpoint, request, settings, signal, onUsage).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      const verdict = await pending;
      cache.put(key, verdict);
      return { ...verdict, cached: false };
    }),
  );
  const { pass, agreement } = majorityAgreement(verdicts.map((verdict) => verdict.pass));
  return {
    score: verdicts.reduce((sum, verdict) => sum + verdict.score, 0) / verdicts.length,
    pass,
    agreement,
    verdicts,
  };
}

/** A cache kept in memory (tests, and a layer over a read-only store in workers). */
export function memoryJudgeCache(
  initial?: Map<string, JudgeVerdict>,
): JudgeCache & { entries: Map<string, JudgeVerdict> } {
  const entries = initial ?? new Map<string, JudgeVerdict>();
  return { entries, get: (key) => entries.get(key), put: (key, verdict) => void entries.set(key, verdict) };
}
