import { wholeBodyOf } from './http-fetch.js';

/** The reply grew past the endpoint's `max_reply_bytes`: not retried, the next try would run away too. */
export class ReplyTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the reply is larger than max_reply_bytes (${limitBytes} bytes); reading stopped there`);
  }
}

/**
 * Reading a reply's body under the endpoint's `max_reply_bytes`: a runaway reply (a model looping
 * for megabytes, a proxy streaming a file) stops at the cap instead of filling memory and a record.
 */
async function* cappedChunks(body: ReadableStream<Uint8Array> | null, maxBytes: number): AsyncGenerator<Uint8Array> {
  if (!body) return;
  const reader = body.getReader();
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      bytes += value.byteLength;
      if (bytes > maxBytes) throw new ReplyTooLargeError(maxBytes);
      yield value;
    }
  } finally {
    // Stops the transfer when reading ends early (the cap, a parse error, an abort).
    reader.cancel().catch(() => {});
  }
}

/** One decode call per whole body: it keeps no state between calls. */
const wholeDecoder = new TextDecoder();

/** The whole body as text, or ReplyTooLargeError past the cap. */
export async function readCappedText(response: Response, maxBytes: number): Promise<string> {
  const whole = wholeBodyOf(response);
  if (whole) {
    if (whole.byteLength > maxBytes) throw new ReplyTooLargeError(maxBytes);
    return wholeDecoder.decode(whole);
  }
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of cappedChunks(response.body, maxBytes)) text += decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}

export interface ServerSentEvent {
  event: string | undefined;
  data: string;
}

/**
 * Server-sent events as the HTML standard parses them: `data:` lines joined by newlines, an
 * event ends at a blank line, comment lines (`: OPENROUTER PROCESSING`) are skipped. Lines end at
 * \n or \r\n (no server in the fixtures ends them with a lone \r).
 */
export async function* readServerSentEvents(response: Response, maxBytes: number): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let event: string | undefined;
  const line = function* (text: string): Generator<ServerSentEvent> {
    if (text === '') {
      if (data.length > 0) yield { event, data: data.join('\n') };
      data = [];
      event = undefined;
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
  };
  for await (const chunk of cappedChunks(response.body, maxBytes)) {
    buffer += decoder.decode(chunk, { stream: true });
    // Lines are read by position and the rest kept once per chunk: slicing per line would copy
    // the remaining buffer for every line of a large chunk.
    let start = 0;
    let end: number;
    while ((end = buffer.indexOf('\n', start)) !== -1) {
      yield* line(buffer.slice(start, buffer[end - 1] === '\r' ? end - 1 : end));
      start = end + 1;
    }
    buffer = buffer.slice(start);
  }
  buffer += decoder.decode();
  if (buffer !== '') yield* line(buffer.replace(/\r$/, ''));
  yield* line('');
}
