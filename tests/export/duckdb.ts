import { DuckDBInstance } from '@duckdb/node-api';

export interface ParquetContents {
  columns: Array<{ name: string; type: string }>;
  rows: Record<string, unknown>[];
  rowGroups: number[];
}

/** Read Parquet files back with DuckDB, an independent reader: column types, rows, row-group sizes. */
export async function readParquet(files: string[]): Promise<ParquetContents> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const list = `[${files.map((file) => `'${file.replace(/'/g, "''")}'`).join(', ')}]`;
    const described = await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${list})`);
    const columns = (described.getRowObjectsJson() as Array<{ column_name: string; column_type: string }>).map(
      (row) => ({ name: row.column_name, type: row.column_type }),
    );
    const rows = (await connection.runAndReadAll(`SELECT * FROM read_parquet(${list})`)).getRowObjectsJson() as Record<
      string,
      unknown
    >[];
    const groups = await connection.runAndReadAll(
      `SELECT file_name, row_group_id, ANY_VALUE(row_group_num_rows) AS n FROM parquet_metadata(${list}) GROUP BY file_name, row_group_id ORDER BY file_name, row_group_id`,
    );
    const rowGroups = (groups.getRowObjectsJson() as Array<{ n: string }>).map((row) => Number(row.n));
    return { columns, rows, rowGroups };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

const JSON_COLUMNS = ['tools', 'scores', 'reward_details', 'error'];
const OPTIONAL_MESSAGE_FIELDS = [
  'reasoning',
  'reasoning_details',
  'images',
  'tool_calls',
  'echo',
  'tool_call_id',
  'name',
];
const JSON_MESSAGE_FIELDS = ['reasoning_details', 'echo'];

const USAGE_NUMBERS = new Set(['prompt_tokens', 'completion_tokens', 'reasoning_tokens', 'cached_tokens', 'cost']);

/**
 * A row read back from Parquet/Arrow, normalised to the record it came from: JSON-string columns
 * parsed, 64-bit integers as numbers, and message fields that are null only because the column
 * exists (absent in the record) dropped.
 */
export function rowToRecord(row: Record<string, unknown>): Record<string, unknown> {
  const record: Record<string, unknown> = { ...row };
  for (const column of JSON_COLUMNS)
    if (typeof record[column] === 'string') record[column] = JSON.parse(record[column] as string);
  const usage = record.usage as Record<string, unknown>;
  // Counts and cost come back as 64-bit integers or numbers; cost_source and unpriced_models as they are.
  record.usage = Object.fromEntries(
    Object.entries(usage).map(([key, value]) => [
      key,
      value === null || !USAGE_NUMBERS.has(key) ? value : Number(value),
    ]),
  );
  const source = record.source as { dataset: string; row: unknown; fields: string };
  record.source = {
    dataset: source.dataset,
    row: source.row === null ? null : Number(source.row),
    fields: JSON.parse(source.fields),
  };
  if (Array.isArray(record.messages)) {
    record.messages = (record.messages as Record<string, unknown>[]).map((message) =>
      Object.fromEntries(
        Object.entries(message)
          .filter(([key, value]) => !(OPTIONAL_MESSAGE_FIELDS.includes(key) && value === null))
          .map(([key, value]) => [key, JSON_MESSAGE_FIELDS.includes(key) ? JSON.parse(value as string) : value]),
      ),
    );
  }
  return record;
}
