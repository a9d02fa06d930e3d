import type { ItemStatus, RunStore } from '../run/store.js';
import type { SplitBy } from './export-options.js';

/** One split of the export: its Hub-safe name and the store rows that belong to it. */
export interface SplitPlan {
  name: string;
  /** What the split holds, for the dataset card. */
  description: string;
  /** SQL condition over the items table (besides `record IS NOT NULL`). */
  where: string;
  params: unknown[];
}

/** A stored row on its way out: the record exactly as stored (JSON text). */
export interface StoredRow {
  key: string;
  sample: number;
  status: ItemStatus;
  text: string;
}

const CATEGORY = `json_extract(record, '$.source.fields.category')`;

const STATUS_SPLITS: Array<{ status: ItemStatus; description: string }> = [
  { status: 'done', description: 'rollouts that finished and passed the run filters (status done)' },
  { status: 'discarded', description: 'rollouts discarded by a run filter such as --require-reasoning or --completed-only (status discarded)' },
  { status: 'failed', description: 'rollouts that failed on an infrastructure fault but kept a partial record with its error (status failed)' },
];

/**
 * The splits of an export. Without --split-by: one `train` split of the done rows. By status:
 * `done`, `discarded` and `failed` (failed rows that kept a record; a worker crash leaves none).
 * By toolsets or category: one split per value among the done rows. Empty splits are dropped.
 */
export function planSplits(store: RunStore, splitBy: SplitBy | undefined): SplitPlan[] {
  if (splitBy === 'status') {
    return STATUS_SPLITS.map(({ status, description }) => ({ name: status, description, where: 'status = ?', params: [status] })).filter((plan) => countRows(store, plan) > 0);
  }
  if (splitBy === 'toolsets') return valueSplits(store, 'toolsets', (text) => toolsetsSplitName(JSON.parse(String(text)) as string[]), 'rollouts offered the toolsets');
  if (splitBy === 'category') return valueSplits(store, CATEGORY, (value) => (value === null ? 'uncategorized' : splitName(String(value))), 'rollouts of items in category');
  return [{ name: 'train', description: 'rollouts that finished and passed the run filters (status done)', where: `status = 'done'`, params: [] }];
}

/** One split per distinct value of a column among the done rows; values that name the same split share it. */
function valueSplits(store: RunStore, column: string, nameOf: (value: unknown) => string, describe: string): SplitPlan[] {
  const values = store.db.prepare(`SELECT DISTINCT ${column} FROM items WHERE status = 'done' AND record IS NOT NULL`).pluck().all() as unknown[];
  const byName = new Map<string, unknown[]>();
  for (const value of values) byName.set(nameOf(value), [...(byName.get(nameOf(value)) ?? []), value]);
  return [...byName.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, members]) => {
      const present = members.filter((value) => value !== null);
      const conditions = [...(present.length ? [`${column} IN (${present.map(() => '?').join(', ')})`] : []), ...(present.length < members.length ? [`${column} IS NULL`] : [])];
      return { name, description: `${describe} ${name}`, where: `status = 'done' AND (${conditions.join(' OR ')})`, params: present };
    });
}

/** A split name the Hub accepts (`\w+`): other characters become `_`. */
export function splitName(value: string): string {
  const name = value.replace(/\W+/g, '_').replace(/^_+|_+$/g, '');
  return name || 'unnamed';
}

export function toolsetsSplitName(toolsets: readonly string[]): string {
  return toolsets.length === 0 ? 'no_tools' : splitName([...toolsets].sort().join('_'));
}

function countRows(store: RunStore, plan: SplitPlan): number {
  return store.db.prepare(`SELECT COUNT(*) FROM items WHERE record IS NOT NULL AND (${plan.where})`).pluck().get(...plan.params) as number;
}

/** Stream a split's stored rows in dataset order (row, then key, then sample). */
export function* splitRows(store: RunStore, plan: SplitPlan, order = 'row_index, key, sample'): IterableIterator<StoredRow> {
  const statement = store.db.prepare(`SELECT key, sample, status, record AS text FROM items WHERE record IS NOT NULL AND (${plan.where}) ORDER BY ${order}`);
  yield* statement.iterate(...plan.params) as IterableIterator<StoredRow>;
}

/** Rows the export leaves out because they have no record (a worker crash) or are still pending. */
export function unexportedCounts(store: RunStore): { failedWithoutRecord: number; pending: number } {
  const count = (sql: string) => store.db.prepare(sql).pluck().get() as number;
  return {
    failedWithoutRecord: count(`SELECT COUNT(*) FROM items WHERE status = 'failed' AND record IS NULL`),
    pending: count(`SELECT COUNT(*) FROM items WHERE status = 'pending'`),
  };
}
