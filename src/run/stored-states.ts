import type { PipelineEntry, WorkItem } from './pipeline.js';
import { stateKey, type ItemState, type RunStore } from './store.js';

export interface EntryWithState {
  entry: PipelineEntry;
  /** What the store holds for the entry's (key, sample); undefined for a new one or a bad row. */
  state?: ItemState;
}

const FIRST_BATCH = 8;
const MAX_BATCH = 256;

/**
 * The pipeline's entries, in order, each with its stored state, read from the store a batch at a
 * time: a resume looks up every row, and one lookup per row was a fifth of a 100,000-row resume.
 * Batches start small and double, so the first rollout is not held behind a long read. Reading
 * ahead is safe because keys are unique in a stream: a key's state changes only once it is
 * dispatched, after it was yielded. A read error comes after the entries read before it.
 */
export async function* withStoredStates(
  entries: AsyncIterable<PipelineEntry>,
  store: Pick<RunStore, 'lookupMany'>,
): AsyncGenerator<EntryWithState> {
  const iterator = entries[Symbol.asyncIterator]();
  let size = FIRST_BATCH;
  let ended = false;
  try {
    for (;;) {
      const { batch, failure } = await readBatch(iterator, size);
      ended = failure !== undefined || batch.length < size;
      yield* withStates(batch, store);
      if (failure) throw failure.error;
      if (ended) return;
      size = Math.min(size * 2, MAX_BATCH);
    }
  } finally {
    // A consumer that stops early closes the reader, as a plain for-await over it would.
    if (!ended) await iterator.return?.();
  }
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

function withStates(batch: PipelineEntry[], store: Pick<RunStore, 'lookupMany'>): EntryWithState[] {
  const items = batch.filter((entry): entry is WorkItem => !('bad' in entry));
  const states = items.length > 0 ? store.lookupMany(items) : new Map<string, ItemState>();
  return batch.map((entry) =>
    'bad' in entry ? { entry } : { entry, state: states.get(stateKey(entry.key, entry.sample)) },
  );
}
