import { type ImageRequest, readImageRequest } from './image-request.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { completionBody, renderReply, streamBody } from './completion-body.js';
import { assistantTurns } from './conversation-script.js';
import type { ChatTokenizer } from '../tokens/index.js';
import { vllmTokens } from './vllm-tokens.js';
import {
  isFault,
  scriptError,
  type ChatRequest,
  type RecordedRequest,
  type Script,
  type ScriptedResponse,
} from './script.js';

export interface ScriptedServerOptions {
  /** Default 0: any free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Wait this long before answering each chat request (benchmarks: a model's latency). */
  latencyMs?: number;
  /** The model name reported by /v1/models and in completions (default traj-scripted). */
  model?: string;
  /** Keep every request body in `requests` (default true; a long-running demo server turns it off). */
  record?: boolean;
  /** Reported by /v1/models as `max_model_len` (vLLM's field) when set. */
  contextLength?: number;
  /**
   * Answers POST /v1/images/generations and /v1/images/edits (OpenAI images format): each image
   * as base64 or a URL.
   * Default: a 1×1 PNG as `b64_json`.
   */
  images?: (request: ImageRequest) => ImageAnswer | Promise<ImageAnswer>;
  /**
   * A rate-limited provider: a chat request arriving while this many are being answered gets an
   * immediate HTTP 429 (before any latency), never seen by the script.
   */
  rateLimitAbove?: number;
  /** The `retry-after` header of those 429s (seconds, or an HTTP date), when set. */
  rateLimitRetryAfter?: string;
  /**
   * Answer like vLLM with this model's tokenizer: `prompt_token_ids`, `choices[0].token_ids` and
   * `logprobs.content` when a request asks (return_token_ids, logprobs, top_logprobs,
   * return_tokens_as_token_ids).
   */
  tokenizer?: ChatTokenizer;
}

export type ImageAnswer = { b64_json: string; revised_prompt?: string } | { url: string; revised_prompt?: string };

/** The smallest valid PNG (1×1, one grey pixel): what image generation returns unless told otherwise. */
export const TINY_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg==';

export interface ScriptedServer {
  /** Base URL ending in /v1, ready for an endpoint's base_url. */
  url: string;
  port: number;
  /** Every chat request body received, in order (empty when `record` is false). */
  requests: RecordedRequest[];
  /** Every images request body received, in order. */
  imageRequests: ImageRequest[];
  /** Chat requests received so far, dropped and failed ones included. */
  requestCount(): number;
  /** Chat requests being answered right now. */
  inFlight(): number;
  /** The most chat requests ever answered at once. */
  maxInFlight(): number;
  /** Chat requests refused with 429 by `rateLimitAbove` (not in requestCount). */
  rateLimitedCount(): number;
  /** GET /v1/models requests received (a run's preflight; its rollouts reuse that answer). */
  modelListingCount(): number;
  close(): Promise<void>;
}

export const DEFAULT_SCRIPTED_MODEL = 'traj-scripted';

/** A real OpenAI-compatible HTTP server whose answers come from a script. */
export async function startScriptedServer(
  script: Script,
  options: ScriptedServerOptions = {},
): Promise<ScriptedServer> {
  const endpoint = new ScriptedEndpoint(script, options);
  const server = createServer((request, response) => endpoint.handle(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/v1`,
    port: address.port,
    requests: endpoint.requests,
    imageRequests: endpoint.imageRequests,
    requestCount: () => endpoint.count,
    inFlight: () => endpoint.inFlight,
    maxInFlight: () => endpoint.maxInFlight,
    rateLimitedCount: () => endpoint.rateLimited,
    modelListingCount: () => endpoint.modelListings,
    close: () =>
      new Promise<void>((resolve) => {
        endpoint.clearTimers();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The routes of the scripted server and what it counts. */
class ScriptedEndpoint {
  readonly requests: RecordedRequest[] = [];
  readonly imageRequests: ImageRequest[] = [];
  count = 0;
  inFlight = 0;
  maxInFlight = 0;
  rateLimited = 0;
  modelListings = 0;
  private readonly model: string;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly script: Script,
    private readonly options: ScriptedServerOptions,
  ) {
    this.model = options.model ?? DEFAULT_SCRIPTED_MODEL;
  }

  handle(request: IncomingMessage, response: ServerResponse): void {
    const path = (request.url ?? '').split('?')[0];
    const failed = (error: unknown) => {
      if (!response.headersSent)
        send(response, 500, { error: { message: `scripted server failed: ${String(error)}`, type: 'server_error' } });
    };
    if (request.method === 'POST' && path === '/v1/chat/completions') this.chat(request, response).catch(failed);
    else if (request.method === 'POST' && (path === '/v1/images/generations' || path === '/v1/images/edits'))
      this.images(request, response, path === '/v1/images/edits' ? 'edits' : 'generations').catch(failed);
    else if (request.method === 'GET' && path === '/v1/models') this.listModels(response);
    else
      send(response, 404, {
        error: {
          message: `no route ${request.method} ${path}; this server answers POST /v1/chat/completions, POST /v1/images/generations, POST /v1/images/edits and GET /v1/models`,
          type: 'not_found',
        },
      });
  }

  clearTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private wait(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }

  private async chat(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { options } = this;
    const parsed = parseChatRequest(await readBody(request));
    if (typeof parsed === 'string')
      return send(response, 400, { error: { message: parsed, type: 'invalid_request_error' } });
    if (options.rateLimitAbove !== undefined && this.inFlight >= options.rateLimitAbove) {
      this.rateLimited++;
      const headers = options.rateLimitRetryAfter ? { 'retry-after': options.rateLimitRetryAfter } : undefined;
      const message = `rate limit: ${options.rateLimitAbove} requests in flight at most`;
      return send(response, 429, { error: { message, type: 'rate_limit_exceeded' } }, headers);
    }
    const index = this.count++;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    response.once('close', () => this.inFlight--);
    if (options.record ?? true) this.requests.push(parsed);
    if (options.latencyMs) await this.wait(options.latencyMs);
    let answer: ScriptedResponse;
    try {
      answer = await pick(this.script, parsed, index);
    } catch (error) {
      answer = scriptError(`the script threw: ${error instanceof Error ? error.message : String(error)}`);
    }
    await this.answerWith(answer, parsed, index, request, response);
  }

  private async answerWith(
    answer: ScriptedResponse,
    parsed: ChatRequest,
    index: number,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    if (response.destroyed) return;
    if (!isFault(answer)) return this.reply(answer, parsed, index, response);
    switch (answer.fault) {
      case 'http':
        return send(
          response,
          answer.status,
          answer.body ?? {
            error: { message: `scripted HTTP ${answer.status}`, type: 'scripted_fault', code: answer.status },
          },
          answer.headers,
        );
      case 'drop':
        request.socket.destroy();
        return;
      case 'raw':
        response.writeHead(answer.status ?? 200, { 'content-type': answer.content_type ?? 'application/json' });
        response.end(answer.body);
        return;
      case 'delay':
        await this.wait(answer.ms);
        return this.answerWith(answer.then, parsed, index, request, response);
    }
  }

  private reply(
    answer: Exclude<ScriptedResponse, { fault: string }>,
    parsed: ChatRequest,
    index: number,
    response: ServerResponse,
  ): void {
    const rendered = renderReply(answer, parsed, index);
    if (this.options.tokenizer) rendered.tokens = vllmTokens(this.options.tokenizer, answer, parsed);
    if (parsed.stream) {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      response.end(streamBody(rendered, this.model, index, parsed.stream_options?.include_usage === true));
    } else {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(completionBody(rendered, this.model, index));
    }
  }

  private async images(
    request: IncomingMessage,
    response: ServerResponse,
    route: ImageRequest['route'],
  ): Promise<void> {
    const body = await readImageRequest(request, route);
    if (typeof body === 'string')
      return send(response, 400, { error: { message: body, type: 'invalid_request_error' } });
    if (typeof body.prompt !== 'string' || body.prompt === '')
      return send(response, 400, { error: { message: 'prompt is required', type: 'invalid_request_error' } });
    if (route === 'edits' && body.images!.length === 0)
      return send(response, 400, { error: { message: 'image is required', type: 'invalid_request_error' } });
    this.imageRequests.push(body);
    const answer = this.options.images ? await this.options.images(body) : { b64_json: TINY_PNG_BASE64 };
    send(response, 200, { created: Math.floor(Date.now() / 1000), data: [answer] });
  }

  private listModels(response: ServerResponse): void {
    this.modelListings++;
    const window = this.options.contextLength ? { max_model_len: this.options.contextLength } : {};
    send(response, 200, {
      object: 'list',
      data: [{ id: this.model, object: 'model', created: 0, owned_by: 'traj', ...window }],
    });
  }
}

function pick(script: Script, request: ChatRequest, index: number): ScriptedResponse | Promise<ScriptedResponse> {
  if (typeof script === 'function') return script(request, { index, turn: assistantTurns(request) });
  return script[index] ?? scriptError(`the script has ${script.length} responses and this is request ${index + 1}`);
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** The parsed request, or what is wrong with it. */
function parseChatRequest(body: string): ChatRequest | string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return `the request body is not JSON: ${(error as Error).message}`;
  }
  if (!value || typeof value !== 'object' || !Array.isArray((value as ChatRequest).messages)) {
    return 'the request body must be a JSON object with an array of messages';
  }
  return value as ChatRequest;
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (response.destroyed) return;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain' : 'application/json',
    ...headers,
  });
  response.end(text);
}
