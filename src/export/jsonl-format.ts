import { closeSync, openSync, writeSync } from 'node:fs';
import type { TrajectoryRecord } from '../trajectory/record.js';
import { toArrowRow } from './arrow-rows.js';
import { trajectorySchema } from './arrow-schema.js';
import type { ExportView } from './export-options.js';
import { jsonRow } from './json-row.js';
import type { ShardFormat } from './shards.js';

/** JSON Lines shards: one JSON text per row, written as it comes. */
export const jsonlFormat: ShardFormat<string> = {
  extension: 'jsonl',
  async write(path, batches) {
    const fd = openSync(path, 'w');
    try {
      for await (const lines of batches) writeSync(fd, `${lines.join('\n')}\n`);
    } finally {
      closeSync(fd);
    }
  },
};

/**
 * The JSON line of a record in `--format jsonl`: the row the Parquet and Arrow exports write (the
 * same columns, nesting and value types, free-form objects as JSON strings), so JSON lines and
 * Parquet files of any traj runs load with one set of features and concatenate.
 */
export async function trajectoryLine(view: ExportView): Promise<(record: TrajectoryRecord) => string> {
  const arrow = await import('apache-arrow');
  const schema = trajectorySchema(arrow, view);
  return (record) => JSON.stringify(jsonRow(arrow, schema, toArrowRow(record, view)));
}
