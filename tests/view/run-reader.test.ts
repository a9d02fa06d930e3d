import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { writeSyntheticRun } from '../../benchmarks/harness/synthetic-run.js';
import { sha256 } from '../../src/util/hash.js';
import { messagesPattern, RunReader, type ItemQuery } from '../../src/view/index.js';
import { temporaryDirectory } from '../helpers/cli.js';

const ROWS = 2_000;
const base: ItemQuery = { sort: 'row', descending: false, page: 1, pageSize: 50 };

/** What the synthetic store holds, recomputed here straight from SQL: the reader must agree. */
function direct(path: string, sql: string, ...parameters: unknown[]): unknown[] {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare(sql)
      .pluck()
      .all(...parameters);
  } finally {
    db.close();
  }
}

describe('RunReader (read-only queries over a run store)', () => {
  it('filters, sorts, pages and counts like plain SQL over the store, and never writes the store', (t) => {
    const directory = temporaryDirectory(t);
    const path = join(directory, 'run.sqlite');
    writeSyntheticRun(path, ROWS, { name: 'synthetic' });
    const before = { hash: sha256(readFileSync(path)), size: statSync(path).size };
    const reader = new RunReader(path);
    t.after(() => reader.close());

    const summary = reader.summary('fallback');
    assert.equal(summary.name, 'synthetic');
    assert.equal(summary.model, 'synthetic-model');
    assert.equal(summary.total, ROWS);
    assert.deepEqual(summary.statuses, { done: 1_880, failed: 40, discarded: 40, pending: 40 });
    const rewards = direct(path, "SELECT reward FROM items WHERE status = 'done' AND reward IS NOT NULL") as number[];
    assert.equal(summary.scored, rewards.length);
    assert.ok(Math.abs(summary.mean_reward! - rewards.reduce((sum, value) => sum + value, 0) / rewards.length) < 1e-9);
    assert.equal(summary.pass_rate.value, rewards.filter((value) => value >= 1).length / rewards.length);
    assert.equal(summary.cost, null, 'no cost column: null, never a silent 0');
    assert.deepEqual(summary.toolsets, ['file', 'terminal', 'web']);

    const all = reader.page(base);
    assert.equal(all.total, ROWS);
    assert.deepEqual(
      all.rows.map((row) => row.row_index),
      Array.from({ length: 50 }, (_, index) => index),
    );
    const last = reader.page({ ...base, page: 40 });
    assert.deepEqual(
      last.rows.map((row) => row.row_index),
      Array.from({ length: 50 }, (_, index) => 1_950 + index),
    );
    assert.equal(reader.page({ ...base, page: 41 }).rows.length, 0);

    const count = (query: Partial<ItemQuery>) => reader.page({ ...base, ...query }).total;
    const sqlCount = (where: string, ...parameters: unknown[]) =>
      (direct(path, `SELECT COUNT(*) FROM items WHERE ${where}`, ...parameters) as number[])[0];
    assert.equal(count({ status: 'failed' }), 40);
    assert.equal(
      count({ status: 'done', finish: 'max_turns' }),
      sqlCount("status = 'done' AND finish_reason = 'max_turns'"),
    );
    assert.equal(count({ toolset: 'terminal' }), sqlCount('toolsets LIKE \'%"terminal"%\''));
    assert.equal(count({ toolsets: '["terminal","file"]' }), sqlCount('toolsets = \'["terminal","file"]\''));
    assert.equal(count({ toolsets: '[]' }), ROWS / 5);
    assert.equal(count({ errorClass: 'infra' }), 40);
    assert.equal(count({ errorClass: '(none)' }), sqlCount('error_class IS NULL'));
    assert.equal(count({ rewardMin: 0.25, rewardMax: 0.5 }), sqlCount('reward >= 0.25 AND reward <= 0.5'));
    assert.equal(
      count({ toolset: 'web', rewardMin: 0.9, status: 'done' }),
      sqlCount("toolsets LIKE '%\"web\"%' AND reward >= 0.9 AND status = 'done'"),
    );

    const byReward = reader
      .page({ ...base, sort: 'reward', descending: true, pageSize: 200 })
      .rows.map((row) => row.reward!);
    assert.ok(
      byReward.every((value) => value !== null),
      'rows without a reward sort last descending too',
    );
    assert.deepEqual(
      byReward,
      [...byReward].sort((a, b) => b - a),
    );
    assert.equal(byReward[0], Math.max(...rewards));
    const ascending = reader.page({ ...base, sort: 'reward', pageSize: 200 }).rows.map((row) => row.reward);
    assert.ok(
      ascending.every((value) => value !== null),
      'rows without a reward sort last, both ways',
    );
    const byDuration = reader.page({ ...base, sort: 'duration', descending: true }).rows.map((row) => row.duration_ms!);
    assert.deepEqual(
      byDuration,
      [...byDuration].sort((a, b) => b - a),
    );

    // Every 997th row mentions a lighthouse: rows 0, 997 and 1994, all finished.
    const search = reader.page({ ...base, search: 'LIGHTHOUSE keeper' });
    assert.deepEqual(
      search.rows.map((row) => row.row_index),
      [0, 997, 1_994],
      'case-insensitive, over the messages',
    );
    assert.equal(search.total, 3);
    assert.equal(count({ search: 'lighthouse', rewardMin: 2 }), 0, 'search combines with the other filters');
    assert.equal(count({ search: 'Run a shell command' }), 0, 'the tool schemas are not messages');
    assert.equal(count({ search: 'Use the tools to inspect' }), 1_880, 'the system prompt is a message the model saw');
    assert.equal(count({ search: 'data.csv\nand write' }), 1_880, 'text with a newline matches');
    assert.equal(count({ search: '100%' }), 0, 'a % in the text is a character, not a wildcard');

    const item = reader.item('item-000997', 0)!;
    assert.equal(item.turns, 1 + (997 % 6));
    assert.equal(
      (item.record as { messages: { content: string }[] }).messages[4]!.content,
      'The lighthouse keeper logged entry 997.',
    );
    assert.equal(reader.item('item-000997', 1), undefined);
    assert.equal(reader.item('item-000007', 0)!.record, null, 'a failed rollout has no record');

    const plots = reader.plots();
    assert.equal(
      plots.rewards.reduce((sum, row) => sum + row.count, 0),
      rewards.length,
    );
    assert.equal(plots.durations.length, 1_880);
    assert.equal(
      plots.turns.reduce((sum, row) => sum + row.count, 0),
      1_880,
    );
    assert.deepEqual(
      plots.failures.find((row) => row.label === 'infra: sandbox_create'),
      { label: 'infra: sandbox_create', count: 40 },
    );
    const completion = plots.completionByToolsets.find((row) => row.toolsets.length === 0)!;
    assert.equal(completion.completed, sqlCount("status = 'done' AND toolsets = '[]' AND completed = 1"));
    // Rows land 0.6 s apart over 20 minutes: 30-second buckets (at most 60 of them).
    assert.equal(plots.throughput.bucketSeconds, 30);
    assert.equal(
      plots.throughput.buckets.reduce((sum, row) => sum + row.done, 0),
      1_880,
    );
    assert.equal(plots.throughput.buckets.length, 40);

    reader.close();
    assert.deepEqual(
      { hash: sha256(readFileSync(path)), size: statSync(path).size },
      before,
      'the store file is byte for byte unchanged',
    );
  });

  it('sees rollouts that land while it is open (a live run), and refuses what is not a run store', (t) => {
    const directory = temporaryDirectory(t);
    const path = join(directory, 'live.sqlite');
    writeSyntheticRun(path, 100);
    const reader = new RunReader(path, { refreshIntervalMs: 0 });
    t.after(() => reader.close());
    assert.equal(reader.page({ ...base, status: 'pending' }).total, 2);
    const store = new Database(path);
    store.prepare("UPDATE items SET status = 'done', reward = 1 WHERE status = 'pending'").run();
    store.close();
    assert.equal(reader.page({ ...base, status: 'pending' }).total, 0);
    assert.equal(reader.summary('live').statuses.done, 96);

    const other = join(directory, 'other.sqlite');
    new Database(other).exec('CREATE TABLE things (x)');
    assert.throws(() => new RunReader(other), /other\.sqlite is not a traj run store/);
    assert.throws(() => new RunReader(join(directory, 'missing.sqlite')), /no run store at .*missing\.sqlite/);
  });

  it('messagesPattern escapes LIKE wildcards and matches text as JSON spells it', () => {
    assert.equal(messagesPattern('50%_done'), '%,"messages":[%50\\%\\_done%],"tools":[%');
    assert.equal(messagesPattern('say "hi"\n'), '%,"messages":[%say \\\\"hi\\\\"\\\\n%],"tools":[%');
  });
});
