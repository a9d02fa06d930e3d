import { OpenAI } from './openai-sdk.js';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import {
  ADAPTIVE_DEFAULTS,
  DEFAULT_MAX_REPLY_BYTES,
  EndpointSchema,
  type Endpoint,
  type EndpointInput,
} from '../config/endpoint.js';
import { validate } from '../config/validate.js';
import { ModelError } from '../errors.js';
import type { Pricing } from '../config/pricing.js';
import { apiKeyFor } from './api-key.js';
import { nodeHttpFetch } from './http-fetch.js';
import { pricedUsage } from './pricing.js';
import { countedRequest, endpointGate, type GateOutcome } from './concurrency.js';
import { completionOf, isEventStream, parseChunk, parseJsonBody, streamedError } from './completion-reply.js';
import { postJson } from './direct-post.js';
import { httpTarget, type HttpTarget } from './http-exchange.js';
import { ERROR_BODY_BYTES, rememberErrorBody, UNREAD_ERROR_BODY } from './error-body.js';
import {
  AttemptTimeoutError,
  BadResponseError,
  classifyFailure,
  gateOutcomeOf,
  isRateLimit,
  modelErrorFor,
  type FailureContext,
} from './failure.js';
import { readCappedText, readServerSentEvents, ReplyTooLargeError } from './reply-body.js';
import { toModelResponse, type ResponseSettings } from './response.js';
import { DEFAULT_RETRY_DELAYS, withRetries, type AttemptFailure, type RetryDelays, type RetryEvent } from './retry.js';
import { StreamAssembler, type WireChunk } from './stream-assembler.js';
import type { CompletionRequest, ModelClient, ModelDelta, ModelResponse } from './types.js';
import { buildRequestBody, requestBodyChunks, type WireCompletion } from './wire.js';

export interface ModelClientOptions {
  /** Where the API key variable is read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Backoff bounds (default 1 s base, 60 s cap); tests pass small ones. */
  retry?: Partial<RetryDelays>;
  /** Told before each backoff sleep: which attempt failed, why, and how long the wait is. */
  onRetry?: (event: RetryEvent) => void;
  /** Prices of models (the run's `pricing:`), for calls whose provider reports no cost. */
  pricing?: Pricing;
}

/** A client for one OpenAI-compatible endpoint; retries, the concurrency cap and parsing live here. */
export function createModelClient(endpoint: EndpointInput, options: ModelClientOptions = {}): ModelClient {
  return new OpenAICompatibleClient(validate(EndpointSchema, endpoint, 'endpoint'), options);
}

class OpenAICompatibleClient implements ModelClient {
  readonly model: string;
  readonly baseURL: string;
  private readonly openai: OpenAI;
  private readonly delays: RetryDelays;
  private readonly maxReplyBytes: number;
  private readonly settings: ResponseSettings;
  private readonly chat: HttpTarget;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly options: ModelClientOptions,
  ) {
    this.model = endpoint.model;
    this.baseURL = endpoint.base_url;
    this.delays = { ...DEFAULT_RETRY_DELAYS, ...options.retry };
    this.maxReplyBytes = endpoint.max_reply_bytes ?? DEFAULT_MAX_REPLY_BYTES;
    this.settings = { tool_call_format: endpoint.tool_call_format, reasoning_echo: endpoint.reasoning_echo ?? 'auto' };
    const apiKey = apiKeyFor(endpoint, options.env ?? process.env);
    this.chat = httpTarget(chatCompletionsURL(endpoint.base_url), {
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': 'traj',
      authorization: `Bearer ${apiKey}`,
    });
    // Retries are ours (jitter, retry-after, abortable sleep, one typed error at the end).
    this.openai = new OpenAI({
      apiKey,
      baseURL: endpoint.base_url,
      maxRetries: 0,
      timeout: endpoint.timeout_ms,
      fetch: keepingErrorBodies,
    });
  }

  async complete(request: CompletionRequest): Promise<ModelResponse> {
    const started = performance.now();
    const { value, attempts } = await withRetries(() => this.gated(request), {
      ...this.delays,
      maxRetries: this.endpoint.max_retries,
      signal: request.signal,
      classify: (error) => classifyFailure(error, request.signal),
      giveUp: (failure, count) => giveUp(failure, count, { baseURL: this.baseURL, model: this.model }),
      onRetry: this.options.onRetry,
      rateLimit: {
        isRateLimit,
        maxWaitMs: this.endpoint.max_rate_limit_wait_ms ?? ADAPTIVE_DEFAULTS.max_rate_limit_wait_ms,
      },
    });
    const response = toModelResponse(value, this.settings, {
      durationMs: Math.round(performance.now() - started),
      attempts,
    });
    return { ...response, usage: pricedUsage(response.usage, this.model, this.options.pricing) };
  }

  /**
   * One attempt through the endpoint's gate (concurrency.ts): a run shares it over its threads;
   * otherwise the thread makes one from this endpoint's settings. Unset, the cap is no cap: the
   * rollouts in flight bound the requests, and the adaptive level starts from what is in flight.
   */
  private async gated(request: CompletionRequest): Promise<WireCompletion> {
    const gate = endpointGate(this.baseURL, {
      min: this.endpoint.min_concurrency ?? ADAPTIVE_DEFAULTS.min_concurrency,
      max: this.endpoint.concurrency ?? Number.POSITIVE_INFINITY,
      adaptive: this.endpoint.adaptive ?? ADAPTIVE_DEFAULTS.adaptive,
    });
    const ticket = await gate.acquire(request.signal);
    let outcome: GateOutcome = { kind: 'other' };
    try {
      const value = await countedRequest(() => this.attempt(request));
      outcome = { kind: 'success' };
      return value;
    } catch (error) {
      outcome = gateOutcomeOf(error, this.delays.maxDelayMs);
      throw error;
    } finally {
      gate.release(ticket, outcome);
    }
  }

  /**
   * One HTTP exchange, bounded by timeout_ms from request to the last byte. A whole reply goes
   * around the SDK (direct-post.ts), with its errors in the SDK's shapes; the body of a 200 is read
   * under max_reply_bytes and parsed leniently (see completionOf).
   */
  private async attempt(request: CompletionRequest): Promise<WireCompletion> {
    if (request.onDelta) return this.streamedAttempt(request, request.onDelta);
    const body = requestBodyChunks(this.endpoint, request.messages, request.tools, false);
    const reply = await postJson(this.chat, body, {
      signal: request.signal,
      timeoutMs: this.endpoint.timeout_ms,
      timeoutError: () => this.timeoutError(),
      maxReplyBytes: this.maxReplyBytes,
    });
    return completionOf(parseJsonBody(reply.text, reply.headers['content-type']));
  }

  private timeoutError(): AttemptTimeoutError {
    return new AttemptTimeoutError(`no complete response within ${this.endpoint.timeout_ms} ms (timeout_ms)`);
  }

  /**
   * A streamed attempt, through the SDK: one controller and one timer per attempt
   * (AbortSignal.timeout + AbortSignal.any cost several times that per call on Node 20).
   */
  private async streamedAttempt(
    request: CompletionRequest,
    onDelta: (delta: ModelDelta) => void,
  ): Promise<WireCompletion> {
    const caller = request.signal;
    if (caller?.aborted) throw caller.reason;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(this.timeoutError());
    }, this.endpoint.timeout_ms);
    const onAbort = () => controller.abort(caller?.reason);
    caller?.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.streamed(request, controller.signal, onDelta);
    } catch (error) {
      if (timedOut && !caller?.aborted) throw this.timeoutError();
      throw error;
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    }
  }

  private async streamed(
    request: CompletionRequest,
    signal: AbortSignal,
    onDelta: (delta: ModelDelta) => void,
  ): Promise<WireCompletion> {
    const body = buildRequestBody(this.endpoint, request.messages, request.tools, true);
    const response = await this.openai.chat.completions
      .create(body as unknown as ChatCompletionCreateParamsStreaming, { signal })
      .asResponse();
    if (!isEventStream(response))
      return completionOf(
        parseJsonBody(await readCappedText(response, this.maxReplyBytes), response.headers.get('content-type')),
      );
    const assembler = new StreamAssembler(onDelta);
    for await (const event of readServerSentEvents(response, this.maxReplyBytes)) {
      if (event.data === '[DONE]') break;
      const chunk = parseChunk(event.data);
      const error = streamedError(chunk, event.event);
      if (error) throw new BadResponseError(`the stream carried an error: ${error}`);
      assembler.add(chunk as WireChunk);
    }
    return assembler.result();
  }
}

/** `…/chat/completions` under the base URL, its query (an Azure api-version) kept. */
function chatCompletionsURL(baseURL: string): URL {
  const url = new URL(baseURL);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/chat/completions`;
  return url;
}

/** A reply past the cap is its own failure; everything else is classified by failure.ts. */
function giveUp(failure: AttemptFailure, attempts: number, context: FailureContext): ModelError {
  if (failure.cause instanceof ReplyTooLargeError) {
    const where = `model endpoint ${context.baseURL} (model '${context.model}')`;
    return new ModelError(`${where}: ${failure.message}; raise endpoint.max_reply_bytes if such replies are expected`, {
      code: 'reply_too_large',
      retryable: false,
      cause: failure.cause,
      details: { baseURL: context.baseURL, model: context.model, attempts, limitBytes: failure.cause.limitBytes },
    });
  }
  return modelErrorFor(failure, attempts, context);
}

/** nodeHttpFetch, keeping the text of each error body for serverMessage (see error-body.ts). */
async function keepingErrorBodies(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const response = await nodeHttpFetch(input, init);
  if (response.ok) return response;
  const text = await readCappedText(response, ERROR_BODY_BYTES).catch((error: unknown) =>
    error instanceof ReplyTooLargeError ? UNREAD_ERROR_BODY : String(error),
  );
  const copy = new Response(text, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  rememberErrorBody(copy.headers, text);
  return copy;
}
