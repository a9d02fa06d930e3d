import { stat } from 'node:fs/promises';
import { DatasetError, errorMessage, isTrajError } from '../errors.js';
import { datasetFormat, type DatasetFormat } from './format.js';
import { downloadHubFile, isHubUrl, type HubOptions } from './hub.js';
import { readArrowRows } from './arrow-ipc.js';
import { readJsonlRows } from './jsonl.js';
import { locate } from './location.js';
import { readParquetRows } from './parquet.js';
import type { RawRow } from './raw-row.js';
import { normaliseRow, type BadRow, type DatasetItem } from './row.js';

export interface ReadDatasetOptions extends HubOptions {
  /** Yield a BadRow marker for a malformed row instead of throwing. */
  skipBadRows?: boolean;
}

/**
 * Stream a dataset (JSONL, Parquet, Arrow IPC, or an `hf://datasets/…` file) as normalised
 * items. Pull-based: nothing is read ahead of the consumer beyond one buffer or row group.
 * A malformed row throws a DatasetError naming the file, the line and the reason, unless
 * `skipBadRows` asks for a BadRow marker instead. Stops quietly when `signal` aborts.
 */
export async function* readDataset(
  source: string,
  options: ReadDatasetOptions = {},
): AsyncGenerator<DatasetItem | BadRow> {
  const format = datasetFormat(source);
  const file = isHubUrl(source) ? await downloadHubFile(source, options) : await existingFile(source);
  let index = 0;
  try {
    for await (const raw of rawRows(file, format)) {
      if (options.signal?.aborted) return;
      const position = { index: index++, line: raw.line };
      const result = 'error' in raw ? { reason: raw.error } : normaliseRow(raw.value, position);
      if ('item' in result) {
        yield result.item;
      } else if (options.skipBadRows) {
        yield { bad: true, ...position, reason: result.reason };
      } else {
        throw new DatasetError(`${locate(source, raw.line)}: ${result.reason}`, {
          code: 'dataset_row_invalid',
          details: { source, line: raw.line, index: position.index, reason: result.reason },
        });
      }
    }
  } catch (error) {
    if (isTrajError(error)) throw error;
    throw new DatasetError(`${source}: cannot read it as ${format} (${errorMessage(error)})`, {
      code: 'dataset_unreadable',
      cause: error,
    });
  }
}

/** Each reader imports its heavy module (apache-arrow, parquet-wasm) only when it runs. */
export function rawRows(file: string, format: DatasetFormat): AsyncIterable<RawRow> {
  switch (format) {
    case 'jsonl':
      return readJsonlRows(file);
    case 'jsonl-gzip':
      return readJsonlRows(file, { gzip: true });
    case 'parquet':
      return readParquetRows(file);
    case 'arrow':
      return readArrowRows(file);
  }
}

export async function existingFile(source: string): Promise<string> {
  try {
    const info = await stat(source);
    if (info.isFile()) return source;
    throw new DatasetError(`${source}: is not a file`, { code: 'dataset_missing', details: { source } });
  } catch (error) {
    if (isTrajError(error)) throw error;
    throw new DatasetError(
      `${source}: dataset file not found (${(error as NodeJS.ErrnoException).code ?? errorMessage(error)})`,
      {
        code: 'dataset_missing',
        details: { source },
      },
    );
  }
}

/**
 * What can be known of a dataset before a run makes its store: its format from the name, and for
 * a local file that it exists and is not empty. A run that fails these leaves nothing behind.
 */
export async function checkDatasetSource(source: string): Promise<void> {
  datasetFormat(source);
  if (isHubUrl(source)) return;
  const file = await existingFile(source);
  if ((await stat(file)).size === 0)
    throw new DatasetError(`${source}: the dataset file is empty (nothing to run)`, {
      code: 'dataset_empty',
      details: { source },
    });
}
