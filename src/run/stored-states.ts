import type { PipelineEntry, WorkItem } from './work-item.js';
import { isFinished, stateKey, type ItemState, type RunStore } from './store.js';

export interface EntryWithState {
  entry: PipelineEntry;
  /** What the store holds for the entry's (key, sample); undefined for a new one or a bad row. */
  state?: ItemState;
}

const MAX_BATCH = 256;

type StateSource = Pick<RunStore, 'hasItems' | 'lookup' | 'lookupMany'>;

const NO_STATES: Pick<RunStore, 'lookup' | 'lookupMany'> = {
  lookup: () => undefined,
  lookupMany: () => new Map(),
};

/**
 * The pipeline's entries, in order, each with its stored state. A resume looks up every row, and
 * one statement per row was a fifth of a 100,000-row resume; so while rows keep coming back
 * finished (done or discarded: skipped without a slot), they are read and looked up in batches
 * that double up to 256. The first row that will be dispatched drops the batch back to one row,
 * so a fresh run still reads one row per free slot, as the pipeline pulls. Reading ahead is safe
 * because keys are unique in a stream: a key's state changes only once it is dispatched, after it
 * was yielded. For the same reason a store with no items when the stream starts (a fresh run)
 * holds no state for any of its entries, and none is looked up. A read error comes after the
 * entries read before it.
 */
export async function* withStoredStates(
  entries: AsyncIterable<PipelineEntry>,
  store: StateSource,
): AsyncGenerator<EntryWithState> {
  const iterator = entries[Symbol.asyncIterator]();
  const states = store.hasItems() ? store : NO_STATES;
  let size = 1;
  let ended = false;
  try {
    for (;;) {
      const { batch, failure } = await readBatch(iterator, size);
      ended = failure !== undefined || batch.length < size;
      const stated = withStates(batch, states);
      yield* stated;
      if (failure) throw failure.error;
      if (ended) return;
      size = stated.every(isSkipped) ? Math.min(size * 2, MAX_BATCH) : 1;
    }
  } finally {
    // A consumer that stops early closes the reader, as a plain for-await over it would.
    if (!ended) await iterator.return?.();
  }
}

/** Skipped without taking a slot: a bad row, or a row that finished in an earlier invocation. */
function isSkipped({ entry, state }: EntryWithState): boolean {
  return 'bad' in entry || isFinished(state);
}

async function readBatch(
  iterator: AsyncIterator<PipelineEntry>,
  size: number,
): Promise<{ batch: PipelineEntry[]; failure?: { error: unknown } }> {
  const batch: PipelineEntry[] = [];
  try {
    while (batch.length < size) {
      const next = await iterator.next();
      if (next.done) break;
      batch.push(next.value);
    }
  } catch (error) {
    return { batch, failure: { error } };
  }
  return { batch };
}

function withStates(batch: PipelineEntry[], store: Pick<RunStore, 'lookup' | 'lookupMany'>): EntryWithState[] {
  const items = batch.filter((entry): entry is WorkItem => !('bad' in entry));
  const [only] = items;
  if (batch.length === 1 && only) return [{ entry: only, state: store.lookup(only.key, only.sample) }];
  const states = items.length > 0 ? store.lookupMany(items) : new Map<string, ItemState>();
  return batch.map((entry) =>
    'bad' in entry ? { entry } : { entry, state: states.get(stateKey(entry.key, entry.sample)) },
  );
}
