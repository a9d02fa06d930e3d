import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorMessage, serializeError, type SerializedError } from '../errors.js';
import { addUsage, emptyUsage, type Usage } from '../model/messages.js';
import type { ModelClient, ModelResponse } from '../model/types.js';
import { anthropicDialect } from './anthropic-dialect.js';
import { chatDialect } from './chat-dialect.js';
import { ProxyRequestError, type AgentRequest, type Exchange, type WireDialect } from './exchange.js';
import { responsesDialect } from './responses-dialect.js';

/** Limits on what an agent may spend through the proxy; past one, the proxy refuses. */
export interface ProxyLimits {
  turns?: number;
  tokens?: number;
  costUsd?: number;
}

/** Why the proxy stopped answering: a limit, or the real endpoint failing after traj's retries. */
export interface ProxyStop {
  reason: 'max_turns' | 'max_tokens' | 'max_cost' | 'api_error';
  message: string;
  error?: SerializedError;
}

export interface RecordingProxyOptions {
  client: ModelClient;
  /** The address to listen on: the gateway of the rollout's network (127.0.0.1 in tests). */
  host: string;
  /** The secret first path segment; requests without it get 404. */
  token: string;
  limits?: ProxyLimits;
  /** Told once, when the proxy first refuses or fails: the rollout ends the agent. */
  onStop?: (stop: ProxyStop) => void;
}

export interface RecordingProxy {
  /** `http://host:port/<token>`: append /v1 for OpenAI clients; Anthropic clients take it as is. */
  url: string;
  exchanges: Exchange[];
  usage: Usage;
  stop: ProxyStop | undefined;
  close(): Promise<void>;
}

const ROUTES: Record<string, WireDialect> = {
  '/v1/chat/completions': chatDialect,
  '/v1/responses': responsesDialect,
  '/v1/messages': anthropicDialect,
};

/**
 * One rollout's model endpoint: reads each request in the API the agent speaks, forwards it
 * through traj's client (retries, concurrency, cost, the key) and records it with the answer.
 */
export async function startRecordingProxy(options: RecordingProxyOptions): Promise<RecordingProxy> {
  const state = new ProxyState(options);
  const server = createServer((request, response) => {
    state.handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: errorMessage(error), type: 'traj_proxy' } }));
    });
  });
  await listen(server, options.host);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host}:${port}/${options.token}`,
    exchanges: state.exchanges,
    usage: state.usage,
    get stop() {
      return state.stop;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function listen(server: Server, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
}

class ProxyState {
  readonly exchanges: Exchange[] = [];
  readonly usage = emptyUsage();
  stop: ProxyStop | undefined;

  constructor(private readonly options: RecordingProxyOptions) {}

  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const prefix = `/${this.options.token}`;
    const url = (request.url ?? '').split('?')[0]!;
    if (!url.startsWith(`${prefix}/`)) return send(response, 404, { error: { message: 'not found' } });
    const path = url.slice(prefix.length);
    if (request.method === 'GET' && path === '/v1/models') return send(response, 200, this.models());
    const dialect = ROUTES[path];
    if (request.method !== 'POST' || !dialect)
      return send(response, 404, { error: { message: `traj proxy: no route ${request.method} ${path}` } });
    const body = await readBody(request);
    await this.answer(dialect, body, response);
  }

  private models() {
    return { object: 'list', data: [{ id: this.options.client.model, object: 'model', owned_by: 'traj' }] };
  }

  private async answer(dialect: WireDialect, body: string, response: ServerResponse): Promise<void> {
    let parsed: AgentRequest;
    try {
      parsed = dialect.parse(JSON.parse(body));
    } catch (error) {
      const message =
        error instanceof ProxyRequestError ? error.message : `request body is not JSON: ${errorMessage(error)}`;
      return send(response, 400, dialect.error(`traj proxy: ${message}`, 'invalid_request_error'));
    }
    const refusal = this.stop ?? this.limitReached();
    if (refusal) return send(response, 400, dialect.error(refusal.message, 'traj_limit'));
    let answer: ModelResponse;
    try {
      answer = await this.options.client.complete({ messages: parsed.messages, tools: parsed.tools });
    } catch (error) {
      this.halt({
        reason: 'api_error',
        message: `traj proxy: the model endpoint failed: ${errorMessage(error)}`,
        error: serializeError(error),
      });
      return send(response, 502, dialect.error(this.stop!.message, 'api_error'));
    }
    this.exchanges.push({ messages: parsed.messages, tools: parsed.tools, response: answer });
    addUsage(this.usage, answer.usage);
    const model = this.options.client.model;
    if (!parsed.stream) return send(response, 200, dialect.reply(answer, model, parsed));
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const event of dialect.stream(answer, model, parsed)) response.write(event);
    response.end();
  }

  /** The first limit reached, which also ends the agent; undefined while all hold. */
  private limitReached(): ProxyStop | undefined {
    const limits = this.options.limits ?? {};
    const tokens = this.usage.prompt_tokens + this.usage.completion_tokens;
    let stop: ProxyStop | undefined;
    if (limits.turns !== undefined && this.exchanges.length >= limits.turns)
      stop = {
        reason: 'max_turns',
        message: `traj: the turn limit (${limits.turns} model calls) is reached; stop now`,
      };
    else if (limits.tokens !== undefined && tokens >= limits.tokens)
      stop = { reason: 'max_tokens', message: `traj: the token limit (${limits.tokens} tokens) is reached; stop now` };
    else if (limits.costUsd !== undefined && (this.usage.cost ?? 0) >= limits.costUsd)
      stop = { reason: 'max_cost', message: `traj: the cost limit ($${limits.costUsd}) is reached; stop now` };
    if (stop) this.halt(stop);
    return stop;
  }

  private halt(stop: ProxyStop): void {
    if (this.stop) return;
    this.stop = stop;
    this.options.onStop?.(stop);
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
