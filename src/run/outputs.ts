import { existsSync, readdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { writeFileAtomically } from '../util/atomic-write.js';
import { computeStatistics, type RunStatistics } from './run-statistics.js';
import type { ItemStatus, RunStore } from './store.js';

/** Stream stored records to JSONL as the bytes the store holds: no parsing, no decoding. */
export function writeRecordsJsonl(store: RunStore, path: string, status: ItemStatus = 'done'): number {
  let rows = 0;
  writeFileAtomically(path, (fd) => {
    let pending: Buffer[] = [];
    let size = 0;
    for (const record of store.recordBytes(status)) {
      pending.push(record, NEWLINE);
      size += record.length + 1;
      rows++;
      if (size > 1 << 20) {
        writeWhole(fd, Buffer.concat(pending, size));
        pending = [];
        size = 0;
      }
    }
    writeWhole(fd, Buffer.concat(pending, size));
  });
  return rows;
}

const NEWLINE = Buffer.from('\n');

/** writeSync may write only part of a buffer (a signal, a full disk): the rest goes after it. */
function writeWhole(fd: number, bytes: Buffer): void {
  for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset);
}

export interface RunOutputs {
  directory: string;
  trajectories: string;
  statistics: string;
  rows: number;
  stats: RunStatistics;
}

/** Files every run writes into its output folder: their presence marks a folder as traj's own. */
const RUN_OUTPUT_FILES = ['trajectories.jsonl', 'statistics.json'];

/**
 * A run's output folder when no --out is given: `datasets/<run>/` (relative to the working
 * directory). Refused when that folder already holds files but no run outputs: it is someone
 * else's folder, e.g. the shipped input dataset `datasets/sample/` (git-tracked), and outputs
 * would land next to the inputs. Checked before any work starts.
 */
export function defaultOutputDirectory(run: string): string {
  const directory = join('datasets', run);
  if (!existsSync(directory)) return directory;
  const entries = readdirSync(directory).filter((entry) => !entry.startsWith('.'));
  if (entries.length === 0 || entries.some((entry) => RUN_OUTPUT_FILES.includes(entry))) return directory;
  const shown = entries.slice(0, 3).join(', ') + (entries.length > 3 ? ', …' : '');
  throw new ConfigError(
    `run '${run}': its default output folder ${directory}/ already holds files no run wrote (${shown}), such as an input dataset; ` +
      `outputs would be mixed into it. Choose another run name, or pass --out DIR`,
    { code: 'output_folder_foreign', details: { directory } },
  );
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
