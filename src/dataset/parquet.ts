import { openAsBlob } from 'node:fs';
import { batchRows } from './arrow-values.js';
import type { RawRow } from './raw-row.js';

/**
 * Stream a Parquet file row group by row group: parquet-wasm reads byte ranges of the file
 * through a Blob (never the whole file), decodes one row group to Arrow IPC, and apache-arrow
 * turns it into rows. Peak memory is about one decoded row group.
 */
export async function* readParquetRows(file: string): AsyncGenerator<RawRow> {
  const [arrow, parquet] = await Promise.all([import('apache-arrow'), import('parquet-wasm')]);
  const parquetFile = await parquet.ParquetFile.fromFile(await openAsBlob(file));
  try {
    const metadata = parquetFile.metadata();
    const groups = metadata.numRowGroups();
    metadata.free();
    let line = 0;
    for (let group = 0; group < groups; group += 1) {
      const decoded = await parquetFile.read({ rowGroups: [group] });
      const table = arrow.tableFromIPC(decoded.intoIPCStream());
      for (const batch of table.batches) {
        for (const value of batchRows(batch, arrow)) yield { line: ++line, value };
      }
    }
  } finally {
    parquetFile.free();
  }
}
