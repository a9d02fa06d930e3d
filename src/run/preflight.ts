import { setTimeout as sleep } from 'node:timers/promises';
import type { Endpoint } from '../config/endpoint.js';
import { errorMessage, isTrajError, ModelError, SandboxError } from '../errors.js';
import { apiKeyFor } from '../model/api-key.js';
import { type ContextLength, contextLengthOf, modelsUrl, requestModelsListing } from '../model/context-length.js';
import type { HttpReply } from '../model/http-exchange.js';
import { ReplyTooLargeError } from '../model/reply-body.js';

/**
 * Checks before the first rollout is dispatched, so a run-level fault (wrong key, dead endpoint,
 * missing image) stops the run at once instead of failing every prompt and using its attempts.
 * Each check costs one cheap call: `GET /models` on the endpoint, an image inspect on the engine.
 */
export interface PreflightInput {
  /** The policy endpoint; absent when no model is called (the noop and oracle agents). */
  endpoint?: Endpoint;
  /** Docker images the rollouts will start containers from; empty for local sandboxes. */
  images: readonly string[];
  /** Told before each retry of an unreachable endpoint, so a wait is never silent. */
  onNotice?: (message: string) => void;
  /** Tries of an endpoint that does not answer at all (default 3), and the first pause between them. */
  attempts?: number;
  retryDelayMs?: number;
}

export interface PreflightResult {
  /**
   * The model's window from the same `/models` answer (or endpoint.context_length): handed to the
   * rollouts, so no worker thread asks the server again. Undefined when no model is called.
   */
  contextLength?: ContextLength;
}

export async function preflight(input: PreflightInput): Promise<PreflightResult> {
  const contextLength = input.endpoint ? await checkEndpoint(input.endpoint, input) : undefined;
  if (input.images.length > 0) await checkImages(input.images);
  return contextLength ? { contextLength } : {};
}

/**
 * The key, the endpoint and (when the server lists models) nothing more: a 401/403 is a run-level
 * `model_auth` fault, no answer at all `model_unreachable`. Any other answer is not decisive (some
 * gateways have no /models route) and the run goes on; its first completion tells the rest.
 */
async function checkEndpoint(endpoint: Endpoint, input: PreflightInput): Promise<ContextLength> {
  // api_key_missing when the endpoint needs a key and its variable is unset. The SDK itself is not
  // loaded here: only worker threads call the model.
  const key = apiKeyFor(endpoint, process.env);
  const url = modelsUrl(endpoint.base_url);
  const timeoutMs = Math.min(endpoint.timeout_ms, 15_000);
  const attempts = input.attempts ?? 3;
  let delayMs = input.retryDelayMs ?? 500;
  for (let attempt = 1; ; attempt++) {
    let response: HttpReply;
    try {
      response = await requestModelsListing(endpoint.base_url, key, timeoutMs);
    } catch (error) {
      // An answer too long to read is an answer: the run goes on without the window it may hold.
      if (error instanceof ReplyTooLargeError) return contextLengthOf(endpoint, undefined);
      const why = connectionProblem(error);
      if (attempt >= attempts) {
        throw new ModelError(
          `model endpoint ${endpoint.base_url} is unreachable (preflight GET ${url}, ${attempts} tries): ${why}`,
          {
            code: 'model_unreachable',
            retryable: true,
            cause: error,
            details: { baseURL: endpoint.base_url, model: endpoint.model },
          },
        );
      }
      input.onNotice?.(
        `preflight: GET ${url} failed (${why}); trying again in ${(delayMs / 1000).toFixed(1)} s (${attempt}/${attempts})`,
      );
      await sleep(delayMs);
      delayMs *= 2;
      continue;
    }
    const body = response.text;
    if (response.status === 401 || response.status === 403) {
      throw new ModelError(
        `model endpoint ${endpoint.base_url} (model '${endpoint.model}') refused the credentials: HTTP ${response.status}: ${serverMessage(body)} ` +
          `(the key comes from $${endpoint.api_key_env}; pass --api-key-env VAR to use another variable)`,
        { code: 'model_auth', details: { baseURL: endpoint.base_url, model: endpoint.model, status: response.status } },
      );
    }
    // The same rule a worker thread's own ask follows (context-length.ts).
    return contextLengthOf(endpoint, response.ok ? jsonOrUndefined(body) : undefined);
  }
}

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The server's own words: `error.message` of a JSON body, else the start of the text. */
function serverMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // Not JSON: show the text itself.
  }
  return body.trim().slice(0, 500) || '(empty body)';
}

function connectionProblem(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return `${code} ${current.message}`.trim();
    current = current.cause;
  }
  return errorMessage(error);
}

/** Every image must be on the engine: a missing one is `image_missing`, no engine `engine_unreachable`. */
async function checkImages(images: readonly string[]): Promise<void> {
  const { connectDocker, engineStatus } = await import('../sandbox/docker-engine.js');
  const docker = await connectDocker();
  for (const image of new Set(images)) {
    try {
      await docker.getImage(image).inspect();
    } catch (error) {
      if (isTrajError(error)) throw error;
      if (engineStatus(error) === 404) {
        throw new SandboxError(
          `the sandbox image '${image}' is not on this Docker engine; build it offline with scripts/build-sandbox-image.sh --tag ${image} (or docker pull/load it), then run the same command again`,
          { code: 'image_missing', details: { image }, cause: error },
        );
      }
      throw new SandboxError(
        `cannot inspect the sandbox image '${image}' on the Docker engine: ${errorMessage(error)}`,
        {
          code: 'engine_unreachable',
          retryable: true,
          cause: error,
        },
      );
    }
  }
}
