import { mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** One row on its way into a shard, with its size (characters of its JSON, a bytes estimate). */
export interface ShardUnit<T> {
  value: T;
  bytes: number;
}

/** Writes one shard file from its batches; each batch becomes one row group / record batch. */
export interface ShardFormat<T> {
  extension: 'parquet' | 'arrow' | 'jsonl';
  write(path: string, batches: AsyncIterable<T[]>): Promise<void>;
}

export interface ShardLimits {
  /** A shard closes once its rows reach this many bytes of JSON. */
  shardBytes: number;
  /** A batch (row group) closes at this many rows… */
  batchRows: number;
  /** …or at this many bytes of JSON, whichever comes first. */
  batchBytes: number;
}

export const DEFAULT_BATCH_ROWS = 1000;
export const DEFAULT_BATCH_BYTES = 64 * 1024 * 1024;

/** A split written to temporary shard files, renamed into place by `publishShards`. */
export interface WrittenSplit {
  split: string;
  rows: number;
  temporaryFiles: string[];
}

const SHARD_FILE = /^\w+-\d{5}-of-\d{5}\.(parquet|arrow|jsonl)$/;
const TEMPORARY_FILE = /^\.\w+-\d+\.tmp-\d+\.(parquet|arrow|jsonl)$/;

/**
 * Write one split's rows into shards under `dataDirectory`. Shards are cut by the JSON size of
 * their rows (as `datasets` cuts by in-memory size), so the same rows and limits always give the
 * same shards: an unchanged export is byte-identical, which makes a repeated push a no-op.
 */
export async function writeSplitShards<T>(
  rows: Iterator<ShardUnit<T>>,
  format: ShardFormat<T>,
  dataDirectory: string,
  split: string,
  limits: ShardLimits,
): Promise<WrittenSplit> {
  mkdirSync(dataDirectory, { recursive: true });
  const source = new Peekable(rows);
  const written: WrittenSplit = { split, rows: 0, temporaryFiles: [] };
  try {
    while (!source.done()) {
      const path = join(
        dataDirectory,
        `.${split}-${written.temporaryFiles.length}.tmp-${process.pid}.${format.extension}`,
      );
      written.temporaryFiles.push(path);
      await format.write(
        path,
        shardBatches(source, limits, () => written.rows++),
      );
    }
  } catch (error) {
    discardShards([written]);
    throw error;
  }
  return written;
}

async function* shardBatches<T>(
  source: Peekable<ShardUnit<T>>,
  limits: ShardLimits,
  counted: () => void,
): AsyncGenerator<T[]> {
  let shardBytes = 0;
  while (shardBytes < limits.shardBytes && !source.done()) {
    const batch: T[] = [];
    let batchBytes = 0;
    while (
      batch.length < limits.batchRows &&
      batchBytes < limits.batchBytes &&
      shardBytes < limits.shardBytes &&
      !source.done()
    ) {
      const unit = source.next();
      batch.push(unit.value);
      batchBytes += unit.bytes;
      shardBytes += unit.bytes;
      counted();
    }
    yield batch;
  }
}

/**
 * Give the shards their final names (`data/<split>-00000-of-00003.parquet`, as the Hub expects)
 * after removing the shards of an earlier export, so a folder never mixes two exports.
 * Returns the final paths relative to the dataset folder's `data/`.
 */
export function publishShards(dataDirectory: string, splits: WrittenSplit[], extension: string): Map<string, string[]> {
  for (const name of readdirSync(dataDirectory)) {
    if (SHARD_FILE.test(name) || (TEMPORARY_FILE.test(name) && !isOurs(name)))
      rmSync(join(dataDirectory, name), { force: true });
  }
  const published = new Map<string, string[]>();
  for (const split of splits) {
    const total = split.temporaryFiles.length;
    const names = split.temporaryFiles.map((temporary, index) => {
      const name = `${split.split}-${pad(index)}-of-${pad(total)}.${extension}`;
      renameSync(temporary, join(dataDirectory, name));
      return name;
    });
    published.set(split.split, names);
  }
  return published;
}

export function discardShards(splits: WrittenSplit[]): void {
  for (const split of splits) for (const file of split.temporaryFiles) rmSync(file, { force: true });
}

export function fileSize(path: string): number {
  return statSync(path).size;
}

function isOurs(name: string): boolean {
  return name.includes(`.tmp-${process.pid}.`);
}

function pad(value: number): string {
  return String(value).padStart(5, '0');
}

/** An iterator that can tell whether another item comes without consuming it. */
class Peekable<T> {
  private head: IteratorResult<T> | undefined;

  constructor(private readonly iterator: Iterator<T>) {}

  done(): boolean {
    this.head ??= this.iterator.next();
    return this.head.done === true;
  }

  next(): T {
    if (this.done()) throw new Error('Peekable.next() past the end');
    const value = (this.head as IteratorYieldResult<T>).value;
    this.head = undefined;
    return value;
  }
}
