import { open } from 'node:fs/promises';
import { batchRows } from './arrow-values.js';
import type { RawRow } from './raw-row.js';

/**
 * Stream an Arrow IPC file (file or stream format) one record batch at a time: the reader
 * pulls the next batch from disk only when the consumer asks for more rows.
 */
export async function* readArrowRows(file: string): AsyncGenerator<RawRow> {
  const arrow = await import('apache-arrow');
  const handle = await open(file);
  try {
    const reader = await arrow.RecordBatchReader.from(handle);
    await reader.open();
    let line = 0;
    for await (const batch of reader) {
      for (const value of batchRows(batch, arrow)) yield { line: ++line, value };
    }
  } finally {
    await handle.close();
  }
}
