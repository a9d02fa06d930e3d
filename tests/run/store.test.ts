import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { RunError } from '../../src/errors.js';
import { openCacheReader } from '../../src/run/cache-reader.js';
import { RunStore, type RecordColumns, type ResultRow } from '../../src/run/store.js';
import { openDatabase } from '../../src/util/sqlite.js';
import { temporaryDirectory } from '../helpers/cli.js';

function openStore(t: TestContext, name = 'run.sqlite'): RunStore {
  const store = RunStore.open(join(temporaryDirectory(t), name));
  t.after(() => store.close());
  return store;
}

function columns(overrides: Partial<RecordColumns> & { category?: string; group?: string } = {}): RecordColumns {
  const { category, group, ...rest } = overrides;
  return {
    completed: true,
    has_reasoning: false,
    reward_error: null,
    usage: { prompt_tokens: 10, completion_tokens: 5, reasoning_tokens: 0 },
    tool_stats: [],
    ...rest,
    // Fields the statistics and splits read from the record text itself.
    ...(category === undefined ? {} : { source: { fields: { category } } }),
    ...(group === undefined ? {} : { group }),
  } as RecordColumns;
}

function land(store: RunStore, row: Partial<ResultRow> & { key: string }, rowIndex = 0, toolsets: string[] = []): void {
  store.markDispatched(row.key, row.sample ?? 0, rowIndex, toolsets);
  store.saveResult({ sample: 0, status: 'done', record: columns(), ...row });
}

test('a result lands with its status, record columns, judge verdicts, web pages and counts in one flush', (t) => {
  const store = openStore(t);
  const segment = store.startSegment();
  land(
    store,
    {
      key: 'a',
      record: columns({ has_reasoning: true, tool_stats: [{ name: 'terminal', calls: 2, ok: 1, errors: 1 }] }),
      reward: 0.5,
      finishReason: 'stop',
      durationMs: 1200,
      judgeCache: [{ key: 'j1', verdict: { score: 1 } }],
      webCache: [{ key: 'https://a.test/', value: { text: 'page' } }],
      webCounts: { fetches: 3, hits: 1 },
    },
    0,
    ['terminal'],
  );
  assert.equal(store.lookup('a', 0), undefined, 'nothing is committed before the turn ends or a flush');
  store.flush();
  assert.deepEqual(store.lookup('a', 0), { status: 'done', attempts: 0, retryable: null });
  const item = store.getItem('a', 0)!;
  assert.equal(item.reward, 0.5);
  assert.equal(item.finish_reason, 'stop');
  assert.equal(item.toolsets, '["terminal"]');
  assert.equal(JSON.parse(item.record!).has_reasoning, true);
  assert.deepEqual(store.judgeCacheGet('j1'), { score: 1 });
  assert.equal(store.webCacheSize(), 1);
  assert.deepEqual(store.counters(), { 'web:fetches': 3, 'web:cache_hits': 1 });
  const totals = store.aggregates();
  assert.deepEqual(totals.byStatus, { done: 1 });
  assert.deepEqual(totals.tools, [{ name: 'terminal', calls: 2, ok: 1, errors: 1 }]);
  assert.equal(totals.withReasoning, 1);
  assert.equal(totals.tokens.prompt, 10);
  assert.equal(totals.segments, 1);
  assert.equal(totals.webCacheEntries, 1);
  store.endSegment(segment, 5000, 'finished');
  assert.equal(store.aggregates().wallMs, 5000);
});

test('a worker thread reads the judge and web caches through a read-only reader; no store is a miss', (t) => {
  const store = openStore(t);
  land(store, { key: 'a', judgeCache: [{ key: 'j', verdict: { score: 0 } }], webCache: [{ key: 'w', value: 'page' }] });
  store.flush();
  const judge = openCacheReader(store.path, 'judge')!;
  const web = openCacheReader(store.path, 'web')!;
  assert.equal(judge('j'), '{"score":0}');
  assert.equal(judge('w'), undefined, 'each reader reads its own table');
  assert.equal(web('w'), '"page"');
  assert.equal(openCacheReader(join(temporaryDirectory(t), 'absent.sqlite'), 'judge'), null);
});

test('resume: a reopened store keeps results, queued writes flushed by close, and its run meta', (t) => {
  const path = join(temporaryDirectory(t), 'resume.sqlite');
  const first = RunStore.open(path);
  first.initRun({ name: 'r', kind: 'batch', config: { a: 1 }, fingerprintParts: { model: 'm' } });
  land(first, { key: 'done' }, 0);
  first.markDispatched('cut', 0, 1, []);
  land(first, { key: 'dropped', status: 'discarded' }, 2);
  first.close();
  const store = RunStore.open(path);
  t.after(() => store.close());
  assert.equal(store.meta()?.name, 'r');
  assert.deepEqual(store.meta()?.config, { a: 1 });
  assert.equal(store.lookup('done', 0)?.status, 'done');
  assert.equal(store.lookup('cut', 0)?.status, 'pending', 'a rollout cut off by the close is pending, not lost');
  assert.equal(store.finishedCount(), 2, 'done and discarded are not run again');
  assert.deepEqual(
    [...store.items()].map((item) => item.key),
    ['done', 'cut', 'dropped'],
    'dataset order',
  );
  assert.deepEqual(
    [...store.items({ status: ['pending', 'discarded'] })].map((item) => item.key),
    ['cut', 'dropped'],
  );
  assert.deepEqual(store.unrecordedCounts(), { failedWithoutRecord: 0, pending: 1 });
});

test('counters: set replaces, add accumulates (deferred to the flush), both survive a reopen', (t) => {
  const path = join(temporaryDirectory(t), 'counters.sqlite');
  const store = RunStore.open(path);
  store.setCounter('dataset_rows', 10);
  store.setCounter('dataset_rows', 12);
  store.addCounter('dropped:web', 2);
  store.addCounter('dropped:web', 3);
  assert.deepEqual(store.counters(), { dataset_rows: 12, 'dropped:web': 5 });
  store.addCounter('dropped:web', 1);
  store.close();
  const again = RunStore.open(path);
  t.after(() => again.close());
  assert.deepEqual(again.counters(), { dataset_rows: 12, 'dropped:web': 6 });
});

test('the fingerprint: same settings resume silently, changed ones are refused naming each change, --force records them', (t) => {
  const store = openStore(t);
  const run = { name: 'fp', kind: 'batch', config: {} };
  assert.deepEqual(store.initRun({ ...run, fingerprintParts: { model: 'm', max_turns: 5 } }), { changes: [] });
  assert.deepEqual(
    store.initRun({ ...run, fingerprintParts: { max_turns: 5, model: 'm' } }),
    { changes: [] },
    'key order does not matter',
  );
  assert.throws(
    () => store.initRun({ ...run, fingerprintParts: { model: 'other', max_turns: 5, seed: 1 } }),
    (error: unknown) =>
      error instanceof RunError &&
      error.code === 'fingerprint_changed' &&
      error.message.includes('model: "m" → "other"') &&
      error.message.includes('seed: (unset) → 1') &&
      error.message.includes('--force'),
  );
  assert.equal(store.meta()?.fingerprint_parts.model, 'm', 'a refused change writes nothing');
  const forced = store.initRun({ ...run, fingerprintParts: { model: 'other', max_turns: 5 }, force: true });
  assert.deepEqual(forced.changes, ['model: "m" → "other"']);
  assert.equal(store.meta()?.fingerprint_parts.model, 'other');
  assert.deepEqual(
    store.initRun({ ...run, fingerprintParts: { model: 'other', max_turns: 5 } }),
    { changes: [] },
    'the forced settings are the new ones',
  );
});

test('attempts: a refund never goes below zero; release only touches a pending row', (t) => {
  const store = openStore(t);
  store.markDispatched('k', 0, 0, []);
  store.saveResult({ key: 'k', sample: 0, status: 'failed', record: null, errorCode: 'x', retryable: true });
  store.refund('k', 0);
  store.refund('k', 0);
  store.flush();
  assert.deepEqual(
    store.lookup('k', 0),
    { status: 'pending', attempts: 0, retryable: 1 },
    'a second refund of a pending row changes nothing',
  );
  land(store, { key: 'd' });
  store.release('d', 0);
  store.flush();
  assert.equal(store.lookup('d', 0)?.status, 'done', 'releasing a landed result does not undo it');
  assert.equal(store.aggregates(1).failedForGood, 0);
  store.markDispatched('k', 0, 0, []);
  store.saveResult({ key: 'k', sample: 0, status: 'failed', record: null, errorCode: 'x', retryable: true });
  assert.equal(store.aggregates(1).failedForGood, 1, 'attempts used up at --max-attempts 1');
  assert.equal(store.aggregates(2).failedForGood, 0);
});

test('the run lock: release frees only our own lock, and a closed store releases nothing', (t) => {
  const store = openStore(t, 'lock.sqlite');
  const other = openDatabase(store.path);
  t.after(() => other.close());
  store.acquireLock();
  assert.equal(store.lockHolder()?.host, hostname());
  other.prepare("UPDATE run_lock SET pid = 1, host = 'elsewhere'").run();
  store.releaseLock();
  assert.equal(store.lockHolder()?.host, 'elsewhere', "another process's lock is left alone");
  other.prepare('DELETE FROM run_lock').run();
  store.acquireLock();
  store.close();
  store.releaseLock();
  assert.equal(
    other.prepare('SELECT pid FROM run_lock').pluck().get(),
    process.pid,
    'close alone keeps the row: the caller releases first',
  );
});

test('record selections: counts, streams in dataset or group order, distinct values, and key lookups', (t) => {
  const store = openStore(t);
  land(store, { key: 'b2', sample: 1, record: columns({ category: 'math', group: 'g1' }) }, 3, ['web']);
  land(store, { key: 'a1', record: columns({ category: 'code', group: 'g1' }) }, 0, ['file']);
  land(store, { key: 'a2', record: columns({ group: 'g2' }) }, 1, ['file']);
  land(store, { key: 'a_%', status: 'failed', record: columns() }, 2);
  land(store, { key: 'gone', status: 'failed', record: null }, 4);
  assert.deepEqual(store.recordedValues('category').sort(), ['code', 'math', null].sort());
  assert.deepEqual(store.recordedValues('toolsets').sort(), ['["file"]', '["web"]']);
  const all = { status: 'done' } as const;
  assert.equal(store.countRecords(all), 3);
  assert.equal(store.countRecords({ status: 'failed' }), 1, 'a failure without a record is not exported');
  assert.deepEqual(
    [...store.records(all)].map((row) => row.key),
    ['a1', 'a2', 'b2'],
  );
  assert.deepEqual(
    [...store.records(all, 'group')].map((row) => row.key),
    ['a1', 'b2', 'a2'],
    "a group's rollouts together, groups in dataset order",
  );
  assert.deepEqual(
    [...store.records({ status: 'done', field: { name: 'category', values: ['math', null] } })].map((row) => row.key),
    ['a2', 'b2'],
  );
  assert.equal(
    [...store.records(all)][0]!.text,
    JSON.stringify(columns({ category: 'code', group: 'g1' })),
    'the record exactly as stored',
  );
  assert.deepEqual(store.unrecordedCounts(), { failedWithoutRecord: 1, pending: 0 });
  assert.equal(store.hasKey('a1'), true);
  assert.equal(store.hasKey('a'), false);
  assert.deepEqual(store.keysWithPrefix('a', 6), ['a1', 'a2', 'a_%']);
  assert.deepEqual(store.keysWithPrefix('a_', 6), ['a_%'], 'LIKE wildcards in the prefix match themselves');
  assert.equal(store.itemCount(), 5);
  assert.deepEqual(store.firstKeys(2), ['a1', 'a2']);
  assert.equal(store.getItem('b2', 1)?.row_index, 3);
});

test('statistics read summary columns; a store from before them gets them filled from its records on open', (t) => {
  const directory = temporaryDirectory(t);
  const path = join(directory, 'run.sqlite');
  const compression = { replaced_start: 2, replaced_end: 5, summary: 'earlier turns' };
  const store = RunStore.open(path);
  land(store, {
    key: 'priced',
    record: columns({
      usage: {
        prompt_tokens: 10,
        completion_tokens: 5,
        reasoning_tokens: 0,
        cached_tokens: 4,
        cost: 0.25,
        cost_source: 'pricing',
      },
      compressions: [compression, compression],
    }),
  });
  land(store, {
    key: 'unpriced',
    record: columns({
      usage: {
        prompt_tokens: 1,
        completion_tokens: 1,
        reasoning_tokens: 0,
        cached_tokens: 1,
        cost: null,
        cost_source: 'unknown',
        unpriced_models: ['m-b', 'm-a'],
      },
    }),
  });
  store.flush();
  const fresh = store.aggregates();
  assert.deepEqual(fresh.tokens, { prompt: 11, completion: 6, reasoning: 0, cached: 5, cost: 0.25 });
  assert.deepEqual(fresh.cost, {
    sources: { provider: 0, pricing: 1, mixed: 0, unknown: 1 },
    missingPrice: 1,
    unpricedModels: ['m-a', 'm-b'],
  });
  assert.deepEqual(fresh.compressions, { rollouts: 1, total: 2 });
  store.close();

  // The same store as an older traj wrote it: no summary columns, only the records.
  const db = openDatabase(path);
  for (const column of ['cached_tokens', 'cost', 'cost_source', 'unpriced_models', 'compressions'])
    db.exec(`ALTER TABLE items DROP COLUMN ${column}`);
  db.close();
  const reopened = RunStore.open(path);
  t.after(() => reopened.close());
  assert.deepEqual(reopened.aggregates(), fresh);
  assert.equal(reopened.spentUsd(), 0.25);
});

test('record bytes: one status in dataset order, exactly as stored, by an index an older store gets on open', (t) => {
  const directory = temporaryDirectory(t);
  const path = join(directory, 'run.sqlite');
  const store = RunStore.open(path);
  land(store, { key: 'late', record: columns({ category: 'ünïcode' }) }, 2);
  land(store, { key: 'early', record: columns({ category: 'first' }) }, 0);
  land(store, { key: 'failed', status: 'failed', record: columns() }, 1);
  const bytes = () => [...store.recordBytes('done')].map((record) => record.toString('utf8'));
  assert.deepEqual(bytes(), [
    JSON.stringify(columns({ category: 'first' })),
    JSON.stringify(columns({ category: 'ünïcode' })),
  ]);
  store.close();

  // The store as an older traj left it: only the status index, so every read out sorted the records.
  const db = openDatabase(path);
  db.exec('DROP INDEX items_order; CREATE INDEX items_status ON items(status)');
  db.close();
  const reopened = RunStore.open(path);
  t.after(() => reopened.close());
  const schema = openDatabase(path);
  const indexes = schema
    .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'items' AND sql IS NOT NULL")
    .pluck()
    .all();
  schema.close();
  assert.deepEqual(indexes, ['items_order']);
  assert.equal([...reopened.recordBytes('done')].length, 2);
});

test('the totals count each figure over its own rows: landed ones, or any with a record (a failed attempt keeps its tokens and cost)', (t) => {
  const store = openStore(t);
  const usage = (cost: number, source: string, extra: Partial<RecordColumns['usage']> = {}) => ({
    prompt_tokens: 100,
    completion_tokens: 10,
    reasoning_tokens: 1,
    cached_tokens: 4,
    cost,
    cost_source: source,
    ...extra,
  });
  land(store, {
    key: 'a',
    reward: 1,
    record: columns({ has_reasoning: true, usage: usage(0.5, 'provider'), compressions: [{}, {}] }),
  });
  land(store, {
    key: 'b',
    reward: 0,
    record: columns({ reward_error: 'boom', usage: usage(0.25, 'pricing', { unpriced_models: ['m2', 'm1'] }) }),
  });
  land(store, { key: 'c', status: 'discarded', record: columns({ usage: usage(0.125, 'mixed') }) });
  land(store, {
    key: 'd',
    status: 'failed',
    errorClass: 'infra',
    errorCode: 'api_error',
    errorMessage: 'upstream 500',
    record: columns({
      has_reasoning: true,
      usage: usage(1, 'unknown', { unpriced_models: ['m3'] }),
      compressions: [{}],
    }),
  });
  land(store, { key: 'e', status: 'failed', errorCode: 'sandbox_start', errorMessage: 'no image', record: null });
  store.markDispatched('f', 0, 5, []);
  store.flush();
  const totals = store.aggregates(3);
  assert.equal(totals.itemCount, 6);
  assert.deepEqual(totals.byStatus, { done: 2, discarded: 1, failed: 2, pending: 1 });
  // Tokens and cost: every stored record, the failed attempt's included.
  assert.deepEqual(totals.tokens, { prompt: 400, completion: 40, reasoning: 4, cached: 16, cost: 1.875 });
  assert.deepEqual(totals.cost, {
    sources: { provider: 1, pricing: 1, mixed: 1, unknown: 1 },
    missingPrice: 2,
    unpricedModels: ['m1', 'm2', 'm3'],
  });
  // The rest: rollouts that landed (done or discarded).
  assert.equal(totals.withReasoning, 1);
  assert.deepEqual(totals.compressions, { rollouts: 1, total: 2 });
  assert.equal(totals.scored, 2);
  assert.equal(totals.rewardMean, 0.5);
  assert.equal(totals.rewardErrors, 1);
  assert.deepEqual(
    totals.failures.map((failure) => [failure.code, failure.count, failure.message]),
    [
      ['api_error', 1, 'upstream 500'],
      ['sandbox_start', 1, 'no image'],
    ],
  );
});

test('an empty store totals to zeros, with no cost and a mean reward of 0', (t) => {
  const totals = openStore(t).aggregates();
  assert.equal(totals.itemCount, 0);
  assert.deepEqual(totals.tokens, { prompt: 0, completion: 0, reasoning: 0, cached: 0, cost: null });
  assert.deepEqual(totals.cost.sources, { provider: 0, pricing: 0, mixed: 0, unknown: 0 });
  assert.deepEqual([totals.scored, totals.rewardMean, totals.rewardErrors, totals.withReasoning], [0, 0, 0, 0]);
  assert.deepEqual(totals.compressions, { rollouts: 0, total: 0 });
});
