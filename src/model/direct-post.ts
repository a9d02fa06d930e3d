import type { IncomingHttpHeaders } from 'node:http';
import { rememberErrorBody } from './error-body.js';
import { webHeaders } from './http-fetch.js';
import { exchange, type ExchangeOptions, type HttpReply, type HttpTarget } from './http-exchange.js';
import { APIConnectionError, APIError } from './openai-sdk.js';

/**
 * A non-streaming chat call without the SDK: one JSON POST on the keep-alive agents, its reply
 * read as bytes up to the cap. The SDK's request building (Headers objects, eager debug-log
 * formatting) and the web Response wrapping cost about half of traj's CPU per model call against
 * a fast endpoint; a bare client pays none of it. Failures keep the SDK's shapes (APIError for a
 * status, APIConnectionError for the network), so classification and messages are the same.
 */
export async function postJson(
  target: HttpTarget,
  body: readonly Buffer[],
  options: ExchangeOptions,
): Promise<HttpReply> {
  const reply = await exchange(target, body, { ...options, connectionError: sdkConnectionError });
  if (!reply.ok) throw statusError(reply.status, reply.headers, reply.text);
  return reply;
}

function sdkConnectionError(options: { message?: string; cause?: Error }): Error {
  return new APIConnectionError(options);
}

/** The error the SDK would have thrown for this status, with the body kept for serverMessage. */
function statusError(status: number, raw: IncomingHttpHeaders, text: string): Error {
  const headers = webHeaders(raw);
  rememberErrorBody(headers, text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return APIError.generate(status, parsed as Record<string, unknown> | undefined, parsed ? undefined : text, headers);
}
