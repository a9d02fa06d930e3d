import { hash } from 'node:crypto';
import { DatasetError } from '../errors.js';
import { canonicalJson } from '../util/hash.js';
import { positionUnit } from '../dataset/location.js';
import type { DatasetItem } from '../dataset/row.js';

export type KeyedContent = Pick<DatasetItem, 'messages' | 'system' | 'image' | 'cwd'>;
export type KeyedItem = KeyedContent & Pick<DatasetItem, 'id' | 'line'>;

/**
 * sha256 of what the model is given for a row: the normalised messages, the system prompt, the
 * sandbox image and working directory. Pass-through fields are not part of it, so re-tagging
 * rows never changes their keys.
 */
export function promptDigest(item: KeyedContent): Buffer {
  return hash(
    'sha256',
    canonicalJson({ messages: item.messages, system: item.system, image: item.image, cwd: item.cwd }),
    'buffer',
  );
}

/** Maps hold at most 2^24 entries; 256 shards keyed by the first digest byte lift that limit. */
class CompactDigestMap {
  private readonly shards: Array<Map<string, number> | undefined> = new Array(256);

  /** Store `update(previous)` for `digest`; return the previous value (undefined when new). */
  update(digest: Buffer, update: (previous: number | undefined) => number): number | undefined {
    const shard = (this.shards[digest[0]!] ??= new Map());
    const key = shortKey(digest);
    const previous = shard.get(key);
    shard.set(key, update(previous));
    return previous;
  }
}

/** 16 bytes as a one-byte-per-char string: about 60 bytes per entry, 60 MB for a million rows. */
function shortKey(digest: Buffer): string {
  return digest.toString('latin1', 0, 16);
}

/**
 * Keys rows the way the run store does: the row's explicit `id`, else
 * `sha256(canonical prompt)#n` where n counts identical prompts seen so far in file order.
 * Inserting, deleting or reordering other rows never changes a prompt's key; duplicates get
 * #0, #1… in order of appearance. Feed it every row of the dataset, in order, once.
 */
export class PromptKeyer {
  private readonly occurrences = new CompactDigestMap();
  private readonly idLines = new CompactDigestMap();
  private readonly source: string;

  /** `source` names the dataset in errors (and tells lines from rows). */
  constructor(options: { source?: string } = {}) {
    this.source = options.source ?? 'dataset';
  }

  key(item: KeyedItem): string {
    return item.id !== undefined ? this.explicit(item.id, item.line) : this.derived(item);
  }

  private explicit(id: string, line: number): string {
    const first = this.idLines.update(hash('sha256', id, 'buffer'), (previous) => previous ?? line);
    if (first !== undefined) {
      const unit = positionUnit(this.source);
      throw new DatasetError(
        `${this.source}: duplicate id ${JSON.stringify(id)} at ${unit}s ${first} and ${line}; ids must be unique (or drop the id field to key rows by their content)`,
        {
          code: 'dataset_duplicate_id',
          details: { id, lines: [first, line] },
        },
      );
    }
    return id;
  }

  private derived(item: KeyedContent): string {
    const digest = promptDigest(item);
    const seen = this.occurrences.update(digest, (previous) => (previous ?? 0) + 1) ?? 0;
    return `${digest.toString('hex')}#${seen}`;
  }
}
