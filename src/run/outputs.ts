import { writeSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomically } from '../util/atomic-write.js';
import { computeStatistics, type RunStatistics } from './run-statistics.js';
import type { ItemStatus, RunStore } from './store.js';


/** Stream stored records to JSONL without parsing them (the store keeps them as JSON text). */
export function writeRecordsJsonl(store: RunStore, path: string, statuses: ItemStatus[] = ['done']): number {
  let rows = 0;
  writeFileAtomically(path, (fd) => {
    let buffer = '';
    for (const item of store.items({ status: statuses })) {
      if (item.record === null) continue;
      buffer += `${item.record}\n`;
      rows++;
      if (buffer.length > 1 << 20) {
        writeSync(fd, buffer);
        buffer = '';
      }
    }
    if (buffer) writeSync(fd, buffer);
  });
  return rows;
}

export interface RunOutputs {
  directory: string;
  trajectories: string;
  statistics: string;
  rows: number;
  stats: RunStatistics;
}

/** `datasets/<run>/trajectories.jsonl` and `statistics.json`, both generated from the store. */
export function writeRunOutputs(store: RunStore, directory: string, maxAttempts?: number): RunOutputs {
  const trajectories = join(directory, 'trajectories.jsonl');
  const statistics = join(directory, 'statistics.json');
  const rows = writeRecordsJsonl(store, trajectories);
  const stats = computeStatistics(store, 0, maxAttempts);
  writeFileAtomically(statistics, `${JSON.stringify(stats, null, 2)}\n`);
  return { directory, trajectories, statistics, rows, stats };
}
