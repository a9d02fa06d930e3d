import { closeSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { computeStatistics, type RunStatistics } from './run-statistics.js';
import type { ItemStatus, RunStore } from './store.js';

/** Write a file atomically (temp + rename) so a crash never leaves half an output behind. */
function writeAtomically(path: string, write: (fd: number) => void): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.tmp-${process.pid}`;
  const fd = openSync(temporary, 'w');
  try {
    write(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

/** Stream stored records to JSONL without parsing them (the store keeps them as JSON text). */
export function writeRecordsJsonl(store: RunStore, path: string, statuses: ItemStatus[] = ['done']): number {
  let rows = 0;
  writeAtomically(path, (fd) => {
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
  writeAtomically(statistics, (fd) => writeSync(fd, `${JSON.stringify(stats, null, 2)}\n`));
  return { directory, trajectories, statistics, rows, stats };
}
