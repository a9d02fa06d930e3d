import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { PipelineEntry, WorkItem } from '../../src/run/work-item.js';
import { RunStore } from '../../src/run/store.js';
import { withStoredStates } from '../../src/run/stored-states.js';
import { temporaryDirectory } from '../helpers/cli.js';

function openStore(t: TestContext): RunStore {
  const store = RunStore.open(join(temporaryDirectory(t), 'run.sqlite'));
  t.after(() => store.close());
  return store;
}

function item(key: string, sample = 0): WorkItem {
  return {
    key,
    sample,
    rowIndex: 0,
    group: null,
    task: { toolsets: [], messages: [] },
    source: { dataset: 'd', row: 1, fields: {} },
  };
}

async function* source(entries: PipelineEntry[], failAfter?: Error): AsyncGenerator<PipelineEntry> {
  yield* entries;
  if (failAfter) throw failAfter;
}

function land(store: RunStore, key: string, sample: number, status: 'done' | 'failed'): void {
  store.markDispatched(key, sample, 0, []);
  store.saveResult({ key, sample, status, record: null, retryable: false });
}

test('every entry comes out in order with its own (key, sample) state, across batches of every size', async (t) => {
  const store = openStore(t);
  const entries: PipelineEntry[] = [];
  for (let index = 0; index < 1000; index++) {
    entries.push(item(`k${index}`, 0), item(`k${index}`, 1));
    if (index % 97 === 0) entries.push({ bad: true, line: index, reason: 'not JSON' });
    // Sample 0 of every third key is done; sample 1 of every fifth failed for good.
    if (index % 3 === 0) land(store, `k${index}`, 0, 'done');
    if (index % 5 === 0) land(store, `k${index}`, 1, 'failed');
  }
  store.flush();

  const seen: string[] = [];
  for await (const { entry, state } of withStoredStates(source(entries), store)) {
    if ('bad' in entry) {
      assert.equal(state, undefined);
      seen.push(`bad:${entry.line}`);
      continue;
    }
    const index = Number(entry.key.slice(1));
    const expected =
      entry.sample === 0 ? (index % 3 === 0 ? 'done' : undefined) : index % 5 === 0 ? 'failed' : undefined;
    assert.equal(state?.status, expected, `${entry.key} sample ${entry.sample}`);
    if (expected === 'failed') assert.deepEqual(state, { status: 'failed', attempts: 1, retryable: 0 });
    seen.push(`${entry.key}/${entry.sample}`);
  }
  assert.deepEqual(
    seen,
    entries.map((entry) => ('bad' in entry ? `bad:${entry.line}` : `${entry.key}/${entry.sample}`)),
  );
});

test('a read error comes after every entry read before it', async (t) => {
  const store = openStore(t);
  const failure = new Error('row 21: not JSON');
  const entries = Array.from({ length: 20 }, (_, index) => item(`k${index}`));
  const seen: string[] = [];
  await assert.rejects(async () => {
    for await (const { entry } of withStoredStates(source(entries, failure), store)) {
      if (!('bad' in entry)) seen.push(entry.key);
    }
  }, failure);
  assert.equal(seen.length, 20, 'the 20 rows before the error were yielded');
});

test('a consumer that stops early closes the reader', async (t) => {
  const store = openStore(t);
  let closed = false;
  async function* reader(): AsyncGenerator<PipelineEntry> {
    try {
      for (let index = 0; ; index++) yield item(`k${index}`);
    } finally {
      closed = true;
    }
  }
  let taken = 0;
  for await (const _ of withStoredStates(reader(), store)) {
    if (++taken === 3) break;
  }
  assert.equal(closed, true);
});

/** A source that counts the entries read from it. */
function counted(entries: PipelineEntry[]): { source: AsyncGenerator<PipelineEntry>; read: () => number } {
  let read = 0;
  async function* source(): AsyncGenerator<PipelineEntry> {
    for (const entry of entries) {
      read++;
      yield entry;
    }
  }
  return { source: source(), read: () => read };
}

test('a fresh run reads one row per row taken: nothing is read ahead of the pipeline', async (t) => {
  const store = openStore(t);
  const { source, read } = counted(Array.from({ length: 50 }, (_, index) => item(`k${index}`)));
  let taken = 0;
  for await (const _ of withStoredStates(source, store)) {
    taken++;
    assert.equal(read(), taken, `row ${taken}: ${read()} rows read`);
  }
  assert.equal(taken, 50);
});

test('a resume reads finished rows in growing batches, and drops back to one row at the first to dispatch', async (t) => {
  const store = openStore(t);
  const entries = Array.from({ length: 1200 }, (_, index) => item(`k${index}`));
  for (let index = 0; index < 1000; index++) land(store, `k${index}`, 0, 'done');
  store.flush();
  const calls = { one: 0, many: 0 };
  const counting = {
    hasItems: () => store.hasItems(),
    lookup(key: string, sample: number) {
      calls.one++;
      return store.lookup(key, sample);
    },
    lookupMany(items: ReadonlyArray<{ key: string; sample: number }>) {
      calls.many++;
      return store.lookupMany(items);
    },
  };
  const { source, read } = counted(entries);
  let taken = 0;
  let readAtFirstNew = 0;
  for await (const { state } of withStoredStates(source, counting)) {
    taken++;
    if (taken === 1001) readAtFirstNew = read();
    // Once the batch holding the first new row is used up, rows are read one per row taken again.
    if (readAtFirstNew > 0 && taken > readAtFirstNew) assert.equal(read(), taken, `row ${taken}: read ahead`);
    assert.equal(state?.status, taken <= 1000 ? 'done' : undefined);
  }
  assert.ok(calls.many <= 12, `1,000 finished rows took ${calls.many} batched lookups`);
  assert.ok(readAtFirstNew - 1001 < 256, 'read-ahead is bounded by the largest batch');
  // One single lookup opens the run; every row after that batch is looked up on its own.
  assert.equal(
    calls.one,
    1 + 1200 - readAtFirstNew,
    'the rows before it were looked up in batches, the rows after it one at a time',
  );
});

/** The store behind `withStoredStates`, counting the lookups made through it. */
function countingLookups(store: RunStore): { source: Parameters<typeof withStoredStates>[1]; lookups: () => number } {
  let lookups = 0;
  return {
    source: {
      hasItems: () => store.hasItems(),
      lookup: (key, sample) => {
        lookups++;
        return store.lookup(key, sample);
      },
      lookupMany: (items) => {
        lookups += items.length;
        return store.lookupMany(items);
      },
    },
    lookups: () => lookups,
  };
}

test('a fresh run looks nothing up; one stored item anywhere and every entry is looked up', async (t) => {
  const entries = Array.from({ length: 40 }, (_, index) => item(`k${index}`));
  const fresh = countingLookups(openStore(t));
  for await (const { state } of withStoredStates(source(entries), fresh.source)) assert.equal(state, undefined);
  assert.equal(fresh.lookups(), 0);

  // A write still queued when the stream starts counts: the store commits it before answering.
  const store = openStore(t);
  land(store, 'k39', 0, 'done');
  const resumed = countingLookups(store);
  const states: Array<string | undefined> = [];
  for await (const { state } of withStoredStates(source(entries), resumed.source)) states.push(state?.status);
  assert.equal(resumed.lookups(), 40);
  assert.deepEqual(states, [...Array.from({ length: 39 }, () => undefined), 'done']);
});
