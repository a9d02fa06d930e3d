import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import http from 'node:http';
import https from 'node:https';
import { ERROR_BODY_BYTES, rememberErrorBody, UNREAD_ERROR_BODY } from './error-body.js';
import { ReplyTooLargeError } from './failure.js';
import { httpAgentFor, webHeaders } from './http-fetch.js';
import { APIConnectionError, APIError } from './openai-sdk.js';

/**
 * A non-streaming chat call without the SDK: one JSON POST on the keep-alive agents, its reply
 * read as bytes up to the cap. The SDK's request building (Headers objects, eager debug-log
 * formatting) and the web Response wrapping cost about half of traj's CPU per model call against
 * a fast endpoint; a bare client pays none of it. Failures keep the SDK's shapes (APIError for a
 * status, APIConnectionError for the network), so classification and messages are the same.
 */
export interface DirectReply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

const decoder = new TextDecoder();

export async function postJson(
  url: URL,
  headers: Record<string, string>,
  body: readonly Buffer[],
  options: { signal: AbortSignal; maxReplyBytes: number },
): Promise<DirectReply> {
  const response = await send(url, headers, body, options.signal);
  const status = response.statusCode ?? 500;
  const ok = status >= 200 && status < 300;
  const text = await readBody(response, ok ? options.maxReplyBytes : ERROR_BODY_BYTES).catch((error: unknown) => {
    if (!ok && error instanceof ReplyTooLargeError) return UNREAD_ERROR_BODY;
    throw error;
  });
  if (!ok) throw statusError(status, response.headers, text);
  return { status, headers: response.headers, text };
}

/** POST `body`, given as encoded chunks: the request buffers them until its socket is assigned, then writes them together. */
function send(
  url: URL,
  headers: Record<string, string>,
  body: readonly Buffer[],
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const secure = url.protocol === 'https:';
  let length = 0;
  for (const chunk of body) length += chunk.byteLength;
  return new Promise((resolve, reject) => {
    const request = (secure ? https : http).request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(length) },
      agent: httpAgentFor(url.protocol),
      signal,
    });
    request.once('response', resolve);
    request.once('error', (error) => reject(signal.aborted ? signal.reason : new APIConnectionError({ cause: error })));
    for (const chunk of body) request.write(chunk);
    request.end();
  });
}

function readBody(response: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    response.on('data', (chunk: Buffer) => {
      bytes += chunk.byteLength;
      if (bytes > maxBytes) {
        response.destroy();
        reject(new ReplyTooLargeError(maxBytes));
        return;
      }
      chunks.push(chunk);
    });
    response.once('end', () => resolve(decoder.decode(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))));
    response.once('error', reject);
    // An abort, a timeout or a dropped connection: the body ended short (a settled promise ignores it).
    response.once('close', () => {
      if (!response.complete)
        reject(new APIConnectionError({ message: 'the connection closed before the reply was complete' }));
    });
  });
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
