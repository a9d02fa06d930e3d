import { ReplyTooLargeError } from './failure.js';

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

/** The whole body as text, or ReplyTooLargeError past the cap. */
export async function readCappedText(response: Response, maxBytes: number): Promise<string> {
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
 * event ends at a blank line, comment lines (`: OPENROUTER PROCESSING`) are skipped.
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
    let end: number;
    while ((end = lineEnd(buffer)) !== -1) {
      const text = buffer.slice(0, end);
      buffer = buffer.slice(buffer[end] === '\r' && buffer[end + 1] === '\n' ? end + 2 : end + 1);
      yield* line(text);
    }
  }
  buffer += decoder.decode();
  if (buffer !== '') yield* line(buffer.replace(/\r$/, ''));
  yield* line('');
}

/** A line ends at \n, \r\n or \r; a \r at the very end may be the first half of \r\n, so it waits. */
function lineEnd(buffer: string): number {
  const newline = buffer.indexOf('\n');
  const carriage = buffer.indexOf('\r');
  if (carriage === -1 || (newline !== -1 && newline < carriage)) return newline;
  if (carriage === buffer.length - 1) return -1;
  return carriage;
}
