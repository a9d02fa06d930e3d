import { closeSync, openSync, writeSync } from 'node:fs';
import type * as Arrow from 'apache-arrow';
import type { TrajectoryRecord } from '../trajectory/record.js';
import { recordBatchOf, toArrowRow } from './arrow-rows.js';
import { trajectorySchema } from './arrow-schema.js';
import type { ExportView } from './export-options.js';
import { DEFAULT_BATCH_BYTES, DEFAULT_BATCH_ROWS, type ShardFormat } from './shards.js';

/**
 * Parquet shards through apache-arrow and parquet-wasm, streamed: each batch of records becomes an
 * Arrow record batch, crosses into WebAssembly as IPC bytes, and the writer emits a row group per
 * batch (at most 1,000 rows, cut earlier near 64 MB), zstd-compressed. The input stream is pulled
 * only when the writer wants the next batch, and the output is written to disk as it appears,
 * so memory stays about one row group.
 */
export async function parquetFormat(view: ExportView): Promise<ShardFormat<TrajectoryRecord>> {
  const arrow = await import('apache-arrow');
  const schema = trajectorySchema(arrow, view);
  return parquetShards(schema, (record: TrajectoryRecord) => toArrowRow(record, view));
}

/** Parquet shards of any schema: each value becomes one row through `toRow` (the tokens export uses it too). */
export async function parquetShards<T>(
  schema: Arrow.Schema,
  toRow: (value: T) => Record<string, unknown>,
): Promise<ShardFormat<T>> {
  const [arrow, parquet] = await Promise.all([import('apache-arrow'), import('parquet-wasm')]);
  return {
    extension: 'parquet',
    async write(path, batches) {
      const iterator = batches[Symbol.asyncIterator]();
      // The WebAssembly writer replaces an error of the input stream with its own opaque one:
      // keep the original (e.g. a record that does not fit the schema) to report it.
      let inputFailure: unknown;
      const input = new ReadableStream({
        async pull(controller) {
          const next = await iterator.next().catch((error: unknown) => {
            inputFailure = error;
            throw error;
          });
          if (next.done) {
            controller.close();
            return;
          }
          const ipc = arrow.tableToIPC(new arrow.Table(recordBatchOf(arrow, schema, next.value.map(toRow))), 'stream');
          const table = parquet.Table.fromIPCStream(ipc);
          try {
            for (const batch of table.recordBatches()) controller.enqueue(batch);
          } finally {
            table.free();
          }
        },
      });
      const properties = new parquet.WriterPropertiesBuilder()
        .setCompression(parquet.Compression.ZSTD)
        .setMaxRowGroupSize(DEFAULT_BATCH_ROWS)
        .setMaxRowGroupBytes(DEFAULT_BATCH_BYTES)
        .setCreatedBy('traj export')
        .build();
      const fd = openSync(path, 'w');
      try {
        const output = (await parquet.transformParquetStream(input, properties)) as ReadableStream<Uint8Array>;
        for await (const chunk of output) writeSync(fd, chunk);
      } catch (error) {
        throw inputFailure ?? error;
      } finally {
        closeSync(fd);
      }
    },
  };
}
