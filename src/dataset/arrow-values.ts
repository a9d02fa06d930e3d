import type * as Arrow from 'apache-arrow';

type ArrowModule = typeof Arrow;

/**
 * An Arrow cell as plain JSON-ready JavaScript: lists become arrays, structs and maps become
 * objects, 64-bit integers become numbers (or strings when too large to be exact), binary
 * becomes base64 text.
 */
export function plainValue(value: unknown, arrow: ArrowModule): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof arrow.Vector) return Array.from(value as Iterable<unknown>, (item) => plainValue(item, arrow));
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (ArrayBuffer.isView(value))
    return Array.from(value as unknown as ArrayLike<number | bigint>, (item) => plainValue(item, arrow));
  if (typeof value === 'object') return plainObject(value as object, arrow);
  return value;
}

/** Struct and map rows expose their fields through toJSON(); values inside are still Arrow. */
function plainObject(value: object, arrow: ArrowModule): Record<string, unknown> {
  const withJson = value as { toJSON?: () => Record<string, unknown> };
  const source = typeof withJson.toJSON === 'function' ? withJson.toJSON() : (value as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(source)) out[key] = plainValue(item, arrow);
  return out;
}

/** Every row of a record batch as a plain object. */
export function* batchRows(batch: Arrow.RecordBatch, arrow: ArrowModule): Generator<unknown> {
  for (let index = 0; index < batch.numRows; index += 1) yield plainValue(batch.get(index), arrow);
}
