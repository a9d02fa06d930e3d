/**
 * Where a row sits in its source, the way a user would look for it: `data.jsonl:17` for
 * line-based files, `data.parquet row 17` for tabular ones (row numbers are 1-based, like lines).
 */
export function locate(source: string, line: number): string {
  return isLineFormat(source) ? `${source}:${line}` : `${source} row ${line}`;
}

/** The word for a position in this source: "line" for JSONL, "row" for Parquet/Arrow. */
export function positionUnit(source: string): 'line' | 'row' {
  return isLineFormat(source) ? 'line' : 'row';
}

function isLineFormat(source: string): boolean {
  return /\.(jsonl|ndjson)(\.gz)?$/i.test(source);
}
