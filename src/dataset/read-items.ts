import type { z } from 'zod';
import { DatasetError, errorMessage, isTrajError } from '../errors.js';
import { datasetFormat } from './format.js';
import { downloadHubFile, isHubUrl, type HubOptions } from './hub.js';
import { locate } from './location.js';
import { existingFile, rawRows } from './read-dataset.js';

export interface ReadItemsOptions extends HubOptions {
  /** Stop after this many items (the rest of the file is never read). */
  limit?: number;
}

/**
 * An environment's items: the same streaming reader as batch rows (JSONL, gzip, BOM, Parquet,
 * Arrow, `hf://`), each row validated against the environment's `schema` instead of the prompt
 * schema. A bad row is an error naming the file, the line and the field.
 */
export async function* readItems<S extends z.ZodType>(
  source: string,
  schema: S,
  options: ReadItemsOptions = {},
): AsyncGenerator<z.infer<S>> {
  const format = datasetFormat(source);
  const file = isHubUrl(source) ? await downloadHubFile(source, options) : await existingFile(source);
  let yielded = 0;
  try {
    for await (const raw of rawRows(file, format)) {
      if (options.signal?.aborted || (options.limit !== undefined && yielded >= options.limit)) return;
      if ('error' in raw) throw badItem(source, raw.line, raw.error);
      const parsed = schema.safeParse(raw.value);
      if (!parsed.success) throw badItem(source, raw.line, describeIssues(parsed.error.issues));
      yielded++;
      yield parsed.data;
    }
  } catch (error) {
    if (isTrajError(error)) throw error;
    throw new DatasetError(`${source}: cannot read it as ${format} (${errorMessage(error)})`, {
      code: 'dataset_unreadable',
      cause: error,
    });
  }
}

function badItem(source: string, line: number, reason: string): DatasetError {
  return new DatasetError(`${locate(source, line)}: ${reason}`, { code: 'dataset_bad_row', details: { source, line } });
}

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((issue) => `${issue.path.join('.') || '(row)'}: ${issue.message}`).join('; ');
}
