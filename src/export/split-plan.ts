import type { ItemStatus, RecordField, RecordSelection, RecordOrder, RunStore, StoredRecordRow } from '../run/store.js';
import type { SplitBy } from './export-options.js';

/** One split of the export: its Hub-safe name and the store rows that belong to it. */
export interface SplitPlan {
  name: string;
  /** What the split holds, for the dataset card. */
  description: string;
  /** Which stored rows (that kept a record) the split holds. */
  filter: RecordSelection;
}

/** A stored row on its way out: the record exactly as stored (JSON text). */
export type StoredRow = StoredRecordRow;

const STATUS_SPLITS: Array<{ status: ItemStatus; description: string }> = [
  { status: 'done', description: 'rollouts that finished and passed the run filters (status done)' },
  {
    status: 'discarded',
    description:
      'rollouts discarded by a run filter such as --require-reasoning or --completed-only (status discarded)',
  },
  {
    status: 'failed',
    description:
      'rollouts that failed on an infrastructure fault but kept a partial record with its error (status failed)',
  },
];

/**
 * The splits of an export. Without --split-by: one `train` split of the done rows. By status:
 * `done`, `discarded` and `failed` (failed rows that kept a record; a worker crash leaves none).
 * By toolsets or category: one split per value among the done rows. Empty splits are dropped.
 */
export function planSplits(store: RunStore, splitBy: SplitBy | undefined): SplitPlan[] {
  if (splitBy === 'status') {
    return STATUS_SPLITS.map(({ status, description }) => ({ name: status, description, filter: { status } })).filter(
      (plan) => store.countRecords(plan.filter) > 0,
    );
  }
  if (splitBy === 'toolsets')
    return valueSplits(
      store,
      'toolsets',
      (text) => toolsetsSplitName(JSON.parse(String(text)) as string[]),
      'rollouts offered the toolsets',
    );
  if (splitBy === 'category')
    return valueSplits(
      store,
      'category',
      (value) => (value === null ? 'uncategorized' : splitName(String(value))),
      'rollouts of items in category',
    );
  return [
    {
      name: 'train',
      description: 'rollouts that finished and passed the run filters (status done)',
      filter: { status: 'done' },
    },
  ];
}

/** One split per distinct value of a column among the done rows; values that name the same split share it. */
function valueSplits(
  store: RunStore,
  field: RecordField,
  nameOf: (value: unknown) => string,
  describe: string,
): SplitPlan[] {
  const values = store.recordedValues(field);
  const byName = new Map<string, unknown[]>();
  for (const value of values) byName.set(nameOf(value), [...(byName.get(nameOf(value)) ?? []), value]);
  return [...byName.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, members]) => ({
      name,
      description: `${describe} ${name}`,
      filter: { status: 'done', field: { name: field, values: members } },
    }));
}

/** A split name the Hub accepts (`\w+`): other characters become `_`. */
export function splitName(value: string): string {
  const name = value.replace(/\W+/g, '_').replace(/^_+|_+$/g, '');
  return name || 'unnamed';
}

export function toolsetsSplitName(toolsets: readonly string[]): string {
  return toolsets.length === 0 ? 'no_tools' : splitName([...toolsets].sort().join('_'));
}

/** Stream a split's stored rows in dataset order (row, then key, then sample) or grouped. */
export function splitRows(
  store: RunStore,
  plan: SplitPlan,
  order: RecordOrder = 'dataset',
  compressed = false,
): IterableIterator<StoredRow> {
  return compressed ? store.shapedRecords(plan.filter, order) : store.records(plan.filter, order);
}

/** Rows the export leaves out because they have no record (a worker crash) or are still pending. */
export function unexportedCounts(store: RunStore): { failedWithoutRecord: number; pending: number } {
  return store.unrecordedCounts();
}
