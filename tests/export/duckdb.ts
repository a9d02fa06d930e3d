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

/** A SQL list of file paths. */
export function sqlFiles(files: string[]): string {
  return `[${files.map((file) => `'${file.replace(/'/g, "''")}'`).join(', ')}]`;
}

/** Run queries on one in-memory DuckDB; rows come back as JSON-friendly objects. */
export async function withDuckDb<T>(
  use: (query: (sql: string) => Promise<Record<string, unknown>[]>) => Promise<T>,
): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return await use(
      async (sql) => (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[],
    );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** A feature of the Hugging Face Features YAML (`dataset_info.features`), as the card declares it. */
export type YamlFeature = Record<string, unknown> & { name?: string };

const DUCKDB_DTYPES: Record<string, string> = {
  string: 'VARCHAR',
  bool: 'BOOLEAN',
  int32: 'INTEGER',
  int64: 'BIGINT',
  float64: 'DOUBLE',
};

/** The DuckDB type of a Features YAML type (`dtype:`, `list:`, `struct:`), read without traj's code. */
export function duckDbType(feature: YamlFeature): string {
  if (typeof feature.dtype === 'string') {
    const type = DUCKDB_DTYPES[feature.dtype];
    if (!type) throw new Error(`no DuckDB type for dtype ${feature.dtype}`);
    return type;
  }
  if (Array.isArray(feature.struct)) {
    const fields = (feature.struct as YamlFeature[]).map((field) => `"${field.name}" ${duckDbType(field)}`);
    return `STRUCT(${fields.join(', ')})`;
  }
  const list = feature.list;
  if (typeof list === 'string') return `${duckDbType({ dtype: list })}[]`;
  if (Array.isArray(list)) return `${duckDbType({ struct: list })}[]`;
  if (list && typeof list === 'object') return `${duckDbType(list as YamlFeature)}[]`;
  throw new Error(`not a Features YAML type: ${JSON.stringify(feature)}`);
}

/** `read_json`'s `columns` argument for the card's features: JSON lines typed by the card, not guessed per file. */
export function duckDbColumns(features: YamlFeature[]): string {
  return `{${features.map((feature) => `'${feature.name}': '${duckDbType(feature).replace(/'/g, "''")}'`).join(', ')}}`;
}
