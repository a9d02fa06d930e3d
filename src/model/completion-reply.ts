import { errorBodyMessage } from './error-body.js';
import { TokenCollector } from './completion-tokens.js';
import { BadResponseError } from './failure.js';
import type { WireCompletion, WireMessage } from './wire.js';

/**
 * What a 200 reply means. Compatible servers send shapes the SDK's types do not promise, so the
 * body is read leniently, and anything unusable is a BadResponseError (retried like a transport
 * fault, then reported with what was wrong).
 */

/** A server that ignores `stream: true` answers with one JSON body. */
export function isEventStream(response: Response): boolean {
  const type = response.headers.get('content-type') ?? '';
  return type.includes('text/event-stream') || !type.includes('json');
}

/** A 200 whose body is not JSON (an HTML page from a proxy, a truncated body) is a transport fault, retried. */
export function parseJsonBody(text: string, contentType: string | null | undefined): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const type = contentType ?? 'no content-type';
    throw new BadResponseError(
      `the response body is not valid JSON (${type}; ${(error as Error).message}): ${preview(text)}`,
    );
  }
}

export function parseChunk(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch (error) {
    throw new BadResponseError(`a streamed chunk is not valid JSON (${(error as Error).message}): ${preview(data)}`);
  }
}

/** OpenRouter and others report a failure mid-stream as a chunk with an `error` object. */
export function streamedError(chunk: unknown, event: string | undefined): string | undefined {
  if (!chunk || typeof chunk !== 'object') return event === 'error' ? String(chunk) : undefined;
  const { error } = chunk as { error?: unknown };
  if (error !== undefined && error !== null) return errorBodyMessage(chunk) ?? JSON.stringify(error);
  return event === 'error' ? (errorBodyMessage(chunk) ?? JSON.stringify(chunk)) : undefined;
}

/**
 * The one choice of a completion body. A body without choices (an error object sent with 200)
 * or a choice without a message is a bad response: retried, then reported with the server's words.
 */
export function completionOf(body: unknown): WireCompletion {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new BadResponseError(`the response is not a JSON object: ${preview(JSON.stringify(body))}`);
  const { choices, usage, timings } = body as { choices?: unknown; usage?: unknown; timings?: unknown };
  const choice = Array.isArray(choices)
    ? (choices[0] as { message?: unknown; finish_reason?: unknown } | undefined)
    : undefined;
  if (!choice) {
    const error = errorBodyMessage(body);
    throw new BadResponseError(
      error ? `the response is an error: ${error}` : `the response has no choices: ${preview(JSON.stringify(body))}`,
    );
  }
  if (!choice.message || typeof choice.message !== 'object') {
    throw new BadResponseError(
      `the response's choice has no message (message: ${JSON.stringify(choice.message ?? null)}): ${preview(JSON.stringify(body))}`,
    );
  }
  const collector = new TokenCollector();
  collector.add(choice as Record<string, unknown>, body as Record<string, unknown>);
  const tokens = collector.result();
  return {
    message: choice.message as WireMessage,
    finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
    usage: isObject(usage) ? usage : undefined,
    ...(isObject(timings) ? { timings } : {}),
    ...(tokens ? { tokens } : {}),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function preview(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
