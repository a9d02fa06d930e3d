import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { RawRow } from './raw-row.js';

/** Decodes one line strictly: invalid UTF-8 is a bad row, never silently replaced with U+FFFD. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const NON_ASCII = /[\u0080-\u00ff]/;

/**
 * Stream a JSONL file line by line. readline pauses the file stream when the consumer falls
 * behind, so memory stays flat however large the file is. Blank lines are skipped but counted.
 * Lines are read as latin1 (one character per byte) and decoded as UTF-8 only when they hold
 * non-ASCII bytes, so a line that is not valid UTF-8 is reported instead of being altered.
 */
export async function* readJsonlRows(file: string, options: { gzip?: boolean } = {}): AsyncGenerator<RawRow> {
  const stream = createReadStream(file);
  const input: Readable = options.gzip ? stream.pipe(createGunzip()) : stream;
  stream.on('error', (error) => input.destroy(error));
  input.setEncoding('latin1');
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const bytes of lines) {
      line += 1;
      const text = decodeLine(bytes);
      if (text === undefined) {
        yield {
          line,
          error: 'not valid UTF-8 (the line holds bytes that are no UTF-8 character; re-encode the file as UTF-8)',
        };
        continue;
      }
      const trimmed = line === 1 ? text.replace(/^\uFEFF/, '').trim() : text.trim();
      if (trimmed === '') continue;
      yield parseLine(trimmed, line);
    }
  } finally {
    lines.close();
    input.destroy();
    stream.destroy();
  }
}

function decodeLine(latin1: string): string | undefined {
  if (!NON_ASCII.test(latin1)) return latin1;
  try {
    return strictUtf8.decode(Buffer.from(latin1, 'latin1'));
  } catch {
    return undefined;
  }
}

function parseLine(text: string, line: number): RawRow {
  try {
    return { line, value: JSON.parse(text) };
  } catch (error) {
    return { line, error: `invalid JSON (${(error as Error).message})` };
  }
}
