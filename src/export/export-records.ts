import { DatasetError } from '../errors.js';
import type { RecordOrder, RunStore } from '../run/store.js';
import { TrajectoryRecordSchema, type TrajectoryRecord } from '../trajectory/record.js';
import type { RecordPredicate } from './filter-evaluate.js';
import type { QualityFilter } from './quality-filters.js';
import { splitRows, type SplitPlan, type StoredRow } from './split-plan.js';

export interface ExportedRecord {
  row: StoredRow;
  /** The record as stored (parsed), extra fields included. */
  record: TrajectoryRecord;
}

export interface RecordCounts {
  filteredOut: number;
}

/**
 * A split's records, streamed from the store: parsed, passed through the filter, then checked
 * against the record schema, so a row that could not fit the fixed export schema is refused
 * with its key instead of breaking a writer (and can be left out with a filter).
 */
export function* exportRecords(
  store: RunStore,
  plan: SplitPlan,
  predicate: RecordPredicate | undefined,
  counts: RecordCounts,
  order?: RecordOrder,
  source: { compressed?: boolean; quality?: QualityFilter } = {},
): Generator<ExportedRecord> {
  for (const row of splitRows(store, plan, order, source.compressed)) {
    const value: unknown = JSON.parse(row.text);
    if (predicate && !predicate(value)) {
      counts.filteredOut++;
      continue;
    }
    const checked = TrajectoryRecordSchema.safeParse(value);
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      throw new DatasetError(
        `record ${JSON.stringify(row.key)} (sample ${row.sample}) in ${store.path} does not match the trajectory schema at ${issue.path.join('.') || '(root)'}: ${issue.message}. ` +
          `Leave it out with --filter 'not (id == ${JSON.stringify(row.key)} and sample == ${row.sample})'.`,
        { code: 'invalid_record', details: { key: row.key, sample: row.sample, path: issue.path.map(String) } },
      );
    }
    if (source.quality?.check(value as TrajectoryRecord)) continue;
    yield { row, record: value as TrajectoryRecord };
  }
}
