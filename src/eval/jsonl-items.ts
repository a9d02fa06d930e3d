import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { z } from 'zod';
import { DatasetError } from '../errors.js';

/**
 * An environment's items from a JSONL file, each line validated against `schema`; a bad line is
 * an error naming the file, the line and the field. Streams, and stops reading after `limit` items.
 */
export async function* readJsonlItems<S extends z.ZodType>(path: string, schema: S, options: { limit?: number } = {}): AsyncGenerator<z.infer<S>> {
  if (!existsSync(path)) throw new DatasetError(`${path}: no such file`, { code: 'dataset_missing', details: { path } });
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let number = 0;
  let yielded = 0;
  try {
    for await (const line of lines) {
      number++;
      if (!line.trim()) continue;
      if (options.limit !== undefined && yielded >= options.limit) return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        throw new DatasetError(`${path}:${number}: not valid JSON (${(error as Error).message})`, { code: 'dataset_bad_row', details: { path, line: number } });
      }
      const parsed = schema.safeParse(value);
      if (!parsed.success) {
        const fields = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(row)'}: ${issue.message}`).join('; ');
        throw new DatasetError(`${path}:${number}: ${fields}`, { code: 'dataset_bad_row', details: { path, line: number } });
      }
      yielded++;
      yield parsed.data;
    }
  } finally {
    lines.close();
  }
}
