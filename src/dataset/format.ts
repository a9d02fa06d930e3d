import { DatasetError } from '../errors.js';

export type DatasetFormat = 'jsonl' | 'jsonl-gzip' | 'parquet' | 'arrow';

const EXTENSIONS: ReadonlyArray<[RegExp, DatasetFormat]> = [
  [/\.(jsonl|ndjson)$/i, 'jsonl'],
  [/\.(jsonl|ndjson)\.gz$/i, 'jsonl-gzip'],
  [/\.parquet$/i, 'parquet'],
  [/\.(arrow|feather|ipc)$/i, 'arrow'],
];

export const SUPPORTED_EXTENSIONS = '.jsonl, .ndjson (optionally .gz), .parquet, .arrow, .feather, .ipc';

/** The reader for a path, chosen by its extension. */
export function datasetFormat(source: string): DatasetFormat {
  for (const [pattern, format] of EXTENSIONS) if (pattern.test(source)) return format;
  throw new DatasetError(`${source}: unknown dataset format; supported: ${SUPPORTED_EXTENSIONS}`, {
    code: 'dataset_format',
    details: { source },
  });
}
