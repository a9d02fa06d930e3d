import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { RawRow } from './raw-row.js';

/**
 * Stream a JSONL file line by line. readline pauses the file stream when the consumer falls
 * behind, so memory stays flat however large the file is. Blank lines are skipped but counted.
 */
export async function* readJsonlRows(file: string, options: { gzip?: boolean } = {}): AsyncGenerator<RawRow> {
  const stream = createReadStream(file);
  const input: Readable = options.gzip ? stream.pipe(createGunzip()) : stream;
  stream.on('error', (error) => input.destroy(error));
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line += 1;
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

function parseLine(text: string, line: number): RawRow {
  try {
    return { line, value: JSON.parse(text) };
  } catch (error) {
    return { line, error: `invalid JSON (${(error as Error).message})` };
  }
}
