import { createReadStream, existsSync } from 'node:fs';

/** Rows of a local JSONL file, counted by newlines (cheap) so the progress bar knows its total. */
export async function countJsonlRows(path: string): Promise<number | undefined> {
  if (!/\.(jsonl|ndjson)$/.test(path) || !existsSync(path)) return undefined;
  let count = 0;
  let last = 10;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    for (let index = chunk.indexOf(10); index !== -1; index = chunk.indexOf(10, index + 1)) count++;
    last = chunk[chunk.length - 1] ?? last;
  }
  return last === 10 ? count : count + 1;
}
