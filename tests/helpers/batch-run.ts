import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';

/** `count` distinct one-line prompts. */
export const prompts = (count: number, prefix = 'task') =>
  Array.from({ length: count }, (_, index) => ({ prompt: `${prefix} number ${index}: say hello` }));

export function writeJsonl(path: string, rows: unknown[]): void {
  writeFileSync(path, `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`);
}

/** The records a run wrote to its default output folder under `directory`. */
export function readRecords(directory: string, run: string): TrajectoryRecord[] {
  return readFileSync(join(directory, 'datasets', run, 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TrajectoryRecord);
}

export { scriptedBatchArgs } from '../../src/testing/index.js';
