import { closeSync, openSync, writeSync } from 'node:fs';
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
