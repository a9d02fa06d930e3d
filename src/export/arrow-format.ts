import { closeSync, openSync, writeSync } from 'node:fs';
import type { TrajectoryRecord } from '../trajectory/record.js';
import { recordBatchOf, toArrowRow } from './arrow-rows.js';
import { trajectorySchema } from './arrow-schema.js';
import type { ExportView } from './export-options.js';
import type { ShardFormat } from './shards.js';

/**
 * Arrow IPC shards in the streaming format (what `datasets` reads for `.arrow` data files), with
 * the same schema as the Parquet export. The bytes of each batch are drained to disk before the
 * next batch is built (the drain runs on microtasks; the macrotask turn after each batch lets it
 * finish), so memory stays about one batch.
 */
export async function arrowFormat(view: ExportView): Promise<ShardFormat<TrajectoryRecord>> {
  const arrow = await import('apache-arrow');
  const schema = trajectorySchema(arrow, view);
  return {
    extension: 'arrow',
    async write(path, batches) {
      const writer = new arrow.RecordBatchStreamWriter();
      const fd = openSync(path, 'w');
      const drained = (async () => {
        for await (const chunk of writer) writeSync(fd, chunk);
      })();
      try {
        for await (const records of batches) {
          for (const batch of recordBatchOf(
            arrow,
            schema,
            records.map((record) => toArrowRow(record, view)),
          ))
            writer.write(batch);
          await new Promise((resolve) => setImmediate(resolve));
        }
      } finally {
        writer.close();
        await drained;
        closeSync(fd);
      }
    },
  };
}
